"""Colab leaves Colab alone: the setup cell installs what Colab lacks and moves nothing
Colab pins, and lessons 01 and 02 pass their visible tests in such a runtime.

A Python 3.12 virtual environment gets Colab's versions (``tests/colab_pins.txt``), then
the install command of the lessons' setup cell, then runs the student edition's
notebooks 01 and 02, completed with the instructors' answers, in its own kernel.
"""

import glob
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from grader.authoring.setup_cell import COLAB_REQUIREMENTS, SETUP_CELL_SOURCE
from test_publish import completed

pytestmark = [pytest.mark.xdist_group('colab'), pytest.mark.notebooks]

REPO = Path(__file__).resolve().parents[2]
PINS = REPO / "tests" / "colab_pins.txt"
LESSONS = ("01_qlearning", "02_replay_buffer")


def python_312():
    """A Python 3.12 interpreter: pyenv's (its shims on PATH only run the selected
    version), or one on PATH."""
    candidates = sorted(glob.glob(str(Path.home() / ".pyenv" / "versions" / "3.12*" / "bin"
                                      / "python3.12")))
    on_path = shutil.which("python3.12")
    if on_path and "shims" not in on_path:
        candidates.append(on_path)
    assert candidates, "this test needs a Python 3.12 interpreter, the version Colab runs"
    return candidates[0]


def pinned():
    return {line.split("==")[0].lower().replace("_", "-"): line.split("==")[1]
            for line in PINS.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def installed(python):
    frozen = subprocess.run([python, "-m", "pip", "freeze"], capture_output=True, text=True,
                            check=True).stdout
    return {line.split("==")[0].lower().replace("_", "-"): line.split("==")[1]
            for line in frozen.splitlines() if "==" in line}


def pip(python, *arguments):
    # --no-compile: what is installed is the same, without byte-compiling every module of
    # scipy, pandas and matplotlib (half the install's CPU); what runs compiles on import
    completed_run = subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-compile",
                                    *arguments],
                                   capture_output=True, text=True, timeout=900)
    assert completed_run.returncode == 0, completed_run.stderr[-3000:]


@pytest.fixture(scope="module")
def colab_like(tmp_path_factory):
    folder = tmp_path_factory.mktemp("colab")
    subprocess.run([python_312(), "-m", "venv", str(folder / "venv")], check=True)
    python = str(folder / "venv" / "bin" / "python")
    pip(python, "-r", str(PINS))
    return python, folder


def test_the_setup_cell_installs_only_the_colab_requirements():
    installs = re.findall(r'"pip", "install", "--quiet", "-r",\s*"([^"]+)"', SETUP_CELL_SOURCE)
    assert [Path(path).name for path in installs] == [COLAB_REQUIREMENTS]
    assert SETUP_CELL_SOURCE.count("pip") == 1


def test_the_setup_cells_install_moves_nothing_colab_pins(colab_like):
    python, _ = colab_like
    before = installed(python)
    assert {name: before.get(name) for name in pinned()} == pinned()
    pip(python, "-r", str(REPO / COLAB_REQUIREMENTS))  # what the setup cell runs in Colab
    after = installed(python)
    assert {name: after.get(name) for name in pinned()} == pinned()
    assert {name for name in after if after[name] != before.get(name)} == \
        {"gymnasium", "cloudpickle", "farama-notifications"}


RUN_NOTEBOOKS = textwrap.dedent('''
    import json, sys
    import nbformat
    from nbclient import NotebookClient
    results = {}
    for path in sys.argv[1:]:
        notebook = nbformat.read(path, as_version=4)
        NotebookClient(notebook, kernel_name="python3", timeout=600, allow_errors=True,
                       resources={"metadata": {"path": str(__import__("pathlib").Path(path).parent)}}
                       ).execute()
        results[path] = [{"errors": [f"{o.ename}: {o.evalue}" for o in cell.get("outputs", [])
                                     if o.output_type == "error"],
                          "text": "".join(o.get("text", "") for o in cell.get("outputs", [])),
                          "test": bool(cell.metadata.get("nbgrader", {}).get("grade"))}
                         for cell in notebook.cells if cell.cell_type == "code"]
    print(json.dumps(results))
''')


def test_lessons_01_and_02_pass_their_visible_tests_in_a_colab_runtime(colab_like):
    python, folder = colab_like
    pip(python, "-r", str(REPO / COLAB_REQUIREMENTS))
    edition = folder / "edition"
    subprocess.run([sys.executable, "-m", "grader", "publish", str(edition), "--lessons",
                    "01,02", "--repository-url", "https://github.com/a-course/students"],
                   cwd=REPO, check=True, capture_output=True, timeout=600)
    paths = []
    for lesson in LESSONS:
        path = edition / "notebooks" / f"{lesson}.ipynb"
        nbformat.write(completed(lesson), path)
        paths.append(str(path))
    run = subprocess.run([python, "-c", RUN_NOTEBOOKS, *paths], capture_output=True,
                         text=True, timeout=1200, cwd=folder)
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(run.stdout)
    problems = [f"{Path(path).stem}: {error}" for path, cells in results.items()
                for cell in cells for error in cell["errors"]]
    problems += [f"{Path(path).stem}: a test printed no \u2713 line" for path, cells
                 in results.items() for cell in cells if cell["test"]
                 and "\u2713" not in cell["text"]]
    assert not problems, "\n".join(problems)
    ran = [cell for cells in results.values() for cell in cells if cell["test"]]
    assert len(ran) >= 10
