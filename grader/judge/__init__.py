"""The judge: everything that decides one notebook's grade. It reads a submission as
untrusted data, rebuilds it from the source notebook (only the answer cells are the
student's), runs it in a sandbox of its own, and probes it from outside with the lesson's
checks, comparing with the judge's references, within CPU-time budgets. Every file here
is part of the course version (:mod:`grader.course_version`): changing one grades every
notebook again.

- ``submission_file``: read a submitted notebook as untrusted data.
- ``rebuild``: the notebook to grade, the source with the submission's answer cells put in.
- ``student_notebook``: the student version of a source notebook (nbgrader's pipeline).
- ``grade_notebook``: grade one notebook: rebuild, run in a sandbox, probe, judge.
- ``sandbox``: where a submission's code runs and what it can see.
- ``sandbox_launcher``: builds the sandbox's root, then starts the student server in it.
- ``sandbox_template``: a process that imported the public packages once and forks each
  sandbox, made as the launcher makes it; ``sandbox_forks``: the grader's side of it.
- ``sandbox_resources``: one sandbox's memory, tasks, CPU share and CPU time (cgroups).
- ``sandbox_runtime/``: what runs in the sandbox: its init, the student server, the wire.
- ``student_process``: the grader's side of the sandboxed process: proxies across the wire.
- ``budgets``: what a check, cell or request may spend, in CPU time.
- ``references/``: what a correct answer gives for a check's inputs (never in a sandbox).
"""
