"""What a grading kernel can see: its submission, the public helpers, and nothing else."""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy
import pytest

from grader.kernel_session import PROBE_MIME, KernelSession
from grader.lessons import all_lessons
from grader.release import REPOSITORY
from grader.sandbox import (exposed_paths, kernel_argv, kernel_env, make_scratch,
                            namespaces_available)
from submission_factory import write_submission

# this module's fixtures are computed once: its tests share one pytest-xdist worker
pytestmark = pytest.mark.xdist_group('kernel-view')


LOOK_AROUND = f'''
import importlib.util, json, os
from IPython.display import publish_display_data


def readable(path):
    try:
        with open(path, "rb") as handle:
            return len(handle.read()) > 0
    except OSError:
        return False

publish_display_data({{{PROBE_MIME!r}: json.dumps({{
    "cwd_listing": sorted(os.listdir(".")),
    "salt_in_environment": "GRADER_SALT" in os.environ,
    "solutions": readable({str(REPOSITORY / "solutions" / "01_qlearning.ipynb")!r}),
    "grader": readable({str(REPOSITORY / "grader" / "grade_notebook.py")!r}),
    "own_reference": readable({str(REPOSITORY / "qlearning.py")!r}),
    "other_student": readable(OTHER_STUDENT),
    "second_checkout": readable(SECOND_CHECKOUT),
    "repository_listing": (sorted(os.listdir({str(REPOSITORY)!r}))
                           if os.path.isdir({str(REPOSITORY)!r}) else None),
    "python_writable": [os.access(path, os.W_OK) for path in PYTHON_FILES],
    "network_interfaces": sorted(line.split(":")[0].strip()
                                 for line in open("/proc/net/dev").readlines()[2:]),
    "capabilities": [line.split()[1] for line in open("/proc/self/status")
                     if line.startswith("CapEff")],
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "tmp": sorted(os.listdir("/tmp")),
    "importable": {{name: importlib.util.find_spec(name) is not None
                   for name in ("course", "checks", "qlearning", "replay_buffer",
                                "prioritized_replay", "hindsight_replay", "combined_replay",
                                "capstone", "grader")}},
}})}})
'''


# files of the grader's own Python that a kernel could try to change for everyone
PYTHON_FILES = [numpy.__file__, os.__file__, sys.executable]


@pytest.fixture(scope="module")
def second_checkout():
    """A copy of the solutions outside the repository and outside /tmp, as an
    instructor's second clone of the course would be: no list of secrets names it."""
    folder = Path(tempfile.mkdtemp(prefix="course-copy-", dir="/var/tmp"))
    shutil.copy2(REPOSITORY / "solutions" / "01_qlearning.ipynb", folder)
    yield folder / "01_qlearning.ipynb"
    shutil.rmtree(folder)


@pytest.fixture(scope="module")
def kernel_view(tmp_path_factory, second_checkout):
    """Start a grading kernel for alice's lesson 01, with bob's work in the same class."""
    assert namespaces_available(), "this machine should give kernels a mount namespace"
    tmp_path = tmp_path_factory.mktemp("class")
    previous_salt = os.environ.get("GRADER_SALT")
    os.environ["GRADER_SALT"] = "must-not-leak"
    alice = write_submission(tmp_path, "01_qlearning", student="alice")
    bob = write_submission(tmp_path, "01_qlearning", student="bob")
    lesson = all_lessons()["01_qlearning"]
    scratch = make_scratch(lesson, alice, submissions_root=tmp_path)
    session = KernelSession(kernel_argv(scratch, 3072), scratch.workdir, kernel_env(scratch),
                            connection_dir=scratch.root)
    try:
        session.start()
        outcome = session.execute(f"OTHER_STUDENT = {str(bob)!r}\n"
                                  f"SECOND_CHECKOUT = {str(second_checkout)!r}\n"
                                  f"PYTHON_FILES = {PYTHON_FILES!r}\n" + LOOK_AROUND, 60)
    finally:
        session.shutdown()
        shutil.rmtree(scratch.root, ignore_errors=True)
        if previous_salt is None:
            os.environ.pop("GRADER_SALT", None)
        else:
            os.environ["GRADER_SALT"] = previous_salt
    assert outcome.status == "ok", outcome
    return outcome.payloads[0]


def test_the_working_directory_holds_only_the_submission(kernel_view):
    assert kernel_view["cwd_listing"] == ["01_qlearning.ipynb"]


def test_no_salt_solutions_grader_or_other_students_are_readable(kernel_view):
    assert not kernel_view["salt_in_environment"]
    assert not kernel_view["solutions"]
    assert not kernel_view["grader"]
    assert not kernel_view["own_reference"]
    assert not kernel_view["other_student"]


def test_nothing_outside_the_whitelist_exists_not_even_a_second_copy_of_the_course(
        kernel_view, second_checkout):
    assert second_checkout.exists()  # out here it does
    assert not kernel_view["second_checkout"]
    # of the repository, at most the virtual environment that runs the kernel is there
    venv = {Path(prefix).name for prefix in (sys.prefix, sys.base_prefix)
            if Path(prefix).resolve().parent == REPOSITORY}
    assert kernel_view["repository_listing"] in (None, sorted(venv))


def test_the_python_installation_is_read_only_there_is_no_network_and_no_capability(
        kernel_view):
    assert not any(kernel_view["python_writable"])
    assert kernel_view["network_interfaces"] == ["lo"]  # a namespace of its own, link down
    assert kernel_view["capabilities"] == ["0000000000000000"]


def test_proc_shows_only_the_kernel_and_tmp_only_its_scratch(kernel_view):
    # other processes' /proc/<pid>/cwd and /root would lead back to the repository
    assert kernel_view["processes"] == [1]
    # /tmp holds the scratch folder, and the way to the Python installation when that
    # lives under /tmp too (a checkout in /tmp with its .venv)
    exposed_under_tmp = {Path(path).resolve().relative_to("/tmp").parts[0]
                         for path in exposed_paths()
                         if Path(path).resolve().is_relative_to("/tmp")}
    scratch = [name for name in kernel_view["tmp"] if name.startswith("grade-")]
    assert len(scratch) == 1
    assert set(kernel_view["tmp"]) - set(scratch) == exposed_under_tmp


def test_only_public_helpers_and_earlier_lessons_are_importable(kernel_view):
    assert kernel_view["importable"] == {"course": True, "checks": True, "qlearning": False,
                                         "replay_buffer": False,
                                         "prioritized_replay": False,
                                         "hindsight_replay": False,
                                         "combined_replay": False, "capstone": False,
                                         "grader": False}


def test_the_sandbox_leaves_the_graders_own_view_alone(kernel_view):
    # mounts happen in the kernel's namespace only; the repository is intact out here
    assert json.loads((REPOSITORY / "solutions" / "01_qlearning.ipynb").read_text())["cells"]
