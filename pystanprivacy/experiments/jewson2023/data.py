"""Data of the experiments of Jewson, Ghalebikesabi & Holmes (2023), Sec. 5 and Appendix B.

* Simulated data (Sec. 5): features N(0, I), clipped to [-4, 4] and scaled to [0, 1];
  logistic regression with an intercept column and coefficients N(0, 3^2) (the study's
  design, :func:`simulate_logistic`; :func:`simulate_logistic_paper` is the design Sec. 5
  states: d features, d coefficients, no intercept); a one-hidden-
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

from ..._validation import SeedLike, check_choice, check_int, check_positive, check_random_state, check_real
from ...models.jewson2023 import (  # clip_scale: re-exported, the features' scaling lives with the simulators
    clip_scale,
    simulate_logistic_records,
    simulate_logistic_truth,
    simulate_nn_records,
    simulate_nn_truth,
    unit_features,
)

__all__ = [
    "Dataset",
    "UCI_DATASETS",
    "clip_scale",
    "simulate_logistic",
    "simulate_logistic_paper",
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


def simulate_logistic_paper(
    n: int, d: int = 2, *, n_test: int = 1000, coef_sd: float = 3.0, seed: SeedLike = None
) -> Dataset:
    """Simulated logistic regression as Sec. 5 states it: ``d`` features and ``d`` coefficients,
    no constant column and no intercept.

    Each feature is N(0, 1), clipped to [-4, 4] and mapped onto [0, 1] by the fixed public map
    of :func:`~pystanprivacy.models.jewson2023.clip_scale` (the paper: "d-dimensional features
    from a multivariate normal distribution with the identity matrix as covariance matrix ...
    We further scale the features in all data sets to lie within 0 and 1"); the coefficients
    theta are N(0, coef_sd^2) (the paper: sd 3, "a d dimensional vector for the logistic
    regression"); labels are Bernoulli(inv_logit(x' theta)) of the scaled features x. Training
    and test records share theta. Nothing is centred or conditioned on the data.

    The labels are drawn from the scaled features because the models are fitted on them: drawn
    from the raw N(0, I) features z, the linear predictor would be z' theta = 8 x' theta - 4
    sum_j theta_j, which a model without an intercept on x cannot represent, so it would be
    misspecified and the parameter RMSE against theta would measure nothing. (The authors'
    public code also draws its labels from the scaled features; it adds a constant column for
    logistic regression with more than one feature, the design of :func:`simulate_logistic`.)

    Class balance (the paper does not centre): the share of y = 1 of a truth,
    E_x[inv_logit(x' theta)], is spread widely over theta. By Monte Carlo over 4,000 truths
    (``tests/experiments/test_jewson2023_paper_design.py`` checks the d = 2 figures), its 10 %
    / 90 % quantiles are 0.07 / 0.92 at d = 2 (the minority class under 5 % for 13 % of the
    truths), 0.02 / 0.98 at d = 5, 0.005 / 0.995 at d = 10 and 0.001 / 0.999 at d = 20 (the
    minority class under 5 % for 56 % of the truths); its median is near 0.5 at every d. Some
    training or test sets therefore hold one class only (the test ROC-AUC is then NaN).

    Privacy of the baselines fitted on these records: every |x_j| <= 1, so Chaudhuri et al.'s
    element-wise bound and Minami et al.'s ||x||_2 <= sqrt(d) (L = 2 sqrt(d)) hold with p = d
    coefficients, as for :func:`simulate_logistic`'s constant column plus d - 1 features;
    beta-D-Bayes needs no bound on x.

    Parameters
    ----------
    n : int
        Training records (>= 1).
    d : int, default 2
        Features = coefficients (>= 1; App. B: "we choose d = 2 in the simulated experiments").
    n_test : int, default 1000
        Test records (>= 1).
    coef_sd : float, default 3.0
        Standard deviation of the coefficients (> 0).
    seed : SeedLike
        Draws theta, then the training records, then the test records.

    Returns
    -------
    Dataset
        ``intercept=False``; ``truth={"theta": theta}``.

    References
    ----------
    .. [1] J. Jewson, S. Ghalebikesabi and C. Holmes (2023), "Differentially private statistical
       inference through beta-divergence one posterior sampling", NeurIPS. Sec. 5 ("Data
       sets"), Appendix B ("MCMC sampling": d = 2).
    """
    n = check_int(n, "n", minimum=1)
    d = check_int(d, "d", minimum=1)
    n_test = check_int(n_test, "n_test", minimum=1)
    coef_sd = check_positive(coef_sd, "coef_sd")
    rng = check_random_state(seed)
    theta = rng.normal(0.0, coef_sd, size=d)
    X, y = _paper_records(rng, theta, n)
    X_test, y_test = _paper_records(rng, theta, n_test)
    return Dataset("simulated", "classification", X, y, X_test, y_test, truth={"theta": theta}, intercept=False)


def _paper_records(rng: np.random.Generator, theta: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``m`` records of :func:`simulate_logistic_paper`: :func:`unit_features` and labels
    Bernoulli(inv_logit(X theta))."""
    X = unit_features(rng, m, theta.size)
    return X, (rng.random(m) < 1.0 / (1.0 + np.exp(-(X @ theta)))).astype(np.int64)


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
