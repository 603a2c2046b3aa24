"""The author's side: what makes and ships the course from its source notebooks. A
release writes the student notebooks and the reference modules (the notebooks' ``#|
export`` cells) and puts the current setup cell first; publishing writes the student
edition, searched for any answer it must not hold, with its Colab and JupyterHub links;
an nbgrader course directory serves instructors who grade with nbgrader instead. Nothing
here runs when a notebook is graded.

- ``release``: regenerate everything derived from ``solutions/``.
- ``notebook_export``: a notebook's ``#| export`` cells as a reference module.
- ``setup_cell``: the first cell of every lesson (Colab setup, the course's address).
- ``publish``: the student edition, with no answer of any lesson it does not release.
- ``hub_links``: nbgitpuller links that open a lesson of the edition on a JupyterHub.
- ``nbgrader_course``: an nbgrader course directory for these lessons.
- ``answer_overlap``: find a lesson's answer inside other code, by normalised statements.
"""
