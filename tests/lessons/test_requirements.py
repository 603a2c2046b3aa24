"""Every requirement a lesson states is a named rule that a check tests, and a bug breaks.

- Each check says what it asks and names its rules; every failed verdict in the check
  modules names a rule (read from the source, so that a branch no bug reaches is held to
  it too).
- Each tag ``[rule: name]`` in a lesson's text names a rule of that lesson's checks, and
  each rule is tagged beside the sentence that tells the student.
- Each rule has a bug in ``tests/bugs`` aimed at it (tests/threats/test_bugs_in_process.py
  runs each bug and holds its failure to naming that rule).
"""

import ast
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

from checks import LESSON_MODULES, checks_for_lesson  # noqa: E402
from checks.requirements import Rule, tags_in  # noqa: E402
from grader.lessons import all_lessons  # noqa: E402
from grader.outputs.spec import bugs_by_rule, coverage, lesson_spec  # noqa: E402
from tests.bugs import ALL_BUGS, LESSONS  # noqa: E402
from tests.bugs.kinds import KINDS  # noqa: E402

# functions whose failure verdicts must name the rule broken
FAILING = {"failed", "wrong_amount", "value_error_problem"}


def rules_of(lesson):
    """``{name: Rule}`` of a lesson's checks; one Rule per name."""
    rules = {}
    for check in checks_for_lesson(lesson):
        for rule in check.rules:
            assert isinstance(rule, Rule), f"{check.name}: {rule!r} is not a Rule"
            assert rules.setdefault(rule.name, rule) is rule, (
                f"{lesson}: two different rules are named {rule.name!r}")
    return rules


def tags_of(lesson):
    return [name for cell in all_lessons()[lesson].source().cells
            if cell.cell_type == "markdown" for name in tags_in(cell.source)]


CHECK_FOLDER = REPOSITORY / "checks"


def check_sources():
    """Every module of checks/, those of a lesson's package included."""
    return sorted(path for path in CHECK_FOLDER.rglob("*.py") if "__pycache__" not in path.parts)


def relative(path):
    return str(path.relative_to(CHECK_FOLDER))


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_check_says_what_it_asks_and_names_its_rules(lesson):
    for check in checks_for_lesson(lesson):
        assert check.asks.strip().endswith("."), f"{check.name}: asks is one sentence"
        assert check.rules, f"{check.name} names no rule"
    rules_of(lesson)


@pytest.mark.parametrize("path", check_sources(), ids=relative)
def test_every_failed_verdict_names_a_rule(path):
    tree = ast.parse(path.read_text())
    unnamed = [node.lineno for node in ast.walk(tree)
               if isinstance(node, ast.Call) and getattr(node.func, "id", None) in FAILING
               and not any(keyword.arg == "rule" for keyword in node.keywords)]
    assert not unnamed, f"{relative(path)}: failures without rule= on lines {unnamed}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_tag_in_the_text_names_a_rule_and_every_rule_is_tagged(lesson):
    rules, tags = rules_of(lesson), tags_of(lesson)
    unknown = sorted(set(tags) - set(rules))
    assert not unknown, f"{lesson}: the text tags rules no check tests: {unknown}"
    untold = sorted(set(rules) - set(tags))
    assert not untold, f"{lesson}: rules no sentence of the text tells: {untold}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_rule_quotes_a_sentence_of_the_text(lesson):
    from grader.lessons import all_lessons
    from grader.outputs.spec import tagged_sentences

    quoted = tagged_sentences(all_lessons()[lesson])
    empty = sorted(name for name, sentences in quoted.items() if not all(sentences))
    assert not empty, f"{lesson}: rules whose tag quotes an empty sentence: {empty}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_check_that_tests_a_distribution_says_so_in_the_spec(lesson):
    # the statistical checks (benchmarks/catch_rates.py) name their distribution test
    from benchmarks.catch_rates import STATISTICAL

    for name in STATISTICAL.get(lesson, ()):
        assert checks_for_lesson(lesson)[name].distribution, f"{lesson}: {name}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_rule_has_a_bug_that_breaks_it(lesson):
    rules, bugs = rules_of(lesson), bugs_by_rule(lesson)
    unbroken = sorted(name for name in rules if not bugs.get(name))
    assert not unbroken, f"{lesson}: rules no bug in tests/bugs breaks: {unbroken}"


@pytest.mark.parametrize("bug", ALL_BUGS, ids=lambda bug: bug.name)
def test_a_bug_names_its_kind_and_a_rule_of_its_check(bug):
    assert bug.kind in KINDS, f"{bug.name}: kind {bug.kind!r} is not in tests/bugs/kinds.py"
    check = checks_for_lesson(bug.lesson)[bug.check]
    assert bug.rule in {rule.name for rule in check.rules}, (
        f"{bug.name}: {check.name} has no rule {bug.rule!r}")


def test_the_spec_of_every_lesson_is_generated_from_the_checks():
    for lesson in LESSON_MODULES:
        text = lesson_spec(lesson)
        for check in checks_for_lesson(lesson):
            assert check.name in text
            for rule in check.rules:
                assert f"rule {rule.name}:" in text
        row = coverage(lesson)
        assert row["rules"] == len(rules_of(lesson))
        assert row["fewest bugs per rule"] >= 1


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_test_cell_says_what_its_check_asks(lesson):
    from checks.requirements import comment_lines

    checks = checks_for_lesson(lesson)
    for path in (all_lessons()[lesson].source_path, REPOSITORY / "notebooks" / f"{lesson}.ipynb"):
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                comment = [line for line in cell.source.splitlines() if line.startswith("#")]
                assert comment == comment_lines(checks[meta["grade_id"]].asks), (
                    f"{path.name}: {meta['grade_id']}'s comment is not its check's asks "
                    "(run python -m grader release)")


def test_grader_spec_prints_a_lesson_and_refuses_an_unknown_one():
    shown = subprocess.run([sys.executable, "-m", "grader", "spec", "04"], cwd=REPOSITORY,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    check = next(iter(checks_for_lesson("04_hindsight_replay")))
    assert check.name in shown.stdout and check.rules[0].name in shown.stdout
    unknown = subprocess.run([sys.executable, "-m", "grader", "spec", "99"], cwd=REPOSITORY,
                             capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1
    summary = subprocess.run([sys.executable, "-m", "grader", "spec"], cwd=REPOSITORY,
                             capture_output=True, text=True, timeout=120)
    assert summary.returncode == 0 and all(lesson in summary.stdout for lesson in LESSONS)
