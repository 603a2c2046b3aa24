"""The student's side (otter-grader's ``check/``): what a student runs before handing in.
``python -m grader check NOTEBOOK``, which every lesson's last cell runs on its own saved
file (``course/self_check_cell.py``), grades the notebook exactly as the instructor's
grader will, with the judge, and says what the rebuild ignores. It is a room of its own,
not part of the class run or the outputs: it grades one notebook for the person who wrote
it, and its report is written for that person.

- ``self_check``: grade one notebook as the grader will, and print what it would give.
"""
