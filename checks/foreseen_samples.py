"""A buffer under test whose samples are foreseen: the course's Taxi loop with the student's
buffer (lessons 02 and 05) without a round trip per step.

The loop runs in the grader, with the grader's reference agent (an answer: it never enters
the student's process), and the buffer runs in the student's process: each step stores its
transition, then samples a batch the agent learns from, so each step needs the buffer's
answer before the next. Yet a replay buffer's choices rarely depend on *what* it stores,
only on how much it holds and on its own generator. So the student's process forks a
*foresight* of the buffer before its first call (the student server's ``ForkAhead``),
which makes the same calls, step after step, but stores numbered placeholders (the n-th
has state ``PLACEHOLDER + n``, a state no Taxi transition has): each of its samples names
which of the run's transitions the real sample will return. The grader runs its loop on
those batches, the placeholders filled in with the transitions its environment produced,
and plans every add and sample it would have made; with the next round trip, the
student's buffer makes exactly those calls, in order, in the very forms
:func:`~checks.framework.call_student` would have given them, and the grader holds each
answer to its contract and requires each batch to be the one it used.

Where the whole loop is the course's public code (lesson 03's Blind Cliffwalk, whose
"agent" is a Q-table and a public update), the fork runs that loop itself on its copy of
the buffer, priorities and all, and its answers are the buffer's answers to come
(:class:`ForeseenLoop`).

Anything else (a call that raised or broke its contract, an answer not as foreseen, a row
the witnesses refuse) ends the foreseen run: :func:`foreseen_or_redone` puts back the
student's global generators and the contracts' counts and redoes the run from its start
the ordinary way, a round trip per step, where every call is judged and reported as it
always was.
"""

import itertools

import numpy as np

from checks.framework import (CallsUnsettled, call_in_sequence, contract_calls_made,
                              planned_call, restore_contract_calls, student_process_of)
from checks.witness import TAXI_FIELDS, BufferUnderTest, taxi_batch

PLACEHOLDER = 500  # Taxi's states are 0..499
# the n-th placeholder stored: (state, action, reward, next state, done) = FIRST + n * STEP
FIRST, STEP = (PLACEHOLDER, 0, 0.0, PLACEHOLDER, False), (1, 0, 0.0, 1, False)
AHEAD = 512  # steps foreseen per round trip

_foresights = itertools.count(1)


def foreseen_or_redone(near, run):
    """``run(foreseen=True)`` where the student's process of ``near`` (an object of it)
    can foresee its buffer; if that run does not go as foreseen, whatever happened, it is
    redone as ``run(foreseen=False)`` from its start, with the student's global
    generators and the contracts' counts as they were when it began. In a notebook (no
    student process), ``run(foreseen=False)``."""
    process = student_process_of(near)
    if process is None:
        return run(foreseen=False)
    counted = contract_calls_made()
    process.generators()  # kept, for a run that is redone
    try:
        return run(foreseen=True)
    except Exception:  # noqa: BLE001 - whatever it was, the ordinary run says it as ever
        restore_contract_calls(counted)
        process.generators(restore=True)
        process.take_changed_arguments()  # what the foreseen run's calls were told of
        return run(foreseen=False)


class PlannedCalls:
    """Calls of a student's buffer the grader made on foreseen answers, each with the
    answer it used (None for a call made for its effect), made for real later, in one
    round trip, by :meth:`make`."""

    def __init__(self, same):
        self.planned = []
        self.same = same  # same(real answer, answer used): whether it was as foreseen

    def add(self, call, used=None):
        self.planned.append((call, used))

    def make(self, call=None, foresee=None):
        """Make the planned calls, then ``call`` if given: ``(its result, foreseen)``.
        Raises :class:`CallsUnsettled` if a call was not answered as foreseen."""
        calls = [planned for planned, _ in self.planned] + ([call] if call else [])
        if not calls:
            return None, None
        results, foreseen = call_in_sequence(calls, foresee)
        used = [used for planned, used in self.planned if not planned.effect_only]
        for answer, result in zip(used, results, strict=False):
            if not self.same(result, answer):
                raise CallsUnsettled("an answer was not the one foreseen")
        self.planned = []
        return (results[-1] if call else None), foreseen


class Foresight:
    """One foresight of the student's process (its ``ForkAhead``): what to ask it for
    with the next sequence of calls, and the answers it gave, by number (the n-th call it
    foresees). It is asked for ``AHEAD`` answers at a time; once it gives fewer than
    asked (a call raised, or the fork is gone), it is asked no more."""

    def __init__(self):
        self.id, self.started, self.ended = next(_foresights), False, False
        self.played = 0  # answers it gave
        self.answers = {}  # number -> an answer not used yet

    def request(self, number, start):
        """The ``foresee`` of the sequence that makes call ``number`` (``start``: what its
        fork is started with, the first time), or None once it is asked no more."""
        if self.ended:
            return None
        foresee = {"id": self.id, "until": number + 1 + AHEAD}
        if not self.started:
            foresee.update(start=True, **start)
            self.started = True
        return foresee

    def take(self, answers, number, until):
        """Keep ``answers`` (the ones asked for up to ``until``, numbered from those
        already played) for the calls after ``number``."""
        self.answers.update((self.played + k, answer) for k, answer in enumerate(answers)
                            if self.played + k > number)
        self.played += len(answers)
        self.ended = self.played < until


class ForeseenSamples(BufferUnderTest):
    """The student's ``buffer`` as the course's Taxi loop uses it, its samples foreseen;
    :meth:`finish` makes the calls still planned. Raises :class:`CallsUnsettled` when
    the run cannot go on as foreseen."""

    def __init__(self, buffer, env, batch_size):
        super().__init__(buffer, env, batch_size)
        self.planned = PlannedCalls(_same_batch)
        self.transitions = []  # every one stored in the run, in order: placeholder n's
        self.steps = 0  # samples so far: the number of the next one
        self.foresight = Foresight()  # its answers: the placeholder numbers each returns

    def add(self, obs_t, action, reward, obs_tp1, done):
        self.planned.add(planned_call("add(obs_t, action, reward, obs_tp1, done)",
                                      self.buffer.add, obs_t, action, reward, obs_tp1, done,
                                      effect_only=True))
        self.transitions.append((obs_t, action, reward, obs_tp1, done))

    def sample(self, batch_size):
        self._charge_sample(batch_size)
        call = planned_call(f"sample({batch_size})", self.buffer.sample, batch_size)
        step, self.steps = self.steps, self.steps + 1
        numbers = self.foresight.answers.pop(step, None)
        if numbers is None:
            batch = self._made(call, batch_size, step)
        else:
            batch = self._filled_in(numbers)
            self.planned.add(call, batch)
        return self._witnessed(batch, batch_size)

    def finish(self):
        """Make the calls still planned (the run's last steps), checked as ever."""
        self.planned.make()

    def _made(self, call, batch_size, step):
        """The planned calls and ``call`` (the sample of ``step``) made; the batch it
        returned. Asks the foresight for the steps after it."""
        foresee = self.foresight.request(step, dict(
            target=self.buffer, add="add", sample="sample", sample_args=[batch_size],
            first=FIRST, step=STEP))
        result, foreseen = self.planned.make(call, foresee)
        if foresee is not None:
            self.foresight.take(_foreseen_numbers(foreseen, self.foresight.played), step,
                                foresee["until"])
        return taxi_batch(result, batch_size)

    def _filled_in(self, numbers):
        """The batch of the run's transitions ``numbers``, in Taxi's types."""
        if max(numbers) >= len(self.transitions):  # one not stored yet: not an honest batch
            raise CallsUnsettled("a batch foreseen holds a transition to come")
        rows = [self.transitions[number] for number in numbers]
        # what taxi_batch makes of a sample that returns them (the environment's own)
        return tuple(np.array(column, dtype=dtype)
                     for (_, dtype), column in zip(TAXI_FIELDS, zip(*rows)))


def _same_batch(result, used):
    """Whether a sample's real answer is, as Taxi's batch, the batch used."""
    try:
        made = taxi_batch(result, len(used[0]))
    except Exception:  # noqa: BLE001 - not a batch: the ordinary way says what it is
        return False
    return all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(made, used))


class ForeseenLoop:
    """The student's prioritized buffer as the course's Blind Cliffwalk loop uses it
    (``learn_from_replay`` on a memory of ``n`` and ``seed``, ``max_updates`` updates,
    ``beta``), its answers foreseen by the same loop run on a fork of the student's
    process; ``update_priorities`` and ``sample`` are made for real a few hundred at a
    time. :meth:`finish` makes the calls still planned."""

    def __init__(self, buffer, function, n, seed, max_updates, beta):
        self.buffer = buffer
        self.function, self.loop_args = function, [n, seed, max_updates, beta]
        self.planned = PlannedCalls(_same_answer)
        self.samples = 0  # samples so far: the number of the next one
        self.foresight = Foresight()  # its answers: the samples' own

    def sample(self, batch_size, beta):
        call = planned_call(f"sample({batch_size}, beta={beta})", self.buffer.sample,
                            batch_size, beta)
        number, self.samples = self.samples, self.samples + 1
        answer = self.foresight.answers.pop(number, None)
        if answer is not None:
            self.planned.add(call, answer)
            return answer
        foresee = self.foresight.request(number, dict(
            kind="loop", target=self.buffer, sample="sample",
            function=[self.function.__module__, self.function.__qualname__],
            args=self.loop_args))
        answer, foreseen = self.planned.make(call, foresee)
        if foresee is not None:
            self.foresight.take(foreseen or [], number, foresee["until"])
        return answer

    def update_priorities(self, slots, td_errors):
        self.planned.add(planned_call("update_priorities(slots, td_errors)",
                                      self.buffer.update_priorities, slots, td_errors,
                                      effect_only=True))

    def finish(self):
        self.planned.make()


def _same_answer(result, used):
    """Whether a call's real answer is the one used, in types, shapes and bytes."""
    from grader.judge.sandbox_runtime import wire  # the grader's: only it foresees

    digest = wire.digest(result)
    return digest is not None and digest == wire.digest(used)


def _foreseen_numbers(answers, first):
    """For each sample the foresight answered (``answers``: arrays (fields, rows), the
    first of them step ``first``), the numbers of the placeholders it returned, up to the
    first that is not a batch of placeholders stored by then."""
    batches = []
    first_fields = np.array(FIRST, dtype=np.float64)[:, None]
    steps = np.array(STEP, dtype=np.float64)
    for step, fields in enumerate(answers or (), start=first):
        if not (isinstance(fields, np.ndarray) and fields.ndim == 2
                and fields.shape[0] == len(FIRST) and fields.shape[1]):
            break
        numbers = fields[0] - PLACEHOLDER
        if not (np.array_equal(fields, first_fields + np.outer(steps, numbers))
                and np.all(numbers == np.round(numbers)) and 0 <= numbers.min()
                and numbers.max() <= step):
            break
        batches.append(numbers.astype(np.int64).tolist())
    return batches
