"""Learning curves over seeds: a mean line and a 95% confidence band around it; legends
beside the axes, where they cover no data."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.transforms import offset_copy

# Each curve gets its own line style and markers, so a curve that runs along another
# (two methods that both reach the optimum) still shows where the other is drawn over it.
LINE_STYLES = ["-", "--", "-.", ":"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
MARKS_PER_CURVE = 10
GAP_INCHES = 0.08  # between the axes (their tick labels and axis label) and a legend


def moving_average(values, window):
    """Average of the last ``window`` episodes at each episode (shorter at the start)."""
    values = np.asarray(values, dtype=np.float64)
    cumulative = np.cumsum(values, axis=-1)
    shifted = np.zeros_like(cumulative)
    shifted[..., window:] = cumulative[..., :-window]
    counts = np.minimum(np.arange(1, values.shape[-1] + 1), window)
    return (cumulative - shifted) / counts


def mean_and_band(curves, confidence=0.95):
    """Mean over seeds (axis 0) and the half-width of a t confidence interval for it."""
    curves = np.asarray(curves, dtype=np.float64)
    n_seeds = curves.shape[0]
    mean = curves.mean(axis=0)
    if n_seeds < 2:
        return mean, np.zeros_like(mean)
    # scipy.stats takes half a second to import: only a drawn band pays it, not the
    # start-up of every notebook and of every sandbox the grader starts
    from scipy import stats

    sem = curves.std(axis=0, ddof=1) / np.sqrt(n_seeds)
    return mean, sem * stats.t.ppf(0.5 + confidence / 2, df=n_seeds - 1)


BAND_NOTE = "bands: 95% t-interval of the mean over seeds"


def plot_learning_curves(curves_by_method, window=20, ax=None, title=None,
                         ylabel="episode return", reference=None, ylim=None, bounds=None,
                         symlog=False):
    """Plot ``{method: array (seeds, episodes)}`` as smoothed means with 95% bands.

    ``reference`` is an optional ``(value, label)`` drawn as a dashed line, e.g. the
    optimal return. ``bounds`` = (lowest, highest) possible return clips the bands to
    what can happen (a t-band over three seeds can reach past CartPole's 500).
    ``ylim`` should not hide the early episodes, where methods differ most: with
    ``symlog`` the axis shows both Taxi's first -700s and its final +8 readably.
    The legend says what the bands are; it is beside the axes (:func:`legend_beside`
    moves it under them, for panels side by side), and each curve has its own line
    style and markers.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4.5))
    for index, (method, curves) in enumerate(curves_by_method.items()):
        smoothed = moving_average(curves, window)
        mean, half_width = mean_and_band(smoothed)
        episodes = np.arange(1, mean.size + 1)
        n_seeds = np.asarray(curves).shape[0]
        seeds = f"{n_seeds} seed" + ("s" if n_seeds != 1 else "")
        (line,) = ax.plot(episodes, mean, label=f"{method} ({seeds})",
                          **distinct_style(index, len(curves_by_method), mean.size))
        low, high = mean - half_width, mean + half_width
        if bounds is not None:
            low, high = np.clip(low, *bounds), np.clip(high, *bounds)
        ax.fill_between(episodes, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    if reference is not None:
        value, label = reference
        ax.axhline(value, color="black", linestyle="--", linewidth=1, label=label)
    ax.set_xlabel("episode")
    ax.set_ylabel(f"{ylabel} (mean of last {window})")
    if symlog:
        ax.set_yscale("symlog", linthresh=10)
    if ylim is not None:
        ax.set_ylim(*ylim)
    if title:
        ax.set_title(title)
    legend_beside(ax, title=BAND_NOTE, title_fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def distinct_style(index, count, points):
    """Line style and markers of curve ``index`` of ``count``, each curve's markers at
    other points than the others' (``points`` long curves), so none hides another."""
    every = max(1, points // MARKS_PER_CURVE)
    return {"linestyle": LINE_STYLES[index % len(LINE_STYLES)],
            "marker": MARKERS[index % len(MARKERS)], "markersize": 5,
            "markevery": (every * index // max(1, count), every)}


def legend_beside(ax, below=False, **options):
    """``ax``'s legend outside the axes, so it covers none of their data: to their right,
    or ``below`` them under their tick labels and axis label (for panels side by side).
    ``options`` go to ``ax.legend`` (title, fontsize...)."""
    if not below:
        return ax.legend(loc="upper left", bbox_to_anchor=(1, 1), borderaxespad=0,
                         bbox_transform=offset_copy(ax.transAxes, fig=ax.figure,
                                                    x=GAP_INCHES, units="inches"),
                         **options)
    figure = ax.figure
    old = ax.get_legend()
    if old is not None:
        old.remove()  # measured without it: it is what moves
    figure.draw_without_rendering()
    drawn = ax.get_tightbbox()  # the axes with their tick labels and axis label
    axes_bottom = ax.get_window_extent().y0
    depth = (axes_bottom - drawn.y0) / figure.dpi + GAP_INCHES
    options.setdefault("ncols", 2)
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0), borderaxespad=0,
                     bbox_transform=offset_copy(ax.transAxes, fig=figure, y=-depth,
                                                units="inches"),
                     **options)
