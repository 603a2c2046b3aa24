"""The student version of a source notebook, made by nbgrader's own preprocessors.

Solutions become ``# YOUR CODE HERE`` stubs, hidden tests and outputs go, cells are
locked. A release writes it to ``notebooks/``; grading needs it too (a missing answer
cell is taken from it, so it counts as unanswered), which is why it lives with the judge
and not with the release.
"""

import nbformat


def student_pipeline():
    """nbgrader's generate_assignment order, minus its database steps. ClearHiddenTests
    must run before ComputeChecksums, so the checksums describe the cells students
    receive. (Imported here: nbgrader takes a second to import, and most grader processes
    never make a student version: they read the released one.)"""
    from nbgrader.preprocessors import (CheckCellMetadata, ClearHiddenTests,
                                        ClearMarkScheme, ClearOutput, ClearSolutions,
                                        ComputeChecksums, LockCells)
    return (LockCells, ClearSolutions, ClearOutput, ClearHiddenTests, ClearMarkScheme,
            ComputeChecksums, CheckCellMetadata)


def student_version(source_notebook):
    """The student notebook made from a source notebook (which is left untouched)."""
    notebook = nbformat.from_dict(source_notebook)  # a deep copy
    resources = {}
    for preprocessor in student_pipeline():
        notebook, resources = preprocessor().preprocess(notebook, resources)
    return notebook
