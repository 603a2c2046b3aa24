"""What a notebook's cells show after Run All, and what a student would find hard to read
in it: errors, stderr, Out[] values, figures, and the one-line messages of experiments that
did not run. Shared by the tests that run notebooks in a kernel (the lessons' notebooks,
the published edition, the self-check)."""

import re

from tests.support.figures import PROBLEM_PREFIX

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
EXPERIMENT_TAG = "experiment"
NOT_RUN = ("Skipped:", "Stopped:")  # how an experiment that did not finish begins to say so


def nbgrader_meta(cell):
    return cell.metadata.get("nbgrader", {})


def name_of(cell):
    return nbgrader_meta(cell).get("grade_id") or cell.get("id")


def code_cells(notebook):
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def errors_in(cell):
    return [output for output in cell.get("outputs", []) if output.output_type == "error"]


def stderr_in(cell):
    return "".join(output.text for output in cell.get("outputs", [])
                   if output.output_type == "stream" and output.name == "stderr")


def cell_stdout(cell):
    return "".join(output.text for output in cell.get("outputs", [])
                   if output.output_type == "stream" and output.name == "stdout")


def shown_values(cell):
    """A cell's Out[] values: its last expression's value, as Jupyter shows it."""
    return [output for output in cell.get("outputs", [])
            if output.output_type == "execute_result"]


def images_in(cell):
    return [output for output in cell.get("outputs", [])
            if output.output_type in ("display_data", "execute_result")
            and "image/png" in output.get("data", {})]


def figure_problems_in(cell):
    return [line[len(PROBLEM_PREFIX):] for line in cell_stdout(cell).splitlines()
            if line.startswith(PROBLEM_PREFIX)]


def describe_error(cell, error):
    traceback = ANSI_ESCAPE.sub("", "\n".join(error.traceback))
    return f"cell {name_of(cell)!r}: {error.ename}: {error.evalue}\n{traceback}"


def is_test(cell):
    return nbgrader_meta(cell).get("grade", False)


def is_experiment(cell):
    return EXPERIMENT_TAG in cell.metadata.get("tags", [])


def readability_problems(notebook):
    """What a student who ran every cell of ``notebook`` would find hard to read: a cell
    that raised (it would stop "Run All"), a traceback where a sentence belongs, an
    experiment that did not finish and said so in more than one line or left a figure
    under it, a test cell that shows a value, a figure that hides its data."""
    problems = []
    for cell in code_cells(notebook):
        problems += [f"Run All would stop here: {describe_error(cell, error)}"
                     for error in errors_in(cell)]
        failure = stderr_in(cell)
        if "Traceback" in failure:
            problems.append(f"cell {name_of(cell)!r}: a traceback, not a sentence:\n{failure}")
        if failure.startswith(NOT_RUN):
            if len(failure.strip().splitlines()) != 1:
                problems.append(f"cell {name_of(cell)!r} did not run and took more than "
                                f"one line to say so:\n{failure}")
            if images_in(cell):
                problems.append(f"cell {name_of(cell)!r} did not run, yet shows a figure")
        if is_test(cell) and shown_values(cell):
            problems.append(f"test cell {name_of(cell)!r} shows a value as Out[]: "
                            f"{shown_values(cell)[0].data.get('text/plain')!r}")
        problems += [f"cell {name_of(cell)!r}: {problem}" for problem in figure_problems_in(cell)]
    return problems


def run_all_problems(notebook):
    """What is wrong in an untouched notebook after Run All: what is hard to read
    (:func:`readability_problems`), a test that passed on work not done or did not say
    the work is not written, an experiment that stopped rather than saying it waits for
    that work."""
    problems = readability_problems(notebook)
    for cell in code_cells(notebook):
        shown, failure = cell_stdout(cell), stderr_in(cell)
        if failure.startswith("Stopped:"):
            problems.append(f"experiment {name_of(cell)!r} stopped on unwritten code: "
                            f"{failure!r}")
        if not is_test(cell):
            continue
        if "\u2713" in shown:
            problems.append(f"test cell {name_of(cell)!r} passed on an empty notebook: "
                            "students would see a pass for work not done")
        if "\u2717" not in failure or "not written yet" not in failure:
            problems.append(f"test cell {name_of(cell)!r} must show a \u2717 line saying "
                            f"'not written yet'; it showed {shown + failure!r}")
    return problems
