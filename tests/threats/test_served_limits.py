"""Budgets on the grader's side of the channel: what student code may ask of the grader's
objects, and how much of the grader's memory and time it may take.

- A served method's arguments are bounded by its declaration (checks/lending.py): a call
  that asks for more is refused before it runs, with a message naming the method, the
  argument and the limit, and costs the check even if the student's code catches it.
- The largest call a declaration allows runs in well under a second.
- A recorder refuses to grow past its bound (checks/records.py).
- The grader looks at the check's budget after every served call and replayed entry.
- Dask workers of a LocalCluster run with a memory limit.
"""

import importlib
import inspect
import pkgutil
import sys
import time

import numpy as np
import pytest

import checks
from checks.framework import ProbeError
from checks.lending import Served, lending_of, oversized
from checks.records import Record, RecordSet
from grader.judge import budgets
from grader.judge.budgets import Budget, BudgetMeter, BudgetSpent
from grader.judge.student_process import StudentProcess, StudentProcessLost
from grader.lessons import REPOSITORY
from submission_factory import feedback, grade, statuses, write_submission

sys.path.insert(0, str(REPOSITORY / "examples"))
from make_submissions import solution_with  # noqa: E402


def served_classes():
    """Every class with a ``Served`` declaration in a module of ``checks`` (a lesson's checks
    may be a package of modules)."""
    found = {}
    for module_info in pkgutil.walk_packages(checks.__path__, "checks."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if isinstance(value, type) and isinstance(vars(value).get("__lending__"), Served):
                found[value.__name__] = value
    return found


def test_every_served_class_is_found():
    assert set(served_classes()) == {
        "RecordingBuffer", "TopOfTheRange", "RecordingPrioritizedBuffer",
        "ScriptedGoalAgent", "RecordingHindsightBuffer", "ServedNetwork", "RecordingAdam",
        "FixedBatches", "WitnessedAgent", "CountingGenerator"}


@pytest.mark.parametrize("name", sorted(served_classes()))
def test_limits_name_arguments_the_methods_have(name):
    cls = served_classes()[name]
    declaration = cls.__lending__
    for method, limits in declaration.limits.items():
        parameters = inspect.signature(getattr(cls, method)).parameters
        assert set(limits) <= set(parameters), (method, set(limits) - set(parameters))


# --- the largest allowed calls are cheap; one more is refused -------------------------------

def _objects():
    from checks.lent_generators import CountingGenerator
    from checks.lesson03_prioritized_replay.buffer import TopOfTheRange
    from checks.lesson03_prioritized_replay.training_loop import RecordingPrioritizedBuffer
    from checks.lesson04_hindsight_replay.training_loop import RecordingHindsightBuffer
    from checks.lesson07_neural_replay import (FixedBatches, RecordingAdam, ServedNetwork,
                                               batch_rows, served_batch)
    from checks.replay_loops import RecordingBuffer
    from course.bit_flipping import BitFlippingEnv

    recording = RecordingBuffer()
    recording.add(1, 0, -1.0, 2, False)
    prioritized = RecordingPrioritizedBuffer()
    prioritized.add(1, 0, -1.0, 2, False)
    hindsight = RecordingHindsightBuffer(BitFlippingEnv(6))
    wide = np.zeros((2, 512), dtype=np.int64)  # the widest episode: two observations of 512
    hindsight.store_episode(wide, wide, wide[0], np.zeros(1, dtype=np.int64))
    network = ServedNetwork(1)
    rows = 16_384 // 4
    return {
        "RecordingBuffer": (recording, "sample", (1024,), (1025,)),
        "RecordingPrioritizedBuffer": (prioritized, "sample", (1024, 0.5), (1025, 0.5)),
        "RecordingHindsightBuffer": (hindsight, "sample", (256,), (257,)),
        "FixedBatches": (FixedBatches([served_batch(batch_rows(np.random.default_rng(0), 5))]),
                         "update_priorities", (np.arange(1024), np.ones(1024)),
                         (np.arange(1025), np.ones(1025))),
        "ServedNetwork.predict": (network, "predict", (np.zeros((rows, 4)),),
                                  (np.zeros((rows + 1, 4)),)),
        "ServedNetwork.gradients": (network, "gradients",
                                    (np.zeros((rows, 4)), np.zeros((rows, 2))),
                                    (np.zeros((rows + 1, 4)), np.zeros((rows + 1, 2)))),
        "RecordingAdam": (RecordingAdam(network, 0.01), "step",
                          ([np.zeros_like(p) for p in network.parameters()],),
                          ([np.zeros(65_537)],)),
        "TopOfTheRange.random": (TopOfTheRange(np.random.PCG64(0)), "random", ((256, 256),),
                                 ((10**5, 10**5),)),
        "TopOfTheRange.choice": (TopOfTheRange(np.random.PCG64(0)), "choice",
                                 (65_536, 65_536, False), (10**9, 1, False)),
        "TopOfTheRange.permutation": (TopOfTheRange(np.random.PCG64(0)), "permutation",
                                      (65_536,), (10**9,)),
        "CountingGenerator.integers": (CountingGenerator(0), "integers", (65_536, None, 65_536),
                                       (10, None, 10**9)),
    }


@pytest.mark.parametrize("case", sorted(_objects()))
def test_the_largest_allowed_call_is_cheap_and_one_more_is_refused(case):
    original, method, largest, too_large = _objects()[case]
    declaration = lending_of(original)
    assert oversized(declaration, original, method, list(largest), {}) is None
    started = time.process_time()
    getattr(original, method)(*largest)
    assert time.process_time() - started < 0.5  # well under a second, even on a busy machine
    refusal = oversized(declaration, original, method, list(too_large), {})
    assert refusal and refusal.startswith(f"{method}(") and "at most" in refusal


def test_refusals_name_the_method_the_argument_and_the_limit():
    from checks.lesson03_prioritized_replay.buffer import TopOfTheRange
    from checks.replay_loops import RecordingBuffer

    buffer = RecordingBuffer()
    assert oversized(lending_of(buffer), buffer, "sample", [], {"batch_size": 10_000_000}) == (
        "sample(batch_size=10000000): the grader's RecordingBuffer serves at most 1,024 "
        "transitions per call")
    rng = TopOfTheRange(np.random.PCG64(0))
    assert "random(size=(100000, 100000)): the grader's TopOfTheRange draws at most 65,536" \
        in oversized(lending_of(rng), rng, "random", [], {"size": (10**5, 10**5)})
    # the bounds of a range are values, not sizes, but arrays of them are broadcast
    assert oversized(lending_of(rng), rng, "integers", [0, 2**62], {"size": 3}) is None
    assert "low=<array of shape (257, 1)>): the grader's TopOfTheRange takes at most 256" in \
        oversized(lending_of(rng), rng, "uniform", [np.zeros((257, 1)), np.ones((1, 256))], {})
    # sizes in other forms: a 0-d array (range() takes it), a shape (numpy takes one)
    for size in (np.array(10**8), np.int64(10**8), [10**8], np.array([10**4, 10**4])):
        assert "serves at most 1,024" in oversized(lending_of(buffer), buffer, "sample",
                                                    [size], {})
    # slots are indices, not a shape
    from checks.lesson03_prioritized_replay.training_loop import RecordingPrioritizedBuffer
    prioritized = RecordingPrioritizedBuffer()
    assert oversized(lending_of(prioritized), prioritized, "update_priorities",
                     [[900, 901, 902], [0.1, 0.2, 0.3]], {}) is None
    # arguments that do not fit the signature are left to the call, which raises TypeError
    assert oversized(lending_of(buffer), buffer, "sample", [1, 2, 3], {}) is None


# --- recorders -------------------------------------------------------------------------

def test_a_record_refuses_to_grow_past_its_bounds():
    record = Record("sample", calls=3)
    for call in range(3):
        record.append([call])
    with pytest.raises(ProbeError, match="your code called sample more than 3 times in one check"):
        record.append([3])
    assert record == [[0], [1], [2]]
    heavy = Record("step", numbers=10)
    heavy.append(list(range(6)))
    with pytest.raises(ProbeError, match="calls of step gave the grader more than 10 numbers"):
        heavy.append(list(range(6)))
    seen = RecordSet("step", "transitions", calls=2)
    for key in ((1, 2), (3, 4), (1, 2)):
        seen.add(key)
    with pytest.raises(ProbeError, match="more than 2 distinct transitions"):
        seen.add((5, 6))


def test_the_recorders_keep_their_calls_in_records():
    from checks.lesson07_neural_replay import RecordingAdam, ServedNetwork
    from checks.replay_loops import RecordingBuffer
    from checks.stub_envs import ScriptedAgent
    from checks.witness import WitnessedEnv
    from course.taxi import make_taxi

    assert isinstance(ScriptedAgent(0).updates, Record)
    assert isinstance(RecordingBuffer().added, Record)
    assert isinstance(RecordingAdam(ServedNetwork(0), 0.1).recorded, Record)
    assert isinstance(WitnessedEnv(make_taxi(0)).happened, RecordSet)


# --- the budget, looked at after every call the grader runs -------------------------------

def _process_with_a_lent_buffer(monkeypatch):
    """A process that was never started, lending a buffer, and a CPU clock the test sets."""
    from checks.replay_loops import RecordingBuffer

    process = StudentProcess(None, memory_mb=1024, disk_mb=16)
    buffer = RecordingBuffer()
    process._lent, process._lend_ids = {1: (buffer, lending_of(buffer))}, {id(buffer): 1}
    monkeypatch.setattr(budgets, "CHECK_INTERVAL", 0.0)  # look every time
    used = [0.0]
    process._meter = BudgetMeter(Budget(60.0), lambda: used[0])
    return process, buffer, used


def test_the_budget_is_looked_at_after_each_replayed_entry(monkeypatch):
    from grader.judge.sandbox_runtime import wire

    process, buffer, used = _process_with_a_lent_buffer(monkeypatch)
    entry = [1, "call", "add", wire.encode([1, 0, -1.0, 2, False], None), wire.encode({}, None),
             None]
    assert process._replay([entry, entry]) is None and len(buffer.added) == 2
    used[0] = 61.0  # spent while the first entry ran
    with pytest.raises(StudentProcessLost, match="timeout") as lost:
        process._replay([entry, entry])
    assert lost.value.spent.kind == "cpu"
    assert len(buffer.added) == 3  # it stopped after one


def test_the_budget_is_looked_at_after_each_served_call(monkeypatch):
    from grader.judge.sandbox_runtime import wire

    process, buffer, used = _process_with_a_lent_buffer(monkeypatch)
    buffer.add(1, 0, -1.0, 2, False)
    sent = []
    process._send = sent.append
    call = {"op": "callback", "id": 1, "lend": 1, "name": "sample",
            "args": wire.encode([1], None), "kwargs": wire.encode({}, None)}
    assert process._answer_callback(call, None) is None and "value" in sent[-1]
    too_large = {**call, "args": wire.encode([10**8], None)}
    refusal = process._answer_callback(too_large, None)
    assert refusal.startswith("sample(batch_size=100000000)") and "error" in sent[-1]
    used[0] = 61.0
    with pytest.raises(BudgetSpent):  # the request then interrupts the student's code
        process._answer_callback(call, None)
    assert len(buffer.returned) == 2 and len(sent) == 3  # it ran and answered, then stopped


# --- through the real grader: refused, fast, and nobody else is touched ---------------------

LOOP = "play_and_train_with_replay"
SAMPLE = "        for transition in [new, *zip(*replay.sample(replay_batch_size))]:"


def graded(tmp_path, lesson, answers, check):
    """(status, feedback, grader CPU seconds) of one check of a submission."""
    path = write_submission(tmp_path, lesson, answers)
    started = time.process_time()
    result = grade(path, only={check}, check_time_limit=30.0)
    return statuses(result)[check], feedback(result, check), time.process_time() - started


@pytest.mark.parametrize("swallowed", [False, True], ids=["raised", "caught"])
def test_a_huge_served_sample_is_refused_quickly(tmp_path, swallowed):
    huge = ("        try:\n            replay.sample(10**8)\n"
            "        except Exception:\n            pass\n" if swallowed else
            "        replay.sample(10**8)\n")
    answer = solution_with("02_replay_buffer", LOOP, SAMPLE, huge + SAMPLE)
    status, said, cpu = graded(tmp_path, "02_replay_buffer", {LOOP: answer}, "test_replay_loop")
    assert status == "error"
    assert ("sample(batch_size=100000000): the grader's RecordingBuffer serves at most 1,024 "
            "transitions per call") in said
    assert cpu < 5.0, f"the grader spent {cpu:.1f} s of CPU"


def test_a_correct_classmate_is_unaffected(tmp_path):
    status, said, _ = graded(tmp_path, "02_replay_buffer", {}, "test_replay_loop")
    assert status == "passed", said


def test_a_huge_deferred_call_is_refused(tmp_path):
    answer = solution_with("03_prioritized_replay", "play_and_train_with_per",
                           "replay.update_priorities(slots, td_errors)",
                           "replay.update_priorities(np.zeros(50_000, dtype=int), td_errors)")
    status, said, cpu = graded(tmp_path, "03_prioritized_replay",
                               {"play_and_train_with_per": answer}, "test_per_loop")
    assert status == "error"
    assert ("update_priorities(slots=<array of shape (50000,)>): the grader's "
            "RecordingPrioritizedBuffer takes at most 1,024 priorities per call") in said
    assert cpu < 5.0, f"the grader spent {cpu:.1f} s of CPU"


def test_a_huge_prediction_is_refused(tmp_path):
    answer = solution_with("07_neural_replay", "dqn_step",
                           "q_values = online.predict(observations)",
                           "online.predict(np.zeros((20_000, 4)))\n"
                           "    q_values = online.predict(observations)")
    status, said, cpu = graded(tmp_path, "07_neural_replay", {"dqn_step": answer},
                               "test_dqn_step")
    assert status == "error"
    assert ("predict(observations=<array of shape (20000, 4)>): the grader's ServedNetwork "
            "takes at most 16,384 numbers of observations per call") in said
    assert cpu < 5.0, f"the grader spent {cpu:.1f} s of CPU"


def test_a_recorder_called_past_its_bound_is_refused(tmp_path):
    answer = solution_with("02_replay_buffer", LOOP, "replay.add(*new)",
                           "for _i in range(100_001):\n"
                           "            replay.add(*new)\n"
                           "            if _i % 1000 == 0:\n"
                           "                len(replay)  # sends the adds so far")
    status, said, _ = graded(tmp_path, "02_replay_buffer", {LOOP: answer}, "test_replay_loop")
    assert status == "error"
    assert "your code called add more than 100,000 times in one check" in said


# --- Dask ----------------------------------------------------------------------------------

def test_local_workers_have_a_memory_limit_and_never_pause_or_spill():
    from grader.class_run.dask_cluster import grading_cluster, worker_memory_limit

    def memory_settings(dask_worker):
        import dask
        return (dask_worker.memory_manager.memory_limit,
                [dask.config.get(f"distributed.worker.memory.{name}")
                 for name in ("target", "spill", "pause", "terminate")])

    with grading_cluster(workers=1, note=lambda line: None) as client:
        workers = client.scheduler_info()["workers"]
        limits = {info["memory_limit"] for info in workers.values()}
        settings = list(client.run(memory_settings).values())
    assert limits == {worker_memory_limit(1)}
    assert settings == [(worker_memory_limit(1), [False, False, False, 0.95])]
    assert 2**30 <= worker_memory_limit(1) <= 2 * 2**30


def test_a_task_past_the_memory_limit_is_retried_once_then_reported(monkeypatch):
    from distributed import KilledWorker

    import grader.class_run.dask_cluster as cluster

    monkeypatch.setattr(cluster, "WORKER_MEMORY", 700 * 2**20)
    monkeypatch.setattr(cluster, "MIN_WORKER_MEMORY", 500 * 2**20)

    def holds_a_gigabyte():
        block = np.ones(2**30 // 8)
        time.sleep(20)
        return block.size

    with cluster.grading_cluster(workers=1, note=lambda line: None) as client:
        started = time.monotonic()
        with pytest.raises(KilledWorker):
            client.submit(holds_a_gigabyte, pure=False).result(timeout=60)
        assert time.monotonic() - started < 20  # ended by the nanny, not by finishing
        assert client.submit(len, "next", pure=False).result(timeout=60) == 4


# --- stand-ins lent by mirroring: their own bounds hold in the grader's replay ----------------

@pytest.mark.parametrize("make, call", [
    ("CountingBuffer", lambda buffer, size: buffer.sample(size)),
    ("CountingPrioritizedBuffer", lambda buffer, size: buffer.sample(size, 0.5)),
])
def test_the_counting_buffers_hand_out_at_most_their_largest_batch(make, call):
    """Mirrored objects are replayed here with the student's arguments, so a stand-in
    with a size argument refuses a large one before it makes anything."""
    import course.stand_ins as stand_ins

    buffer = getattr(stand_ins, make)()
    started = time.process_time()
    assert all(len(field) == 1024 for field in call(buffer, 1024))
    for size in (1025, 10**12, np.int64(10**12), 0, -3):
        with pytest.raises(ValueError, match="hands out 1 to 1,024 transitions"):
            call(buffer, size)
    for size in ((10**5, 10**5), [10**8], 2.0):
        with pytest.raises(ValueError, match="takes a whole number"):
            call(buffer, size)
    assert time.process_time() - started < 0.5


def test_the_scripted_agent_records_a_bounded_number_of_updates():
    from checks.stub_envs import ScriptedAgent

    agent = ScriptedAgent(0)
    for _ in range(agent.updates.calls):
        agent.update(10**6, 0, -1.0, 2, False)  # any state is one number
    with pytest.raises(ProbeError, match="more than"):
        agent.update(3, 0, -1.0, 2, False)
