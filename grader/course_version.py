"""Which version of the course graded a notebook: a hash of every file that decides a grade.

A stored result is reused only for the same course version, so changing a lesson, a
check, a reference or the grading code grades every notebook again, while changing how
reports are printed does not. Workers of a Dask cluster compute it too: a worker that
runs another checkout of the course is refused instead of grading differently.
"""

import functools
import hashlib

from grader.lessons import REPOSITORY

# grading code: everything under grader/ but these, which only arrange or print results
NOT_GRADING = {"cli.py", "report.py", "feedback_pages.py", "gradebooks.py", "export.py",
               "publish.py", "gradescope.py", "nbgrader_course.py", "grade_class.py",
               "result_store.py", "class_progress.py", "course_version.py", "dask_cluster.py",
               "baselines.py", "__main__.py", "manual_grades.py", "late_work.py",
               "grades_by_people.py", "hub_links.py", "similarity.py", "similarity_page.py"}


def grading_files(root=REPOSITORY):
    """The files the course version is made of, sorted: the source notebooks, the checks,
    the course's helpers, the reference modules and the grading code."""
    from grader.lessons import all_lessons

    files = set((root / "solutions").glob("*.ipynb"))
    for package in ("checks", "course"):
        files |= set((root / package).rglob("*.py"))
    files |= {path for path in (root / "grader").rglob("*.py")
              if not (path.parent.name == "grader" and path.name in NOT_GRADING)}
    files |= {root / lesson.exports_to for lesson in all_lessons(root).values()
              if lesson.exports_to}
    return sorted(path for path in files if "__pycache__" not in path.parts)


@functools.lru_cache(maxsize=None)
def course_version(root=REPOSITORY):
    """16 hex digits that change whenever one of :func:`grading_files` changes."""
    digest = hashlib.sha256()
    for path in grading_files(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]
