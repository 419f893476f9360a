"""LDP-SGD: the private point-estimate baseline of Kulkarni et al. (2022), Sec. 4.2.

A local version of DP-SGD after Wang et al. (2019): the users are split into disjoint groups
of size ``G``; the aggregator sends the current parameters to group ``g``, every user of
the group computes the gradient of their own loss, clips its L2 norm to ``clip`` (1) and adds
Gaussian noise calibrated (analytic Gaussian) to L2 sensitivity ``2 clip`` (= 2), and the
aggregator averages the group's reports and takes one step before contacting group ``g + 1``.
Every user reports exactly once, so the protocol is (epsilon, delta)-LDP for every user
whatever the number of steps; ``2n - G`` messages are exchanged.

Choices the paper leaves open (documented here): ``G = ceil(group_constant * d * ln(max(d, 2))
/ epsilon^2)`` (the paper's ``G = Omega(d log d / epsilon^2)``; this keeps the noise of a step,
``sigma / sqrt(G)``, independent of epsilon), clipped to ``[min_group, n]``; step size
``learning_rate / sqrt(t)``; iterates projected onto ``||theta|| <= theta_bound``; the
estimate is the average of the iterates (Polyak-Ruppert), which tames the per-step noise.

Not a secure release, with or without a seed: the users' noise is continuous float64 NumPy
Gaussian noise (its low-order bits can leak, Mironov 2012), drawn from a seeded generator
(reproducible, not secure) or, with ``seed=None``, from a NumPy generator seeded with fresh
OS entropy (not reproducible, still not secure). The record says so: ``secure: false`` with
the ``randomness`` and ``noise`` named, as :mod:`pystanprivacy.privacy.mechanisms` writes them. It is
a baseline for comparing estimates, not a way to collect data.

References
----------
.. [1] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela, "Locally Differentially Private
   Bayesian Inference" (2022), Sec. 4.2.
.. [2] N. Wang et al., "Collecting and analyzing multidimensional data with local
   differential privacy", ICDE 2019.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy.special import expit

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
from ...privacy.mechanisms import analytic_gaussian_sigma
from ...privacy.records import SEEDED_RANDOMNESS, PrivacyAccountant, PrivacyRecord

#: the randomness of an unseeded run: NumPy's default generator from fresh OS entropy
OS_ENTROPY_RANDOMNESS = "numpy generator seeded from fresh OS entropy: not reproducible, not secure"
#: the users' noise in either case (float noise: never secure, Mironov 2012)
FLOAT_NOISE = "continuous float64 Gaussian (numpy)"

__all__ = ["LDPSGDResult", "LDPSGDRuns", "ldp_sgd", "ldp_sgd_runs", "default_group_size"]


@dataclasses.dataclass(frozen=True)
class LDPSGDResult:
    """The estimate (iterate average), the last iterate, the protocol's sizes and its record."""

    theta: np.ndarray
    theta_last: np.ndarray
    group_size: int
    steps: int
    sigma: float
    record: PrivacyRecord


def default_group_size(n: int, d: int, epsilon: float, *, group_constant: float = 10.0, min_group: int = 1) -> int:
    """``ceil(group_constant d ln(max(d, 2)) / epsilon^2)`` clipped to ``[min_group, n]``."""
    g = math.ceil(group_constant * d * math.log(max(d, 2)) / epsilon**2)
    return int(min(max(g, min_group), n))


def _gradients(loss: str, x: np.ndarray, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
    eta = x @ theta
    if loss == "squared":                       # 0.5 (x'theta - y)^2
        return (eta - y)[:, None] * x
    ypm = 2.0 * y - 1.0                          # log(1 + exp(-y x'theta)), y in {-1, 1}
    return (-ypm * expit(-ypm * eta))[:, None] * x


def _check_protocol_inputs(x: Any, y: Any, loss: str, epsilon: float, delta: float) -> tuple:
    """The checks :func:`ldp_sgd` and :func:`ldp_sgd_runs` share: ``(loss, epsilon, delta, x, y)``,
    ``y`` as floats (0/1 labels checked for the logistic loss)."""
    loss = check_choice(loss, "loss", ("squared", "logistic"))
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)
    x = check_array(x, "x", ndim=2, kinds="biuf")
    n = x.shape[0]
    if n == 0:
        raise ValueError("x must hold at least one user")
    if loss == "squared":
        y = check_array(y, "y", shape=(n,), kinds="biuf")
    else:
        y = check_array(y, "y", shape=(n,), kinds="biuf", integer=True, bounds=(0, 1)).astype(float)
    return loss, epsilon, delta, x, y


def ldp_sgd(
    x: Any,
    y: Any,
    *,
    loss: str,
    epsilon: float,
    delta: float = 1e-5,
    group_size: int | None = None,
    group_constant: float = 10.0,
    learning_rate: float = 0.1,
    clip: float = 1.0,
    theta_bound: float = 10.0,
    accountant: PrivacyAccountant | None = None,
    seed: SeedLike = None,
) -> LDPSGDResult:
    """Run the LDP-SGD protocol over the users ``(x_i, y_i)`` in a random order.

    Parameters
    ----------
    x : array (n, d)
    y : array (n,): real targets for ``loss='squared'``, 0/1 labels for ``loss='logistic'``
    loss : {"squared", "logistic"}
    epsilon, delta : per-user privacy parameters
    group_size : int, optional; default :func:`default_group_size`
    group_constant, learning_rate, clip, theta_bound : see the module docstring
    accountant : charged (epsilon, delta) once (each user reports once)
    seed : reproducibility only, not security; ``None`` draws fresh OS entropy, which is
        not secure either (float noise)

    Returns
    -------
    LDPSGDResult
        Its record's details carry ``secure: False``, ``randomness`` and ``noise``.
    """
    loss, epsilon, delta, x, y = _check_protocol_inputs(x, y, loss, epsilon, delta)
    n, d = x.shape
    clip = check_positive(clip, "clip")
    lr = check_positive(learning_rate, "learning_rate")
    bound = check_positive(theta_bound, "theta_bound")
    check_positive(group_constant, "group_constant")
    G = default_group_size(n, d, epsilon, group_constant=group_constant) if group_size is None else check_int(group_size, "group_size", minimum=1)
    if G > n:
        raise ValueError(f"group_size must be <= the number of users ({n}), got {G}")
    rng = check_random_state(seed)
    sigma = analytic_gaussian_sigma(epsilon, delta, 2.0 * clip)
    if accountant is not None:
        if not isinstance(accountant, PrivacyAccountant):
            raise TypeError(f"accountant must be a PrivacyAccountant or None, got {type(accountant).__name__}")
        accountant.spend(epsilon, delta, label="LDP-SGD gradients", record=PrivacyRecord(  # float noise: no curve
            mechanism="analytic_gaussian", epsilon=epsilon, delta=delta, details={"secure": False, "local": True}))
    order = rng.permutation(n)
    steps = n // G                                  # the last n mod G users are not contacted
    theta = np.zeros(d)
    total = np.zeros(d)
    for t in range(steps):
        users = order[t * G:(t + 1) * G]
        g = _gradients(loss, x[users], y[users], theta)
        norms = np.linalg.norm(g, axis=1)
        g *= np.minimum(1.0, clip / np.maximum(norms, 1e-300))[:, None]
        reports = g + rng.normal(0.0, sigma, size=g.shape)     # what the users send
        theta = theta - lr / math.sqrt(t + 1) * reports.mean(axis=0)
        norm = np.linalg.norm(theta)
        if norm > bound:
            theta *= bound / norm
        total += theta
    record = PrivacyRecord(
        mechanism="analytic_gaussian", epsilon=epsilon, delta=delta, sensitivity=2.0 * clip,
        sensitivity_norm="l2", scale=sigma, n=n, neighbouring="replace-one",
        details={"local": True, "protocol": "LDP-SGD (Kulkarni et al. 2022, Sec. 4.2)", "group_size": G,
                 "steps": steps, "loss": loss, "clip": clip, "seeded": seed is not None,
                 # float NumPy noise is never secure, seeded or not (same keys as mechanisms.py)
                 "secure": False,
                 "randomness": SEEDED_RANDOMNESS if seed is not None else OS_ENTROPY_RANDOMNESS,
                 "noise": FLOAT_NOISE,
                 "users_not_contacted": int(n - steps * G)},
    )
    return LDPSGDResult(theta=total / max(steps, 1), theta_last=theta, group_size=G, steps=steps, sigma=sigma,
                        record=record)


@dataclasses.dataclass(frozen=True)
class LDPSGDRuns:
    """Independent LDP-SGD runs, one per learning rate: ``theta`` (runs, d) the iterate averages,
    ``theta_last`` (runs, d) the last iterates, the shared group size, steps and noise sd."""

    theta: np.ndarray
    theta_last: np.ndarray
    learning_rates: np.ndarray
    group_size: int
    steps: int
    sigma: float


def ldp_sgd_runs(
    x: Any,
    y: Any,
    *,
    loss: str,
    epsilon: float,
    learning_rates: Any,
    delta: float = 1e-5,
    group_constant: float = 10.0,
    clip: float = 1.0,
    theta_bound: float = 10.0,
    accountant: PrivacyAccountant | None = None,
    seed: SeedLike = None,
) -> LDPSGDRuns:
    """Several independent runs of the :func:`ldp_sgd` protocol over the same users, one per
    entry of ``learning_rates`` (repeat an entry for repeated runs), computed together.

    Run ``r`` is the protocol of :func:`ldp_sgd` with ``learning_rate = learning_rates[r]`` and
    the group size :func:`default_group_size` gives for ``group_constant``: its own random user
    order and its own noise. Every run makes every contacted user report once more, so the
    runs cost ``len(learning_rates)`` times ``(epsilon, delta)`` per user by basic composition
    (Dwork & Roth 2014, Thm 3.16); ``accountant`` is charged once per run. The randomness is
    drawn in this order: the runs' user orders, then at each step one ``(runs, G, d)`` block of
    noise, so that one run with a generator in a given state is :func:`ldp_sgd`'s run (to
    rounding). Used to tune the protocol's settings (:mod:`.ldp_sgd_tuning`); the same
    caveats as :func:`ldp_sgd` (float noise, not a secure release).

    Parameters
    ----------
    x : array (n, d)
    y : array (n,)
    loss : {"squared", "logistic"}
    epsilon, delta : per-user privacy parameters of one run
    learning_rates : 1-D array of positive floats, one run each
    group_constant, clip, theta_bound : as for :func:`ldp_sgd`
    accountant : charged ``(epsilon, delta)`` once per run, before any noise is drawn
    seed : reproducibility only, not security

    Returns
    -------
    LDPSGDRuns

    References
    ----------
    .. [1] T. Kulkarni et al. (2022), Sec. 4.2; N. Wang et al. (2019).
    .. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy" (2014),
       Theorem 3.16.
    """
    loss, epsilon, delta, x, y = _check_protocol_inputs(x, y, loss, epsilon, delta)
    n, d = x.shape
    lrs = check_array(learning_rates, "learning_rates", ndim=1, kinds="biuf").astype(float)
    if lrs.size == 0 or not np.all(lrs > 0):
        raise ValueError(f"learning_rates must hold at least one value, all > 0, got {lrs.tolist()}")
    clip = check_positive(clip, "clip")
    bound = check_positive(theta_bound, "theta_bound")
    G = default_group_size(n, d, epsilon, group_constant=check_positive(group_constant, "group_constant"))
    rng = check_random_state(seed)
    if accountant is not None and not isinstance(accountant, PrivacyAccountant):
        raise TypeError(f"accountant must be a PrivacyAccountant or None, got {type(accountant).__name__}")
    sigma = analytic_gaussian_sigma(epsilon, delta, 2.0 * clip)
    runs = lrs.size
    if accountant is not None:
        for r in range(runs):
            accountant.spend(epsilon, delta, label=f"LDP-SGD tuning run {r}", record=PrivacyRecord(
                mechanism="analytic_gaussian", epsilon=epsilon, delta=delta, details={"secure": False, "local": True}))
    orders = np.stack([rng.permutation(n) for _ in range(runs)])
    steps = n // G
    theta = np.zeros((runs, d))
    total = np.zeros((runs, d))
    for t in range(steps):
        users = orders[:, t * G:(t + 1) * G]                      # (runs, G)
        xs, ys = x[users], y[users]                               # (runs, G, d), (runs, G)
        eta = np.einsum("rgd,rd->rg", xs, theta)
        if loss == "squared":
            g = (eta - ys)[:, :, None] * xs
        else:
            ypm = 2.0 * ys - 1.0
            g = (-ypm * expit(-ypm * eta))[:, :, None] * xs
        norms = np.linalg.norm(g, axis=2)
        g *= np.minimum(1.0, clip / np.maximum(norms, 1e-300))[:, :, None]
        reports = g + rng.normal(0.0, sigma, size=g.shape)
        theta = theta - (lrs / math.sqrt(t + 1))[:, None] * reports.mean(axis=1)
        norm = np.linalg.norm(theta, axis=1)
        theta *= np.where(norm > bound, bound / np.maximum(norm, 1e-300), 1.0)[:, None]
        total += theta
    return LDPSGDRuns(theta=total / max(steps, 1), theta_last=theta, learning_rates=lrs, group_size=G, steps=steps,
                      sigma=sigma)
