"""Finding a lesson's answer inside one function of other code, in any order.

:mod:`grader.authoring.answer_overlap` finds an answer by runs of consecutive
statements; a copy whose statements are reordered, or spread out between other
statements, has no such run. This comparison works a function at a time instead: an
answer is *held* by a function when the function contains, anywhere in its body, at
least half of the answer's distinctive statements, and at least ``MIN_SHARED`` of them.

- Statements are normalised as the runs comparison normalises them (comments, layout,
  docstrings dropped, strings alike), and every variable becomes ``V``: renaming, or
  the order in which names first appear, changes nothing.
- A statement is *distinctive* when it holds ``DISTINCTIVE_TOKENS`` tokens or more, is
  not public (written in a student notebook, where every student reads it) and is not
  an idiom shared by the answers of two lessons or more (``V , _ = V . reset ( )``, the
  environment loop's step). What is left is what the answer itself decides.
- The idioms come from the course's answers and notebooks only, never from the code
  being searched: pasting an answer into many functions does not make it an idiom.

It compares text, so it finds copies, not rewrites: a vectorised form of an answer
(lesson 07's DQN step over many seeds at once) shares the answer's steps, not its
statements. The editions keep such code out by imports (``grader.authoring.edition_files``).
"""

import ast
import textwrap
from collections import Counter
from dataclasses import dataclass

from grader.authoring.answer_overlap import statements

DISTINCTIVE_TOKENS = 6  # tokens a statement needs to say something of its own
MIN_SHARED = 2  # distinctive statements a function must hold, and at least half of them


def statement_shapes(code):
    """The normalised statements of ``code``, every variable ``V``, in order."""
    return [tuple("V" if kind == "name" else text for kind, text in statement.tokens)
            for statement in statements(textwrap.dedent(code))]


def function_sources(source):
    """``(name, code)`` of every function and method in ``source`` (nested ones too,
    each also inside its enclosing function); empty if ``source`` is not Python."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines()
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    found.append((name, "\n".join(lines[child.lineno - 1:child.end_lineno])))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def idioms(answers_by_lesson, public_texts):
    """Statement shapes that say nothing of one answer: those of any of
    ``public_texts`` (code students read anyway), and those found in the answers of two
    lessons or more (``answers_by_lesson``: lesson -> [answer code])."""
    common = set()
    for text in public_texts:
        common.update(statement_shapes(text))
    lessons_using = Counter()
    for answers in answers_by_lesson.values():
        lessons_using.update({shape for code in answers for shape in statement_shapes(code)})
    return common | {shape for shape, count in lessons_using.items() if count >= 2}


def distinctive(answer, common):
    """The distinct statements of ``answer`` that are its own: long enough and not in
    ``common`` (from :func:`idioms`)."""
    return {shape for shape in statement_shapes(answer)
            if len(shape) >= DISTINCTIVE_TOKENS and shape not in common}


@dataclass(frozen=True)
class Holding:
    """A function holding an answer: which one, and how many of the answer's distinctive
    statements it holds, of how many."""

    function: str
    shared: int
    of: int


def function_shapes(source):
    """``(name, statement shapes)`` of every function in ``source``
    (:func:`function_sources`), each tokenised once, for :func:`functions_holding`."""
    return [(name, frozenset(statement_shapes(code)))
            for name, code in function_sources(source)]


def functions_holding(answer, functions, common):
    """Every :class:`Holding` of ``answer`` among ``functions`` (``(name, shapes)`` pairs,
    as :func:`function_shapes` gives them), most shared first. An answer with fewer
    than ``MIN_SHARED`` distinctive statements is too short to be found this way."""
    own = distinctive(answer, common)
    if len(own) < MIN_SHARED:
        return []
    held = []
    for name, shapes in functions:
        shared = len(own & shapes)
        if shared >= MIN_SHARED and 2 * shared >= len(own):
            held.append(Holding(name, shared, len(own)))
    return sorted(held, key=lambda holding: -holding.shared)
