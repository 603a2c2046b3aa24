"""What probes hand to the student's training loops, and how loop checks judge an episode.

The corridor, the scripted agent and the counting buffers are lent by mirroring (see
:mod:`checks.lending`): the student's process builds its own copies (public classes of
``course``), so a 10,000-step episode never waits for the grader, and the corridor's and
the agent's calls are replayed here on the grader's own objects, whose records the
verdicts read. The counting buffers' calls are not replayed: the long run only counts
steps, which the corridor records."""

import gymnasium as gym
import numpy as np

from checks.framework import ProbeError, call_student
from checks.lending import mirrored
from checks.records import Record
from checks.requirements import Rule
from course.corridor import make_corridor  # noqa: F401 - the loop checks' environment
from course.stand_ins import CountingBuffer, CountingPrioritizedBuffer, FixedActionAgent


def timeline():
    """What a loop did with a lent corridor and agent, in order: ``("reset", seed given,
    start state)``, ``("get_action", state, action chosen)``, ``("step", action, next state)`` and
    ``("update",)`` entries (in the grader, the transcript replays the calls of both in
    the order the student's loop made them)."""
    return Record("the corridor's and the agent's methods")


class ScriptedAgent(FixedActionAgent):
    """The grader's side of a lent :class:`~course.stand_ins.FixedActionAgent`: it also
    records every ``update`` call as plain data, and with a ``timeline`` its calls there."""

    def __init__(self, action, timeline=None, epsilon=0.0):
        super().__init__(action, epsilon)
        self.updates = Record("update")
        self.retyped = Record("update")  # each update given a field of another type, shown
        self.timeline = timeline

    def get_action(self, state):
        if self.timeline is not None:
            self.timeline.append(("get_action", plain_state(state), self.action))
        return super().get_action(state)

    def update(self, state, action, reward, next_state, terminated):
        retyped = retyped_fields(state=state, action=action, next_state=next_state,
                                 terminated=terminated)
        if retyped:
            self.retyped.append(retyped)
        self.updates.append([int(state), int(action), float(reward), int(next_state),
                             bool(terminated)])
        if self.timeline is not None:
            self.timeline.append(("update",))


def retyped_fields(**fields):
    """How the fields of one transition given to ``agent.update`` (states and the action,
    ints; terminated, a bool; numpy's kinds of them too) were retyped, as text: a loop
    that passes a batch's rows through one float array (np.column_stack, np.array of the
    rows) gives 3.0 for state 3 and 1.0 for True. None if none was."""
    wrong = [f"{name}={value!r} ({type(value).__name__})" for name, value in fields.items()
             if not _kept_its_kind(name, value)]
    return ", ".join(wrong) or None


def _kept_its_kind(field, value):
    """Whether a transition's ``field`` is still a bool (terminated) or an int (the rest),
    Python's or numpy's."""
    flag = isinstance(value, (bool, np.bool_))
    return flag if field == "terminated" else isinstance(value, (int, np.integer)) and not flag


def retyped_problem(runs):
    """What the first update given retyped fields (:func:`retyped_fields`) says, over the
    runs (case -> run) whose ``"retyped"`` a loop check noted; None if none was."""
    for run in runs.values():
        if run.get("retyped"):
            return (f"agent.update was given {run['retyped'][0]}: pass each transition's "
                    "fields as they are (a state and an action are ints, terminated a bool), "
                    "not through one array of one dtype (np.column_stack or np.array of the "
                    "rows makes every field a float).")
    return None


def plain_state(value):
    """A state or action as a timeline notes it: an int, or a short repr of what is not."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return repr(value)[:40]


class TimelineCorridor(gym.Wrapper):
    """The grader's corridor, noting its resets (with whether a seed was given) and steps
    on a :func:`timeline`."""

    def __init__(self, env, timeline):
        super().__init__(env)
        self.timeline = timeline

    def reset(self, *, seed=None, options=None):
        state, info = self.env.reset(seed=seed, options=options)
        self.timeline.append(("reset", seed is not None, int(state)))
        return state, info

    def step(self, action):
        outcome = self.env.step(action)
        self.timeline.append(("step", plain_state(action), int(outcome[0])))
        return outcome


def scripted_agent(action, timeline=None):
    """An agent that always plays ``action``, lent by mirroring: its ``get_action`` and
    ``update`` calls are replayed on the :class:`ScriptedAgent` returned. Nothing of it may
    be set: a loop reads the agent and calls those two (the lessons' lending sentences).

    With a ``timeline`` its epsilon reads 1.0: a loop that explores on its own when it
    reads a high epsilon plays other actions than the agent chose, and the timeline shows
    it."""
    epsilon = 0.0 if timeline is None else 1.0
    return mirrored(FixedActionAgent, action, epsilon=epsilon, logged=("get_action", "update"),
                    original=ScriptedAgent(action, timeline, epsilon))


def counting_buffer(prioritized=False):
    """A buffer for the 10,000-step episode, lent by mirroring and never replayed."""
    return mirrored(CountingPrioritizedBuffer if prioritized else CountingBuffer)


def lent_corridor(length, time_limit, timeline=None, **rewards):
    """A corridor lent to the student's loop by mirroring: its resets and steps are
    replayed on the grader's own corridor, whose counters the verdicts read (and, with a
    ``timeline``, which notes them there). The loop may call no other method of it."""
    original = None if timeline is None else TimelineCorridor(
        make_corridor(length, time_limit, **rewards), timeline)
    return mirrored(make_corridor, length, time_limit, logged=("reset", "step"), calls=(),
                    original=original, **rewards)


def plays_as_lesson_01(loop):
    """The rule of a replay lesson's ``loop`` that its text words as "lesson 01's loop with
    another learning step": judged on a :func:`timeline` by :func:`play_order_problem`."""
    return Rule("plays-as-lesson-01", f"{loop} plays each step as lesson 01's loop does: it "
                "asks agent.get_action once, for the state the environment is in, plays the "
                "action it returns, and learns from the step before it asks again.")


def timelines_problem(runs, only_played=False):
    """:func:`play_order_problem` of each run in ``runs`` (case -> run) that noted its
    ``"order"``, the first found; None if none. Loop checks judge ``only_played`` first,
    before the episodes' lengths (which a loop that plays actions of its own changes),
    and the whole order last."""
    for run in runs.values():
        if "order" in run:
            problem = play_order_problem(run["order"], only_played)
            if problem:
                return problem
    return None


def play_order_problem(events, only_played=False):
    """What a training loop did out of a real loop's order with the corridor and the
    agent of one episode (``events``: a :func:`timeline`), as feedback; None if nothing.

    A real loop resets once, without a seed (the environment chooses the start); then, for
    each step, asks the agent once for an action for the state the environment is in,
    plays that action, and updates the agent (once or more: replayed rows count) before it
    asks again; and after the last step it asks for nothing more. With ``only_played``,
    only whether each step played the action the agent chose last (judged before the
    episode's length, which a loop that plays actions of its own changes)."""
    if only_played:
        chosen = None
        for event in events:
            if event[0] == "get_action":
                chosen = event[2]
            elif event[0] == "step":
                if chosen is None:
                    return (f"the loop stepped the environment with action {event[1]} "
                            "without asking agent.get_action for that step: play the action "
                            "get_action returns (exploring is the agent's business, not the "
                            "loop's).")
                if event[1] != chosen:
                    return (f"the loop stepped the environment with action {event[1]}, but "
                            f"the agent chose {chosen}: play the action get_action returns "
                            "(exploring is the agent's business, not the loop's).")
                chosen = None
        return None
    if not events or events[0][0] != "reset":
        return "the loop did not start with env.reset(): reset once, then play."
    state, chosen, stepped = None, None, False
    for number, event in enumerate(events):
        kind = event[0]
        if kind == "reset":
            if number:
                return ("the loop called env.reset() a second time in one episode: reset "
                        "once, at its start.")
            if event[1]:
                return ("the loop called env.reset with a seed: call env.reset() without "
                        "one, once per episode (the environment chooses where it starts; a "
                        "fixed seed would start every episode in the same state).")
            state = event[2]
        elif kind == "get_action":
            if chosen is not None:
                return ("the loop asked agent.get_action twice before one env.step: ask "
                        "once per step and play the action it returns.")
            if stepped:
                return ("the loop asked agent.get_action for the next step before it "
                        "updated the agent on the step just played: update first (the next "
                        "choice must see what the last step taught).")
            if event[1] != state:
                return (f"the loop asked agent.get_action for state {event[1]}, but the "
                        f"environment was in state {state}: ask for the state it is in.")
            chosen = event
        elif kind == "step":
            if chosen is None:
                return ("the loop called env.step without asking agent.get_action for that "
                        "step: ask the agent once before each step.")
            if event[1] != chosen[2]:
                return (f"the loop stepped the environment with action {event[1]}, but the "
                        f"agent chose {chosen[2]}: play the action get_action returns.")
            chosen, stepped, state = None, True, event[2]
        elif kind == "update":
            if chosen is not None:
                return ("the loop updated the agent between agent.get_action and env.step: "
                        "play the chosen action first, then update on that step.")
            stepped = False
    if chosen is not None:
        return ("the loop asked agent.get_action after the episode's last step: an episode "
                "that has ended asks for no more actions.")
    return None


def episode_ends_problem(length, runs, expected, walks_to_goal=("reaches_goal",),
                         total_key="total", step_reward=-1.0, goal_reward=10.0):
    """What a training loop got wrong about when a corridor episode ends and what it
    returns, as feedback; None if nothing.

    ``expected`` maps each case to (steps the episode must last, why); ``runs[case]``
    holds the steps the loop took and, under ``total_key`` when the probe recorded it,
    what the loop returned. The corridor pays ``step_reward`` a step and ``goal_reward``
    instead on the step that reaches the goal, which only the cases in ``walks_to_goal`` do (an agent walking left
    may be stopped after exactly ``length`` steps without arriving).
    """
    for case, (steps, why) in expected.items():
        run, situation = runs[case], f"in a corridor of length {length} ({case.replace('_', ' ')})"
        if run["steps"] != steps:
            return f"{situation} the loop took {run['steps']} steps; expected {steps}: {why}."
        if not reset_once_unseeded(run):
            return (f"{situation} the loop reset the environment {run['resets']} times, "
                    f"{run.get('seeded_resets')} of them with a seed; an episode starts with "
                    "one env.reset(), without a seed (the environment chooses the start; a "
                    "seed would replay the same start every episode).")
        if total_key not in run:
            continue
        total = (goal_reward + (length - 1) * step_reward if case in walks_to_goal
                 else steps * step_reward)
        if run[total_key] != total:
            return (f"{situation} the rewards of the episode's {steps} steps sum to "
                    f"{total:g}, but the loop returned {run[total_key]}: return the "
                    "episode's total reward.")
    return None


def corridor_play(env):
    """What a loop did with a lent corridor, as a verdict reads it: the steps it took and
    its resets, and how many of those were given a seed."""
    corridor = env.unwrapped
    return {"steps": corridor.steps_taken, "resets": corridor.resets,
            "seeded_resets": corridor.seeded_resets}


def reset_once_unseeded(run):
    """Whether a loop's run (as :func:`corridor_play` reads it) reset its corridor once,
    without a seed; True where the run did not record its resets."""
    return "resets" not in run or (run["resets"], run.get("seeded_resets")) == (1, 0)


def call_training_loop(description, loop, env, *args, **kwargs):
    """:func:`~checks.framework.call_student` for a training loop played on a corridor. A
    loop that the corridor stopped for running far past the episode's end (a
    :class:`~course.corridor.RunawayEpisode`) returns None: the steps it took are on the
    corridor, and its verdict judges them like any other loop's."""
    try:
        return call_student(description, loop, env, *args, **kwargs)
    except ProbeError:
        if not env.unwrapped.ran_away:
            raise
        return None


def episode_cases(time_limit, default_t_max):
    """The episodes a loop check plays: case -> (the scripted action, 1 walks to the goal;
    the corridor's time limit; t_max given, or None). t_max ends episodes that the time
    limit does not end first; the last case's time limit is past the default t_max."""
    return {"reaches_goal": (1, time_limit, None), "runs_out_of_time": (0, time_limit, None),
            "stopped_by_t_max": (0, time_limit, time_limit - 2),
            "default_t_max": (0, default_t_max + 5, None)}


def t_max_zero_problem(run, call):
    """What a loop given t_max=0 did (``run``: its ``steps``, ``add_count`` and
    ``update_count``), as the verdict says it, or None: t_max=0 plays no step."""
    if not (run["steps"] or run["add_count"] or run["update_count"]):
        return None
    return (f"{call} took {run['steps']} step(s), stored {run['add_count']} and made "
            f"{run['update_count']} update(s): t_max=0 plays no step (test the count before "
            "each step, as lesson 01's loop does; 0 is a t_max like any other, not a missing "
            "one).")


def episode_ends(length, time_limit, default_t_max):
    """The ends every loop check expects: (steps, why) by case."""
    return {"reaches_goal": (length, "the episode ends when the goal is reached (terminated)"),
            "runs_out_of_time": (time_limit, f"the time limit of {time_limit} steps truncates "
                                             "the episode (truncated ends it too)"),
            "stopped_by_t_max": (time_limit - 2, f"t_max={time_limit - 2} allows no more "
                                                 "steps"),
            "default_t_max": (default_t_max, f"called without t_max, its default "
                                             f"t_max={default_t_max:,} must stop an episode "
                                             "whose time limit is longer")}
