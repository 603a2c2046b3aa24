"""The student edition: answers stay with the instructor, and every lesson still works.

Lessons 01-03 are published into a fresh folder, as an instructor starting a course
would, and the edition is read and run the way a student would use it. Its files are
compared with every answer of every lesson it does not release (all seven lessons here:
nothing is released by default) by grader/authoring/answer_overlap.py's normalised
statements, whose own tests (tests/authoring/test_answer_overlap.py) show it finds disguised copies.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

from grader.authoring.answer_overlap import answer_regions, found_in, notebook_text, runs_of
from grader.authoring.hub_links import BadHubOption, checked_branch
import grader.authoring.publish
from grader.authoring.publish import (CannotPublish, edition_hub_links, plan, publish,
                                      student_notebook, student_readme)
from grader.lessons import all_lessons
from grader.nbgrader_cells import is_answer, is_test, nbgrader_meta
from tests.support.run_all import (code_cells, describe_error, errors_in, is_experiment,
                                   run_all_problems)

pytestmark = [pytest.mark.xdist_group('edition'), pytest.mark.notebooks]

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = ("01_qlearning", "02_replay_buffer", "03_prioritized_replay")
URL = "https://github.com/an-instructor/experience-replay-students"
HUB = "https://hub.example.edu/"  # the trailing slash is tolerated
BRANCH = "fall-2025"
LESSONS = all_lessons()


def grader_cli(*arguments):
    return subprocess.run([sys.executable, "-m", "grader", *arguments], cwd=REPO,
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """(the edition's folder, what publish printed), with links to a JupyterHub."""
    out = tmp_path_factory.mktemp("edition") / "students"
    completed = grader_cli("publish", str(out), "--lessons",
                           ",".join(name[:2] for name in PUBLISHED), "--repository-url", URL,
                           "--hub-url", HUB, "--branch", BRANCH)
    assert completed.returncode == 0, completed.stderr
    return out, completed.stdout


@pytest.fixture(scope="module")
def edition(published):
    return published[0]


def text_of(path):
    """What a file shows whoever opens it: a notebook's cells, any other file as text."""
    text = path.read_text(errors="replace")
    return notebook_text(nbformat.reads(text, as_version=4)) if path.suffix == ".ipynb" else text


def public_runs(name):
    """Runs students see anyway next to lesson ``name``'s answers: the course's helpers
    and the lesson's own student notebook (stubs, given code, prose, visible tests)."""
    seen = runs_of(notebook_text(nbformat.read(REPO / "notebooks" / f"{name}.ipynb",
                                               as_version=4)))
    for path in (REPO / "course").glob("*.py"):
        seen |= runs_of(path.read_text())
    return seen


def answers_in(folder, released=()):
    """Every answer of a lesson not in ``released`` that a file in ``folder`` holds, and
    how many (answer, file) pairs were compared."""
    files = {path.relative_to(folder): runs_of(text_of(path))
             for path in sorted(folder.rglob("*")) if path.is_file()}
    found, compared = [], 0
    for name, lesson in LESSONS.items():
        if name in released:
            continue
        public = public_runs(name)
        for grade_id, answer in answer_regions(lesson.source()):
            for path, file_runs in files.items():
                compared += 1
                found += [f"{path}: {name}:{grade_id}: {' / '.join(passage)}"
                          for passage in found_in(answer, file_runs, public)]
    return found, compared


def test_the_edition_holds_no_answer_of_any_lesson(edition):
    found, compared = answers_in(edition)
    assert compared > 40 * 45  # every answer of the seven lessons against every file
    assert found == [], "\n".join(found)


def test_the_same_comparison_finds_the_answers_in_the_full_course():
    """What the edition leaves out would be found: the full course's reference modules
    hold the published lessons' answers, and lesson 05's module builds on lesson 02 by
    importing it, not by holding its answer."""
    for name in PUBLISHED:
        module = runs_of((REPO / LESSONS[name].exports_to).read_text())
        assert any(found_in(answer, module)
                   for _, answer in answer_regions(LESSONS[name].source())), name
    combined = runs_of((REPO / "combined_replay.py").read_text())
    assert not any(found_in(answer, combined, public_runs("02_replay_buffer"))
                   for _, answer in answer_regions(LESSONS["02_replay_buffer"].source()))


def test_the_edition_holds_no_grader_solutions_tests_examples_or_later_answers(edition):
    top = sorted(path.name for path in edition.iterdir())
    for private in ("solutions", "grader", "tests", "examples", "benchmarks", ".ci"):
        assert private not in top
    assert not list(edition.rglob("published_references.json"))[0].read_text().count(
        "BEGIN SOLUTION")
    # lessons 01-03's modules load the student's own notebooks; later lessons' are absent
    for name in PUBLISHED:
        module = edition / LESSONS[name].exports_to
        assert "exports_of" in module.read_text() and len(module.read_text()) < 600
    for name, lesson in LESSONS.items():
        if name not in PUBLISHED:
            assert not (edition / lesson.exports_to).exists(), lesson.exports_to
            assert not (edition / "notebooks" / f"{name}.ipynb").exists()


def test_publish_says_what_students_write_and_what_it_releases(published):
    _, printed = published
    lines = printed.splitlines()
    [written] = [line for line in lines if "students write themselves:" in line]
    for name in PUBLISHED:
        assert f"{LESSONS[name].exports_to} (lesson {name[:2]})" in written
    [released] = [line for line in lines if "reference modules released:" in line]
    assert "none" in released and "--release-references" in released
    assert URL in printed and "Colab" in printed


def execute_in(notebook, folder):
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYTHONPATH", "GRADER_SALT")}
    client = NotebookClient(notebook, kernel_name="python3", timeout=600, allow_errors=True,
                            resources={"metadata": {"path": str(folder)}})
    client.execute(env=environment)  # the kernel finds the course from its folder only
    return notebook


WHERE_FROM = nbformat.v4.new_code_cell(
    "import checks, course, qlearning, importlib.util\n"
    "print(checks.__file__, course.__file__, qlearning.__file__, "
    "importlib.util.find_spec('grader'))")


def imported_from(notebook):
    return "".join(output.get("text", "") for output in notebook.cells[-1].outputs)


@pytest.mark.parametrize("name", PUBLISHED)
def test_every_published_notebook_fails_only_where_work_is_missing(edition, name):
    notebook = nbformat.read(edition / "notebooks" / f"{name}.ipynb", as_version=4)
    notebook.cells.append(WHERE_FROM)
    execute_in(notebook, edition / "notebooks")
    origin = imported_from(notebook)
    assert origin.count(str(edition)) == 3 and "None" in origin, origin
    problems = run_all_problems(notebook)
    assert not problems, "\n\n".join(problems)
    # the edition has no grader: no self-check cell that promises one, and the text in
    # its place says what checks the notebook there
    assert all(cell.metadata.get("nbgrader", {}).get("grade_id") != "self-check"
               for cell in notebook.cells)
    text = " ".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    assert "exactly as your instructor's grader does" not in text
    assert "The test cells above run every check on its public inputs." in text


def completed(name):
    """The published notebook with the instructors' answers typed in, experiments left
    out (they only draw), as a student who finished the lesson would have saved it."""
    sys.path.insert(0, str(REPO / "examples"))
    from make_submissions import solution_answers

    answers = solution_answers(name)
    notebook = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
    notebook.cells = [cell for cell in notebook.cells if not is_experiment(cell)]
    for cell in notebook.cells:
        if is_answer(cell):
            cell.source = answers[nbgrader_meta(cell)["grade_id"]]
    return notebook


def test_completed_notebooks_pass_every_visible_test_in_the_edition(edition, tmp_path):
    folder = edition / "notebooks"
    for name in PUBLISHED:  # in order: each later lesson imports the earlier ones' work
        nbformat.write(completed(name), folder / f"{name}.ipynb")
    problems = []
    for name in PUBLISHED:
        notebook = nbformat.read(folder / f"{name}.ipynb", as_version=4)
        notebook.cells.append(WHERE_FROM)
        execute_in(notebook, folder)
        assert imported_from(notebook).count(str(edition)) == 3
        for cell in code_cells(notebook)[:-1]:
            problems += [f"{name}: {describe_error(cell, error)}"
                         for error in errors_in(cell)]
            if is_test(cell):
                printed = "".join(output.get("text", "") for output in cell.outputs)
                if "\u2713" not in printed:
                    problems.append(f"{name}: {nbgrader_meta(cell)['grade_id']} printed no "
                                    "\u2713 line")
    assert not problems, "\n\n".join(problems)


def test_a_released_answer_is_one_asked_for_that_a_lesson_imports(tmp_path):
    out = tmp_path / "students"
    completed = grader_cli("publish", str(out), "--lessons", "02",
                           "--release-references", "01", "--repository-url", URL)
    assert completed.returncode == 0, completed.stderr
    assert (out / "qlearning.py").read_text() == (REPO / "qlearning.py").read_text()
    assert "exports_of" in (out / "replay_buffer.py").read_text()
    assert sorted(path.name for path in out.glob("*.py")) == ["qlearning.py",
                                                             "replay_buffer.py"]
    [released] = [line for line in completed.stdout.splitlines()
                  if "reference module released:" in line]
    assert "qlearning.py" in released and "02_replay_buffer" in released
    found, _ = answers_in(out, released={"01_qlearning"})
    assert found == [], "\n".join(found)
    # lesson 01's answers are in it, released: the comparison would say so otherwise
    assert answers_in(out)[0]


def test_what_no_lesson_builds_on_is_never_released():
    with pytest.raises(CannotPublish, match="--release-references 01") as refused:
        plan(["02"])  # nothing is released unless asked for
    assert "\n" not in str(refused.value)
    with pytest.raises(CannotPublish, match="--release-references 01,02,03,05"):
        plan(["06"], release_references=[])  # all at once, through the modules' imports
    with pytest.raises(CannotPublish, match="never a later lesson's"):
        plan(list(PUBLISHED), release_references=["05"])
    edition = plan(["06"], release_references=["01", "02", "03", "05"])
    assert [lesson.name for lesson in edition.released] == [
        "01_qlearning", "02_replay_buffer", "03_prioritized_replay", "05_combined_replay"]
    assert edition.needed_by["05_combined_replay"] == ["06_capstone"]
    assert "combined_replay.py" in edition.needed_by["02_replay_buffer"]
    edition = plan(list(PUBLISHED), release_references=["01"])
    assert [lesson.name for lesson in edition.written_by_students] == list(PUBLISHED[1:])


@pytest.mark.parametrize("url", [None, "https://github.com/experience-replay-course/"
                                       "experience-replay.git"], ids=["missing", "course's"])
def test_an_edition_without_its_own_address_is_refused(tmp_path, url):
    out = tmp_path / "students"
    completed = grader_cli("publish", str(out), "--lessons", "01",
                           *(["--repository-url", url] if url else []))
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1 and "--repository-url" in completed.stderr
    assert "solutions/" in completed.stderr and "Traceback" not in completed.stderr
    assert not out.exists()


def test_an_answer_copied_into_a_helper_stops_the_publish(tmp_path, monkeypatch):
    """Should a course change copy an answer into what the edition ships, publish finds
    it, says where, and leaves nothing behind. (The visible tests' recorded answers are
    left out to keep this test quick: they are not where the copy is.)"""
    answer = dict(answer_regions(LESSONS["05_combined_replay"].source()))["discretize"]
    write = grader.authoring.publish._write

    def write_with_a_copy(out, *arguments):
        write(out, *arguments)
        (out / "course" / "binning.py").write_text(
            "import numpy as np\n\n\ndef cell_of(observation, lows, highs, bins):\n"
            + answer.replace("clipped", "inside") + "\n")

    monkeypatch.setattr(grader.authoring.publish, "record_visible_answers",
                        lambda lessons: {})
    monkeypatch.setattr(grader.authoring.publish, "_write", write_with_a_copy)
    out = tmp_path / "students"
    with pytest.raises(CannotPublish, match="course/binning.py holds lesson "
                                            "05_combined_replay's answer discretize"):
        publish(out, list(PUBLISHED), None, URL)
    assert not out.exists()


def test_an_answer_spread_through_a_helper_in_another_order_stops_the_publish(
        tmp_path, monkeypatch):
    """The same, for a copy no run of three statements finds: the answer's lines in
    reverse order, each after an unrelated one, inside one function."""
    answer = dict(answer_regions(LESSONS["05_combined_replay"].source()))["discretize"]
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    spread = "".join(f"    unrelated_{number} = len(str({number}))\n    {line}\n"
                     for number, line in enumerate(reversed(lines)))
    write = grader.authoring.publish._write

    def write_with_a_copy(out, *arguments):
        write(out, *arguments)
        (out / "course" / "binning.py").write_text(
            f"def cell_of(observation, lows, highs, bins):\n{spread}")

    monkeypatch.setattr(grader.authoring.publish, "record_visible_answers",
                        lambda lessons: {})
    monkeypatch.setattr(grader.authoring.publish, "_write", write_with_a_copy)
    assert not found_in(answer, runs_of(spread))
    out = tmp_path / "students"
    with pytest.raises(CannotPublish, match=r"course/binning.py holds lesson "
                                            r"05_combined_replay's answer discretize "
                                            r"\('in cell_of\(\), 5 of its 5 distinctive"):
        publish(out, list(PUBLISHED), None, URL)
    assert not out.exists()


def test_a_later_lesson_names_the_unfinished_earlier_lesson_it_runs(edition, tmp_path):
    # lesson 01 as published (every answer a stub), lesson 02 finished: lesson 02's
    # learning test runs the student's own lesson 01 loop (lesson 02's hands it the agent),
    # and says that is what is unfinished, not the lesson 02 loop it called
    copy = tmp_path / "students"
    shutil.copytree(edition, copy)
    folder = copy / "notebooks"
    nbformat.write(student_notebook(all_lessons()["01_qlearning"], URL),
                   folder / "01_qlearning.ipynb")
    notebook = completed("02_replay_buffer")
    # the other test cells run the finished lesson 02 for a minute and say nothing here
    notebook.cells = [cell for cell in notebook.cells if not is_test(cell)
                      or nbgrader_meta(cell).get("grade_id") == "test_replay_learning"]
    notebook = execute_in(notebook, folder)
    cell = next(cell for cell in code_cells(notebook)
                if nbgrader_meta(cell).get("grade_id") == "test_replay_learning")
    printed = "".join(output.get("text", "") for output in cell.outputs)
    assert ("play_and_train_with_replay(env, agent, replay, 8) did not run to the end: the "
            "NotImplementedError comes from play_and_train of lesson 01, which is not "
            "written yet.") in printed, printed



def pull_target(link, edition):
    """What an nbgitpuller link asks for: (repository, branch, interface, the file or
    folder it opens in ``edition``, as cloned where nbgitpuller clones it), its hub
    address checked on the way."""
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc) == ("https", "hub.example.edu"), link
    assert parts.path.endswith("/hub/user-redirect/git-pull"), link
    query = parse_qs(parts.query, strict_parsing=True)
    assert sorted(query) == ["branch", "repo", "urlpath"] and all(
        len(values) == 1 for values in query.values()), link
    repository, branch, urlpath = query["repo"][0], query["branch"][0], query["urlpath"][0]
    # nbgitpuller clones into the last part of the address, and urlpath starts there
    folder = repository.rsplit("/", 1)[-1]
    interface, _, inside = urlpath.partition(f"/{folder}")
    assert not inside or inside.startswith("/"), urlpath
    return repository, branch, interface, edition / inside.lstrip("/")


HUB_LINK = re.compile(r"https://hub\.example\.edu/[^\s)]*git-pull\?[^\s)]+")


def test_hub_links_pull_the_edition_and_open_each_lesson(published):
    edition, printed = published
    readme = (edition / "README.md").read_text()
    section = readme[readme.index("**On your course's JupyterHub**"):
                     readme.index("**Locally**")]
    in_readme, in_print = HUB_LINK.findall(section), HUB_LINK.findall(printed)
    assert in_readme and sorted(in_readme) == sorted(in_print)
    notebooks = sorted((edition / "notebooks").glob("*.ipynb"))
    assert [path.stem for path in notebooks] == list(PUBLISHED)
    opened = []
    for link in in_readme:
        repository, branch, interface, target = pull_target(link, edition)
        assert (repository, branch, interface) == (URL, BRANCH, "lab/tree")
        assert target.exists(), link
        opened.append(target)
    # a link per published notebook, and one for the whole edition's folder
    assert sorted(opened) == sorted([edition, *notebooks])
    assert "pip install nbgitpuller" in section and "requirements.txt" in section
    assert "`experience-replay-students/`" in section
    # the Colab badges open the notebooks on the branch the edition is pushed to
    assert readme.count(f"/blob/{BRANCH}/notebooks/") == len(PUBLISHED)
    assert "/blob/main/" not in readme and f"(branch {BRANCH})" in printed


def test_classic_notebook_links_and_a_git_suffix(edition):
    """--hub-interface notebook opens tree/...; an address ending in .git is cloned
    without the suffix, so the folder is the one the links open; a hub's base path
    stays. Made without publishing again: the README is a function of the plan."""
    lessons = plan(list(PUBLISHED))
    hub = edition_hub_links(lessons, URL + ".git/", "https://hub.example.edu/jupyter/",
                            "main", "notebook")
    readme = student_readme(lessons, URL + ".git/", "main", hub)
    links = HUB_LINK.findall(readme)
    assert len(links) == len(PUBLISHED) + 1
    targets = []
    for link in links:
        assert urlsplit(link).path == "/jupyter/hub/user-redirect/git-pull"
        repository, branch, interface, target = pull_target(link, edition)
        assert (repository, branch, interface) == (URL, "main", "tree")
        targets.append(target)
    assert sorted(targets) == sorted([edition, *(edition / "notebooks").glob("*.ipynb")])
    assert "the classic notebook" in readme
    # without a hub the README has no hub section
    assert "JupyterHub" not in student_readme(lessons, URL)


@pytest.mark.parametrize("option, value, expected", [
    ("--hub-url", "ftp://hub.example.edu", "not an http(s) address with a host"),
    ("--hub-url", "hub.example.edu", "not an http(s) address with a host"),
    ("--hub-url", "https://hub.example.edu/?next=lab", "query or fragment"),
    ("--hub-url", "https://hub.example.edu/hub/home", "the hub's own /hub/ route"),
    ("--branch", "fall 2025", "cannot be a git branch"),
    ("--branch", "fall..2025", "cannot be a git branch"),
])
def test_a_hub_option_no_link_could_work_with_is_refused_in_one_line(tmp_path, option,
                                                                    value, expected):
    out = tmp_path / "students"
    arguments = {"--hub-url": HUB, "--branch": BRANCH, option: value}
    completed = grader_cli("publish", str(out), "--lessons", "01", "--repository-url", URL,
                           *(part for pair in arguments.items() for part in pair))
    assert completed.returncode == 2 and completed.stdout == ""
    assert completed.stderr.startswith(f"grader: {option} ") and expected in completed.stderr
    assert completed.stderr.count("\n") == 1 and "Traceback" not in completed.stderr
    assert not out.exists()


def test_an_ssh_address_cannot_be_pulled_by_the_hub(tmp_path):
    out = tmp_path / "students"
    with pytest.raises(CannotPublish, match="without your SSH keys") as refused:
        publish(out, ["01"], None, "git@github.com:an-instructor/students.git", hub_url=HUB)
    assert "\n" not in str(refused.value) and not out.exists()


@pytest.mark.parametrize("branch", ["main", "fall-2025", "release/v1.2", "ünï", "a b", "-x",
                                    "a..b", "x.lock", "a/.hidden", "a//b", "a/", "a.",
                                    "a@{1}", "a\\b", "a:b", "a~1", "a^", "a?", "a*", "a[b"])
def test_a_branch_is_refused_when_git_would_refuse_it(branch):
    git = subprocess.run(["git", "check-ref-format", "--branch", branch],
                         capture_output=True).returncode
    try:
        checked_branch(branch)
        ours = 0
    except BadHubOption as error:
        assert "\n" not in str(error)
        ours = 1
    assert ours == (git != 0)


def test_an_edition_ships_no_later_lessons_checks_or_helpers(edition):
    """Lessons 01-03 published: their checks and the helpers they import, not lesson 04-07's
    checks (lesson 06's judge computes its autocorrelation answer) nor helpers only later
    lessons use (course/many_seeds_dqn.py holds a vectorised form of lesson 07's
    dqn_step)."""
    shipped = {str(path.relative_to(edition)) for folder in ("checks", "course")
               for path in (edition / folder).rglob("*.py")}
    assert {"checks/lesson01_qlearning.py", "checks/lesson02_replay_buffer.py",
            "checks/lesson03_prioritized_replay/__init__.py", "course/ring_buffer.py",
            "course/taxi.py", "checks/framework.py"} <= shipped
    later = {path for path in shipped if path.startswith(
        ("checks/lesson04", "checks/lesson05", "checks/lesson06", "checks/lesson07"))}
    assert later == set() and "course/many_seeds_dqn.py" not in shipped
    assert "course/mlp.py" not in shipped and "course/bit_flipping.py" not in shipped


def test_lesson_06s_checks_hold_no_autocorrelation_of_their_own(monkeypatch):
    """The hint that guesses what a wrong autocorrelation computed computes the answer, so
    it lives with the judge's references, which editions never ship; there, the checks
    give general advice and compute no correlation themselves."""
    import checks.lesson06_capstone as lesson06

    source = Path(lesson06.__file__).read_text()
    assert "np.corrcoef(" not in source and "_pearson" not in source
    values = np.arange(12, dtype=float) ** 1.5
    lag_one = float(np.corrcoef(values[:-1], values[1:])[0, 1])  # a wrong answer at lag 3
    assert "lag-1 correlation" in lesson06._autocorrelation_hint(values, 3, lag_one)
    monkeypatch.setattr(lesson06, "reference_code", lambda lesson, name: None)  # an edition
    assert lesson06._autocorrelation_hint(values, 3, lag_one).startswith(
        " Correlate values[:-lag] with values[lag:]")
