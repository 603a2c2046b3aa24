"""tests/support/run_records.py: a record is used only when the runs made again match it."""

import numpy as np
import pytest

from tests.support.run_records import RECORDING, RunRecord, StaleRecord

SEEDS = (3, 4, 5, 6)


def runs(seeds, made):
    """A stand-in for a study: one number per seed, and which seeds it was asked for."""
    made.append(tuple(seeds))
    return {"return": np.array([10.0 * seed + 0.1 for seed in seeds]),
            "greedy": np.array([float(seed) for seed in seeds])}


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    monkeypatch.setenv(RECORDING, "1")
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # as one process writes them
    RunRecord("study", tmp_path).per_seed("setting", SEEDS, lambda seeds: runs(seeds, []))
    monkeypatch.delenv(RECORDING)
    return tmp_path


def test_a_current_record_is_read_after_making_the_first_and_last_seeds_again(recorded):
    made = []
    found = RunRecord("study", recorded).per_seed("setting", SEEDS,
                                                  lambda seeds: runs(seeds, made))
    assert made == [(3, 6)]
    assert {k: v.tolist() for k, v in found.items()} == {
        k: v.tolist() for k, v in runs(SEEDS, []).items()}


def test_a_record_the_code_does_not_give_is_not_used(recorded):
    made = []

    def changed(seeds):
        found = runs(seeds, made)
        found["return"] = found["return"] + 1e-12  # the last bit differs
        return found

    with pytest.warns(StaleRecord, match="every run is made here"):
        found = RunRecord("study", recorded).per_seed("setting", SEEDS, changed)
    assert made == [(3, 6), SEEDS]  # the spot check, then every run
    assert found["return"].tolist() == (runs(SEEDS, [])["return"] + 1e-12).tolist()


@pytest.mark.parametrize("key, seeds", [("another setting", SEEDS), ("setting", (3, 4, 5))])
def test_a_key_or_seeds_the_record_lacks_are_made_in_full(recorded, key, seeds):
    made = []
    with pytest.warns(StaleRecord):
        RunRecord("study", recorded).per_seed(key, seeds, lambda chosen: runs(chosen, made))
    assert made == [seeds]


def test_records_are_written_from_one_process_only(tmp_path, monkeypatch):
    # two xdist workers would each write their groups' keys into the same file
    monkeypatch.setenv(RECORDING, "1")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    with pytest.raises(RuntimeError, match="-n 0"):
        RunRecord("study", tmp_path).per_seed("setting", SEEDS, lambda seeds: runs(seeds, []))
    assert not (tmp_path / "study.json").exists()
