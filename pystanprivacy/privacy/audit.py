"""Empirical privacy auditing: statistically valid lower bounds on epsilon.

A mechanism M is (epsilon, delta)-DP only if, for every pair of
neighbouring inputs D, D' and every event E,

    P(M(D) in E) <= e^epsilon P(M(D') in E) + delta.

So for any event, ``log((P(E|D) - delta) / P(E|D'))`` is a lower bound on
epsilon. :func:`epsilon_lower_bound` estimates these probabilities by
Monte Carlo and replaces them by one-sided Clopper--Pearson bounds (a lower
bound on the numerator, an upper bound on the denominator), with a
Bonferroni correction over every bound computed. With probability at least
``1 - alpha`` *all* these bounds hold at once, hence the reported
``epsilon_lb`` is <= the true epsilon. A correct mechanism therefore fails
``epsilon_lb <= epsilon`` with probability at most ``alpha``; a broken one
(too little noise) is caught when ``epsilon_lb > epsilon``.

The threshold events are chosen from a separate pilot sample, so the
choice of events is independent of the counts used in the bounds.

:func:`audit_gaussian_composition` audits a workflow of several releases: the guarantee the
accountant composes under each rule (``basic``, ``zcdp``, ``rdp``, ``pld``) next to the
empirical lower bound on the composed mechanism and its exact ε (Dong, Roth & Su 2022).

References
----------
.. [1] M. Jagielski, J. Ullman and A. Oprea, "Auditing Differentially
   Private Machine Learning: How Private is Private SGD?", NeurIPS 2020,
   Algorithm 2 (epsilon lower bound from Clopper--Pearson intervals).
.. [2] Z. Ding, Y. Wang, G. Wang, D. Zhang and D. Kifer, "Detecting
   Violations of Differential Privacy", CCS 2018.
.. [3] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial
   limits illustrated in the case of the binomial", Biometrika 26(4), 1934.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.stats import beta

from .._validation import check_array, check_delta, check_epsilon, check_int, check_positive, check_real

__all__ = [
    "AuditResult",
    "CompositionAudit",
    "audit_gaussian_composition",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
]

Sampler = Callable[[int], Any]
EventFn = Callable[[np.ndarray], Any]


def _check_alpha(alpha: Any) -> float:
    a = check_real(alpha, "alpha")
    if not (0.0 < a < 1.0):
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")
    return a


def _check_counts(k: Any, n: Any) -> tuple[np.ndarray, int]:
    n = check_int(n, "n", minimum=1)
    return check_array(k, "k", integer=True, bounds=(0, n)).astype(np.float64), n


def clopper_pearson_lower(k: Any, n: int, alpha: float) -> np.ndarray:
    """One-sided Clopper--Pearson lower bound on a binomial proportion.

    ``P(p >= lower) >= 1 - alpha``. Equals ``Beta(alpha; k, n - k + 1)``
    quantile, and 0 when ``k = 0``.

    References
    ----------
    .. [1] Clopper & Pearson (1934).
    """
    k, n = _check_counts(k, n)
    alpha = _check_alpha(alpha)
    with np.errstate(invalid="ignore"):
        out = beta.ppf(alpha, k, n - k + 1.0)
    return np.where(k <= 0, 0.0, out)


def clopper_pearson_upper(k: Any, n: int, alpha: float) -> np.ndarray:
    """One-sided Clopper--Pearson upper bound on a binomial proportion.

    ``P(p <= upper) >= 1 - alpha``. Equals ``Beta(1 - alpha; k + 1, n - k)``
    quantile, and 1 when ``k = n``.
    """
    k, n = _check_counts(k, n)
    alpha = _check_alpha(alpha)
    with np.errstate(invalid="ignore"):
        out = beta.ppf(1.0 - alpha, k + 1.0, n - k)
    return np.where(k >= n, 1.0, out)


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`epsilon_lower_bound`.

    Attributes
    ----------
    epsilon_lb : float
        Lower bound on epsilon, valid with probability >= 1 - alpha (0 if no
        event gives a positive bound).
    event : str
        Description of the event and direction achieving it.
    p_lower : float
        Lower confidence bound on P(E | first input) for that event.
    p_upper : float
        Upper confidence bound on P(E | second input).
    n_draws, n_events, n_bounds : int
        Draws per input, events tested, one-sided bounds (Bonferroni count).
    alpha, delta : float
    """

    epsilon_lb: float
    event: str
    p_lower: float
    p_upper: float
    n_draws: int
    n_events: int
    n_bounds: int
    alpha: float
    delta: float


def _draw(sample: Sampler, n: int, name: str) -> np.ndarray:
    if not callable(sample):
        raise TypeError(f"{name} must be callable as {name}(n) -> array of n outputs")
    out = check_array(sample(n), f"output of {name}")
    if out.ndim == 0 or out.shape[0] != n:
        raise ValueError(f"{name}({n}) must return an array with {n} rows, got shape {out.shape}")
    return out


def _pilot_thresholds(x: np.ndarray, y: np.ndarray, n_thresholds: int) -> np.ndarray:
    pooled = np.concatenate([x.ravel(), y.ravel()])
    levels = (np.arange(n_thresholds) + 0.5) / n_thresholds
    return np.unique(np.quantile(pooled, levels))


def _threshold_counts(x: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Counts of ``x > t`` and ``x <= t`` for each threshold, shape (2T,)."""
    srt = np.sort(x)
    gt = x.size - np.searchsorted(srt, thresholds, side="right")
    return np.concatenate([gt, x.size - gt])


def _event_counts(events: EventFn, x: np.ndarray) -> np.ndarray:
    hits = check_array(events(x), "output of events", ndim=2, shape=(x.shape[0], None), integer=True, bounds=(0, 1))
    return hits.sum(axis=0)


def _best_bound(
    k_first: np.ndarray, k_second: np.ndarray, n: int, level: float, delta: float
) -> tuple[float, int, float, float]:
    lower = clopper_pearson_lower(k_first, n, level)
    upper = clopper_pearson_upper(k_second, n, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        lb = np.where(lower - delta > 0, np.log((lower - delta) / upper), -np.inf)
    j = int(np.argmax(lb))
    return float(lb[j]), j, float(lower[j]), float(upper[j])


def epsilon_lower_bound(
    sample_d: Sampler,
    sample_d_prime: Sampler,
    *,
    n_draws: int = 1_000_000,
    thresholds: Sequence[float] | None = None,
    events: EventFn | None = None,
    n_thresholds: int = 64,
    pilot_draws: int = 20_000,
    delta: float = 0.0,
    alpha: float = 0.05,
) -> AuditResult:
    """Statistically valid lower bound on epsilon from two neighbouring inputs.

    Parameters
    ----------
    sample_d, sample_d_prime : callable
        ``sample(n)`` returns ``n`` independent mechanism outputs on input
        D (resp. D'), as an array with ``n`` rows. E.g.
        ``lambda n: mech.randomise(np.zeros(n))``.
    n_draws : int, default 1_000_000
        Draws per input used for the bounds.
    thresholds : sequence of float, optional
        For scalar outputs: test the events ``{output > t}`` and
        ``{output <= t}``. If neither ``thresholds`` nor ``events`` is given,
        ``n_thresholds`` thresholds are taken at evenly spaced quantiles of
        a separate pilot sample of ``pilot_draws`` per input.
    events : callable, optional
        ``events(outputs)`` returns an ``(n, m)`` 0/1 array: membership of
        each output in each of ``m`` events (fixed in advance).
    delta : float, default 0.0
        For (epsilon, delta) mechanisms the bound is
        ``log((P_lower(E|D) - delta) / P_upper(E|D'))``.
    alpha : float, default 0.05
        Overall failure probability. Each of the ``4 m`` one-sided
        Clopper--Pearson bounds (lower and upper, on both inputs, for each
        of ``m`` events) is at level ``alpha / (4 m)`` (Bonferroni), so
        with probability >= 1 - alpha the result is <= the true epsilon.

    Returns
    -------
    AuditResult
        The maximum over events and both directions (D vs D', D' vs D).

    References
    ----------
    .. [1] Jagielski, Ullman & Oprea (2020), Algorithm 2.
    .. [2] Dwork & Roth (2014), Definition 2.4.
    """
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    delta = check_delta(delta)
    alpha = _check_alpha(alpha)
    if thresholds is not None and events is not None:
        raise ValueError("give at most one of thresholds and events")

    if events is None:
        if thresholds is None:
            n_thr = check_int(n_thresholds, "n_thresholds", minimum=1)
            pilot = check_int(pilot_draws, "pilot_draws", minimum=1)
            t = _pilot_thresholds(
                _draw(sample_d, pilot, "sample_d"), _draw(sample_d_prime, pilot, "sample_d_prime"), n_thr
            )
        else:
            t = check_array(thresholds, "thresholds", ndim=1)
        x = _draw(sample_d, n_draws, "sample_d").ravel()
        y = _draw(sample_d_prime, n_draws, "sample_d_prime").ravel()
        if x.size != n_draws or y.size != n_draws:
            raise ValueError("threshold events need scalar outputs: sample(n) must return n values")
        k_d, k_dp = _threshold_counts(x, t), _threshold_counts(y, t)
        names = [f"output > {v:.6g}" for v in t] + [f"output <= {v:.6g}" for v in t]
    else:
        if not callable(events):
            raise TypeError("events must be callable as events(outputs) -> (n, m) 0/1 array")
        k_d = _event_counts(events, _draw(sample_d, n_draws, "sample_d"))
        k_dp = _event_counts(events, _draw(sample_d_prime, n_draws, "sample_d_prime"))
        if k_d.shape != k_dp.shape:
            raise ValueError("events must return the same number of events for both inputs")
        names = [f"event {j}" for j in range(k_d.size)]

    m = int(k_d.size)
    if m == 0:
        raise ValueError("no event to test: thresholds is empty or events(outputs) returned no columns")
    n_bounds = 4 * m
    level = alpha / n_bounds
    forward = _best_bound(k_d, k_dp, n_draws, level, delta)
    backward = _best_bound(k_dp, k_d, n_draws, level, delta)
    (lb, j, lo, up), direction = max(
        (forward, "P(E|D) vs P(E|D')"), (backward, "P(E|D') vs P(E|D)"), key=lambda item: item[0][0]
    )
    if not math.isfinite(lb) or lb < 0.0:
        lb = 0.0
    return AuditResult(
        epsilon_lb=lb,
        event=f"{names[j]}; {direction}",
        p_lower=lo,
        p_upper=up,
        n_draws=n_draws,
        n_events=m,
        n_bounds=n_bounds,
        alpha=alpha,
        delta=delta,
    )


# --------------------------------------------------------------------------- composed workflows
@dataclass(frozen=True)
class CompositionAudit:
    """Outcome of :func:`audit_gaussian_composition`.

    Attributes
    ----------
    releases : int
        Gaussian releases of one statistic in the workflow.
    epsilon, delta : float
        Each release's stated guarantee (analytic Gaussian calibration).
    sigma, sensitivity : float
        Each release's noise and L2 sensitivity.
    composed_delta : float
        The δ at which the workflow is stated: ``releases * delta`` (so basic composition
        holds at it too).
    composed : dict
        Rule -> composed ε at ``composed_delta``, as a :class:`PrivacyAccountant` with that
        rule reports it after the ``releases`` spends.
    exact_epsilon : float
        The exact ε at ``composed_delta`` of the composed Gaussians (μ-GDP with
        ``μ = sqrt(releases) sensitivity / sigma``).
    lower_bound : AuditResult
        The empirical lower bound on the composed mechanism's ε at ``composed_delta``.
    """

    releases: int
    epsilon: float
    delta: float
    sigma: float
    sensitivity: float
    composed_delta: float
    composed: dict[str, float]
    exact_epsilon: float
    lower_bound: AuditResult

    @property
    def passed(self) -> bool:
        """Whether every rule's composed ε is at least the empirical lower bound."""
        return all(eps >= self.lower_bound.epsilon_lb for eps in self.composed.values())

    def table(self) -> str:
        """The composed guarantee under each rule next to the empirical lower bound (text)."""
        lb = self.lower_bound
        lines = [
            (
                f"workflow: {self.releases} analytic Gaussian releases of one statistic, each (epsilon="
                f"{self.epsilon:g}, delta={self.delta:g}): sigma = {self.sigma:.6g}, L2 sensitivity "
                f"{self.sensitivity:g}"
            ),
            f"composed guarantee at delta = {self.composed_delta:g}:",
        ]
        lines += [f"  {rule:5}  epsilon = {eps:.4f}" for rule, eps in self.composed.items()]
        lines.append(
            f"  exact  epsilon = {self.exact_epsilon:.4f}  (the composed Gaussians are mu-GDP, "
            f"mu = sqrt(k) sensitivity / sigma; Dong, Roth & Su 2022)"
        )
        lines.append(
            f"empirical lower bound: epsilon_lb = {lb.epsilon_lb:.4f} ({100 * (1 - lb.alpha):g} % "
            f"confidence, {lb.n_draws} draws per input; {lb.event})"
        )
        lines.append(
            "every composed guarantee >= the empirical lower bound: "
            + ("yes" if self.passed else "NO (a composed guarantee is too small)")
        )
        return "\n".join(lines)


def _gdp_epsilon(mu: float, delta: float) -> float:
    """Exact ε at δ of μ-GDP: the root of Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2) = δ."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    def gap(eps: float) -> float:
        return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps + norm.logcdf(-eps / mu - mu / 2)) - delta)

    if gap(0.0) <= 0:
        return 0.0
    hi = 1.0
    while gap(hi) > 0:
        hi *= 2.0
    return float(brentq(gap, 0.0, hi, xtol=1e-12))


def audit_gaussian_composition(
    *,
    releases: int = 5,
    epsilon: float = 1.0,
    delta: float = 1e-6,
    sensitivity: float = 1.0,
    n_draws: int = 200_000,
    alpha: float = 0.05,
    seed: int = 0,
) -> CompositionAudit:
    """Audit a workflow of ``releases`` analytic Gaussian releases of one statistic.

    Each release is (ε, δ)-DP with ``sigma = analytic_gaussian_sigma(ε, δ, sensitivity)``.
    A :class:`~pystanprivacy.privacy.records.PrivacyAccountant` per rule is charged the
    ``releases`` spends with their records (the ideal Gaussian mechanism's: the audit samples
    continuous noise), and reports the composed ε at ``releases * δ``. The empirical lower
    bound (:func:`epsilon_lower_bound`, threshold events on the mean of the releases, the
    likelihood-ratio test statistic) samples the composed mechanism on the neighbouring
    statistics 0 and ``sensitivity``. Every composed guarantee must be at least the lower bound.

    Parameters
    ----------
    releases : int, default 5
    epsilon, delta : float
        Each release's guarantee; ε > 0, 0 < δ < 1.
    sensitivity : float, default 1.0
    n_draws : int, default 200_000
        Draws of the whole workflow per input.
    alpha : float, default 0.05
    seed : int, default 0
        Seeds the audit's (continuous, reproducible) noise.

    References
    ----------
    .. [1] Jagielski, Ullman & Oprea (2020), Algorithm 2 (the lower bound).
    .. [2] J. Dong, A. Roth and W. Su, "Gaussian Differential Privacy", JRSS-B 2022,
       Cor. 2.13 and 3.3 (the exact curve of composed Gaussians).
    """
    from .mechanisms import analytic_gaussian_sigma
    from .records import COMPOSITION_RULES, PrivacyAccountant, PrivacyRecord

    k = check_int(releases, "releases", minimum=1)
    eps, dlt = check_epsilon(epsilon), check_delta(delta, positive=True)
    sens = check_positive(sensitivity, "sensitivity")
    if k * dlt >= 1.0:
        raise ValueError(f"releases * delta must be < 1, got {k} * {dlt!r}")
    n = check_int(n_draws, "n_draws", minimum=1)
    sigma = analytic_gaussian_sigma(eps, dlt, sens)
    record = PrivacyRecord(
        mechanism="analytic_gaussian", epsilon=eps, delta=dlt, sensitivity=sens, sensitivity_norm="l2", scale=sigma
    )
    composed: dict[str, float] = {}
    for rule in COMPOSITION_RULES:
        # the budget is the exact basic total (k * 1e-6 in floats can fall below five 1e-6 spends)
        accountant = PrivacyAccountant(float(k * Fraction(repr(eps))), float(k * Fraction(repr(dlt))), composition=rule)
        for _ in range(k):
            accountant.spend(eps, dlt, record=record, label="Gaussian release")
        composed[rule] = accountant.spent[0]
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))

    def workflow(value: float) -> Sampler:
        def run(m: int) -> np.ndarray:  # m draws of the k releases, reduced to their mean
            total = np.zeros(m)
            for _ in range(k):
                total += value + rng.normal(0.0, sigma, size=m)
            return total / k

        return run

    bound = epsilon_lower_bound(
        workflow(0.0), workflow(sens), n_draws=n, pilot_draws=max(1000, n // 10), delta=accountant.spent[1], alpha=alpha
    )
    return CompositionAudit(
        releases=k,
        epsilon=eps,
        delta=dlt,
        sigma=sigma,
        sensitivity=sens,
        composed_delta=accountant.spent[1],
        composed=composed,
        exact_epsilon=_gdp_epsilon(math.sqrt(k) * sens / sigma, accountant.spent[1]),
        lower_bound=bound,
    )
