"""Every number lesson 06's sentences quote from its ten-seed study is the study's, on
both seed sets, and says only what the intervals resolve.

The lesson's "What to expect" and its model conclusion quote paired differences over ten
seeds as mean [95% t-interval], the notebook's seeds first and, after a slash, the fresh
seeds 10-19 (two sentences also quote 20-29). ``tests/lessons/records/lesson06_study.json``
holds every run of the study on those thirty seeds (early and late mean return per run),
made by ``benchmarks/capstone_record.py`` from the notebook's own study code;
``test_claims_lesson06.py::test_the_record_holds_what_the_study_computes`` reruns three
seeds of each set and requires the record to hold exactly their numbers.

For each quote below: it is in the lesson word for word; every number in it is the
record's, to the digits it shows; and what the sentence says of it holds on every set it
quotes: "ahead" (the interval's low end above 0), "behind", "cannot tell" (the interval
holds 0) or "one set only" (resolved on one set and not the other: "not settled", "not
the same on both sets"). And no interval in those two cells is left out of this list.
"""

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from course.plotting import mean_and_band
from grader.lessons import all_lessons

RECORD = json.loads((Path(__file__).parent / "records" / "lesson06_study.json").read_text())
CELLS = ("What to expect", "conclusion")  # the markdown cells whose numbers are checked
SETS = ("notebook", "fresh", "more")


@cache
def lesson_text():
    """The two cells' text, each a run of words with single spaces."""
    texts = []
    for cell in all_lessons()["06_capstone"].source().cells:
        source = cell.source
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id == "conclusion" or source.startswith("**What to expect.**"):
            texts.append(" ".join(source.split()))
    assert len(texts) == len(CELLS), "the lesson's two cells of numbers were not found"
    return " ".join(texts)


def returns(environment, setting, part, seed_set):
    runs = RECORD["runs"][environment][setting]
    return np.array([runs[str(seed)][part] for seed in RECORD["seed_sets"][seed_set]])


def mean_and_interval(values):
    """Mean and 95% t-interval over seeds, as the notebook's confidence_interval."""
    mean, half = mean_and_band(values[:, None])
    return mean[0], mean[0] - half[0], mean[0] + half[0]


@dataclass(frozen=True)
class Paired:
    """treatment minus control, seed by seed, in one window."""
    environment: str
    treatment: str
    control: str
    part: str

    def values(self, seed_set):
        return (returns(self.environment, self.treatment, self.part, seed_set)
                - returns(self.environment, self.control, self.part, seed_set))


@dataclass(frozen=True)
class Alone:
    """One setting's return in one window."""
    environment: str
    setting: str
    part: str

    def values(self, seed_set):
        return returns(self.environment, self.setting, self.part, seed_set)


@dataclass(frozen=True)
class Quote:
    """``text``, word for word in the lesson, quotes ``measures``: for each, on each of
    ``sets`` in turn, the mean and its interval (``interval``) or the mean alone; with
    ``set_first``, each set's measures in turn instead. ``says`` is what the sentence
    says of each measure's interval on those sets."""
    text: str
    measures: tuple
    sets: tuple = ("notebook", "fresh")
    interval: bool = True
    says: str | None = None
    set_first: bool = False

    def expected(self):
        """The numbers the text should show, in its order."""
        pairs = [(measure, seed_set) for measure in self.measures for seed_set in self.sets]
        if self.set_first:
            pairs = [(measure, seed_set) for seed_set in self.sets
                     for measure in self.measures]
        numbers = []
        for measure, seed_set in pairs:
            mean, low, high = mean_and_interval(measure.values(seed_set))
            numbers += [mean, low, high] if self.interval else [mean]
        return numbers


def P(environment, treatment, control, part="early"):
    return Paired(environment, treatment, control, part)


C, T = "CartPole", "Taxi"
U, UO, NR = "uniform", "uniform + online", "no replay"

QUOTES = [
    # the replay kinds: Taxi's means
    Quote("−713 and −626 against −396", (Alone(T, U, "early"), Alone(T, "PER", "early"),
                                          Alone(T, NR, "early")), sets=("notebook",),
          interval=False),
    Quote("−140 and −72 against −9", (Alone(T, U, "late"), Alone(T, "PER", "late"),
                                       Alone(T, NR, "late")), sets=("notebook",),
          interval=False),
    Quote("CER starts ahead (−340)", (Alone(T, "CER", "early"),), sets=("notebook",),
          interval=False),
    Quote("near the optimum (6.1)", (Alone(T, "CER", "late"),), sets=("notebook",),
          interval=False),
    Quote("(−344, −324, −339)", tuple(Alone(T, name, "early") for name in (
        UO, "CER + online", "PER + online")), sets=("notebook",), interval=False),
    # CartPole
    Quote("PER's near it (91 and 88", (Alone(C, "PER", "early"),
                                        Alone(C, "PER + online", "early")),
          sets=("notebook",), interval=False),
    Quote("/ 98 and 86, replay only", (Alone(C, "PER", "early"),
                                        Alone(C, "PER + online", "early")),
          sets=("fresh",), interval=False),
    Quote("+17 [11, 23] / +16 [6, 25]", (P(C, UO, NR),), says="ahead"),
    Quote("+8 [−1, 16] / +10 [−2, 21]", (P(C, "PER", NR),), says="cannot tell"),
    Quote("+5 [−0.2, 9] / −2 [−10, 7]", (P(C, "PER + online", NR),), says="cannot tell"),
    Quote("+27 [17, 38] and +11 [3, 18]", (P(C, "PER", NR), P(C, "PER + online", NR)),
          sets=("more",), says="ahead"),
    Quote("290 [212, 367] / 287 [203, 370]", (Alone(C, NR, "late"),)),
    Quote("+34 [−49, 117] / +35 [−52, 122]", (P(C, NR, UO, "late"),), says="cannot tell"),
    Quote("+131 [39, 223]", (P(C, NR, UO, "late"),), sets=("more",), says="ahead"),
    # reuse
    Quote("−396, −361, −344, −313", tuple(Alone(T, name, "early") for name in (
        NR, "uniform + online, 2 updates", UO, "uniform + online, 8 updates")),
        sets=("notebook",), interval=False),
    Quote("−388, −365, −325, −302", tuple(Alone(T, name, "early") for name in (
        NR, "uniform + online, 2 updates", UO, "uniform + online, 8 updates")),
        sets=("fresh",), interval=False),
    Quote("+17 [−7, 42] / +40 [27, 54]", (P(T, UO, "uniform + online, 2 updates"),),
          says="one set only"),
    Quote("+17 / +16", (P(C, UO, NR),), interval=False, says="ahead"),
    Quote("+16 [9, 24] / +6 [−3, 16]", (P(C, "uniform + online, 2 updates", NR),),
          says="one set only"),
    Quote("+1 [−7, 9] / +9 [2, 16]", (P(C, UO, "uniform + online, 2 updates"),),
          says="one set only"),
    Quote("(−4 [−10, 1] / −5 [−11, 2])", (P(C, "uniform + online, 8 updates", UO),),
          says="cannot tell"),
    # recency
    Quote("+370 and +373 (/ +389 and +385)", (P(T, UO, U), P(T, "CER", U)), interval=False,
          says="ahead", set_first=True),
    Quote("+19 [1, 37] / −7 [−19, 5]", (P(T, "CER + online", UO),), says="one set only"),
    Quote("(−0.2 [−0.5, 0.2] / −0.3 [−0.7, 0.1])", (P(T, "CER + online", UO, "late"),),
          says="cannot tell"),
    Quote("−2 [−9, 5] / +9 [2, 15]", (P(C, UO, U),), says="one set only"),
    Quote("+28 [6, 51] / +13 [−17, 43]", (P(C, UO, U, "late"),), says="one set only"),
    Quote("+38 [16, 61] / +2 [−32, 35]", (P(C, "CER", U, "late"),), says="one set only"),
    # decorrelation
    Quote("+1 [−25, 28] / +15 [3, 27]", (P(T, "uniform + online, 8 updates",
                                             "window + online, 8 updates"),),
          says="one set only"),
    Quote("+2 [−5, 10] / +4 [−3, 12]", (P(C, "uniform + online, 8 updates",
                                            "window + online, 8 updates"),),
          says="cannot tell"),
    # focus
    Quote("+4 [−11, 19] / −13 [−28, 2]", (P(T, "PER + online", UO),), says="cannot tell"),
    Quote("+87 / +113", (P(T, "PER", U),), interval=False, says="ahead"),
    Quote("−13 [−19, −6] / −17 [−24, −11]", (P(C, "PER + online", UO),), says="behind"),
    Quote("−63 [−93, −32] / −71 [−96, −45]", (P(C, "PER + online", UO, "late"),),
          says="behind"),
    Quote("−23 / −24", (P(C, "unweighted PER + online", UO),), interval=False,
          says="behind"),
    # the model conclusion: the notebook's seeds, and a few of the fresh ones
    Quote("+370 [350, 389]", (P(T, UO, U),), sets=("notebook",), says="ahead"),
    Quote("+373 [350, 396]", (P(T, "CER", U),), sets=("notebook",), says="ahead"),
    Quote("+35 [19, 51]", (P(T, "uniform + online, 2 updates", NR),), sets=("notebook",),
          says="ahead"),
    Quote("+31 [11, 51]", (P(T, "uniform + online, 8 updates", UO),), sets=("notebook",),
          says="ahead"),
    Quote("+17 [−7, 42], is too small for these ten seeds, though +40 [27, 54]",
          (P(T, UO, "uniform + online, 2 updates"),), says="one set only"),
    Quote("(+1 [−25, 28] on Taxi, +15 [3, 27] on ten other seeds",
          (P(T, "uniform + online, 8 updates", "window + online, 8 updates"),),
          says="one set only"),
    Quote("+2 [−5, 10] on CartPole", (P(C, "uniform + online, 8 updates",
                                         "window + online, 8 updates"),),
          sets=("notebook",), says="cannot tell"),
    Quote("(+4 [−11, 19]; −13 [−28, 2] on ten other seeds)", (P(T, "PER + online", UO),),
          says="cannot tell"),
    Quote("(+17 over none; +16 on ten other seeds)", (P(C, UO, NR),), interval=False,
          says="ahead"),
    Quote("what an eighth added (−4 [−10, 1])", (P(C, "uniform + online, 8 updates", UO),),
          sets=("notebook",), says="cannot tell"),
    Quote("cannot tell it late (−0.2 [−0.5, 0.2])", (P(T, "CER + online", UO, "late"),),
          sets=("notebook",), says="cannot tell"),
    Quote("+87 [65, 109]", (P(T, "PER", U),), sets=("notebook",), says="ahead"),
    Quote("−13 [−19, −6] early, −63 [−93, −32] late",
          (P(C, "PER + online", UO), P(C, "PER + online", UO, "late")), sets=("notebook",),
          says="behind"),
    Quote("−23 [−28, −18]", (P(C, "unweighted PER + online", UO),), sets=("notebook",),
          says="behind"),
    Quote("+11 [2, 19] early here, +6 [−1, 14]", (P(C, "PER + online",
                                                   "unweighted PER + online"),),
          says="one set only"),
    Quote("+19 [1, 37] early, an interval that barely clears 0, and −7 [−19, 5]",
          (P(T, "CER + online", UO),), says="one set only"),
    Quote("+34 [−49, 117] late (+35 [−52, 122] on ten other seeds, though +131 [39, 223]",
          (P(C, NR, UO, "late"),), sets=SETS, says="one set only"),
]

NUMBER = re.compile(r"[+−-]?\d+(?:\.\d+)?")
INTERVAL = re.compile(r"[+−-]?\d+(?:\.\d+)? \[[^\]]*\]")


def shown(token):
    """(value, half a unit of its last digit) of a number as the text shows it."""
    decimals = len(token.split(".")[1]) if "." in token else 0
    return float(token.replace("−", "-").lstrip("+")), 0.5 * 10.0 ** -decimals


def test_the_record_holds_every_run_of_the_study_on_thirty_seeds():
    assert RECORD["seed_sets"] == {"notebook": list(range(10)), "fresh": list(range(10, 20)),
                                   "more": list(range(20, 30))}
    for environment, settings in RECORD["runs"].items():
        assert len(settings) == 11, environment  # the notebook's SETTINGS
        for name, runs in settings.items():
            assert sorted(map(int, runs)) == list(range(30)), (environment, name)


@pytest.mark.parametrize("quote", QUOTES, ids=lambda quote: quote.text[:40])
def test_a_quoted_number_is_the_studys_to_the_digits_it_shows(quote):
    assert quote.text in lesson_text(), "not in the lesson word for word"
    # numbers that belong to the words, not the measures ("clears 0", "ten more")
    tokens = [token for token in NUMBER.findall(quote.text)
              if not re.search(rf"(clears|barely) {re.escape(token)}\b", quote.text)]
    expected = quote.expected()
    assert len(tokens) == len(expected), (tokens, expected)
    for token, value in zip(tokens, expected):
        number, tolerance = shown(token)
        assert abs(number - value) <= tolerance + 1e-9, (token, round(value, 3))


@pytest.mark.parametrize("quote", [quote for quote in QUOTES if quote.says],
                         ids=lambda quote: quote.text[:40])
def test_a_sentence_says_only_what_the_intervals_resolve(quote):
    for measure in quote.measures:
        resolved = []
        for seed_set in quote.sets:
            _, low, high = mean_and_interval(measure.values(seed_set))
            resolved.append("ahead" if low > 0 else "behind" if high < 0 else "cannot tell")
        if quote.says == "one set only":
            assert "cannot tell" in resolved and len(set(resolved)) > 1, resolved
        else:
            assert set(resolved) == {quote.says}, resolved


def test_every_interval_the_cells_quote_is_checked():
    text = lesson_text()
    covered = [(found.start(), found.end()) for quote in QUOTES
               for found in re.finditer(re.escape(quote.text), text)]
    missing = [found.group() for found in INTERVAL.finditer(text)
               if not any(start <= found.start() and found.end() <= end
                          for start, end in covered)]
    assert missing == []


def test_only_uniform_replay_with_the_online_update_is_ahead_of_no_replay_on_both_sets():
    # "paired by seed only uniform replay with the online update is ahead on both sets"
    for kind in ("uniform", "uniform + online", "CER", "CER + online", "PER", "PER + online"):
        lows = [mean_and_interval(P(C, kind, NR).values(seed_set))[1]
                for seed_set in ("notebook", "fresh")]
        assert (min(lows) > 0) == (kind == "uniform + online"), (kind, lows)


def test_each_doubling_of_taxis_updates_clears_0_on_at_least_one_set_not_always_on_both():
    # "each doubling's interval clears 0 on at least one set, not always on both"
    steps = [(NR, "uniform + online, 2 updates"), ("uniform + online, 2 updates", UO),
             (UO, "uniform + online, 8 updates")]
    lows = [[mean_and_interval(P(T, treatment, control).values(seed_set))[1]
             for seed_set in ("notebook", "fresh")] for control, treatment in steps]
    assert all(max(pair) > 0 for pair in lows), lows
    assert not all(min(pair) > 0 for pair in lows), lows
