"""The audit registry: an empirical ε lower bound for every mechanism and OPS model.

Each :class:`Audit` runs one mechanism (or one OPS model) many times on a pair of
neighbouring inputs D, D' chosen to be worst case, reduces every output to a scalar
statistic, and hands the two samples to :func:`pystanprivacy.privacy.audit.epsilon_lower_bound`:
threshold events ``{s > t}`` and ``{s <= t}``, one-sided Clopper--Pearson bounds with a
Bonferroni correction over every bound, so that with probability at least ``1 - alpha``
the reported ``epsilon_lb`` is below the true ε of the pair. A mechanism that is correct
therefore gives ``epsilon_lb <= epsilon`` (the claimed ε) except with probability ``alpha``
(per audit; over the k audits of a full run at most ``k alpha``). Every audit also has a
deliberately broken variant (too little noise, a missing clipping or truncation, a wrong
calibration) that the same audit must catch: ``epsilon_lb > epsilon``.

What an audit proves and what it does not
------------------------------------------
* A *failed* audit (``epsilon_lb > epsilon``) is evidence, at confidence ``1 - alpha``,
  that the implementation does not meet its claim on that pair of inputs.
* A *passed* audit proves nothing: it is a lower bound on one pair of inputs and one
  family of events. The guarantees rest on the proofs cited in each mechanism's docstring.
* ε lower bounds are conservative: the reported number is usually well below the true ε
  of the pair (finite samples, Bonferroni correction, events that are not optimal) and for
  the OPS models the exponential-mechanism analysis has up to a factor 2 of slack.

OPS models
----------
An OPS release is ONE draw of the (tempered / beta-D) posterior. The audit needs many
independent draws on D and on D', so it runs one long Stan run per neighbour and keeps
every ``thin``-th draw. MCMC draws are only approximately independent after thinning; the
audit measures the bulk and tail ESS of the kept draws of every sampled component and
counts at most ``min(kept, ESS)`` of them (further thinning a component whose ESS is below
the number kept), so the Clopper--Pearson counts do not pretend to more independent
samples than the chains hold. The beta-Bernoulli OPS program samples R independent data
sets at once (its target is a product), so R copies of the same data set give R
independent draws per iteration at stationarity. The convergence assumption of OPS
(the draw comes from the exact target) is the audit's assumption too.

Adding an audit
---------------
Write ``sample(side, n, rng, broken)`` returning ``(statistics, info)`` (wrap a function
of the mechanism's outputs with ``_mechanism``) and :func:`register` an :class:`Audit`
with the claim, the neighbours, the broken variant and the sample sizes. The tests and
``pystanprivacy audit`` pick every registered entry up.

References
----------
.. [1] M. Jagielski, J. Ullman and A. Oprea (2020), "Auditing differentially private
   machine learning: how private is private SGD?", NeurIPS (Clopper--Pearson ε bounds).
.. [2] Z. Ding, Y. Wang, G. Wang, D. Zhang and D. Kifer (2018), "Detecting violations of
   differential privacy", CCS (auditing mechanisms on worst-case neighbours).
.. [3] J. Foulds, J. Geumlek, M. Welling and K. Chaudhuri (2016), UAI (OPS, Eq. 10, 14, 15).
.. [4] J. Jewson, S. Ghalebikesabi and C. Holmes (2023), NeurIPS (beta-D OPS, Theorem 1,
   Remark 1: the membership attack on worst-case data sets).
"""

from __future__ import annotations

import dataclasses
import math
import time
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .._validation import check_int
from ..privacy.audit import _pilot_thresholds, epsilon_lower_bound

__all__ = [
    "Audit",
    "AUDITS",
    "audit_names",
    "get_audit",
    "register",
    "run_audit",
    "run_audits",
    "markdown_table",
]

#: ``sample(side, n, rng, broken) -> (statistics, info)``: ``side`` 0 is D, 1 is D';
#: up to ``n`` scalar statistics of independent outputs (fewer for an OPS model whose
#: ESS is below ``n``) and a JSON-safe dict of diagnostics.
Sampler = Callable[[int, int, np.random.Generator, bool], tuple[np.ndarray, dict[str, Any]]]


@dataclasses.dataclass(frozen=True)
class Audit:
    """One entry of the registry.

    Attributes
    ----------
    name : str
        Registry key, e.g. ``"laplace"``.
    kind : {"mechanism", "model"}
    epsilon, delta : float
        The claim being audited.
    neighbours : str
        D and D', and why they are worst case.
    statistic : str
        The scalar each output is reduced to.
    broken : str
        What the deliberately broken variant gets wrong.
    sample : Sampler
        Draws the statistic on D (side 0) or D' (side 1), correct or broken.
    quick, full : int
        Samples per side of the quick (test-suite) and full audits.
    thresholds : tuple of float, optional
        Events fixed in advance; ``None``: quantiles of an independent pilot sample
        (mechanisms only: OPS models use fixed thresholds so that no pilot run is needed).
    pilot : int
        Pilot samples per side when ``thresholds`` is None.
    reference : str
    """

    name: str
    kind: str
    epsilon: float
    delta: float
    neighbours: str
    statistic: str
    broken: str
    sample: Sampler
    quick: int
    full: int
    thresholds: tuple[float, ...] | None = None
    pilot: int = 20_000
    reference: str = ""


AUDITS: dict[str, Audit] = {}


def register(audit: Audit) -> Audit:
    """Add ``audit`` to :data:`AUDITS` (a new name; ``ValueError`` for a duplicate)."""
    if audit.kind not in ("mechanism", "model"):
        raise ValueError(f"audit kind must be 'mechanism' or 'model', got {audit.kind!r}")
    if audit.name in AUDITS:
        raise ValueError(f"an audit named {audit.name!r} is already registered")
    AUDITS[audit.name] = audit
    return audit


def audit_names(kind: str | None = None) -> list[str]:
    """Registered names (of one kind, if given), in registration order."""
    return [a.name for a in AUDITS.values() if kind is None or a.kind == kind]


def get_audit(name: str) -> Audit:
    """The audit called ``name``; ``KeyError`` listing the valid names otherwise."""
    try:
        return AUDITS[name]
    except KeyError:
        raise KeyError(f"unknown audit {name!r}; known: {', '.join(AUDITS)}") from None


def _rng(seed: int, name: str, broken: bool) -> np.random.Generator:
    """A stream per (seed, audit, variant): results do not depend on which audits run."""
    return np.random.default_rng([int(seed), zlib.crc32(name.encode()), int(broken)])


def run_audit(
    name: str, *, quick: bool = True, seed: int = 0, broken: bool = False, alpha: float = 0.05, n: int | None = None
) -> dict[str, Any]:
    """Audit one registry entry; returns one row (a dict).

    Parameters
    ----------
    name : str
        A key of :data:`AUDITS`.
    quick : bool, default True
        ``audit.quick`` samples per side (else ``audit.full``).
    seed : int, default 0
    broken : bool, default False
        Audit the deliberately broken variant instead (it should be caught).
    alpha : float, default 0.05
        The bound holds with probability >= 1 - alpha (Bonferroni over all its events).
    n : int, optional
        Samples per side, overriding quick/full.

    Returns
    -------
    dict
        ``name, kind, variant, epsilon, delta, epsilon_lb, confidence, samples, passed``
        (``epsilon_lb <= epsilon``), ``verdict`` ("pass"/"FAIL" for the mechanism as
        claimed; "caught"/"NOT CAUGHT" for the broken variant), the best ``event``,
        ``seconds`` and sampler diagnostics (``info``: e.g. ESS of the OPS runs).
    """
    audit = get_audit(name)
    seed = check_int(seed, "seed", minimum=0)
    size = check_int(n if n is not None else (audit.quick if quick else audit.full), "n", minimum=10)
    rng = _rng(seed, name, broken)
    t0 = time.perf_counter()
    if audit.thresholds is None:
        pilot_d, _ = audit.sample(0, audit.pilot, rng, broken)
        pilot_dp, _ = audit.sample(1, audit.pilot, rng, broken)
        thresholds = _pilot_thresholds(np.asarray(pilot_d, float), np.asarray(pilot_dp, float), 64)
    else:
        thresholds = np.asarray(audit.thresholds, dtype=float)
    x, info_d = audit.sample(0, size, rng, broken)
    y, info_dp = audit.sample(1, size, rng, broken)
    x, y = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    m = int(min(x.size, y.size))
    if m < 10:
        raise RuntimeError(f"audit {name!r}: only {m} independent samples per side (ESS too low)")
    res = epsilon_lower_bound(
        lambda k: x[:k], lambda k: y[:k], n_draws=m, thresholds=thresholds, delta=audit.delta, alpha=alpha
    )
    passed = bool(res.epsilon_lb <= audit.epsilon)
    verdict = ("caught" if not passed else "NOT CAUGHT") if broken else ("pass" if passed else "FAIL")
    return {
        "name": name,
        "kind": audit.kind,
        "variant": "broken" if broken else "as claimed",
        "epsilon": audit.epsilon,
        "delta": audit.delta,
        "epsilon_lb": res.epsilon_lb,
        "confidence": 1.0 - alpha,
        "samples": m,
        "passed": passed,
        "verdict": verdict,
        "event": res.event,
        "n_events": res.n_events,
        "seconds": time.perf_counter() - t0,
        "info": {"D": info_d, "D'": info_dp},
        "broken_variant": audit.broken if broken else "",
    }


def run_audits(
    names: list[str] | None = None,
    *,
    quick: bool = True,
    seed: int = 0,
    broken: bool = False,
    alpha: float = 0.05,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """:func:`run_audit` for each name (default: all), in order; ``progress(row)`` after each."""
    rows = []
    for name in names if names is not None else audit_names():
        row = run_audit(name, quick=quick, seed=seed, broken=broken, alpha=alpha)
        rows.append(row)
        if progress is not None:
            progress(row)
    return rows


def markdown_table(rows: list[Mapping[str, Any]]) -> str:
    """name | kind | claimed ε | δ | empirical ε lower bound (1-α) | samples | verdict."""
    conf = rows[0]["confidence"] if rows else 0.95
    lines = [
        f"| name | kind | claimed ε | δ | empirical ε lower bound ({100 * conf:g} %) | samples | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        name = r["name"] + (" (broken)" if r["variant"] == "broken" else "")
        lines.append(
            f"| {name} | {r['kind']} | {r['epsilon']:.4g} | {r['delta']:.3g} | {r['epsilon_lb']:.3f} | "
            f"{r['samples']} | {r['verdict']} |"
        )
    return "\n".join(lines)


# ============================================================================ mechanisms
def _mechanism(fn: Callable[[int, int, np.random.Generator, bool], np.ndarray]) -> Sampler:
    def sample(side: int, n: int, rng: np.random.Generator, broken: bool) -> tuple[np.ndarray, dict[str, Any]]:
        return np.asarray(fn(side, n, rng, broken), dtype=float), {}

    return sample


def _laplace(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from ..privacy.mechanisms import Laplace

    # broken: the scale of sensitivity 0.5 (half the noise) while claiming sensitivity 1
    mech = Laplace(epsilon=1.0, sensitivity=0.5 if broken else 1.0, seed=rng)
    return mech.randomise(np.full(n, float(side)))


def _gaussian(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from ..privacy.mechanisms import Gaussian

    # broken: sigma computed for a sensitivity 4 times too small
    mech = Gaussian(epsilon=0.5, delta=1e-5, sensitivity=0.25 if broken else 1.0, seed=rng)
    return mech.randomise(np.full(n, float(side)))


def _analytic_gaussian(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from ..privacy.mechanisms import AnalyticGaussian

    # broken: sigma calibrated for epsilon 4 (claiming 1)
    mech = AnalyticGaussian(epsilon=4.0 if broken else 1.0, delta=1e-5, sensitivity=1.0, seed=rng)
    return mech.randomise(np.full(n, float(side)))


def _rr(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from ..privacy.mechanisms import RandomizedResponse

    # broken: keep probability e^(2 eps) / (1 + e^(2 eps)) (claiming eps)
    mech = RandomizedResponse(epsilon=2.0 if broken else 1.0, seed=rng)
    return mech.randomise(np.full(n, side, dtype=np.int64))


def _oue(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from ..privacy.mechanisms import OptimalUnaryEncoding

    # broken: q = 1 / (e^(2 eps) + 1), computed for 2 eps (claiming eps)
    mech = OptimalUnaryEncoding(epsilon=2.0 if broken else 1.0, d=4, seed=rng)
    y = mech.randomise(np.full(n, side, dtype=np.int64))
    return y[:, 1] - y[:, 0]


def _clipped_laplace(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from ..privacy.ldp import clipped_laplace_reports
    from ..privacy.mechanisms import Laplace

    x = np.full(n, -1.0 if side == 0 else 2.0)  # outside [0, 1] on both sides
    if broken:  # the clipping is skipped: Laplace((b - a)/eps) on the raw value
        return Laplace(epsilon=1.0, sensitivity=1.0, seed=rng).randomise(x)
    return clipped_laplace_reports(x, epsilon=1.0, bounds=(0.0, 1.0), seed=rng).values


_GR_DIR = np.array([1.0, 1.0]) / math.sqrt(2.0)


def _gaussian_reports(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from ..privacy.ldp import gaussian_reports

    rows = np.tile(_GR_DIR if side == 0 else -_GR_DIR, (n, 1))  # ||x|| = 1, ||x - x'|| = 2 = 2R
    # broken: sigma calibrated for epsilon 4 (claiming 1)
    rel = gaussian_reports(rows, epsilon=4.0 if broken else 1.0, delta=1e-5, sensitivity=2.0, max_norm=1.0, seed=rng)
    return rel.values @ (-_GR_DIR)  # projection on the direction D -> D' (likelihood ratio)


def _kulkarni_linreg_ss(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from .kulkarni2022_regression import LinearRegressionSS

    x = np.ones((n, 1))
    y = np.full(n, 1.0 if side == 0 else -1.0)
    # broken: sigma_1 calibrated for epsilon 4 (claiming 1)
    rel = LinearRegressionSS.release(x, y, epsilon=4.0 if broken else 1.0, delta=1e-5, R=1.0, R_y=1.0, seed=rng)
    # reports [x^2, y x, y^2] + N(0, sigma_1^2 I): only the y x coordinate differs (by 2)
    return -rel.values[:, 1]


def _kulkarni_linreg_inputs(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from .kulkarni2022_regression import LinearRegressionInputs

    x = np.full((n, 1), 1.0 if side == 0 else -1.0)
    y = np.full(n, 1.0 if side == 0 else -1.0)
    rel = LinearRegressionInputs.release(x, y, epsilon=4.0 if broken else 1.0, delta=1e-5, R=1.0, R_y=1.0, seed=rng)
    det = rel.record.details
    sx, sy = det["sigma_x"], det["sigma_y"]
    z = rel.values
    # log-likelihood ratio direction: the mean moves by -2 in both columns
    return -(z[:, 0] / sx**2 + z[:, 1] / sy**2)


def _kulkarni_logreg_ss(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from .kulkarni2022_regression import LogisticRegressionSS

    x = np.full((n, 1), 1.0 if side == 0 else -1.0)
    # broken: sigma_1 calibrated for epsilon 4 (claiming 1)
    rel = LogisticRegressionSS.release(
        x, np.ones(n, dtype=np.int64), epsilon=4.0 if broken else 1.0, delta=1e-5, R=1.0, seed=rng
    )
    # reports [y x, x^2] + N(0, sigma_1^2 I), y in {-1, 1}: only y x differs (by 2)
    return -rel.values[:, 0]


def _kulkarni_logreg_inputs(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from .kulkarni2022_regression import LogisticRegressionInputs

    x = np.full((n, 1), 1.0 if side == 0 else -1.0)
    y = np.full(n, 1 if side == 0 else 0, dtype=np.int64)
    rel = LogisticRegressionInputs.release(x, y, epsilon=4.0 if broken else 1.0, delta=1e-5, R=1.0, seed=rng)
    z, bit = rel.values[:, 0], rel.values[:, 1]
    # exact log-likelihood ratio log p(z, b | D') - log p(z, b | D) of the CLAIMED mechanism:
    # Gaussian part -2 z / sigma_x^2 (means 1 -> -1), randomised-response part +-eps_label
    claimed = LogisticRegressionInputs.release(
        np.zeros((1, 1)), np.zeros(1, dtype=np.int64), epsilon=1.0, delta=1e-5, R=1.0, seed=0
    ).record.details
    eps_y = claimed["budget_split"]["epsilon_label"]
    return -2.0 * z / claimed["sigma_x"] ** 2 + np.where(bit == 0, eps_y, -eps_y)


register(
    Audit(
        name="laplace",
        kind="mechanism",
        epsilon=1.0,
        delta=0.0,
        neighbours="f(D) = 0, f(D') = 1 = sensitivity: any pair at L1 distance Delta has the same privacy loss",
        statistic="the output",
        broken="half the scale (sensitivity/(2 eps))",
        sample=_mechanism(_laplace),
        quick=200_000,
        full=2_000_000,
        reference="Dwork & Roth 2014, Thm 3.6",
    )
)
register(
    Audit(
        name="gaussian",
        kind="mechanism",
        epsilon=0.5,
        delta=1e-5,
        neighbours="f(D) = 0, f(D') = 1 = L2 sensitivity (the privacy curve depends only on Delta/sigma)",
        statistic="the output",
        broken="sigma for a sensitivity 4x too small",
        sample=_mechanism(_gaussian),
        quick=200_000,
        full=2_000_000,
        reference="Dwork & Roth 2014, Thm A.1",
    )
)
register(
    Audit(
        name="analytic_gaussian",
        kind="mechanism",
        epsilon=1.0,
        delta=1e-5,
        neighbours="f(D) = 0, f(D') = 1 = L2 sensitivity (the privacy curve depends only on Delta/sigma)",
        statistic="the output",
        broken="sigma calibrated for epsilon 4",
        sample=_mechanism(_analytic_gaussian),
        quick=200_000,
        full=2_000_000,
        reference="Balle & Wang 2018, Thm 8",
    )
)
register(
    Audit(
        name="randomized_response",
        kind="mechanism",
        epsilon=1.0,
        delta=0.0,
        neighbours="bit 0 vs bit 1 (the only pair)",
        statistic="the reported bit",
        thresholds=(0.5,),
        broken="keep probability for 2 eps",
        sample=_mechanism(_rr),
        quick=100_000,
        full=1_000_000,
        reference="Warner 1965; Dwork & Roth 2014, Sec. 3.2",
    )
)
register(
    Audit(
        name="oue",
        kind="mechanism",
        epsilon=1.0,
        delta=0.0,
        neighbours="category 0 vs 1 (d = 4; every pair is equivalent by symmetry)",
        statistic="y_1 - y_0 (the likelihood ratio depends only on these two bits)",
        thresholds=(-0.5, 0.5),
        broken="q = 1/(e^(2 eps) + 1), computed for 2 eps",
        sample=_mechanism(_oue),
        quick=100_000,
        full=1_000_000,
        reference="Wang et al. 2017, Sec. 4.4",
    )
)
register(
    Audit(
        name="clipped_laplace_reports",
        kind="mechanism",
        epsilon=1.0,
        delta=0.0,
        neighbours="x = -1 vs x = 2 with bounds [0, 1]: after clipping they differ by b - a (the sensitivity); "
        "the values outside the bounds also catch a missing clipping",
        statistic="the report",
        broken="clipping skipped (noise Laplace((b-a)/eps) on the raw value)",
        sample=_mechanism(_clipped_laplace),
        quick=200_000,
        full=2_000_000,
        reference="Kulkarni et al. 2022, Sec. 3.2.1",
    )
)
register(
    Audit(
        name="gaussian_reports",
        kind="mechanism",
        epsilon=1.0,
        delta=1e-5,
        neighbours="x = u vs x = -u, ||u|| = R = 1: distance 2R, the declared per-user L2 sensitivity",
        statistic="projection of the report on the direction x' - x (the likelihood ratio)",
        broken="sigma calibrated for epsilon 4",
        sample=_mechanism(_gaussian_reports),
        quick=200_000,
        full=2_000_000,
        reference="Kulkarni et al. 2022, Definition 2.3, Eq. 45",
    )
)
register(
    Audit(
        name="kulkarni_linreg_ss",
        kind="mechanism",
        epsilon=1.0,
        delta=1e-5,
        neighbours="(x, y) = (1, 1) vs (1, -1), d = 1, R = R_y = 1: the reports [x^2, yx, y^2] differ by 2, the largest "
        "distance in d = 1 (grid search; Lemma 3.1's bound sqrt(5.5) = 2.35 is not attained in d = 1)",
        statistic="-(y x report) (the only coordinate that differs)",
        broken="sigma_1 calibrated for epsilon 4",
        sample=_mechanism(_kulkarni_linreg_ss),
        quick=200_000,
        full=2_000_000,
        reference="Kulkarni et al. 2022, Sec. 3.1.1, Lemma 3.1",
    )
)
register(
    Audit(
        name="kulkarni_logreg_ss",
        kind="mechanism",
        epsilon=1.0,
        delta=1e-5,
        neighbours="(x, y) = (1, 1) vs (-1, 1), d = 1, R = 1: the reports [y x, x^2] differ by 2, the largest distance "
        "in d = 1 (Lemma 13.1's bound sqrt(4.5) = 2.12 is not attained in d = 1)",
        statistic="-(y x report) (the only coordinate that differs)",
        broken="sigma_1 calibrated for epsilon 4",
        sample=_mechanism(_kulkarni_logreg_ss),
        quick=200_000,
        full=2_000_000,
        reference="Kulkarni et al. 2022, Sec. 13.2, Lemma 13.1",
    )
)
register(
    Audit(
        name="kulkarni_linreg_inputs",
        kind="mechanism",
        epsilon=1.0,
        delta=1e-5,
        neighbours="(x, y) = (R, R_y) vs (-R, -R_y): both reports move by their full sensitivity 2R, 2R_y",
        statistic="log-likelihood-ratio direction -(z_x/sigma_x^2 + z_y/sigma_y^2)",
        broken="both sigmas calibrated for epsilon 4",
        sample=_mechanism(_kulkarni_linreg_inputs),
        quick=200_000,
        full=2_000_000,
        reference="Kulkarni et al. 2022, Sec. 3.2.3, Eq. 45",
    )
)


register(
    Audit(
        name="kulkarni_logreg_inputs",
        kind="mechanism",
        epsilon=1.0,
        delta=1e-5,
        neighbours="(x, y) = (R, 1) vs (-R, 0): the feature report moves by its full sensitivity 2R and the label flips",
        statistic="the exact log-likelihood ratio of the claimed mechanism (Gaussian part + randomised-response part)",
        broken="feature sigma and keep probability calibrated for epsilon 4",
        sample=_mechanism(_kulkarni_logreg_inputs),
        quick=200_000,
        full=2_000_000,
        reference="Kulkarni et al. 2022, Sec. 3.2.3, Eq. 42-45",
    )
)


# ------------------------------------------------ the secure path (what seed=None releases use)
def _secure(mech: Any, rng: np.random.Generator) -> Any:
    """``mech`` (made with ``seed=None``) with its CSPRNG swapped for a seeded source of the
    same integer interface, so that the audit is reproducible. Everything else of the
    secure path is what a real release runs: the exact integer samplers, the power-of-two
    grid and the sensitivity in grid units (:mod:`pystanprivacy.privacy.noise`)."""
    from ..privacy.noise import SeededRandom

    mech._source = SeededRandom(rng)
    return mech


def _discrete_laplace(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from ..privacy.mechanisms import Laplace

    # integer counts get discrete Laplace noise directly; broken: scale for 2 eps (claiming eps)
    mech = _secure(Laplace(epsilon=1.0 if broken else 0.5, sensitivity=1.0), rng)
    return mech.randomise(np.full(n, side, dtype=np.int64))


def _laplace_grid(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from ..privacy.mechanisms import Laplace

    # real values rounded to the grid, integer noise; broken: scale for 2 eps (claiming eps)
    mech = _secure(Laplace(epsilon=2.0 if broken else 1.0, sensitivity=1.0), rng)
    return mech.randomise(np.full(n, float(side)))


def _discrete_gaussian(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from ..privacy.mechanisms import AnalyticGaussian

    # integer counts get discrete Gaussian noise, sigma from its exact delta (CKS 2020, Thm 7);
    # broken: sigma calibrated for eps 4 (claiming 1)
    mech = _secure(AnalyticGaussian(epsilon=4.0 if broken else 1.0, delta=1e-5, sensitivity=1.0), rng)
    return mech.randomise(np.full(n, side, dtype=np.int64))


def _rr_secure(side: int, n: int, rng: np.random.Generator, broken: bool) -> np.ndarray:
    from ..privacy.mechanisms import RandomizedResponse

    # exact Bernoulli(1/(1+e^eps)) flips; broken: flips for 2 eps (claiming eps)
    mech = _secure(RandomizedResponse(epsilon=2.0 if broken else 1.0), rng)
    return mech.randomise(np.full(n, side, dtype=np.int64))


register(
    Audit(
        name="discrete_laplace",
        kind="mechanism",
        epsilon=0.5,
        delta=0.0,
        neighbours="count 0 vs 1 (integer L1 sensitivity 1; every pair at that distance has the same loss)",
        statistic="the output",
        broken="scale for 2 eps",
        sample=_mechanism(_discrete_laplace),
        quick=60_000,
        full=1_000_000,
        reference="Canonne, Kamath & Steinke 2020, Sec. 2 and Alg. 2 (the secure path of Laplace, seed=None)",
    )
)
register(
    Audit(
        name="laplace_grid",
        kind="mechanism",
        epsilon=1.0,
        delta=0.0,
        neighbours="f(D) = 0.0, f(D') = 1.0 = sensitivity, both on the grid (rounding cannot move grid points)",
        statistic="the output",
        broken="scale for 2 eps",
        sample=_mechanism(_laplace_grid),
        quick=60_000,
        full=1_000_000,
        reference="pystanprivacy.privacy.noise (power-of-two grid, integer sensitivity Delta/g + 1); the secure path of Laplace",
    )
)
register(
    Audit(
        name="discrete_gaussian",
        kind="mechanism",
        epsilon=1.0,
        delta=1e-5,
        neighbours="count 0 vs 1 (integer L2 sensitivity 1)",
        statistic="the output",
        broken="sigma calibrated for epsilon 4",
        sample=_mechanism(_discrete_gaussian),
        quick=60_000,
        full=1_000_000,
        reference="Canonne, Kamath & Steinke 2020, Thm 7 and Alg. 3 (the secure path of AnalyticGaussian)",
    )
)
register(
    Audit(
        name="randomized_response_secure",
        kind="mechanism",
        epsilon=1.0,
        delta=0.0,
        neighbours="bit 0 vs bit 1 (the only pair)",
        statistic="the reported bit",
        thresholds=(0.5,),
        broken="flips for 2 eps",
        sample=_mechanism(_rr_secure),
        quick=60_000,
        full=1_000_000,
        reference="pystanprivacy.privacy.noise.bernoulli_logistic (exact Bernoulli(1/(1+e^eps))); the secure path",
    )
)

# ============================================================================ OPS models
#: convergence gate of an audit run of the model as claimed (the OPS assumption)
_MAX_RHAT = 1.05


def _ops_draws(
    post: Any, columns: Mapping[str, Any], rng: np.random.Generator, strict: bool
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Kept draws of some scalar components, reduced to at most their ESS, shuffled.

    ``columns`` maps a variable to the indices of its flattened elements to keep; every
    returned array has shape ``(m, k_var)`` with the SAME iterations for every column.
    ``m = min(kept, floor(min ESS_bulk, ESS_tail over the columns))`` of the ``kept`` draws,
    evenly spaced over the chains (thinned further where the ESS is below ``kept``). With
    ``strict`` the run must have no divergences and split R-hat <= 1.05 (the OPS
    convergence assumption), else ``RuntimeError``.
    """
    ess_b, ess_t, rhat = post.ess_bulk(), post.ess_tail(), post.rhat()
    chains, kept = post.num_chains, post.num_draws
    total = chains * kept
    ess, worst_rhat, picked = math.inf, 0.0, {}
    for var, cols in columns.items():
        cols = np.atleast_1d(np.asarray(cols))
        ess = min(
            ess,
            float(np.atleast_1d(ess_b[var]).ravel()[cols].min()),
            float(np.atleast_1d(ess_t[var]).ravel()[cols].min()),
        )
        worst_rhat = max(worst_rhat, float(np.nanmax(np.atleast_1d(rhat[var]).ravel()[cols])))
        picked[var] = post.draws(var).reshape(total, -1)[:, cols]  # chain-major
    m = int(max(1, min(total, math.floor(ess)))) if math.isfinite(ess) else 1
    idx = np.unique(np.linspace(0, total - 1, m).round().astype(int))
    perm = rng.permutation(idx.size)
    out = {var: a[idx][perm] for var, a in picked.items()}
    info = {
        "chains": chains,
        "kept": total,
        "min_ess": round(ess, 1),
        "used": int(idx.size),
        "max_rhat": round(worst_rhat, 4),
        "divergences": int(post.num_divergences),
    }
    if strict and (post.num_divergences > 0 or not worst_rhat <= _MAX_RHAT):
        raise RuntimeError(
            f"OPS audit run did not converge (R-hat {worst_rhat:.3f}, {post.num_divergences} "
            "divergences): the audit's assumption that the draws come from the target fails"
        )
    return out, info


def _ops_run(
    stan_model: Any,
    data: Mapping[str, Any],
    n: int,
    rng: np.random.Generator,
    *,
    per_iteration: int = 1,
    chains: int = 4,
    warmup: int = 500,
    thin: int = 2,
    **kw: Any,
) -> Any:
    """One long run per neighbour: enough kept draws for ``n`` samples (``per_iteration``
    independent components per draw)."""
    kept = max(10, math.ceil(n / (chains * per_iteration)))
    return stan_model.sample(data, chains=chains, warmup=warmup, draws=kept * thin, thin=thin, seed=rng, **kw)


# ---- Foulds et al. (2016): truncated beta-Bernoulli OPS ------------------------------------------
_BB_A0 = 0.2
_BB_EPS = math.log((1 - _BB_A0) / _BB_A0)  # T = 2 Delta / eps = 2
_BB_COPIES = 10
_BB_THRESHOLDS = (
    0.005,
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.25,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.75,
    0.8,
    0.9,
    0.95,
    0.98,
    0.99,
    0.995,
)


def _foulds_bb_ops(side: int, n: int, rng: np.random.Generator, broken: bool) -> tuple[np.ndarray, dict[str, Any]]:
    from .foulds2016 import BetaBernoulliOPS

    model = BetaBernoulliOPS(a0=_BB_A0)
    # D = {1}, D' = {0} (N = 1), repeated as R independent data sets in one run
    counts = np.tile([1.0, 0.0] if side == 0 else [0.0, 1.0], (_BB_COPIES, 1))
    data = model.data(counts, _BB_EPS)
    if broken:  # truncation skipped: p on (1e-6, 1 - 1e-6), temperature still from a0 = 0.2
        data["a0"] = 1e-6
    post = _ops_run(model.stan_model, data, n, rng, per_iteration=_BB_COPIES)
    # the R copies are independent at stationarity: pool them
    draws, info = _ops_draws(post, {"p": np.arange(_BB_COPIES)}, rng, strict=not broken)
    return draws["p"].ravel(), info


register(
    Audit(
        name="foulds2016_beta_bernoulli_ops",
        kind="model",
        epsilon=_BB_EPS,
        delta=0.0,
        neighbours="D = {1} vs D' = {0} (N = 1, uniform prior): the log-likelihood difference log(p/(1-p)) sweeps "
        "its whole range [-Delta, Delta] with equal normalisers, so the privacy loss reaches Delta/T = eps/2 "
        "at the truncation boundary with non-negligible probability",
        statistic="the released p",
        thresholds=_BB_THRESHOLDS,
        broken="truncation skipped (a0 = 1e-6 in the program, temperature still computed for a0 = 0.2)",
        sample=_foulds_bb_ops,
        quick=20_000,
        full=200_000,
        reference="Foulds et al. 2016, Eq. 10, 14, 15",
    )
)


# ---- Foulds et al. (2016): naive-Bayes HMM OPS (K = 1, one cell, one binary feature) -------------
_HMM_MULT = 2.0  # a0 = 1/(M K_d) = 0.25, Delta = log 3
_HMM_EPS = math.log(3.0) / 2.0  # T = 2 Delta / eps = 4
_HMM_THRESHOLDS = tuple(np.round(np.linspace(0.27, 0.73, 24), 4))


def _foulds_hmm_ops(side: int, n: int, rng: np.random.Generator, broken: bool) -> tuple[np.ndarray, dict[str, Any]]:
    from .foulds2016_hmm import CountLayout, NaiveBayesHMMOPS

    model = NaiveBayesHMMOPS(1, multiplier=_HMM_MULT)
    counts = np.array([1, 0] if side == 0 else [0, 1], dtype=np.int64).reshape(1, 1, 2)
    layout, exact = CountLayout.from_counts(counts, [2])
    data = model.data(exact, layout, None, _HMM_EPS)
    if broken:  # temperature calibrated for 4 eps (T = 1 instead of 4)
        data["temperature"] = model.temperature(4.0 * _HMM_EPS, [2])
    post = _ops_run(model.stan_model, data, n, rng)
    draws, info = _ops_draws(post, {"theta": [0]}, rng, strict=not broken)
    return draws["theta"][:, 0], info


register(
    Audit(
        name="foulds2016_hmm_ops",
        kind="model",
        epsilon=_HMM_EPS,
        delta=0.0,
        neighbours="one cell with one log entry of a binary feature, value 1 vs value 2 (K = 1 state): the "
        "log-likelihood difference log(theta_1/theta_2) sweeps [-Delta, Delta] with equal normalisers",
        statistic="theta[1, 1], the emission probability of value 1",
        thresholds=_HMM_THRESHOLDS,
        broken="temperature calibrated for 4 eps (T = 1 instead of 4)",
        sample=_foulds_hmm_ops,
        quick=20_000,
        full=200_000,
        reference="Foulds et al. 2016, Eq. 6-10, Sec. 5",
    )
)


# ---- Jewson et al. (2023): beta-D logistic regression --------------------------------------------
_JL_EPS = 1.0
#: thresholds on a loss difference in units of the claimed loss sensitivity: (-1, 1) as claimed
_NORMALISED = tuple(
    np.round(np.concatenate([np.linspace(-0.95, 0.95, 20), [-10, -5, -3, -2, -1.5, 1.5, 2, 3, 5, 10]]), 4)
)


def _jewson_logistic(side: int, n: int, rng: np.random.Generator, broken: bool) -> tuple[np.ndarray, dict[str, Any]]:
    from .jewson2023 import ATTACK_D, ATTACK_D_PRIME, LogisticRegressionBetaD, betad_loss_bernoulli, loss_sensitivity

    model = LogisticRegressionBetaD()
    X, y = ATTACK_D if side == 0 else ATTACK_D_PRIME
    beta = model.beta(8.0 * _JL_EPS if broken else _JL_EPS)  # broken: beta for 8 eps
    post = _ops_run(model.stan_model, model.stan_data(*model.check_data(X, y), beta=beta), n, rng)
    draws, info = _ops_draws(post, {"theta": [0]}, rng, strict=not broken)
    theta = draws["theta"][:, 0]
    # Remark 1's likelihood-ratio statistic: l(D; theta) - l(D'; theta) (log p(.|D') - log p(.|D)
    # up to the normalisers), in units of the claimed loss sensitivity 1/(beta_claimed - 1)
    (Xd, yd), (Xp, yp) = ATTACK_D, ATTACK_D_PRIME
    diff = betad_loss_bernoulli(yd[:, None], Xd[:, :1] * theta, beta).sum(axis=0) - betad_loss_bernoulli(
        yp[:, None], Xp[:, :1] * theta, beta
    ).sum(axis=0)
    return diff / loss_sensitivity(model.beta(_JL_EPS), 1.0), {**info, "beta": beta}


register(
    Audit(
        name="jewson2023_logistic",
        kind="model",
        epsilon=_JL_EPS,
        delta=0.0,
        neighbours="Remark 1's worst case: D = {(x=1, y=1), (0, 0)} vs D' = {(x=-1, y=1), (0, 0)}; theta -> -theta "
        "swaps them, so the normalisers are equal and the privacy loss, the loss difference, approaches the "
        "loss sensitivity 1/(beta-1) = eps/2 as |theta| grows",
        statistic="loss difference l(D) - l(D') at the draw (the Bayes-optimal attack's statistic), in units "
        "of the claimed loss sensitivity",
        thresholds=_NORMALISED,
        broken="beta calibrated for 8 eps",
        sample=_jewson_logistic,
        quick=20_000,
        full=200_000,
        reference="Jewson et al. 2023, Theorem 1, Example 1, Remark 1",
    )
)


# ---- Jewson et al. (2023): beta-D Gaussian linear regression ------------------------------------
_JR_EPS = 1.0
_JR_S2 = 1.0 / (2.0 * math.pi)  # M = 1: beta = 1 + 2/eps
_JR_Y = 0.5


def _jewson_linear(side: int, n: int, rng: np.random.Generator, broken: bool) -> tuple[np.ndarray, dict[str, Any]]:
    from .jewson2023 import LinearRegressionBetaD, loss_sensitivity

    # a prior that lets sigma2 reach small values (IG(2, 0.01), theta | sigma2 ~ N(0, 100 sigma2)): the
    # guarantee holds for every prior, and this one lets the posterior reach where the loss bound is
    model = LinearRegressionBetaD(s2=_JR_S2, prior_a=2.0, prior_b=0.01, prior_var_scale=100.0)
    X = np.ones((1, 1))
    y = np.array([-_JR_Y if side == 0 else _JR_Y])
    beta = model.beta(_JR_EPS)
    data = model.stan_data(*model.check_data(X, y), beta=beta)
    if broken:  # sigma2 >= s2/100 in the program while beta is calibrated for s2
        data["s2"] = _JR_S2 / 100.0
    post = _ops_run(model.stan_model, data, n, rng, adapt_delta=0.95)
    draws, info = _ops_draws(post, {"theta": [0], "sigma2": [0]}, rng, strict=not broken)
    th, s2 = draws["theta"][:, 0], draws["sigma2"][:, 0]
    # loss difference l(D) - l(D') = [f(y'; theta, s2)^(b) - f(y; theta, s2)^(b)] / b, b = beta - 1
    b = beta - 1.0
    log_norm = -0.5 * np.log(2.0 * np.pi * s2)
    f_dp = np.exp(b * (log_norm - 0.5 * (_JR_Y - th) ** 2 / s2))
    f_d = np.exp(b * (log_norm - 0.5 * (_JR_Y + th) ** 2 / s2))
    diff = (f_dp - f_d) / b
    info["beta"] = beta
    return diff / loss_sensitivity(beta, 1.0), info


register(
    Audit(
        name="jewson2023_linear_regression",
        kind="model",
        epsilon=_JR_EPS,
        delta=0.0,
        neighbours="N = 1, x = 1, y = -0.5 vs y = 0.5 with s2 = 1/(2 pi) (M = 1), prior sigma2 ~ IG(2, 0.01), "
        "theta | sigma2 ~ N(0, 100 sigma2): symmetric, so the normalisers are equal, and the loss difference "
        "[f(y')^(beta-1) - f(y)^(beta-1)]/(beta-1) approaches its bound where theta is at one response "
        "and sigma2 = s2, where this prior puts mass",
        statistic="loss difference l(D) - l(D') at the draw, in units of the claimed loss sensitivity",
        thresholds=_NORMALISED,
        broken="the program's variance bound s2 is 100 times smaller than the s2 that calibrates beta",
        sample=_jewson_linear,
        quick=20_000,
        full=200_000,
        reference="Jewson et al. 2023, Theorem 1, Example 2",
    )
)
