"""The course's grader, in rooms by role (each package's docstring lists its modules):

- ``authoring/``: make and ship the course (release, student edition, nbgrader course).
- ``judge/``: decide one notebook's grade (rebuild, sandbox, student process, references).
- ``class_run/``: grade a class on Dask, keep results on disk, train baselines once.
- ``outputs/``: render what the judge decided (report, gradebooks, pages, Gradescope).
- ``student/``: the student's self-check, ``python -m grader check``.

At the top, what several rooms share: ``cli`` (the commands, thin), ``lessons`` (the one
lesson registry, and where the repository's folders are), ``results`` (the typed results
of checks, written answers, notebooks, students and classes, with the one data form the
store, the report and every output use), ``nbgrader_cells`` (what an nbgrader cell is),
``course_version``, ``safe_text``, and ``salts`` (the CLI chooses the salt and the class
run's store keeps its hash; the judge only receives it, so it is no part of the judge).
"""

import sys

# nbformat imports jsonschema, which on import compiles some forty grammars of
# rfc3987_syntax (installed with jupyter's jsonschema[format-nongpl]) to check "iri"
# formats: over a second of CPU in every grader process, Dask worker and self-check. No
# notebook schema uses those formats and nbformat validates without format checks, so
# the grader's processes go without the module (jsonschema skips those formats when it is
# missing). A process that imported it before the grader keeps it.
sys.modules.setdefault("rfc3987_syntax", None)
