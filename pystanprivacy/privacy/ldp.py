"""Local differential privacy (LDP): the client side of Kulkarni et al. (2022).

Under LDP every user perturbs their own record before it leaves their device; the
aggregator only ever sees the reports. Every function here is *per user, vectorised over
users*: row ``i`` of the input is user ``i``'s private record and row ``i`` of the
returned :class:`~pystanprivacy.privacy.records.Release` is that user's report. The report of
each user is ε-LDP (or (ε, δ)-LDP) with respect to **any** change of that user's record
(the local neighbouring relation: every pair of inputs in the declared domain).

Stable API (shared with the regression models)
-----------------------------------------------
``split_budget(epsilon, c=0.5) -> (eps_label, eps_features)``
    Split one user's total ε between a label (``c·ε``) and the features (``(1 − c)·ε``),
    0 < c < 1. Sequential composition: releasing both reports is ε-LDP.
``budget_split_details(epsilon, c=0.5) -> dict``
    The JSON-safe record of a split, to put in a Release's ``details`` (the report
    functions below take it through ``budget_split=``).
``clipped_laplace_reports(x, *, epsilon, bounds, ...) -> Release``
    Clip each value to [a, b] (users clip, they do not drop), add Laplace((b − a)/ε).
``gaussian_reports(values, *, epsilon, delta, sensitivity, scale_ratios=None, max_norm=None, ...) -> Release``
    Each user clips their vector to the declared L2 bound and adds N(0, σ² diag(r)²), σ
    from the analytic Gaussian calibration for the per-user L2 sensitivity (of the
    rescaled statistic, see below).
``randomized_response_reports(bits, *, epsilon, ...) -> Release``
    1-bit randomised response (keep the bit w.p. e^ε / (1 + e^ε)).
``oue_reports(x, *, epsilon, d, ...) -> Release``
    Optimal unary encoding (OUE): one-hot, the true bit is 1 w.p. 1/2, every other bit
    is 1 w.p. 1/(e^ε + 1) (Kulkarni et al. 2022 Eq. 31-33; Wang et al. 2017).
``aggregate_reports(reports) -> (patterns, counts)``
    Distinct OUE report vectors and how many users sent each (the histogram model's
    cost grows with the number of distinct reports, not users).

Every report function takes ``accountant`` (charged once, with the report's ε and δ: each
user's record is used once, so the reports of different users compose in parallel),
``seed`` and ``label``; nothing is charged when validation fails. Extra ``details``
(e.g. a budget split) are merged into the record.

No report function refuses a record because of its values: users **clip**, they are never
dropped or refused (a refusal that depends on one user's value would reveal it without any
noise). The domains are the finite reals (NaN/inf are not data and are refused, as are
values outside a finite domain such as the bits of RR); an empty input is refused before
anything is charged (its shape is public).

Without a seed every report uses floating-point-safe noise and cryptographic randomness
(:mod:`pystanprivacy.privacy.noise`): exact discrete Laplace / discrete Gaussian noise on a
power-of-two grid (each user's value is one changed coordinate; a user's vector in
:func:`gaussian_reports` is ``k`` changed coordinates of the rescaled statistic) and exact
Bernoulli(1/(1+e^ε)) flips for RR and OUE; the record's ``scale`` is the noise actually
added. Seeds give reproducibility, not security (continuous NumPy noise, marked in the
record and warned about once; see :mod:`pystanprivacy.privacy.mechanisms`).

References
----------
.. [1] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela (2022), "Locally differentially
   private Bayesian inference". Sec. 2.1 (LDP, Laplace, RR, analytic Gaussian),
   Sec. 3.2.1 (users clip to [a, b]), Sec. 3.2.2 and Eq. 31-33 (OUE), Sec. 4.6 and
   Eq. 42-45 (budget split c·ε / (1 − c)·ε for label and features).
.. [2] T. Wang, J. Blocki, N. Li and S. Jha (2017), "Locally differentially private
   protocols for frequency estimation", USENIX Security.
.. [3] B. Balle and Y.-X. Wang (2018), "Improving the Gaussian mechanism for
   differential privacy", ICML (analytic calibration).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.special import expit

from .._validation import (
    SeedLike,
    check_array,
    check_bounds,
    check_delta,
    check_epsilon,
    check_int,
    check_label,
    check_positive,
    check_radius,
    check_real,
)
from .mechanisms import (
    AnalyticGaussian,
    Clip,
    ClipL2,
    Laplace,
    OptimalUnaryEncoding,
    RandomizedResponse,
    row_norms,
)
from .mechanisms._base import _MAX_MAGNITUDE, _clamp_magnitude
from .records import PrivacyAccountant, PrivacyRecord, Release, _freeze, warn_reproducible_not_secure

__all__ = [
    "split_budget",
    "budget_split_details",
    "clipped_laplace_reports",
    "gaussian_reports",
    "randomized_response_reports",
    "oue_reports",
    "aggregate_reports",
    "check_ldp_release",
    "oue_probabilities",
]

_REFERENCE = "Kulkarni et al. 2022"

#: noisy reports are clamped to the finite float64 range (post-processing)
_FLOAT_MAX = float(np.finfo(np.float64).max)


# --------------------------------------------------------------------------- budget split
def _check_split(c: Any) -> float:
    c = check_real(c, "c")
    if not (math.isfinite(c) and 0.0 < c < 1.0):
        raise ValueError(f"c (the label's share of the budget) must be in (0, 1), got {c!r}")
    return c


def split_budget(epsilon: float, c: float = 0.5) -> tuple[float, float]:
    """Split one user's budget ε into ``(c·ε, (1 − c)·ε)`` for (label, features).

    Parameters
    ----------
    epsilon : float
        The user's total ε, finite, > 0.
    c : float, default 0.5
        The label's share, 0 < c < 1 (the paper uses c = 0.5, Sec. 4.6).

    Returns
    -------
    (eps_label, eps_features) : tuple of float
        Both > 0; they sum to ε (up to rounding), so by sequential composition the two
        reports of one user are together ε-LDP.

    References
    ----------
    Kulkarni et al. (2022), Sec. 4.6 and Sec. 12.2 (the label is perturbed with cε).
    """
    eps = check_epsilon(epsilon)
    c = _check_split(c)
    return c * eps, (1.0 - c) * eps


def budget_split_details(epsilon: float, c: float = 0.5) -> dict[str, Any]:
    """JSON-safe description of :func:`split_budget` for a Release's ``details``."""
    eps_label, eps_features = split_budget(epsilon, c)
    return {
        "total_epsilon": check_epsilon(epsilon),
        "c": float(c),
        "epsilon_label": eps_label,
        "epsilon_features": eps_features,
        "composition": "sequential (label + features = total per user)",
    }


# --------------------------------------------------------------------------- helpers
def _with_details(release: Release, **extra: Any) -> Release:
    details = dict(release.record.details)
    details.update({k: v for k, v in extra.items() if v is not None})
    return Release(values=release.values, record=dataclasses.replace(release.record, details=details))


def _common_details(budget_split: Mapping[str, Any] | None, details: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"local": True, "per_user": True}
    if budget_split is not None:
        if not isinstance(budget_split, Mapping):
            raise TypeError(
                f"budget_split must be a mapping (see budget_split_details), got {type(budget_split).__name__}"
            )
        out["budget_split"] = dict(budget_split)
    if details is not None:
        if not isinstance(details, Mapping):
            raise TypeError(f"details must be a mapping, got {type(details).__name__}")
        out.update(details)
    _freeze(out, "details")  # JSON-safe, checked before anything is charged
    return out


def _clip_rows(rows: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """``(clipped, over)``: the rows of ``rows`` (n, k) whose L2 norm (``row_norms(strict=True)``)
    exceeds ``radius`` scaled down to it (:class:`~pystanprivacy.privacy.mechanisms.ClipL2`), the
    others untouched (bit-identical); ``over`` marks the clipped rows. Clipping to a
    data-independent ball is what enforces a declared bound, never a refusal."""
    over = row_norms(rows, strict=True) > radius
    if over.any():
        rows = rows.copy()
        rows[over] = ClipL2(radius)(rows[over])
    return rows, over


def _rescale_and_clip(rows: np.ndarray, ratios: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """``(clipped, over)``: the rows of ``rows / ratios`` (n, k), those of L2 norm above
    ``radius`` scaled down to it (:func:`_clip_rows`), without overflow: a row whose quotient
    overflows float64 (a tiny ratio, e.g. 5e-324, is public and valid) is formed as the exact
    quotient scaled by a power of two (``frexp``/``ldexp``: its direction to within rounding),
    far above ``radius``, and clipped along that direction. Rows with a finite quotient are
    :func:`_clip_rows` of it (bit-identical when within ``radius``)."""
    with np.errstate(over="ignore"):
        quotient = rows / ratios
    overflow = ~np.all(np.isfinite(quotient), axis=1)
    if overflow.any():
        bad = rows[overflow]
        m_rows, e_rows = np.frexp(bad)
        m_ratios, e_ratios = np.frexp(ratios)
        exps = np.where(bad != 0.0, e_rows - e_ratios, np.iinfo(np.int32).min // 2)
        top = np.max(exps, axis=1, keepdims=True)
        scaled = np.ldexp(m_rows / m_ratios, exps - top)  # quotient * 2**-top: peak in (1/2, 2)
        unit = scaled / np.max(np.abs(scaled), axis=1, keepdims=True)  # norm in [1, sqrt(k)]
        quotient[overflow] = unit * (radius / np.linalg.norm(unit, axis=1))[:, None]
    clipped, over = _clip_rows(quotient, radius)
    return clipped, over | overflow


def _check_laplace_scale(width: float, eps: float, given: str) -> float:
    """The Laplace scale ``width / eps`` of a clipped report, refused unless in (0, 2**1000]
    (the mechanisms' limit) with a ``ValueError`` naming ``given`` (the user's arguments and
    values, e.g. ``"bounds=(0.0, 1e308) and epsilon=1.0"``), before anything is charged.
    ``width`` is ``b - a`` (inf where it overflows) and ``eps`` a checked epsilon."""
    scale = width / eps  # Python floats: inf on overflow, 0.0 on underflow
    if not (math.isfinite(scale) and 0.0 < scale <= _MAX_MAGNITUDE):
        raise ValueError(
            f"{given} give a Laplace scale (b - a)/epsilon = {scale!r}, outside (0, 2**1000]: the clipping "
            "interval is too wide for this epsilon, or epsilon too large for it (allowed: 0 < (b - a)/epsilon "
            "<= 2**1000 in float64, i.e. b - a <= epsilon * 2**1000)"
        )
    return scale


def _local_options(
    label: Any, accountant: Any, budget_split: Mapping[str, Any] | None, details: Mapping[str, Any] | None
) -> tuple[str | None, dict[str, Any]]:
    """``(label, details)``: the checked ``label`` and the local-release details
    (:func:`_common_details`), after checking ``accountant``; the report functions' options,
    all checked before anything is charged."""
    label = check_label(label)
    if accountant is not None and not isinstance(accountant, PrivacyAccountant):
        raise TypeError(f"accountant must be a PrivacyAccountant or None, got {type(accountant).__name__}")
    return label, _common_details(budget_split, details)


# --------------------------------------------------------------------------- Laplace
def clipped_laplace_reports(
    x: Any,
    *,
    epsilon: float,
    bounds: tuple[float, float],
    accountant: PrivacyAccountant | None = None,
    seed: SeedLike = None,
    label: str | None = None,
    budget_split: Mapping[str, Any] | None = None,
    details: Mapping[str, Any] | None = None,
) -> Release:
    """Each user clips their value to [a, b] and adds Laplace((b − a)/ε) (ε-LDP).

    Parameters
    ----------
    x : array_like, shape (N,) or (R, N)
        One private real value per user (R independent groups of N users allowed).
        Finite; values outside [a, b] are clipped, never dropped (Sec. 3.2.1).
    epsilon : float
        Per-user ε, finite, > 0.
    bounds : (a, b)
        Declared clipping interval, a < b; the sensitivity is b − a (any two inputs).
        Any finite bounds whose Laplace scale (b − a)/ε is in (0, 2**1000] (a ``ValueError``
        naming ``bounds`` and ``epsilon`` otherwise, before any charge): every clipped value
        has an exact grid index (nothing is clamped).

    Returns
    -------
    Release
        ``values`` of the shape of ``x``; record: mechanism ``"laplace"``, sensitivity
        b − a, scale (b − a)/ε, ``bounds=(a, b)``, ``n`` = users per group, details
        ``local=True``, ``clipping``.

    References
    ----------
    Kulkarni et al. (2022), Sec. 2.1 (Definition 2.4) and Sec. 3.2.1, Eq. 6.
    """
    a, b = check_bounds(bounds, "bounds")
    eps = check_epsilon(epsilon)
    _check_laplace_scale(b - a, eps, f"bounds={(a, b)!r} and epsilon={eps!r}")  # b - a: inf on overflow
    arr = check_array(x, "x", ndim=(1, 2), kinds="iuf")
    if arr.size == 0:  # (0,), (R, 0) and (0, N) alike: refused before any charge
        raise ValueError(f"x must hold at least one user's value, got shape {arr.shape}")
    label, extra = _local_options(label, accountant, budget_split, details)
    clip = Clip(a, b)
    mech = Laplace(epsilon=eps, sensitivity=b - a, seed=seed)
    # each element is one user's value: one neighbouring change alters one element
    raw = mech.release(clip(arr), accountant=accountant, n=int(arr.shape[-1]), bounds=(a, b), label=label, changed=1)
    return _with_details(
        raw, **clip.details(), **extra, reference=f"{_REFERENCE}, Sec. 3.2.1 (clip then Laplace((b-a)/eps))"
    )


# --------------------------------------------------------------------------- Gaussian
def gaussian_reports(
    values: Any,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float,
    scale_ratios: Any = None,
    max_norm: float | None = None,
    accountant: PrivacyAccountant | None = None,
    seed: SeedLike = None,
    label: str | None = None,
    budget_split: Mapping[str, Any] | None = None,
    details: Mapping[str, Any] | None = None,
) -> Release:
    """Each user adds Gaussian noise to their own vector ((ε, δ)-LDP, analytic calibration).

    User ``i`` reports ``values[i] + σ · r ⊙ ξ_i``, ξ_i ~ N(0, I), where
    ``σ = analytic_gaussian_sigma(ε, δ, sensitivity)`` and ``r = scale_ratios`` (default
    all ones). With unequal ratios (Lemma 3.1: σ₁, σ₂, σ₃ on the blocks of the sufficient
    statistics) this is the Gaussian mechanism with noise σ on the *rescaled* statistic
    ``F = t / r``, so ``sensitivity`` must be the L2 sensitivity of ``F`` (Sec. 9.1,
    Eq. 13-17); with all ratios 1 it is the plain per-user L2 sensitivity (e.g. 2R for
    ‖x‖ ≤ R, Eq. 45).

    The declared bound is **enforced by clipping**, never by refusing a row (a refusal
    would reveal that one user's record is out of bounds, without any noise):

    * ``max_norm`` given: every row of ``values`` is clipped to L2 norm ``max_norm``
      (users clip, Sec. 3.2.1); then any two rows of ``F`` differ by at most
      ``2 max_norm / min(r)``, so ``sensitivity`` must be at least that (``ValueError``
      otherwise, from the public parameters alone);
    * no ``max_norm`` and no ``scale_ratios`` (a plain per-user vector): every row is
      clipped to L2 norm ``sensitivity / 2``, the ball whose diameter is the declared
      sensitivity under replace-one (Eq. 45: sensitivity 2R for ‖x‖ ≤ R);
    * no ``max_norm`` but ``scale_ratios`` (a rescaled statistic such as Lemma 3.1's, whose
      domain is not a ball around 0 and is enforced by the caller, e.g. the regression
      models' bounds R and R_y): every row of ``F`` is clipped to L2 norm ``sensitivity``.
      That never changes a row of a declared domain that contains 0 and has diameter
      ``<= sensitivity``, and it bounds any other row's effect to ``2 sensitivity``; the
      declared ε, δ hold for rows in the caller's domain only (the record's ``clipping``
      says so).

    Rows within the bound are released bit-identically. Each coordinate is also clamped to
    ``±2^1000`` (a data-independent interval: a contraction), and the noisy values are
    clamped to the finite float64 range (post-processing), so nothing after the charge can
    raise.

    Parameters
    ----------
    values : array_like, shape (N,) or (N, k)
        One row per user (private). Finite reals (NaN/inf are refused as not data); not
        empty.
    epsilon, delta : float
        Per-user privacy parameters, ε > 0, 0 < δ < 1.
    sensitivity : float
        L2 sensitivity of the (rescaled) per-user statistic over its declared domain.
    scale_ratios : array_like, shape (k,), optional
        Positive per-coordinate multipliers of σ (the first block conventionally 1).
    max_norm : float, optional
        The declared bound on every row's L2 norm (e.g. features clipped to R); rows above
        it are clipped to it. ``sensitivity >= 2 max_norm / min(scale_ratios)`` required.
        The clipping radius (``max_norm``, else ``sensitivity / 2`` or ``sensitivity``) must
        be at least 2**-1022, the smallest normal float64 (``ValueError`` naming it otherwise,
        before any charge: :func:`~pystanprivacy._validation.check_radius`).

    Returns
    -------
    Release
        Record: mechanism ``"analytic_gaussian"``, ``scale`` = σ, details ``local=True``,
        ``scale_ratios``, ``noise_sd`` (σ·r per coordinate), ``clipping`` (``type`` "l2",
        ``radius``, ``of`` "values" or "values / scale_ratios", what it ``enforces``).

    References
    ----------
    Kulkarni et al. (2022), Definition 2.3, Lemma 3.1 / Sec. 9.1, Lemma 13.1, Eq. 45.
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, positive=True)
    sens = check_positive(sensitivity, "sensitivity")
    arr = check_array(values, "values", ndim=(1, 2), kinds="iuf")
    if arr.size == 0:  # a public property of the shape: refused before any charge
        raise ValueError(
            f"values must hold at least one user's record (of at least one coordinate), got shape {arr.shape}"
        )
    k = 1 if arr.ndim == 1 else arr.shape[1]
    if scale_ratios is None:
        ratios = np.ones(k)
    else:
        ratios = check_array(scale_ratios, "scale_ratios", ndim=1, shape=(k,), kinds="iuf")
        if not np.all(ratios > 0):
            raise ValueError("scale_ratios must all be finite and > 0")
    # the bound that clipping enforces (public parameters only; see the docstring)
    if max_norm is not None:
        radius = check_radius(max_norm, "max_norm")  # a public check: no row decides a failure
        implied = 2.0 * radius / float(np.min(ratios))  # largest |F(x) - F(x')| after clipping
        if sens < implied:
            raise ValueError(
                f"sensitivity={sens!r} is below 2 * max_norm / min(scale_ratios) = {implied!r}: two rows "
                f"clipped to max_norm={radius!r} can differ by that much; declare a sensitivity >= {implied!r}"
            )
        of, enforces = "values", "every row of values has L2 norm <= max_norm (the declared bound)"
    elif scale_ratios is None:
        radius = check_radius(sens / 2.0, "sensitivity / 2 (the clipping radius without max_norm)")
        of, enforces = "values", "any two rows differ by at most sensitivity in L2 (replace-one)"
    else:
        radius = check_radius(sens, "sensitivity (the clipping radius of values / scale_ratios)")
        of = "values / scale_ratios"
        enforces = (
            "rows of a caller-enforced domain containing 0 with diameter <= sensitivity are "
            "unchanged; any other row moves the statistic by at most 2 * sensitivity"
        )
    label, extra = _local_options(label, accountant, budget_split, details)
    mech = AnalyticGaussian(epsilon=eps, delta=dlt, sensitivity=sens, seed=seed)
    row_ratios = ratios if arr.ndim == 2 else ratios[0]
    # clamp each coordinate to +-2**1000 (a contraction) and clip the rows: never a refusal
    rows = _clamp_magnitude(arr).reshape(arr.shape[0], k)  # the mechanisms' +-2**1000 clamp
    if of == "values":
        rows, _ = _clip_rows(rows, radius)
        clipped = rows.reshape(arr.shape)
        rescaled = clipped / row_ratios
    else:
        f_rows, over = _rescale_and_clip(rows, ratios, radius)  # no overflow for a tiny ratio
        rescaled = f_rows.reshape(arr.shape)
        rows = rows.copy()
        rows[over] = f_rows[over] * ratios  # only clipped rows change: the others stay bit-identical
        clipped = rows.reshape(arr.shape)
    plan = None
    if seed is None:  # secure path: discrete Gaussian on a grid for the rescaled statistic F = values / r
        plan = mech._plan(rescaled, integer=False, changed=k)  # public inputs only; raises before any spend
    scale = mech.scale if plan is None else plan.scale
    with np.errstate(over="ignore"):
        noise_sd = scale * ratios
    if not np.all(noise_sd <= _MAX_MAGNITUDE):  # also catches inf: |noise| stays finite
        raise ValueError("scale_ratios times the noise sigma exceeds 2**1000; scale_ratios or sensitivity is too large")
    # the record (which validates every field) is made before the accountant is charged
    record = mech.record(
        n=int(arr.shape[0]),
        neighbouring="replace-one",
        details={
            **extra,
            **(plan.details if plan is not None else {}),
            "scale_ratios": ratios.tolist(),
            "noise_sd": noise_sd.tolist(),
            "clipping": {"type": "l2", "radius": radius, "of": of, "enforces": enforces},
            **({"max_norm": float(max_norm)} if max_norm is not None else {}),
            "reference": f"{_REFERENCE}, Definition 2.3 (per-user analytic Gaussian)",
        },
        **({"label": label} if label is not None else {}),
    )
    if plan is not None:
        record = dataclasses.replace(record, scale=plan.scale)
    if accountant is not None:
        charged = accountant.spend(eps, dlt, label=label, record=record)
        if charged is not None:  # a persistent ledger: the release names its entry
            record = charged.stamp(record)
    with np.errstate(over="ignore"):
        if plan is None:
            warn_reproducible_not_secure()
            noisy = clipped + mech._rng.standard_normal(arr.shape) * mech.scale * row_ratios
        else:
            noisy = mech._privatise(rescaled, plan) * row_ratios
    # post-processing: a value beyond float64 (probability <= 2^-64 per coordinate) is
    # clamped, so the Release below cannot fail after the charge
    np.clip(noisy, -_FLOAT_MAX, _FLOAT_MAX, out=noisy)
    return Release(values=noisy, record=record)


# --------------------------------------------------------------------------- RR / OUE
def _discrete_release(
    mech: Any,
    arr: np.ndarray,
    *,
    bounds: tuple[float, float],
    accountant: PrivacyAccountant | None,
    label: str | None,
    budget_split: Mapping[str, Any] | None,
    details: Mapping[str, Any] | None,
    reference: str,
) -> Release:
    """``mech.release`` of the validated per-user ``arr`` (users on the last axis) with the
    local-release details; validation before any charge."""
    label, extra = _local_options(label, accountant, budget_split, details)
    raw = mech.release(arr, accountant=accountant, n=int(arr.shape[-1]), bounds=bounds, label=label)
    return _with_details(raw, **extra, reference=reference)


def randomized_response_reports(
    bits: Any,
    *,
    epsilon: float,
    accountant: PrivacyAccountant | None = None,
    seed: SeedLike = None,
    label: str | None = None,
    budget_split: Mapping[str, Any] | None = None,
    details: Mapping[str, Any] | None = None,
) -> Release:
    """1-bit randomised response per user: keep the bit w.p. p = e^ε/(1 + e^ε) (ε-LDP).

    ``bits`` of shape (N,) with values in {0, 1}. Record: mechanism
    ``"randomized_response"``, details ``p_keep``, ``local=True``.

    References
    ----------
    Kulkarni et al. (2022), Sec. 2.1 (randomized response); Warner (1965).
    """
    arr = check_array(bits, "bits", ndim=1, integer=True, bounds=(0, 1))
    if arr.shape[0] == 0:
        raise ValueError("bits must hold at least one user's bit")
    return _discrete_release(
        RandomizedResponse(epsilon=epsilon, seed=seed),
        arr,
        bounds=(0.0, 1.0),
        accountant=accountant,
        label=label,
        budget_split=budget_split,
        details=details,
        reference=f"{_REFERENCE}, Sec. 2.1 (1-bit randomized response)",
    )


def oue_probabilities(epsilon: float) -> tuple[float, float]:
    """``(p, q)`` of OUE: the true bit is 1 w.p. p = 1/2, any other bit w.p. q = 1/(e^ε + 1).

    (The paper's Eq. 9 garbles the names; its Eq. 31-33 use exactly these: the one-hot
    bit is 1 w.p. 1/2, a zero bit stays 0 w.p. e^ε/(1 + e^ε).)
    """
    eps = check_epsilon(epsilon)
    return 0.5, float(expit(-eps))


def oue_reports(
    x: Any,
    *,
    epsilon: float,
    d: int,
    accountant: PrivacyAccountant | None = None,
    seed: SeedLike = None,
    label: str | None = None,
    details: Mapping[str, Any] | None = None,
) -> Release:
    """Optimal unary encoding per user (ε-LDP): categories in {0, …, d−1} → bit vectors.

    Parameters
    ----------
    x : array_like of int, shape (N,) or (R, N)
        One category per user.
    d : int
        Number of categories, ≥ 2.

    Returns
    -------
    Release
        ``values`` of shape (N, d) (or (R, N, d)) in {0, 1}; record mechanism ``"oue"``
        with details ``d``, ``p`` = 1/2, ``q`` = 1/(e^ε + 1), ``local=True``.

    References
    ----------
    Kulkarni et al. (2022), Sec. 3.2.2 and Eq. 31-33; Wang et al. (2017), Sec. 4.4.
    """
    d = check_int(d, "d", minimum=2)
    arr = check_array(x, "x", ndim=(1, 2), integer=True, bounds=(0, d - 1))
    if arr.size == 0:
        raise ValueError(f"x must hold at least one user's category, got shape {arr.shape}")
    return _discrete_release(
        OptimalUnaryEncoding(epsilon=epsilon, d=d, seed=seed),
        arr,
        bounds=(0.0, float(d - 1)),
        accountant=accountant,
        label=label,
        budget_split=None,
        details=details,
        reference=f"{_REFERENCE}, Sec. 3.2.2, Eq. 31-33 (OUE)",
    )


def aggregate_reports(reports: Any) -> tuple[np.ndarray, np.ndarray]:
    """Distinct report vectors and their multiplicities.

    Parameters
    ----------
    reports : array_like of {0, 1}, shape (N, d)
        One OUE report per user: N >= 1 users, d >= 2 categories (as
        :func:`oue_reports` requires); fewer is a ``ValueError`` naming ``reports``.

    Returns
    -------
    patterns : ndarray of int64, shape (M, d)
        The distinct rows (lexicographic order), M ≤ min(N, 2^d).
    counts : ndarray of int64, shape (M,)
        How many users sent each.
    """
    arr = check_array(reports, "reports", ndim=2, integer=True, bounds=(0, 1))
    if arr.shape[0] == 0:
        raise ValueError("reports must hold at least one report")
    d = arr.shape[1]
    if d < 2:  # an OUE report has one bit per category and oue_reports needs d >= 2
        raise ValueError(
            f"reports must have d >= 2 columns (one bit per category of an OUE report), got shape {arr.shape}"
        )
    if d <= 62:  # encode each row as one int64 key: O(N d) instead of a row-wise sort
        keys = arr @ (np.int64(1) << np.arange(d - 1, -1, -1, dtype=np.int64))
        uniq, counts = np.unique(keys, return_counts=True)
        patterns = ((uniq[:, None] >> np.arange(d - 1, -1, -1, dtype=np.int64)) & 1).astype(np.int64)
        return patterns, counts.astype(np.int64)
    patterns, counts = np.unique(arr, axis=0, return_counts=True)
    return patterns.astype(np.int64), counts.astype(np.int64)


# --------------------------------------------------------------------------- checks
def check_ldp_release(release: Any, *, mechanism: str | tuple[str, ...], what: str) -> PrivacyRecord:
    """The record of ``release`` after checking it is a local release of ``mechanism``.

    Raises ``TypeError`` for a non-Release and ``ValueError`` naming the mismatch.
    """
    if not isinstance(release, Release):
        raise TypeError(f"release must be a Release made by {what}, got {type(release).__name__}")
    allowed = (mechanism,) if isinstance(mechanism, str) else tuple(mechanism)
    rec = release.record
    if rec.mechanism not in allowed or not rec.details.get("local", False):
        raise ValueError(
            f"release must be a local {'/'.join(allowed)} release made by {what}; got mechanism="
            f"{rec.mechanism!r}, local={rec.details.get('local', False)!r}"
        )
    return rec
