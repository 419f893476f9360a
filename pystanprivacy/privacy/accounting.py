"""Tight privacy accounting: the privacy curve of each release, built from its record, and
its composition under zCDP, Rényi DP or privacy-loss distributions.

:class:`~pystanprivacy.privacy.records.PrivacyAccountant` takes ``composition="basic"``
(the default: ε and δ add up, Dwork & Roth Thm 3.16) or one of the tight rules here:

``"zcdp"``
    Each release contributes ρ (zero-concentrated DP, Bun & Steinke 2016); ρ adds up
    (their Lemma 2.3) and the total is converted to (ε, δ) with Canonne, Kamath & Steinke
    (2020), Proposition 12, minimised over the order α (:func:`zcdp_epsilon`).
``"rdp"``
    Each release contributes its Rényi divergence at every order of
    :data:`RDP_ORDERS` (Mironov 2017); the curves add up (Mironov, Prop. 1) and the total is
    converted with ``dp_accounting``'s ``compute_epsilon`` (the same Proposition 12).
``"pld"``
    Each release contributes its privacy-loss distribution, composed by convolution with
    ``dp_accounting.pld`` (Koskela et al. 2020; Doroshenko et al. 2022), pessimistic
    estimate, loss values discretised on a grid of :data:`PLD_DISCRETISATION` (every
    rounding moves the loss up, so the reported ε is an upper bound). Releases whose
    mechanism has a zCDP guarantee but no PLD here (the multivariate discrete Gaussian, and
    a discrete Gaussian too wide to enumerate) are composed under zCDP and joined to the PLD
    part by basic composition, splitting δ over a fixed grid (:data:`DELTA_SPLITS`). Cost:
    each spend recomposes the distinct curves by self-composition counts (cached per curve),
    about 0.1-0.3 s per spend on one core (100 Gaussian spends: ~20 s on the 2-core
    development machine; ``"zcdp"``: < 1 ms, ``"rdp"``: ~20 ms per spend).

What each record is worth (:func:`curve_from_record`; public fields only, never data):

========================================  =================================================
record                                    curve
========================================  =================================================
``gaussian`` / ``analytic_gaussian``,     Gaussian, noise multiplier σ/Δ (L2): ρ = Δ²/(2σ²),
no ``secure``/``seeded`` in details       RDP αρ, PLD of N(0, σ²) vs N(Δ, σ²) (exact for
(a description of the ideal mechanism)    every L2 shift ≤ Δ, by rotation invariance)
``gaussian`` / ``analytic_gaussian``,     discrete Gaussian σ_u, integer sensitivity D (grid
secure, one changed coordinate            units, details ``sigma_grid_units``,
                                          ``integer_sensitivity``): ρ = D²/(2σ_u²) (CKS 2020
                                          Thm 4), RDP αρ, PLD of the discrete Gaussian
``gaussian`` / ``analytic_gaussian``,     ρ = D₂²/(2σ_u²) (CKS 2020 Thm 14, its extra term
secure, several changed coordinates       < 1e-300 for σ_u ≥ 100), RDP αρ; no PLD (zCDP
(or σ_u > 4096 grid units)                part under ``"pld"``: the library enumerates the
                                          support of a 1-d discrete Gaussian, too slow for
                                          the σ_u ~ 1e6 of real-valued input)
``laplace``, no ``secure``/``seeded``     Laplace, s = Δ/b (L1): RDP of Mironov (2017),
                                          Table II (valid for every split of the L1 shift:
                                          see :func:`laplace_rdp`); ρ = s²/2; PLD of a
                                          pure s-DP mechanism
``laplace``, secure, one changed          discrete Laplace, t = details ``scale_grid_units``,
coordinate with grid details              D = ``integer_sensitivity``: PLD of the discrete
                                          Laplace; ρ = (D/t)²/2, RDP of a pure (D/t)-DP
                                          mechanism
``laplace``, secure (other)               pure ε-DP (the record's ε)
``randomized_response``, ``ops`` (δ = 0)  pure ε-DP
``oue``                                   the exact pair of OUE (Wang et al. 2017): the two
                                          changed bits, Bern(1/2)×Bern(q) vs Bern(q)×Bern(1/2)
``gaussian`` with details ``zcdp_rho``    ρ as the mechanism's own map states it (an imported
(no ``sigma_grid_units``)                 OpenDP Gaussian, :mod:`pystanprivacy.interop.opendp`):
                                          ρ, RDP αρ; no PLD (zCDP part under ``"pld"``)
anything else, a seeded/insecure          no curve: its (ε, δ) is composed basically on top
Laplace or Gaussian, δ > 0 on a pure       of the tight part (stated in the ledger)
mechanism, or a record without scale
========================================  =================================================

A pure ε-DP curve means: ρ = ε²/2 (Bun & Steinke 2016, Prop. 1.4); RDP of binary
randomised response at ε (:func:`pure_rdp`), which dominates every ε-DP mechanism (every
ε-DP pair is a post-processing of it: Kairouz, Oh & Viswanath 2017, Thm 2.1, and Rényi
divergence obeys data processing); PLD of the (ε, 0)-DP worst case
(``from_privacy_parameters``).

Every tight total is finally compared with basic composition of the same releases, and
the smaller valid ε at the budget's δ is reported (both are true statements about the same
composed mechanism).

References
----------
.. [1] M. Bun and T. Steinke, "Concentrated Differential Privacy: Simplifications,
   Extensions, and Lower Bounds", TCC 2016. Prop. 1.3 (zCDP to (ε, δ)), Prop. 1.4 (pure DP
   to zCDP), Prop. 1.6 (Gaussian), Lemma 2.3 (composition).
.. [2] C. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
   Privacy", NeurIPS 2020. Thm 4 and 14 (discrete Gaussian zCDP), Prop. 12 (RDP/zCDP to
   (ε, δ)).
.. [3] I. Mironov, "Rényi Differential Privacy", CSF 2017. Prop. 1 (composition), Table II
   (Laplace).
.. [4] J. Dong, A. Roth and W. Su, "Gaussian Differential Privacy", JRSS-B 2022, Cor. 2.13
   (the exact (ε, δ) curve of μ-GDP; composition of Gaussians: μ = √k Δ/σ).
.. [5] A. Koskela, J. Jälkö and A. Honkela, "Computing Tight Differential Privacy
   Guarantees Using FFT", AISTATS 2020; V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar and
   P. Manurangsi, "Connect the Dots: Tighter Discrete Approximations of Privacy Loss
   Distributions", PoPETs 2022 (``dp_accounting.pld``).
.. [6] P. Kairouz, S. Oh and P. Viswanath, "The Composition Theorem for Differential
   Privacy", IEEE Trans. Inf. Theory 63(6), 2017, Thm 2.1.
.. [7] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private Protocols for
   Frequency Estimation", USENIX Security 2017 (OUE).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .records import COMPOSITION_RULES, PrivacyRecord

__all__ = [
    "COMPOSITION_RULES",
    "RDP_ORDERS",
    "PLD_DISCRETISATION",
    "DELTA_SPLITS",
    "MAX_DISCRETE_GAUSSIAN_PLD_SIGMA",
    "Curve",
    "LedgerEntry",
    "curve_from_record",
    "gaussian_curve",
    "pure_curve",
    "zcdp_epsilon",
    "rdp_epsilon",
    "laplace_rdp",
    "pure_rdp",
    "oue_rdp",
    "TightComposition",
]

#: the Rényi orders of the ``"rdp"`` rule: ``dp_accounting``'s default orders (1.1 to 1024)
RDP_ORDERS: tuple[float, ...] = (
    tuple(1.0 + x / 10.0 for x in range(1, 100))
    + tuple(float(x) for x in range(11, 64))
    + (128.0, 256.0, 512.0, 1024.0)
)
#: width of the privacy-loss grid of the ``"pld"`` rule (``dp_accounting``'s default)
PLD_DISCRETISATION = 1e-4
#: the shares of the available δ tried for the PLD part when a zCDP part joins it
DELTA_SPLITS = (0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999)
#: the widest discrete Gaussian (sigma in grid units) whose PLD the ``"pld"`` rule enumerates;
#: a wider one joins the zCDP part (a secure release of real values has sigma ~ 1e6 units)
MAX_DISCRETE_GAUSSIAN_PLD_SIGMA = 4096.0
#: ``dp_accounting`` truncates each composition's tails at mass 1e-15 and its pessimistic PLD
#: can then fall ~4e-15 below the exact δ (seen for 300 Gaussians); δ given to the PLD part is
#: reduced by this much per composition step
_PLD_TRUNCATION_SLACK = 1e-13
#: relative safety margin on float sums of ρ and RDP curves (rounding never under-counts)
_MARGIN = 1e-12
#: ``dp_accounting`` truncates the discrete Gaussian's noise where its tails hold < 1e-30;
#: each such release may hide that much total variation, added to the PLD part's δ
_DISCRETE_GAUSSIAN_SLACK = 1e-29


# --------------------------------------------------------------------------- curves
@dataclasses.dataclass(frozen=True)
class Curve:
    """The privacy curve of one release (hashable: identical releases share a cache entry).

    ``kind`` is ``"gaussian"`` (``params = (z,)``, noise multiplier σ/Δ), ``"discrete_gaussian"``
    (``(sigma_units, sensitivity_units, one_coordinate)``), ``"laplace"`` (``(s,)``, s = Δ/b),
    ``"discrete_laplace"`` (``(t, D)``), ``"pure"`` (``(epsilon,)``), ``"oue"`` (``(epsilon,)``) or
    ``"zcdp"`` (``(rho,)``: a ρ-zCDP guarantee stated by the mechanism's own privacy map, e.g.
    an OpenDP Gaussian measurement's; composed as ρ, no PLD).
    """

    kind: str
    params: tuple[Any, ...]

    # ---- zCDP
    def rho(self) -> float:
        """ρ such that the release is ρ-zCDP (Bun & Steinke 2016; CKS 2020)."""
        if self.kind == "gaussian":
            return 0.5 / self.params[0] ** 2
        if self.kind == "discrete_gaussian":
            sigma, sens, _ = self.params
            return 0.5 * (sens / sigma) ** 2
        if self.kind == "zcdp":
            return self.params[0]
        return 0.5 * self.pure_epsilon() ** 2

    def pure_epsilon(self) -> float:
        """The ε of a pure curve (``inf`` for the Gaussians)."""
        if self.kind in ("pure", "oue"):
            return self.params[0]
        if self.kind == "laplace":
            return self.params[0]
        if self.kind == "discrete_laplace":
            t, d = self.params
            return d / t
        return math.inf

    # ---- RDP
    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """Rényi divergence of the release at each order (both directions of neighbours)."""
        if self.kind in ("gaussian", "discrete_gaussian", "zcdp"):
            return orders * self.rho()
        if self.kind == "laplace":
            return laplace_rdp(self.params[0], orders)
        if self.kind == "oue":
            return oue_rdp(self.params[0], orders)
        return pure_rdp(self.pure_epsilon(), orders)

    # ---- PLD
    @property
    def has_pld(self) -> bool:
        """Whether :meth:`pld` is used: all but the multivariate discrete Gaussian (no PLD is
        known) and a discrete Gaussian wider than :data:`MAX_DISCRETE_GAUSSIAN_PLD_SIGMA` grid
        units (``dp_accounting`` enumerates its support: minutes for a wide one)."""
        if self.kind == "zcdp":
            return False
        if self.kind != "discrete_gaussian":
            return True
        return bool(self.params[2]) and self.params[0] <= MAX_DISCRETE_GAUSSIAN_PLD_SIGMA

    def pld(self) -> Any:
        """This curve's ``dp_accounting`` privacy-loss distribution (pessimistic estimate)."""
        from dp_accounting.pld import common
        from dp_accounting.pld import privacy_loss_distribution as pld

        grid = PLD_DISCRETISATION
        if self.kind == "gaussian":
            return pld.from_gaussian_mechanism(self.params[0], sensitivity=1.0, value_discretization_interval=grid)
        if self.kind == "discrete_gaussian":
            sigma, sens, _ = self.params
            return pld.from_discrete_gaussian_mechanism(
                sigma, sensitivity=int(sens), value_discretization_interval=grid
            )
        if self.kind == "discrete_laplace":
            t, d = self.params
            return pld.from_discrete_laplace_mechanism(1.0 / t, sensitivity=int(d), value_discretization_interval=grid)
        if self.kind == "oue":
            return _oue_pld(self.params[0])
        return pld.from_privacy_parameters(
            common.DifferentialPrivacyParameters(self.pure_epsilon(), 0.0), value_discretization_interval=grid
        )

    def describe(self) -> str:
        """One line for the ledger: the curve and the public numbers it rests on."""
        if self.kind == "gaussian":
            return f"Gaussian, sigma/sensitivity = {self.params[0]:.6g} (rho = {self.rho():.6g})"
        if self.kind == "discrete_gaussian":
            sigma, sens, one = self.params
            return (
                f"discrete Gaussian, sigma = {sigma:.6g} and sensitivity {sens:.6g} grid units "
                f"({'one coordinate' if one else 'L2, several coordinates'}; rho = {self.rho():.6g}"
                f"{'' if self.has_pld else '; zCDP under the pld rule'})"
            )
        if self.kind == "laplace":
            return f"Laplace, sensitivity/b = {self.params[0]:.6g}"
        if self.kind == "discrete_laplace":
            t, d = self.params
            return f"discrete Laplace, scale {t:.6g} and sensitivity {d} grid units (eps = {d / t:.6g})"
        if self.kind == "oue":
            return f"OUE pair at eps = {self.params[0]:.6g}"
        if self.kind == "zcdp":
            return f"zCDP stated by the mechanism's privacy map, rho = {self.params[0]:.6g}"
        return f"pure eps-DP, eps = {self.params[0]:.6g}"


def gaussian_curve(*, sigma: float, sensitivity: float) -> Curve:
    """The curve of the Gaussian mechanism with noise σ and L2 sensitivity Δ."""
    return Curve("gaussian", (float(sigma) / float(sensitivity),))


def pure_curve(*, epsilon: float) -> Curve:
    """The curve of an ε-DP mechanism (the worst one: binary randomised response)."""
    return Curve("pure", (float(epsilon),))


def laplace_rdp(s: float, orders: np.ndarray) -> np.ndarray:
    """Rényi divergence of Laplace(0, 1) vs Laplace(s, 1) (Mironov 2017, Table II):

    ``D_α = log(α/(2α-1) e^{(α-1)s} + (α-1)/(2α-1) e^{-αs}) / (α-1)``.

    It also bounds a Laplace vector whose L1 shift ``s`` is split over coordinates: the
    log of a positive combination of exponentials of affine functions is convex in ``s``
    and 0 at ``s = 0``, hence superadditive, and the divergence of independent coordinates
    is the sum of theirs: ``Σ_i D_α(s_i) <= D_α(Σ_i s_i)`` (checked numerically in the tests).
    """
    a = np.asarray(orders, dtype=float)
    log_terms = np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) * s, np.log((a - 1) / (2 * a - 1)) - a * s)
    return log_terms / (a - 1)


def pure_rdp(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """Rényi divergence of binary randomised response at ε, the largest of any ε-DP pair:
    ``D_α = (log(e^{αε} + e^{(1-α)ε}) - log(1 + e^ε)) / (α - 1)``; never above
    ``min(ε, αε²/2)`` (Bun & Steinke 2016, Prop. 1.4)."""
    a = np.asarray(orders, dtype=float)
    return (np.logaddexp(a * epsilon, (1 - a) * epsilon) - np.logaddexp(0.0, epsilon)) / (a - 1)


def _oue_log_pmfs(epsilon: float) -> tuple[dict[int, float], dict[int, float]]:
    """Log pmfs of the two bits one user's change flips under OUE (outcome ``2 b_v + b_v'``):
    ``Bern(1/2) x Bern(q)`` vs ``Bern(q) x Bern(1/2)``, ``q = 1/(e^ε + 1)``."""
    log_q = -float(np.logaddexp(0.0, epsilon))
    log_1mq = -float(np.logaddexp(0.0, -epsilon))
    half = -math.log(2.0)
    first = {2 * a + b: half + (log_q if b else log_1mq) for a in (0, 1) for b in (0, 1)}
    second = {2 * a + b: (log_q if a else log_1mq) + half for a in (0, 1) for b in (0, 1)}
    return first, second


def oue_rdp(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """Exact Rényi divergence of OUE's pair (symmetric under swapping the two bits)."""
    p, q = _oue_log_pmfs(epsilon)
    a = np.asarray(orders, dtype=float)[:, None]
    lp, lq = np.array([p[i] for i in range(4)]), np.array([q[i] for i in range(4)])
    terms = a * lp[None, :] + (1 - a) * lq[None, :]
    mx = terms.max(axis=1, keepdims=True)
    return (mx[:, 0] + np.log(np.exp(terms - mx).sum(axis=1))) / (a[:, 0] - 1)


def _oue_pld(epsilon: float) -> Any:
    from dp_accounting.pld import privacy_loss_distribution as pld

    p, q = _oue_log_pmfs(epsilon)
    return pld.from_two_probability_mass_functions(p, q, value_discretization_interval=PLD_DISCRETISATION)


@functools.lru_cache(maxsize=64)
def _base_pld(curve: Curve) -> Any:
    """One release's PLD, built once per distinct curve."""
    return curve.pld()


# --------------------------------------------------------------------------- records -> curves
_GAUSSIANS = ("gaussian", "analytic_gaussian")
_PURE = ("randomized_response", "ops")


def _provenance(record: PrivacyRecord) -> str:
    """``"ideal"`` (no randomness stated), ``"secure"`` or ``"insecure"`` (seeded / float noise)."""
    d = record.details
    if "secure" not in d and "seeded" not in d:
        return "ideal"
    return "secure" if d.get("secure") is True and d.get("seeded") is not True else "insecure"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and value > 0 else None


def _gaussian(record: PrivacyRecord, provenance: str) -> tuple[Curve | None, str]:
    d = record.details
    rho = _number(d.get("zcdp_rho"))
    if rho is not None and "sigma_grid_units" not in d:  # e.g. OpenDP's map (pystanprivacy.interop.opendp)
        return Curve("zcdp", (rho,)), ""
    if provenance == "ideal":
        if record.scale is None or record.sensitivity is None or record.sensitivity_norm not in (None, "l2"):
            return None, "a Gaussian record without scale and L2 sensitivity"
        return gaussian_curve(sigma=record.scale, sensitivity=record.sensitivity), ""
    sigma = _number(d.get("sigma_grid_units"))
    one = _number(d.get("integer_sensitivity"))
    several = _number(d.get("l2_sensitivity_grid_units"))
    if sigma is None or (one is None) == (several is None):
        return None, "a secure Gaussian record without its discrete noise (sigma_grid_units, grid sensitivity)"
    if one is not None:
        if one != int(one):
            return None, "a discrete Gaussian record whose integer_sensitivity is not an integer"
        return Curve("discrete_gaussian", (sigma, int(one), True)), ""
    return Curve("discrete_gaussian", (sigma, several, False)), ""


def _laplace(record: PrivacyRecord, provenance: str) -> tuple[Curve | None, str]:
    d = record.details
    if provenance == "ideal":
        if record.scale is None or record.sensitivity is None or record.sensitivity_norm not in (None, "l1"):
            return None, "a Laplace record without scale and L1 sensitivity"
        return Curve("laplace", (record.sensitivity / record.scale,)), ""
    t, dint = _number(d.get("scale_grid_units")), _number(d.get("integer_sensitivity"))
    if t is not None and dint is not None and dint == int(dint) and d.get("changed_coordinates") == 1:
        return Curve("discrete_laplace", (t, int(dint))), ""
    return pure_curve(epsilon=record.epsilon), ""


def curve_from_record(record: PrivacyRecord) -> tuple[Curve | None, str]:
    """The privacy curve a record supports, or ``(None, why)`` when it is counted by its (ε, δ).

    Reads public fields only (mechanism, ε, δ, scale, sensitivity and the noise details the
    mechanisms write); see the module docstring for the table.
    """
    if not isinstance(record, PrivacyRecord):
        raise TypeError(f"record must be a PrivacyRecord, got {type(record).__name__}")
    mech, provenance = record.mechanism, _provenance(record)
    if mech not in (*_GAUSSIANS, *_PURE, "laplace", "oue"):
        return None, f"no privacy curve for mechanism {mech!r}"
    if mech in _GAUSSIANS:
        if provenance == "insecure":
            return None, "seeded / floating-point Gaussian noise"
        return _gaussian(record, provenance)
    if record.delta > 0:
        return None, f"mechanism {mech!r} with delta > 0 has no curve here"
    if mech == "laplace":
        if provenance == "insecure":
            return None, "seeded / floating-point Laplace noise"
        return _laplace(record, provenance)
    if mech in _PURE:
        return pure_curve(epsilon=record.epsilon), ""
    return Curve("oue", (record.epsilon,)), ""


# --------------------------------------------------------------------------- conversions
def zcdp_epsilon(rho: float, delta: float) -> float:
    """Smallest ε this function certifies for a ρ-zCDP mechanism at δ (``inf`` when δ = 0).

    Canonne, Kamath & Steinke (2020), Proposition 12, with the RDP curve ``αρ`` of zCDP:
    ``ε = min_{α>1} αρ + (log(1/δ) + (α-1) log(1-1/α) - log α) / (α-1)``. Every α gives a
    valid bound, so a numerical minimum (golden section in ``log(α-1)``, then the better of
    it and Bun & Steinke's ``ρ + 2 sqrt(ρ log(1/δ))``) is valid.
    """
    rho, delta = float(rho), float(delta)
    if rho == 0.0:
        return 0.0
    if delta <= 0.0:
        return math.inf
    if delta >= 1.0:
        return 0.0
    log_inv = -math.log(delta)

    def eps(log_am1: float) -> float:
        am1 = math.exp(log_am1)
        alpha = am1 + 1.0
        return alpha * rho + (log_inv + am1 * math.log1p(-1.0 / alpha) - math.log(alpha)) / am1

    lo, hi = math.log(1e-8), math.log(1e8)
    inv_phi = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(200):
        c, d = hi - inv_phi * (hi - lo), lo + inv_phi * (hi - lo)
        if eps(c) < eps(d):
            hi = d
        else:
            lo = c
    best = min(eps(0.5 * (lo + hi)), rho + 2.0 * math.sqrt(rho * log_inv))
    return max(0.0, best)


def rdp_epsilon(rdp: np.ndarray, delta: float) -> float:
    """ε at δ of an RDP curve on :data:`RDP_ORDERS` (``dp_accounting.rdp.compute_epsilon``)."""
    if delta <= 0.0:
        return math.inf
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    return float(compute_epsilon(np.asarray(RDP_ORDERS), np.asarray(rdp, dtype=float), float(delta))[0])


# --------------------------------------------------------------------------- ledger
@dataclasses.dataclass(frozen=True)
class LedgerEntry:
    """One spend as the accountant counted it.

    Attributes
    ----------
    label : str or None
    epsilon, delta : float
        The (ε, δ) the release states (what basic composition adds up).
    counted_as : tuple of str
        How each of its records entered the composition: the curve and its public numbers,
        or ``"(eps, delta) by basic composition: <why>"``.
    composed_epsilon, composed_delta : float
        The composed guarantee of every release so far, this one included, under the
        accountant's rule.
    """

    label: str | None
    epsilon: float
    delta: float
    counted_as: tuple[str, ...]
    composed_epsilon: float
    composed_delta: float


# --------------------------------------------------------------------------- composition state
@dataclasses.dataclass
class _Parts:
    """The releases of a tight rule: curve counts and the basic fallback (exact sums)."""

    counts: dict[Curve, int] = dataclasses.field(default_factory=dict)
    fallback: tuple[Fraction, Fraction] = (Fraction(0), Fraction(0))

    def plus(self, curves: Sequence[Curve], fallback: tuple[Fraction, Fraction]) -> _Parts:
        counts = dict(self.counts)
        for c in curves:
            counts[c] = counts.get(c, 0) + 1
        return _Parts(counts, (self.fallback[0] + fallback[0], self.fallback[1] + fallback[1]))


class TightComposition:
    """The tight part of a :class:`~pystanprivacy.privacy.records.PrivacyAccountant` under one
    rule: composed ε at a δ for a multiset of curves plus a basic fallback. Not thread-safe on
    its own (the accountant's lock guards it)."""

    def __init__(self, rule: str) -> None:
        self.rule = rule
        self.parts = _Parts()
        self._pld_cache: dict[tuple[Curve, int], Any] = {}

    # ---- per-rule ε(δ) of the curves
    def _zcdp(self, counts: Mapping[Curve, int]) -> Callable[[float], float] | None:
        if not counts:
            return None
        rho = math.fsum(c.rho() * n for c, n in counts.items()) * (1.0 + _MARGIN)
        return lambda delta: zcdp_epsilon(rho, delta)

    def _rdp(self, counts: Mapping[Curve, int]) -> Callable[[float], float] | None:
        if not counts:
            return None
        orders = np.asarray(RDP_ORDERS)
        total = sum(c.rdp(orders) * n for c, n in counts.items()) * (1.0 + _MARGIN)
        return lambda delta: rdp_epsilon(total, delta)

    def _power(self, curve: Curve, n: int) -> Any:
        key = (curve, n)
        if key not in self._pld_cache:
            if len(self._pld_cache) > 64:
                self._pld_cache.clear()
            base = _base_pld(curve)
            self._pld_cache[key] = base if n == 1 else base.self_compose(n)
        return self._pld_cache[key]

    def _pld(self, counts: Mapping[Curve, int]) -> Callable[[float], float] | None:
        if not counts:
            return None
        composed = None
        for curve, n in sorted(counts.items(), key=lambda item: repr(item[0])):
            power = self._power(curve, n)
            composed = power if composed is None else composed.compose(power)
        slack = _DISCRETE_GAUSSIAN_SLACK * sum(
            n for c, n in counts.items() if c.kind == "discrete_gaussian"
        ) + _PLD_TRUNCATION_SLACK * (len(counts) + 1)

        def eps(delta: float) -> float:
            if delta - slack < 0.0:
                return math.inf
            # relative margin: the pessimistic PLD can land one float step below the exact ε
            return max(0.0, float(composed.get_epsilon_for_delta(delta - slack))) * (1.0 + _MARGIN)

        return eps

    def _curve_parts(self, counts: Mapping[Curve, int]) -> list[Callable[[float], float]]:
        if self.rule == "zcdp":
            parts = [self._zcdp(counts)]
        elif self.rule == "rdp":
            parts = [self._rdp(counts)]
        else:
            parts = [
                self._pld({c: n for c, n in counts.items() if c.has_pld}),
                self._zcdp({c: n for c, n in counts.items() if not c.has_pld}),
            ]
        return [p for p in parts if p is not None]

    def epsilon(self, parts: _Parts, delta: float) -> float:
        """Composed ε at ``delta`` of ``parts`` (``inf`` when the fallback δ exceeds it)."""
        eps_f, delta_f = parts.fallback
        avail = float(Fraction(delta) - delta_f) if delta_f else float(delta)
        if avail < 0.0:
            return math.inf
        curves = self._curve_parts(parts.counts)
        if not curves:
            tight = 0.0
        elif len(curves) == 1:
            tight = curves[0](avail)
        else:
            first, second = curves
            tight = min(first(r * avail) + second((1.0 - r) * avail) for r in DELTA_SPLITS)
        return tight + float(eps_f) if eps_f else tight
