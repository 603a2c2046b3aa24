"""No answer inside one function of what editions ship, in whatever order it is written.

The comparison (grader/authoring/function_overlap.py) looks for an answer's distinctive
statements anywhere in one function. The first tests show it finds a copy that the runs
comparison misses (reordered, spread between other statements, renamed) and passes over
an answer's idioms; the last apply it to the course: no function of ``checks/``,
``course/`` or another lesson's reference module holds a lesson's answer. (It found one:
lesson 07's checks computed the Huber loss's exact gradient, the answer to
``huber_loss_gradient``, to compare with; the judge's references compute it now.)
"""

import textwrap
from pathlib import Path

import nbformat
import pytest

from grader.authoring.answer_overlap import (
    answer_regions,
    found_in,
    notebook_text,
    runs_of,
)
from grader.authoring.function_overlap import (
    MIN_SHARED,
    distinctive,
    function_shapes,
    function_sources,
    functions_holding,
    idioms,
)
from grader.lessons import all_lessons

REPO = Path(__file__).resolve().parents[2]
LESSONS = all_lessons()


def student_notebook_text(name):
    return notebook_text(nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4))


@pytest.fixture(scope="module")
def common():
    answers = {name: [code for _, code in answer_regions(lesson.source())]
               for name, lesson in LESSONS.items()}
    return idioms(answers, [student_notebook_text(name) for name in LESSONS])


def answer(lesson, grade_id):
    return dict(answer_regions(LESSONS[lesson].source()))[grade_id]


def spread_out(code):
    """``code``'s top-level statements in reverse order (each one's lines kept together),
    a harmless statement between every two, variables renamed, in a helper function."""
    body = textwrap.dedent(code).strip().splitlines()
    blocks, current = [], []
    for line in body:
        if current and not line.startswith((" ", ")", "]", "}")):
            blocks.append(current)
            current = []
        current.append(line)
    blocks.append(current)
    pieces = []
    for number, block in enumerate(reversed(blocks)):
        pieces += [f"unrelated_{number} = len(str({number}))", *block]
    renamed = "\n".join(pieces).replace("slots", "chosen").replace("total", "mass")
    return "def helper(self, batch_size, beta):\n" + textwrap.indent(renamed, "    ") + "\n"


def test_a_reordered_spread_out_copy_is_found_where_runs_miss_it(common):
    code = answer("03_prioritized_replay", "per_update_priorities")
    copy = spread_out(code)
    assert found_in(code, runs_of(copy)) == []  # no three statements in a row remain
    held = functions_holding(code, function_shapes(copy), common)
    assert [holding.function for holding in held] == ["helper"]
    assert held[0].shared == held[0].of == len(distinctive(code, common)) >= 4


def written_out(shapes):
    """A function whose body is the normalised statements ``shapes``, as code."""
    lines = []
    for shape in shapes:
        text = " ".join({"V": "v", "STR": '"s"'}.get(token, token) for token in shape)
        if shape[0] in ("elif", "else", "except", "finally"):
            lines.append("if 0:\n        pass" if shape[0] != "except" else "try:\n        pass")
        lines.append(text + ("\n        pass" if text.endswith(":") else ""))
    return "def f():\n" + "".join(f"    {line}\n" for line in lines)


def test_half_the_distinctive_statements_are_needed_and_idioms_do_not_count(common):
    code = answer("04_hindsight_replay", "her_sample")
    own = sorted(distinctive(code, common))
    assert len(own) >= 2 * MIN_SHARED

    def holds(count):
        return bool(functions_holding(code, function_shapes(written_out(own[:count])),
                                      common))

    assert holds(len(own))
    half = (len(own) + 1) // 2
    assert holds(half) and not holds(half - 1)
    # the environment loop's idioms are in every lesson's loop: they are no one's answer
    loop = ("def run(env, agent):\n    state, _ = env.reset()\n    total = 0.0\n"
            "    for _ in range(10):\n        next_state, reward, terminated, truncated, _ = "
            "env.step(agent.act(state))\n        total += reward\n")
    assert functions_holding(answer("01_qlearning", "play_and_train"),
                             function_shapes(loop), common) == []


def test_every_function_is_read_nested_and_methods_included():
    source = ("class A:\n    def m(self):\n        def inner():\n            return 1\n"
              "        return inner\n\ndef f():\n    pass\n")
    assert [name for name, _ in function_sources(source)] == ["A.m", "A.m.inner", "f"]
    assert function_sources("def broken(:\n") == []


def helper_functions():
    found = []
    for folder in ("checks", "course"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if "__pycache__" not in path.parts:
                found += [(f"{path.relative_to(REPO)}:{name}", shapes)
                          for name, shapes in function_shapes(path.read_text())]
    return found


def test_no_function_of_the_course_holds_an_answer_of_another_place(common):
    """Each answer long enough to compare is found in its own reference module (so this
    can fail); none in a function of checks/, course/ or another reference module."""
    helpers = helper_functions()
    modules = {lesson.exports_to: function_shapes((REPO / lesson.exports_to).read_text())
               for lesson in LESSONS.values()}
    compared, found = 0, []
    for name, lesson in LESSONS.items():
        for grade_id, code in answer_regions(lesson.source()):
            if len(distinctive(code, common)) < MIN_SHARED:
                continue
            compared += 1
            assert functions_holding(code, modules[lesson.exports_to], common), \
                (name, grade_id)
            elsewhere = helpers + [(f"{module}:{function}", shapes)
                                   for module, functions in modules.items()
                                   if module != lesson.exports_to
                                   for function, shapes in functions]
            found += [f"{name}:{grade_id} in {holding.function} ({holding.shared} of "
                      f"{holding.of} distinctive statements)"
                      for holding in functions_holding(code, elsewhere, common)]
    assert compared >= 30
    assert found == [], "\n".join(found)
