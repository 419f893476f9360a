"""Figure helpers shared by every paper's figures: a figure on an Agg canvas (never pyplot,
never a display), saving as PNG, and the check that a result table has the columns a figure
needs."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["new_figure", "new_grid", "save", "require"]


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
