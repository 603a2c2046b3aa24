"""Checks for lesson 05: combined experience replay and the CartPole discretiser."""


import numpy as np

from checks.expected import expected as reference
from checks.framework import (Callee, Check, LessonChecks, ProbeError, call_student, comparison,
                              failed, outcome_of, passed, value_error_problem, wrong_amount)
from checks.lesson01_qlearning import AGENT
from checks.lesson02_replay_buffer import (BUFFER, RecordingBuffer, driven_by, replay_loop_inputs,
                                           sampled_ids, transition)
from checks.statistics import FALSE_FAILURE_RATE, describe_counts, fits
from checks.stub_envs import (call_training_loop, counting_buffer, episode_cases,
                              episode_ends, episode_ends_problem, lent_corridor,
                              scripted_agent)

LESSON = "05_combined_replay"


def _new_buffer(CombinedReplayBuffer, capacity, seed):
    return call_student(f"CombinedReplayBuffer({capacity})", CombinedReplayBuffer, capacity,
                        seed=seed)


def _add(buffer, k):
    call_student("add(obs_t, action, reward, obs_tp1, done)", buffer.add, *transition(k))


# --- the newest transition, exactly once ---------------------------------------------------

def _newest_inputs(rng):
    capacity = int(rng.integers(5, 30))
    return {"capacity": capacity, "additions": capacity + int(rng.integers(1, 2 * capacity)),
            "batch_size": int(rng.integers(2, 40)), "seed": int(rng.integers(2**31))}


def _newest_probe(inputs, CombinedReplayBuffer):
    buffer = _new_buffer(CombinedReplayBuffer, inputs["capacity"], inputs["seed"])
    batches = []
    for k in range(inputs["additions"]):
        _add(buffer, k)
        if k >= 1:  # from two stored transitions on
            batches.append(sampled_ids(buffer, inputs["batch_size"]))
    return {"batches": batches}


def _newest_verdict(inputs, data):
    capacity, batch = inputs["capacity"], inputs["batch_size"]
    problem = wrong_amount("batches", data["batches"], inputs["additions"] - 1)
    if problem:
        return problem
    for newest, ids in enumerate(data["batches"], start=1):
        if len(ids) != batch:
            return failed(f"with {min(newest + 1, capacity)} transitions stored, sample({batch}) "
                          f"returned {len(ids)} rows; a batch has batch_size rows.")
        count = ids.count(newest)
        if count != 1:
            situation = (f"after adding transitions 0..{newest} to CombinedReplayBuffer("
                         f"{capacity}), sample({batch}) held the newest, {newest}, ")
            return failed(situation + ("not at all: put the newest transition in every batch."
                                       if count == 0 else
                                       f"{count} times: exactly once, and draw the other "
                                       f"{batch - 1} from the transitions stored before it."))
        kept = range(max(0, newest + 1 - capacity), newest + 1)
        strays = [i for i in ids if i not in kept]
        if strays:
            return failed(f"after adding 0..{newest} to CombinedReplayBuffer({capacity}), a "
                          f"batch held {'a mixed-up row' if strays[0] == -1 else f'transition {strays[0]}'}"
                          ", which is not stored.")
    return passed("every batch holds the newest transition exactly once, also after the "
                  "buffer is full.")


# --- the rest of the batch, uniform ------------------------------------------------------------

def _rest_inputs(rng):
    stored = int(rng.integers(4, 12))
    return {"capacity": stored + int(rng.integers(0, 10)), "stored": stored,
            "batch_size": int(rng.integers(8, 33)), "draws_per_item": 300,
            "seed": int(rng.integers(2**31))}


def _rest_probe(inputs, CombinedReplayBuffer):
    buffer = _new_buffer(CombinedReplayBuffer, inputs["capacity"], inputs["seed"])
    for k in range(inputs["stored"]):
        _add(buffer, k)
    needed = (inputs["stored"] - 1) * inputs["draws_per_item"]
    rest = []
    while len(rest) < needed:
        ids = sampled_ids(buffer, inputs["batch_size"])
        newest = inputs["stored"] - 1
        if newest in ids:
            ids.remove(newest)  # the one that must be there; the test above checks it
        rest.extend(ids)
    return {"rest": rest[:needed]}


def _rest_verdict(inputs, data):
    others = list(range(inputs["stored"] - 1))
    problem = wrong_amount("draws", data["rest"], len(others) * inputs["draws_per_item"])
    if problem:
        return problem
    strays = [i for i in data["rest"] if i not in others]
    if strays:
        return failed(f"with transitions 0..{len(others)} stored, the rest of a batch held "
                      f"{'the newest again' if strays[0] == len(others) else f'transition {strays[0]}'}: "
                      f"draw the other rows from the {len(others)} transitions before the newest.")
    counts = [data["rest"].count(i) for i in others]
    uniform = [1 / len(others)] * len(others)
    if not fits(counts, uniform):
        return failed("the rest of each batch should be drawn uniformly from the older "
                      "transitions, but: " + describe_counts(counts, uniform,
                                                             [f"#{i}" for i in others]) + ".")
    return passed(f"besides the newest, batches are uniform over the older transitions "
                  f"(chi-square, rejection rate {FALSE_FAILURE_RATE:g}).")


# --- one transition stored; errors ------------------------------------------------------------

def _single_inputs(rng):
    return {"batch_size": int(rng.integers(2, 20)), "bad_size": -int(rng.integers(0, 5)),
            "seed": int(rng.integers(2**31))}


def _single_probe(inputs, CombinedReplayBuffer):
    empty = _new_buffer(CombinedReplayBuffer, 10, inputs["seed"])
    one = _new_buffer(CombinedReplayBuffer, 10, inputs["seed"])
    _add(one, 7)
    tiny = _new_buffer(CombinedReplayBuffer, 1, inputs["seed"])
    for k in range(3):
        _add(tiny, k)
    several = _new_buffer(CombinedReplayBuffer, 10, inputs["seed"])
    for k in range(5):
        _add(several, k)
    return {"one": sampled_ids(one, inputs["batch_size"]),
            "batch_of_one": sampled_ids(several, 1),
            "capacity_one": sampled_ids(tiny, inputs["batch_size"]),
            "errors": [["sample(1) on an empty buffer", outcome_of(empty.sample, 1)],
                       [f"sample({inputs['bad_size']})",
                        outcome_of(one.sample, inputs["bad_size"])]]}


def _single_verdict(inputs, data):
    batch = inputs["batch_size"]
    if data["one"] != [7]:
        return failed(f"with one transition stored, sample({batch}) returned transitions "
                      f"{data['one'][:6]}: the batch is the newest transition, once, and "
                      "nothing else (there is nothing older to draw).")
    if data["capacity_one"] != [2]:
        return failed(f"a CombinedReplayBuffer(1) holding only transition 2 returned "
                      f"{data['capacity_one'][:6]} for sample({batch}): with capacity 1, CER "
                      "is online learning, one update on the newest transition.")
    if data["batch_of_one"] != [4]:
        return failed(f"sample(1) on a buffer holding transitions 0 to 4 returned "
                      f"{data['batch_of_one'][:6]}; a batch of one is the newest transition, "
                      "4, alone (batch_size=1 is valid).")
    problem = wrong_amount("outcomes", data["errors"], 2)
    if problem:
        return problem
    for call, outcome in data["errors"]:
        problem = value_error_problem(call, outcome, ", as lesson 02's buffer does")
        if problem:
            return problem
    return passed("one stored transition gives a batch of one, and bad calls raise "
                  "ValueError.")


# --- the loop that learns only from replay -------------------------------------------------------

DEFAULT_T_MAX = 10_000  # the default the signature gives


def _loop_probe(inputs, play_and_train_from_replay):
    outcome = {}
    limit = inputs["time_limit"]
    for case, (action, time_limit, t_max) in episode_cases(limit, DEFAULT_T_MAX).items():
        env = lent_corridor(inputs["length"], time_limit)
        long_run = case == "default_t_max"
        agent = scripted_agent(action)
        buffer = counting_buffer() if long_run else RecordingBuffer()
        batch_size = 1 if long_run else inputs["batch_size"]
        extra = {} if t_max is None else {"t_max": t_max}
        total = call_training_loop(
            f"play_and_train_from_replay(env, agent, replay, {batch_size}"
            + ("" if t_max is None else f", t_max={t_max}") + ")",
            play_and_train_from_replay, env, agent, buffer, batch_size, **extra)
        if case == "default_t_max":  # 10,000 steps: only how many
            outcome[case] = {"steps": env.unwrapped.steps_taken}
            continue
        outcome[case] = {"steps": env.unwrapped.steps_taken, "updates": agent.updates,
                         "added": buffer.added, "returned": buffer.returned,
                         "total": float(total) if isinstance(total, (int, float)) else None}
    return outcome


def _loop_verdict(inputs, data):
    batch, length, limit = inputs["batch_size"], inputs["length"], inputs["time_limit"]
    problem = episode_ends_problem(length, data, episode_ends(length, limit, DEFAULT_T_MAX))
    if problem:
        return failed(problem)
    for case in ("reaches_goal", "runs_out_of_time", "stopped_by_t_max"):
        run = data[case]
        steps = run["steps"]
        if len(run["added"]) != steps:
            return failed(f"the episode took {steps} steps but replay.add was called "
                          f"{len(run['added'])} times: store every transition once.")
        if [len(rows) for rows in run["returned"]] != [batch] * steps:
            return failed(f"expected one replay.sample({batch}) per step, after storing the "
                          f"step's transition, {steps} in this {steps}-step episode; got "
                          f"{len(run['returned'])} batch(es) of sizes "
                          f"{[len(rows) for rows in run['returned']]}.")
        expected = [row for rows in run["returned"] for row in rows]
        if run["updates"] != expected:
            extra = len(run["updates"]) - len(expected)
            return failed("the agent should learn only from the sampled batches, one update "
                          "per row, in order" + (f"; it made {extra} update(s) more, as if "
                                                 "it also learned online from each step: "
                                                 "with CER the newest transition is already "
                                                 "in the batch." if extra > 0 else "."))
    if not data["reaches_goal"]["added"][-1][4]:
        return failed("the last transition reached the goal but was stored with done=False.")
    if any(row[4] for row in data["runs_out_of_time"]["added"]):
        return failed("an episode cut by the time limit was stored with done=True: store "
                      "`terminated`.")
    return passed("each step stores the transition and learns only from one sampled batch.")


# --- the discretiser ---------------------------------------------------------------------------

def _discretiser_inputs(rng):
    # dyadic bounds and bin widths: every edge is exact in binary floating point
    bins = [int(b) for b in rng.choice([1, 2, 4, 8], size=3)]
    lows = [float(-2 ** int(e)) for e in rng.integers(0, 3, size=3)]
    highs = [float(2 ** int(e)) for e in rng.integers(0, 3, size=3)]
    return {"bins": bins, "lows": lows, "highs": highs,
            "points": rng.uniform(-6, 6, size=(60, 3)).round(3).tolist()}


def _edge_points(inputs):
    """Observations exactly on every bin edge of each dimension (others at the middle)."""
    lows, highs, bins = (np.array(inputs[key], dtype=float) for key in ("lows", "highs", "bins"))
    middle = (lows + highs) / 2
    points = []
    for dim in range(len(bins)):
        for k in range(int(bins[dim]) + 1):
            point = middle.copy()
            point[dim] = lows[dim] + k * (highs[dim] - lows[dim]) / bins[dim]
            points.append(point.tolist())
    return points


OUTSIDE = [[-100.0, 0.0, 100.0], [100.0, -100.0, 0.0]]


def _points(case, inputs):
    return {"edges": _edge_points(inputs), "random": inputs["points"],
            "outside": OUTSIDE}[case]


def _discretiser_probe_for(case):
    """A probe that discretises only the points of ``case``, so a crash on one kind of
    point costs only its own check."""
    def probe(inputs, discretize):
        lows, highs, bins = (np.array(inputs[key]) for key in ("lows", "highs", "bins"))
        values = []
        for point in _points(case, inputs):
            value = call_student(f"discretize({point}, lows, highs, bins)", discretize,
                                 np.array(point), lows, highs, bins)
            if not isinstance(value, (int, np.integer)):
                raise ProbeError(f"discretize returned {type(value).__name__}; return one "
                                 "int, the index of the observation's cell.")
            values.append(int(value))
        return {case: values}
    return probe


def _discretiser_verdict_for(case, explanation, success):
    def verdict(inputs, data):
        lows, highs, bins = inputs["lows"], inputs["highs"], inputs["bins"]
        points = _points(case, inputs)
        problem = wrong_amount("indices", data.get(case, []), len(points))
        if problem:
            return problem
        wanted = reference(LESSON, "bins_of", points, lows, highs, bins)
        for point, got, want in zip(points, data[case], wanted):
            if got != want:
                return failed(f"with lows {lows}, highs {highs} and bins {bins}, "
                              f"discretize({point}) returned {got}; expected {want}. "
                              + explanation)
        return passed(success)
    return verdict


# --- learning: CER does not collapse with a large buffer ----------------------------------------

LEARNING = dict(capacity=100_000, batch_size=8, episodes=100, alpha=0.5, epsilon=0.25,
                discount=0.99, epsilon_decay=0.99)
MIN_GAIN = 0.2  # reference CER ~0.82 vs uniform ~0.35 after 100 episodes


def _learning_inputs(rng):
    return {"seeds": rng.integers(2**31, size=2).tolist(), **LEARNING}


def train_taxi_from_replay(buffer, loop, seed, episodes, batch_size, alpha, epsilon, discount,
                           epsilon_decay, called="the course's loop that learns from replay"):
    """The reference agent's Q-table after ``episodes`` of Taxi, trained by ``loop(env,
    agent, buffer, batch_size)``, which learns only from ``buffer``'s batches."""
    from checks.taxi_training import train_buffer_on_taxi

    return train_buffer_on_taxi(buffer, loop, seed, [episodes], batch_size, 0, alpha, epsilon,
                                discount, epsilon_decay, called=called)[0]


def _learning_probe(inputs, CombinedReplayBuffer, play_and_train_from_replay=None):
    """The student's buffer, driven by the course's loop that learns only from replay,
    trains the grader's reference agent on the grader's Taxi (the student's loop is
    judged by test_replay_only_loop; only a notebook of the student edition, which lacks
    the course's loop, runs its own here)."""
    from checks.taxi_training import course_loop

    loop, whose = course_loop(LESSON, play_and_train_from_replay, "play_and_train_from_replay")
    settings = {k: inputs[k] for k in LEARNING if k != "capacity"}
    called = ("the course's loop that learns from replay" if whose == "course" else
              f"play_and_train_from_replay(env, agent, replay, {inputs['batch_size']})")
    return {"qtables": [train_taxi_from_replay(
        _new_buffer(CombinedReplayBuffer, inputs["capacity"], seed), loop, seed, **settings,
        called=called).tolist() for seed in inputs["seeds"]], "loop": whose}


def _learning_baseline(inputs):
    return reference(LESSON, "uniform_success", inputs["seeds"],
                     {k: inputs[k] for k in LEARNING})


def _learning_verdict(inputs, data):
    from course.taxi import evaluate_qtable

    problem = wrong_amount("Q-tables", data["qtables"], len(inputs["seeds"]))
    if problem or {np.shape(q) for q in data["qtables"]} != {(500, 6)}:
        return problem or failed("expected one (500, 6) Q-table per seed.")
    yours = float(np.mean([evaluate_qtable(np.asarray(q, dtype=np.float64)).success_rate
                           for q in data["qtables"]]))
    uniform = _learning_baseline(inputs)
    summary = (f"after {inputs['episodes']} Taxi episodes with a buffer of "
               f"{inputs['capacity']:,} transitions, learning only from replay, the greedy "
               f"policy solves {yours:.0%} of the start states with {driven_by(data)} against "
               f"{uniform:.0%} with uniform replay (mean of {len(inputs['seeds'])} seeds)")
    figure = comparison(f"Taxi start states solved greedily after {inputs['episodes']} "
                        f"episodes, replay only, buffer {inputs['capacity']:,}", "share solved",
                        [f"mean of {len(inputs['seeds'])} seeds"],
                        {driven_by(data).replace("your buffer", "your CER"): [yours],
                         "uniform replay": [uniform]})
    if yours < uniform + MIN_GAIN:
        return failed(summary + f". CER should be at least {MIN_GAIN:.0%} ahead: every new "
                      "transition is learned from at once, however large the buffer.",
                      figure=figure)
    return passed(summary + ".", figure=figure)


CHECKS = LessonChecks(LESSON, [
    Check("test_cer_newest_exactly_once", "the newest transition in every batch",
          ("CombinedReplayBuffer",), _newest_inputs, _newest_probe, _newest_verdict,
          calls=(BUFFER,),
          asks="The newest transition is in every batch, exactly once."),
    Check("test_cer_rest_uniform", "the rest of the batch is uniform",
          ("CombinedReplayBuffer",), _rest_inputs, _rest_probe, _rest_verdict,
          calls=(BUFFER,),
          asks="The other rows are uniform over the older transitions (chi-square)."),
    Check("test_cer_single_transition", "one stored transition, and errors",
          ("CombinedReplayBuffer",), _single_inputs, _single_probe, _single_verdict,
          calls=(BUFFER,),
          asks="One stored transition gives a batch of one; ValueError for bad calls."),
    Check("test_replay_only_loop", "play_and_train_from_replay",
          ("play_and_train_from_replay",), replay_loop_inputs, _loop_probe, _loop_verdict,
          asks="Store each step, learn only from one sampled batch per step."),
    Check("test_discretize_edges", "discretiser: bin edges", ("discretize",),
          _discretiser_inputs, _discretiser_probe_for("edges"), _discretiser_verdict_for(
              "edges", "A value on an inner edge belongs to the bin above it (floor), the "
              "lower bound to bin 0 and the upper bound to the last bin.",
              "values on every bin edge and on both bounds land in the right bins."),
          asks="Values on bin edges, and the bounds."),
    Check("test_discretize_clipping", "discretiser: clipping", ("discretize",),
          _discretiser_inputs, _discretiser_probe_for("outside"), _discretiser_verdict_for(
              "outside", "Values outside [low, high] are clipped into it first, so they "
              "fall in the first or last bin.",
              "values beyond the bounds are clipped into the first or last bin."),
          asks="Values outside the bounds go to the first or last bin."),
    Check("test_discretize_bins", "discretiser: combining bins", ("discretize",),
          _discretiser_inputs, _discretiser_probe_for("random"), _discretiser_verdict_for(
              "random", "Per dimension b = floor((x - low) / (high - low) * bins); the cells "
              "are numbered row-major, the last dimension fastest (np.ravel_multi_index).",
              "random observations get the right row-major cell numbers."),
          asks="Bins of each dimension, numbered row-major."),
    Check("test_cer_learning", "CER with a large buffer on Taxi", ("CombinedReplayBuffer",),
          _learning_inputs, _learning_probe, _learning_verdict, time_limit=60.0,
          learning=True, prepare=_learning_baseline,
          stand_ins=("play_and_train_from_replay",),
          calls=(BUFFER, AGENT,
                 Callee("play_and_train_from_replay", LESSON, ("test_replay_only_loop",))),
          asks="Your CER, driven by the course's loop, trains the reference agent (buffer 100,000), against uniform replay."),
])
