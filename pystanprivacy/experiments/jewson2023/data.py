"""Data of the experiments of Jewson, Ghalebikesabi & Holmes (2023), Sec. 5 and Appendix B.

* Simulated data (Sec. 5): features N(0, I), clipped to [-4, 4] and scaled to [0, 1];
  logistic regression with an intercept column and coefficients N(0, 3^2); a one-hidden-
  layer network (10 tanh units, N(0, 1) weights) for the neural-network experiments; labels
  or responses drawn from the model.
* UCI data (Sec. 5, Appendix B): Adult (the six numeric features, income > 50K), Abalone
  (all features, sex as two indicator columns, label rings > 10) and Wine quality (red; the
  11 features, response quality). A random 10 % test split; features scaled to [0, 1] with
  the minimum and maximum of the training split (test features clipped to [0, 1]).

Every data set is a :class:`Dataset` holding training and test arrays (and the true
parameters for simulated data). Built on the loaders of :mod:`pystanprivacy.datasets.uci`.

Note that scaling with the training split's minimum and maximum is the paper's protocol for
the baselines (Chaudhuri et al. and Minami et al. need features in [0, 1]); those extremes are
themselves data-dependent and are not privatised here (as in the paper). beta-D-Bayes needs
no such scaling for its guarantee.
"""
from __future__ import annotations

import dataclasses
import os
import numpy as np

from ..._validation import SeedLike, check_choice, check_int, check_random_state, check_real
from ...models.jewson2023 import (  # clip_scale: re-exported, the features' scaling lives with the simulators
    clip_scale,
    simulate_logistic_records,
    simulate_logistic_truth,
    simulate_nn_records,
    simulate_nn_truth,
)

__all__ = [
    "Dataset",
    "UCI_DATASETS",
    "clip_scale",
    "simulate_logistic",
    "simulate_nn",
    "load_uci",
    "subsample",
    "train_test_split",
    "minmax_scale",
]

#: UCI data set name -> task
UCI_DATASETS: dict[str, str] = {
    "adult": "classification", "abalone": "classification", "banknote": "classification", "wine": "regression"}


@dataclasses.dataclass
class Dataset:
    """Training and test data of one experiment (arrays are float64; labels int64)."""

    name: str
    task: str                       # "classification" or "regression"
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    truth: dict[str, np.ndarray] | None = None   # data-generating parameters (simulated)
    intercept: bool = False                      # first column of X is a constant 1

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])


def simulate_logistic(n: int, d: int = 2, *, n_test: int = 1000, coef_sd: float = 3.0, seed: SeedLike = None) -> Dataset:
    """Simulated logistic regression of Sec. 5 with ``d`` coefficients (an intercept and
    d - 1 features N(0, 1), clipped to [-4, 4] and scaled to [0, 1]).

    Coefficients are N(0, coef_sd^2) (the paper: sd 3). The intercept is then set to
    -sum_j theta_j E[x_j] = -0.5 sum_j theta_j (E[x_j] = 1/2 by symmetry), so the linear
    predictor is centred and both classes occur -- without this most draws give (almost)
    one class and the parameter RMSE is dominated by unidentified coefficients. The shift
    uses no data.
    """
    n = check_int(n, "n", minimum=1)
    d = check_int(d, "d", minimum=1)
    n_test = check_int(n_test, "n_test", minimum=1)
    coef_sd = check_real(coef_sd, "coef_sd")
    rng = check_random_state(seed)
    theta = simulate_logistic_truth(rng, d, coef_sd)
    X, y = simulate_logistic_records(rng, theta, n)
    X_test, y_test = simulate_logistic_records(rng, theta, n_test)
    return Dataset("simulated", "classification", X, y, X_test, y_test, truth={"theta": theta}, intercept=True)


def simulate_nn(
    n: int,
    d: int = 2,
    *,
    task: str = "regression",
    hidden: int = 10,
    n_test: int = 1000,
    weight_sd: float = 1.0,
    seed: SeedLike = None,
) -> Dataset:
    """Simulated data from a one-hidden-layer network (Sec. 5, Figures 3 and 9): ``d``
    features N(0, 1) clipped and scaled to [0, 1], every weight and bias N(0, weight_sd^2)
    (default 1, the prior of the fitted networks and the authors' public code; Sec. 5's
    "N(0, 3^2)" is for the logistic coefficients. Note that the scaled features have sd 1/8,
    so with weight_sd = 1 the signal is weak and test AUCs are modest; weight_sd = 3 gives a
    stronger signal but a much harder posterior for NUTS), tanh units;
    regression responses m(x) + N(0, sigma2) with sigma2 = exp(N(0, 1)), or labels
    Bernoulli(inv_logit(m(x))) with the output bias centred so that both classes occur.
    No intercept column (the network has biases)."""
    n = check_int(n, "n", minimum=1)
    d = check_int(d, "d", minimum=1)
    hidden = check_int(hidden, "hidden", minimum=1)
    n_test = check_int(n_test, "n_test", minimum=1)
    task = check_choice(task, "task", ("regression", "classification"))
    rng = check_random_state(seed)
    sd = check_real(weight_sd, "weight_sd")
    truth = simulate_nn_truth(rng, d, hidden, sd, task)
    X, y = simulate_nn_records(rng, truth, n, task)
    X_test, y_test = simulate_nn_records(rng, truth, n_test, task)
    return Dataset("simulated", task, X, y, X_test, y_test, truth=truth)


def train_test_split(n: int, test_fraction: float = 0.1, *, seed: SeedLike = None) -> tuple[np.ndarray, np.ndarray]:
    """Random (train, test) row indices with ``round(test_fraction n)`` test rows."""
    n = check_int(n, "n", minimum=2)
    frac = check_real(test_fraction, "test_fraction")
    if not 0.0 < frac < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    rng = check_random_state(seed)
    perm = rng.permutation(n)
    n_test = max(1, int(round(frac * n)))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def minmax_scale(X_train: np.ndarray, X_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale every column to [0, 1] with the training split's minimum and maximum; test
    values are clipped to [0, 1]. Constant columns become 0."""
    lo = X_train.min(axis=0)
    span = X_train.max(axis=0) - lo
    span = np.where(span > 0, span, 1.0)
    return (X_train - lo) / span, np.clip((X_test - lo) / span, 0.0, 1.0)


def load_uci(
    name: str,
    path: str | os.PathLike | None = None,
    *,
    test_fraction: float = 0.1,
    intercept: bool | None = None,
    seed: SeedLike = None,
) -> Dataset:
    """A UCI data set prepared as in Sec. 5: ``"adult"`` (six numeric features, label
    income > 50K), ``"abalone"`` (sex as indicators M and F, the seven measurements, label
    rings > 10), ``"banknote"`` (the four wavelet features, label forged: Jewson et al.'s "bank -
    authenticity") or ``"wine"`` (red; 11 features, response quality); a random
    ``test_fraction`` test split (``seed``), features scaled to [0, 1] on the training split.

    ``intercept`` (default: True for classification) prepends a constant-1 column (inside
    [0, 1], so the baselines' feature bound still holds). ``path`` is the file or the folder
    holding it (else ``$PYSTANPRIVACY_DATA``).
    """
    from ...datasets import uci

    name = check_choice(name, "name", tuple(UCI_DATASETS))
    task = UCI_DATASETS[name]
    if name == "adult":
        frame = uci.load_adult(path, split="train")
        X = frame[list(uci.ADULT_NUMERIC)].to_numpy(dtype=float)
        y = frame["income"].to_numpy(dtype=np.int64)
    elif name == "abalone":
        frame = uci.load_abalone(path)
        sex = frame["sex"].astype(str)
        measures = [c for c in uci.ABALONE_COLUMNS if c not in ("sex", "rings")]
        X = np.column_stack([(sex == "M").to_numpy(float), (sex == "F").to_numpy(float), frame[measures].to_numpy(float)])
        y = (frame["rings"].to_numpy() > 10).astype(np.int64)
    elif name == "banknote":
        frame = uci.load_banknote(path)
        X = frame[list(uci.BANKNOTE_COLUMNS[:4])].to_numpy(dtype=float)
        y = frame["forged"].to_numpy(dtype=np.int64)
    else:
        frame = uci.load_wine(path)
        X = frame.drop(columns=["quality"]).to_numpy(dtype=float)
        y = frame["quality"].to_numpy(dtype=float)
    train, test = train_test_split(X.shape[0], test_fraction, seed=seed)
    X_train, X_test = minmax_scale(X[train], X[test])
    use_intercept = (task == "classification") if intercept is None else bool(intercept)
    if use_intercept:
        X_train = np.column_stack([np.ones(len(train)), X_train])
        X_test = np.column_stack([np.ones(len(test)), X_test])
    return Dataset(name, task, X_train, y[train], X_test, y[test], truth=None, intercept=use_intercept)


def subsample(data: Dataset, n: int, *, seed: SeedLike = None) -> Dataset:
    """The first ``n`` rows of a random permutation of the training split (the test split
    is kept); the whole training split when ``n`` >= its size. For classification the
    draw is repeated (up to 100 times) until both classes occur."""
    n = check_int(n, "n", minimum=1)
    rng = check_random_state(seed)
    if n >= data.n:
        return data
    for _ in range(100):
        idx = rng.choice(data.n, size=n, replace=False)
        if data.task != "classification" or 0 < data.y[idx].sum() < n:
            break
    return dataclasses.replace(data, X=data.X[idx], y=data.y[idx])
