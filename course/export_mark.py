"""What marks a notebook cell for export: one rule for the course's release (the
reference modules, ``grader/authoring/notebook_export.py``) and for a student's own
modules (``course/your_work.py``), so a cell is exported by both or by neither."""

EXPORT_MARK = "#| export"


def is_exported(source):
    """True when a code cell's ``source`` starts with the export mark on a line of its own."""
    first_line = source.split("\n", 1)[0]
    return first_line.strip() == EXPORT_MARK
