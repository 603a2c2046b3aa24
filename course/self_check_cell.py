"""The last cell of every lesson: check the saved notebook as the grader will.

``check_my_notebook("02_replay_buffer")`` runs ``python -m grader check`` on the saved
file of *the notebook it runs in*, whatever that file is called (a renamed copy such as
``my_homework.ipynb`` is checked, not the released file beside it), and prints its
report: per check passed / failed / not written yet, with the feedback, and what the
grader's rebuild ignores (code outside answer cells). The grader reads the *saved*
file, so save first.

Which file the kernel runs is told by the front end: Colab hands over the notebook open
in the browser; VS Code sets ``__vsc_ipynb_file__``; Jupyter (JupyterLab, Notebook 7,
any jupyter_server) sets ``JPY_SESSION_NAME``, which ipykernel also puts in
``__session__``. Where none says, the only notebook of the lesson in the kernel's folder
is the one; if there are several, or none, the cell says in one line that it cannot
tell, and how to check the file from a terminal.
"""

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

COURSE_ROOT = Path(__file__).resolve().parent.parent


def check_my_notebook(lesson, learning=False):
    if os.environ.get("NBGRADER_EXECUTION"):
        return  # nbgrader is grading this notebook: it needs no self-check of its own
    if importlib.util.find_spec("grader") is None:
        print("The self-check comes with the course's grader, which this edition of the "
              "course does not include. The test cells above run the same checks on the "
              "public inputs.")
        return
    if "google.colab" in sys.modules:
        notebook = colab_notebook(lesson)
        if notebook is None:
            return
        print("Checking this notebook as it is in Colab now. This takes a few seconds.")
    else:
        notebook, problem = notebook_running_here(lesson)
        if notebook is None:
            print(f"{problem} Save the notebook, then run in a terminal at {COURSE_ROOT}: "
                  "python -m grader check path/to/your_notebook.ipynb")
            return
        age = time.time() - notebook.stat().st_mtime
        print(f"Checking {notebook} (saved {age / 60:.0f} min ago; save first if you "
              "changed something since). This takes a few seconds.", flush=True)
    command = [sys.executable, "-m", "grader", "check", str(notebook), "--from-cell"]
    completed = subprocess.run(command + (["--learning"] if learning else []),
                               cwd=COURSE_ROOT, capture_output=True, text=True)
    print(completed.stdout)
    if completed.returncode != 0:
        print(completed.stderr, file=sys.stderr)


def colab_notebook(lesson):
    """Colab keeps the notebook in the browser, not on the kernel's disk: ask the browser
    for it (Colab's own, unofficial, call) and write it where the grader can read it."""
    try:
        from google.colab import _message
        contents = _message.blocking_request("get_ipynb", timeout_sec=30)["ipynb"]
    except Exception:  # an unofficial call: if Colab changed it, say what to do instead
        print("Colab did not hand over this notebook. Download it (File > Download > "
              ".ipynb) and check it on your machine with python -m grader check.")
        return None
    path = Path("/tmp") / f"{lesson}.ipynb"
    path.write_text(json.dumps(contents))
    return path


def _kernel_namespace():
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    return shell.user_ns if shell is not None else {}


def notebook_running_here(lesson, namespace=None, environ=None, folder=None):
    """``(path, None)``: the saved file of the notebook this kernel runs, or ``(None,
    problem)``, the problem in one sentence. ``namespace`` (the kernel's variables),
    ``environ`` and ``folder`` (the kernel's working folder) default to this kernel's."""
    namespace = _kernel_namespace() if namespace is None else namespace
    environ = os.environ if environ is None else environ
    folder = Path.cwd() if folder is None else Path(folder)
    told = [(name, value) for name, value in (
        ("VS Code's __vsc_ipynb_file__", namespace.get("__vsc_ipynb_file__")),
        ("Jupyter's __session__", namespace.get("__session__")),
        ("Jupyter's JPY_SESSION_NAME", environ.get("JPY_SESSION_NAME")))
        if isinstance(value, str) and value.endswith(".ipynb")]
    for source, value in told:
        path = _existing(value, folder)
        if path is not None:
            return path, None
    if told:  # the front end named a file that is not there: renamed since the start
        source, value = told[0]
        return None, (f"This notebook's kernel started as {value} ({source}), and no "
                      "such file is saved: if you renamed or moved the notebook since, "
                      "restart the kernel (Kernel > Restart) and run this cell again.")
    same_lesson = _notebooks_of(lesson, folder)
    if len(same_lesson) == 1:
        return same_lesson[0], None
    if same_lesson:
        names = ", ".join(path.name for path in same_lesson)
        return None, (f"Cannot tell which of {names} this notebook is (this editor does not "
                      "say which file its kernel runs).")
    return None, (f"Cannot tell which file this notebook is: this editor does not say, and "
                  f"{folder} holds no notebook of {lesson}.")


def _existing(value, folder):
    """The notebook file ``value`` names: absolute, or relative to the kernel's folder
    (or to the Jupyter server's root, which may be a folder above it)."""
    path = Path(value).expanduser()
    tries = [path] if path.is_absolute() else [folder / path, folder / path.name]
    for candidate in tries:
        if candidate.is_file():
            return candidate.resolve()
    return None


def _notebooks_of(lesson, folder):
    """The notebooks in ``folder`` whose name or metadata say they are ``lesson``."""
    found = []
    for path in sorted(Path(folder).glob("*.ipynb")):
        if lesson in path.stem:
            found.append(path)
            continue
        try:
            metadata = json.loads(path.read_text()).get("metadata", {})
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(metadata, dict) and isinstance(metadata.get("course"), dict) \
                and metadata["course"].get("lesson") == lesson:
            found.append(path)
    return found
