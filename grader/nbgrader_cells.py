"""What an nbgrader cell is, read from its metadata (``metadata.nbgrader``).

nbgrader marks a cell with ``solution`` (the student writes in it), ``grade`` (it earns
points) and ``grade_id``: an answer cell is a code cell with ``solution`` and no
``grade``; a test cell is a code cell with ``grade``; a written answer (graded by a
person) is a markdown cell with both. Metadata that is not a mapping counts as none.
"""


def nbgrader_meta(cell):
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def is_answer(cell):
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and meta.get("solution", False) and not meta.get("grade")


def is_test(cell):
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and meta.get("grade", False)


def is_manually_graded(cell):
    meta = nbgrader_meta(cell)
    return meta.get("solution", False) and meta.get("grade", False) and cell.cell_type != "code"


def autograded_cells(notebook):
    """The notebook's test cells, in order: each is one check, worth its points."""
    return [cell for cell in notebook.cells if is_test(cell)]
