"""Figure helpers shared by every paper's figures: a figure on an Agg canvas (never pyplot,
never a display), saving as PNG, the check that a result table has the columns a figure
needs, and the marks every figure draws alike: a paired difference with its 95 % t-interval
(:func:`paired_panel`; :func:`limit_to_reliable` keeps cells resting on few pairs from setting
the axis), points resting on fewer released (or converged) fits than attempted
(:func:`mark_incomplete`), and a table read back from beside the figure's PNG
(:func:`beside`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from scipy import stats

__all__ = [
    "INTERVAL_NOTE",
    "PairedMarks",
    "beside",
    "incomplete_legend",
    "limit_to_reliable",
    "mark_incomplete",
    "new_figure",
    "new_grid",
    "paired_panel",
    "require",
    "save",
    "separate_labels",
    "t_halfwidth",
]

#: what the error bars of :func:`paired_panel` are, for legends and captions
INTERVAL_NOTE = "95 % t-interval over the pairs"


def new_figure(width: float = 6.4, height: float = 4.4) -> tuple[Figure, object]:
    """A constrained-layout figure on its own Agg canvas (never pyplot) and one axes."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def new_grid(rows: int, cols: int, *, panel_width: float, panel_height: float) -> tuple[Figure, np.ndarray]:
    """A constrained-layout figure on its own Agg canvas with a ``rows`` x ``cols`` grid of
    axes (a 2-d array, also for one row or column), each panel ``panel_width`` x
    ``panel_height`` inches."""
    fig = Figure(figsize=(panel_width * cols, panel_height * rows), layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(rows, cols, squeeze=False)


def save(fig: Figure, path: str | os.PathLike, *, dpi: int = 150) -> Path:
    """Save ``fig`` as PNG at ``path`` (folders created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, format="png")
    return path


def require(table: pd.DataFrame, columns: set[str], what: str) -> None:
    """``TypeError``/``ValueError`` unless ``table`` is a DataFrame with ``columns``."""
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"{what} needs a pandas DataFrame, got {type(table).__name__}")
    missing = sorted(columns - set(table.columns))
    if missing:
        raise ValueError(f"{what} needs columns {sorted(columns)}; missing {missing}")


def t_halfwidth(se: np.ndarray | pd.Series, pairs: np.ndarray | pd.Series, level: float = 0.95) -> np.ndarray:
    """Half-width of the two-sided ``level`` Student-t interval of a mean with standard error
    ``se`` over ``pairs`` observations: ``t_{pairs - 1, (1 + level) / 2} * se`` (NaN with fewer
    than 2 pairs, where no interval exists).

    References
    ----------
    .. [1] Student, "The probable error of a mean", Biometrika 6(1), 1908.
    """
    se = np.asarray(se, dtype=float)
    pairs = np.asarray(pairs, dtype=float)
    with np.errstate(invalid="ignore"):
        q = stats.t.ppf(0.5 + level / 2, np.where(pairs >= 2, pairs - 1, np.nan))
    return np.where(pairs >= 2, q * se, np.nan)


@dataclass(frozen=True)
class PairedMarks:
    """What :func:`paired_panel` drew: the y range of its reliable cells (at least ``few``
    pairs; each mean with its interval) and the x, y of its hollow few-pair cells, for
    :func:`limit_to_reliable`."""

    lo: float
    hi: float
    few_x: np.ndarray
    few_y: np.ndarray
    colour: str


def paired_panel(
    ax,
    rows: pd.DataFrame,
    x: str,
    *,
    colour: str,
    label: str,
    offset: float = 1.0,
    few: int = 2,
    support: str = "pairs",
) -> PairedMarks:
    """Draw one comparison of a paired table (columns ``x``, ``mean_diff``, ``se``, ``pairs``:
    :func:`~pystanprivacy.experiments.compare.paired_differences`) on ``ax``: the mean paired
    difference at each ``x`` (multiplied by ``offset`` to keep two comparisons apart on a log
    axis) with its 95 % t-interval (:func:`t_halfwidth`) and a line at zero. A cell with fewer
    than ``few`` pairs (default 2: one pair, which has no interval; or fewer than ``few`` of
    column ``support``, e.g. the pairs of released outputs where refusals are scored) is a
    hollow point without interval. Returns the :class:`PairedMarks` that :func:`limit_to_reliable` uses to keep such
    cells from setting the axis."""
    require(rows, {x, "mean_diff", "se", "pairs", support}, "paired_panel")
    if isinstance(few, bool) or not isinstance(few, int) or few < 2:
        raise ValueError(f"few must be an int >= 2 (cells with fewer pairs are drawn hollow), got {few!r}")
    rows = rows[rows["pairs"] > 0].sort_values(x)
    xs = rows[x].to_numpy(dtype=float) * offset
    ys = rows["mean_diff"].to_numpy(dtype=float)
    half = t_halfwidth(rows["se"], rows["pairs"])
    short = (rows[support].to_numpy() < few) | np.isnan(half)
    ax.axhline(0.0, color="black", lw=0.8, zorder=1)
    ok = ~short
    ax.plot(xs, np.where(ok, ys, np.nan), color=colour, lw=1, zorder=2)  # the line joins reliable cells only
    ax.errorbar(xs[ok], ys[ok], yerr=half[ok], color=colour, marker="o", ms=4, capsize=2, lw=0, elinewidth=1)
    ax.plot([], [], color=colour, marker="o", ms=4, lw=1, label=label)  # one legend entry: line and point
    if short.any():
        ax.scatter(xs[short], ys[short], s=30, facecolors="white", edgecolors=colour, linewidths=1.2, zorder=4)
    lo = np.nanmin(ys[ok] - half[ok]) if ok.any() else np.nan
    hi = np.nanmax(ys[ok] + half[ok]) if ok.any() else np.nan
    return PairedMarks(float(lo), float(hi), xs[short], ys[short], colour)


def limit_to_reliable(ax, marks: Sequence[PairedMarks], *, pad: float = 0.08, fontsize: float = 7) -> int:
    """Set the y range of ``ax`` to the reliable cells of ``marks`` (each :func:`paired_panel`
    call's; zero included) and pin each few-pair cell outside it to the nearer edge as a hollow
    triangle labelled with its value, so that cells resting on one or two pairs are shown but do
    not set the axis. Returns how many cells were pinned. Without reliable cells the axis is
    left as drawn."""
    lo = min((m.lo for m in marks if np.isfinite(m.lo)), default=np.nan)
    hi = max((m.hi for m in marks if np.isfinite(m.hi)), default=np.nan)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return 0
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    span = (hi - lo) or 1.0
    lo, hi = lo - pad * span, hi + pad * span
    ax.set_ylim(lo, hi)
    pinned = 0
    for m in marks:
        for xi, yi in zip(m.few_x, m.few_y):
            if lo <= yi <= hi:
                continue
            top = yi > hi
            edge = hi - 0.03 * (hi - lo) if top else lo + 0.03 * (hi - lo)
            ax.scatter(
                [xi],
                [edge],
                s=40,
                marker="^" if top else "v",
                facecolors="white",
                edgecolors=m.colour,
                linewidths=1.2,
                zorder=5,
                clip_on=False,
            )
            text = ax.annotate(
                f"{yi:+.2g}",
                (xi, edge),
                xytext=(6, -3 if top else 1),
                textcoords="offset points",
                fontsize=fontsize,
                color=m.colour,
            )
            text.set_in_layout(False)
            pinned += 1
    return pinned


def mark_incomplete(
    ax, x, y, done, attempted, *, colour: str, annotate: bool = True, fontsize: float = 6, marker: str = "o"
) -> int:
    """Redraw the points whose ``done`` (released, or converged) count is below ``attempted``
    hollow (with ``marker``), annotated ``done/attempted`` when ``annotate``; points with
    every fit done keep the filled marker their curve has. Returns how many points were
    marked."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    done, attempted = np.asarray(done, dtype=float), np.asarray(attempted, dtype=float)
    short = (done < attempted) & np.isfinite(y)
    if short.any():
        ax.scatter(
            x[short], y[short], s=36, marker=marker, facecolors="white", edgecolors=colour, linewidths=1.2, zorder=5
        )
        if annotate:
            last = np.nanmax(x)
            for xi, yi, k, m in zip(x[short], y[short], done[short], attempted[short]):
                right = xi < last or len(x) == 1  # the last point's label goes left, inside the axes
                label = ax.annotate(
                    f"{int(k)}/{int(m)}",
                    (xi, yi),
                    xytext=(3 if right else -3, -8),
                    textcoords="offset points",
                    ha="left" if right else "right",
                    fontsize=fontsize,
                    color=colour,
                )
                label.set_in_layout(False)  # moved by separate_labels after the layout is done
    return int(short.sum())


def separate_labels(fig: Figure, *, step: float = 7.0, tries: int = 12) -> None:
    """Move each point label (an annotation placed in offset points, e.g. by
    :func:`mark_incomplete`) that overlaps an earlier label of its axes down by ``step``
    points, up to ``tries`` times, so that no two labels overlap (after the figure's layout is
    done)."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        placed = []
        for text in ax.texts:
            if not text.get_text() or getattr(text, "xyann", None) is None:
                continue
            box = text.get_window_extent(renderer)
            for _ in range(tries):
                if not any(box.overlaps(other) for other in placed):
                    break
                x, y = text.xyann
                text.xyann = (x, y - step)
                box = text.get_window_extent(renderer)
            placed.append(box)


def incomplete_legend(ax, text: str) -> None:
    """Add the legend entry of :func:`mark_incomplete`'s hollow points to ``ax`` (an empty
    scatter, picked up by ``get_legend_handles_labels``)."""
    ax.scatter([], [], s=36, facecolors="white", edgecolors="grey", linewidths=1.2, label=text)


def beside(path: str | os.PathLike | None, name: str) -> pd.DataFrame | None:
    """The table ``name`` (a CSV file name) in the folder of the figure ``path``, when there
    is one: how a study's figure finds the per-repeat rows its summary was made from (the
    study writes them there first). ``None`` without ``path`` or file."""
    if path is None:
        return None
    file = Path(path).parent / name
    return pd.read_csv(file) if file.is_file() else None
