"""What the logistic (:mod:`.study`) and the neural-network (:mod:`.networks`) experiments of
Jewson, Ghalebikesabi & Holmes (2023) share: the paper's name, the sampler of Appendix B,
Minami's delta and the two test metrics.

Kept apart so that each experiment module holds only its own tasks: the runner names a saved
task by the source of the module its function lives in, so editing one study does not
invalidate the other's saved results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

PAPER = "jewson2023"

#: NUTS settings of Appendix B (1000 warm-up, 100 draws) with 4 chains for the checks
SAMPLER: dict[str, int] = {"chains": 4, "warmup": 1000, "draws": 100}
#: delta of Minami et al.'s Gibbs posterior and of DP-SGD (the paper's 1e-5)
MINAMI_DELTA = 1e-5


def roc_auc(y: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve of ``score`` for labels ``y`` in {0, 1}
    (:func:`sklearn.metrics.roc_auc_score`; ties count one half); NaN when only one class is
    present (where sklearn raises)."""
    from sklearn.metrics import roc_auc_score

    y = np.asarray(y)
    n1 = int(np.sum(y == 1))
    if n1 == 0 or n1 == y.size:
        return float("nan")
    return float(roc_auc_score(y, score))


def rmse(a: np.ndarray, b: np.ndarray) -> float:
    """sqrt(mean((a - b)^2))."""
    return float(np.sqrt(np.mean((np.asarray(a, dtype=float) - np.asarray(b, dtype=float)) ** 2)))


__all__ = ["MINAMI_DELTA", "PAPER", "SAMPLER", "UCI_FILES", "rmse", "roc_auc", "uci_files"]

#: the shipped file that :func:`.data.load_uci` reads for each UCI data set (``find_data_file``)
UCI_FILES: dict[str, tuple[str, ...]] = {
    "adult": ("adult.data",),
    "abalone": ("abalone.data",),
    "banknote": ("data_banknote_authentication.txt",),
    "wine": ("winequality-red.csv",),
}


def uci_files(kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """The data files a task with these keyword arguments reads: those of its ``dataset`` when it
    is a UCI data set, none for simulated data (the ``data=`` of a task's study declaration,
    :mod:`pystanprivacy.run.study`)."""
    return UCI_FILES.get(str(kwargs.get("dataset")), ())
