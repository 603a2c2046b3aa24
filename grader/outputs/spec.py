"""``python -m grader spec [LESSON]``: a lesson's checks read as its specification.

Everything printed is generated from the checks (:mod:`checks.requirements`), the source
notebook (points, and the sentences tagged with each rule) and the bug suite in
``tests/bugs`` (which bugs are aimed at each rule), so it can never drift from what is
graded. Without a lesson: one line per lesson, with the counts the coverage test holds
each lesson to.
"""

import re
import textwrap
from collections import Counter

from checks import checks_for_lesson
from checks.contracts import CONTRACT_RULES, contract_words
from checks.requirements import tags_in
from grader.lessons import all_lessons
from grader.nbgrader_cells import nbgrader_meta


def check_points(lesson):
    """``{grade_id: points}`` of a lesson's test cells, from its source notebook."""
    points = {}
    for cell in lesson.source().cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            points[meta["grade_id"]] = float(meta.get("points", 0))
    return points


def tagged_sentences(lesson):
    """``{rule name: [sentence, ...]}``: the sentences of the lesson's Markdown that carry
    each rule's tag (tag and HTML removed)."""
    found = {}
    for cell in lesson.source().cells:
        if cell.cell_type != "markdown":
            continue
        said = ""
        for sentence in _sentences(cell.source):
            # a tag that follows another tags the same sentence (two rules stated at once)
            said = _plain(sentence) or said
            for name in tags_in(sentence):
                found.setdefault(name, []).append(said)
    return found


def _sentences(markdown):
    # a tag closes the sentence it stands beside: split after each tag, then on blank lines
    pieces = re.split(r"(?<=\])(?:</sub>)?\s*(?=\S)", markdown)
    return [piece for block in pieces for piece in re.split(r"\n\s*\n", block)]


def _plain(sentence):
    text = re.sub(r"<sub>\s*\[rule: [^\]]+\]\s*</sub>|\[rule: [^\]]+\]", "", sentence)
    text = re.sub(r"<[^>]+>", "", text)
    text = " ".join(text.split())
    # the sentence itself: what follows the last full stop of an earlier one
    return re.split(r"(?<=[.!?])\s+(?=[A-Z`*(])", text)[-1].strip()


def bugs_by_rule(lesson_name):
    """``{rule name: [Bug, ...]}`` from ``tests/bugs``, or None where it is not shipped."""
    try:
        from tests.bugs import ALL_BUGS
    except ImportError:
        return None
    found = {}
    for bug in ALL_BUGS:
        if bug.lesson == lesson_name:
            found.setdefault(bug.rule, []).append(bug)
    return found


def asks_of(lesson_name, check_id):
    """What check ``check_id`` of lesson ``lesson_name`` asks, or "" for a name the course
    does not know (a report from another course version)."""
    try:
        return checks_for_lesson(lesson_name)[check_id].asks
    except KeyError:
        return ""


def lesson_spec(lesson_name):
    """The specification of one lesson, as text."""
    lesson = all_lessons()[lesson_name]
    checks, points = checks_for_lesson(lesson_name), check_points(lesson)
    sentences, bugs = tagged_sentences(lesson), bugs_by_rule(lesson_name)
    lines = [f"Lesson {lesson_name}: {len(list(checks))} checks, "
             f"{sum(points.values()):g} points"]
    held = sorted({rule for check in checks for rule in check.rules
                   if rule in CONTRACT_RULES}, key=CONTRACT_RULES.index)
    lines += ["", "Contracts, held on every call of the student's code that any check makes:"]
    for rule in held:
        lines += _rule_lines(rule, sentences, bugs)
    for name, contract in checks.contracts.items():
        lines += _wrapped(f"{name}: {contract_words(contract)}", "  ")
    for check in checks:
        limit = f"{check.time_limit:g} s of CPU" + (", trains agents" if check.learning else "")
        worth = points.get(check.name, 0)
        lines += ["", f"{check.name}  ({worth:g} point{'' if worth == 1 else 's'}; {limit})",
                  *_wrapped(f"asks: {check.asks}", "  ")]
        if check.distribution:
            lines += _wrapped(f"distribution test: {check.distribution}", "  ")
        for rule in check.rules:
            if rule in CONTRACT_RULES:
                continue  # listed once, above
            lines += _rule_lines(rule, sentences, bugs)
    return "\n".join(lines)


def _rule_lines(rule, sentences, bugs):
    lines = _wrapped(f"rule {rule.name}: {rule.says}", "  ")
    for sentence in sentences.get(rule.name, []):
        lines += _wrapped(f'lesson: "{sentence}"', "      ")
    if bugs is not None:
        aimed = bugs.get(rule.name, [])
        lines += _wrapped("bugs: " + (", ".join(f"{bug.name} ({bug.kind})"
                                                for bug in aimed) or "none"), "      ")
    return lines


def _wrapped(text, indent):
    return textwrap.wrap(text, 92, initial_indent=indent,
                         subsequent_indent=indent + "    ") or [indent]


def coverage(lesson_name):
    """What the coverage test counts for one lesson: tagged requirements, rules, bugs,
    bugs per rule and the kinds of bug covered."""
    lesson = all_lessons()[lesson_name]
    rules = {rule.name for check in checks_for_lesson(lesson_name) for rule in check.rules}
    tags = [name for cell in lesson.source().cells if cell.cell_type == "markdown"
            for name in tags_in(cell.source)]
    bugs = bugs_by_rule(lesson_name) or {}
    per_rule = Counter({name: len(bugs.get(name, [])) for name in rules})
    return {"lesson": lesson_name, "requirements": len(tags), "rules": len(rules),
            "bugs": sum(len(found) for found in bugs.values()),
            "fewest bugs per rule": min(per_rule.values(), default=0),
            "kinds": sorted({bug.kind for found in bugs.values() for bug in found})}


def course_summary():
    lines = [f"{'lesson':<24}{'tagged':>7}{'rules':>7}{'bugs':>6}{'min/rule':>9}  kinds"]
    for name in all_lessons():
        row = coverage(name)
        lines.append(f"{name:<24}{row['requirements']:>7}{row['rules']:>7}{row['bugs']:>6}"
                     f"{row['fewest bugs per rule']:>9}  {', '.join(row['kinds'])}")
    return "\n".join(lines)
