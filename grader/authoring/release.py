"""Generate everything that is derived from ``solutions/``.

- ``notebooks/<lesson>.ipynb``, the student versions (:mod:`grader.judge.student_notebook`):
  solutions become ``# YOUR CODE HERE`` stubs, hidden tests and outputs go, cells are
  locked.
- The reference modules that lessons export (``qlearning.py``, ...).
- The setup cell at the top of every source notebook, from
  :mod:`grader.authoring.setup_cell`, and each test cell's comment, its check's ``asks``
  (:class:`checks.framework.Check`).

Everything written is a pure function of the source notebooks, so a second release
changes nothing; a test checks that the committed files are exactly what a release makes.
"""

from pathlib import Path

import nbformat

from grader.authoring.notebook_export import export_target, module_source
from grader.authoring.setup_cell import SETUP_CELL_ID, SETUP_CELL_SOURCE
from grader.judge.student_notebook import student_version
from grader.lessons import REPOSITORY, STUDENT_DIR, source_notebooks


def with_current_setup_cell(notebook, path):
    """Put the current setup cell first; the source must already start with one."""
    first = notebook.cells[0] if notebook.cells else None
    if first is None or first.metadata.get("nbgrader", {}).get("grade_id") != SETUP_CELL_ID:
        raise ValueError(f"{path}: the first cell must be the setup cell "
                         f"(nbgrader grade_id {SETUP_CELL_ID!r})")
    first.source = SETUP_CELL_SOURCE
    return notebook


def with_current_test_comments(notebook, lesson):
    """Start each test cell with its check's ``asks`` as a comment (the lines after the
    comment, the call that runs the check, stay): the notebook says what the grader asks."""
    from checks import checks_for_lesson
    from checks.requirements import comment_lines

    checks = checks_for_lesson(lesson)
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
            continue
        check = checks[meta["grade_id"]]
        if not check.asks.strip():
            raise ValueError(f"{lesson}: check {check.name} does not say what it asks")
        lines = cell.source.splitlines()
        while lines and lines[0].startswith("#"):
            lines.pop(0)
        cell.source = "\n".join([*comment_lines(check.asks), *lines])
    return notebook


def _write_if_changed(path, text, written):
    path = Path(path)
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)


def release(root=REPOSITORY, output_root=None):
    """Regenerate student notebooks and exported modules; return the paths that changed.

    ``output_root`` (default: ``root``) is where generated files go, so a test can
    release into a temporary folder and compare it with what is committed.
    """
    root = Path(root)
    output_root = Path(output_root or root)
    written = []
    for path in source_notebooks(root):
        relative = path.relative_to(root)
        source = with_current_test_comments(
            with_current_setup_cell(nbformat.read(path, as_version=4), relative), path.stem)
        _write_if_changed(output_root / relative, nbformat.writes(source) + "\n", written)
        target = export_target(source)
        if target:
            _write_if_changed(output_root / target, module_source(source, relative.as_posix()),
                              written)
        student = student_version(source)
        _write_if_changed(output_root / STUDENT_DIR / path.name,
                          nbformat.writes(student) + "\n", written)
    return written
