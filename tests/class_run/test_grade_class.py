"""Grading a class on Dask: a worker killed mid-notebook, a notebook that kills every
worker, a grader killed mid-class, then resumed runs. No row is lost, no notebook is
graded twice, the reports equal an undisturbed run's, and no sandbox outlives its task.

The pytest process makes itself a child subreaper while these tests run, so a process
orphaned by a killed worker or grader is re-parented to it instead of to init: every
process the tests started stays in its tree, where the checks below look for it.
"""

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from grader.class_run.dask_cluster import grading_cluster
from grader.class_run.grade_class import grade_class
from grader.class_run.result_store import ResultStore
from grader.class_run.submissions import find_jobs
from grader.judge.grade_notebook import grade_notebook
from grader.judge.sandbox import (OWNER_FILE, SCRATCH_NAME, UNLOCKED_GRACE,
                                  remove_stale_scratch, stale_scratch_folders)
from grader.judge.sandbox_resources import sandbox_groups
from grader.lessons import all_lessons
from grader.nbgrader_cells import autograded_cells, nbgrader_meta
from grader.outputs.report import class_report, graded_content, lesson_maxima
from submission_factory import QUICK_CHECKS, REPOSITORY, write_submission

# one module cluster and one undisturbed run, shared: these tests run on one xdist worker
pytestmark = pytest.mark.xdist_group("dask-class")

LESSON = "01_qlearning"
ONLY = QUICK_CHECKS[LESSON]
SALT = "class-on-dask"
EXAMPLES = ("ada_complete", "dee_ignores_terminated")  # from examples/submissions
VICTIM = "sleeper"  # its play_and_train sleeps first: a sandbox that is not listening
STUDENTS = (*EXAMPLES, VICTIM)
SLEEPS_FIRST = '''\
import time

naps = []

#| export
def play_and_train(env, agent, t_max=10_000):
    if not naps:  # once: meanwhile its process never reads that its channel closed
        naps.append(time.sleep(4))
    total_reward, (state, _) = 0.0, env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward'''
BUSY_CHECK = "test_play_and_train"
KILL_AFTER = 2.0  # seconds into the busy check: the victim sleeps, deaf to its channel
SANDBOX_PROGRAMS = ("unshare", "setpriv", "sandbox_launcher.py", "sandbox_init.py",
                    "student_server.py")
PR_SET_CHILD_SUBREAPER = 36
CHECK_ORDER = [nbgrader_meta(cell)["grade_id"]  # the order checks are graded in
               for cell in autograded_cells(all_lessons()[LESSON].source())
               if nbgrader_meta(cell)["grade_id"] in ONLY]


# --- what runs on the workers: faults injected through grade_class(grade=...) ----------

def kill_victims_worker_once(path, salt, progress, **options):
    """Grade, but the first time the victim is graded, kill the worker while the
    victim's code sleeps in its sandbox (which then does not read that its channel
    closed: only the parent-death signal ends it in time)."""
    marker = Path(path).parent.parent / "worker-killed"

    def then_die(done, total):
        progress(done, total)
        if Path(path).parent.name == VICTIM and done == CHECK_ORDER.index(BUSY_CHECK) \
                and not marker.exists():  # the check before the busy one is done
            marker.write_text(str(os.getpid()))
            threading.Timer(KILL_AFTER, os.kill, (os.getpid(), signal.SIGKILL)).start()

    return grade_notebook(path, salt, progress=then_die, **options)


def kill_every_worker_on_the_victim(path, salt, progress, **options):
    if Path(path).parent.name == VICTIM:
        os.kill(os.getpid(), signal.SIGKILL)
    return grade_notebook(path, salt, progress=progress, **options)


# --- fixtures ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    yield
    libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


@pytest.fixture(scope="module")
def client(subreaper):
    with grading_cluster(workers=2) as client:
        yield client


@pytest.fixture(scope="module")
def cluster(client):
    """What grade_class connects with: the module's cluster, left running after."""
    return lambda: contextlib.nullcontext(client)


def copy_class(folder):
    for student in EXAMPLES:
        (folder / student).mkdir(parents=True)
        source = REPOSITORY / "examples" / "submissions" / student / f"{LESSON}.ipynb"
        (folder / student / source.name).write_bytes(source.read_bytes())
    write_submission(folder, LESSON, {"play_and_train": SLEEPS_FIRST}, student=VICTIM)
    return folder


def report_of(results):
    """The JSON report, as ``python -m grader grade --only ... --json`` writes it, without
    the measured CPU and wall seconds (they vary from run to run)."""
    return graded_content(json.loads(json.dumps(
        class_report(results, (), lesson_maxima(ONLY)).to_data())))


def differences(report, expected):
    """The checks whose outcome differs between two reports: what a failure shows."""
    def outcomes(of):
        return {(s["student"], n["name"], c["id"]): (c["status"], c["score"], c["feedback"])
                for s in of["submissions"] for n in s["notebooks"] for c in n["checks"]}
    mine, theirs = outcomes(report), outcomes(expected)
    return {key: (mine.get(key), theirs.get(key)) for key in set(mine) | set(theirs)
            if mine.get(key) != theirs.get(key)}


def grade(folder, out, cluster, grade=None):
    store = ResultStore(out)
    try:
        return grade_class(find_jobs(folder).jobs, SALT, store, cluster, grade=grade,
                           only=ONLY)
    finally:
        store.close()


def manifest_keys(out):
    return [json.loads(line)["key"] for line in (out / "manifest.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def undisturbed(cluster, tmp_path_factory):
    folder = tmp_path_factory.mktemp("undisturbed")
    run = grade(copy_class(folder / "class"), folder / "out", cluster)
    assert run.graded == len(STUDENTS) and run.failed == 0
    return report_of(run.results)


def sandboxes_left(grace=20.0):
    """Sandbox processes among this process's descendants, once ``grace`` seconds have
    let the dying ones go (zombies are reaped: they are gone, only not yet waited for)."""
    deadline = time.monotonic() + grace
    while True:
        left = {}
        for process in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if process.status() == psutil.STATUS_ZOMBIE:
                    if process.ppid() == os.getpid():
                        with contextlib.suppress(ChildProcessError):
                            os.waitpid(process.pid, os.WNOHANG)
                    continue
                command = " ".join(process.cmdline())
                if any(program in command for program in SANDBOX_PROGRAMS):
                    left[process] = command
        if not left or time.monotonic() > deadline:
            for process in left:  # a failed test leaves nothing running either
                with contextlib.suppress(psutil.Error):
                    process.kill()
            return list(left.values())
        time.sleep(0.5)


# --- tests ------------------------------------------------------------------------------

def test_a_worker_killed_mid_notebook_is_retried_and_nothing_is_lost(cluster, undisturbed,
                                                                     tmp_path):
    folder, out = copy_class(tmp_path / "class"), tmp_path / "out"
    run = grade(folder, out, cluster, grade=kill_victims_worker_once)
    killed = int((folder / "worker-killed").read_text())  # the worker grading the victim
    assert not psutil.pid_exists(killed) or \
        psutil.Process(killed).status() == psutil.STATUS_ZOMBIE
    assert run.failed == 0 and run.graded == len(STUDENTS)
    assert report_of(run.results) == undisturbed, differences(report_of(run.results),
                                                              undisturbed)
    assert sorted(manifest_keys(out)) == sorted(set(manifest_keys(out)))
    assert len(manifest_keys(out)) == len(STUDENTS)

    again = grade(folder, out, cluster)  # a resumed run: everything is stored already
    assert (again.graded, again.reused) == (0, len(STUDENTS))
    assert report_of(again.results) == report_of(run.results)
    assert len(manifest_keys(out)) == len(STUDENTS)
    assert sandboxes_left() == []


def test_a_notebook_that_kills_every_worker_costs_only_itself(cluster, undisturbed,
                                                              tmp_path):
    folder, out = copy_class(tmp_path / "class"), tmp_path / "out"
    run = grade(folder, out, cluster, grade=kill_every_worker_on_the_victim)
    assert (run.failed, run.graded) == (1, len(STUDENTS) - 1)
    report = report_of(run.results)
    for mine, theirs in zip(report["submissions"], undisturbed["submissions"]):
        if mine["student"] != VICTIM:
            assert mine == theirs, differences({"submissions": [mine]},
                                               {"submissions": [theirs]})
            continue
        (notebook,) = [n for n in mine["notebooks"] if n["submitted"]]
        assert notebook["score"] == 0 and notebook["checks"]
        assert all(check["status"] == "error" and "worker process died twice"
                   in check["feedback"] for check in notebook["checks"])
    assert sandboxes_left() == []

    again = grade(folder, out, cluster)  # a resumed run tries the crashed notebook again
    assert (again.graded, again.reused) == (1, len(STUDENTS) - 1)
    assert report_of(again.results) == undisturbed, differences(report_of(again.results),
                                                                undisturbed)


def test_a_grader_killed_mid_class_resumes_where_it_stopped(undisturbed, subreaper,
                                                            tmp_path):
    folder, out = copy_class(tmp_path / "class"), tmp_path / "out"
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--workers", "2",
               "--salt", SALT, "--only", ",".join(sorted(ONLY)), "--quiet", "--out", str(out)]
    grader = subprocess.Popen(command, cwd=REPOSITORY, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not ((out / "manifest.jsonl").exists() and manifest_keys(out)):
        assert grader.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    helpers = psutil.Process(grader.pid).children(recursive=True)  # its Dask workers
    grader.kill()
    grader.wait()
    stored = manifest_keys(out)
    assert 1 <= len(stored) < len(STUDENTS)  # killed mid-class
    assert sandboxes_left() == []
    gone, alive = psutil.wait_procs(helpers, timeout=20)
    assert alive == []  # the workers went with the grader
    killed = {process.pid for process in helpers}
    orphaned = [folder for folder in stale_scratch_folders()
                if int(SCRATCH_NAME.fullmatch(folder.name).group(1)) in killed]

    completed = subprocess.run([*command, "--resume", "--json", str(tmp_path / "report.json")],
                               cwd=REPOSITORY, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr
    assert f"{len(stored)} taken from an earlier run" in completed.stdout
    keys = manifest_keys(out)
    assert keys[:len(stored)] == stored and len(keys) == len(set(keys)) == len(STUDENTS)
    report = graded_content(json.loads((tmp_path / "report.json").read_text()))
    assert report == undisturbed, differences(report, undisturbed)
    assert sandboxes_left() == []
    # their cgroups went with the resume
    assert [folder for folder, maker in sandbox_groups() if maker in killed] == []
    assert [folder for folder in orphaned if folder.exists()] == []  # and their scratch


def test_an_existing_cluster_grades_through_the_same_code(client, undisturbed, tmp_path):
    """--scheduler ADDRESS: the module's cluster, reached by its address as a remote one."""
    folder, out = copy_class(tmp_path / "class"), tmp_path / "out"
    jobs = [job for job in find_jobs(folder).jobs if job.student == EXAMPLES[0]]
    notes = []
    store = ResultStore(out)
    try:
        run = grade_class(jobs, SALT, store,
                          lambda: grading_cluster(scheduler=client.scheduler.address,
                                                  note=notes.append), only=ONLY)
    finally:
        store.close()
    assert run.graded == 1 and notes == []  # the scheduler retries once, as it should
    (mine,) = report_of(run.results)["submissions"]
    theirs = next(s for s in undisturbed["submissions"] if s["student"] == EXAMPLES[0])
    assert mine == theirs, differences({"submissions": [mine]}, {"submissions": [theirs]})


def test_a_scratch_folder_being_made_is_never_judged_stale(tmp_path, monkeypatch):
    """Another grader's sweep may look at the folder at any moment of its making; at the
    moment the maker takes its lock (the last one it could be seen without it), the sweep
    must judge it live."""
    from grader.judge import sandbox

    monkeypatch.setattr(sandbox.tempfile, "tempdir", str(tmp_path))
    seen, lock = [], sandbox.fcntl.flock

    def sweep_then_lock(handle, operation):
        seen.append(sandbox.stale_scratch_folders(tmp_path))
        return lock(handle, operation)

    monkeypatch.setattr(sandbox.fcntl, "flock", sweep_then_lock)
    scratch = sandbox.make_scratch(all_lessons()["01_qlearning"])
    try:
        assert seen == [[]]
        monkeypatch.setattr(sandbox.fcntl, "flock", lock)
        assert sandbox.stale_scratch_folders(tmp_path) == []  # locked: live
    finally:
        sandbox.remove_scratch(scratch)


def test_a_scratch_folder_whose_maker_is_gone_is_removed_and_a_live_ones_kept(tmp_path):
    """Owned through a lock its maker holds, not through a PID: a grader in another PID
    namespace (a container sharing the temporary folder) has a PID no process here has."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()  # its pid now names no process (Linux hands out pids in turn)
    assert not psutil.pid_exists(ended.pid)
    # a live grader elsewhere: its PID means nothing here, but it holds its lock
    live = tmp_path / f"grade-02_replay_buffer-{ended.pid}-live00"
    # a grader that died: its lock file is there, nobody holds it
    dead = tmp_path / f"grade-02_replay_buffer-{ended.pid}-dead00"
    # a maker that died before it took its lock: by its PID, once the grace is over
    unlocked_old = tmp_path / f"grade-02_replay_buffer-{ended.pid}-old000"
    unlocked_new = tmp_path / f"grade-02_replay_buffer-{ended.pid}-new000"
    other = tmp_path / "grade-notes"  # not a scratch folder's name: never touched
    for folder in (live, dead, unlocked_old, unlocked_new, other):
        (folder / "lib").mkdir(parents=True)
    (dead / OWNER_FILE).touch()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"handle = os.open({str(live / OWNER_FILE)!r}, os.O_CREAT | os.O_RDWR)\n"
        "fcntl.flock(handle, fcntl.LOCK_EX)\n"
        "print('locked', flush=True)\n"
        "sys.stdin.read()\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        past_grace = time.time() - UNLOCKED_GRACE - 60
        os.utime(unlocked_old, (past_grace, past_grace))
        remove_stale_scratch(tmp_path)
        assert live.exists() and other.exists() and unlocked_new.exists()
        assert not dead.exists() and not unlocked_old.exists()
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    remove_stale_scratch(tmp_path)  # its maker has ended now: the lock went with it
    assert not live.exists()
