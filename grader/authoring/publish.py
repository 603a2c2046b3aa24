"""``python -m grader publish OUT``: the student edition, with no answers in it.

The full repository is the self-study edition: solutions, reference modules, the
grader. For a graded course the instructor publishes a student edition instead and
pushes it as its own public repository, which the notebooks' Colab cells clone (so its
address is required: cloning the full course would hand out ``solutions/``). It holds:

- ``notebooks/``: the student versions of the chosen lessons;
- ``course/``: the public helpers, and ``checks/``: the visible tests, whose verdicts
  compare with ``checks/published_references.json``, the answers the judge's references
  (``grader/judge/references``, not published) give for the public salt's inputs;
- for each earlier lesson a published one builds on, either the lesson's reference
  module, if the instructor released it (``--release-references``), or, for a lesson
  published here, a two-line module that loads the student's *own* answers from their
  notebook (``course/your_work.py``);
- ``requirements.txt`` for local use, ``requirements-colab.txt`` for Colab, a README
  (with ``--hub-url``, one that also links each lesson on the course's JupyterHub
  through nbgitpuller, :mod:`grader.authoring.hub_links`).

It holds no ``solutions/``, no hidden tests, no grader, no examples, no tests, and no
reference module the instructor did not release: nothing is released by default, and a
released module must be one the edition's lessons build on (imported by a published
notebook or by another released module), so a later lesson's answer never goes out
early. A lesson that builds on a lesson neither published nor released is refused, with
the ``--release-references`` that would allow it. Once written, the edition is searched
for the answers of every lesson it does not release, by runs of statements
(:mod:`grader.authoring.answer_overlap`) and function by function in any order
(:mod:`grader.authoring.function_overlap`), and refused, its files removed, if any is found
there.
"""

import ast
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grader.authoring.answer_overlap import answer_regions, found_in, notebook_text, runs_of
from grader.authoring.function_overlap import function_shapes, functions_holding, idioms
from grader.authoring.hub_links import (DEFAULT_BRANCH, BadHubOption, checked_branch,
                                        hub_links)
from grader.authoring.setup_cell import (COLAB_REQUIREMENTS, COURSE_REPOSITORY,
                                         SETUP_CELL_ID, setup_cell_source)
from grader.judge.student_notebook import student_version
from grader.authoring.edition_files import checks_module, imported_names, shipped_helpers
from grader.lessons import all_lessons, lesson_called
from grader.lessons import REPOSITORY

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
    called = lesson_called(name)
    if called is not None:
        return all_lessons()[called]
    raise CannotPublish(f"no lesson {name!r}; the lessons are {', '.join(all_lessons())}")


def _imports_in(tree):
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def imported_modules(notebook):
    """The top-level module names the notebook's code cells import."""
    names = set()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        try:
            names |= _imports_in(ast.parse(cell.source))
        except SyntaxError:  # a stub or magic that is not Python: it imports nothing
            continue
    return names


def module_imports(lesson):
    """The top-level module names a lesson's reference module imports."""
    return _imports_in(ast.parse((REPOSITORY / lesson.exports_to).read_text()))


@dataclass(frozen=True)
class EditionPlan:
    published: list  # the lessons whose notebooks the edition holds, in order
    released: list  # the lessons whose reference modules it holds, in order
    needed_by: dict  # released lesson's name -> the names of what imports its module

    @property
    def written_by_students(self):
        """Published lessons whose module the edition makes from the student's notebook."""
        return [lesson for lesson in self.published
                if lesson.exports_to and lesson not in self.released]


def _numbers(lessons, separator=","):
    return separator.join(lesson.name[:2]
                          for lesson in sorted(lessons, key=lambda lesson: lesson.number))


def plan(lessons=None, release_references=None):
    """The :class:`EditionPlan` for publishing ``lessons`` (default all) and releasing
    the reference modules of ``release_references`` (default none); raises
    CannotPublish when the lessons build on an answer neither published nor released,
    or when a released module is one no lesson of the edition builds on."""
    everything = all_lessons()
    published = ([lesson_named(name) for name in lessons] if lessons
                 else list(everything.values()))
    published = sorted(set(published), key=lambda lesson: lesson.number)
    released = {lesson_named(name) for name in release_references or ()}
    for lesson in sorted(released, key=lambda lesson: lesson.number):
        if not lesson.exports_to:
            raise CannotPublish(f"--release-references {lesson.name[:2]}: lesson "
                                f"{lesson.name} has no reference module to release")
    by_module = {lesson.reference_module: lesson for lesson in everything.values()
                 if lesson.exports_to}
    needed_by, missing, builds_on_missing, followed = {}, {}, set(), set()
    # (the published lesson it started from, importer, modules): what each published
    # notebook imports, then what each module it needs imports in turn
    waiting = [(lesson.name, lesson.name, imported_modules(lesson.source()))
               for lesson in published]
    while waiting:
        root, importer, modules = waiting.pop(0)
        for module in sorted(modules & set(by_module)):
            owner = by_module[module]
            if owner in published and owner not in released:
                continue  # made from the student's own notebook, whose imports count too
            if owner in released:
                needed_by.setdefault(owner.name, []).append(importer)
            else:
                missing.setdefault(owner, []).append(importer)
                builds_on_missing.add(root)
            if owner not in followed:
                followed.add(owner)
                waiting.append((root, owner.exports_to, module_imports(owner)))
    if missing:
        missing = sorted(missing, key=lambda lesson: lesson.number)
        roots = sorted(builds_on_missing)
        raise CannotPublish(
            f"{' and '.join(roots)} build{'s' if len(roots) == 1 else ''} on "
            f"{', '.join(lesson.exports_to for lesson in missing)} (the answer"
            f"{'s' if len(missing) > 1 else ''} of lesson{'s' if len(missing) > 1 else ''} "
            f"{_numbers(missing, ', ')}), which this edition neither publishes nor "
            f"releases: add --release-references "
            f"{_numbers(missing)}, or publish {'it' if len(missing) == 1 else 'them'} too")
    unneeded = sorted(released - {everything[name] for name in needed_by},
                      key=lambda lesson: lesson.number)
    if unneeded:
        raise CannotPublish(
            f"--release-references {_numbers(unneeded)}: no lesson of this edition builds "
            f"on {', '.join(lesson.exports_to for lesson in unneeded)}; an edition releases "
            "only the answers its lessons import, never a later lesson's")
    return EditionPlan(published, sorted(released, key=lambda lesson: lesson.number),
                       needed_by)


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


SELF_CHECK_CELL_ID = "self-check"
# an edition holds no grader: in place of the self-check's heading and cell, what checks
# the notebook there, and what the instructor's grader does beyond it
EDITION_CHECK_TEXT = """## Checking your notebook

The test cells above run every check on its public inputs. An instructor who grades
this lesson runs the same checks on hidden inputs, keeping only your answer cells: code
you wrote outside them is not graded, so put everything your answers need inside them."""


def student_notebook(lesson, repository_url):
    notebook = student_version(lesson.source())
    first = notebook.cells[0]
    if first.metadata.get("nbgrader", {}).get("grade_id") != SETUP_CELL_ID:
        raise CannotPublish(f"{lesson.name}: the first cell is not the setup cell")
    first.source = setup_cell_source(repository_url)
    ids = [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in notebook.cells]
    if SELF_CHECK_CELL_ID in ids:
        at = ids.index(SELF_CHECK_CELL_ID)
        heading = notebook.cells[at - 1]
        if heading.cell_type != "markdown" or not heading.source.startswith("## Check"):
            raise CannotPublish(f"{lesson.name}: the self-check cell has no heading before it")
        heading.source = EDITION_CHECK_TEXT
        del notebook.cells[at]
    return notebook


def student_readme(edition, repository_url, branch=DEFAULT_BRANCH, hub=None):
    """The edition's README.md: its lessons with their Colab badges (which open the
    notebooks on ``branch``), how to work locally and, given ``hub`` (the edition's
    :class:`grader.authoring.hub_links.HubLinks`), each lesson's link on the course's
    JupyterHub."""
    lessons = "\n".join(f"| {lesson.name[:2]} | [{lesson.name}](notebooks/{lesson.name}.ipynb) "
                        f"| [![Open In Colab](https://colab.research.google.com/assets/"
                        f"colab-badge.svg)](https://colab.research.google.com/github/"
                        f"{_github_path(repository_url)}/blob/{branch}/notebooks/"
                        f"{lesson.name}.ipynb) |" for lesson in edition.published)
    later = ("\n".join(f"- `{lesson.exports_to}` is made from your own "
                       f"`notebooks/{lesson.name}.ipynb` until your instructor releases the "
                       "course's version: save that notebook before a later lesson "
                       "imports it." for lesson in edition.written_by_students)
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
{_hub_section(edition, hub) if hub else ""}
**Locally** (Python 3.11+):

```bash
python -m venv .venv && .venv/bin/pip install -r requirements.txt
.venv/bin/jupyter lab notebooks/
```

Later lessons import what earlier ones built:
{later}
"""


def _hub_section(edition, hub):
    """The README's part on the course's JupyterHub: a link per lesson and one for all."""
    interface = "JupyterLab" if hub.interface == "lab" else "the classic notebook"
    rows = "\n".join(f"| {lesson.name[:2]} | {lesson.name} | [open on the hub]"
                     f"({hub.lessons[lesson.name]}) |" for lesson in edition.published)
    return f"""
**On your course's JupyterHub**: click a lesson's link and log in to {hub.hub_url}.
The first click copies this folder into your home folder on the hub, as `{hub.folder}/`,
and opens the lesson in {interface}; a later click brings in your instructor's changes
without overwriting yours (nbgitpuller merges them into your copy).

| # | lesson | open |
|---|---|---|
{rows}
| | the whole edition | [open the folder on the hub]({hub.whole_edition}) |

The links work once the hub has nbgitpuller and this edition's requirements installed
(for its administrator: `pip install nbgitpuller -r requirements.txt` in the hub's user
image).
"""


def _github_path(repository_url):
    return repository_url.rstrip("/").removesuffix(".git").split("github.com/")[-1]


def _same_repository(url, other):
    def canonical(address):
        return address.strip().rstrip("/").removesuffix(".git").lower()
    return canonical(url) == canonical(other)


def checked_repository_url(repository_url):
    """The edition's own address, which its Colab cells clone; CannotPublish if it is
    missing or is the full course's (whose clone holds every solution)."""
    if not repository_url or not repository_url.strip():
        raise CannotPublish(
            "--repository-url is required: the edition's Colab cells clone the repository "
            "it names, and without it they would clone the full course, solutions/ included "
            "(give the address you will push the edition to)")
    if _same_repository(repository_url, COURSE_REPOSITORY):
        raise CannotPublish(
            f"--repository-url {repository_url} is the full course's repository, whose "
            "clone holds solutions/: give the address you will push the edition to")
    if not repository_url.startswith(("https://", "git@", "ssh://", "http://")):
        raise CannotPublish(f"--repository-url {repository_url!r} is not a git address "
                            "(https://github.com/you/your-edition)")
    return repository_url.strip()


def answers_found(folder, edition):
    """``[(file, lesson, grade_id, first line)]``: the answers of lessons ``edition`` does
    not release that the files in ``folder`` hold, as :mod:`grader.authoring.answer_overlap`
    finds them (what a lesson's own student notebook shows, and the course's helpers, are
    public, not answers)."""
    course_runs = set()
    for path in sorted((REPOSITORY / "course").glob("*.py")):
        course_runs |= runs_of(path.read_text())
    texts, functions = {}, []
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            text = path.read_text(errors="replace")
            if path.suffix == ".py":
                functions.append((path.relative_to(folder), function_shapes(text)))
            if path.suffix == ".ipynb":
                text = notebook_text(nbformat.reads(text, as_version=4))
            texts[path.relative_to(folder)] = runs_of(text)
    lessons = all_lessons().values()
    # what each lesson shows is no answer
    shown = {lesson: notebook_text(student_version(lesson.source())) for lesson in lessons}
    common = idioms({lesson.name: [code for _, code in answer_regions(lesson.source())]
                     for lesson in lessons}, shown.values())
    found = []
    for lesson in lessons:
        if lesson in edition.released:
            continue
        public = course_runs | runs_of(shown[lesson])
        for grade_id, answer in answer_regions(lesson.source()):
            for path, text_runs in texts.items():
                for passage in found_in(answer, text_runs, public):
                    found.append((str(path), lesson.name, grade_id, passage[0]))
            # the same answer reordered or spread out inside one function
            for path, path_functions in functions:
                for holding in functions_holding(answer, path_functions, common):
                    where = (f"in {holding.function}(), {holding.shared} of its "
                             f"{holding.of} distinctive statements")
                    found.append((str(path), lesson.name, grade_id, where))
    return found


def publish(out, lessons=None, release_references=None, repository_url=None,
            hub_url=None, branch=DEFAULT_BRANCH, hub_interface="lab"):
    """Write the student edition into ``out`` (a new or empty folder); return its
    :class:`EditionPlan` and its files. ``branch`` is the one the edition is pushed to;
    given ``hub_url``, its README links every lesson on that JupyterHub (nbgitpuller
    links opening ``hub_interface``, lab or notebook): :func:`edition_hub_links`."""
    repository_url = checked_repository_url(repository_url)
    try:
        branch = checked_branch(branch)
    except BadHubOption as error:
        raise CannotPublish(str(error)) from None
    edition = plan(lessons, release_references)
    hub = (edition_hub_links(edition, repository_url, hub_url, branch, hub_interface)
           if hub_url is not None else None)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CannotPublish(f"{out} is not an empty folder: publish into a new folder")
    answers = record_visible_answers(edition.published)
    created = not out.exists()
    try:
        _write(out, edition, answers, repository_url, branch, hub)
        found = answers_found(out, edition)
    except BaseException:
        _remove_what_was_written(out, created)
        raise
    if found:
        _remove_what_was_written(out, created)
        path, lesson, grade_id, line = found[0]
        raise CannotPublish(f"{path} holds lesson {lesson}'s answer {grade_id} ({line!r}"
                            f"{f' and {len(found) - 1} more' if len(found) > 1 else ''}): "
                            "nothing published; remove the copy from the course first")
    return edition, sorted(path.relative_to(out) for path in out.rglob("*")
                           if path.is_file())


def edition_hub_links(edition, repository_url, hub_url, branch=DEFAULT_BRANCH,
                      hub_interface="lab"):
    """The :class:`grader.authoring.hub_links.HubLinks` of ``edition``'s lessons on
    ``hub_url``; CannotPublish for an option no link could work with."""
    try:
        return hub_links(hub_url, repository_url,
                         [lesson.name for lesson in edition.published], branch, hub_interface)
    except BadHubOption as error:
        raise CannotPublish(str(error)) from None


def edition_helpers(edition):
    """The files of ``checks/`` and ``course/`` the edition ships: those its lessons reach
    through imports (:mod:`grader.authoring.edition_files`)."""
    roots = {"checks", "course"}
    for lesson in edition.published:
        roots.add(checks_module(lesson))
        for cell in lesson.source().cells:
            if cell.cell_type == "code":  # IPython's magics and shell lines left out
                roots |= imported_names("\n".join(
                    line for line in cell.source.splitlines()
                    if not line.lstrip().startswith(("%", "!"))))
    for lesson in edition.released:
        roots |= imported_names((REPOSITORY / lesson.exports_to).read_text())
    if edition.written_by_students:
        roots.add("course.your_work")  # the loaders of modules made from notebooks
    return shipped_helpers(roots)


def _write(out, edition, answers, repository_url, branch, hub):
    (out / "notebooks").mkdir(parents=True)
    for lesson in edition.published:
        nbformat.write(student_notebook(lesson, repository_url),
                       out / "notebooks" / f"{lesson.name}.ipynb")
    for helper in edition_helpers(edition):  # never a later lesson's checks or helpers
        (out / helper).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPOSITORY / helper, out / helper)
    (out / "checks" / "published_references.json").write_text(
        json.dumps(answers, sort_keys=True, allow_nan=True) + "\n")
    for lesson in edition.released:
        shutil.copy2(REPOSITORY / lesson.exports_to, out / lesson.exports_to)
    for lesson in edition.written_by_students:
        (out / lesson.exports_to).write_text(LOADER.format(number=lesson.name[:2],
                                                           lesson=lesson.name))
    (out / "requirements.txt").write_text(EDITION_REQUIREMENTS)
    shutil.copy2(REPOSITORY / COLAB_REQUIREMENTS, out / COLAB_REQUIREMENTS)
    (out / "README.md").write_text(student_readme(edition, repository_url, branch, hub))
    (out / ".gitignore").write_text(".venv/\n__pycache__/\n.ipynb_checkpoints/\n")


def _remove_what_was_written(out, created):
    """Undo a publish that failed: ``out`` was new or empty, so all it holds is ours."""
    if not out.is_dir():
        return
    for path in out.iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    if created:
        out.rmdir()
