"""Figure 10's network rows (Appendix B, "Sensitivity in number of features"), sharing their
d = 2 column with Figures 3 and 9.

Figure 10 varies the number of features d at a fixed n (1000 in the paper) on the simulated
network design of Figures 3 and 9, whose own d is 2. So the cell d = 2, n = 1000 of Figure 10
is the simulated n = 1000 point of Figure 3 (regression) or 9 (classification): the same
design, epsilons, sampler and repeats. :func:`neural_features` runs it as exactly those
figures' tasks -- their data sets, seeds, releases and saved results
(:func:`pystanprivacy.run.runner.selected_tasks`) -- and every other d as
:func:`.networks.neural_features` does, from its own seed stream ``nn-<task>-features-d<d>``.
At full scale this saves the 20 costliest tasks of part ``nn_features`` (10 per task; the
regression ones took 3175 s each on average), and it makes the two figures agree where they
meet, as one run of the paper's would.

This module is apart from :mod:`.networks` because, when it was written, the source of a task's
module was part of its resume key; keys now hold the study's version, programs and data instead
(:mod:`pystanprivacy.run.study`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..._validation import check_int
from ...run.runner import Task, selected_tasks
from . import networks

#: the number of features of Figures 3 and 9's simulated design (``networks.neural``'s default)
FIGURE_D = 2


def shares_figure_cell(*, d: int, n_obs: int, epsilons: Sequence[float], repeats: int,
                       figure: Mapping[str, Any] | None) -> bool:
    """Whether Figure 10's cell (``d``, ``n_obs``) with these ``epsilons`` and ``repeats`` is a
    cell of Figures 3/9's simulated grid ``figure`` (keys ``ns``, ``epsilons``, ``repeats``):
    the figures' d, an n of theirs, the same epsilons in the same order (they are one task's
    argument) and no more repeats than they have."""
    if figure is None:
        return False
    return (d == FIGURE_D and n_obs in {int(n) for n in figure["ns"]}
            and [float(e) for e in epsilons] == [float(e) for e in figure["epsilons"]]
            and repeats <= int(figure["repeats"]))


def neural_features(
    *,
    task: str = "regression",
    ds: Sequence[int] = (2, 5, 10, 20),
    n_obs: int = 1000,
    epsilons: Sequence[float] = (0.2, 0.5, 1.0, 5.0),
    repeats: int = 10,
    figure: Mapping[str, Any] | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Figure 10's network rows for ``task``, one d after the other, as
    :func:`.networks.neural_features` makes them, except the cell that is also a cell of
    Figures 3/9's simulated grid ``figure`` (``dict(ns=..., epsilons=..., repeats=...)``, as
    the study runs them; :func:`shares_figure_cell`): that d = 2 cell is those figures' own
    tasks at ``n_obs`` (their first ``repeats`` repeats), read back when saved. ``figure=None``
    shares nothing. ``options`` (``sampler``, ``seed``, ``workers``, ``executor``,
    ``progress``, ...) go to both."""
    ds = [check_int(d, "ds[i]", minimum=1) for d in ds]
    n_obs = check_int(n_obs, "n_obs", minimum=2)
    repeats = check_int(repeats, "repeats", minimum=1)
    fits = []
    for d in ds:
        if shares_figure_cell(d=d, n_obs=n_obs, epsilons=epsilons, repeats=repeats, figure=figure):

            def keep(t: Task) -> bool:
                return t.kwargs["n_obs"] == n_obs and t.kwargs["repeat"] < repeats

            with selected_tasks(keep):
                fits.append(networks.neural(task=task, datasets=["simulated"], ns=list(figure["ns"]),
                                            epsilons=epsilons, repeats=int(figure["repeats"]), d=FIGURE_D,
                                            **options))
        else:
            fits.append(networks.neural_features(task=task, ds=[d], n_obs=n_obs, epsilons=epsilons,
                                                 repeats=repeats, **options))
    return pd.concat(fits, ignore_index=True)


__all__ = ["FIGURE_D", "neural_features", "shares_figure_cell"]
