"""A student's process for a test module: started (without isolation: the mechanisms under
test are the channel's, not the sandbox's) on a lesson's scratch folder, with some student
code run in it, and stopped with its folder removed at the end."""

import contextlib

from grader.judge.sandbox import make_scratch, remove_scratch
from grader.judge.student_process import StudentProcess
from grader.lessons import all_lessons


@contextlib.contextmanager
def student_process(lesson, source, budget=60.0):
    """A :class:`StudentProcess` for ``lesson`` that has run ``source`` (a cell)."""
    scratch = make_scratch(all_lessons()[lesson])
    process = StudentProcess(scratch, memory_mb=1024, disk_mb=16, isolate=False)
    process.start()
    try:
        with process.budget(budget):
            assert process.run_cell(source) == {"status": "ok"}
        yield process
    finally:
        process.stop()
        remove_scratch(scratch)


@contextlib.contextmanager
def requests_counted(process):
    """The ops of the requests ``process`` makes inside, in a list."""
    ops, request = [], process._request

    def counted(message):
        ops.append(message.get("op"))
        return request(message)

    process._request = counted
    try:
        yield ops
    finally:
        del process._request
