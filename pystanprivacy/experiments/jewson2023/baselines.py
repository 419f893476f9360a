"""Baselines of Jewson, Ghalebikesabi & Holmes (2023), Sec. 2, 5 and Appendix A.4.1, B.

* :func:`chaudhuri_output_perturbation` -- Chaudhuri et al. (2011) output perturbation for
  L2-regularised logistic regression with the element-wise gradient bound of Appendix A.4.1:
  theta_hat(D) + Laplace per coordinate, (epsilon, 0)-DP for |x_j| <= 1 with the L1
  sensitivity 2 p / (n lambda) of p coefficients (:func:`chaudhuri_sensitivity`). The paper's
  Theorem 4 uses 2 / (n lambda), a step that holds only for p = 1: ``calibration="paper"``
  adds the paper's noise and charges what it really guarantees, (p epsilon, 0)-DP. The paper
  uses lambda = 1/(9n) and lambda = 1/9 (:data:`CHAUDHURI_LAMBDAS`).
* :class:`MinamiGibbsLogistic` -- Minami et al. (2016): one draw from the Gibbs posterior
  (Eq. 2) with w = (epsilon / (2L)) sqrt(m_pi / (1 + 2 log(1/delta))) is (epsilon, delta)-DP for a
  convex L-Lipschitz log-likelihood and an m_pi-strongly log-concave prior. We use the
  paper's L = 2 sqrt(d) for features in [0, 1]^d (conservative: for logistic regression
  ||grad_theta log f|| = |y - p| ||x||_2 <= sqrt(d)), m_pi = 1 / prior_sd^2 and delta = 1e-5.
* Non-private: :func:`regularised_logistic_regression` (the minimiser of Eq. 1),
  :func:`logistic_regression` (scikit-learn's default ``LogisticRegression``: C = 1, unpenalised
  intercept, the reference of the correct-sign accuracy on UCI data) and the standard
  posterior (``fit_nonprivate``) of the model classes of :mod:`pystanprivacy.models.jewson2023`.
* DP-SGD for the neural networks with Opacus (:func:`train_nn_sgd`), only with the optional
  extra ``pip install 'pystanprivacy[dpsgd]'`` (torch, opacus): without it a clear
  ``ImportError`` names the extra; the core install never imports torch.

References
----------
.. [1] J. Jewson, S. Ghalebikesabi and C. Holmes (2023), NeurIPS. Sec. 2 (Eq. 1-2), Appendix
   A.4.1 (Theorem 4), Appendix B (DP-SGD settings).
.. [2] K. Chaudhuri, C. Monteleoni and A. D. Sarwate (2011), "Differentially private
   empirical risk minimization", JMLR 12.
.. [3] K. Minami, H. Arai, I. Sato and H. Nakagawa (2016), "Differential privacy without
   sensitivity", NeurIPS.
.. [4] M. Abadi et al. (2016), "Deep learning with differential privacy", CCS (DP-SGD);
   A. Yousefpour et al. (2021), "Opacus: user-friendly differential privacy library in PyTorch".
"""
from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy import optimize

from ..._validation import (
    SeedLike,
    check_array,
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_random_state,
)
from ...models._ops import ops_randomness
from ...models.jewson2023 import (
    GatedOPS,
    LogisticRegressionBetaD,
    convergence_gate_details,
)
from ...privacy.mechanisms import Laplace
from ...privacy.records import PrivacyAccountant, PrivacyRecord, Release

__all__ = [
    "CHAUDHURI_CALIBRATIONS",
    "CHAUDHURI_LAMBDAS",
    "DPSGD_EXTRA_MESSAGE",
    "LOGISTIC_TOL",
    "MinamiGibbsLogistic",
    "chaudhuri_output_perturbation",
    "chaudhuri_sensitivity",
    "dpsgd_available",
    "dpsgd_epochs",
    "dpsgd_noise_multiplier",
    "logistic_regression",
    "minami_lipschitz",
    "minami_weight",
    "nn_predict",
    "regularised_logistic_regression",
    "train_nn_sgd",
]

#: the two regularisation weights of the paper's experiments, as functions of n
CHAUDHURI_LAMBDAS: dict[str, Callable[[int], float]] = {
    "1/(9n)": lambda n: 1.0 / (9.0 * n),
    "1/9": lambda n: 1.0 / 9.0,
}

#: noise calibrations of :func:`chaudhuri_output_perturbation`: ``"l1"`` (epsilon-DP, the
#: sensitivity of :func:`chaudhuri_sensitivity`) and ``"paper"`` (Theorem 4's scale, p times smaller)
CHAUDHURI_CALIBRATIONS = ("l1", "paper")

DPSGD_EXTRA_MESSAGE = (
    "DP-SGD needs the optional extra 'dpsgd' (PyTorch and Opacus), which is not installed: "
    "pip install 'pystanprivacy[dpsgd]'"
)


def _check_classification(X: Any, y: Any, bound: float | None) -> tuple[np.ndarray, np.ndarray]:
    if bound is None:
        X = check_array(X, "X", ndim=2)
    else:
        X = check_array(X, "X", ndim=2)
        n_out = int(np.count_nonzero(np.abs(X) > bound))
        if n_out:
            raise ValueError(
                f"X contains {n_out} value(s) with |x_j| > {bound:g}: this baseline's privacy proof needs "
                f"every feature in [-{bound:g}, {bound:g}] (scale features to [0, 1] as in the paper)"
            )
    y = check_array(y, "y", ndim=1)
    bad = int(np.count_nonzero((y != 0) & (y != 1)))
    if bad:
        raise ValueError(f"y must hold labels in {{0, 1}}; {bad} value(s) are not")
    if y.shape[0] != X.shape[0] or X.shape[0] < 1:
        raise ValueError(f"X and y must have the same (>= 1) number of rows, got X {X.shape} and y {y.shape}")
    return X, y.astype(np.int64)


# ----------------------------------------------------------------------------- non-private
def _logistic_objective(theta: np.ndarray, X: np.ndarray, s: np.ndarray, penalty: np.ndarray) -> tuple[float, np.ndarray]:
    z = s * (X @ theta)
    loss = np.logaddexp(0.0, -z)
    grad_z = -s / (1.0 + np.exp(z))            # d loss / d (x theta)
    value = loss.sum() + 0.5 * np.sum(penalty * theta ** 2)
    grad = X.T @ grad_z + penalty * theta
    return float(value), grad


def regularised_logistic_regression(X: Any, y: Any, *, lam: float) -> np.ndarray:
    """theta_hat(D) = argmin (1/n) sum_i log(1 + exp(-s_i x_i' theta)) + (lam/2) ||theta||^2
    (Eq. 1 with the 1-strongly convex R = ||theta||^2 / 2; every coordinate penalised)."""
    X, y = _check_classification(X, y, None)
    lam = check_positive(lam, "lam")
    n = X.shape[0]
    # scaled by n: sum_i loss + (n lam / 2) ||theta||^2, same minimiser, better conditioned
    res = optimize.minimize(
        _logistic_objective, np.zeros(X.shape[1]), args=(X, 2.0 * y - 1.0, np.full(X.shape[1], n * lam)), jac=True,
        method="L-BFGS-B", options={"maxiter": 10_000, "gtol": 1e-10, "ftol": 1e-15},
    )
    return res.x


#: solver tolerance of :func:`logistic_regression`. sklearn's default tol=1e-4 stops its lbfgs
#: up to 0.09 (Adult) and 0.23 (Abalone) away from the optimum; with 1e-10 it agrees with a
#: direct L-BFGS solve to gradient norm 1e-10 within 4e-7 (Adult) and 6e-6 (Abalone)
LOGISTIC_TOL = 1e-10


def logistic_regression(X: Any, y: Any, *, C: float = 1.0, intercept_column: bool = True) -> np.ndarray:
    """Non-private L2-regularised logistic regression with scikit-learn's defaults
    (:class:`sklearn.linear_model.LogisticRegression`: L2 penalty, C = 1, lbfgs, unpenalised
    intercept), solved to tolerance :data:`LOGISTIC_TOL`: argmin C sum_i log-loss +
    ||theta_{-0}||^2 / 2. The reference of the correct-sign accuracy (Figure 7).

    With ``intercept_column`` (the default) the first column of ``X`` must be the constant-1
    intercept column: it becomes sklearn's unpenalised intercept and theta[0]. Without it
    every coefficient is penalised and there is no intercept. ``y`` must hold both labels.
    """
    from sklearn.linear_model import LogisticRegression

    X, y = _check_classification(X, y, None)
    C = check_positive(C, "C")
    if np.unique(y).size < 2:
        raise ValueError("y must hold both labels 0 and 1 to fit a logistic regression; it holds one")
    if intercept_column:
        if X.shape[1] < 2:
            raise ValueError(f"with intercept_column=True, X must hold the constant-1 intercept column and at least "
                             f"one feature, got shape {X.shape}")
        if np.any(X[:, 0] != 1.0):
            raise ValueError("with intercept_column=True, X[:, 0] must be the constant-1 intercept column; it is not "
                             "all 1 (use intercept_column=False for X without one)")
        fit = LogisticRegression(C=C, tol=LOGISTIC_TOL, max_iter=10_000).fit(X[:, 1:], y)
        return np.concatenate([fit.intercept_, fit.coef_[0]])
    fit = LogisticRegression(C=C, fit_intercept=False, tol=LOGISTIC_TOL, max_iter=10_000).fit(X, y)
    return fit.coef_[0].copy()


# ----------------------------------------------------------------------------- Chaudhuri
def chaudhuri_sensitivity(n: int, lam: float, p: int) -> float:
    """L1 sensitivity 2 p / (n lam) of theta_hat (``p`` coefficients, replace-one) under the
    element-wise gradient bound |d loss / d theta_j| < 1 of Appendix A.4.1: Lemma 7 of
    Chaudhuri et al. gives ||theta_hat(D) - theta_hat(D')||_2 <= 2 sqrt(p) / (n lam), and
    ||v||_1 <= sqrt(p) ||v||_2.

    The paper's Theorem 4 concludes ||.||_1 <= 2 / (n lam) from the same L2 bound, which holds
    for p = 1 only (``tests/models/test_jewson2023_functions.py`` has neighbours with p = 10
    whose minimisers differ by more than that in L1)."""
    n = check_int(n, "n", minimum=1)
    p = check_int(p, "p", minimum=1)
    return 2.0 * p / (n * check_positive(lam, "lam"))


def chaudhuri_output_perturbation(
    X: Any,
    y: Any,
    *,
    epsilon: float,
    lam: float,
    calibration: str = "l1",
    seed: SeedLike = None,
    accountant: PrivacyAccountant | None = None,
) -> Release:
    """Output perturbation of Chaudhuri et al. as in Appendix A.4.1: theta_hat(D) of
    :func:`regularised_logistic_regression` plus iid Laplace noise per coordinate, for
    features with every |x_j| <= 1 (checked: the paper scales features to [0, 1]).

    ``calibration="l1"`` (default): scale 2 p / (n lam epsilon) for p = ``X.shape[1]``
    coefficients (:func:`chaudhuri_sensitivity`), (epsilon, 0)-DP (replace-one).
    ``calibration="paper"``: the paper's scale 2 / (n lam epsilon) (Theorem 4), which is
    (p epsilon, 0)-DP; the record and the accountant carry p epsilon, the guarantee it has
    (``details["nominal_epsilon"]`` keeps the epsilon asked for). The two coincide for p = 1.

    ``lam``: the regularisation weight (the paper: 1/(9n) and 1/9, :data:`CHAUDHURI_LAMBDAS`).
    Nothing is charged when validation fails.
    """
    X, y = _check_classification(X, y, 1.0)
    epsilon = check_epsilon(epsilon)
    lam = check_positive(lam, "lam")
    calibration = check_choice(calibration, "calibration", CHAUDHURI_CALIBRATIONS)
    n, p = X.shape
    theta_hat = regularised_logistic_regression(X, y, lam=lam)
    # the same noise either way is scale = sensitivity / charged epsilon; "paper" charges p epsilon
    charged = epsilon if calibration == "l1" else p * epsilon
    mech = Laplace(epsilon=charged, sensitivity=chaudhuri_sensitivity(n, lam, p), seed=seed)
    raw = mech.release(theta_hat, accountant=accountant, n=n, bounds=(-1.0, 1.0), label="Chaudhuri output perturbation")
    details = dict(raw.record.details)
    details.update(
        estimator="L2-regularised logistic regression, (1/n) sum loss + (lam/2)||theta||^2",
        lam=lam,
        bound="element-wise |x_j| <= 1 so |d loss/d theta_j| < 1; L1 sensitivity 2 p / (n lam)",
        calibration=calibration,
        nominal_epsilon=epsilon,
        reference="Chaudhuri et al. 2011; Jewson et al. 2023 Appendix A.4.1, Theorem 4 (its L1 step needs p = 1)",
    )
    return Release(values=raw.values, record=dataclasses.replace(raw.record, details=details))


# ----------------------------------------------------------------------------- Minami
def minami_lipschitz(d: int) -> float:
    """L = 2 sqrt(d): the Lipschitz constant the paper uses for the logistic log-likelihood
    with features in [0, 1]^d (Sec. 2; conservative, sqrt(d) already bounds the gradient)."""
    return 2.0 * math.sqrt(check_int(d, "d", minimum=1))


def minami_weight(epsilon: float, *, lipschitz: float, m_pi: float, delta: float = 1e-5) -> float:
    """Gibbs weight w = (epsilon / (2L)) sqrt(m_pi / (1 + 2 log(1/delta))) of Minami et al.
    (2016) for (epsilon, delta)-DP with an L-Lipschitz convex log-likelihood and an
    m_pi-strongly log-concave prior (Sec. 2)."""
    epsilon = check_epsilon(epsilon)
    L = check_positive(lipschitz, "lipschitz")
    m_pi = check_positive(m_pi, "m_pi")
    delta = check_delta(delta, positive=True)
    return epsilon / (2.0 * L) * math.sqrt(m_pi / (1.0 + 2.0 * math.log(1.0 / delta)))


class MinamiGibbsLogistic(GatedOPS):
    """One draw from the Gibbs posterior of logistic regression with Minami et al.'s weight:
    (epsilon, delta)-DP for features in [-1, 1]^d (checked) and a converged sampler.

    The release is one-posterior sampling like :mod:`pystanprivacy.models.jewson2023`'s, through
    the same Stan program and the same gate (:class:`~pystanprivacy.models.jewson2023.GatedOPS`,
    :data:`~pystanprivacy.models.jewson2023.OPS_THRESHOLDS`): every attempt of
    :meth:`~pystanprivacy.models.jewson2023.GatedOPS.sample_one` is charged (epsilon, delta) before
    sampling and returns an :class:`~pystanprivacy.models.base.OPSResult` (``details``: the
    weight ``w``), a refusal keeps the charge and shows no statistic of the run, and the record
    states its randomness. :meth:`~pystanprivacy.models.jewson2023.GatedOPS.try_sample_one` is
    the uncharged attempt of simulations.

    Parameters
    ----------
    prior_sd : float, default 3.0
        N(0, prior_sd^2) prior; m_pi = 1 / prior_sd^2.
    delta : float, default 1e-5
    backend : str, optional
    """

    label = "Minami Gibbs-posterior logistic regression"
    diagnostic_variables = ("theta",)

    def __init__(self, *, prior_sd: float = 3.0, delta: float = 1e-5, backend: str | None = None) -> None:
        self.model = LogisticRegressionBetaD(prior_sd=prior_sd, backend=backend)
        self.delta = check_delta(delta, positive=True)

    @property
    def m_pi(self) -> float:
        return 1.0 / self.model.prior_sd ** 2

    def weight(self, epsilon: float, d: int) -> float:
        """w for ``d`` coefficients with L = :func:`minami_lipschitz` (d)."""
        return minami_weight(epsilon, lipschitz=minami_lipschitz(d), m_pi=self.m_pi, delta=self.delta)

    def record(self, epsilon: float, n: int, d: int, *, sampler: dict[str, Any], override: bool = False,
               seeded: bool = False) -> PrivacyRecord:
        """The privacy record of one draw (``override``: ``allow_unconverged`` was used;
        ``seeded``: made with a seed, not secure). Public values only: no statistic of the run
        (:func:`~pystanprivacy.models.jewson2023.convergence_gate_details`)."""
        return PrivacyRecord(
            mechanism="ops-gibbs",
            epsilon=epsilon,
            delta=self.delta,
            bounds=(-1.0, 1.0),
            n=n,
            neighbouring="replace-one",
            details={
                "model": self.model.model_name,
                "loss": "w-weighted negative log-likelihood (Eq. 2)",
                "w": self.weight(epsilon, d),
                "lipschitz": minami_lipschitz(d),
                "lipschitz_is": "L = 2 sqrt(d) for features in [0, 1]^d (Jewson et al. Sec. 2)",
                "m_pi": self.m_pi,
                "assumption": "the released draw comes from the converged target",
                "convergence_checked_on": list(self.diagnostic_variables) + ["divergences", "tree depth"],
                **convergence_gate_details(override),
                "sampler": dict(sampler),
                **ops_randomness(bool(seeded)),
                "reference": "Minami et al. 2016; Jewson et al. 2023 Sec. 2",
            },
        )

    # ---- the gated OPS attempt (GatedOPS) ------------------------------------------------
    def _program(self) -> LogisticRegressionBetaD:
        return self.model

    def _calibrate(self, X: Any, y: Any, epsilon: Any) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
        X, y = _check_classification(X, y, 1.0)
        return X, y, {"w": self.weight(check_epsilon(epsilon), X.shape[1])}

    def _attempt_record(self, epsilon: float, X: np.ndarray, loss: dict[str, float], *, sampler: dict[str, Any],
                        override: bool, seeded: bool) -> PrivacyRecord:
        return self.record(epsilon, X.shape[0], X.shape[1], sampler=sampler, override=override, seeded=seeded)


# ----------------------------------------------------------------------------- DP-SGD (optional)
def dpsgd_available() -> bool:
    """Whether the optional extra ``[dpsgd]`` (torch and opacus) can be imported."""
    try:
        import opacus  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _require_dpsgd() -> tuple[Any, Any]:
    try:
        import opacus
        import torch
    except ImportError as exc:
        raise ImportError(DPSGD_EXTRA_MESSAGE) from exc
    return torch, opacus


def nn_predict(params: Mapping[str, Any], X: Any, activation: str = "tanh") -> np.ndarray:
    """Output of a network from :func:`train_nn_sgd` at the rows of ``X``: ``act(X W + b_in)
    w_out + b_out`` with ``act`` = tanh (the paper's network, as
    :func:`pystanprivacy.models.jewson2023.nn_forward`) or ReLU."""
    activation = check_choice(activation, "activation", ("tanh", "relu"))
    X = check_array(X, "X", ndim=2)
    z = X @ np.asarray(params["W"], dtype=float) + np.asarray(params["b_in"], dtype=float)
    hidden = np.tanh(z) if activation == "tanh" else np.maximum(z, 0.0)
    return hidden @ np.asarray(params["w_out"], dtype=float) + float(np.asarray(params["b_out"]))


@functools.lru_cache(maxsize=4096)
def dpsgd_noise_multiplier(*, epsilon: float, delta: float, sample_rate: float, epochs: int, accountant: str) -> float:
    """The noise multiplier of DP-SGD for (``epsilon``, ``delta``) after ``epochs`` epochs at
    Poisson ``sample_rate``: Opacus' :func:`opacus.accountants.utils.get_noise_multiplier` with
    the arguments :meth:`opacus.PrivacyEngine.make_private_with_epsilon` gives it (its default
    ``epsilon_tolerance``), cached. The search depends on public settings only and costs seconds
    at small n; a grid search of :mod:`.dpsgd_tuning` repeats it hundreds of times.

    References
    ----------
    .. [1] A. Yousefpour et al. (2021), "Opacus: user-friendly differential privacy library in
       PyTorch" (``PrivacyEngine.make_private_with_epsilon``, Opacus 1.6.0).
    """
    _require_dpsgd()
    from opacus.accountants.utils import get_noise_multiplier

    return float(get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=sample_rate,
                                      epochs=epochs, accountant=accountant))


@functools.lru_cache(maxsize=4096)
def _spent_epsilon(accountant: str, history: tuple[tuple[float, float, int], ...], delta: float) -> float:
    """The epsilon an Opacus accountant of kind ``accountant`` reports at ``delta`` after
    ``history`` (its ``(noise_multiplier, sample_rate, steps)`` entries): the computation of
    :meth:`opacus.PrivacyEngine.get_epsilon`, cached. It depends on public settings only, and the
    PRV accountant's costs seconds per call (most of a small DP-SGD training's time)."""
    from opacus.accountants import create_accountant

    acc = create_accountant(accountant)
    acc.history = list(history)
    return float(acc.get_epsilon(delta))


def dpsgd_epochs(epsilon: float) -> int:
    """14 + floor(epsilon) epochs: the rule of Appendix B (tuned at epsilon = 1)."""
    return 14 + int(math.floor(check_epsilon(epsilon)))


def train_nn_sgd(
    X: Any,
    y: Any,
    *,
    task: str,
    epsilon: float | None,
    delta: float = 1e-5,
    hidden: int = 10,
    epochs: int | None = None,
    lr: float = 1e-2,
    batch_size: int = 100,
    clip_norm: float = 1.0,
    optimizer: str = "sgd",
    activation: str = "tanh",
    seed: SeedLike = None,
) -> tuple[dict[str, np.ndarray], PrivacyRecord | None]:
    """Train the one-hidden-layer tanh network of the paper with DP-SGD (Opacus; ``epsilon``
    given) or plain SGD (``epsilon=None``, non-private), with the settings of Appendix B:
    ``14 + floor(epsilon)`` epochs (plain SGD: the epochs of epsilon = 1 unless given), clipping
    norm 1, batch size 100, learning rate 1e-2. Needs the extra ``[dpsgd]``.

    ``optimizer`` (``"sgd"`` or ``"adam"``) and ``activation`` (``"tanh"`` or ``"relu"``) give
    the variants of :mod:`.dpsgd_settings` (the authors' public code trains with Adam and ReLU
    units); predict with :func:`nn_predict` and the same ``activation``.

    Returns the network's parameters in the layout of the Stan models (W (P, H), b_in,
    w_out, b_out; no residual variance: estimating it would need its own budget) and the privacy
    record (``None`` for plain SGD). Hyper-parameter tuning on validation data, as in the paper,
    is not privacy-accounted.
    """
    torch, opacus = _require_dpsgd()
    task = check_choice(task, "task", ("regression", "classification"))
    X = check_array(X, "X", ndim=2)
    y = check_array(y, "y", ndim=1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X and y must have the same number of rows, got X {X.shape} and y {y.shape}")
    if task == "classification" and np.any((y != 0) & (y != 1)):
        raise ValueError("y must hold labels in {0, 1}")
    hidden = check_int(hidden, "hidden", minimum=1)
    lr = check_positive(lr, "lr")
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    clip_norm = check_positive(clip_norm, "clip_norm")
    optimizer = check_choice(optimizer, "optimizer", ("sgd", "adam"))
    activation = check_choice(activation, "activation", ("tanh", "relu"))
    delta = check_delta(delta, positive=True)
    if epsilon is not None:
        epsilon = check_epsilon(epsilon)
    epochs = check_int(epochs, "epochs", minimum=1) if epochs is not None else dpsgd_epochs(epsilon if epsilon is not None else 1.0)
    rng = check_random_state(seed)
    torch.manual_seed(int(rng.integers(2**31 - 1)))
    Xt = torch.tensor(X, dtype=torch.float32)
    yt = torch.tensor(y, dtype=torch.float32)
    unit = torch.nn.Tanh() if activation == "tanh" else torch.nn.ReLU()
    net = torch.nn.Sequential(torch.nn.Linear(X.shape[1], hidden), unit, torch.nn.Linear(hidden, 1))
    opt = (torch.optim.SGD if optimizer == "sgd" else torch.optim.Adam)(net.parameters(), lr=lr)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(Xt, yt), batch_size=batch_size, shuffle=True)
    criterion = torch.nn.MSELoss() if task == "regression" else torch.nn.BCEWithLogitsLoss()
    engine = None
    if epsilon is not None:
        engine = opacus.PrivacyEngine()
        # what make_private_with_epsilon does, with its noise-multiplier search cached
        sigma = dpsgd_noise_multiplier(epsilon=epsilon, delta=delta, sample_rate=1.0 / len(loader), epochs=epochs,
                                       accountant=engine.accountant.mechanism())
        net, opt, loader = engine.make_private(
            module=net, optimizer=opt, data_loader=loader, noise_multiplier=sigma, max_grad_norm=clip_norm,
        )
    net.train()
    for _ in range(epochs):
        for xb, yb in loader:
            if len(xb) == 0:  # Poisson sampling can give empty batches
                continue
            opt.zero_grad()
            loss = criterion(net(xb).squeeze(-1), yb)
            loss.backward()
            opt.step()
    layers = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    first, second = layers[0], layers[1]
    params = {
        "W": first.weight.detach().numpy().T.astype(float),
        "b_in": first.bias.detach().numpy().astype(float),
        "w_out": second.weight.detach().numpy()[0].astype(float),
        "b_out": np.array(float(second.bias.detach().numpy()[0])),
    }
    record = None
    if engine is not None:
        record = PrivacyRecord(
            mechanism="dp-sgd",
            epsilon=_spent_epsilon(engine.accountant.mechanism(), tuple(engine.accountant.history), delta),
            delta=delta,
            sensitivity=clip_norm,
            sensitivity_norm="l2",
            n=X.shape[0],
            neighbouring="add-remove",
            details={"target_epsilon": epsilon, "epochs": epochs, "lr": lr, "batch_size": batch_size,
                     "clip_norm": clip_norm, "optimizer": optimizer, "activation": activation,
                     "accountant": f"Opacus {engine.accountant.mechanism().upper()}",  # PRV: Opacus' default
                     # a comparison baseline: Opacus's secure_mode (a cryptographic generator) is off
                     "secure": False, "randomness": "torch's generator seeded from `seed` (Opacus secure_mode off)",
                     "reference": "Abadi et al. 2016; Jewson et al. 2023 Appendix B"},
        )
    return params, record
