"""How long each source notebook takes to run, and which cells take that time.

    python benchmarks/notebook_runtime.py [solutions/01_qlearning.ipynb ...]

Executes every ``solutions/*.ipynb`` (or the notebooks named) one after another in a
fresh Jupyter kernel started in the notebook's folder, as the notebook tests do, and
prints per notebook the wall-clock seconds (kernel start included) and its three
slowest cells, timed from the execution timestamps nbclient records in cell metadata.
"""

import sys
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
SLOWEST = 3


def cell_seconds(cell):
    """Seconds from the kernel receiving the cell to its reply, or None if not run."""
    timing = cell.metadata.get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return None
    return (datetime.fromisoformat(end.replace("Z", "+00:00"))
            - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()


def cell_name(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id")


def run(path):
    """(wall-clock seconds, [(cell name, seconds)], number of cells with errors)."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, kernel_name="python3", timeout=600, allow_errors=True,
                            record_timing=True, resources={"metadata": {"path": str(path.parent)}})
    started = time.perf_counter()
    client.execute()
    wall = time.perf_counter() - started
    cells = [(cell_name(cell), cell_seconds(cell)) for cell in notebook.cells
             if cell.cell_type == "code"]
    errors = sum(any(o.output_type == "error" for o in cell.get("outputs", []))
                 for cell in notebook.cells if cell.cell_type == "code")
    return wall, [(name, s) for name, s in cells if s is not None], errors


def main(argv):
    paths = [Path(a).resolve() for a in argv] or sorted((REPO / "solutions").glob("*.ipynb"))
    rows, total = [], 0.0
    for path in paths:
        print(f"running {path.relative_to(REPO)} ...", file=sys.stderr, flush=True)
        wall, cells, errors = run(path)
        total += wall
        slowest = sorted(cells, key=lambda item: item[1], reverse=True)[:SLOWEST]
        in_cells = sum(seconds for _, seconds in cells)
        rows.append((path.name, wall, in_cells, slowest, errors))

    width = max(len(name) for name, *_ in rows)
    print(f"{'notebook':<{width}}  {'seconds':>8}  {'in cells':>8}  "
          f"slowest {SLOWEST} cells (seconds)")
    for name, wall, in_cells, slowest, errors in rows:
        cells = ", ".join(f"{cell} {seconds:.1f}" for cell, seconds in slowest)
        flag = f"  [{errors} cell(s) raised]" if errors else ""
        print(f"{name:<{width}}  {wall:8.1f}  {in_cells:8.1f}  {cells}{flag}")
    print(f"{'total':<{width}}  {total:8.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
