"""The judge's references: what a correct answer gives for a check's inputs.

Each ``lessonNN`` module holds, as functions of a check's inputs only, the values its
verdicts compare with, and the baselines its learning checks train. They answer graded
questions, so they live with the judge: never inside a student's sandbox (only the
course's public helpers are there) and never in the student edition (which ships their
answers for the public salt instead: see ``checks/expected.py``).
"""
