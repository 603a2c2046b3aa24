"""Shared pytest configuration for the course's tests."""

import re

LESSON_NUMBER = re.compile(r"\[(\d\d)_")

# Tests that take a minute or more, started first so that pytest-xdist's two workers
# do not end with one of them alone on a long test.
SLOWEST_FIRST = ("tests/threats/test_grader_attacks.py",  # a class of 30 notebooks, then more
                 "tests/test_grader_cli.py",  # the example class
                 "test_solution_notebook_runs_cleanly_and_its_figures_show_all_their_data",
                 "test_run_all_with_a_wrong_answer",  # a whole lesson, with its experiments
                 "tests/lessons/test_claims_lesson0",
                 # collected last (threats/), long enough to leave one worker alone at the end
                 "tests/threats/test_grader_tampering.py",  # its group: about a minute
                 "tests/threats/test_lending_parity.py",  # up to 45 s a lesson
                 "tests/threats/test_reachable_answers.py")


def pytest_configure(config):
    # `pytest -m "not notebooks"` skips the slow tests that run whole notebooks.
    config.addinivalue_line(
        "markers", "notebooks: executes notebooks in a real Jupyter kernel (slow)")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        group = next((index for index, name in enumerate(SLOWEST_FIRST)
                      if name in item.nodeid), len(SLOWEST_FIRST))
        lesson = LESSON_NUMBER.search(item.nodeid)
        # later lessons run longer: start them first within a group
        return group, -int(lesson.group(1)) if lesson else 0

    items.sort(key=rank)  # stable: the order within each rank is kept
