"""No answer where students can read it before its lesson is released.

The comparison (grader/authoring/answer_overlap.py) finds an answer in other code by runs of
WINDOW (3) consecutive normalised statements: comments, layout and docstrings ignored,
string literals alike, variables renamed consistently. The first tests show it finds a
reformatted, renamed copy of a real answer and passes over code that shares less than a
window or is public anyway; the last ones apply it to the course itself: no reference
module holds another lesson's answer, and no file that every student edition ships
(the course's helpers, the checks, the student notebooks) holds any lesson's answer.
"""

import ast
import io
import textwrap
import tokenize
from pathlib import Path

import nbformat
import pytest

from grader.authoring.answer_overlap import (WINDOW, answer_regions, found_in,
                                             notebook_text, runs_of, statements)
from grader.lessons import all_lessons

REPO = Path(__file__).resolve().parents[2]
LESSONS = all_lessons()


def answers_of(name):
    return dict(answer_regions(LESSONS[name].source()))


def student_notebook(name):
    return nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)


def lightly_edited(code):
    """``code`` (an indented answer) as a copier might disguise it: every variable it
    assigns renamed, every string reworded, each one-statement ``if`` body pulled up
    onto its header's line, a comment on every line, and indented for a method body."""
    code = textwrap.dedent(code)
    assigned = sorted({node.id for node in ast.walk(ast.parse(code))
                       if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
                       and node.id != "_"})
    edits, previous = [], None  # ((row, start), (row, end), new text), in order
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.STRING:
            edits.append((token.start, token.end, '"reworded"'))
        elif token.type == tokenize.NAME and token.string in assigned and previous != ".":
            edits.append((token.start, token.end,
                          f"renamed_{assigned.index(token.string)}"))
        previous = token.string
    lines = code.splitlines()
    for (row, start), (_, end), new in reversed(edits):  # these answers' strings: one line
        lines[row - 1] = lines[row - 1][:start] + new + lines[row - 1][end:]
    joined = []
    for line in lines:
        if (joined and joined[-1].lstrip().startswith("if ")
                and joined[-1].rstrip().endswith(":") and line.lstrip().startswith("raise ")):
            joined[-1] = f"{joined[-1].rstrip()} {line.strip()}"
        else:
            joined.append(line)
    return "\n".join(f"        {line}  # disguised" if line.strip() else "" for line in joined)


def test_a_renamed_reworded_reformatted_copy_of_an_answer_is_found():
    for lesson, grade_id in (("02_replay_buffer", "buffer_sample"),
                             ("01_qlearning", "play_and_train"),
                             ("03_prioritized_replay", "sumtree_find_prefix_sum")):
        answer = answers_of(lesson)[grade_id]
        copy = f"class Elsewhere:\n    def renamed(self, batch_size, t_max):\n" \
               f"{lightly_edited(answer)}\n"
        assert "renamed_0" in copy and ("reworded" in copy) == ('"' in answer)
        assert not set(answer.splitlines()) & set(copy.splitlines())  # no line as it was
        # found wherever the answer itself would be: all but a loop's short tail
        everywhere = found_in(answer, runs_of(answer))
        assert sum(map(len, everywhere)) >= 0.7 * len(answer.strip().splitlines())
        assert found_in(answer, runs_of(copy)) == everywhere, (lesson, grade_id)


def test_public_code_and_runs_shorter_than_the_window_are_not_answers():
    answer = answers_of("02_replay_buffer")["buffer_sample"]
    copy = lightly_edited(answer)
    assert found_in(answer, runs_of(copy))
    # what students may see anyway does not count
    assert found_in(answer, runs_of(copy), public_runs=runs_of(copy)) == []
    # every stretch of WINDOW - 1 statements of the answer, alone in other code
    found = statements(answer)
    for start in range(len(found) - WINDOW + 2):
        first, last = found[start].first_line, found[start + WINDOW - 2].last_line
        part = "\n".join(answer.splitlines()[first - 1:last])
        other = f"x = 1\n{textwrap.dedent(part)}\ny = 2\n"
        assert found_in(answer, runs_of(other)) == [], part


def test_layout_comments_and_docstrings_do_not_change_the_statements():
    compact = 'def f(a, b):\n    """Doc."""\n    if a: return b\n    c = [a,\n         b]; return c\n'
    spread = ("def f(a, b):\n    # a comment\n\n    if a:\n        return b  # why\n"
              "    c = [a, b]\n    return c\n")
    assert [statement.tokens for statement in statements(compact)] == [
        statement.tokens for statement in statements(spread)]
    # def f(a, b): / if a: / c = [a, b] -- the docstring, the comments and the two
    # returns of fewer than three tokens are gone
    assert [len(statement.tokens) for statement in statements(spread)] == [8, 3, 7]


def test_code_quoted_in_prose_is_compared_and_prose_is_not():
    answer = answers_of("01_qlearning")["play_and_train"]
    prose = ("# Notes\n\nHere's how it's done, don't tell anyone:\n\n```python\n"
             f"{textwrap.dedent(answer)}```\n\nThat's all.\n")
    assert found_in(answer, runs_of(prose))
    assert found_in(answer, runs_of("Here's the idea: play an episode, don't stop.\n")) == []


def test_each_reference_module_holds_its_own_lessons_answers():
    """The comparison sees the course's real answers where they are (so the test below
    can fail): every answer of WINDOW statements or more is found in its own module."""
    for name, lesson in LESSONS.items():
        module = runs_of((REPO / lesson.exports_to).read_text())
        for grade_id, answer in answer_regions(lesson.source()):
            if len(statements(answer)) >= WINDOW:
                assert found_in(answer, module), (name, grade_id)


def public_runs(name):
    """What students see anyway next to lesson ``name``'s answers: the course's helpers
    and the lesson's own student notebook (stubs, given code, prose, visible tests)."""
    seen = runs_of(notebook_text(student_notebook(name)))
    for path in (REPO / "course").glob("*.py"):
        seen |= runs_of(path.read_text())
    return seen


def test_no_reference_module_holds_another_lessons_answer():
    modules = {lesson.exports_to: runs_of((REPO / lesson.exports_to).read_text())
               for lesson in LESSONS.values()}
    compared, found = 0, []
    for name, lesson in LESSONS.items():
        public = public_runs(name)
        for grade_id, answer in answer_regions(lesson.source()):
            for module, module_runs in modules.items():
                if module == lesson.exports_to:
                    continue
                compared += 1
                found += [f"{name}:{grade_id} in {module}: {' / '.join(passage)}"
                          for passage in found_in(answer, module_runs, public)]
    assert compared > 200  # every answer against every other module
    assert found == [], "\n".join(found)


@pytest.fixture(scope="module")
def shipped_to_every_edition():
    """The runs of every file a student edition always holds: the course's helpers, the
    checks, and the student notebooks (of any lesson an edition may publish)."""
    texts = {f"notebooks/{other}.ipynb": notebook_text(student_notebook(other))
             for other in LESSONS}
    for folder in ("course", "checks"):  # a lesson's checks may be a package: every module
        texts.update({str(path.relative_to(REPO)): path.read_text()
                      for path in sorted((REPO / folder).rglob("*.py"))
                      if "__pycache__" not in path.parts})
    return {path: runs_of(text) for path, text in texts.items()}


@pytest.mark.parametrize("name", LESSONS)
def test_no_answer_in_what_every_edition_ships(name, shipped_to_every_edition):
    """None of those files may hold an answer: only the lesson's own student notebook is
    public here (a course helper holding an answer would be no excuse, but a leak)."""
    public = runs_of(notebook_text(student_notebook(name)))
    found = []
    for grade_id, answer in answer_regions(LESSONS[name].source()):
        for path, text_runs in shipped_to_every_edition.items():
            found += [f"{grade_id} in {path}: {' / '.join(passage)}"
                      for passage in found_in(answer, text_runs, public)]
    assert found == [], "\n".join(found)
