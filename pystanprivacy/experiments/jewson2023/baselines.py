"""Baselines of Jewson, Ghalebikesabi & Holmes (2023), Sec. 2, 5 and Appendix A.4.1, B.

* :func:`chaudhuri_output_perturbation` -- Chaudhuri et al. (2011) output perturbation for
  L2-regularised logistic regression with the element-wise gradient bound of Appendix A.4.1
  (Theorem 4): theta_hat(D) + Laplace(2 / (n lambda epsilon)) per coordinate, (epsilon, 0)-DP
  for |x_j| <= 1; the paper uses lambda = 1/(9n) and lambda = 1/9 (:data:`CHAUDHURI_LAMBDAS`).
* :class:`MinamiGibbsLogistic` -- Minami et al. (2016): one draw from the Gibbs posterior
  (Eq. 2) with w = (epsilon / (2L)) sqrt(m_pi / (1 + 2 log(1/delta))) is (epsilon, delta)-DP for a
  convex L-Lipschitz log-likelihood and an m_pi-strongly log-concave prior. We use the
  paper's L = 2 sqrt(d) for features in [0, 1]^d (conservative: for logistic regression
  ||grad_theta log f|| = |y - p| ||x||_2 <= sqrt(d)), m_pi = 1 / prior_sd^2 and delta = 1e-5.
* Non-private: :func:`regularised_logistic_regression` (the minimiser of Eq. 1),
  :func:`logistic_regression` (sklearn's default: C = 1, unpenalised intercept, the reference
  of the correct-sign accuracy on UCI data) and the standard posterior (w = 1) through the
  model classes of :mod:`pystanprivacy.models.jewson2023`.
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
import math
from collections.abc import Callable
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
from ...privacy.mechanisms import Laplace
from ...models._ops import charge_attempt, check_ops_call, ops_randomness
from ...models.jewson2023 import (
    DEFAULT_SAMPLER,
    OPS_THRESHOLDS,
    LogisticRegressionBetaD,
    OPSOutcome,
    convergence_gate_details,
    convergence_problems,
    released_draw,
)
from ...sampling.posterior import ConvergenceError, Thresholds
from ...privacy.records import PrivacyAccountant, PrivacyRecord, Release

__all__ = [
    "CHAUDHURI_LAMBDAS",
    "DPSGD_EXTRA_MESSAGE",
    "MinamiGibbsLogistic",
    "chaudhuri_output_perturbation",
    "chaudhuri_sensitivity",
    "dpsgd_available",
    "dpsgd_epochs",
    "logistic_regression",
    "minami_lipschitz",
    "minami_weight",
    "regularised_logistic_regression",
    "train_nn_sgd",
]

#: the two regularisation weights of the paper's experiments, as functions of n
CHAUDHURI_LAMBDAS: dict[str, Callable[[int], float]] = {
    "1/(9n)": lambda n: 1.0 / (9.0 * n),
    "1/9": lambda n: 1.0 / 9.0,
}

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
def _logistic_objective(theta: np.ndarray, X: np.ndarray, s: np.ndarray, weight: float, penalty: np.ndarray) -> tuple[float, np.ndarray]:
    z = s * (X @ theta)
    loss = np.logaddexp(0.0, -z)
    grad_z = -s / (1.0 + np.exp(z))            # d loss / d (x theta)
    value = weight * loss.sum() + 0.5 * np.sum(penalty * theta ** 2)
    grad = weight * (X.T @ grad_z) + penalty * theta
    return float(value), grad


def _minimise(X: np.ndarray, y: np.ndarray, weight: float, penalty: np.ndarray) -> np.ndarray:
    s = 2.0 * y - 1.0
    res = optimize.minimize(
        _logistic_objective, np.zeros(X.shape[1]), args=(X, s, weight, penalty), jac=True,
        method="L-BFGS-B", options={"maxiter": 10_000, "gtol": 1e-10, "ftol": 1e-15},
    )
    return res.x


def regularised_logistic_regression(X: Any, y: Any, *, lam: float) -> np.ndarray:
    """theta_hat(D) = argmin (1/n) sum_i log(1 + exp(-s_i x_i' theta)) + (lam/2) ||theta||^2
    (Eq. 1 with the 1-strongly convex R = ||theta||^2 / 2; every coordinate penalised)."""
    X, y = _check_classification(X, y, None)
    lam = check_positive(lam, "lam")
    n = X.shape[0]
    # scaled by n: sum_i loss + (n lam / 2) ||theta||^2, same minimiser, better conditioned
    return _minimise(X, y, 1.0, np.full(X.shape[1], n * lam))


def logistic_regression(X: Any, y: Any, *, C: float = 1.0, intercept_column: bool = True) -> np.ndarray:
    """Non-private L2-regularised logistic regression with scikit-learn's defaults:
    argmin C sum_i log-loss + ||theta_{-0}||^2 / 2, the intercept (first column when
    ``intercept_column``) unpenalised. The reference of the correct-sign accuracy (Figure 7)."""
    X, y = _check_classification(X, y, None)
    C = check_positive(C, "C")
    penalty = np.ones(X.shape[1])
    if intercept_column:
        penalty[0] = 0.0
    return _minimise(X, y, C, penalty)


# ----------------------------------------------------------------------------- Chaudhuri
def chaudhuri_sensitivity(n: int, lam: float) -> float:
    """L1 sensitivity 2/(n lam) of theta_hat under the element-wise gradient bound
    |d loss / d theta_j| < 1 (Appendix A.4.1, Theorem 4)."""
    n = check_int(n, "n", minimum=1)
    return 2.0 / (n * check_positive(lam, "lam"))


def chaudhuri_output_perturbation(
    X: Any,
    y: Any,
    *,
    epsilon: float,
    lam: float,
    seed: SeedLike = None,
    accountant: PrivacyAccountant | None = None,
) -> Release:
    """Output perturbation of Chaudhuri et al. as in Appendix A.4.1: theta_hat(D) of
    :func:`regularised_logistic_regression` plus iid Laplace(2 / (n lam epsilon)) noise per
    coordinate; (epsilon, 0)-DP (replace-one) when every |x_j| <= 1 (checked: the paper
    scales features to [0, 1]).

    ``lam``: the regularisation weight (the paper: 1/(9n) and 1/9, :data:`CHAUDHURI_LAMBDAS`).
    Nothing is charged when validation fails.
    """
    X, y = _check_classification(X, y, 1.0)
    epsilon = check_epsilon(epsilon)
    lam = check_positive(lam, "lam")
    n = X.shape[0]
    theta_hat = regularised_logistic_regression(X, y, lam=lam)
    mech = Laplace(epsilon=epsilon, sensitivity=chaudhuri_sensitivity(n, lam), seed=seed)
    raw = mech.release(theta_hat, accountant=accountant, n=n, bounds=(-1.0, 1.0), label="Chaudhuri output perturbation")
    details = dict(raw.record.details)
    details.update(
        estimator="L2-regularised logistic regression, (1/n) sum loss + (lam/2)||theta||^2",
        lam=lam,
        bound="element-wise |x_j| <= 1 so |d loss/d theta_j| < 1",
        reference="Chaudhuri et al. 2011; Jewson et al. 2023 Appendix A.4.1, Theorem 4",
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


class MinamiGibbsLogistic:
    """One draw from the Gibbs posterior of logistic regression with Minami et al.'s weight:
    (epsilon, delta)-DP for features in [-1, 1]^d (checked) and a converged sampler.

    The release is one-posterior sampling like :mod:`pystanprivacy.models.jewson2023`'s and
    gated the same way (:data:`~pystanprivacy.models.jewson2023.OPS_THRESHOLDS`): every
    attempt of :meth:`sample_one` is charged (epsilon, delta) before sampling, a refusal keeps
    the charge and shows no statistic of the run, and the record states its randomness.

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

    def try_sample_one(
        self,
        X: Any,
        y: Any,
        *,
        epsilon: float,
        seed: SeedLike = None,
        chains: int = DEFAULT_SAMPLER["chains"],
        warmup: int = DEFAULT_SAMPLER["warmup"],
        draws: int = DEFAULT_SAMPLER["draws"],
        thresholds: Thresholds | None = None,
        allow_unconverged: bool = False,
        adapt_delta: float = 0.8,
        max_treedepth: int = 10,
        keep_posterior: bool = False,
    ) -> OPSOutcome:
        """One draw, or ``release=None`` with the failed checks (see :meth:`sample_one`).

        Charges no accountant, and ``problems`` states statistics of the run: for
        simulations; :meth:`sample_one` is the private release. With a seed, Stan's seed and
        the released (chain, iteration) come from its Generator (reproducible, not secure:
        warned once); without one, Stan gets 31 bits from ``secrets`` and the draw is chosen
        with ``secrets``."""
        X, y = _check_classification(X, y, 1.0)
        epsilon = check_epsilon(epsilon)
        chains = check_int(chains, "chains", minimum=2)
        if not isinstance(allow_unconverged, bool):
            raise TypeError(f"allow_unconverged must be a bool, got {allow_unconverged!r}")
        rng = None if seed is None else check_random_state(seed)
        w = self.weight(epsilon, X.shape[1])
        post = self.model.posterior(X, y, w=w, seed=rng, chains=chains, warmup=warmup, draws=draws,
                                    adapt_delta=adapt_delta, max_treedepth=max_treedepth)
        gate = thresholds or OPS_THRESHOLDS
        problems = convergence_problems(post, gate, self.diagnostic_variables)
        keep = post if keep_posterior else None
        if problems and not allow_unconverged:
            return OPSOutcome(release=None, problems=problems, params=None, beta=None, posterior=keep)
        theta = released_draw(post, rng, ["theta"])["theta"]
        sampler = {"chains": chains, "warmup": warmup, "draws": draws, "adapt_delta": adapt_delta,
                   "max_treedepth": max_treedepth, "thresholds": dataclasses.asdict(gate)}
        rec = self.record(epsilon, X.shape[0], X.shape[1], sampler=sampler, override=allow_unconverged,
                          seeded=rng is not None)
        return OPSOutcome(release=Release(values=theta, record=rec), problems=problems, params={"theta": theta},
                          beta=None, posterior=keep)

    def sample_one(
        self,
        X: Any,
        y: Any,
        *,
        epsilon: float,
        seed: SeedLike = None,
        accountant: PrivacyAccountant | None = None,
        chains: int = DEFAULT_SAMPLER["chains"],
        warmup: int = DEFAULT_SAMPLER["warmup"],
        draws: int = DEFAULT_SAMPLER["draws"],
        thresholds: Thresholds | None = None,
        allow_unconverged: bool = False,
        adapt_delta: float = 0.8,
        max_treedepth: int = 10,
    ) -> Release:
        """Release one Gibbs-posterior draw, (epsilon, delta)-DP for a draw from the converged
        target.

        Parameters
        ----------
        X, y : array_like
            Features (N, d) with every |x_j| <= 1 and labels in {0, 1} (N,).
        epsilon : float
            Privacy level; the Gibbs weight is :meth:`weight` (epsilon, d), delta is ``self.delta``.
        seed : int, Generator or None
            Reproducibility, not security (the record says ``secure: False``; warned once).
            ``None``: Stan seeded with 31 bits from ``secrets``, the draw chosen with ``secrets``.
        accountant : PrivacyAccountant, optional
            Charged (epsilon, delta) for every attempt, before sampling, whether or not a draw
            is then released (the refusal depends on the data, so it is an output too).
        chains, warmup, draws, adapt_delta, max_treedepth
            NUTS settings; the draw is chosen uniformly over all chains and iterations.
        thresholds : Thresholds, optional
            Convergence gate (default :data:`~pystanprivacy.models.jewson2023.OPS_THRESHOLDS`).
        allow_unconverged : bool
            Release even if a check failed; the record then has ``convergence_override=True``
            (which check failed, if any, is a statistic of the private run and is not recorded).

        Raises
        ------
        BudgetExceededError
            The budget cannot cover (epsilon, delta): nothing is charged or run.
        ConvergenceError
            The run failed the convergence checks: no draw, (epsilon, delta) stays charged;
            the message names only the public thresholds and settings, no statistic of the run.
        """
        X, y = _check_classification(X, y, 1.0)
        epsilon = check_epsilon(epsilon)
        self.weight(epsilon, X.shape[1])  # needs d >= 1
        check_int(chains, "chains", minimum=2)
        settings = {"warmup": warmup, "draws": draws, "chains": chains, "adapt_delta": adapt_delta,
                    "max_treedepth": max_treedepth}
        rng = check_ops_call(accountant, seed, thresholds, allow_unconverged, settings)
        charge_attempt(accountant, epsilon, self.label, self.delta)
        out = self.try_sample_one(X, y, epsilon=epsilon, seed=rng, thresholds=thresholds,
                                  allow_unconverged=allow_unconverged, **settings)
        if out.release is None:
            refused = ConvergenceError.refused(
                self.label, epsilon=epsilon, thresholds=thresholds or OPS_THRESHOLDS,
                checked=list(self.diagnostic_variables), settings=settings, charged=accountant is not None,
            )
            delta_note = ("was charged with epsilon and stays charged" if accountant is not None
                          else "was used with epsilon")
            raise ConvergenceError(f"{refused} This attempt's delta={self.delta!r} {delta_note}.")
        return out.release


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
    seed: SeedLike = None,
) -> tuple[dict[str, np.ndarray], PrivacyRecord | None]:
    """Train the one-hidden-layer tanh network of the paper with DP-SGD (Opacus; ``epsilon``
    given) or plain SGD (``epsilon=None``, non-private), with the settings of Appendix B:
    ``14 + floor(epsilon)`` epochs (plain SGD: the epochs of epsilon = 1 unless given), clipping
    norm 1, batch size 100, learning rate 1e-2. Needs the extra ``[dpsgd]``.

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
    delta = check_delta(delta, positive=True)
    if epsilon is not None:
        epsilon = check_epsilon(epsilon)
    epochs = check_int(epochs, "epochs", minimum=1) if epochs is not None else dpsgd_epochs(epsilon if epsilon is not None else 1.0)
    rng = check_random_state(seed)
    torch.manual_seed(int(rng.integers(2**31 - 1)))
    Xt = torch.tensor(X, dtype=torch.float32)
    yt = torch.tensor(y, dtype=torch.float32)
    net = torch.nn.Sequential(torch.nn.Linear(X.shape[1], hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1))
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(Xt, yt), batch_size=batch_size, shuffle=True)
    criterion = torch.nn.MSELoss() if task == "regression" else torch.nn.BCEWithLogitsLoss()
    engine = None
    if epsilon is not None:
        engine = opacus.PrivacyEngine()
        net, opt, loader = engine.make_private_with_epsilon(
            module=net, optimizer=opt, data_loader=loader, target_epsilon=epsilon, target_delta=delta,
            epochs=epochs, max_grad_norm=clip_norm,
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
            epsilon=float(engine.get_epsilon(delta)),
            delta=delta,
            sensitivity=clip_norm,
            sensitivity_norm="l2",
            n=X.shape[0],
            neighbouring="add-remove",
            details={"target_epsilon": epsilon, "epochs": epochs, "lr": lr, "batch_size": batch_size,
                     "clip_norm": clip_norm, "accountant": "Opacus RDP",
                     # a comparison baseline: Opacus's secure_mode (a cryptographic generator) is off
                     "secure": False, "randomness": "torch's generator seeded from `seed` (Opacus secure_mode off)",
                     "reference": "Abadi et al. 2016; Jewson et al. 2023 Appendix B"},
        )
    return params, record
