"""A class full of attacks, graded with --workers 2: nobody gains, nobody is harmed.

Every attacker's lesson 02 holds a wrong buffer (it evicts the newest transition) plus
one attack (tests/attacks.py): escaping the sandbox through files the host reads,
forging results (eleven routes, mid-probe mutation by threads, signals, tracers, audit
hooks and gc callbacks among them), filling the disk, leaving processes behind, writing
to the instructor's terminal, and taking more than a sandbox's share of the machine
(busy processes in sessions of their own, a thread swarm, a memory hog of several
processes, and a reference module left in System V shared memory by a lesson-06 sandbox
for a later one). The class also holds links, special files, a stray notebook, a lesson
submitted twice, malformed notebooks and metadata, and a hostile folder name. Two correct
classmates are graded with them, one first and one last. The grader runs in a cgroup of
the test's own, so an attack that got through could not take the machine down.

At the end, forged learning through the ordinary API: loops that break a training
loop's rules (tests/attacks.py, LOOP_TRICKS) are refused by lesson 01's witnesses and are
never called by the learning checks of lessons 02 and 05, which drive the buffer with the
course's own loop; lesson 07 refuses learning steps that break theirs.
"""

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attacks import (BUDGET_ATTACKS, DQN_LOOP_CHANGED_REFUSAL, DQN_STEP_CHANGING_THE_LOOP,
                     DQN_STEP_TRICKS, ESCAPE, ESCAPE_MARKER,
                     FABRICATED_ROWS_SAMPLE, FORGED_LINE, FORGING_ROUTES, HARM,
                     LEAVER_MARKER, LOOP_TRICK_REFUSALS, LOOP_TRICKS,
                     SERVED_AGENT_TAUGHT_THE_MODEL, SHARED_MEMORY_KEY,
                     SHARED_MEMORY_WRITER, loop_trick, wrong_buffer_answers)
from grader.class_run.class_cpu_share import CLASS_PREFIX
from grader.judge.sandbox import namespaces_available
from grader.judge.sandbox_resources import GROUP_PREFIX
from grader.lessons import REPOSITORY
from submission_factory import QUICK_CHECKS, grade, solution_answers, write_submission
from support.busy_machine import Confinement
from support.host import host_segments, processes_running

pytestmark = pytest.mark.xdist_group('attacked-class')

LESSON = "02_replay_buffer"
EVIL_NAME = "evil\x1b[2J\x1b[31mname\nwith lines"


def write_with_malformed_metadata(folder, student):
    """A correct notebook with odd-typed metadata and sources in cells that are not
    answers (written as raw JSON: nbformat would refuse them): nothing is lost."""
    path = write_submission(folder, LESSON, student=student)
    notebook = json.loads(path.read_text())
    notebook["cells"] += [{"cell_type": "code", "metadata": {"nbgrader": None}, "source": "x = 1",
              "outputs": [], "execution_count": None},
             {"cell_type": "markdown", "metadata": {"nbgrader": ["grade_id", "points"]},
              "source": 42},
             {"cell_type": "code", "metadata": "not a dict", "source": None, "outputs": [],
              "execution_count": None},
             {"cell_type": "raw", "metadata": {"nbgrader": {"grade_id": 7}}, "source": []},
             {"cell_type": "markdown", "metadata": {"nbgrader": {"grade_id": "oddity"}},
              "source": 42}]
    path.write_text(json.dumps(notebook))


def host_fingerprint():
    """What an escape would change out here: files the grader imports and runs, and
    whatever of the repository git tracks or sees."""
    import numpy

    files = [sys.executable, os.__file__, numpy.__file__, json.__file__,
             REPOSITORY / "grader" / "judge" / "sandbox_runtime" / "student_server.py"]
    digests = {str(path): hashlib.sha256(Path(path).read_bytes()).hexdigest()
               for path in files}
    status = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=REPOSITORY,
                            capture_output=True, text=True).stdout
    return digests, status


def markers_on_the_host():
    roots = {"/tmp", "/var/tmp", str(REPOSITORY), sys.prefix, sys.base_prefix,
             os.path.expanduser("~")}
    found = []
    for root in roots:
        for top, folders, files in os.walk(root):
            folders[:] = [name for name in folders if name not in (".git", "node_modules")]
            found += [os.path.join(top, name) for name in files if name == ESCAPE_MARKER]
    return found


@pytest.fixture(scope="module")
def attacked_class(tmp_path_factory):
    assert namespaces_available(), "the attack suite needs the namespace sandbox"
    root = tmp_path_factory.mktemp("attacked") / "class"
    write_submission(root, LESSON, student="aa_correct")
    write_submission(root, LESSON, wrong_buffer_answers(), student="ab_wrong")
    write_submission(root, LESSON, wrong_buffer_answers(ESCAPE), student="attack_escape")
    for name, code in {**FORGING_ROUTES, **HARM, **BUDGET_ATTACKS}.items():
        write_submission(root, LESSON, wrong_buffer_answers(code), student=f"attack_{name}")
    writer = "attack_shared_memory_writer"  # graded early: its segment would be there first
    write_submission(root, "06_capstone", {"autocorrelation": solution_answers(
        "06_capstone")["autocorrelation"] + SHARED_MEMORY_WRITER}, student=writer)
    write_submission(root, LESSON, student="zz_correct")
    write_submission(root, LESSON, student=EVIL_NAME)
    write_with_malformed_metadata(root, "odd_metadata")
    # links, special files, strays, duplicates, files that are not notebooks
    (root / "link_to_solutions").mkdir()
    (root / "link_to_solutions" / f"{LESSON}.ipynb").symlink_to(
        REPOSITORY / "solutions" / f"{LESSON}.ipynb")
    (root / "named_pipe").mkdir()
    os.mkfifo(root / "named_pipe" / f"{LESSON}.ipynb")
    (root / "folder_named_notebook" / f"{LESSON}.ipynb").mkdir(parents=True)
    write_submission(root, LESSON, student="twice")
    copy = write_submission(root / "twice" / "old", LESSON, wrong_buffer_answers(),
                            student="drafts")
    copy = copy.rename(copy.with_name(f"{LESSON} (copy).ipynb"))
    os.utime(copy, (1_700_000_000, 1_700_000_000))  # an old draft, as answered: not graded
    write_submission(root.parent / "stray", LESSON).rename(root / f"{LESSON}.ipynb")
    for student, text in (("not_json", "\x00\x01 not a notebook"), ("json_list", "[]"),
                          ("cells_null", '{"cells": null, "metadata": []}')):
        (root / student).mkdir()
        (root / student / f"{LESSON}.ipynb").write_text(text)
    before = host_fingerprint()
    report, book = root.parent / "report.json", root.parent / "book.csv"
    # the quick checks but the loop's (a round trip per step: the class's largest cost)
    only = sorted(QUICK_CHECKS[LESSON] - {"test_replay_loop"} | {"test_autocorrelation"})
    started = time.monotonic()
    with Confinement(cpus=2.0, max_tasks=4096, memory_mb=10240) as confinement:
        completed = subprocess.run(
            [*confinement.enter_argv(), sys.executable, "-m", "grader", "grade", str(root),
             "--workers", "2", "--salt", "attack-suite", "--only", ",".join(only), "--json",
             str(report), "--csv", str(book), "--quiet"],
            cwd=REPOSITORY, capture_output=True, text=True, timeout=900)
        seconds = time.monotonic() - started
        time.sleep(1)  # the kernel ends a sandbox's processes as its init exits
        # the grader makes its class's cgroup inside its own, and the sandboxes' inside
        # that (beside its own where there is no class group): inside the confinement
        groups_left = [os.path.join(folder, name) for folder in confinement.folders
                       for name in os.listdir(folder)
                       if name.startswith((GROUP_PREFIX, CLASS_PREFIX))]
    return {"completed": completed, "before": before, "after": host_fingerprint(),
            "report": json.loads(report.read_text()) if report.exists() else None,
            "leftovers": processes_running(LEAVER_MARKER), "seconds": seconds,
            "groups_left": groups_left, "segments_left": host_segments(SHARED_MEMORY_KEY),
            "markers": markers_on_the_host(), "students": sorted(p.name for p in root.iterdir()
                                                                 if p.is_dir())}


def scores(attacked_class):
    """``{student: (score, max)}`` of each student's lesson 02 notebook."""
    return {s["student"]: (n["score"], n["max_score"])
            for s in attacked_class["report"]["submissions"] for n in s["notebooks"]
            if n["name"] == LESSON}


def submission(attacked_class, student):
    return next(s for s in attacked_class["report"]["submissions"] if s["student"] == student)


def test_the_grader_finishes_with_every_student_in_the_report(attacked_class):
    completed = attacked_class["completed"]
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert attacked_class["report"] is not None
    assert {s["student"] for s in attacked_class["report"]["submissions"]} == \
        set(attacked_class["students"])


def test_correct_classmates_keep_full_marks(attacked_class):
    for student in ("aa_correct", "zz_correct", EVIL_NAME, "twice", "odd_metadata"):
        score, maximum = scores(attacked_class)[student]
        assert score == maximum > 0, (student, submission(attacked_class, student))


@pytest.mark.parametrize("attack", sorted(["escape", *FORGING_ROUTES, *HARM, *BUDGET_ATTACKS]))
def test_an_attack_gains_nothing(attacked_class, attack):
    wrong, maximum = scores(attacked_class)["ab_wrong"]
    assert wrong < maximum
    score, _ = scores(attacked_class)[f"attack_{attack}"]
    assert score <= wrong, submission(attacked_class, f"attack_{attack}")


def test_nothing_escaped_to_the_host(attacked_class):
    assert attacked_class["markers"] == []
    assert attacked_class["before"] == attacked_class["after"]


def test_no_process_of_the_run_outlives_it(attacked_class):
    assert attacked_class["leftovers"] == []


def test_no_cgroup_or_shared_memory_of_the_run_outlives_it(attacked_class):
    assert attacked_class["groups_left"] == []
    assert attacked_class["segments_left"] == []  # the writer's segment died with it


def test_the_shared_memory_writer_was_graded(attacked_class):
    notebook = submission(attacked_class, "attack_shared_memory_writer")["notebooks"]
    assert any(n["name"] == "06_capstone" and n["submitted"] and n["checks"] for n in notebook)


def test_nothing_reaches_the_instructors_terminal(attacked_class):
    completed = attacked_class["completed"]
    assert FORGED_LINE not in completed.stdout + completed.stderr
    assert "\x1b" not in completed.stdout  # the hostile folder name is printed defused
    assert "evil?[2J?[31mname" in completed.stdout
    assert not any(line.startswith("with lines") for line in completed.stdout.splitlines())


def test_links_special_files_strays_and_duplicates_are_named_and_skipped(attacked_class):
    stderr = attacked_class["completed"].stderr
    for student, reason in (("link_to_solutions", "symbolic link"),
                            ("named_pipe", "not a regular file"),
                            ("folder_named_notebook", "a folder, not a notebook")):
        entry = submission(attacked_class, student)
        assert not any(n["submitted"] for n in entry["notebooks"])
        assert reason in " ".join(entry["notes"])
        assert reason in stderr
    assert any("belongs to no student" in note
               for note in attacked_class["report"]["notes"])
    twice = submission(attacked_class, "twice")
    assert sum(n["submitted"] for n in twice["notebooks"]) == 1
    # both drafts have every answer cell changed: the one with more code of the student's
    # own is graded (the old draft's buffer is shorter), whatever their save times
    assert "(copy).ipynb: not graded: twice's 02_replay_buffer was graded from " \
        f"{LESSON}.ipynb, since it holds more of the student's code" in " ".join(twice["notes"])


def test_malformed_notebooks_cost_their_own_points_only(attacked_class):
    for student, why in (("not_json", "it is not JSON"), ("json_list", "not an object"),
                         ("cells_null", "no list of cells")):
        entry = submission(attacked_class, student)
        assert entry["score"] == 0 and entry["max_score"] > 0
        malformed = next(n for n in entry["notebooks"] if n["name"] == LESSON)
        assert malformed["status"] == "not graded" and malformed["score"] is None, entry
        assert "could not be read" in malformed["notes"][0] and why in malformed["notes"][0]
    odd = submission(attacked_class, "odd_metadata")["notebooks"][0]
    assert any("not text" in note for note in odd["notes"])


def test_every_notebook_says_which_isolation_graded_it(attacked_class):
    for entry in attacked_class["report"]["submissions"]:
        for notebook in entry["notebooks"]:
            if not notebook["submitted"]:
                assert notebook["isolation"] is None
                continue
            assert notebook["isolation"]["level"] == "namespaces"
            assert {"memory", "tasks", "cpu_time", "cpu_share"} <= set(notebook["isolation"])


# --- forged learning through the ordinary API ------------------------------------------------------

LEARNING_CHECK = {"01_qlearning": "test_learning", "02_replay_buffer": "test_replay_learning",
                  "07_neural_replay": "test_dqn_learning"}


def grade_learning(folder, lesson, answers):
    return grade(write_submission(folder, lesson, answers), only={LEARNING_CHECK[lesson]},
                 check_time_limit=60.0)


def assert_gains_nothing(result):
    """The learning check is not passed and scores nothing: a trick that made the wrong
    buffer (or the broken loop) learn would pass it."""
    (check,) = result.checks
    assert check.status != "passed" and check.score == 0 == result.score, check.feedback


# Lessons 02 and 05 judge the buffer driven by the course's own loop
# (checks.taxi_training.train_buffer_on_taxi): their learning checks are given the buffer
# class alone, so whatever the student's loop does (steer the actions, replay a private
# memory), they never call it. Lesson 01, which judges the student's loop, refuses each
# of those tricks below, graded; tests/threats/test_witness.py holds every rule in-process.
@pytest.mark.parametrize("lesson, check, buffer", [
    ("02_replay_buffer", "test_replay_learning", "ReplayBuffer"),
    ("05_combined_replay", "test_cer_learning", "CombinedReplayBuffer")])
def test_where_the_course_loop_drives_the_buffer_the_learning_check_gets_no_loop(
        lesson, check, buffer):
    from checks import checks_for_lesson

    assert checks_for_lesson(lesson)[check].needs == (buffer,)


def test_a_buffer_cannot_replay_transitions_that_never_happened(tmp_path):
    result = grade_learning(tmp_path, LESSON, {"buffer_sample": FABRICATED_ROWS_SAMPLE})
    assert_gains_nothing(result)
    assert "which is no transition the environment produced" in result.checks[0].feedback


BROKEN_LOOP = '''\
#| export
def play_and_train(env, agent, t_max=10_000):
    """Plays, but never updates the agent: nothing is learned."""
    total_reward, (state, _) = 0.0, env.reset()
    for _ in range(t_max):
        state, reward, terminated, truncated, _ = env.step(agent.get_action(state))
        total_reward += reward
        if terminated or truncated:
            break
    return total_reward
'''


def test_a_served_agent_cannot_be_taught_transitions_that_never_happened(tmp_path):
    forged = grade_learning(tmp_path, "01_qlearning", {"play_and_train": BROKEN_LOOP + "\n"
                                                       + SERVED_AGENT_TAUGHT_THE_MODEL})
    assert_gains_nothing(forged)
    assert "never produced" in forged.checks[0].feedback


# Lesson 01 judges the student's loop, under strict witnesses: each trick is refused by
# the rule it breaks (and would otherwise have taught the agent faster than a real loop).
@pytest.mark.parametrize("trick", LOOP_TRICKS)
def test_lesson_01_refuses_a_loop_that_breaks_the_rules(tmp_path, trick):
    result = grade_learning(tmp_path, "01_qlearning", loop_trick("01_qlearning", trick))
    assert_gains_nothing(result)
    assert LOOP_TRICK_REFUSALS[trick] in result.checks[0].feedback
    assert "The rule: " in result.checks[0].feedback


def test_lesson_07_refuses_a_learning_step_that_changes_the_course_loop(tmp_path):
    """The course's loop runs in the student's process, beside dqn_step, so that a step is
    not a round trip: a dqn_step that changes it is refused by the grader's replay."""
    result = grade_learning(tmp_path, "07_neural_replay",
                            {"dqn_step": DQN_STEP_CHANGING_THE_LOOP})
    (check,) = result.checks
    assert check.status == "error" and check.score == 0, check.feedback
    assert DQN_LOOP_CHANGED_REFUSAL in check.feedback and "The rule: " in check.feedback


@pytest.mark.parametrize("trick", sorted(DQN_STEP_TRICKS))
def test_lesson_07_refuses_a_learning_step_that_breaks_the_rules(tmp_path, trick):
    source, refusal = DQN_STEP_TRICKS[trick]
    result = grade_learning(tmp_path, "07_neural_replay", {"dqn_step": source})
    (check,) = result.checks
    assert check.status == "error" and check.score == 0, check.feedback
    assert refusal in check.feedback and "The rule: " in check.feedback
