"""Your own earlier lessons, as modules later lessons import.

Lesson 02 imports lesson 01's ``QLearningAgent`` with ``from qlearning import ...``. In the
full course ``qlearning.py`` is the course's reference. In a student edition whose
instructor has not released it yet, ``qlearning.py`` is a two-line module that calls
:func:`exports_of`: it is made from *your* notebook ``notebooks/01_qlearning.ipynb``,
from the cells that start with ``#| export``, as you last saved them. Save the earlier
notebook after you change an answer, then restart the later lesson's kernel.
"""

import json
from pathlib import Path

from course.add_to_class import add_to_class

EXPORT_MARK = "#| export"
EDITION = Path(__file__).resolve().parent.parent


def exports_of(lesson, notebooks=None):
    """The names the ``#| export`` cells of your notebook of ``lesson`` define."""
    path = Path(notebooks or EDITION / "notebooks") / f"{lesson}.ipynb"
    try:
        cells = json.loads(path.read_text())["cells"]
    except FileNotFoundError:
        raise ImportError(f"lesson {lesson[:2]}'s module is made from your notebook {path}, "
                          "which is not there: keep the notebooks in the course's "
                          "notebooks/ folder") from None
    except (ValueError, KeyError, TypeError):
        raise ImportError(f"{path} is not a notebook this course can read") from None
    namespace = {"__name__": lesson, "add_to_class": add_to_class}
    for cell in cells:
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if cell.get("cell_type") == "code" and source.startswith(EXPORT_MARK):
            exec(compile(source, f"{path}", "exec"), namespace)  # noqa: S102 - your own code
    return {name: value for name, value in namespace.items()
            if not name.startswith("_") and name != "add_to_class"}
