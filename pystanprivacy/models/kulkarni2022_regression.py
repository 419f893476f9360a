"""Noise-aware Bayesian linear and logistic regression under local DP (Kulkarni et al. 2022).

Four private models, each a Python class around one Stan program in ``stan/kulkarni2022/``,
plus two named non-private baselines:

========================================  =============================================
class                                     what every user sends (all (epsilon, delta)-LDP)
========================================  =============================================
:class:`LinearRegressionSS`               ``[t2(x), y x, y^2] + N(0, diag(s1^2, s2^2, s3^2))``
                                          (Eq. 3, Lemma 3.1, Corollary 3.1)
:class:`LinearRegressionInputs`           ``x + N(0, sx^2 I)`` and ``y + N(0, sy^2)``
                                          (Eq. 34-41, Eq. 45)
:class:`LogisticRegressionSS`             ``[y x, t2(x)] + N(0, diag(s1^2, s2^2))``, y in {-1, 1}
                                          (Sec. 7, 13.2, Lemma 13.1)
:class:`LogisticRegressionInputs`         ``x + N(0, sx^2 I)`` and randomised response of y
                                          (Eq. 42-44, Eq. 45)
:class:`NonPrivateLinearRegression`       nothing private: the named non-private baseline
:class:`NonPrivateLogisticRegression`     nothing private: the named non-private baseline
========================================  =============================================

``t2(x) = [x_1^2, ..., x_d^2, sqrt(2) x_1 x_2, ..., sqrt(2) x_{d-1} x_d]``: the upper
triangle of ``x x'`` with the off-diagonal products scaled by sqrt(2), so that
``||t2(x)|| = ||x x'||_F = ||x||^2``. The sensitivity proofs of Lemma 3.1 and Lemma 13.1
(supplement Eq. 15) bound exactly ``||x x' - x' x'^T||_F``, so with this layout the
sensitivities below hold with equality in the x x' part, and the d(d+1)/2 released numbers
carry the same information as the d^2 entries of vec(x x') with the same noise.

Every release takes the declared bounds ``R`` (``||x||_2 <= R``) and ``R_y`` (``|y| <= R_y``)
and **clips** data to them (rows of x scaled to norm R, y clipped to [-R_y, R_y]; stated in the
record's ``input_clipping``): the sensitivities come from the bounds, never from the data, and
no release is refused because of a value (that would tell neighbouring data sets apart). Data
prepared with :func:`pystanprivacy.experiments.kulkarni2022.data.prepare_regression_data` are within the bounds
already, so clipping does not change them.

Seeds give reproducibility, not security.

References
----------
.. [1] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela, "Locally Differentially Private
   Bayesian Inference", arXiv:2110.14426 (2022). Sec. 3.1.1-3.1.2, 3.2.3; supplement
   Sec. 7, 8, 9.1, 12, 13.
.. [2] J. Huggins, R. Adams and T. Broderick, "PASS-GLM: polynomial approximate sufficient
   statistics for scalable Bayesian GLM inference", NeurIPS 2017.
.. [3] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy:
   Analytical Calibration and Optimal Denoising", ICML 2018.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.polynomial import chebyshev as _cheb
from scipy.special import expit

from .._validation import (
    SeedLike,
    check_array,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_radius,
    check_random_state,
)
from ..privacy.ldp import gaussian_reports, split_budget
from ..privacy.mechanisms import AnalyticGaussian, ClipL2, RandomizedResponse, analytic_gaussian_sigma
from ..privacy.records import PrivacyAccountant, PrivacyRecord, Release, noise_details
from ..sampling.posterior import Posterior
from .base import NONPRIVATE, Example, Model, check_release_matches_record, with_record
from .kulkarni2022 import _LDPModel

__all__ = [
    "PAPER_REFERENCE",
    "DEFAULT_DELTA",
    "PARAMETERISATIONS",
    "SIGNED_TAU_MIN_NOISE",
    "TAU_PARAMETERISATIONS",
    "CHOL_MIN_SNR",
    "pair_layout",
    "t2",
    "linreg_statistics",
    "logreg_statistics",
    "linreg_sensitivity",
    "logreg_sensitivity",
    "input_sensitivity",
    "split_budget",
    "linreg_moments",
    "logreg_moments",
    "logit_stein",
    "quadrature_grid",
    "chebyshev_sigmoid",
    "clip_features",
    "clip_targets",
    "check_labels",
    "LinearRegressionSS",
    "LinearRegressionInputs",
    "LogisticRegressionSS",
    "LogisticRegressionInputs",
    "NonPrivateLinearRegression",
    "NonPrivateLogisticRegression",
]

PAPER_REFERENCE = "Kulkarni, Jalko, Kaski & Honkela (2022), Locally Differentially Private Bayesian Inference"
#: delta used when none is given (the paper does not state its delta)
DEFAULT_DELTA = 1e-5
#: prior scales of Figure 8 / Sec. 8, reading N(0, 5I) and N(0, 2.5 I) as covariances
DEFAULT_PRIOR_THETA_SD = math.sqrt(5.0)
DEFAULT_PRIOR_TAU_SD = math.sqrt(2.5)
DEFAULT_LKJ_ETA = 2.0
#: parameterisations of LinearRegressionSS (same posterior, different sampler coordinates)
PARAMETERISATIONS = ("auto", "theta", "cholesky")
#: "auto" samples the Cholesky coordinates when every privatised E[x_j^2] is at least this many
#: noise sds of its mean (benchmarked: see benchmarks/bench_models.py and the README)
CHOL_MIN_SNR = 3.0


#: parameterisations of LogisticRegressionInputs: the coordinates of tau (same posterior)
TAU_PARAMETERISATIONS = ("auto", "log_tau", "signed_tau")
#: "auto" samples a signed tau when the noise sd of the privatised mean of z_x,j^2,
#: sigma_x^2 sqrt(2 / n), is at least this many times R^2, the largest Var(x_j) that
#: ||x|| <= R allows; below it the data pin tau away from 0 and log(tau) is as fast
#: (benchmarks/README.md, bench_signed_tau.py)
SIGNED_TAU_MIN_NOISE = 0.1


def _check_parameterisation(value: Any, allowed: tuple[str, ...] = PARAMETERISATIONS) -> str:
    if not isinstance(value, str):
        raise TypeError(f"parameterisation must be a str, one of {allowed}, got {value!r}")
    if value not in allowed:
        raise ValueError(f"parameterisation must be one of {allowed}, got {value!r}")
    return value


def _sample_chol(parameterisation: str, t2_diag_sum: np.ndarray, n: int, sigma_t2: float) -> bool:
    """The Stan flag ``sample_chol`` of the sufficient-statistics models: for ``"auto"``, whether
    every privatised ``E[x_j^2]`` (``t2_diag_sum / n``) is at least ``CHOL_MIN_SNR`` noise sds
    ``sigma_t2 / sqrt(n)`` of that mean (the data pin Sigma, so the Cholesky coordinates mix
    better; with weak data they form a funnel). Post-processing of the release only."""
    if parameterisation != "auto":
        return parameterisation == "cholesky"
    return bool(np.min(t2_diag_sum) / n >= CHOL_MIN_SNR * sigma_t2 / math.sqrt(n))


# ----------------------------------------------------------------------------- layouts
def pair_layout(d: int, with_y: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """0-based index pairs ``(I, J)`` and weights ``w`` of the statistics ``w_a u_I u_J`` of
    ``u = (x_1, ..., x_d, y)``: t2(x) (diagonal, then the upper triangle row by row, weight
    sqrt(2) off the diagonal), then, with ``with_y``, ``y x_1 .. y x_d`` and ``y^2``.

    The same layout as ``ldp_pair_index`` / ``ldp_pair_weight`` in
    ``stan/functions/ldp_regression.stanfunctions``.
    """
    d = check_int(d, "d", minimum=1)
    iu, ju = np.triu_indices(d, k=1)
    I = [np.arange(d), iu]
    J = [np.arange(d), ju]
    w = [np.ones(d), np.full(iu.size, math.sqrt(2.0))]
    if with_y:
        I += [np.arange(d), [d]]
        J += [np.full(d, d), [d]]
        w += [np.ones(d), [1.0]]
    return (np.concatenate(I).astype(int), np.concatenate(J).astype(int), np.concatenate(w))


def t2(x: np.ndarray) -> np.ndarray:
    """``t2(x)`` of every row of ``x`` (n, d) -> (n, d(d+1)/2); ``||t2(x_i)|| = ||x_i||^2``."""
    x = np.asarray(x, dtype=float)
    I, J, w = pair_layout(x.shape[1], with_y=False)
    return x[:, I] * x[:, J] * w


def linreg_statistics(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-user ``[t2(x), y x, y^2]`` (Sec. 3.1.1), shape (n, d(d+1)/2 + d + 1)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    return np.hstack([t2(x), y[:, None] * x, (y * y)[:, None]])


def logreg_statistics(x: np.ndarray, y_pm: np.ndarray) -> np.ndarray:
    """Per-user ``[y x, t2(x)]`` with ``y`` in {-1, 1} (Sec. 13.2, Lemma 13.1)."""
    x = np.asarray(x, dtype=float)
    y_pm = np.asarray(y_pm, dtype=float)
    return np.hstack([y_pm[:, None] * x, t2(x)])


# ------------------------------------------------------------------------ sensitivities
def linreg_sensitivity(R: float, R_y: float, ratio_xy: float = 1.0, ratio_yy: float = 1.0) -> float:
    """L2 sensitivity of Lemma 3.1 for the rescaled statistic, noise ``sigma_1`` on every entry.

    With noise sds ``sigma_1`` (t2(x)), ``sigma_2 = ratio_xy sigma_1`` (y x) and
    ``sigma_3 = ratio_yy sigma_1`` (y^2), releasing ``[t2, y x, y^2] + N(0, diag)`` is the
    Gaussian mechanism with noise sd ``sigma_1`` on ``F = [t2, y x / ratio_xy, y^2 / ratio_yy]``
    (supplement Eq. 13), whose sensitivity is bounded by (Eq. 16-17)

    ``Delta^2 = R_y^4 / (2 r_2^4) + 2 R^4 + 2 R_y^2 R^2 / r_2^2 + R_y^4 / r_3^2``.

    Corollary 3.1 (R = 1, equal sigmas): ``sqrt(3 R_y^4 / 2 + 2 R_y^2 + 2)``.

    Computed as the norm of the four terms' roots (``math.hypot``), so no power overflows
    while the result is finite; a sensitivity beyond the float64 range is a ``ValueError``
    naming ``R`` and ``R_y``.
    """
    R = check_positive(R, "R")
    R_y = check_positive(R_y, "R_y")
    r2 = check_positive(ratio_xy, "ratio_xy")
    r3 = check_positive(ratio_yy, "ratio_yy")
    return _finite_sensitivity(
        _linreg_norm(R, R_y, r2, r3), f"R={R!r}, R_y={R_y!r}, ratio_xy={r2!r}, ratio_yy={r3!r}", "Lemma 3.1"
    )


def _linreg_norm(R: float, R_y: float, r2: float, r3: float) -> float:
    """:func:`linreg_sensitivity` of checked arguments, ``inf`` where it overflows: the
    norm of ``(R_y^2 / (sqrt2 r2^2), sqrt2 R^2, sqrt2 R R_y / r2, R_y^2 / r3)``."""
    q2 = R_y / r2
    return math.hypot(q2 * q2 / _SQRT2, _SQRT2 * R * R, _SQRT2 * R * q2, R_y * (R_y / r3))


def _logreg_norm(R: float, r: float) -> float:
    """:func:`logreg_sensitivity` of checked arguments, ``inf`` where it overflows."""
    return math.hypot(r / _SQRT2, _SQRT2 * R, _SQRT2 * R * (R / r))


def logreg_sensitivity(R: float, ratio_t2: float = 1.0) -> float:
    """L2 sensitivity of Lemma 13.1 (noise sd ``sigma_1`` on ``y x``, ``sigma_2 = ratio_t2
    sigma_1`` on t2(x), y in {-1, 1}):
    ``Delta^2 = sigma_2^2 / (2 sigma_1^2) + 2 R^2 + 2 R^4 sigma_1^2 / sigma_2^2``.
    Corollary 13.1 (R = 1, equal sigmas): ``sqrt(4.5)``. Overflow-free as
    :func:`linreg_sensitivity` (a ``ValueError`` naming ``R`` beyond float64)."""
    R = check_positive(R, "R")
    r = check_positive(ratio_t2, "ratio_t2")
    return _finite_sensitivity(_logreg_norm(R, r), f"R={R!r}, ratio_t2={r!r}", "Lemma 13.1")


def input_sensitivity(R: float) -> float:
    """L2 sensitivity ``2 R`` of releasing ``x`` itself with ``||x|| <= R`` (Eq. 45); a
    ``ValueError`` naming ``R`` when 2R is beyond float64."""
    R = check_positive(R, "R")
    return _finite_sensitivity(2.0 * R, f"R={R!r}", "2R, Eq. 45")


_SQRT2 = math.sqrt(2.0)


def _finite_sensitivity(value: float, given: str, source: str) -> float:
    """``value``, a sensitivity computed from the bounds ``given``; refused (``ValueError``
    naming them) when it overflowed float64."""
    if not math.isfinite(value):
        raise ValueError(
            f"{given}: the L2 sensitivity ({source}) is beyond the float64 range; "
            "allowed: bounds whose sensitivity is a finite float (take smaller bounds)"
        )
    return value


# ----------------------------------------------------------------------------- moments
def linreg_moments(Sigma: np.ndarray, theta: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of one ``[t2(x), y x, y^2]`` under ``x ~ N(0, Sigma)``,
    ``y | x ~ N(x' theta, sigma^2)`` (numpy mirror of the Stan functions).

    ``u = (x, y)`` is Gaussian with covariance ``C``; every statistic is ``w_a u_I u_J``, so
    ``E = w_a C_IJ`` and (Isserlis) ``Cov_ab = w_a w_b (C_{I_a I_b} C_{J_a J_b} + C_{I_a J_b} C_{J_a I_b})``.
    """
    Sigma = np.asarray(Sigma, dtype=float)
    theta = np.asarray(theta, dtype=float)
    d = Sigma.shape[0]
    c = Sigma @ theta
    C = np.empty((d + 1, d + 1))
    C[:d, :d] = Sigma
    C[:d, d] = C[d, :d] = c
    C[d, d] = theta @ c + sigma**2
    I, J, w = pair_layout(d, with_y=True)
    mean = w * C[I, J]
    cov = np.outer(w, w) * (C[np.ix_(I, I)] * C[np.ix_(J, J)] + C[np.ix_(I, J)] * C[np.ix_(J, I)])
    return mean, cov


def quadrature_grid(n: int = 801, half_width: float = 8.5) -> tuple[np.ndarray, np.ndarray]:
    """Standard-normal quadrature: ``n`` equispaced nodes on ``[-half_width, half_width]`` with
    weights proportional to the normal density (the trapezoid rule, spectrally accurate for
    smooth integrands; resolves ``E[f(s Z)]`` for features of width down to ~4 node spacings,
    i.e. absolute error < 1e-9 up to s = 40 for the logistic Stein constants)."""
    n = check_int(n, "n", minimum=3)
    half_width = check_positive(half_width, "half_width")
    x = np.linspace(-half_width, half_width, n)
    w = np.exp(-0.5 * x * x)
    return x, w / w.sum()


def logit_stein(s: float, quad: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[float, float]:
    """``(e1, e3) = (E[g'(t)], E[g'''(t)])`` for ``t ~ N(0, s^2)``, ``g(t) = tanh(t/2) =
    E[y | x' theta = t]`` (y in {-1, 1}) -- the constants of the logistic moments."""
    x, w = quadrature_grid() if quad is None else quad
    h2 = np.tanh(0.5 * s * x) ** 2
    return float(0.5 * w @ (1 - h2)), float(-0.25 * w @ ((1 - h2) * (1 - 3 * h2)))


def logreg_moments(
    Sigma: np.ndarray, theta: np.ndarray, quad: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of one ``[y x, t2(x)]`` under ``x ~ N(0, Sigma)``,
    ``P(y = 1 | x) = sigmoid(x' theta)``, ``y`` in {-1, 1} (numpy mirror of the Stan functions).

    Derivation: ``t = x' theta ~ N(0, s^2)``, ``c = Sigma theta``; ``x = c t / s^2 + u`` with
    ``u ~ N(0, Sigma - c c'/s^2)`` independent of t. Then, with ``g(t) = tanh(t/2)``, Stein's
    lemma gives ``E[x_j g] = e1 c_j`` and
    ``E[x_j x_k x_l g] = e1 (c_j Sigma_kl + c_k Sigma_jl + c_l Sigma_jk) + e3 c_j c_k c_l``,
    ``e1 = E[g'(t)]``, ``e3 = E[g'''(t)]``; ``y^2 = 1`` gives ``E[y^2 x x'] = Sigma``; the t2
    moments are Isserlis'. Exact up to the 1-d quadrature of :func:`logit_stein`.
    """
    Sigma = np.asarray(Sigma, dtype=float)
    theta = np.asarray(theta, dtype=float)
    d = Sigma.shape[0]
    c = Sigma @ theta
    e1, e3 = logit_stein(math.sqrt(max(theta @ c, 0.0)), quad)
    K, L, w = pair_layout(d, with_y=False)
    mean = np.concatenate([e1 * c, w * Sigma[K, L]])
    m2 = K.size
    V = np.empty((d + m2, d + m2))
    V[:d, :d] = Sigma - e1**2 * np.outer(c, c)
    cross = e1 * (Sigma[:, L] * c[K] + Sigma[:, K] * c[L]) + e3 * np.outer(c, c[K] * c[L])
    V[:d, d:] = cross * w
    V[d:, :d] = V[:d, d:].T
    V[d:, d:] = np.outer(w, w) * (Sigma[np.ix_(K, K)] * Sigma[np.ix_(L, L)] + Sigma[np.ix_(K, L)] * Sigma[np.ix_(L, K)])
    return mean, V


def chebyshev_sigmoid(radius: float = 4.0, degree: int = 2) -> np.ndarray:
    """Power-basis coefficients ``b_0..b_degree`` of the Chebyshev interpolant of the sigmoid
    on ``[-radius, radius]`` (Sec. 7, Eq. 12): ``sigmoid(t) ~ sum_m b_m t^m``. For degree 2
    on a symmetric interval ``b_2 = 0`` (sigmoid - 1/2 is odd) up to rounding."""
    radius = check_positive(radius, "radius")
    degree = check_int(degree, "degree", minimum=1)
    series = _cheb.Chebyshev.interpolate(expit, degree, domain=[-radius, radius])
    coef = series.convert(kind=np.polynomial.Polynomial, domain=[-radius, radius], window=[-radius, radius]).coef
    out = np.zeros(degree + 1)
    out[: coef.size] = coef
    return out


# -------------------------------------------------------------------------- validation
def clip_features(x: Any, R: float, name: str = "x") -> np.ndarray:
    """``x`` as a finite (n, d) float array with every row of L2 norm above ``R`` scaled down to
    norm ``R`` (:class:`~pystanprivacy.privacy.mechanisms.ClipL2`).

    Clipping is a fixed public map, so the sensitivity derived from ``R`` holds for any input;
    a row beyond the bound is never refused, since a refusal (or a count of such rows in the
    message) would tell two neighbouring data sets apart for free. ``R`` must be at least
    2**-1022 (:func:`~pystanprivacy._validation.check_radius`), checked before the data."""
    R = check_radius(R, "R")
    arr = check_array(x, name, ndim=2, kinds="biuf")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must have at least one row and one column, got shape {arr.shape}")
    return ClipL2(R)(arr.astype(float))


def clip_targets(y: Any, n: int, R_y: float, name: str = "y") -> np.ndarray:
    """Real targets of shape (n,), clipped to ``[-R_y, R_y]`` (never refused, as in
    :func:`clip_features`)."""
    R_y = check_positive(R_y, "R_y")
    arr = check_array(y, name, shape=(n,), kinds="biuf")
    return np.clip(arr.astype(float), -R_y, R_y)


def clipping_details(R: float, R_y: float | None = None) -> dict[str, Any]:
    """The record entry that states the input clipping (public: it holds for every release)."""
    out = {"x": f"rows with L2 norm above R = {R:g} scaled to norm R"}
    if R_y is not None:
        out["y"] = f"clipped to [-R_y, R_y], R_y = {R_y:g}"
    return {"input_clipping": out}


def check_labels(y: Any, n: int, name: str = "y") -> np.ndarray:
    """Binary labels of shape (n,) in {0, 1} as int64."""
    return check_array(y, name, shape=(n,), kinds="biuf", integer=True, bounds=(0, 1))


def _check_ratio(value: Any, name: str) -> float:
    v = check_positive(value, name)
    if not 1e-3 <= v <= 1e3:
        raise ValueError(f"{name} must be in [1e-3, 1e3], got {value!r}")
    return v


#: the largest noise sd the mechanisms serve (their 2**1000 range; privacy.mechanisms)
_MAX_NOISE_SD = 2.0**1000
#: the smallest clipping radius ``ldp.gaussian_reports`` accepts (the smallest normal float64)
_SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)


def _shown(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def _gaussian_part(
    *,
    epsilon: float,
    delta: float,
    sensitivity: float,
    part: str,
    budget: dict[str, Any],
    bounds: dict[str, Any],
    allowed: Callable[[float], str],
    max_ratio: float = 1.0,
    min_sensitivity: float = 0.0,
    seed: SeedLike = None,
) -> AnalyticGaussian:
    """The analytic Gaussian mechanism of one part of a release, calibrated from public
    arguments only, before the data are read and before any charge.

    ``(epsilon, delta)`` is the part's budget, set by the user's arguments ``budget``;
    ``sensitivity`` comes from the user's bounds ``bounds``. The noise sd is
    ``sensitivity * u(epsilon, delta)`` (times at most ``max_ratio`` on some coordinates), and
    must be at most 2**1000, so a ``ValueError`` names the user's arguments: ``budget`` when
    ``u`` itself cannot be computed, else ``bounds`` with the largest sensitivity that
    ``budget`` allows (``allowed(limit)`` says what that means for the bounds). A sensitivity
    below ``min_sensitivity`` (:func:`~pystanprivacy.privacy.ldp.gaussian_reports` clips to
    radius = sensitivity, which must be a normal float) is refused naming ``bounds`` too.

    References
    ----------
    Balle & Wang (2018), Theorem 8 (``u``: :func:`~pystanprivacy.privacy.mechanisms.analytic_gaussian_sigma`).
    """
    try:
        unit = analytic_gaussian_sigma(epsilon, delta, 1.0)
        reason = f"sigma per unit sensitivity {unit!r}"
    except ValueError as exc:
        unit, reason = math.nan, str(exc)
    if not (math.isfinite(unit) and unit > 0.0):
        raise ValueError(
            f"{_shown(budget)} leave the {part} epsilon={epsilon!r} and delta={delta!r}, for which no "
            f"Gaussian noise can be calibrated ({reason}); allowed: arguments that give that part a "
            "larger epsilon and delta"
        )
    limit = _MAX_NOISE_SD / (unit * max_ratio)
    if not sensitivity <= limit:
        raise ValueError(
            f"{_shown(bounds)}: the L2 sensitivity of the {part}, {sensitivity!r}, is above the "
            f"{limit!r} that {_shown(budget)} allow (its noise sd must stay within 2**1000); allowed: " + allowed(limit)
        )
    if not sensitivity >= min_sensitivity:
        raise ValueError(
            f"{_shown(bounds)}: the L2 sensitivity of the {part}, {sensitivity!r}, is below "
            f"{min_sensitivity!r}, the smallest normal float64 (the clipping radius it sets cannot be "
            "met in floating point); allowed: larger bounds"
        )
    try:  # the mechanism's own calibration may differ from sensitivity * unit in the last bits
        return AnalyticGaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity, seed=seed)
    except ValueError as exc:
        raise ValueError(
            f"{_shown({**budget, **bounds})}: the noise of the {part} cannot be calibrated ({exc})"
        ) from None


def _release_part(
    mech: AnalyticGaussian, values: np.ndarray, *, changed: int, part: str, budget: dict[str, Any]
) -> Release:
    """``mech.release(values, changed=changed)``, uncharged (the caller charges the whole
    release after every part is made); a refusal of the part's secure-noise plan (public
    inputs only: its budget and the number of changed coordinates) re-raised naming the
    user's arguments ``budget``."""
    try:
        return mech.release(values, changed=changed)
    except ValueError as exc:
        raise ValueError(
            f"{_shown(budget)} leave the {part} too small a budget for its noise: {exc}; allowed: "
            "arguments that give that part a larger epsilon and delta"
        ) from None


def _spend(accountant: PrivacyAccountant | None, epsilon: float, delta: float, label: str, record: Any = None) -> None:
    if accountant is None:
        return
    if not isinstance(accountant, PrivacyAccountant):
        raise TypeError(f"accountant must be a PrivacyAccountant or None, got {type(accountant).__name__}")
    accountant.spend(epsilon, delta, label=label, record=record)  # the records of the release's parts


#: the record's mechanism of each release kind (what its ``release`` writes)
_RELEASE_MECHANISMS = {
    "kulkarni2022/linear_regression_ss": "analytic_gaussian",
    "kulkarni2022/linear_regression_inputs": "analytic_gaussian",
    "kulkarni2022/logistic_regression_ss": "analytic_gaussian",
    "kulkarni2022/logistic_regression_inputs": "analytic_gaussian+randomized_response",
}


def _check_release(release: Any, kind: str, cls: str) -> Release:
    """``release`` after checking that its record is that of ``cls.release``: the release kind,
    the mechanism of that kind and a local release (``details["local"]``)."""
    if not isinstance(release, Release):
        raise TypeError(f"release must be a Release made by {cls}.release, got {type(release).__name__}")
    rec = release.record
    mechanism = _RELEASE_MECHANISMS[kind]
    if rec.details.get("release_kind") != kind or rec.mechanism != mechanism or rec.details.get("local") is not True:
        raise ValueError(
            f"release must come from {cls}.release (release_kind {kind!r}, a local {mechanism!r} release); "
            f"got mechanism={rec.mechanism!r}, release_kind={rec.details.get('release_kind')!r}, "
            f"local={rec.details.get('local')!r}"
        )
    return release


def _statistics_release(
    stats: np.ndarray,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float,
    ratios: np.ndarray,
    accountant: PrivacyAccountant | None,
    seed: SeedLike,
    label: str,
) -> Release:
    """Every user's statistic row plus ``N(0, diag(sigma_1 ratios)^2)``: the Gaussian mechanism
    with noise sd ``sigma_1`` on the rescaled statistic ``stats / ratios`` (supplement Eq. 13),
    ``sigma_1`` the analytic calibration for ``sensitivity`` -- one implementation,
    :func:`pystanprivacy.privacy.ldp.gaussian_reports`."""
    return gaussian_reports(
        stats,
        epsilon=epsilon,
        delta=delta,
        sensitivity=sensitivity,
        scale_ratios=ratios,
        accountant=accountant,
        seed=seed,
        label=label,
    )  # None: secure discrete noise


def _add_details(release: Release, **extra: Any) -> Release:
    details = {**release.record.details, **extra}
    return Release(values=release.values, record=dataclasses.replace(release.record, details=details))


def _inputs_release(
    kind: str,
    mechanism: str,
    zx: np.ndarray,
    zy: np.ndarray,
    *,
    epsilon: float,
    delta: float,
    c: float,
    eps_label: float,
    eps_features: float,
    delta_label: float,
    seed: SeedLike,
    R: float,
    sigma_x: float,
    columns: str,
    reference: str,
    label: dict[str, Any],
    **extra: Any,
) -> Release:
    """The Release of a perturbed-inputs model: features ``zx`` (n, d) from the Gaussian mechanism
    with sensitivity 2R (Eq. 45) and the label column ``zy``, budgets composed basically."""
    n, d = zx.shape
    record = PrivacyRecord(
        mechanism=mechanism,
        epsilon=epsilon,
        delta=delta,
        sensitivity=None,
        sensitivity_norm="l2",
        scale=None,
        n=n,
        neighbouring="replace-one",
        details={
            "release_kind": kind,
            "local": True,
            "seeded": seed is not None,
            "d": d,
            "R": R,
            "columns": columns,
            "budget_split": {
                "c": c,
                "epsilon_label": eps_label,
                "epsilon_features": eps_features,
                "delta_label": delta_label,
                "delta_features": delta - delta_label,
                "composition": "basic (sum of the two parts)",
            },
            "features": {
                "mechanism": "analytic_gaussian",
                "sensitivity": input_sensitivity(R),
                "sensitivity_is": "2R, Eq. 45",
                "sigma": sigma_x,
            },
            "label": label,
            "sigma_x": sigma_x,
            **extra,
            "reference": reference,
        },
    )
    return Release(values=np.column_stack([zx, zy]), record=record)


#: feature covariance and coefficients of the examples' simulated users (d = 3)
EXAMPLE_SIGMA = np.array([[0.09, 0.02, 0.0], [0.02, 0.05, 0.01], [0.0, 0.01, 0.04]])
EXAMPLE_THETA = np.array([1.5, -2.0, 1.0])


def simulate_regression(n: int, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` users' features x ~ N(0, :data:`EXAMPLE_SIGMA`) clipped to the unit ball and
    targets: ``kind="linear"``: y = clip(x theta + N(0, 0.3^2), -1, 1); ``"logistic"``:
    y ~ Bernoulli(expit(2 x theta)) (theta = :data:`EXAMPLE_THETA`)."""
    x = ClipL2(1.0)(rng.multivariate_normal(np.zeros(3), EXAMPLE_SIGMA, size=n))
    if kind == "linear":
        return x, np.clip(x @ EXAMPLE_THETA + rng.normal(0, 0.3, n), -1, 1)
    return x, (rng.random(n) < expit(2 * x @ EXAMPLE_THETA)).astype(int)


def _regression_example(cls: type[Model], n: int, seed: int) -> Example:
    """The example of a regression class: :func:`simulate_regression` of its kind (linear or
    logistic, from its model name); a private model's release at ``epsilon = 4`` (``R_y = 1``
    for the linear ones), a non-private baseline's raw (x, y)."""
    kind = "linear" if "/linear_" in cls.model_name else "logistic"
    x, y = simulate_regression(check_int(n, "n", minimum=1), kind, np.random.default_rng(seed))
    kwargs = {} if not cls.private else {"epsilon": 4.0, **({"R_y": 1.0} if kind == "linear" else {})}
    return Example(cls(), {"x": x, "y": y}, kwargs, "x", truth={"theta": EXAMPLE_THETA.copy()})


class _PriorMixin(_LDPModel):
    """The priors and the release check shared by the four private regression models."""

    #: the ``release_kind`` their ``release`` writes into the record (its model name)
    kind: str = ""

    def __init__(self, *, prior_theta_sd: float, prior_tau_sd: float, lkj_eta: float, backend: str | None) -> None:
        super().__init__(backend)
        self.prior_theta_sd = check_positive(prior_theta_sd, "prior_theta_sd")
        self.prior_tau_sd = check_positive(prior_tau_sd, "prior_tau_sd")
        self.lkj_eta = check_positive(lkj_eta, "lkj_eta")

    @classmethod
    def published(cls, *args: Any, **kwargs: Any) -> Release:
        """Not offered for the regressions: their Gaussian noise sds are not fixed by
        ``(epsilon, delta)`` and the declared bounds alone (the secure discrete-noise path and
        the seeded path calibrate them differently, and the sd ratios are the releaser's
        choice), so reports made elsewhere must come with the record they were made with:
        rebuild that release with :meth:`Release.from_dict` and pass it to :meth:`fit`."""
        raise NotImplementedError(
            f"{cls.__name__} has no published form: the noise sds of its reports depend on how they were "
            "calibrated, not only on epsilon, delta and the bounds; rebuild the releaser's Release with "
            "Release.from_dict(their_release.to_dict()) and fit that"
        )

    def _priors(self) -> dict[str, float]:
        return {"prior_theta_sd": self.prior_theta_sd, "prior_tau_sd": self.prior_tau_sd, "lkj_eta": self.lkj_eta}

    @staticmethod
    def _report_width(d: int) -> int:
        """Columns of one user's report for d features: the perturbed inputs ``z_x`` and the
        label column (the sufficient-statistics models override it)."""
        return d + 1

    def _reports(self, release: Any) -> tuple[Release, int, np.ndarray]:
        """The release (checked to come from this class's ``release``), its feature dimension d
        and its (n, width) report matrix."""
        release = _check_release(release, self.kind, type(self).__name__)
        d = check_int(release.record.details.get("d"), "release record's d", minimum=1)
        # numbers only (a forged string array is refused, never coerced), finite, 2-d
        values = check_array(release.values, "release values", ndim=2)
        width = self._report_width(d)
        if values.shape[1] != width or values.shape[0] < 1:
            raise ValueError(f"release values must have shape (n, {width}) with n >= 1, got {values.shape}")
        # one report per user: as many rows as the record's n
        check_release_matches_record(release, values, model=type(self).__name__, records_axis=0)
        return release, d, values

    @classmethod
    def example(cls, n: int = 1000, *, seed: int = 0) -> Example:
        """Simulated users (:func:`simulate_regression`) and the release's public arguments
        (:class:`~pystanprivacy.models.base.Example`)."""
        return _regression_example(cls, n, seed)

    def fit(self, release: Release, **sample_kwargs: Any) -> Posterior:
        """Posterior of ``theta`` (and ``Sigma``, ...) given the release; post-processing, so
        every draw keeps the release's LDP guarantee, and the posterior carries the release's
        record (``posterior.privacy``). ``sample_kwargs`` go to
        :meth:`pystanprivacy.sampling.stan.StanModel.sample` (``adapt_delta`` defaults to 0.95 here:
        with strong noise the posterior of Sigma has funnel-like regions)."""
        sample_kwargs.setdefault("adapt_delta", 0.95)
        return super().fit(release, **sample_kwargs)


# ------------------------------------------------------------------ linear regression SS
class _LinearPriorMixin(_PriorMixin):
    """The priors of both linear-regression models: those of :class:`_PriorMixin` plus
    ``sigma ~ N+(0, prior_sigma_sd^2)`` (default: the release's ``R_y``)."""

    def __init__(
        self,
        *,
        prior_theta_sd: float = DEFAULT_PRIOR_THETA_SD,
        prior_tau_sd: float = DEFAULT_PRIOR_TAU_SD,
        prior_sigma_sd: float | None = None,
        lkj_eta: float = DEFAULT_LKJ_ETA,
        backend: str | None = None,
    ) -> None:
        super().__init__(prior_theta_sd=prior_theta_sd, prior_tau_sd=prior_tau_sd, lkj_eta=lkj_eta, backend=backend)
        self.prior_sigma_sd = None if prior_sigma_sd is None else check_positive(prior_sigma_sd, "prior_sigma_sd")

    def _sigma_prior(self, details: dict[str, Any]) -> float:
        return self.prior_sigma_sd or float(details["R_y"])


class LinearRegressionSS(_LinearPriorMixin):
    """Linear regression from locally perturbed sufficient statistics (Sec. 3.1.1, Eq. 3).

    Parameters
    ----------
    prior_theta_sd, prior_tau_sd, lkj_eta : float
        Priors of Figure 8 / Sec. 8: ``theta ~ N(0, prior_theta_sd^2 I)``,
        ``Sigma = diag(tau) Omega diag(tau)``, ``tau ~ N+(0, prior_tau_sd^2)``,
        ``Omega ~ LKJ(lkj_eta)`` (defaults sqrt(5), sqrt(2.5), 2).
    prior_sigma_sd : float, optional
        ``sigma ~ N+(0, prior_sigma_sd^2)``; default: the release's ``R_y``.
    parameterisation : {"auto", "theta", "cholesky"}
        Coordinates the sampler moves in; the posterior is the same (exact reparameterisation,
        see the Stan file). ``"theta"``: theta and log(sigma), best with weak data.
        ``"cholesky"``: the last row ``b = L_x' theta`` of the Cholesky factor of the joint
        covariance of (x, y) and a softplus of sigma, best when the data pin Sigma (a funnel
        otherwise). ``"auto"`` (default) takes ``"cholesky"`` when every privatised
        second moment ``z_sum[j] / n`` of x (j <= d) is at least :data:`CHOL_MIN_SNR` times
        the noise sd of that mean, ``sigma_1 / sqrt(n)``: post-processing of the release.
    backend : str, optional

    Examples
    --------
    >>> rel = LinearRegressionSS.release(x, y, epsilon=2.0, R_y=2.0, seed=1)   # doctest: +SKIP
    >>> post = LinearRegressionSS().fit(rel, chains=4)                         # doctest: +SKIP
    >>> post.draws("theta").mean(axis=0)                                       # doctest: +SKIP
    """

    model_name = "kulkarni2022/linear_regression_ss"
    kind = "kulkarni2022/linear_regression_ss"

    def __init__(
        self,
        *,
        prior_theta_sd: float = DEFAULT_PRIOR_THETA_SD,
        prior_tau_sd: float = DEFAULT_PRIOR_TAU_SD,
        prior_sigma_sd: float | None = None,
        lkj_eta: float = DEFAULT_LKJ_ETA,
        parameterisation: str = "auto",
        backend: str | None = None,
    ) -> None:
        super().__init__(
            prior_theta_sd=prior_theta_sd,
            prior_tau_sd=prior_tau_sd,
            prior_sigma_sd=prior_sigma_sd,
            lkj_eta=lkj_eta,
            backend=backend,
        )
        self.parameterisation = _check_parameterisation(parameterisation)

    def sample_chol(self, z_sum: np.ndarray, n: int, d: int, sigma_t2: float) -> bool:
        """Whether the fit samples the Cholesky coordinates (see ``parameterisation``): for
        ``"auto"``, every ``z_sum[j] / n`` (j < d, the privatised E[x_j^2]) is at least
        ``CHOL_MIN_SNR * sigma_t2 / sqrt(n)``. Uses only the release and public values."""
        return _sample_chol(self.parameterisation, z_sum[:d], n, sigma_t2)

    @classmethod
    def release(
        cls,
        x: Any,
        y: Any,
        *,
        epsilon: float,
        delta: float = DEFAULT_DELTA,
        R: float = 1.0,
        R_y: float = 1.0,
        ratio_xy: float = 1.0,
        ratio_yy: float = 1.0,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
    ) -> Release:
        """Every user's ``[t2(x), y x, y^2]`` plus Gaussian noise: (epsilon, delta)-LDP.

        Noise sds ``sigma_1`` (t2), ``ratio_xy sigma_1`` (y x), ``ratio_yy sigma_1`` (y^2), with
        ``sigma_1`` the analytic Gaussian calibration for :func:`linreg_sensitivity`
        (Lemma 3.1; Corollary 3.1 when R = 1 and the ratios are 1).

        Parameters
        ----------
        x : array (n, d), rows with ``||x_i|| <= R``
        y : array (n,), ``|y_i| <= R_y``
        epsilon, delta : per-user privacy parameters (delta in (0, 1))
        R, R_y : declared bounds (public)
        ratio_xy, ratio_yy : sigma_2 / sigma_1 and sigma_3 / sigma_1 (public, in [1e-3, 1e3])
        accountant : charged (epsilon, delta) once (users are disjoint: parallel composition)
        seed : reproducibility only, not security

        Returns
        -------
        Release
            values (n, d(d+1)/2 + d + 1): the n reports the aggregator receives.
        """
        epsilon = check_epsilon(epsilon)
        delta = check_delta(delta, positive=True)
        R = check_positive(R, "R")
        R_y = check_positive(R_y, "R_y")
        r2 = _check_ratio(ratio_xy, "ratio_xy")
        r3 = _check_ratio(ratio_yy, "ratio_yy")
        sensitivity = _linreg_norm(R, R_y, r2, r3)  # inf beyond float64: refused below, naming R and R_y
        _gaussian_part(
            epsilon=epsilon,
            delta=delta,
            sensitivity=sensitivity,
            part="statistics",
            max_ratio=max(1.0, r2, r3),
            min_sensitivity=_SMALLEST_NORMAL,
            budget={"epsilon": epsilon, "delta": delta},
            bounds={"R": R, "R_y": R_y, "ratio_xy": r2, "ratio_yy": r3},
            allowed=lambda limit: f"R and R_y whose Lemma 3.1 sensitivity is at most {limit!r}",
        )
        x = clip_features(x, R)
        y = clip_targets(y, x.shape[0], R_y)
        d = x.shape[1]
        m2 = d * (d + 1) // 2
        ratios = np.concatenate([np.ones(m2), np.full(d, r2), [r3]])
        rel = _statistics_release(
            linreg_statistics(x, y),
            epsilon=epsilon,
            delta=delta,
            sensitivity=sensitivity,
            ratios=ratios,
            accountant=accountant,
            seed=seed,
            label="LDP linear regression statistics",
        )
        sigma1 = rel.record.scale
        return _add_details(
            rel,
            release_kind=cls.kind,
            d=d,
            R=R,
            R_y=R_y,
            statistic="[t2(x), y x, y^2], t2 off-diagonals scaled by sqrt(2)",
            sigma_t2=sigma1,
            sigma_xy=r2 * sigma1,
            sigma_yy=r3 * sigma1,
            ratio_xy=r2,
            ratio_yy=r3,
            sensitivity_is="Lemma 3.1 (Eq. 17) for the noise-sd-sigma_1 rescaled statistic",
            reference=f"{PAPER_REFERENCE}, Sec. 3.1.1, Lemma 3.1, Corollary 3.1",
            **clipping_details(R, R_y),
        )

    @staticmethod
    def _report_width(d: int) -> int:
        return d * (d + 1) // 2 + d + 1

    def data(self, release: Release) -> dict[str, Any]:
        """Stan data: the sum of the reports and the noise sds from the record."""
        release, d, values = self._reports(release)
        det = release.record.details
        n = int(values.shape[0])
        z_sum = values.sum(axis=0)
        return {
            "d": d,
            "n": n,
            "z_sum": z_sum,
            "sigma_t2": det["sigma_t2"],
            "sigma_xy": det["sigma_xy"],
            "sigma_yy": det["sigma_yy"],
            "prior_sigma_sd": self._sigma_prior(det),
            **self._priors(),
            "sample_chol": int(self.sample_chol(z_sum, n, d, float(det["sigma_t2"]))),
        }


# -------------------------------------------------------------- linear regression inputs
class LinearRegressionInputs(_LinearPriorMixin):
    """Linear regression from locally perturbed inputs (Sec. 3.2.3, supplement Eq. 34-41).

    Every user sends ``x + N(0, sigma_x^2 I)`` (sensitivity 2R, Eq. 45, budget
    ``((1 - c) epsilon, (1 - c) delta)``) and ``y + N(0, sigma_y^2)`` (sensitivity 2 R_y,
    budget ``(c epsilon, c delta)``). The model marginalises every latent ``x_i, y_i``.
    Parameters as :class:`LinearRegressionSS`.
    """

    model_name = "kulkarni2022/linear_regression_inputs"
    kind = "kulkarni2022/linear_regression_inputs"

    @classmethod
    def release(
        cls,
        x: Any,
        y: Any,
        *,
        epsilon: float,
        delta: float = DEFAULT_DELTA,
        c: float = 0.5,
        R: float = 1.0,
        R_y: float = 1.0,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
    ) -> Release:
        """Perturbed ``[x, y]`` of every user, (epsilon, delta)-LDP by basic composition.

        Returns a Release with values (n, d + 1): columns ``z_x`` then ``z_y``.
        """
        epsilon = check_epsilon(epsilon)
        delta = check_delta(delta, positive=True)
        eps_y, eps_x = split_budget(epsilon, c)
        budget = {"epsilon": epsilon, "delta": delta, "c": c}
        c = eps_y / epsilon
        R = check_positive(R, "R")
        R_y = check_positive(R_y, "R_y")
        rng = None if seed is None else check_random_state(seed)  # None: secure discrete noise
        # both parts calibrated from the public arguments before the data are read
        # sensitivities 2R and 2 R_y (Eq. 45; input_sensitivity), inf beyond float64: refused naming R, R_y
        mech_x = _gaussian_part(
            epsilon=eps_x,
            delta=(1 - c) * delta,
            sensitivity=2.0 * R,
            seed=rng,
            part="features part ((1 - c) epsilon, (1 - c) delta)",
            budget=budget,
            bounds={"R": R},
            allowed=lambda limit: f"R <= {limit / 2!r}",
        )
        mech_y = _gaussian_part(
            epsilon=eps_y,
            delta=c * delta,
            sensitivity=2.0 * R_y,
            seed=rng,
            part="label part (c epsilon, c delta)",
            budget=budget,
            bounds={"R_y": R_y},
            allowed=lambda limit: f"R_y <= {limit / 2!r}",
        )
        x = clip_features(x, R)
        y = clip_targets(y, x.shape[0], R_y)
        # a user's row (d features) / label is what one neighbour changes; the records give the
        # sigma actually used. Nothing is returned unless the spend below succeeds.
        rel_x = _release_part(mech_x, x, changed=x.shape[1], part="features part", budget=budget)
        rel_y = _release_part(mech_y, y, changed=1, part="label part", budget=budget)
        _spend(accountant, epsilon, delta, "LDP linear regression inputs", [rel_x.record, rel_y.record])
        return _inputs_release(
            cls.kind,
            "analytic_gaussian",
            rel_x.values,
            rel_y.values,
            epsilon=epsilon,
            delta=delta,
            c=c,
            eps_label=eps_y,
            eps_features=eps_x,
            delta_label=c * delta,
            seed=seed,
            R=R,
            sigma_x=rel_x.record.scale,
            columns="z_x (d columns), z_y",
            reference=f"{PAPER_REFERENCE}, Sec. 3.2.3, Eq. 34-41, 45",
            label={"mechanism": "analytic_gaussian", "sensitivity": mech_y.sensitivity, "sigma": rel_y.record.scale},
            R_y=R_y,
            sigma_y=rel_y.record.scale,
            **noise_details(rel_x.record),
            **clipping_details(R, R_y),
        )

    def data(self, release: Release) -> dict[str, Any]:
        release, d, v = self._reports(release)
        det = release.record.details
        return {
            "d": d,
            "n": int(v.shape[0]),
            "zx": v[:, :d],
            "zy": v[:, d],
            "sigma_x": det["sigma_x"],
            "sigma_y": det["sigma_y"],
            "prior_sigma_sd": self._sigma_prior(det),
            **self._priors(),
        }


# ---------------------------------------------------------------- logistic regression SS
class LogisticRegressionSS(_PriorMixin):
    """Logistic regression from locally perturbed Chebyshev approximate sufficient statistics
    (Sec. 3.1.2, supplement Sec. 7 and 13.2, Lemma 13.1).

    Released statistics. The degree-2 Chebyshev expansion (Sec. 7, Eq. 12)
    ``log sigmoid(s) ~ a_0 + a_1 s + a_2 s^2`` at ``s = y x' theta`` (y in {-1, 1}) gives the
    per-user log-likelihood ``a_0 + a_1 theta' (y x) + a_2 theta' (x x') theta``, so
    ``t(x, y) = [1, vec(x x') y^2, x y]`` (Sec. 13.2, Huggins et al. 2017) is sufficient. Every
    user sends ``[y x, t2(x)] + N(0, diag(sigma_1^2 I_d, sigma_2^2 I))`` (labels given in
    {0, 1} are mapped to y = 2 label - 1), ``t2(x)`` the d(d+1)/2 distinct entries of
    ``vec(x x')`` with the off-diagonal ones scaled by sqrt(2) (module notes), so that
    ``||t2(x) - t2(x')|| = ||x x' - x' x'^T||_F`` -- exactly the quantity bounded in Lemma 13.1,
    whose sensitivity (:func:`logreg_sensitivity`) calibrates ``sigma_1`` and is attained.
    (Releasing every entry of ``vec(x x')`` with independent noise would give the aggregator
    these numbers plus pure noise: the same posterior at the same privacy.)

    Moment approximation used. The model is the normal approximation (Sec. 13.1)
    ``z_sum ~ N(n mu_s, n (Sigma_s + Sigma_*))`` where ``mu_s, Sigma_s`` are the EXACT mean and
    covariance of one ``[y x, t2(x)]`` under ``x ~ N(0, Sigma)``, ``P(y = 1 | x) =
    sigmoid(x' theta)`` -- not the moments under the Chebyshev-approximated likelihood (the
    expansion only decides which statistics are released). They come from Stein's lemma and
    Isserlis' theorem with two 1-d Gaussian expectations ``E[g'(t)]``, ``E[g'''(t)]``,
    ``g = tanh(t/2)``, on a fixed quadrature grid (:func:`logreg_moments`,
    :func:`logit_stein`). Approximations: the CLT normal for the sum, the quadrature (< 1e-9),
    and the Gaussian feature model (the features are really norm-clipped); the moments are
    checked against Monte Carlo in ``tests/models/test_kulkarni2022_regression_functions.py``.

    Parameters
    ----------
    prior_theta_sd, prior_tau_sd, lkj_eta : float
        As :class:`LinearRegressionSS`.
    quad_nodes : int, default 801
        Nodes of the quadrature of the Stein constants (:func:`quadrature_grid`).
    parameterisation : {"auto", "theta", "cholesky"}
        As :class:`LinearRegressionSS` (``"cholesky"`` samples ``b = L_x' theta``; same
        posterior); ``"auto"`` applies the same rule to the t2(x) diagonal ``z_sum[d:2d]``.
    backend : str, optional
    """

    model_name = "kulkarni2022/logistic_regression_ss"
    kind = "kulkarni2022/logistic_regression_ss"

    def __init__(
        self,
        *,
        prior_theta_sd: float = DEFAULT_PRIOR_THETA_SD,
        prior_tau_sd: float = DEFAULT_PRIOR_TAU_SD,
        lkj_eta: float = DEFAULT_LKJ_ETA,
        quad_nodes: int = 801,
        parameterisation: str = "auto",
        backend: str | None = None,
    ) -> None:
        super().__init__(prior_theta_sd=prior_theta_sd, prior_tau_sd=prior_tau_sd, lkj_eta=lkj_eta, backend=backend)
        self.quad = quadrature_grid(check_int(quad_nodes, "quad_nodes", minimum=3))
        self.parameterisation = _check_parameterisation(parameterisation)

    def sample_chol(self, z_sum: np.ndarray, n: int, d: int, sigma_t2: float) -> bool:
        """As :meth:`LinearRegressionSS.sample_chol`; here the diagonal of t2(x) is
        ``z_sum[d:2d]`` (layout ``[y x, t2(x)]``)."""
        return _sample_chol(self.parameterisation, z_sum[d : 2 * d], n, sigma_t2)

    @classmethod
    def release(
        cls,
        x: Any,
        y: Any,
        *,
        epsilon: float,
        delta: float = DEFAULT_DELTA,
        R: float = 1.0,
        ratio_t2: float = 1.0,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
    ) -> Release:
        """Every user's ``[y x, t2(x)]`` (y mapped to {-1, 1}) plus Gaussian noise, sds
        ``sigma_1`` and ``ratio_t2 sigma_1``, ``sigma_1`` calibrated (analytic Gaussian) to
        :func:`logreg_sensitivity` (Lemma 13.1; Corollary 13.1 for R = 1, ratio 1).

        Returns a Release with values (n, d + d(d+1)/2).
        """
        epsilon = check_epsilon(epsilon)
        delta = check_delta(delta, positive=True)
        R = check_positive(R, "R")
        r = _check_ratio(ratio_t2, "ratio_t2")
        sensitivity = _logreg_norm(R, r)  # inf beyond float64: refused below, naming R
        _gaussian_part(
            epsilon=epsilon,
            delta=delta,
            sensitivity=sensitivity,
            part="statistics",
            max_ratio=max(1.0, r),
            min_sensitivity=_SMALLEST_NORMAL,
            budget={"epsilon": epsilon, "delta": delta},
            bounds={"R": R, "ratio_t2": r},
            allowed=lambda limit: f"R whose Lemma 13.1 sensitivity is at most {limit!r}",
        )
        x = clip_features(x, R)
        y = check_labels(y, x.shape[0])
        d = x.shape[1]
        m2 = d * (d + 1) // 2
        rel = _statistics_release(
            logreg_statistics(x, 2.0 * y - 1.0),
            epsilon=epsilon,
            delta=delta,
            sensitivity=sensitivity,
            ratios=np.concatenate([np.ones(d), np.full(m2, r)]),
            accountant=accountant,
            seed=seed,
            label="LDP logistic regression statistics",
        )
        sigma1 = rel.record.scale
        return _add_details(
            rel,
            release_kind=cls.kind,
            d=d,
            R=R,
            statistic="[y x, t2(x)], y in {-1, 1}, t2 off-diagonals scaled by sqrt(2)",
            sigma_yx=sigma1,
            sigma_t2=r * sigma1,
            ratio_t2=r,
            sensitivity_is="Lemma 13.1 for the noise-sd-sigma_1 rescaled statistic",
            reference=f"{PAPER_REFERENCE}, Sec. 3.1.2, 7, 13.2, Lemma 13.1",
            **clipping_details(R),
        )

    @staticmethod
    def _report_width(d: int) -> int:
        return d + d * (d + 1) // 2

    def data(self, release: Release) -> dict[str, Any]:
        release, d, v = self._reports(release)
        det = release.record.details
        qx, qw = self.quad
        n, z_sum = int(v.shape[0]), v.sum(axis=0)
        return {
            "d": d,
            "n": n,
            "z_sum": z_sum,
            "sigma_yx": det["sigma_yx"],
            "sigma_t2": det["sigma_t2"],
            "n_quad": qx.size,
            "quad_x": qx,
            "quad_w": qw,
            **self._priors(),
            "sample_chol": int(self.sample_chol(z_sum, n, d, float(det["sigma_t2"]))),
        }


# ------------------------------------------------------------ logistic regression inputs
class LogisticRegressionInputs(_PriorMixin):
    """Logistic regression from locally perturbed inputs (Sec. 3.2.3, supplement Eq. 42-44).

    Every user sends ``x + N(0, sigma_x^2 I)`` (sensitivity 2R, budget
    ``((1 - c) epsilon, delta)``) and a randomised-response label (budget ``c epsilon``).
    The sigmoid expectation uses the degree-2 Chebyshev polynomial on
    ``[-cheb_radius, cheb_radius]`` (Eq. 44).

    Parameters
    ----------
    prior_theta_sd, prior_tau_sd, lkj_eta : float
        As :class:`LinearRegressionSS`.
    cheb_radius : float, default 4.0
        Half-width of the Chebyshev interval (the paper does not state it).
    parameterisation : {"auto", "log_tau", "signed_tau"}
        Coordinates of tau; the posterior of theta and Sigma is the same (exact, see the Stan
        file). ``"log_tau"``: log(tau). ``"signed_tau"``: a signed tau ~ N(0, prior_tau_sd^2)
        with no transform (tau's signs and L_Omega's matching entries are then not
        identified; Sigma and theta are), best when the feature noise swamps Var(x): the
        data cap tau with a wall that is steep in log(tau). ``"auto"`` (default) takes
        ``"signed_tau"`` when ``sigma_x^2 sqrt(2 / n) >= SIGNED_TAU_MIN_NOISE * R^2``
        (:meth:`signed_tau`): public values only.
    backend : str, optional
    """

    model_name = "kulkarni2022/logistic_regression_inputs"
    kind = "kulkarni2022/logistic_regression_inputs"

    def __init__(
        self,
        *,
        prior_theta_sd: float = DEFAULT_PRIOR_THETA_SD,
        prior_tau_sd: float = DEFAULT_PRIOR_TAU_SD,
        lkj_eta: float = DEFAULT_LKJ_ETA,
        cheb_radius: float = 4.0,
        parameterisation: str = "auto",
        backend: str | None = None,
    ) -> None:
        super().__init__(prior_theta_sd=prior_theta_sd, prior_tau_sd=prior_tau_sd, lkj_eta=lkj_eta, backend=backend)
        self.cheb_radius = check_positive(cheb_radius, "cheb_radius")
        self.cheb = chebyshev_sigmoid(self.cheb_radius, 2)
        self.parameterisation = _check_parameterisation(parameterisation, TAU_PARAMETERISATIONS)

    def signed_tau(self, sigma_x: float, n: int, R: float) -> bool:
        """Whether the fit samples a signed tau (see ``parameterisation``): for ``"auto"``,
        whether the noise sd of the privatised mean of z_x,j^2, ``sigma_x^2 sqrt(2 / n)``, is
        at least ``SIGNED_TAU_MIN_NOISE`` times ``R^2`` (the largest Var(x_j) under
        ``||x|| <= R``): then the data cannot place tau^2 inside its feasible range. Uses only
        public values of the release (noise sd, number of reports, clipping bound)."""
        if self.parameterisation != "auto":
            return self.parameterisation == "signed_tau"
        return bool(sigma_x**2 * math.sqrt(2.0 / n) >= SIGNED_TAU_MIN_NOISE * R**2)

    @classmethod
    def release(
        cls,
        x: Any,
        y: Any,
        *,
        epsilon: float,
        delta: float = DEFAULT_DELTA,
        c: float = 0.5,
        R: float = 1.0,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
    ) -> Release:
        """Perturbed features and randomised-response labels, (epsilon, delta)-LDP.

        Returns a Release with values (n, d + 1): ``z_x`` then the reported label (0/1).
        """
        epsilon = check_epsilon(epsilon)
        delta = check_delta(delta, positive=True)
        eps_y, eps_x = split_budget(epsilon, c)
        budget = {"epsilon": epsilon, "delta": delta, "c": c}
        c = eps_y / epsilon
        R = check_positive(R, "R")
        rng = None if seed is None else check_random_state(seed)  # None: secure discrete noise
        mech_x = _gaussian_part(
            epsilon=eps_x,
            delta=delta,
            sensitivity=2.0 * R,
            seed=rng,
            part="features part ((1 - c) epsilon, delta)",
            budget=budget,
            bounds={"R": R},
            allowed=lambda limit: f"R <= {limit / 2!r}",
        )
        mech_y = RandomizedResponse(epsilon=eps_y, seed=rng)
        x = clip_features(x, R)
        y = check_labels(y, x.shape[0])
        # one user's row; returned only after the spend
        rel_x = _release_part(mech_x, x, changed=x.shape[1], part="features part", budget=budget)
        zy = np.asarray(mech_y.randomise(y), dtype=float)
        _spend(accountant, epsilon, delta, "LDP logistic regression inputs", [rel_x.record, mech_y.record()])
        return _inputs_release(
            cls.kind,
            "analytic_gaussian+randomized_response",
            rel_x.values,
            zy,
            epsilon=epsilon,
            delta=delta,
            c=c,
            eps_label=eps_y,
            eps_features=eps_x,
            delta_label=0.0,
            seed=seed,
            R=R,
            sigma_x=rel_x.record.scale,
            **noise_details(rel_x.record),
            columns="z_x (d columns), randomised-response label",
            reference=f"{PAPER_REFERENCE}, Sec. 3.2.3, Eq. 42-45",
            label={"mechanism": "randomized_response", "p_keep": mech_y.p_keep},
            p_keep=mech_y.p_keep,
            **clipping_details(R),
        )

    def data(self, release: Release) -> dict[str, Any]:
        release, d, v = self._reports(release)
        det = release.record.details
        zy = v[:, d]
        if not np.all((zy == 0) | (zy == 1)):
            raise ValueError("the release's label column must hold 0/1 randomised-response reports")
        return {
            "d": d,
            "n": int(v.shape[0]),
            "zx": v[:, :d],
            "zy": zy.astype(np.int64),
            "sigma_x": det["sigma_x"],
            "p_keep": det["p_keep"],
            "cheb": self.cheb,
            **self._priors(),
            "signed_tau": int(self.signed_tau(float(det["sigma_x"]), int(v.shape[0]), float(det["R"]))),
        }


# ------------------------------------------------------------------ non-private baselines
class _NonPrivateRegression(Model):
    """A named NON-PRIVATE baseline with its own Stan program: it sees the raw records, so it
    has no ``release``/``published``/``fit``; :meth:`fit_nonprivate` is its one spelling."""

    private = False

    def __init__(self, *, prior_theta_sd: float, backend: str | None) -> None:
        self.prior_theta_sd = check_positive(prior_theta_sd, "prior_theta_sd")
        self.backend = backend

    def _targets(self, y: Any, n: int) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def _priors(self) -> dict[str, float]:
        return {"prior_theta_sd": self.prior_theta_sd}

    @classmethod
    def example(cls, n: int = 1000, *, seed: int = 0) -> Example:
        """Simulated (x, y) (:func:`simulate_regression`) for the non-private fit
        (:class:`~pystanprivacy.models.base.Example`)."""
        return _regression_example(cls, n, seed)

    def fit_nonprivate(self, x: Any, y: Any, **sample_kwargs: Any) -> Posterior:
        """Posterior from the raw ``x`` (n, d) and ``y`` (n,), marked
        ``posterior.privacy == "non-private"``. ``sample_kwargs`` go to
        :meth:`pystanprivacy.sampling.stan.StanModel.sample`."""
        x = check_array(x, "x", ndim=2, kinds="biuf")
        y = self._targets(y, x.shape[0])
        data = {"d": x.shape[1], "n": x.shape[0], "x": x, "y": y, **self._priors()}
        return with_record(self.stan_model.sample(data, **sample_kwargs), NONPRIVATE)

    def fit(self, x: Any, y: Any, **sample_kwargs: Any) -> Posterior:  # type: ignore[override]
        """Deprecated (removed in 0.3): :meth:`fit_nonprivate`, the one spelling of a
        non-private baseline."""
        warnings.warn(
            f"{type(self).__name__}.fit(x, y) is deprecated and will be removed in 0.3; use "
            f"{type(self).__name__}.fit_nonprivate(x, y)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.fit_nonprivate(x, y, **sample_kwargs)


class NonPrivateLinearRegression(_NonPrivateRegression):
    """Named NON-PRIVATE baseline: Bayesian linear regression on the clean data (Figure 4),
    ``y ~ N(x' theta, sigma^2)`` with the private models' priors. Sees the raw records:
    :meth:`fit_nonprivate` (x, y) -> posterior of ``theta, sigma``."""

    model_name = "kulkarni2022/linear_regression_nonprivate"

    def __init__(
        self, *, prior_theta_sd: float = DEFAULT_PRIOR_THETA_SD, prior_sigma_sd: float = 1.0, backend: str | None = None
    ) -> None:
        super().__init__(prior_theta_sd=prior_theta_sd, backend=backend)
        self.prior_sigma_sd = check_positive(prior_sigma_sd, "prior_sigma_sd")

    def _targets(self, y: Any, n: int) -> np.ndarray:
        return check_array(y, "y", shape=(n,), kinds="biuf")

    def _priors(self) -> dict[str, float]:
        return {**super()._priors(), "prior_sigma_sd": self.prior_sigma_sd}


class NonPrivateLogisticRegression(_NonPrivateRegression):
    """Named NON-PRIVATE baseline: Bayesian logistic regression on the clean data (Figure 5),
    ``y ~ Bernoulli(sigmoid(x' theta))``, ``theta ~ N(0, prior_theta_sd^2 I)``:
    :meth:`fit_nonprivate` (x, labels y in {0, 1}) -> posterior of ``theta``."""

    model_name = "kulkarni2022/logistic_regression_nonprivate"

    def __init__(self, *, prior_theta_sd: float = DEFAULT_PRIOR_THETA_SD, backend: str | None = None) -> None:
        super().__init__(prior_theta_sd=prior_theta_sd, backend=backend)

    def _targets(self, y: Any, n: int) -> np.ndarray:
        return check_labels(y, n)
