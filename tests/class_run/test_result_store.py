"""Results on disk as each notebook is graded (grader/class_run/result_store.py): a result
loads back equal to what was saved, one grader at a time holds a folder, a line torn by a
kill is ignored, a manifest names the notebook graded last per student and lesson, a
result's key changes with whatever could change a grade and not with where the class
folder lies, and the learning checks' baselines are kept per salt and course version.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from grader.class_run.result_store import (MANIFEST, ResultStore, StoreError, latest_graded,
                                           manifest_entries, salt_hashes_in)
from grader.class_run.submissions import NotebookJob
from grader.results import CheckResult, NotebookResult, WrittenAnswer
from grader.salts import salt_hash
from submission_factory import REPOSITORY

LESSON = "02_replay_buffer"
SALT = "a-salt-never-written-4711"
VERSION = "course-version-1"
SETTINGS = {"isolate": True, "memory_mb": 2048, "disk_mb": 64, "only": None}


def a_result():
    """A result with every part a grading can give: checks passed and failed, one with a
    learning check's figure and what it spent, notes, a written answer, the isolation."""
    result = NotebookResult(LESSON, isolation={"level": "ISOLATED", "memory": "cgroup"})
    result.add(CheckResult("test_fifo_eviction", 2.0, 2.0, "passed", "Evicts the oldest.",
                           usage={"cpu_seconds": 0.25, "wall_seconds": 0.5}))
    result.add(CheckResult("test_learning", 0.0, 3.0, "failed", "Learns slower than replay.",
                           figure={"returns": [-200.0, -120.5], "baseline": [-200.0, -80.0]}))
    result.notes.append("buffer_sample: not written yet")
    result.written.append(WrittenAnswer("conclusion", 3.0, "Replay reuses transitions.", True))
    return result


def job(student="ana", path=None, lesson=LESSON):
    """A notebook of the class, by default ``/term/class/<student>/<lesson>.ipynb``."""
    return NotebookJob(student, Path(path or f"/term/class/{student}/{lesson}.ipynb"), lesson)


def entry(store, of=None, content="sha-of-the-notebook", salt=SALT, version=VERSION,
          settings=SETTINGS):
    return store.entry_for(of or job(), content, salt, version, settings)


@pytest.fixture
def store(tmp_path):
    store = ResultStore(tmp_path / "out")
    yield store
    store.close()


def test_a_saved_result_loads_back_equal_and_after_the_store_is_opened_again(store):
    saved = entry(store)
    store.save(saved, a_result(), seconds=12.3456)
    assert store.load(saved["key"]) == a_result()
    assert store.graded(saved["key"]) and store.has(saved["key"])
    store.close()
    again = ResultStore(store.folder)
    try:
        assert again.load(saved["key"]) == a_result()
        (line,) = again.manifest_lines()
        assert line["seconds"] == 12.346 and line["file"] == f"results/{saved['key']}.json"
    finally:
        again.close()


def test_a_grading_that_broke_down_is_kept_but_not_counted_as_graded(store):
    saved = entry(store)
    store.save(saved, NotebookResult(LESSON), graded=False)
    assert store.has(saved["key"]) and not store.graded(saved["key"])  # --resume tries again
    store.save(saved, a_result())
    assert store.graded(saved["key"]) and store.load(saved["key"]) == a_result()
    assert len(store.manifest_lines()) == 2  # appended, never rewritten
    assert not store.graded(entry(store, content="another notebook")["key"])


def test_the_salt_itself_is_never_written_only_its_hash(store):
    saved = entry(store)
    store.save(saved, a_result())
    store.save_baseline(SALT, VERSION, f"{LESSON}/test_learning", {"returns": [1.0]})
    written = [path for path in store.folder.rglob("*") if path.is_file()]
    assert len(written) == 4  # the lock, the manifest, the result, the baselines
    assert not any(SALT in path.read_text() or SALT in str(path) for path in written)
    assert salt_hashes_in(store.folder) == {salt_hash(SALT)}


def test_a_second_grader_is_refused_the_folder_in_one_line(tmp_path):
    folder = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\n"
         "from grader.class_run.result_store import ResultStore\n"
         "store = ResultStore(sys.argv[1])\nprint('held', flush=True)\nsys.stdin.read()",
         str(folder)], cwd=REPOSITORY, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(StoreError) as refused:
            ResultStore(folder)
        message = str(refused.value)
        assert message == (f"{folder} is in use by another grader (wait for it to finish, "
                           "or choose another folder)")
    finally:
        holder.communicate(timeout=30)  # its stdin closed: it ends, and its lock with it
    ResultStore(folder).close()  # free again


def test_a_folder_that_cannot_be_written_is_refused_in_one_line(tmp_path):
    in_the_way = tmp_path / "out"
    in_the_way.write_text("a file, not a folder")
    with pytest.raises(StoreError, match=r"out: cannot write there \(") as refused:
        ResultStore(in_the_way)
    assert "\n" not in str(refused.value)


def test_a_last_line_torn_by_a_kill_is_ignored(store):
    kept = [entry(store, job(student)) for student in ("ana", "ben")]
    for one in kept:
        store.save(one, a_result())
    whole = (store.folder / MANIFEST).read_text()
    (store.folder / MANIFEST).write_text(whole + whole.splitlines()[0][:40])  # cut mid-line
    assert [line["key"] for line in manifest_entries(store.folder)] == [e["key"] for e in kept]
    store.close()
    again = ResultStore(store.folder)
    try:
        assert set(again.entries) == {one["key"] for one in kept}
        assert all(again.graded(one["key"]) for one in kept)
        assert len(again.manifest_lines()) == 2
    finally:
        again.close()


def test_a_result_saved_after_a_torn_line_keeps_a_line_of_its_own(store):
    first = entry(store, job("ana"))
    store.save(first, a_result())
    with open(store.folder / MANIFEST, "a") as manifest:
        manifest.write('{"key": "torn by a kill')  # no newline: killed mid-line
    store.close()
    resumed = ResultStore(store.folder)
    try:
        later = entry(resumed, job("ben"))
        resumed.save(later, a_result())
    finally:
        resumed.close()
    assert [line["key"] for line in manifest_entries(store.folder)] == [first["key"],
                                                                        later["key"]]
    assert [one.student for one in latest_graded(store.folder)] == ["ana", "ben"]


def test_the_notebook_graded_last_per_student_and_lesson_in_line_order(store):
    first = job("ana", "/term/class/ana/draft.ipynb")
    resubmitted = job("ana", f"/term/class/ana/{LESSON}.ipynb")
    for one, content in ((first, "sha-draft"), (job("ben"), "sha-ben"),
                         (job("ana", lesson="01_qlearning"), "sha-ana-01"),
                         (resubmitted, "sha-final")):
        store.save(entry(store, one, content), a_result())
    graded = latest_graded(store.folder)
    assert [(one.student, one.lesson, one.path, one.notebook_sha256) for one in graded] == [
        ("ben", LESSON, f"/term/class/ben/{LESSON}.ipynb", "sha-ben"),
        ("ana", "01_qlearning", "/term/class/ana/01_qlearning.ipynb", "sha-ana-01"),
        ("ana", LESSON, f"/term/class/ana/{LESSON}.ipynb", "sha-final")]


def test_the_key_follows_what_decides_a_grade_and_not_where_the_folder_lies(store):
    base = entry(store)
    moved = entry(store, job(path=f"/elsewhere/ana/{LESSON}.ipynb"))
    assert moved["key"] == base["key"]
    assert (base["path"], moved["path"]) == (f"/term/class/ana/{LESSON}.ipynb",
                                             f"/elsewhere/ana/{LESSON}.ipynb")
    relative = entry(store, job(path=f"ana/{LESSON}.ipynb"))
    assert Path(relative["path"]).is_absolute() and relative["key"] == base["key"]
    changed = [entry(store, job(student="ben")), entry(store, job(lesson="01_qlearning")),
               entry(store, content="sha-of-an-edited-notebook"),
               entry(store, salt="another salt"), entry(store, version="course-version-2"),
               entry(store, settings={**SETTINGS, "memory_mb": 4096}),
               entry(store, settings={**SETTINGS, "only": ["test_fifo_eviction"]})]
    keys = [one["key"] for one in changed]
    assert base["key"] not in keys and len(set(keys)) == len(keys)


def test_baselines_are_kept_per_salt_and_course_version(store):
    assert store.baselines(SALT, VERSION) == {}
    store.save_baseline(SALT, VERSION, f"{LESSON}/test_learning", {"returns": [-80.0]})
    store.save_baseline(SALT, VERSION, "03_prioritized_replay/test_learning", [1, 2])
    store.save_baseline("another salt", VERSION, f"{LESSON}/test_learning", {"returns": [0.0]})
    assert store.baselines(SALT, VERSION) == {f"{LESSON}/test_learning": {"returns": [-80.0]},
                                              "03_prioritized_replay/test_learning": [1, 2]}
    assert store.baselines("another salt", VERSION) == {
        f"{LESSON}/test_learning": {"returns": [0.0]}}
    assert store.baselines(SALT, "course-version-2") == {}  # a new course trains anew
    store.close()
    again = ResultStore(store.folder)
    try:
        assert again.baselines(SALT, VERSION)[f"{LESSON}/test_learning"] == {"returns": [-80.0]}
    finally:
        again.close()
