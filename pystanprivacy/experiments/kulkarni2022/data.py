"""Regression data for the Kulkarni et al. (2022) experiments (Sec. 4.1-4.2): Wine quality
(linear regression, Figure 4) and Adult (logistic regression, Figure 5), preprocessed as in
the paper, plus a clearly labelled synthetic stand-in for when the files are absent.

Preprocessing (Sec. 4.2, "Pre-processing for regression tasks"), every statistic computed
on the **training split only** and then applied to both splits:

1. 80/20 random train/test split (``seed``);
2. features standardised (training mean and standard deviation; Adult's categorical columns
   one-hot encoded first, rows with missing values dropped);
3. PCA to ``d`` components (:class:`sklearn.decomposition.PCA`, exact SVD, fitted on the
   training split), which also centres the data. The sign of each component follows
   scikit-learn's deterministic convention (its largest loading is positive); before 0.2 a
   hand-written SVD kept whatever signs the LAPACK build returned, so some feature columns
   may have the opposite sign now (same components, same fits up to that sign);
4. scaled by one public constant so that the ``norm_quantile`` quantile of the training row
   norms is ``R`` (the paper does not say how it scales; without a scale, clipping to
   R = 1 would map almost every row onto the unit sphere);
5. rows clipped to ``||x|| <= R`` (train and test: the clipping is part of the feature map);
6. linear regression: the target centred (training mean) and clipped to ``|y| <= R_y`` on the
   training split only -- test targets are centred but **not** clipped (the paper evaluates on
   unclipped targets, Sec. 4.6); logistic regression: labels 0/1 unchanged.

Privacy caveat: steps 2-4 are computed from the data and are **not** differentially
private. The paper treats them as public preprocessing; a real deployment must fix the
feature map from public information (or spend budget on it) before users report.

References
----------
.. [1] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela, "Locally Differentially Private
   Bayesian Inference" (2022), Sec. 4.1, 4.2, 4.6.
.. [2] P. Cortez et al., "Modeling wine preferences by data mining from physicochemical
   properties", Decision Support Systems 47(4), 2009 (Wine quality).
"""
from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA

from ..._validation import SeedLike, check_array, check_int, check_positive, check_random_state
from ...privacy.mechanisms import ClipL2
from ...datasets.uci import load_adult, load_wine

__all__ = ["RegressionData", "preprocess", "load_wine_regression", "load_adult_regression",
           "synthetic_regression", "regression_data"]

SYNTHETIC_NOTICE = ("NOTICE: the real {what} file was not found ({why}); using a SYNTHETIC stand-in data set "
                    "of the same shape. Results are NOT the paper's {what} results.")


@dataclasses.dataclass(frozen=True)
class RegressionData:
    """A preprocessed train/test split.

    ``x_*`` have rows with ``||x|| <= R``; ``y_train`` is clipped to ``[-R_y, R_y]`` for
    linear regression (``y_test`` is not); labels are 0/1 for logistic regression.
    ``synthetic`` says whether these are stand-in data; ``info`` holds the public
    preprocessing facts (sizes, explained variance, scale).
    """

    name: str
    task: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    R: float
    R_y: float | None
    synthetic: bool
    info: dict[str, Any]

    @property
    def d(self) -> int:
        return int(self.x_train.shape[1])


def preprocess(features: Any, target: Any, *, task: str, d: int, R: float = 1.0, R_y: float | None = None,
               test_fraction: float = 0.2, norm_quantile: float = 0.95, seed: SeedLike = 0,
               name: str = "data", synthetic: bool = False) -> RegressionData:
    """Steps 1-6 of the module docstring on a numeric feature matrix and a target.

    Parameters
    ----------
    features : array (n, p), finite
    target : array (n,); real for ``task='linear'``, 0/1 for ``task='logistic'``
    task : {"linear", "logistic"}
    d : int, number of principal components (1 <= d <= p)
    R : float, feature norm bound
    R_y : float, target bound (linear regression only; required there)
    test_fraction : float in (0, 1)
    norm_quantile : float in (0, 1]: the training row-norm quantile scaled to R
    seed : split seed (reproducibility only)
    """
    if task not in ("linear", "logistic"):
        raise ValueError(f"task must be 'linear' or 'logistic', got {task!r}")
    X = check_array(features, "features", ndim=2, kinds="biuf")
    n, p = X.shape
    if task == "linear":
        y = check_array(target, "target", shape=(n,), kinds="biuf")
        if R_y is None:
            raise ValueError("R_y (the target bound) is required for task='linear'")
        R_y = check_positive(R_y, "R_y")
    else:
        y = check_array(target, "target", shape=(n,), kinds="biuf", integer=True, bounds=(0, 1))
        R_y = None
    d = check_int(d, "d", minimum=1)
    if d > p:
        raise ValueError(f"d must be <= the number of features ({p}), got {d}")
    R = check_positive(R, "R")
    if not 0.0 < float(test_fraction) < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    if not 0.0 < float(norm_quantile) <= 1.0:
        raise ValueError(f"norm_quantile must be in (0, 1], got {norm_quantile!r}")
    rng = check_random_state(seed)
    perm = rng.permutation(n)
    n_test = int(round(test_fraction * n))
    if n_test < 1 or n - n_test < d + 1:
        raise ValueError(f"too few rows ({n}) for a {test_fraction:g} test split with d={d}")
    test, train = perm[:n_test], perm[n_test:]
    mean = X[train].mean(axis=0)
    sd = X[train].std(axis=0)
    sd[sd == 0] = 1.0
    Z = (X - mean) / sd
    pca = PCA(n_components=d, svd_solver="full").fit(Z[train])
    P = pca.transform(Z)
    scale = float(np.quantile(np.linalg.norm(P[train], axis=1), norm_quantile)) / R
    P = ClipL2(R)(P / scale)
    explained = float(pca.explained_variance_ratio_.sum())
    if task == "linear":
        y_mean = float(y[train].mean())
        y_train = np.clip(y[train] - y_mean, -R_y, R_y)
        y_test = y[test] - y_mean
    else:
        y_train, y_test = y[train], y[test]
    info = {"n_train": int(train.size), "n_test": int(test.size), "p": int(p), "d": d,
            "explained_variance": explained, "feature_scale": scale, "norm_quantile": float(norm_quantile),
            "test_fraction": float(test_fraction),
            "clipped_train_targets": int(np.count_nonzero(np.abs(y[train] - y[train].mean()) > R_y)) if task == "linear" else 0}
    return RegressionData(name=name, task=task, x_train=P[train], y_train=y_train, x_test=P[test], y_test=y_test,
                          R=R, R_y=R_y, synthetic=synthetic, info=info)


#: rows of Wine quality, red (1,599) and white (4,898) together
WINE_ROWS = 6497


def load_wine_regression(path: str | os.PathLike | None = None, *, d: int = 4, R: float = 1.0, R_y: float = 2.0,
                         seed: SeedLike = 0) -> RegressionData:
    """Wine quality, red and white together (6,497 rows), for linear regression of ``quality``
    (Figure 4): the paper's "roughly 6.5K samples with 12 features" (Sec. 4.2) are the 11
    physico-chemical features of both files plus the colour (``red``: 1 for red, 0 for white).
    ``path`` is the folder holding ``winequality-red.csv`` and ``winequality-white.csv``."""
    frame = load_wine(path, colour="both")
    X = frame.drop(columns="quality").to_numpy(dtype=float)  # 11 features + the colour indicator
    return preprocess(X, frame["quality"].to_numpy(dtype=float), task="linear", d=d, R=R, R_y=R_y, seed=seed,
                      name="wine")


def adult_design_matrix(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Numeric columns plus one-hot encoded categorical columns of the Adult data (rows with
    missing values dropped) and the 0/1 income label."""
    frame = frame.dropna()
    cats = [c for c in frame.columns if c != "income" and not pd.api.types.is_numeric_dtype(frame[c])]
    dummies = pd.get_dummies(frame.drop(columns="income"), columns=cats, dtype=float)
    return dummies.to_numpy(dtype=float), frame["income"].to_numpy(dtype=np.int64)


def load_adult_regression(path: str | os.PathLike | None = None, *, d: int = 5, R: float = 1.0,
                          seed: SeedLike = 0) -> RegressionData:
    """Adult (train + test files, 45,222 complete rows) for logistic regression of
    ``income > 50K`` (Figure 5)."""
    X, y = adult_design_matrix(load_adult(path, split="both"))
    return preprocess(X, y, task="logistic", d=d, R=R, seed=seed, name="adult")


def synthetic_regression(task: str, *, n: int, p: int = 11, d: int = 4, R: float = 1.0, R_y: float = 2.0,
                         seed: SeedLike = 0, name: str | None = None) -> RegressionData:
    """A SYNTHETIC stand-in: ``p`` Gaussian features driven by ``d`` latent factors (so that
    the top ``d`` principal components carry the signal) plus feature noise, and a linear
    (noise sd 0.6) or logistic response on the factors, preprocessed like the real data.
    ``synthetic=True`` in the result."""
    rng = check_random_state(seed)
    n = check_int(n, "n", minimum=10)
    k = min(check_int(d, "d", minimum=1), p)
    z = rng.normal(size=(n, k)) * np.linspace(3.0, 1.5, k)
    X = z @ rng.normal(size=(k, p)) + 0.5 * rng.normal(size=(n, p))
    eta = z @ rng.normal(size=k)
    eta = eta / eta.std()
    if task == "linear":
        y = 0.6 * eta + rng.normal(0.0, 0.6, size=n)
        return preprocess(X, y, task="linear", d=d, R=R, R_y=R_y, seed=rng, name=name or "synthetic-linear",
                          synthetic=True)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(2.0 * eta - 1.0)))).astype(np.int64)
    return preprocess(X, y, task="logistic", d=d, R=R, seed=rng, name=name or "synthetic-logistic", synthetic=True)


def regression_data(which: str, data_dir: str | os.PathLike | None = None, *, d: int, seed: SeedLike = 0,
                    R_y: float = 2.0, announce: bool = True) -> RegressionData:
    """``which='wine'`` or ``'adult'`` from ``data_dir`` / ``$PYSTANPRIVACY_DATA``; when the file
    is missing, a synthetic stand-in of the same size, with a printed notice."""
    try:
        if which == "wine":
            return load_wine_regression(data_dir, d=d, R_y=R_y, seed=seed)
        if which == "adult":
            return load_adult_regression(data_dir, d=d, seed=seed)
    except FileNotFoundError as exc:
        if announce:
            print(SYNTHETIC_NOTICE.format(what=which, why=exc), file=sys.stderr)
        if which == "wine":
            return synthetic_regression("linear", n=WINE_ROWS, p=12, d=d, R_y=R_y, seed=seed,
                                        name="synthetic stand-in for wine")
        return synthetic_regression("logistic", n=45222, p=20, d=d, seed=seed, name="synthetic stand-in for adult")
    raise ValueError(f"which must be 'wine' or 'adult', got {which!r}")
