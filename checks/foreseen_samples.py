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

Anything else (a call that raised or broke its contract, a batch not as foreseen, a row
the witnesses refuse) ends the foreseen run: the caller
(:func:`checks.taxi_training.train_buffer_on_taxi`) puts back the student's global
generators and the contracts' counts and redoes the run from its start the ordinary way,
a round trip per step, where every call is judged and reported as it always was.
"""

import itertools

import numpy as np

from checks.framework import CallsUnsettled, call_in_sequence, planned_call
from checks.witness import TAXI_FIELDS, BufferUnderTest, taxi_batch

PLACEHOLDER = 500  # Taxi's states are 0..499
# the n-th placeholder stored: (state, action, reward, next state, done) = FIRST + n * STEP
FIRST, STEP = (PLACEHOLDER, 0, 0.0, PLACEHOLDER, False), (1, 0, 0.0, 1, False)
AHEAD = 512  # steps foreseen per round trip

_foresights = itertools.count(1)


class ForeseenSamples(BufferUnderTest):
    """The student's ``buffer`` as the course's Taxi loop uses it, its samples foreseen;
    :meth:`finish` makes the calls still planned. Raises :class:`CallsUnsettled` when
    the run cannot go on as foreseen."""

    def __init__(self, buffer, env, batch_size):
        super().__init__(buffer, env, batch_size)
        # calls the grader made here and the buffer has yet to make, each with the batch
        # a sample was given here (None for an add)
        self.planned = []
        self.transitions = []  # every one stored in the run, in order: placeholder n's
        self.steps = 0  # samples so far: the number of the next one
        self.foreseen = {}  # step -> the placeholder numbers its sample returns
        self.played = 0  # steps the foresight has answered for
        self.foresight, self.started, self.ended = next(_foresights), False, False

    def add(self, obs_t, action, reward, obs_tp1, done):
        self.planned.append((planned_call("add(obs_t, action, reward, obs_tp1, done)",
                                          self.buffer.add, obs_t, action, reward, obs_tp1,
                                          done, effect_only=True), None))
        self.transitions.append((obs_t, action, reward, obs_tp1, done))

    def sample(self, batch_size):
        self._charge_sample(batch_size)
        call = planned_call(f"sample({batch_size})", self.buffer.sample, batch_size)
        step, self.steps = self.steps, self.steps + 1
        numbers = self.foreseen.pop(step, None)
        if numbers is None:
            batch = self._made(call, batch_size, step)
        else:
            batch = self._filled_in(numbers)
            self.planned.append((call, batch))
        return self._witnessed(batch, batch_size)

    def finish(self):
        """Make the calls still planned (the run's last steps), checked as ever."""
        if self.planned:
            results, _ = call_in_sequence([call for call, _ in self.planned])
            self._settle(results)
            self.planned = []

    def _made(self, call, batch_size, step):
        """The planned calls and ``call`` (the sample of ``step``) made; the batch it
        returned. Asks the foresight for the steps after it."""
        foresee = None
        if not self.ended:
            foresee = {"id": self.foresight, "until": step + 1 + AHEAD}
            if not self.started:
                foresee.update(start=True, target=self.buffer, add="add", sample="sample",
                               sample_args=[batch_size], first=FIRST, step=STEP)
                self.started = True
        results, foreseen = call_in_sequence([planned for planned, _ in self.planned] + [call],
                                             foresee)
        self._settle(results[:-1])
        self.planned = []
        if foresee is not None:
            self._take(foreseen, step, foresee["until"])
        return taxi_batch(results[-1], batch_size)

    def _take(self, answers, step, until):
        """Keep what the foresight answered for the steps after ``step``; foresee no more
        once it answered for fewer than asked (a call raised, or it is gone)."""
        batches = _foreseen_numbers(answers, self.played)
        for number, numbers in enumerate(batches, start=self.played):
            if number > step:
                self.foreseen[number] = numbers
        self.played += len(batches)
        if self.played < until:
            self.ended = True

    def _settle(self, results):
        """Each planned sample's answer (``results``, in order) is the batch used here."""
        used_batches = [used for _, used in self.planned if used is not None]
        for used, result in zip(used_batches, results, strict=True):
            try:
                made = taxi_batch(result, len(used[0]))
            except Exception as error:  # not a batch: the ordinary way says what it is
                raise CallsUnsettled(str(error)) from None
            if not all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(made, used)):
                raise CallsUnsettled("a sample was not the batch foreseen")

    def _filled_in(self, numbers):
        """The batch of the run's transitions ``numbers``, in Taxi's types."""
        if max(numbers) >= len(self.transitions):  # one not stored yet: not an honest batch
            raise CallsUnsettled("a batch foreseen holds a transition to come")
        rows = [self.transitions[number] for number in numbers]
        # what taxi_batch makes of a sample that returns them (the environment's own)
        return tuple(np.array(column, dtype=dtype)
                     for (_, dtype), column in zip(TAXI_FIELDS, zip(*rows)))


def _foreseen_numbers(answers, first):
    """For each sample the foresight answered (``answers``: arrays (fields, rows), the
    first of them step ``first``), the numbers of the placeholders it returned, up to the
    first that is not a batch of placeholders stored by then."""
    batches = []
    first_fields = np.array(FIRST, dtype=np.float64)[:, None]
    steps = np.array(STEP, dtype=np.float64)
    for step, fields in enumerate(answers or (), start=first):
        if fields.ndim != 2 or fields.shape[0] != len(FIRST) or not fields.shape[1]:
            break
        numbers = fields[0] - PLACEHOLDER
        if not (np.array_equal(fields, first_fields + np.outer(steps, numbers))
                and np.all(numbers == np.round(numbers)) and 0 <= numbers.min()
                and numbers.max() <= step):
            break
        batches.append(numbers.astype(np.int64).tolist())
    return batches
