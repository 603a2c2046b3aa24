"""The course's figures show all their data: no legend over it, no line hidden under
another, no empty axes. The measures (tests/support/figures.py) are tested here on
figures made to have each problem, on the course's plotting helpers and on the feedback
pages' bar chart; the lessons' own figures are measured as the solution notebooks run
(tests/lessons/test_notebooks_execute.py).
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from checks.framework import comparison  # noqa: E402
from course.plotting import legend_beside, plot_learning_curves  # noqa: E402
from grader.outputs.feedback_pages import comparison_figure  # noqa: E402
from tests.support.figures import empty_axes, hidden_lines, legend_overlaps  # noqa: E402

EPISODES = np.arange(200)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def rising(level, seeds=3, seed=0):
    """(seeds, episodes) returns that rise from -100 towards ``level``, with noise."""
    rng = np.random.default_rng(seed)
    curve = level - (level + 100) * np.exp(-EPISODES / 40)
    return curve + rng.normal(0, 3, size=(seeds, EPISODES.size))


def test_a_legend_over_a_line_is_found_and_one_beside_the_axes_is_not():
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(EPISODES, np.linspace(0, 1, EPISODES.size), label="diagonal")
    ax.legend(loc="center")
    assert legend_overlaps(fig) and "diagonal" in legend_overlaps(fig)[0]
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))
    assert legend_overlaps(fig) == []


def test_a_legend_over_a_line_that_only_crosses_it_is_found():
    # a horizontal reference line has two points, both far outside the legend
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(EPISODES, np.where(EPISODES < 100, 0.0, 1.0), label="step")
    ax.axhline(0.5, color="black", linestyle="--", label="reference")
    ax.legend(loc="center")
    assert "reference" in " ".join(legend_overlaps(fig))


def test_a_legend_over_a_bar_or_a_band_is_found_and_one_in_empty_space_is_not():
    fig, (bars, band) = plt.subplots(1, 2, figsize=(10, 4))
    bars.bar([0, 1, 2], [1.0, 1.0, 1.0], label="heights")
    bars.set_ylim(0, 1.05)
    bars.legend(loc="upper right")  # over the top of the last bar
    band.fill_between(EPISODES, -1, 1, alpha=0.2, label="band")
    band.plot(EPISODES, np.full(EPISODES.size, 5.0), label="above")
    band.set_ylim(-2, 6)
    band.legend(loc="lower right")  # over the band's lower part
    problems = legend_overlaps(fig)
    assert len(problems) == 2, problems
    bars.set_ylim(0, 2.5)  # room above the bars
    band.legend(loc="center right")  # between the band and the line above it
    assert legend_overlaps(fig) == []


def test_a_legend_that_spills_over_a_neighbouring_panel_is_found():
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(EPISODES, EPISODES, label="a label long enough to reach the next panel")
    right.plot(EPISODES, np.full(EPISODES.size, 100.0), label="flat")
    left.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))  # into the right panel
    assert "flat" in " ".join(legend_overlaps(fig))


def test_a_line_drawn_exactly_over_another_is_hidden_and_a_dashed_one_is_not():
    fig, ax = plt.subplots(figsize=(6, 4))
    values = np.sin(EPISODES / 20)
    ax.plot(EPISODES, values, label="under")
    ax.plot(EPISODES, values, label="over")
    assert [problem for problem in hidden_lines(fig) if "'under'" in problem]
    assert not [problem for problem in hidden_lines(fig) if "'over'" in problem]
    ax.lines[1].set_linestyle("--")
    assert hidden_lines(fig) == []


def test_axes_with_nothing_plotted_are_empty():
    fig, (used, unused) = plt.subplots(1, 2)
    used.plot([0, 1], [0, 1])
    unused.set_title("a skipped experiment")
    assert empty_axes(fig) == ["'a skipped experiment' has nothing plotted"]


def test_learning_curves_that_reach_the_same_values_stay_visible_beside_their_legend():
    # methods that all solve the task end on the same curve; a long legend with a title
    curves = {"method with a long name, A": rising(8.0, seed=0),
              "method with a long name, B": rising(8.0, seed=0),  # the same runs
              "method with a long name, C": rising(8.0, seed=1),
              "method with a long name, D": rising(-20.0, seed=2)}
    ax = plot_learning_curves(curves, window=10, reference=(8.0, "optimum"),
                              title="four methods")
    fig = ax.figure
    assert legend_overlaps(fig) == []
    assert hidden_lines(fig) == []
    assert empty_axes(fig) == []


def test_learning_curves_in_a_grid_of_panels_keep_their_legends_off_each_other():
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    for ax in axes.flat:
        plot_learning_curves({"uniform": rising(8.0), "PER": rising(4.0, seed=3),
                              "CER": rising(6.0, seed=4)},
                             window=10, ax=ax, title="a panel", symlog=True)
        legend_beside(ax, below=True, fontsize="small")
    fig.tight_layout()
    assert legend_overlaps(fig) == []


def test_a_feedback_page_s_bars_are_not_under_their_legend():
    # every bar reaches nearly to the top of the axes: no room for a legend inside them
    figure = comparison("Taxi start states solved greedily (mean over seeds)", "share solved",
                        groups=[0, 1, 2, 3, 4],
                        series={"your buffer": [0.9, 0.95, 1.0, 1.0, 1.0],
                                "the course's buffer": [0.92, 1.0, 0.97, 1.0, 0.98]})
    fig = comparison_figure(figure)
    assert legend_overlaps(fig) == []
    assert empty_axes(fig) == []
