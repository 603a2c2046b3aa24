"""Helpers the lessons import: environments, evaluation, experiments and plots.

Nothing in here is an exercise. What students build lives in the lesson notebooks and,
once written, in the reference modules exported from them (``qlearning.py``, ...).
"""
