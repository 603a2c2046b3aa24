"""What grading produces for people: every output here renders results the judge already
decided (the report's one result schema) and never changes a check's verdict. The JSON
report and printed table, LMS gradebooks, per-student feedback pages, Gradescope's
results, the grades a person adds on top (manual grades, the late policy), and the
similarity report. ``spec`` is here rather than with authoring: it writes no course file,
it renders the checks for readers (``grader spec`` for instructors, and what each check
asks on the feedback pages and in the student's self-check), as the other outputs do.

- ``report``: the class report made from the notebooks' results, as JSON and as the printed table.
- ``gradebooks``: gradebooks an LMS imports as they are (Canvas, Moodle, ...).
- ``feedback_pages``: one self-contained feedback page per student.
- ``gradescope``: a Gradescope autograder bundle for a lesson, and its results there.
- ``manual_grades``: grades given by a person: written answers, regrades, excused lessons.
- ``late_work``: deadlines, late penalties and extensions applied to a report.
- ``grades_by_people``: manual grades and the late policy, applied together.
- ``similarity``: which students' answers are alike, and who handed in the solution.
- ``similarity_page``: the similarity report as one self-contained HTML page.
- ``spec``: a lesson's checks read as its specification.
"""
