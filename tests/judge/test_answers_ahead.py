"""Answers sent ahead of a served object's calls (checks/lending.py: predicted methods).

With the answer to one call of a predicted method, the grader sends what its object would
answer to the next ones if the student's code went on as an honest loop does. The
student's process answers a later call from them only when that call and every call
logged since the last answer are exactly the foreseen ones, and writes each such answer
to the transcript; the grader replays it on its object like any call. So:

- an honest loop waits for the grader once, and the grader's object sees every call, in
  order, as if each had waited;
- a loop that goes its own way waits again for each answer, and gets the true ones;
- an answer the grader would not give, or one for a method that is not predicted, is
  refused;
- foresight that is not used stops (it would only cost the grader time).

Lesson 01's foresight (checks/foreseen_taxi_steps.py) is held to the lesson's own loop.
"""

import pytest

from checks.lending import Served
from grader.judge.student_process import Foresight, TranscriptMismatch
from support.student_processes import student_process

BUDGET = 30.0  # CPU seconds: far more than any request here takes
STEPS = 40
LOOPS = '''
def honest(counter, x, steps):
    """The loop the counter foresees: ask, add the answer, ask again with it."""
    for _ in range(steps):
        y = counter.next(x)
        counter.add(y)
        x = y
    return x


def wanders(counter, x, steps):
    """Adds one more than it was answered every third step."""
    for step in range(steps):
        y = counter.next(x)
        counter.add(y + (step % 3 == 0))
        x = y
    return x


def adds_floats(counter, x, steps):
    """Adds what it was answered as a float: equal to the int foreseen, not the same."""
    for _ in range(steps):
        y = counter.next(x)
        counter.add(float(y))
        x = y
    return x


def pings(silent, times):
    return [silent.ping() for _ in range(times)]


def forges(counter, x):
    """Writes an answer the grader never sent into the transcript, and uses it."""
    import gc
    server = next(o for o in gc.get_objects() if type(o).__name__ == "StudentServer")
    lend_id = next(key for key, lent in server.lent.items() if lent is counter)
    server.transcript.append([lend_id, "answered", "next", [x], {"$": "dict", "items": []},
                              {"value": 999}])
    counter.add(999)
    return counter.next(999)
'''


class Counter:
    """``next(x)`` answers ``(x + total) % 1000``, ``total`` the sum of what ``add`` was
    given; it foresees the honest loop above."""

    def __init__(self):
        self.total, self.calls, self.foreseen = 0, [], 0
        self.predicting = True

    def next(self, x):
        self.calls.append(("next", x))
        return (x + self.total) % 1000

    def add(self, y):
        self.calls.append(("add", y))
        self.total += y

    def answers_ahead(self, name, args, kwargs, answer):
        self.foreseen += 1
        ahead, total, x = [], self.total, answer
        for _ in range(STEPS):
            total += x
            following = (x + total) % 1000
            ahead.append(([(self, "add", (x,), {}, None)], (x,), {}, following))
            x = following
        if not self.predicting:  # one answer, after a call the loop never makes
            return [([(self, "add", (answer + 1,), {}, None)], (answer,), {}, 0)]
        return ahead


class PredictedCounter(Counter):
    __lending__ = Served(remote=("next",), deferred=("add",), predicted=("next",))


class PlainCounter(Counter):
    __lending__ = Served(remote=("next",), deferred=("add",))


class Silent:
    """A predicted method that answers None: an answer ahead like any other."""

    __lending__ = Served(remote=("ping",), predicted=("ping",))

    def __init__(self):
        self.pinged = 0

    def ping(self):
        self.pinged += 1

    def answers_ahead(self, name, args, kwargs, answer):
        return [([], (), {}, None)] * STEPS


@pytest.fixture(scope="module")
def process():
    with student_process("01_qlearning", LOOPS, BUDGET) as process:
        yield process


def run(process, loop, counter, *args):
    """(what the loop returned, callbacks the grader answered)."""
    answered = []
    original = process._answer_callback

    def counted(incoming, poisoned):
        answered.append(incoming.get("name"))
        return original(incoming, poisoned)

    process._answer_callback = counted
    try:
        with process.budget(BUDGET):
            return process.lookup([loop])[loop](counter, *args), len(answered)
    finally:
        del process._answer_callback
        process.forget()


def run_here(loop, counter, *args):
    namespace = {}
    exec(LOOPS, namespace)  # noqa: S102 - the loops above, as the student's process runs them
    return namespace[loop](counter, *args)


def test_an_honest_loop_waits_once_and_the_object_sees_every_call(process):
    here, there = PlainCounter(), PredictedCounter()
    result, waits = run(process, "honest", there, 7, 3 * STEPS)
    assert result == run_here("honest", here, 7, 3 * STEPS)
    assert there.calls == here.calls and len(there.calls) == 6 * STEPS
    assert waits == 3  # one per STEPS answers sent ahead
    waited_for_each, waits = run(process, "honest", PlainCounter(), 7, 3 * STEPS)
    assert waited_for_each == result and waits == 3 * STEPS


def test_a_loop_that_goes_its_own_way_waits_and_gets_the_true_answers(process):
    here, there = PlainCounter(), PredictedCounter()
    result, waits = run(process, "wanders", there, 7, 30)
    assert result == run_here("wanders", here, 7, 30)
    assert there.calls == here.calls
    assert waits >= 10  # each step after a wandering add waits again


def test_a_call_equal_to_the_foreseen_one_but_of_another_type_waits(process):
    # after the first answer (an int), add(7.0) is not the foreseen add(7): the answers
    # after it are floats, so the int answers sent ahead would be refused if they were
    # used; the loop waits once more instead, and the counter then foresees floats
    here, there = PlainCounter(), PredictedCounter()
    result, waits = run(process, "adds_floats", there, 7, 20)
    assert result == run_here("adds_floats", here, 7, 20) and type(result) is float
    assert there.calls == here.calls and waits == 2


def test_an_answer_the_grader_would_not_give_is_refused(process):
    with pytest.raises(TranscriptMismatch, match="answered it otherwise"):
        run(process, "forges", PredictedCounter(), 5)


def test_an_answer_ahead_for_a_method_that_is_not_predicted_is_refused(process):
    with pytest.raises(TranscriptMismatch, match="may not call"):
        run(process, "forges", PlainCounter(), 5)


def test_foresight_that_is_never_used_stops(process):
    counter = PredictedCounter()
    counter.predicting = False  # it foresees calls the loop never makes
    result, waits = run(process, "honest", counter, 7, 200)
    assert result == run_here("honest", PlainCounter(), 7, 200) and waits == 200
    assert counter.foreseen == Foresight.TRIAL  # one answer sent ahead each, then none


def test_the_taxi_foresight_is_what_the_lessons_loop_does():
    """Foreseen from an episode's first get_action, in this process: the steps, updates
    and answers of the rest of the episode are the ones the lesson's loop then makes on
    the real agent and environment (so the foresight did not touch them either)."""
    from checks.foreseen_taxi_steps import taxi_steps_ahead
    from checks.lesson01_qlearning import LEARNING
    from checks.taxi_training import taxi_pair
    from checks.witness import ONLINE_STEPS
    from grader.judge.sandbox_runtime.wire import loose

    settings = {name: value for name, value in LEARNING.items() if name != "epsilon_decay"}
    env, witness = taxi_pair(11, **settings, allowance=ONLINE_STEPS)
    foreseen_steps = 0
    for _ in range(40):  # from exploring to solving
        env.begin_episode()
        state, _ = env.reset()
        action = witness.get_action(state)
        foreseen = taxi_steps_ahead(witness, state, action)
        happened = []
        while True:
            result = env.step(action)
            following, reward, terminated, truncated, _ = result
            calls = [("step", [action], loose(result)),
                     ("update", [state, action, reward, following, terminated])]
            witness.update(state, action, reward, following, terminated)
            if terminated or truncated:
                break
            state, action = following, witness.get_action(following)
            happened.append((calls, state, action))
        env.end_episode()
        assert [([("step", list(step[2]), loose(step[4])), ("update", list(update[2]))],
                 args[0], answer)
                for (step, update), args, _, answer in foreseen] == happened
        foreseen_steps += len(foreseen)
    assert foreseen_steps > 2000


def test_an_answer_of_none_sent_ahead_is_used_once(process):
    silent = Silent()
    answers, waits = run(process, "pings", silent, STEPS + 1)
    assert answers == [None] * (STEPS + 1) and silent.pinged == STEPS + 1 and waits == 1
