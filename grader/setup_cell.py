"""The first cell of every lesson: set the course up in Colab, find it everywhere else.

The repository's address lives here and only here; ``python -m grader release`` writes
this cell into every notebook, so changing the address means editing one line.
"""

COURSE_REPOSITORY = "https://github.com/experience-replay-course/experience-replay"
COLAB_CHECKOUT = "/content/experience-replay"

SETUP_CELL_SOURCE = f'''\
# Run this cell first. In Colab it downloads the course and installs its requirements
# (about a minute, once); anywhere else it only lets this notebook import the course.
import importlib.util, pathlib, subprocess, sys

COURSE_REPOSITORY = "{COURSE_REPOSITORY}"
if "google.colab" in sys.modules and not pathlib.Path("{COLAB_CHECKOUT}").exists():
    subprocess.run(["git", "clone", "--depth=1", COURSE_REPOSITORY, "{COLAB_CHECKOUT}"], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "-r",
                    "{COLAB_CHECKOUT}/requirements.txt"], check=True)
if importlib.util.find_spec("course") is None:
    here = pathlib.Path.cwd()
    for folder in [here, *here.parents, pathlib.Path("{COLAB_CHECKOUT}")]:
        if (folder / "course").is_dir() and (folder / "qlearning.py").is_file():
            sys.path.insert(0, str(folder))
            break
    else:
        raise RuntimeError("Cannot find the course's modules: start Jupyter in the course "
                           "folder (or one of its subfolders) and run this cell again.")'''

SETUP_CELL_ID = "setup"  # the nbgrader grade_id of the setup cell in every lesson
