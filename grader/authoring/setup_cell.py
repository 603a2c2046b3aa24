"""The first cell of every lesson: set the course up in Colab, find it everywhere else.

The repository's address lives here and only here; ``python -m grader release`` writes
this cell into every notebook (and ``python -m grader publish`` into the student
edition's, with the edition's address), so changing the address means editing one line.

In Colab the cell installs only what Colab lacks (``requirements-colab.txt``: gymnasium)
and never upgrades what Colab pins for its own runtime (ipykernel, ipython, tornado,
jupyter_client, notebook, numpy): Colab warns that changing those can crash it.
"""

from pathlib import PurePosixPath

COURSE_REPOSITORY = "https://github.com/experience-replay-course/experience-replay"
COLAB_REQUIREMENTS = "requirements-colab.txt"
SETUP_CELL_ID = "setup"  # the nbgrader grade_id of the setup cell in every lesson


def colab_checkout(repository_url):
    """Where Colab clones the course: /content/<the repository's name>."""
    name = PurePosixPath(repository_url.rstrip("/")).name.removesuffix(".git")
    return f"/content/{name}"


def setup_cell_source(repository_url=COURSE_REPOSITORY):
    checkout = colab_checkout(repository_url)
    return f'''\
# Run this cell first. In Colab it downloads the course and installs what Colab lacks
# (gymnasium; a few seconds, once); anywhere else it only lets this notebook import it.
import importlib.util, pathlib, subprocess, sys

COURSE_REPOSITORY = "{repository_url}"
if "google.colab" in sys.modules and not pathlib.Path("{checkout}").exists():
    subprocess.run(["git", "clone", "--depth=1", COURSE_REPOSITORY, "{checkout}"], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "-r",
                    "{checkout}/{COLAB_REQUIREMENTS}"], check=True)
if importlib.util.find_spec("course") is None:
    here = pathlib.Path.cwd()
    for folder in [here, *here.parents, pathlib.Path("{checkout}")]:
        if (folder / "course").is_dir() and (folder / "checks").is_dir():
            sys.path.insert(0, str(folder))
            break
    else:
        raise RuntimeError("Cannot find the course's modules: start Jupyter in the course "
                           "folder (or one of its subfolders) and run this cell again.")'''


SETUP_CELL_SOURCE = setup_cell_source()
