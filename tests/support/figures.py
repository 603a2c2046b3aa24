"""What makes a figure hard to read, found by measuring the drawn figure.

- :func:`legend_overlaps`: a legend whose box lies over plotted data (a line, a band, a
  marker, a bar) in any axes of the figure, in display coordinates after drawing.
- :func:`hidden_lines`: a line that hiding changes (almost) no pixel of, because others
  are drawn over it: the figure is rendered with and without each line.
- :func:`empty_axes`: axes with nothing plotted in them.

:func:`report_figure_problems` makes a Jupyter kernel print these, one line each, for
every figure it displays, so a notebook run can be checked for them.
"""

import io

import numpy as np
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.transforms import Bbox

PROBLEM_PREFIX = "FIGURE PROBLEM: "
RENDER_DPI = 60  # enough to see lines; quick for the many renders hidden_lines needs
# A line is hidden when hiding it changes fewer pixels than this share of those it
# changes drawn alone (a dashed line over it leaves about half of it in view).
VISIBLE_SHARE = 0.1
MIN_VISIBLE_PIXELS = 10
# A pixel shows a line when the line changes a colour channel by more than this: an
# antialiased edge of a line under another changes it by less than a quarter.
CLEARLY_CHANGED = 64
EDGE = 1.0  # pixels: a legend only touching a line at its border does not cover it


def _name(ax):
    if ax.get_title():
        return repr(ax.get_title().splitlines()[0])
    left, bottom = ax.get_position().p0
    return f"the untitled axes at ({left:.2f}, {bottom:.2f}) of the figure"


def _label(artist):
    """The legend's name for ``artist`` (a bar's is its bar chart's), else its kind."""
    label = artist.get_label()
    if label.startswith("_") and artist.axes is not None:
        label = next((container.get_label() for container in artist.axes.containers
                      if artist in container), label)
    if not label.startswith("_"):
        return label
    kinds = [(PolyCollection, "a band"), (PathCollection, "markers"),
             (LineCollection, "error bars"), (Line2D, "a line"), (Rectangle, "a bar")]
    return next((kind for cls, kind in kinds if isinstance(artist, cls)),
                type(artist).__name__)


def _data_artists(ax):
    artists = [line for line in ax.lines]
    artists += [collection for collection in ax.collections]
    artists += [patch for patch in ax.patches]
    artists += [image for image in ax.images]
    return [artist for artist in artists if artist.get_visible()]


def _covers(artist, region):
    """Whether ``artist``'s drawn data reaches into ``region`` (display coordinates)."""
    if isinstance(artist, Line2D):
        path = artist.get_transform().transform_path(artist.get_path())
        if artist.get_linestyle() in ("None", "", " ", "none"):
            return bool(region.count_contains(path.vertices))
        return path.intersects_bbox(region, filled=False) or bool(
            region.count_contains(path.vertices))
    if isinstance(artist, (PolyCollection, LineCollection)):
        transform = artist.get_transform()
        filled = isinstance(artist, PolyCollection)
        return any(transform.transform_path(path).intersects_bbox(region, filled=filled)
                   for path in artist.get_paths())
    if isinstance(artist, PathCollection):  # scatter: its markers' centres
        offsets = artist.get_offset_transform().transform(artist.get_offsets())
        return bool(region.count_contains(np.asarray(offsets)))
    return artist.get_window_extent().overlaps(region)  # bars, spans, images


def legend_overlaps(fig):
    """One sentence per legend that lies over data drawn in some axes of ``fig``."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes] + list(fig.legends)
    problems = []
    for legend in legends:
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            region = Bbox.intersection(box, ax.get_window_extent(renderer))
            if region is None or region.width <= 2 * EDGE or region.height <= 2 * EDGE:
                continue  # the legend is outside these axes: it covers nothing drawn there
            region = Bbox.from_extents(region.x0 + EDGE, region.y0 + EDGE,
                                       region.x1 - EDGE, region.y1 - EDGE)
            covered = [artist for artist in _data_artists(ax) if _covers(artist, region)]
            if covered:
                what = ", ".join(sorted({_label(artist) for artist in covered}))
                problems.append(f"the legend of {_name(legend.axes)} covers data in "
                                f"{_name(ax)}: {what}")
    return problems


def _pixels(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="rgba", dpi=RENDER_DPI)
    return np.frombuffer(buffer.getvalue(), dtype=np.uint8)


def _changed_pixels(before, after):
    difference = np.abs(before.astype(np.int16) - after.astype(np.int16)).reshape(-1, 4)
    return int(np.count_nonzero(difference.max(axis=1) > CLEARLY_CHANGED))


def _curves(ax):
    """The lines of ``ax`` that show data: not the caps of error bars (a cap may sit under
    its own marker when an interval has no width)."""
    caps = {id(cap) for container in ax.containers
            if isinstance(container, ErrorbarContainer) for cap in container.lines[1]}
    return [line for line in ax.lines if id(line) not in caps]


def hidden_lines(fig):
    """One sentence per line of ``fig`` that other artists hide: hiding it changes few
    pixels of the rendered figure, against what it changes drawn on its own. Each axes
    is rendered on its own (the others hidden), which is quicker for figures of many
    panels; lines of overlaid axes (twins) are not measured against each other."""
    legends = [legend for legend in [ax.get_legend() for ax in fig.axes] + list(fig.legends)
               if legend is not None and legend.get_visible()]
    shown_axes = [ax for ax in fig.axes if ax.get_visible()]
    problems = []
    for legend in legends:  # its sample lines would show a line the plot hides
        legend.set_visible(False)
    try:
        for ax in shown_axes:
            for other in shown_axes:
                other.set_visible(other is ax)
            problems += _hidden_lines_of(ax, fig)
    finally:
        for ax in shown_axes:
            ax.set_visible(True)
        for legend in legends:
            legend.set_visible(True)
    return problems


def _hidden_lines_of(ax, fig):
    lines = [line for line in _curves(ax) if line.get_visible()]
    if not lines:
        return []
    artists = _data_artists(ax)
    full = _pixels(fig)
    for artist in artists:
        artist.set_visible(False)
    empty = _pixels(fig)
    problems = []
    try:
        for line in lines:
            line.set_visible(True)
            drawn_alone = _changed_pixels(_pixels(fig), empty)
            for artist in artists:
                artist.set_visible(artist is not line)
            hidden_by_others = _changed_pixels(full, _pixels(fig))
            for artist in artists:
                artist.set_visible(False)
            if drawn_alone and hidden_by_others < max(MIN_VISIBLE_PIXELS,
                                                      VISIBLE_SHARE * drawn_alone):
                problems.append(f"in {_name(ax)}, the line {_label(line)!r} is hidden: "
                                f"{hidden_by_others} of its {drawn_alone} pixels show")
    finally:
        for artist in artists:
            artist.set_visible(True)
    return problems


def empty_axes(fig):
    return [f"{_name(ax)} has nothing plotted" for ax in fig.axes
            if ax.get_visible() and ax.axison and not _data_artists(ax)]


def figure_problems(fig):
    return empty_axes(fig) + legend_overlaps(fig) + hidden_lines(fig)


def report_figure_problems():
    """In a Jupyter kernel: print a line starting with PROBLEM_PREFIX for each problem of
    each figure displayed from now on (before it is drawn as PNG)."""
    import matplotlib.pyplot as plt
    from IPython import get_ipython
    from matplotlib.figure import Figure

    # pyplot loads its backend, which registers the kernel's PNG formatter, with the first
    # figure: make one, so that the formatter is there to wrap
    plt.close(plt.figure())
    formatter = get_ipython().display_formatter.formatters["image/png"]
    draw_png = formatter.lookup_by_type(Figure)

    def checked_png(fig, *args, **kwargs):
        for problem in figure_problems(fig):
            print(PROBLEM_PREFIX + problem)
        return draw_png(fig, *args, **kwargs)

    formatter.for_type(Figure, checked_png)
