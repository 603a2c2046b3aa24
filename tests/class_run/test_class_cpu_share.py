"""The class runs in a cgroup of its own with the CPU weight of ``--cpu-weight`` ordinary
processes, and leaves nothing behind: not when it ends, not when it is killed."""

import os
import subprocess
import sys

import pytest

from grader.class_run.class_cpu_share import (CLASS_PREFIX, class_cpu_group, class_groups,
                                              own_cpu_folder, remove_stale_class_groups)
from grader.judge.sandbox_resources import _read, best_mechanism
from grader.lessons import REPOSITORY

pytestmark = pytest.mark.xdist_group("sandbox-resources")

IN_GROUP = "print(open('/proc/self/cgroup').read())"


def cpu_group_of(text):
    return next(line.split(":", 2)[2] for line in text.splitlines()
                if "cpu" in line.split(":")[1].split(","))


@pytest.fixture
def cpu_tree():
    folder = own_cpu_folder()
    if os.geteuid() == 0 and sys.platform.startswith("linux"):
        assert folder is not None, "as root on Linux with cgroup v1, the cpu tree is here"
    if folder is None:
        pytest.fail("no cgroup v1 cpu controller on this machine")
    return folder


def dead_pid():
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_the_class_and_what_it_starts_are_in_a_group_of_its_weight_until_it_ends(cpu_tree):
    before = own_cpu_folder()
    with class_cpu_group(3) as share:
        assert share == "cgroup v1 cpu controller: the class weighs 3 ordinary processes"
        folder = own_cpu_folder()
        assert folder == os.path.join(before, f"{CLASS_PREFIX}-{os.getpid()}")
        assert _read(folder, "cpu.shares").strip() == "3072"
        child = subprocess.run([sys.executable, "-c", IN_GROUP], capture_output=True,
                               text=True, check=True).stdout
        assert cpu_group_of(child).endswith(f"/{CLASS_PREFIX}-{os.getpid()}")
        # sandboxes made now are made inside the class's group
        assert best_mechanism()[1]["cpu"] == folder
    assert own_cpu_folder() == before
    assert not os.path.exists(folder)
    assert best_mechanism()[1]["cpu"] == before


def test_where_no_group_can_be_made_the_class_runs_as_it_is(tmp_path):
    before = own_cpu_folder()
    with class_cpu_group(16, parent=str(tmp_path / "no-such-tree")) as share:
        assert share is None
        assert own_cpu_folder() == before
    assert list(tmp_path.iterdir()) == []


def test_groups_of_killed_graders_are_removed_with_the_sandbox_groups_inside(cpu_tree):
    stale = os.path.join(cpu_tree, f"{CLASS_PREFIX}-{dead_pid()}")
    inside = os.path.join(stale, "course-grader-sandbox-1-1")
    os.makedirs(inside)
    living = os.path.join(cpu_tree, f"{CLASS_PREFIX}-{os.getpid()}")
    os.mkdir(living)
    try:
        assert {stale, living} <= {folder for folder, _ in class_groups()}
        remove_stale_class_groups()
        assert not os.path.exists(stale)
        assert os.path.isdir(living)  # its grader still runs
    finally:
        for folder in (inside, stale, living):
            if os.path.isdir(folder):
                os.rmdir(folder)


def test_a_grader_killed_inside_its_group_leaves_it_to_the_next_class(cpu_tree):
    script = ("import os, sys, time\n"
              "from grader.class_run.class_cpu_share import class_cpu_group\n"
              "with class_cpu_group(2):\n"
              "    print(os.getpid(), flush=True)\n"
              "    time.sleep(60)\n")
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                               text=True, cwd=REPOSITORY)
    pid = int(process.stdout.readline())
    folder = os.path.join(cpu_tree, f"{CLASS_PREFIX}-{pid}")
    assert os.path.isdir(folder)
    process.kill()
    process.wait()
    assert os.path.isdir(folder)  # SIGKILL: nothing could remove it
    remove_stale_class_groups()
    assert not os.path.exists(folder)


def test_the_cpu_tree_is_found_from_the_processs_own_group(tmp_path):
    point = tmp_path / "cpu,cpuacct"
    (point / "grading" / "job").mkdir(parents=True)
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(f"32 31 0:29 / {point} rw,relatime - cgroup cgroup rw,cpu,cpuacct\n")
    proc_cgroup = tmp_path / "cgroup"
    proc_cgroup.write_text("4:memory:/x\n2:cpu,cpuacct:/grading/job\n0::/\n")
    assert own_cpu_folder(str(mountinfo), str(proc_cgroup)) == str(point / "grading" / "job")
    proc_cgroup.write_text("0::/user.slice\n")  # cgroup v2 only: no v1 cpu tree
    assert own_cpu_folder(str(mountinfo), str(proc_cgroup)) is None
