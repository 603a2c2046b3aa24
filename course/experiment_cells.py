"""``%%experiment``: an experiment cell that waits for the code it needs, without stopping
"Run All".

A lesson's experiments call the functions students write. Before those are written, a
plain cell would raise ``NotImplementedError`` and Jupyter's "Run All" would stop there,
hiding every test below it. A cell that starts with ``%%experiment`` runs as usual, but
when the code it needs is not written yet it says so in one line and lets the notebook
go on; any other error shows its traceback, and the notebook still goes on. A summary
cell that needs the results of a skipped experiment is skipped the same way.

:func:`enable_experiment_cells` registers the magic; the lessons' visible-tests cell
calls it. Outside a Jupyter kernel it does nothing.
"""

import ast
import sys

_skipped = []  # experiments skipped in this kernel, so summaries that need them are too


def enable_experiment_cells():
    shell = _shell()
    if shell is not None:
        shell.register_magic_function(_experiment, magic_kind="cell", magic_name="experiment")


def _shell():
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython else None


def _experiment(line, cell):
    shell = _shell()
    source = shell.transform_cell(cell)  # the cell may use IPython syntax itself
    filename = shell.compile.cache(source)  # tracebacks then show the cell's own lines
    tree = ast.parse(source, filename)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    try:
        exec(compile(tree, filename, "exec"), shell.user_ns)  # noqa: S102 - the lesson's cell
        value = (eval(compile(ast.Expression(last.value), filename, "eval"), shell.user_ns)
                 if last is not None else None)
    except NotImplementedError as error:
        _skipped.append(error)
        what = str(error) or "an answer cell above still raises NotImplementedError"
        print(f"Skipped: this experiment needs code that is not written yet ({what}). "
              "Write it, then run this cell again.", file=sys.stderr)
        return None
    except NameError as error:
        if _skipped:
            print(f"Skipped: this cell uses the results of an experiment above that was "
                  f"skipped ({error}).", file=sys.stderr)
        else:
            shell.showtraceback()
        return None
    except Exception:  # the traceback is shown, and "Run All" goes on
        shell.showtraceback()
        return None
    return value  # displayed as a cell's last expression is
