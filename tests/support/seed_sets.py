"""Each lesson's claims are checked twice: on the notebook's own seeds, and on a set of
seeds the notebook never uses, so that a sentence true of one lucky set fails its test.

``seed_sets(lesson)`` gives the two as pytest parameters ("notebook" and "fresh"), each in
an xdist group of its own: the runs of one set stay on one worker (cached there), and
the two sets can go to different workers.
"""

import pytest

SET_NAMES = ("notebook", "fresh")


def seed_sets(lesson):
    """pytest params for a ``seed_set`` fixture or argument, one per set of seeds."""
    return [pytest.param(name, id=name,
                         marks=pytest.mark.xdist_group(f"claims-{lesson}-{name}"))
            for name in SET_NAMES]


def each_seed_set(lesson):
    """Parametrize a test's ``seed_set`` argument over both sets."""
    return pytest.mark.parametrize("seed_set", seed_sets(lesson))


def each_seed(lesson, seeds_by_set):
    """Parametrize a test's ``seed`` argument over the seeds of both sets
    (``{"notebook": seeds, "fresh": seeds}``), each seed in its set's xdist group."""
    return pytest.mark.parametrize("seed", [
        pytest.param(seed, id=f"{name}-{seed}",
                     marks=pytest.mark.xdist_group(f"claims-{lesson}-{name}"))
        for name in SET_NAMES for seed in seeds_by_set[name]])
