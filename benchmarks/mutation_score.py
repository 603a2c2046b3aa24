"""How many small mutations of each lesson's reference answers the lesson's checks catch.

    nice -n 10 python benchmarks/mutation_score.py [--lesson 02 ...] [--salts 3]
        [--learning-salts 1] [--workers 1] [--json results.json] [--show-survivors]

Mutants come from cosmic-ray's operators (``cosmic_ray.mutating.mutate_code``: every
no-argument core operator at every place it applies: arithmetic and comparison
operators swapped, numbers nudged, ``and``/``or``, ``not`` added or removed, ``break``/
``continue``, ``True``/``False``, loops made to run zero times, decorators removed).
cosmic-ray's own runner rewrites files on disk and runs a shell command per mutant;
here each mutant of ``<module>.py`` is instead executed as a fresh module in a forked
process and graded in-process by the lesson's checks, the way ``benchmarks/grading.py``
grades the reference (global generators seeded per check and salt), which is some
hundred times faster. The repository's files are never touched.

Only the code a student writes is mutated: the functions, methods and classes of the
lesson's answer cells (the rest of a reference module is the course's own code, which
no check is meant to judge), less any function the released notebook's stub already
gives in full (lesson 03's ``SumTree.checked_slots``). A mutant is

- **killed** when some check fails on it with one of the salts (quick checks with
  ``--salts`` salts, then, for mutants that pass them all, learning checks with
  ``--learning-salts``), or it raises when its module is run, or it runs past the time
  limit (an endless loop);
- **equivalent** when ``benchmarks/equivalent_mutants.toml`` lists it: a reviewed entry,
  keyed by the function and the original and mutated line, with the reason why no
  correct check can tell it from the reference;
- **survived** otherwise: a gap in the checks, or an equivalent mutant not yet reviewed.

Score = killed / (generated - equivalent). The goal is >= 97% for every lesson.
"""

import argparse
import ast
import json
import multiprocessing
import os
import sys
import time
import tomllib
import types
from dataclasses import asdict, dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "examples"))


import checks  # noqa: E402
from checks.framework import VISIBLE_SALT, as_plain_data  # noqa: E402
from grader.lessons import all_lessons  # noqa: E402

EQUIVALENTS_FILE = REPOSITORY / "benchmarks" / "equivalent_mutants.toml"
HIDDEN_SALTS = ("mutation-salt-1", "mutation-salt-2", "mutation-salt-3", "mutation-salt-4")
GOAL = 0.97


# --- mutants ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mutant:
    lesson: str
    operator: str
    occurrence: int
    line_number: int
    function: str  # "ReplayBuffer.sample", "annealed_beta"
    original_line: str  # stripped
    mutated_line: str  # stripped; "" when the mutation removed the line
    code: str

    @property
    def key(self):
        return (self.lesson, self.function, self.original_line, self.mutated_line)

    def describe(self):
        return (f"{self.function} line {self.line_number}: {self.original_line!r} -> "
                f"{self.mutated_line!r} ({self.operator.removeprefix('core/')})")


def answer_scopes(lesson):
    """Names of what the lesson's answer cells define: ``{"Class"}`` for a class cell
    (all of it is the student's), ``{"Class.method"}`` for ``@add_to_class(Class)``
    cells, ``{"function"}`` for functions."""
    from make_submissions import solution_answers

    scopes = set()
    for source in solution_answers(lesson).values():
        try:
            tree = ast.parse(source)
        except SyntaxError:  # a written answer (markdown), not code
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                scopes.add(node.name)
            elif isinstance(node, ast.FunctionDef):
                owner = next((ast.unparse(d.args[0]) for d in node.decorator_list
                              if isinstance(d, ast.Call) and ast.unparse(d.func) ==
                              "add_to_class"), None)
                scopes.add(f"{owner}.{node.name}" if owner else node.name)
    return scopes


def given_in_the_stubs(lesson):
    """Qualified names of the functions and methods that the released notebook gives in
    full (the same code as the solution's): the student does not write them."""
    import nbformat

    notebook = nbformat.read(REPOSITORY / "notebooks" / f"{lesson}.ipynb", as_version=4)
    given = set()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # notebook magics
            continue
        given |= {ast.dump(node) for node in ast.walk(tree)
                  if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    module = all_lessons()[lesson].reference_module
    names = set()

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if ast.dump(child) in given:
                    names.add(name)
                visit(child, name + ".")

    visit(ast.parse((REPOSITORY / f"{module}.py").read_text()), "")
    return names


def definitions(source):
    """``[(first line, last line, qualified name)]`` of every function, method and class,
    decorators included."""
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                found.append((first, child.end_lineno, name))
                visit(child, name + ".")

    visit(ast.parse(source), "")
    return found


def innermost(found, line):
    enclosing = [(last - first, name) for first, last, name in found if first <= line <= last]
    return min(enclosing)[1] if enclosing else None


def in_scope(name, scopes):
    return name is not None and any(name == s or name.startswith(s + ".") for s in scopes)


def operators():
    import cosmic_ray.plugins

    for name in cosmic_ray.plugins.operator_names():
        operator_class = cosmic_ray.plugins.get_operator(name)
        if not operator_class.arguments():  # VariableReplacer/Inserter need settings
            yield name, operator_class()


def changed_line(original, mutated, line_number):
    """The mutated text of line ``line_number`` (1-based), stripped; mutations keep the
    number of lines except those that drop a decorator."""
    old_lines, new_lines = original.splitlines(), mutated.splitlines()
    if len(new_lines) == len(old_lines):
        return new_lines[line_number - 1].strip()
    return ""


def mutants_of(lesson):
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import mutate_code

    module = all_lessons()[lesson].reference_module
    source = (REPOSITORY / f"{module}.py").read_text()
    lines = source.splitlines()
    scopes, found = answer_scopes(lesson), definitions(source)
    given = given_in_the_stubs(lesson)
    mutants, seen = [], {}
    for operator_name, operator in operators():
        positions = [start for node in ast_nodes(get_ast(source))
                     for start, _ in operator.mutation_positions(node)]
        for occurrence, (line_number, _) in enumerate(positions):
            function = innermost(found, line_number)
            if not in_scope(function, scopes) or in_scope(function, given):
                continue
            code = mutate_code(source, operator, occurrence)
            if code is None or code == source:
                continue
            mutated_line = changed_line(source, code, line_number)
            original_line = lines[line_number - 1].strip()
            # two identical changes on one line (``a + b + c``) get numbered keys
            base = (function, original_line, mutated_line)
            seen[base] = seen.get(base, 0) + 1
            if seen[base] > 1:
                mutated_line += f"  # {seen[base]}"
            mutants.append(Mutant(lesson, operator_name, occurrence, line_number, function,
                                  original_line, mutated_line, code))
    return module, mutants


def load_equivalents():
    if not EQUIVALENTS_FILE.exists():
        return {}
    entries = tomllib.loads(EQUIVALENTS_FILE.read_text()).get("equivalent", [])
    table = {}
    for entry in entries:
        key = (entry["lesson"], entry["function"], entry["line"], entry["mutant"])
        if not entry.get("reason", "").strip():
            raise ValueError(f"{EQUIVALENTS_FILE.name}: no reason given for {key}")
        table[key] = entry["reason"]
    return table


# --- grading one mutant --------------------------------------------------------------------

def check_outcome(lesson_checks, lesson, name, namespace, salt):
    """None if check ``name`` passes with ``salt``, else a short reason."""
    try:
        outcome = lesson_checks.judged(name, namespace, salt)
    except Exception as error:  # a probe that cannot even run the mutant: caught
        return f"raised {type(error).__name__}: {str(error)[:120]}"
    return None if outcome.passed else outcome.feedback[:200]


def grade(lesson, module_name, code, salts, learning_salts):
    """``(check that caught it, salt, feedback)``, or None if every check passes."""
    lesson_checks = checks.checks_for_lesson(lesson)
    module = types.ModuleType(f"mutant_{module_name}")
    module.__file__ = str(REPOSITORY / f"{module_name}.py")
    try:
        exec(compile(code, module.__file__, "exec"), module.__dict__)  # noqa: S102
    except Exception as error:
        return ("(module)", "", f"raised {type(error).__name__} when run: {error}")
    namespace = vars(module)
    quick = [c.name for c in lesson_checks if not c.learning]
    learning = [c.name for c in lesson_checks if c.learning]
    for names, salts_used in ((quick, salts), (learning, learning_salts)):
        for salt in salts_used:
            for name in names:
                reason = check_outcome(lesson_checks, lesson, name, namespace, salt)
                if reason is not None:
                    return (name, salt, reason)
    return None


def _child(connection, *args):
    import warnings

    warnings.simplefilter("ignore")  # mutants compute NaNs; their warnings are noise
    try:
        connection.send(grade(*args))
    except BaseException as error:  # SystemExit, RecursionError...: the mutant's doing
        connection.send(("(crash)", "", f"{type(error).__name__}: {error}"))
    connection.close()


def grade_in_child(args, timeout):
    """``grade`` in a forked process: a mutant that loops forever or kills its process
    is caught, and nothing it changes (class attributes, module state) leaks out."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, *args))
    process.start()
    sender.close()
    if receiver.poll(timeout):
        try:
            result = receiver.recv()
        except EOFError:
            result = ("(crash)", "", "the process died")
    else:
        result = ("(timeout)", "", f"ran longer than {timeout:.0f} s")
    process.kill()
    process.join()
    return result


def prepare_baselines(lesson, salts):
    """Train the learning checks' baselines here, before forking, so each mutant's
    process inherits them instead of training them again (and from the real module)."""
    lesson_checks = checks.checks_for_lesson(lesson)
    for check in lesson_checks:
        if check.prepare is not None:
            for salt in salts:
                check.prepare(as_plain_data(lesson_checks.inputs(check.name, salt)))


# --- the run -------------------------------------------------------------------------------

def run_lesson(lesson, salts, learning_salts, workers, equivalents, log, previous=None,
               regrade=()):
    import importlib

    module_name, mutants = mutants_of(lesson)
    carried = {}
    if previous is not None:  # --recheck: keep earlier kills, grade only the rest again
        carried = {(r["lesson"], r["function"], r["original_line"], r["mutated_line"]):
                   r["caught_by"] for r in previous if r["status"] == "killed"
                   and r["caught_by"][0] not in regrade}
    importlib.import_module(module_name)  # the real module, for the references' baselines
    prepare_baselines(lesson, learning_salts)
    started = time.perf_counter()
    reference = grade(lesson, module_name, (REPOSITORY / f"{module_name}.py").read_text(),
                      salts, learning_salts)
    reference_seconds = time.perf_counter() - started
    if reference is not None:
        raise SystemExit(f"{lesson}: the reference itself fails {reference}")
    timeout = 3 * reference_seconds + 20
    log(f"{lesson}: {len(mutants)} mutants of {module_name}.py; the reference passes "
        f"every check in {reference_seconds:.1f} s (time limit {timeout:.0f} s)")

    results = []

    def record(mutant, outcome):
        status = ("killed" if outcome is not None else
                  "equivalent" if mutant.key in equivalents else "survived")
        results.append({**{k: v for k, v in asdict(mutant).items() if k != "code"},
                        "status": status, "caught_by": outcome})
        if status == "survived":
            log(f"  SURVIVED {mutant.describe()}")
        elif status == "equivalent":
            log(f"  equivalent {mutant.describe()}")
        else:
            log(f"  killed by {outcome[0]} {mutant.describe()}", verbose=True)

    for mutant in [m for m in mutants if m.key in carried]:
        record(mutant, [*carried[mutant.key][:2], "(killed in the earlier run) "
                        + carried[mutant.key][2]])
    mutants = [m for m in mutants if m.key not in carried]
    if carried:
        log(f"  {len(carried)} kills carried over from the earlier run; grading the other "
            f"{len(mutants)} again")
    args = [(lesson, module_name, m.code, salts, learning_salts) for m in mutants]
    if workers <= 1:
        for mutant, arg in zip(mutants, args):
            record(mutant, grade_in_child(arg, timeout))
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:  # threads that each wait on a fork
            for mutant, outcome in zip(mutants, pool.map(
                    lambda arg: grade_in_child(arg, timeout), args)):
                record(mutant, outcome)
    stale = [key for key in equivalents if key[0] == lesson
             and key not in {r_key for r_key in ((r["lesson"], r["function"],
                                                  r["original_line"], r["mutated_line"])
                                                 for r in results)}]
    for key in stale:
        log(f"  note: equivalent entry matches no mutant any more: {key}")
    return results


def summary(lesson, results):
    count = {status: sum(r["status"] == status for r in results)
             for status in ("killed", "survived", "equivalent")}
    generated = len(results)
    denominator = generated - count["equivalent"]
    score = count["killed"] / denominator if denominator else 1.0
    return {"lesson": lesson, "generated": generated, **count, "score": score}


def print_table(rows):
    print(f"\n{'lesson':<22} {'generated':>9} {'killed':>7} {'survived':>8} "
          f"{'equivalent':>10} {'score':>7}")
    for row in rows:
        mark = "" if row["score"] >= GOAL else "  below goal"
        print(f"{row['lesson']:<22} {row['generated']:>9} {row['killed']:>7} "
              f"{row['survived']:>8} {row['equivalent']:>10} {row['score']:>7.1%}{mark}")
    print(f"(score = killed / (generated - equivalent); goal >= {GOAL:.0%} per lesson)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lesson", action="append",
                        help="a lesson's number or name (repeatable); default: all")
    parser.add_argument("--salts", type=int, default=3,
                        help="salts for quick checks: the visible one and N-1 hidden ones")
    parser.add_argument("--learning-salts", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write every mutant's outcome here")
    parser.add_argument("--verbose", action="store_true", help="print killed mutants too")
    parser.add_argument("--recheck", type=Path, help="a --json file of an earlier run: carry "
                        "its kills over and grade only its other mutants (quicker, while "
                        "strengthening checks; a final table comes from a full run)")
    parser.add_argument("--regrade", action="append", default=[], metavar="CHECK",
                        help="with --recheck: grade again the mutants an earlier run saw "
                        "killed by CHECK (a check whose cases were narrowed since)")
    options = parser.parse_args(argv)

    lessons = [name for name in all_lessons()
               if not options.lesson or any(name.startswith(x.zfill(2)) or name == x
                                            for x in options.lesson)]
    salts = (VISIBLE_SALT, *HIDDEN_SALTS)[:options.salts]
    learning_salts = (VISIBLE_SALT, *HIDDEN_SALTS)[:options.learning_salts]
    equivalents = load_equivalents()

    def log(text, verbose=False):
        if options.verbose or not verbose:
            print(text, flush=True)

    rows, everything = [], []
    for lesson in lessons:
        previous = (json.loads(options.recheck.read_text())["mutants"] if options.recheck
                    else None)
        results = run_lesson(lesson, salts, learning_salts, options.workers, equivalents, log,
                             previous, tuple(options.regrade))
        everything += results
        rows.append(summary(lesson, results))
    print_table(rows)
    shown = [(k, v) for k, v in equivalents.items() if k[0] in lessons]
    if shown:
        print("\nEquivalent mutants (benchmarks/equivalent_mutants.toml):")
        for (lesson, function, line, mutant), reason in shown:
            print(f"  {lesson} {function}: {line!r} -> {mutant!r}: {reason}")
    if options.json:
        options.json.write_text(json.dumps({"table": rows, "mutants": everything}, indent=1))
    return 0 if all(row["score"] >= GOAL for row in rows) else 1


if __name__ == "__main__":
    os.environ.setdefault("GRADER_SALT", HIDDEN_SALTS[0])
    sys.exit(main())
