"""``%%experiment``: an experiment cell that waits for the code it needs, without stopping
"Run All", and says in one line why it did not run.

A lesson's experiments call the functions students write. Before those are written, a
plain cell would raise ``NotImplementedError`` and Jupyter's "Run All" would stop there,
hiding every test below it; a wrong answer would stop it with a traceback from deep
inside numpy. A cell that starts with ``%%experiment`` runs as usual, but:

- when the code it needs is not written yet, it says so in one line ("Skipped: ...");
- when that code raises, it names the function of the notebook that raised (the
  innermost frame of notebook code outside the experiment itself), where, and the error,
  in one line ("Stopped: ..."); ``%tb`` shows the whole traceback;
- such an experiment changes no name: the names it bound are put back as they were
  before it ran, or removed, so a later cell never reports the results of a half-run
  experiment (an agent made but never trained); a later cell that needs a name it
  never made (its results) is skipped in one line too, naming the name and the cell;
- a figure the cell had begun is closed, so no empty plot appears under the message.

The notebook goes on in every case. :func:`enable_experiment_cells` registers the magic;
the lessons' visible-tests cell calls it. Outside a Jupyter kernel it does nothing.
"""

import ast
import re
import sys
import traceback
from pathlib import Path

LONGEST_MESSAGE = 300  # characters of an error's message shown in the one-line reason

# name -> the cell ("In[12]") of the experiment that should have defined it and did not,
# so a cell that then fails on that name is skipped with a reason, not a NameError
_not_defined = {}


def enable_experiment_cells():
    shell = _shell()
    if shell is not None:
        shell.register_magic_function(_experiment, magic_kind="cell", magic_name="experiment")


def _shell():
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython else None


def _experiment(line, cell):
    shell = _shell()
    this_cell = _running_cell()
    number = re.fullmatch(r"In\[(\d+)\]", this_cell)
    # the leading newline stands for the %%experiment line, so that line numbers in
    # messages and tracebacks are the ones the notebook shows
    source = "\n" + shell.transform_cell(cell)  # the cell may use IPython syntax itself
    filename = shell.compile.cache(  # tracebacks show the cell's lines, labelled as it is
        source, int(number[1]) if number else shell.execution_count)
    tree = ast.parse(source, filename)
    bound = names_bound_by(tree)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    figures_before = _open_figures()
    # an experiment that does not finish changes no name: what it bound is put back as it
    # was (or removed), so no later cell reports results of a half-run experiment, such as
    # an agent made and never trained
    earlier = {name: shell.user_ns[name] for name in bound if name in shell.user_ns}
    try:
        exec(compile(tree, filename, "exec"), shell.user_ns)  # noqa: S102 - the lesson's cell
        value = (eval(compile(ast.Expression(last.value), filename, "eval"), shell.user_ns)
                 if last is not None else None)
    except Exception as error:  # said in one line, and "Run All" goes on
        _close_figures(_open_figures() - figures_before)  # an empty or half-drawn plot
        for name in bound:
            if name in earlier:
                shell.user_ns[name] = earlier[name]
            else:
                shell.user_ns.pop(name, None)
                _not_defined[name] = this_cell
        _keep_for_tb(error)
        print(reason_not_run(error, shell.user_ns, filename), file=sys.stderr)
        return None
    for name in bound:
        _not_defined.pop(name, None)
    return value  # displayed as a cell's last expression is


def reason_not_run(error, namespace, experiment_file):
    """One line: why the experiment compiled to ``experiment_file`` did not finish."""
    if isinstance(error, NotImplementedError):
        what = str(error) or "an answer cell above still raises NotImplementedError"
        return (f"Skipped: this experiment needs code that is not written yet ({what}). "
                "Write it, then run this cell again.")
    missing = getattr(error, "name", None) if isinstance(error, NameError) else None
    if missing in _not_defined:
        return (f"Skipped: this cell needs {missing}, which the experiment in cell "
                f"{_not_defined[missing]} did not make (see that cell's message).")
    return (f"Stopped: {_where_raised(error, namespace, experiment_file)} raised "
            f"{type(error).__name__}{_inside_library(error, namespace)}: {_message(error)} "
            "Fix it, then run this cell again (%tb shows the whole traceback).")


def _where_raised(error, namespace, experiment_file):
    """The innermost frame of notebook code (run in ``namespace``) that raised, named as a
    student finds it: a function of another cell first (their answer), else this cell."""
    notebook_frames = [(frame, line) for frame, line in traceback.walk_tb(error.__traceback__)
                       if frame.f_globals is namespace]
    elsewhere = [(frame, line) for frame, line in notebook_frames
                 if frame.f_code.co_filename != experiment_file]
    if elsewhere:
        frame, line = elsewhere[-1]
        return f"{frame.f_code.co_qualname} (cell {_cell_of(frame)}, line {line})"
    if notebook_frames:
        frame, line = notebook_frames[-1]
        if frame.f_code.co_name == "<module>":
            return f"line {line} of this cell"
        return f"{frame.f_code.co_qualname} (this cell, line {line})"
    return "this cell"


def _cell_of(frame):
    """"In[7]" for code run from a notebook cell; the file's name for anything else."""
    filename = frame.f_code.co_filename
    return _cell_label(filename) or Path(filename).name


def _cell_label(filename):
    """"In[7]" if ``filename`` is the code of a cell the kernel ran, else None."""
    format_code_name = getattr(_shell().compile, "format_code_name", None)  # IPython 8+
    label = format_code_name(filename) if format_code_name else None
    return label[1] if label else None


def _running_cell():
    """"In[7]" for the cell running this magic: the label of the cell code that called
    it (IPython counts cells up before running them from version 9, after before)."""
    frame = sys._getframe(1)
    while frame is not None:
        label = _cell_label(frame.f_code.co_filename)
        if label:
            return label
        frame = frame.f_back
    return f"In[{_shell().execution_count}]"


def _inside_library(error, namespace):
    """' inside numpy' when the error came from a library the notebook's code called."""
    frames = list(traceback.walk_tb(error.__traceback__))
    if not frames or frames[-1][0].f_globals is namespace:
        return ""
    module = frames[-1][0].f_globals.get("__name__") or ""
    package = module.split(".")[0]
    return f" inside {package}" if package else ""


def _message(error):
    text = " ".join(str(error).split()) or "(no message)"
    if len(text) > LONGEST_MESSAGE:
        text = text[:LONGEST_MESSAGE - 1] + "\u2026"
    return text if text.endswith((".", "\u2026")) else text + "."


def _keep_for_tb(error):
    """Let ``%tb`` and ``%debug`` show the error, from the experiment's own code down."""
    sys.last_type, sys.last_value = type(error), error
    sys.last_traceback = error.__traceback__.tb_next or error.__traceback__
    if sys.version_info >= (3, 12):
        sys.last_exc = error


def names_bound_by(tree):
    """The names a cell's top-level code binds (assignments, loops, imports, definitions);
    not those local to the functions and classes it defines."""
    names = set()

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):
            return  # their variables are their own
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names
                         if alias.name != "*")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


def _open_figures():
    pyplot = sys.modules.get("matplotlib.pyplot")
    return set(pyplot.get_fignums()) if pyplot else set()


def _close_figures(numbers):
    pyplot = sys.modules.get("matplotlib.pyplot")
    for number in numbers:
        pyplot.close(number)
