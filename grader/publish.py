"""``python -m grader publish OUT``: the student edition, with no answers in it.

The full repository is the self-study edition: solutions, reference modules, the
grader. For a graded course the instructor publishes a student edition instead and
pushes it as its own public repository, which the notebooks' Colab cells point at. It
holds:

- ``notebooks/``: the student versions of the chosen lessons;
- ``course/``: the public helpers, and ``checks/``: the visible tests, whose verdicts
  compare with ``checks/published_references.json``, the answers the judge's references
  (``grader/references``, not published) give for the public salt's inputs;
- for each earlier lesson a later one imports: the reference module if the instructor
  releases it (by default, those of lessons this edition does not ask students to
  write), or else, for a lesson published here, a two-line module that loads the
  student's *own* answers from their notebook (``course/your_work.py``);
- ``requirements.txt`` for local use, ``requirements-colab.txt`` for Colab, a README.

It holds no ``solutions/``, no hidden tests, no grader, no examples, no tests, and no
reference module of a lesson it asks students to write. A lesson whose notebook imports
the module of a lesson that is neither published nor released is refused, with the
``--release-references`` that would allow it.
"""

import ast
import json
import shutil
from pathlib import Path

import nbformat

from grader.lessons import all_lessons
from grader.release import REPOSITORY, student_version
from grader.setup_cell import COLAB_REQUIREMENTS, SETUP_CELL_ID, setup_cell_source

EDITION_REQUIREMENTS = """\
# The course's student edition, locally: the lessons, their experiments and visible tests.
numpy>=1.26,<3
gymnasium>=1.3,<2
scipy>=1.11,<2
matplotlib>=3.8,<4
pandas>=2.1,<4
tqdm>=4.66,<5
ipywidgets>=8.1,<9
jupyterlab>=4,<5
ipykernel>=6.17,<8
"""

LOADER = '''\
"""Lesson {number}'s module, made from your own notebook notebooks/{lesson}.ipynb.

Your instructor has not released the course's version yet, so later lessons use your
answers: the cells of that notebook that start with `#| export`, as you last saved them.
"""

from course.your_work import exports_of

globals().update(exports_of("{lesson}"))
'''


class CannotPublish(Exception):
    """The edition cannot be made as asked; the message is the one-line reason."""


def lesson_named(name):
    """The lesson ``name`` stands for: ``01``, ``1`` or ``01_qlearning``."""
    for lesson in all_lessons().values():
        if name in (lesson.name, lesson.name[:2], str(lesson.number)):
            return lesson
    raise CannotPublish(f"no lesson {name!r}; the lessons are {', '.join(all_lessons())}")


def imported_modules(notebook):
    """The top-level module names the notebook's code cells import."""
    names = set()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # a stub or magic that is not Python: it imports nothing
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names


def plan(lessons=None, release_references=None):
    """(published lessons, released lessons), checked: raises CannotPublish."""
    everything = all_lessons()
    published = ([lesson_named(name) for name in lessons] if lessons
                 else list(everything.values()))
    published = sorted(set(published), key=lambda lesson: lesson.number)
    if release_references is None:  # what no published lesson asks students to write
        released = [lesson for lesson in everything.values()
                    if lesson.exports_to and lesson not in published]
    else:
        released = [lesson_named(name) for name in release_references]
    by_module = {lesson.reference_module: lesson for lesson in everything.values()
                 if lesson.exports_to}
    for lesson in published:
        needed = imported_modules(lesson.source()) & set(by_module)
        for module in sorted(needed):
            owner = by_module[module]
            if owner not in published and owner not in released:
                raise CannotPublish(
                    f"{lesson.name} imports {module} (lesson {owner.name}'s answer), which "
                    f"this edition neither publishes nor releases: add --release-references "
                    f"{owner.name[:2]}, or publish lesson {owner.name[:2]} too")
    return published, sorted(set(released), key=lambda lesson: lesson.number)


def record_visible_answers(lessons):
    """What the judge's references answer for every visible test of ``lessons``: each
    check runs on the lesson's reference module with the public salt, and every answer
    its verdict asks for is kept."""
    import importlib

    from checks import checks_for_lesson
    from checks.expected import recording
    from checks.framework import VISIBLE_SALT, as_plain_data
    from checks.lending import forget_mirrored

    with recording() as answers:
        for lesson in lessons:
            namespace = vars(importlib.import_module(lesson.reference_module))
            lesson_checks = checks_for_lesson(lesson.name)
            for check in lesson_checks:
                inputs = as_plain_data(lesson_checks.inputs(check.name, VISIBLE_SALT))
                try:
                    data = as_plain_data(check.probe(
                        inputs, **{name: namespace[name] for name in check.needs}))
                finally:
                    forget_mirrored()
                verdict = check.verdict(inputs, data)
                if not verdict.passed:
                    raise CannotPublish(f"the reference of {lesson.name} fails its visible "
                                        f"test {check.name}: {verdict.feedback}")
    return answers


def student_notebook(lesson, repository_url):
    notebook = student_version(lesson.source())
    first = notebook.cells[0]
    if first.metadata.get("nbgrader", {}).get("grade_id") != SETUP_CELL_ID:
        raise CannotPublish(f"{lesson.name}: the first cell is not the setup cell")
    first.source = setup_cell_source(repository_url)
    return notebook


def student_readme(published, released, repository_url):
    lessons = "\n".join(f"| {lesson.name[:2]} | [{lesson.name}](notebooks/{lesson.name}.ipynb) "
                        f"| [![Open In Colab](https://colab.research.google.com/assets/"
                        f"colab-badge.svg)](https://colab.research.google.com/github/"
                        f"{_github_path(repository_url)}/blob/main/notebooks/{lesson.name}"
                        ".ipynb) |" for lesson in published)
    own = [lesson for lesson in published if lesson.exports_to and lesson not in released]
    later = ("\n".join(f"- `{lesson.exports_to}` is made from your own "
                       f"`notebooks/{lesson.name}.ipynb` until your instructor releases the "
                       "course's version: save that notebook before a later lesson "
                       "imports it." for lesson in own)
             or "- every module a lesson imports is already here.")
    return f"""# Experience replay: the student edition

Notebooks that teach experience replay in reinforcement learning, from a Q-table to
prioritized, hindsight and combined replay. Fill in every cell marked `# YOUR CODE HERE`
and run the test cell under it: it prints a ✓ line, or says what it expected and what
your code did. Your instructor grades a copy of your notebook with hidden inputs.

| # | lesson | open |
|---|---|---|
{lessons}

**In Colab**: click a badge and run the first cell: it downloads this folder and
installs what Colab lacks (gymnasium), nothing else.

**Locally** (Python 3.11+):

```bash
python -m venv .venv && .venv/bin/pip install -r requirements.txt
.venv/bin/jupyter lab notebooks/
```

Later lessons import what earlier ones built:
{later}
"""


def _github_path(repository_url):
    return repository_url.rstrip("/").removesuffix(".git").split("github.com/")[-1]


def publish(out, lessons=None, release_references=None, repository_url=None):
    """Write the student edition into ``out`` (a new or empty folder); return its files."""
    from grader.setup_cell import COURSE_REPOSITORY

    repository_url = repository_url or COURSE_REPOSITORY
    published, released = plan(lessons, release_references)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise CannotPublish(f"{out} is not empty: publish into a new folder")
    answers = record_visible_answers(published)
    (out / "notebooks").mkdir(parents=True)
    for lesson in published:
        nbformat.write(student_notebook(lesson, repository_url),
                       out / "notebooks" / f"{lesson.name}.ipynb")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPOSITORY / "course", out / "course", ignore=ignore)
    shutil.copytree(REPOSITORY / "checks", out / "checks", ignore=ignore)
    (out / "checks" / "published_references.json").write_text(
        json.dumps(answers, sort_keys=True, allow_nan=True) + "\n")
    for lesson in all_lessons().values():
        if not lesson.exports_to:
            continue
        if lesson in released:
            shutil.copy2(REPOSITORY / lesson.exports_to, out / lesson.exports_to)
        elif lesson in published:
            (out / lesson.exports_to).write_text(LOADER.format(number=lesson.name[:2],
                                                               lesson=lesson.name))
    (out / "requirements.txt").write_text(EDITION_REQUIREMENTS)
    shutil.copy2(REPOSITORY / COLAB_REQUIREMENTS, out / COLAB_REQUIREMENTS)
    (out / "README.md").write_text(student_readme(published, released, repository_url))
    (out / ".gitignore").write_text(".venv/\n__pycache__/\n.ipynb_checkpoints/\n")
    return sorted(path.relative_to(out) for path in out.rglob("*") if path.is_file())
