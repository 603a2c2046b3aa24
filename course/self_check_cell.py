"""The last cell of every lesson: check the saved notebook as the grader will.

``check_my_notebook("02_replay_buffer")`` runs ``python -m grader check`` on the saved
notebook file and prints its report: per check passed / failed / not written yet, with
the feedback, and what the grader's rebuild ignores (code outside answer cells). The
grader reads the *saved* file, so save first.
"""

import importlib.util
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
        notebook = saved_notebook(lesson)
        if notebook is None:
            print(f"Cannot find {lesson}.ipynb next to this notebook or in the course's "
                  f"notebooks/ folder. Save the notebook, then run in a terminal at "
                  f"{COURSE_ROOT}: python -m grader check path/to/{lesson}.ipynb")
            return
        age = time.time() - notebook.stat().st_mtime
        print(f"Checking {notebook} (saved {age / 60:.0f} min ago; save first if you "
              "changed something since). This takes a few seconds.", flush=True)
    command = [sys.executable, "-m", "grader", "check", str(notebook)]
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
    import json
    path = Path("/tmp") / f"{lesson}.ipynb"
    path.write_text(json.dumps(contents))
    return path


def saved_notebook(lesson):
    """The saved file of this lesson's notebook: in the folder Jupyter runs it from, or
    the course's notebooks/ folder."""
    for folder in (Path.cwd(), COURSE_ROOT / "notebooks"):
        candidate = folder / f"{lesson}.ipynb"
        if candidate.is_file():
            return candidate
    return None
