"""The largest frames that cross the wire while submissions are graded, per lesson and
way: the figures the grader's frame limits (``grader/judge/sandbox_runtime/wire.py``) are
set from.

    python benchmarks/wire_sizes.py [FOLDER ...] [--salt bench]

Every notebook under the folders (default: ``examples/submissions/ada_complete``, all
eight lessons, learning checks included) is graded in this process, one at a time, with
``wire.pack`` and ``wire.unpack`` wrapped to record each frame the grader sends to a
student's process and each it reads from one: its bytes, its items
(``wire.items_in``: the count the receiver checks before parsing) and the check it
belonged to. Grading itself is unchanged, so the scores are printed too.
"""

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from summary import load_average, print_summary  # noqa: E402

from grader.judge import grade_notebook as grading_module  # noqa: E402
from grader.judge.sandbox_runtime import wire  # noqa: E402

WAYS = ("from sandbox", "to sandbox")


class Recorder:
    """The largest frame (by bytes, and by items) of each (lesson, way)."""

    def __init__(self):
        self.lesson = self.check = None
        self.largest = defaultdict(lambda: {"bytes": (0, ""), "items": (0, "")})
        self.frames = defaultdict(int)
        self.total = defaultdict(int)

    def record(self, way, frame, op):
        text_size, count = wire.HEADER.unpack_from(frame)
        start = wire.HEADER.size + wire.BLOB_LENGTH.size * count
        items = wire.items_in(frame[start:start + text_size])
        where = f"{op} in {self.check}"
        largest = self.largest[self.lesson, way]
        largest["bytes"] = max(largest["bytes"], (len(frame), where))
        largest["items"] = max(largest["items"], (items, where))
        self.frames[self.lesson, way] += 1
        self.total[self.lesson, way] += len(frame)

    def install(self):
        pack, unpack, grade_check = wire.pack, wire.unpack, \
            grading_module.NotebookGrading.grade_check
        recorder = self

        def recorded_pack(message, limit):
            frame = pack(message, limit)
            recorder.record("to sandbox", frame, message.get("op"))
            return frame

        def recorded_unpack(frame, limit):
            message = unpack(frame, limit)
            recorder.record("from sandbox", frame, message.get("op"))
            return message

        def recorded_grade_check(grading, cell):
            recorder.check = grading_module.nbgrader_meta(cell)["grade_id"]
            try:
                return grade_check(grading, cell)
            finally:
                recorder.check = "start-up and cells"

        wire.pack, wire.unpack = recorded_pack, recorded_unpack
        grading_module.NotebookGrading.grade_check = recorded_grade_check


def megabytes(size):
    return f"{size / 2**20:.3f} MB ({size} bytes)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*",
                        default=[REPOSITORY / "examples" / "submissions" / "ada_complete"])
    parser.add_argument("--salt", default="bench")
    options = parser.parse_args()
    started = time.perf_counter()
    print(f"load average at start: {load_average()}")
    recorder = Recorder()
    recorder.install()
    notebooks = sorted(path for folder in options.folders
                       for path in Path(folder).rglob("*.ipynb"))
    for path in notebooks:
        recorder.lesson, recorder.check = path.stem, "start-up and cells"
        began = time.perf_counter()
        result = grading_module.grade_notebook(path, options.salt)
        print(f"{path.parent.name}/{path.stem}: {result.score:g} / {result.max_score:g} "
              f"in {time.perf_counter() - began:.1f} s", flush=True)

    print(f"\n{'lesson':24} {'way':12} {'frames':>7} {'MB in all':>9}  largest frame "
          "(bytes; items)")
    overall = {way: {"bytes": (0, ""), "items": (0, "")} for way in WAYS}
    for (lesson, way), largest in sorted(recorder.largest.items()):
        (size, size_where), (items, items_where) = largest["bytes"], largest["items"]
        print(f"{lesson:24} {way:12} {recorder.frames[lesson, way]:7d} "
              f"{recorder.total[lesson, way] / 2**20:9.1f}  {megabytes(size)} ({size_where}); "
              f"{items} items ({items_where})")
        for key, figure in largest.items():
            overall[way][key] = max(overall[way][key], (figure[0], f"{lesson}: {figure[1]}"))
    lines = [f"largest frame {way}: {megabytes(overall[way]['bytes'][0])} "
             f"({overall[way]['bytes'][1]}); most items: {overall[way]['items'][0]} "
             f"({overall[way]['items'][1]})" for way in WAYS]
    for way, limit in zip(WAYS, (wire.FROM_SANDBOX, wire.TO_SANDBOX)):
        lines.append(f"limit {way}: {megabytes(limit.bytes)}, {limit.items} items")
    print_summary(lines, started)


if __name__ == "__main__":
    main()
