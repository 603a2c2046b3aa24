"""Baselines kept between class runs (grader/class_run/baseline_cache.py): per salt, course
version and libraries; a file that is not whole baselines counts as none; a folder that
cannot be written costs nothing but the time; a class run takes what the cache holds
instead of training it, and writes it into its own store too."""

import json
from pathlib import Path

import pytest

from grader.class_run import baseline_cache as cache_module
from grader.class_run.baseline_cache import BaselineCache, baseline_cache
from grader.class_run.grade_class import ClassGrading
from grader.class_run.result_store import ResultStore
from grader.class_run.submissions import NotebookJob
from grader.course_version import course_version
from grader.salts import salt_hash
from submission_factory import REPOSITORY

SALT = "a-salt-never-written-4711"
VERSION = "course-version-1"
NAME = "05_combined_replay/test_cer_learning"


@pytest.fixture
def cache(tmp_path):
    return BaselineCache(tmp_path / "cache")


def test_a_kept_baseline_is_found_for_its_salt_version_and_libraries_only(cache, monkeypatch):
    assert cache.baselines(SALT, VERSION) == {}
    assert cache.save(SALT, VERSION, NAME, {"returns": [-80.0]})
    assert cache.save(SALT, VERSION, "04_hindsight_replay/test_her_learning", {"q": [1, 2]})
    assert cache.baselines(SALT, VERSION) == {
        NAME: {"returns": [-80.0]}, "04_hindsight_replay/test_her_learning": {"q": [1, 2]}}
    assert cache.baselines("another salt", VERSION) == {}
    assert cache.baselines(SALT, "course-version-2") == {}
    real = cache_module._version
    monkeypatch.setattr(cache_module, "_version",  # another numpy: other random streams
                        lambda name: "0.0.1" if name == "numpy" else real(name))
    assert cache.baselines(SALT, VERSION) == {}


def test_only_the_salts_hash_is_written(cache):
    cache.save(SALT, VERSION, NAME, {"returns": [1.0]})
    (written,) = cache.folder.rglob("*.json")
    assert written.name == f"{salt_hash(SALT)}.json"
    assert SALT not in written.read_text() and SALT not in str(written)


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '"a string"', "", "\x00\x01",
                                  '{"05_combined_replay/test_cer_learning": [1, 2]}'])
def test_a_file_that_is_not_whole_baselines_counts_as_none_and_is_written_anew(cache, text):
    cache.save(SALT, VERSION, NAME, {"returns": [1.0]})
    (path,) = cache.folder.rglob("*.json")
    path.write_text(text)
    assert cache.baselines(SALT, VERSION) == {}
    assert cache.save(SALT, VERSION, NAME, {"returns": [2.0]})
    assert json.loads(path.read_text()) == {NAME: {"returns": [2.0]}}


def test_a_folder_that_cannot_be_written_costs_only_the_time(tmp_path):
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    cache = BaselineCache(blocked / "cache")
    assert cache.save(SALT, VERSION, NAME, {"returns": [1.0]}) is False
    assert cache.baselines(SALT, VERSION) == {}


def test_the_cache_is_where_the_variable_says_or_off(monkeypatch, tmp_path):
    monkeypatch.setenv(cache_module.CACHE_VARIABLE, str(tmp_path / "mine"))
    assert baseline_cache().folder == tmp_path / "mine"
    monkeypatch.setenv(cache_module.CACHE_VARIABLE, "off")
    assert baseline_cache() is None
    monkeypatch.delenv(cache_module.CACHE_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert baseline_cache().folder == tmp_path / "xdg" / "experience-replay-grader" / "baselines"
    monkeypatch.delenv("XDG_CACHE_HOME")

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert baseline_cache() is None  # nowhere to keep them: every run trains its own


def test_a_class_run_takes_the_kept_baselines_instead_of_training_them(tmp_path, monkeypatch):
    monkeypatch.setenv(cache_module.CACHE_VARIABLE, str(tmp_path / "cache"))
    notebook = REPOSITORY / "examples" / "submissions" / "ada_complete" / "05_combined_replay.ipynb"
    jobs = [NotebookJob("ada", Path(notebook), "05_combined_replay")]
    options = {"isolate": True, "memory_mb": 2048, "disk_mb": 64, "only": None}

    def planned(out):
        store = ResultStore(tmp_path / out)
        try:
            grading = ClassGrading(jobs, SALT, store, options, grade=None)
            return grading.needed, grading.untrained, store.baselines(SALT, course_version())
        finally:
            store.close()

    needed, untrained, stored = planned("first")
    assert untrained == needed and needed and stored == {}  # nothing kept yet: all trained
    kept = {f"{lesson}/{check}": {"returns": [float(index)]}
            for index, (lesson, check) in enumerate(needed)}
    for name, answers in kept.items():
        baseline_cache().save(SALT, course_version(), name, answers)
    needed, untrained, stored = planned("second")
    assert untrained == [] and stored == kept  # taken from the cache, and in the run's store
    monkeypatch.setenv(cache_module.CACHE_VARIABLE, "off")
    assert planned("third")[1] == needed
