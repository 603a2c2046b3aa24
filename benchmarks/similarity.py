"""How long ``python -m grader similarity`` takes on a large class, and whether the
copies it should find come first.

    python benchmarks/similarity.py [--students 500] [--lessons 02,03] [--pairs 10]

A synthetic class is made in memory (no notebooks written): in every answer cell of the
lessons chosen, each student writes a body of random statements of their own (random
statement kinds, numbers, operators and builtins), with a few idioms every class shares
mixed in (``self.rng = np.random.default_rng(seed)``, ``if not self.storage: raise``).
``--pairs`` planted pairs copy: the second student takes the first's cells, renames
every variable and swaps neighbouring statements; three students hand in the released
solution. The benchmark times :func:`grader.outputs.similarity.compare` (CPU and wall: the
fingerprints, every pair's scores from the sparse products, ``compare_files`` for the
pairs shown) and the page, estimates what calling ``compare_files`` for every pair would
take, and checks that the planted pairs rank first in every lesson and over all lessons,
and that exactly the solution copiers are flagged (they are listed against the released
solution, apart from the pairs).
"""

import argparse
import itertools
import os
import random
import re
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "benchmarks"))

from summary import load_average, print_summary  # noqa: E402

from grader.authoring.publish import lesson_named  # noqa: E402
from grader.lessons import all_lessons, answer_stubs, solution_answers  # noqa: E402
import grader.outputs.similarity as similarity  # noqa: E402
from grader.outputs.similarity_page import page  # noqa: E402

SEED = 2024
STUB_BODY = re.compile(r"( *)# YOUR CODE HERE\n *raise NotImplementedError\(\)")
NAMES = ["total", "count", "index", "value", "batch", "weights", "step", "limit", "rows",
         "scale", "items", "cursor", "result", "sample", "target", "delta", "best", "seen",
         "parts", "queue", "left", "right", "node", "level", "score", "size_", "item"]
BUILTINS = ["len", "min", "max", "abs", "sum", "int", "float", "sorted", "list", "tuple"]
OPERATORS = ["+", "-", "*", "//", "%"]
COMPARISONS = ["<", ">", "<=", ">=", "==", "!="]
IDIOMS = ["self.rng = np.random.default_rng(seed)",
          "if not self.storage:\n    raise ValueError(\"cannot sample from an empty buffer\")",
          "if batch_size <= 0:\n    raise ValueError(f\"batch_size must be positive, got "
          "{batch_size}\")",
          "return tuple(np.array(column) for column in zip(*batch))"]


def random_statement(rng):
    """One statement (one line, or a header and its body) with names from NAMES."""
    name = lambda: rng.choice(NAMES)  # noqa: E731
    number = lambda: str(rng.randint(0, 99))  # noqa: E731
    kind = rng.randrange(7)
    if kind == 0:
        return f"{name()} = {name()} {rng.choice(OPERATORS)} {number()}"
    if kind == 1:
        return f"{name()} = {rng.choice(BUILTINS)}({name()}) {rng.choice(OPERATORS)} {number()}"
    if kind == 2:
        return (f"if {name()} {rng.choice(COMPARISONS)} {number()}:\n"
                f"    {name()} = {rng.choice(BUILTINS)}({name()}, {number()})")
    if kind == 3:
        return (f"for {name()} in range({number()}, {rng.choice(BUILTINS)}({name()})):\n"
                f"    {name()}.append({name()} {rng.choice(OPERATORS)} {number()})")
    if kind == 4:
        return f"{name()}[{number()}] = ({name()}, {name()}, {number()})"
    if kind == 5:
        return (f"while {name()} {rng.choice(COMPARISONS)} {name()}:\n"
                f"    {name()} {rng.choice(OPERATORS)}= {number()}")
    return f"{name()} = [{name()} for {name()} in {name()} if {name()} % {number()}]"


def own_statements(rng):
    """The statements of one student's answer to one stub body: their own, and an idiom
    now and then."""
    statements = [random_statement(rng) for _ in range(rng.randint(6, 10))]
    for _ in range(rng.randint(0, 2)):
        statements.insert(rng.randrange(len(statements) + 1), rng.choice(IDIOMS))
    return statements


def filled(stub, bodies):
    """``stub`` with each ``# YOUR CODE HERE`` body replaced by one of ``bodies`` (lists
    of statements), indented as the stub's body is."""
    parts = iter(bodies)

    def body(found):
        indent = found.group(1)
        return "\n".join(indent + line for statement in next(parts)
                         for line in statement.split("\n"))
    return STUB_BODY.sub(body, stub)


def copied(bodies, rng):
    """A copy: every name renamed (one new name per old one), and in each body two
    neighbouring statements swapped."""
    renames = dict(zip(NAMES, rng.sample([f"{name}_{rng.randint(1, 9)}" for name in NAMES],
                                         len(NAMES))))
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, NAMES)) + r")\b")
    result = []
    for statements in bodies:
        statements = list(statements)
        at = rng.randrange(len(statements) - 1)  # two neighbours trade places
        statements[at], statements[at + 1] = statements[at + 1], statements[at]
        result.append([pattern.sub(lambda m: renames[m.group(1)], s) for s in statements])
    return result


def synthetic_class(lessons, students, pairs, rng):
    """``(answers, planted, copiers)``: the class's StudentAnswers, the planted pairs
    (original, copy) and the students who handed in the released solution."""
    names = [f"student{number:03d}" for number in range(students)]
    originals = rng.sample(names, 2 * pairs + 3)
    planted = [(originals[2 * k], originals[2 * k + 1]) for k in range(pairs)]
    copiers = originals[2 * pairs:]
    copy_of = {copy: original for original, copy in planted}
    answers = []
    for lesson in lessons:
        stubs, solution = answer_stubs(lesson), solution_answers(lesson)
        cells = similarity.answer_cell_ids(lesson)
        bodies = {}  # (student, grade_id) -> bodies, for the copies
        for student in sorted(names, key=lambda name: name in copy_of):  # originals first
            mine = {}
            for grade_id in cells:
                stub = stubs[grade_id]
                if student in copiers:
                    mine[grade_id] = solution[grade_id]
                    continue
                if student in copy_of:
                    own = copied(bodies[copy_of[student], grade_id], rng)
                else:
                    own = [own_statements(rng) for _ in STUB_BODY.finditer(stub)]
                bodies[student, grade_id] = own
                mine[grade_id] = filled(stub, own)
            answers.append(similarity.StudentAnswers(student, lesson, mine))
    return answers, planted, copiers


class Timed:
    """Wraps a function and adds up the CPU and wall time of its calls."""

    def __init__(self, function):
        self.function, self.cpu, self.wall = function, 0.0, 0.0

    def __call__(self, *args, **kwargs):
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.cpu += time.process_time() - cpu
            self.wall += time.perf_counter() - wall


def naive_estimate(answers, lessons, calls=1500):
    """Seconds ``compare_files`` on every pair and cell would take: ``calls`` of them
    timed on this class's fingerprints, scaled to the count the class needs."""
    import copydetect

    fingerprinter = similarity.Fingerprinter()
    by_lesson = {lesson: [a for a in answers if a.lesson == lesson] for lesson in lessons}
    needed = sum(len(group) * (len(group) - 1) // 2 * len(similarity.answer_cell_ids(lesson))
                 for lesson, group in by_lesson.items())
    lesson = lessons[0]
    grade_id = similarity.answer_cell_ids(lesson)[0]
    stub = answer_stubs(lesson)[grade_id]
    prints = [fingerprinter.fingerprint(a.cells[grade_id], stub) for a in by_lesson[lesson][:60]]
    pairs = list(itertools.islice(itertools.combinations(prints, 2), calls))
    started = time.process_time()
    for first, second in pairs:
        copydetect.compare_files(first, second)
    per_call = (time.process_time() - started) / len(pairs)
    return needed, per_call * needed


def ranks_first(matches, expected):
    """Whether the first ``len(expected)`` matches are exactly the ``expected`` pairs."""
    return {frozenset((m.first, m.second)) for m in matches[:len(expected)]} == expected


def best_other(matches, expected):
    """The highest score of a pair not ``expected`` among ``matches`` (most similar
    first): how close answers written apart come to the copies."""
    return next((m.score for m in matches if frozenset((m.first, m.second)) not in expected),
                0.0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=500)
    parser.add_argument("--lessons", default="02,03",
                        help="comma-separated lessons (default 02,03; 'all' for every one)")
    parser.add_argument("--pairs", type=int, default=10, help="planted pairs that copy")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    lessons = (list(all_lessons()) if args.lessons == "all"
               else [lesson_named(name.strip()).name for name in args.lessons.split(",")])
    print(f"load average at start: {load_average()} on {os.cpu_count()} cores")
    answers, planted, copiers = synthetic_class(lessons, args.students, args.pairs,
                                                random.Random(SEED))
    cells = sum(len(answer.cells) for answer in answers)
    print(f"class: {args.students} students, {len(lessons)} lesson(s) ({', '.join(lessons)}), "
          f"{cells} answer cells; {len(planted)} planted pairs, {len(copiers)} students "
          "hand in the released solution")
    # the copiers are listed against the released solution, apart, not as pairs
    # (grader/outputs/similarity.py): only the planted pairs lead the pairs
    expected = {frozenset(pair) for pair in planted}
    scoring = Timed(similarity.shared_counts)
    similarity.shared_counts = scoring  # compare() looks it up when it calls it
    cpu, wall = time.process_time(), time.perf_counter()
    result = similarity.compare(answers, top=len(expected) + 1)  # one more: the best other
    compare_cpu, compare_wall = time.process_time() - cpu, time.perf_counter() - wall
    cpu, wall = time.process_time(), time.perf_counter()
    text = page(result)
    page_cpu, page_wall = time.process_time() - cpu, time.perf_counter() - wall
    pairs_needed, naive_seconds = naive_estimate(answers, lessons)
    print(f"compare: {compare_cpu:.2f} s CPU, {compare_wall:.2f} s wall, for {result.pairs} "
          f"pairs of students in all (of which scoring every pair from the fingerprints: "
          f"{scoring.cpu:.2f} s CPU, {scoring.wall:.2f} s wall)")
    print(f"page: {page_cpu:.2f} s CPU, {page_wall:.2f} s wall, {len(text) / 1e6:.1f} MB")
    print(f"compare_files on every pair and cell instead: {pairs_needed} calls, about "
          f"{naive_seconds:.0f} s of CPU (timed on 1,500 calls)")
    verdicts = {lesson: ranks_first(result.by_lesson[lesson], expected) for lesson in lessons}
    verdicts["all lessons together"] = ranks_first(result.overall, expected)
    for where, first in verdicts.items():
        shown = result.overall if where == "all lessons together" else result.by_lesson[where]
        lowest = min((m.score for m in shown if frozenset((m.first, m.second)) in expected),
                     default=float("nan"))
        other = best_other(shown, expected)
        print(f"  {where}: the {len(expected)} planted pairs rank first: "
              f"{'yes' if first else 'NO'} (lowest of them {lowest:.2f}, the best other pair "
              f"{other:.2f})")
    flagged = {match.first for match in result.solution_matches}
    print(f"  flagged as the released solution: {sorted(flagged)} "
          f"({'exactly the copiers' if flagged == set(copiers) else 'NOT the copiers'})")
    ok = all(verdicts.values()) and flagged == set(copiers)
    print_summary([
        f"{args.students} students, {len(lessons)} lesson(s): compare {compare_cpu:.1f} s CPU, "
        f"{compare_wall:.1f} s wall (pair scoring {scoring.cpu:.2f} s CPU); page "
        f"{page_wall:.1f} s",
        f"every pair through compare_files instead: about {naive_seconds:.0f} s of CPU",
        "planted pairs first in every lesson and overall, solution copiers flagged: "
        + ("yes" if ok else "NO")], started)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
