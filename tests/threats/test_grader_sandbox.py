"""What a submission's process can see and do: the public helpers, a small scratch
space of its own, and nothing else."""

import errno
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy
import pytest

from grader.judge.sandbox import (exposed_paths, make_scratch, namespaces_available,
                                  remove_scratch)
from grader.judge.sandbox_forks import SWITCH
from grader.judge.student_process import StudentProcess
from grader.lessons import all_lessons
from grader.lessons import REPOSITORY
from submission_factory import write_submission

# this module's fixtures are computed once: its tests share one pytest-xdist worker
pytestmark = pytest.mark.xdist_group('sandbox-view')

DISK_MB = 32

LOOK_AROUND = '''
import importlib.util, os


def readable(path):
    try:
        with open(path, "rb") as handle:
            return len(handle.read()) > 0
    except OSError:
        return False


def writable(path):
    try:
        with open(path, "a"):
            return True
    except OSError:
        return False


def fill(path, megabytes):
    """How many MB could be written before the disk said no."""
    written = 0
    try:
        with open(path, "wb") as handle:
            for _ in range(megabytes):
                handle.write(b"x" * 2**20)
                handle.flush()
                written += 1
    except OSError:
        pass
    finally:
        os.remove(path)
    return written


import ctypes
_libc = ctypes.CDLL(None, use_errno=True)
SYS_clone, SYS_clone3, SYS_setns = 56, 435, 308  # x86_64
NAMESPACE_FLAGS = {"user": 0x10000000, "mount": 0x00020000, "pid": 0x20000000,
                   "net": 0x40000000, "ipc": 0x08000000, "uts": 0x04000000,
                   "cgroup": 0x02000000}


def errno_of(result):
    return None if result == 0 else ctypes.get_errno()


def cloned(flags):
    """errno of a raw clone with ``flags`` (None when a child was made, which ends)."""
    pid = _libc.syscall(SYS_clone, flags | 17, 0, 0, 0, 0)  # 17: SIGCHLD
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
        return None
    return ctypes.get_errno()


def written(path, text):
    try:
        with open(path, "w") as handle:
            handle.write(text)
        return True
    except OSError:
        return False


def seccomp_mode():
    return [line.split()[1] for line in open("/proc/self/status")
            if line.startswith("Seccomp:")]


refused = {
    **{f"unshare {name}": errno_of(_libc.unshare(flag))
       for name, flag in NAMESPACE_FLAGS.items()},
    **{f"clone {name}": cloned(flag) for name, flag in NAMESPACE_FLAGS.items()},
    "clone3": errno_of(_libc.syscall(SYS_clone3, 0, 0)),
    "setns": errno_of(_libc.setns(os.open("/proc/self/ns/user", os.O_RDONLY), 0)),
    "mount tmpfs": errno_of(_libc.mount(b"none", b"/tmp/work", b"tmpfs", 0, None)),
    "mount cgroup": errno_of(_libc.mount(b"cgroup", b"/tmp/work", b"cgroup2", 0, None)),
    "umount2": errno_of(_libc.umount2(b"/tmp", 2)),
    "pivot_root": errno_of(_libc.syscall(155, b"/tmp", b"/tmp/work")),
}
plain_fork = os.fork()
if plain_fork == 0:
    os._exit(7)

view = {
    "refused": refused,
    "plain_fork_status": os.waitstatus_to_exitcode(os.waitpid(plain_fork, 0)[1]),
    "max_user_namespaces": open("/proc/sys/user/max_user_namespaces").read().strip(),
    "max_user_namespaces_raised": written("/proc/sys/user/max_user_namespaces", "100"),
    "seccomp": seccomp_mode(),
    "cwd": os.getcwd(),
    "cwd_listing": sorted(os.listdir(".")),
    "salt_in_environment": "GRADER_SALT" in os.environ,
    "solutions": readable(SOLUTIONS),
    "grader": readable(GRADER),
    "own_reference": readable(OWN_REFERENCE),
    "other_student": readable(OTHER_STUDENT),
    "second_checkout": readable(SECOND_CHECKOUT),
    "repository_listing": (sorted(os.listdir(REPOSITORY)) if os.path.isdir(REPOSITORY)
                           else None),
    "python_writable": [os.access(path, os.W_OK) or writable(path) for path in PYTHON_FILES],
    "writable_outside_tmp": [path for path in ("/x", "/course/x", "/usr/x", "/etc/x",
                                               "/dev/x", "/proc/x")
                             if writable(path)],
    "network_interfaces": sorted(line.split(":")[0].strip()
                                 for line in open("/proc/net/dev").readlines()[2:]),
    "capabilities": [line.split()[1] for line in open("/proc/self/status")
                     if line.startswith("CapEff")],
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "tmp": sorted(os.listdir("/tmp")),
    "disk_mb_written": fill("/tmp/work/big", 4 * DISK_MB),
    "stdout_is_null": os.path.realpath("/proc/self/fd/1") == "/dev/null",
    "importable": {name: importlib.util.find_spec(name) is not None
                   for name in ("course", "checks", "qlearning", "replay_buffer",
                                "prioritized_replay", "hindsight_replay", "combined_replay",
                                "capstone", "neural_replay", "grader")},
}
'''

# files of the grader's own Python that a submission could try to change for everyone
PYTHON_FILES = [numpy.__file__, os.__file__, sys.executable]


@pytest.fixture(scope="module")
def second_checkout():
    """A copy of the solutions outside the repository and outside /tmp, as an
    instructor's second clone of the course would be: no list of secrets names it."""
    folder = Path(tempfile.mkdtemp(prefix="course-copy-", dir="/var/tmp"))
    shutil.copy2(REPOSITORY / "solutions" / "01_qlearning.ipynb", folder)
    yield folder / "01_qlearning.ipynb"
    shutil.rmtree(folder)


@pytest.fixture(scope="module", params=["forked from the template", "started afresh"])
def sandbox_view(request, tmp_path_factory, second_checkout):
    """Look around from a sandbox of lesson 01, with bob's work in the same class: a
    sandbox forked from the grader's template, and one started by the launcher."""
    assert namespaces_available(), "this machine should give sandboxes their namespaces"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SWITCH, "1" if request.param == "forked from the template" else "0")
        view, started_by = _look_around(tmp_path_factory, second_checkout)
    return {**view, "asked": request.param, "started_by": started_by}


def _look_around(tmp_path_factory, second_checkout):
    tmp_path = tmp_path_factory.mktemp("class")
    previous_salt = os.environ.get("GRADER_SALT")
    os.environ["GRADER_SALT"] = "must-not-leak"
    bob = write_submission(tmp_path, "01_qlearning", student="bob")
    scratch = make_scratch(all_lessons()["01_qlearning"])
    process = StudentProcess(scratch, memory_mb=3072, disk_mb=DISK_MB)
    names = {"SOLUTIONS": REPOSITORY / "solutions" / "01_qlearning.ipynb",
             "GRADER": REPOSITORY / "grader" / "judge" / "grade_notebook.py",
             "OWN_REFERENCE": REPOSITORY / "qlearning.py", "OTHER_STUDENT": bob,
             "SECOND_CHECKOUT": second_checkout, "REPOSITORY": REPOSITORY,
             "PYTHON_FILES": PYTHON_FILES, "DISK_MB": DISK_MB}
    try:
        process.start()
        started_by = type(process._popen).__name__
        with process.budget(60):
            defined = process.run_cell("".join(f"{name} = {str(value)!r}\n" if not
                                               isinstance(value, (int, list)) else
                                               f"{name} = {value!r}\n"
                                               for name, value in names.items()))
            outcome = process.run_cell(LOOK_AROUND)
            view = process.lookup(["view"]).get("view")
    finally:
        process.stop()
        remove_scratch(scratch)
        if previous_salt is None:
            os.environ.pop("GRADER_SALT", None)
        else:
            os.environ["GRADER_SALT"] = previous_salt
    assert defined["status"] == outcome["status"] == "ok", (defined, outcome)
    return view, started_by


def test_each_way_of_starting_a_sandbox_is_looked_at(sandbox_view):
    expected = {"forked from the template": "ForkedSandbox", "started afresh": "Popen"}
    assert sandbox_view["started_by"] == expected[sandbox_view["asked"]]


def test_no_namespace_no_mount_and_no_user_namespace_from_inside(sandbox_view):
    # the seccomp filter (mode 2) refuses each with EPERM; clone3 says "not implemented",
    # so the C library falls back to clone, whose flags the filter reads
    assert sandbox_view["seccomp"] == ["2"]
    expected = {name: errno.EPERM for name in sandbox_view["refused"]}
    expected["clone3"] = errno.ENOSYS
    assert sandbox_view["refused"] == expected
    assert sandbox_view["plain_fork_status"] == 7  # an ordinary fork still works
    assert sandbox_view["max_user_namespaces"] == "0"
    assert not sandbox_view["max_user_namespaces_raised"]


def test_the_working_folder_is_empty_and_stdout_goes_nowhere(sandbox_view):
    # the submission never lands in the sandbox: its cells arrive over the channel
    assert sandbox_view["cwd"] == "/tmp/work" and sandbox_view["cwd_listing"] == []
    assert sandbox_view["stdout_is_null"]


def test_no_salt_solutions_grader_or_other_students_are_readable(sandbox_view):
    assert not sandbox_view["salt_in_environment"]
    assert not sandbox_view["solutions"]
    assert not sandbox_view["grader"]
    assert not sandbox_view["own_reference"]
    assert not sandbox_view["other_student"]


def test_nothing_outside_the_whitelist_exists_not_even_a_second_copy_of_the_course(
        sandbox_view, second_checkout):
    assert second_checkout.exists()  # out here it does
    assert not sandbox_view["second_checkout"]
    # of the repository, at most the virtual environment that runs the sandbox is there
    venv = {Path(prefix).name for prefix in (sys.prefix, sys.base_prefix)
            if Path(prefix).resolve().parent == REPOSITORY}
    assert sandbox_view["repository_listing"] in (None, sorted(venv))


def test_only_tmp_is_writable_and_it_is_small(sandbox_view):
    assert not any(sandbox_view["python_writable"])
    assert sandbox_view["writable_outside_tmp"] == []
    # the cap of the sandbox's own tmpfs, not the machine's disk
    assert DISK_MB - 2 <= sandbox_view["disk_mb_written"] <= DISK_MB


def test_there_is_no_network_and_no_capability(sandbox_view):
    assert sandbox_view["network_interfaces"] == ["lo"]  # a namespace of its own, link down
    assert sandbox_view["capabilities"] == ["0000000000000000"]


def test_proc_shows_the_trusted_init_and_the_server_and_tmp_only_its_own(sandbox_view):
    # PID 1 is the grader's init; the student's server is its only child
    assert len(sandbox_view["processes"]) == 2 and sandbox_view["processes"][0] == 1
    exposed_under_tmp = {Path(path).resolve().relative_to("/tmp").parts[0]
                         for path in exposed_paths()
                         if Path(path).resolve().is_relative_to("/tmp")}
    assert set(sandbox_view["tmp"]) == {"work", "home"} | exposed_under_tmp


def test_only_public_helpers_and_earlier_lessons_are_importable(sandbox_view):
    assert sandbox_view["importable"] == {"course": True, "checks": False, "qlearning": False,
                                          "replay_buffer": False,
                                          "prioritized_replay": False,
                                          "hindsight_replay": False,
                                          "combined_replay": False, "capstone": False,
                                          "neural_replay": False, "grader": False}


@pytest.mark.parametrize("lesson", sorted(all_lessons()))
def test_a_sandbox_holds_the_course_helpers_and_earlier_lessons_only(lesson):
    """Exactly what a lesson's own cells and the lent objects' recipes import: the course
    package, the reference modules of earlier lessons, and the sandbox's runtime. Not the
    checks, whose verdicts hold references; not this lesson's module or a later one's."""
    scratch = make_scratch(all_lessons()[lesson])
    try:
        exposed = sorted(path.name for path in scratch.lib.iterdir()
                         if path.name != "__pycache__")
        compiled = sorted(path.name.split(".")[0]
                          for path in (scratch.lib / "__pycache__").glob("*"))
        ring = (scratch.lib / "course" / "ring_buffer.py").exists()
        ring_compiled = any((scratch.lib / "course" / "__pycache__").glob("ring_buffer.*"))
    finally:
        remove_scratch(scratch)
    earlier = sorted(other.exports_to for other in all_lessons().values()
                     if other.number < all_lessons()[lesson].number and other.exports_to)
    assert exposed == sorted(["_grader_runtime", "course", *earlier])
    # the bytecode the grader compiled is of those modules, and of nothing else
    assert compiled == sorted(name.removesuffix(".py") for name in earlier)
    assert ring_compiled == ring
    # the course's ring buffer could stand in for lesson 02's answer: out of reach there
    assert ring == (lesson >= "03")
