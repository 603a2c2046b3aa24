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
    """Per sequence, what each operation shows on the reference buffer (len after an add,
    the records held for a sample) and the operation at which each transition became a
    record."""
    from checks.lesson08_nstep_replay import _next_observation, _observation
    from nstep_replay import NStepReplayBuffer

    found = []
    for sequence in sequences:
        buffer = NStepReplayBuffer(sequence["capacity"], sequence["n"], sequence["discount"],
                                   sequence["seed"])
        added, shown, completed_at, written = 0, [], {}, 0
        for position, operation in enumerate(sequence["operations"]):
            if operation[0] == "contents":
                shown.append(_held_records(buffer))
                continue
            _, reward, terminated, truncated = operation
            buffer.add(_observation(added), added % 3, reward, _next_observation(added),
                       terminated, truncated)
            added += 1
            # records are written oldest first: transitions written..added-waiting-1 now
            waiting = len(buffer.pending)
            for transition in range(written, added - waiting):
                completed_at[str(transition)] = position
            written = added - waiting
            shown.append(len(buffer))
        found.append({"shown": shown, "completed_at": completed_at})
    return found


def frame_transitions(inputs):
    """For the check's fills: every transition whose two stacks are whole in the ring
    (as the check reads a sampled row: frame numbers of the stacks, action, reward, next
    frame numbers, terminated) and the frame each leaves from. Frame f is stored f-th, in
    slot f % capacity; a stack ending at f holds f - stack + 1 .. f, each number raised to
    its episode's first frame; a stack is whole while every frame it holds is among the
    newest ``capacity`` stored."""
    from checks.lesson08_nstep_replay import frame_fills

    capacity, stack = inputs["capacity"], inputs["stack"]
    found = {}
    for name, episodes in frame_fills(inputs).items():
        starts, steps, frame = {}, [], 0  # steps: (f, action, reward, terminated)
        for episode in episodes:
            starts[frame] = frame
            for step in range(episode["length"]):
                ends = episode["terminated"] and step == episode["length"] - 1
                steps.append((frame, frame % 4, frame / 2, ends))
                starts[frame + 1] = starts[frame]
                frame += 1
            frame += 1
        stored = frame
        oldest = max(0, stored - capacity)

        def numbers(f, starts=starts):
            return [max(k, starts[f]) for k in range(f - stack + 1, f + 1)]

        transitions = [[numbers(f), action, reward, numbers(f + 1), ended]
                       for f, action, reward, ended in steps
                       if min(numbers(f)) >= oldest]
        found[name] = {"transitions": transitions, "ends": [t[0][-1] for t in transitions],
                       "starts": [starts[t[0][-1]] for t in transitions]}
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
