"""References for lesson 08's checks: n-step parts, the n-step buffer's records, frame
stacks, generalised advantage estimation and the rollout buffer."""

import numpy as np


def n_step_parts(cases):
    """Per case: the reference's returns, discounts and steps of every window."""
    from nstep_replay import n_step_return

    found = {}
    for name, case in cases.items():
        returns, discounts, steps = n_step_return(
            np.array(case["rewards"]), np.array(case["terminated"], dtype=bool),
            np.array(case["truncated"], dtype=bool), case["discount"])
        found[name] = {"returns": returns, "discounts": discounts, "steps": steps}
    return found


def _held_records(buffer):
    """What a large sample of ``buffer`` shows: its distinct records, as the check reads
    them (observation id, action, return, discount, bootstrap id)."""
    from checks.lesson08_nstep_replay import _record_rows

    if len(buffer) == 0:
        return "raised"
    return _record_rows([field[:len(buffer)] for field in buffer.records])


def record_sequences(sequences):
    """Per sequence, what each operation shows on the reference buffer: len after an add,
    the records held for a sample."""
    from checks.lesson08_nstep_replay import _next_observation, _observation
    from nstep_replay import NStepReplayBuffer

    found = []
    for sequence in sequences:
        buffer = NStepReplayBuffer(sequence["capacity"], sequence["n"], sequence["discount"],
                                   sequence["seed"])
        added, shown = 0, []
        for operation in sequence["operations"]:
            if operation[0] == "contents":
                shown.append(_held_records(buffer))
                continue
            _, reward, terminated, truncated = operation
            buffer.add(_observation(added), added % 3, reward, _next_observation(added),
                       terminated, truncated)
            added += 1
            shown.append(len(buffer))
        found.append(shown)
    return found


def frame_transitions(inputs):
    """For the check's two fills: every transition whose stacks are whole (as the check
    reads a sampled row) and the frame each leaves from."""
    from checks.lesson08_nstep_replay import _frame
    from nstep_replay import FrameStackReplay

    found = {}
    for name, episodes in (("early", inputs["episodes"][:inputs["checkpoint"]]),
                           ("full", inputs["episodes"])):
        buffer = FrameStackReplay(inputs["capacity"], inputs["stack"], inputs["seed"])
        frame = 0
        for episode in episodes:
            buffer.start_episode(_frame(frame))
            for step in range(episode["length"]):
                ends = episode["terminated"] and step == episode["length"] - 1
                buffer.add(frame % 4, frame / 2, _frame(frame + 1), ends)
                frame += 1
            frame += 1
        numbers = buffer.sampleable()
        transitions = []
        for number in numbers:
            slot = number % buffer.capacity
            transitions.append([buffer.stack_of(number)[:, 0].tolist(),
                                int(buffer.actions[slot]), float(buffer.rewards[slot]),
                                buffer.stack_of(number + 1)[:, 0].tolist(),
                                bool(buffer.terminated[slot])])
        found[name] = {"transitions": transitions, "ends": [t[0][-1] for t in transitions]}
    return found


def _gae_variant(case, restart=True, truncation_ends_value=False):
    rewards, values = np.array(case["rewards"]), np.array(case["values"])
    next_values = np.array(case["next_values"])
    terminated = np.array(case["terminated"], dtype=bool)
    truncated = np.array(case["truncated"], dtype=bool)
    cut = terminated | truncated if truncation_ends_value else terminated
    ended = terminated | truncated
    advantages = np.zeros(values.shape)
    following = np.zeros(values.shape[1:])
    for t in reversed(range(len(rewards))):
        delta = (rewards[t] + case["discount"] * np.where(cut[t], 0.0, next_values[t])
                 - values[t])
        carried = np.where(ended[t], 0.0, following) if restart else following
        following = delta + case["discount"] * case["lam"] * carried
        advantages[t] = following
    return advantages


def gae_parts(cases):
    """Per case: the reference's advantages and returns, and the wrong advantages the hints
    recognise (no restart at an end; a truncation bootstrapped with 0)."""
    from nstep_replay import gae

    found = {}
    for name, case in cases.items():
        advantages, returns = gae(
            np.array(case["rewards"]), np.array(case["values"]), np.array(case["next_values"]),
            np.array(case["terminated"], dtype=bool), np.array(case["truncated"], dtype=bool),
            case["discount"], case["lam"])
        found[name] = {"advantages": advantages, "returns": returns,
                       "no_restart": _gae_variant(case, restart=False),
                       "truncation_as_end": _gae_variant(case, truncation_ends_value=True)}
    return found


def rollouts(inputs):
    """gae's advantages and returns of the check's two rollouts."""
    from nstep_replay import gae

    found = {}
    for name in ("first", "second"):
        rollout = inputs[name]
        advantages, returns = gae(
            np.array(rollout["rewards"]), np.array(rollout["values"]),
            np.array(rollout["next_values"]), np.array(rollout["terminated"], dtype=bool),
            np.array(rollout["truncated"], dtype=bool), inputs["discount"], inputs["lam"])
        found[name] = {"advantages": advantages, "returns": returns}
    return found
