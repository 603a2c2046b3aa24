"""``python -m grader release``: what it generates is committed, complete and leak-free.

``notebooks/``, ``qlearning.py`` and ``replay_buffer.py`` are generated from
``solutions/``. These tests release into a temporary folder and compare, then read the
committed student notebooks as raw JSON, the way a student (or Colab) receives them.
"""

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest
from nbgrader.utils import compute_checksum

from grader.authoring.notebook_export import export_target
from grader.authoring.release import release
from grader.authoring.setup_cell import COURSE_REPOSITORY, SETUP_CELL_ID, SETUP_CELL_SOURCE
from grader.lessons import SOURCE_DIR, STUDENT_DIR, source_notebooks

# this module's fixtures are computed once: its tests share one pytest-xdist worker
pytestmark = pytest.mark.xdist_group('release')

REPO = Path(__file__).resolve().parents[2]
RERUN = "run `python -m grader release` and commit what it changes"
SOURCES = source_notebooks(REPO)
LESSONS = [path.stem for path in SOURCES]
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
HIDDEN_MARKERS = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")


def test_the_course_has_source_notebooks():
    # Every other test here is per notebook: an empty glob must not make them all vanish.
    assert LESSONS, f"no source notebooks found in {REPO / SOURCE_DIR}"
    assert sorted((REPO / STUDENT_DIR).glob("*.ipynb")), "no student notebooks found"


def expected_outputs():
    """Every file a release generates, relative to the repository."""
    paths = []
    for path in SOURCES:
        paths.append(Path(SOURCE_DIR) / path.name)
        paths.append(Path(STUDENT_DIR) / path.name)
        target = export_target(nbformat.read(path, as_version=4))
        if target:
            paths.append(Path(target))
    return sorted(paths)


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A fresh release into an empty folder: (folder, paths it wrote)."""
    output_root = tmp_path_factory.mktemp("release")
    written = release(root=REPO, output_root=output_root)
    return output_root, written


def test_release_generates_the_notebooks_and_modules(released):
    output_root, written = released
    assert sorted(path.relative_to(output_root) for path in written) == expected_outputs()


@pytest.mark.parametrize("relative", expected_outputs(), ids=str)
def test_committed_file_is_what_release_generates(released, relative):
    output_root, _ = released
    committed = REPO / relative
    assert committed.exists(), f"{relative} is missing: {RERUN}"
    assert committed.read_text() == (output_root / relative).read_text(), \
        f"{relative} is not what a release generates (stale or edited by hand): {RERUN}"


def test_no_stale_student_notebooks():
    stale = {p.name for p in (REPO / STUDENT_DIR).glob("*.ipynb")} - {p.name for p in SOURCES}
    assert not stale, f"student notebooks without a source in {SOURCE_DIR}/: {sorted(stale)}"


def test_second_release_writes_nothing(released):
    output_root, _ = released
    before = {path: path.stat().st_mtime_ns for path in output_root.rglob("*")}
    assert release(root=REPO, output_root=output_root) == []
    after = {path: path.stat().st_mtime_ns for path in output_root.rglob("*")}
    assert after == before, "a second release touched files"


# --- nothing secret reaches the students ---------------------------------------------


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def source_text(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def split_source(notebook):
    """(secret lines, visible text) of a source notebook.

    Secret lines are the stripped non-blank lines inside solution and hidden-test
    regions; a solution cell without markers is secret as a whole, as nbgrader clears
    it entirely. The visible text is everything else, marker lines excluded.
    """
    secret, visible = set(), []
    for cell in notebook["cells"]:
        text = source_text(cell)
        whole_cell_secret = (nbgrader_meta(cell).get("solution", False)
                             and SOLUTION_MARKERS[0] not in text)
        inside = None
        for line in text.splitlines():
            stripped = line.strip()
            if stripped in (SOLUTION_MARKERS[0], HIDDEN_MARKERS[0]):
                inside = stripped
            elif stripped in (SOLUTION_MARKERS[1], HIDDEN_MARKERS[1]):
                inside = None
            elif inside or whole_cell_secret:
                if stripped:
                    secret.add(stripped)
            else:
                visible.append(line)
    return secret, "\n".join(visible)


def all_strings(value):
    """Every string in a JSON document: cell sources, outputs, metadata keys and values."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from all_strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from all_strings(item)


def student_files():
    files = sorted(path for path in (REPO / STUDENT_DIR).rglob("*") if path.is_file())
    assert files, f"nothing under {STUDENT_DIR}/"
    return files


def student_file_strings(path):
    if path.suffix == ".ipynb":
        return list(all_strings(json.loads(path.read_text())))
    return [path.read_text(errors="replace")]


def text_shown_to_students():
    """What the source notebooks show outside their solution and hidden regions."""
    return "\n".join(split_source(json.loads(path.read_text()))[1] for path in SOURCES)


@pytest.mark.parametrize("source_path", SOURCES, ids=LESSONS)
def test_no_solution_or_hidden_test_line_leaks_into_any_student_file(source_path):
    secret, _ = split_source(json.loads(source_path.read_text()))
    # A line that any lesson shows outside its regions (a generic line such as
    # `self.rng = np.random.default_rng(seed)`) is not a secret of this one.
    shown = text_shown_to_students()
    must_not_leak = {line for line in secret if line not in shown}
    assert must_not_leak, f"{source_path.name}: no solution or hidden-test lines found"
    leaks = []
    for path in student_files():
        for text in student_file_strings(path):
            leaks += [(path.name, line) for line in must_not_leak if line in text]
    assert not leaks, ("solution or hidden-test lines of "
                       f"{source_path.name} found in {STUDENT_DIR}/:\n"
                       + "\n".join(f"  {name}: {line}" for name, line in sorted(set(leaks))))


def test_no_nbgrader_region_marker_in_any_student_file():
    found = [(path.name, marker) for path in student_files()
             for text in student_file_strings(path)
             for marker in SOLUTION_MARKERS + HIDDEN_MARKERS if marker in text]
    assert not found, f"region markers in student files: {sorted(set(found))}"


# --- the student notebooks are what nbgrader would hand out ---------------------------


def student_notebook(lesson):
    return json.loads((REPO / STUDENT_DIR / f"{lesson}.ipynb").read_text())


def cell_name(cell):
    return nbgrader_meta(cell).get("grade_id") or cell.get("id")


@pytest.mark.parametrize("lesson", LESSONS)
def test_answer_cells_are_stubs(lesson):
    cells = [cell for cell in student_notebook(lesson)["cells"]
             if nbgrader_meta(cell).get("solution") and not nbgrader_meta(cell).get("grade")]
    assert cells, f"{lesson}: no answer cells"
    for cell in cells:
        text = source_text(cell)
        if cell["cell_type"] == "code":
            assert "# YOUR CODE HERE" in text and "raise NotImplementedError()" in text, \
                f"{lesson}/{cell_name(cell)}: answer cell is not a stub:\n{text}"
        else:
            assert "YOUR ANSWER HERE" in text, f"{lesson}/{cell_name(cell)}: not a stub"


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_outputs_or_execution_counts(lesson):
    for cell in student_notebook(lesson)["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"{lesson}/{cell_name(cell)} has outputs"
            assert cell["execution_count"] is None, \
                f"{lesson}/{cell_name(cell)} has an execution count"


@pytest.mark.parametrize("lesson", LESSONS)
def test_grade_and_read_only_cells_are_locked(lesson):
    """The metadata nbgrader's LockCells writes, which Jupyter and Colab enforce."""
    cells = student_notebook(lesson)["cells"]
    grade_cells = [c for c in cells if nbgrader_meta(c).get("grade")]
    assert grade_cells, f"{lesson}: no grade cells"
    for cell in cells:
        meta, where = nbgrader_meta(cell), f"{lesson}/{cell_name(cell)}"
        if meta.get("solution"):
            assert cell["metadata"].get("deletable") is False, f"{where}: answer is deletable"
        elif meta.get("grade") or meta.get("locked"):
            assert cell["metadata"].get("editable") is False, f"{where}: editable"
            assert cell["metadata"].get("deletable") is False, f"{where}: deletable"


@pytest.mark.parametrize("lesson", LESSONS)
def test_grade_cells_carry_nbgrader_checksums(lesson):
    notebook = nbformat.read(REPO / STUDENT_DIR / f"{lesson}.ipynb", as_version=4)
    for cell in notebook.cells:
        if nbgrader_meta(cell).get("grade"):
            checksum = nbgrader_meta(cell).get("checksum")
            assert checksum, f"{lesson}/{cell_name(cell)}: no nbgrader checksum"
            # the checksum must describe the cell as released (hidden tests removed)
            assert checksum == compute_checksum(cell), \
                f"{lesson}/{cell_name(cell)}: checksum does not match the cell"


@pytest.mark.parametrize("lesson", LESSONS)
def test_test_cells_are_released_exactly_as_written(lesson):
    # nbgrader checksums a test cell when it releases it and again when it autogrades;
    # a hidden region removed at release makes every such cell "changed" for everyone.
    # Hidden inputs come from GRADER_SALT instead (LessonChecks.run), so cells match.
    source = nbformat.read(REPO / SOURCE_DIR / f"{lesson}.ipynb", as_version=4)
    released = {cell_name(c): c for c in
                nbformat.read(REPO / STUDENT_DIR / f"{lesson}.ipynb", as_version=4).cells}
    tests = [c for c in source.cells
             if nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution")]
    assert tests, f"{lesson}: no test cells"
    for cell in tests:
        assert HIDDEN_MARKERS[0] not in cell.source, f"{lesson}/{cell_name(cell)}: hidden region"
        assert released[cell_name(cell)].source == cell.source, \
            f"{lesson}/{cell_name(cell)}: released test cell differs from its source"


@pytest.mark.parametrize("folder", [SOURCE_DIR, STUDENT_DIR])
@pytest.mark.parametrize("lesson", LESSONS)
def test_first_cell_is_the_setup_cell(lesson, folder):
    notebook = json.loads((REPO / folder / f"{lesson}.ipynb").read_text())
    first = notebook["cells"][0]
    assert nbgrader_meta(first).get("grade_id") == SETUP_CELL_ID
    assert source_text(first) == SETUP_CELL_SOURCE, f"{folder}/{lesson}: {RERUN}"


def test_readme_has_a_colab_badge_for_every_lesson_at_the_course_repository():
    readme = (REPO / "README.md").read_text()
    # the badges must follow the one address the setup cell clones from
    assert COURSE_REPOSITORY.startswith("https://github.com/")
    owner_repo = COURSE_REPOSITORY.removeprefix("https://github.com/").rstrip("/")
    for lesson in LESSONS:
        link = (f"https://colab.research.google.com/github/{owner_repo}"
                f"/blob/main/{STUDENT_DIR}/{lesson}.ipynb")
        assert link in readme, f"README.md has no Colab link {link}"
    # and no badge points at another repository or at a notebook that does not exist
    for repository, path in re.findall(
            r"https://colab\.research\.google\.com/github/([^/\s]+/[^/\s]+)/blob/main/([^\s)\"']+)",
            readme):
        assert repository == owner_repo, f"Colab link to {repository}, not {owner_repo}"
        assert (REPO / path).is_file(), f"Colab link to {path}, which does not exist"


@pytest.mark.parametrize("source_path", [p for p in SOURCES
                                         if export_target(nbformat.read(p, as_version=4))],
                         ids=lambda p: p.stem)
def test_generated_module_starts_with_the_autogenerated_header(source_path):
    module_path = REPO / export_target(nbformat.read(source_path, as_version=4))
    text = module_path.read_text()
    assert text.startswith('"""'), f"{module_path.name} must start with its header"
    docstring = ast.get_docstring(ast.parse(text))
    assert f"AUTOGENERATED from {SOURCE_DIR}/{source_path.name}" in docstring, \
        f"{module_path.name}: the header must name the notebook to edit"


def test_reference_modules_are_the_expected_ones():
    targets = {export_target(nbformat.read(p, as_version=4)) for p in SOURCES}
    assert {"qlearning.py", "replay_buffer.py", "prioritized_replay.py",
            "hindsight_replay.py", "combined_replay.py", "capstone.py",
            "neural_replay.py"} <= targets
