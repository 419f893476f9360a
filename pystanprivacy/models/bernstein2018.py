"""Noise-aware posteriors for exponential families (Bernstein & Sheldon 2018).

The release mechanism adds Laplace noise to the sufficient statistics of n records (n public,
replace-one neighbours); the noise-aware posterior p(θ | y) integrates over the unobserved
exact statistics, so it is calibrated, whereas treating y as exact ("naive") is not.

=====================  =========================================  ==========================
class                  Stan model                                 statistic, L1 sensitivity
=====================  =========================================  ==========================
BinomialBeta           bernstein2018/binomial_beta (CLT)          count of ones, 1
BinomialBetaExact      bernstein2018/binomial_beta_exact          count of ones, 1
MultinomialDirichlet   bernstein2018/multinomial_dirichlet        K category counts, 2
ExponentialGamma       bernstein2018/exponential_gamma            sum of x in [a, b], b
=====================  =========================================  ==========================

Every class follows one path (:mod:`pystanprivacy.models.base`): the classmethod
``Model.release(x, epsilon=…)`` (or ``release_statistics(s, n=…, epsilon=…)`` when the data
owner already holds the exact statistics, or ``published(y, n=…, epsilon=…)`` for noisy
statistics published by someone else) gives a :class:`~pystanprivacy.privacy.records.Release`
whose record states the mechanism, sensitivity, noise scale, n and bounds (the declared bounds
are keyword arguments of a class-level call -- ``K`` of the multinomial, ``bounds`` of the
exponential -- and a model's own when called on a model); ``model.fit(release)`` builds the Stan
likelihood from that record (so no mismatched noise scale can be passed by hand) and returns a
:class:`~pystanprivacy.sampling.posterior.Posterior` with draws of ``theta`` that carries the
release's record. A release may hold R independent data sets (values of shape (R, d)); one Stan
run then fits all R posteriors (the joint target is their product, so each component is exact).
``model.fit_nonprivate(x)`` is the named non-private baseline: the exact conjugate posterior
(:class:`ConjugatePosterior`, closed form) marked ``"non-private"``.

The paper's own Gibbs sampler, the naive conjugate posteriors and OPS live in
:mod:`pystanprivacy.experiments.bernstein2018.baselines`.

Default priors are those of the paper's experiments (its public code): Beta(10, 10),
Dirichlet(5, 5, 5) and Gamma(shape 8, rate 2).

References
----------
.. [1] G. Bernstein and D. Sheldon (2018), "Differentially Private Bayesian Inference for
   Exponential Families", NeurIPS. Sec. 3.1 (release of noisy sufficient statistics),
   Sec. 3.2 (CLT, Eq. 1; Laplace scale mixture), Sec. 3.3 (truncation, sensitivity bound,
   Prop. 1, Lemma 1), Sec. 4 (models and priors).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from scipy import special, stats

from .._validation import (
    SeedLike,
    check_array,
    check_choice,
    check_epsilon,
    check_int,
    check_positive,
    check_random_state,
    check_real,
)
from ..privacy.mechanisms import Laplace
from ..privacy.records import PrivacyAccountant, Release
from ..sampling.posterior import Posterior
from .base import NONPRIVATE, Example, Model, check_release_matches_record, published_laplace_record, with_record

__all__ = [
    "BinomialBeta",
    "BinomialBetaExact",
    "MultinomialDirichlet",
    "ExponentialGamma",
    "ConjugatePosterior",
    "prior_predictive_bounds",
    "exponential_sensitivity",
    "normal_laplace_logpdf",
    "truncated_exponential_moments",
    "rs_clt_exponential",
    "REFERENCE",
]

REFERENCE = "Bernstein & Sheldon 2018"
_REL_TOL = 1e-9
#: chains of a fit unless given
_CHAINS = 4
_GRID_TOL = 2.0**-19


def _close(a: float | None, b: float) -> bool:
    return a is not None and math.isclose(float(a), float(b), rel_tol=_REL_TOL, abs_tol=0.0)


# ------------------------------------------------------------------ numpy versions of the math
def normal_laplace_logpdf(y: Any, mu: Any, sigma: Any, b: Any) -> np.ndarray:
    """log ∫ N(s; μ, σ²) Laplace(y; s, b) ds in closed form (numpy twin of the Stan function
    ``normal_laplace_lpdf``): with z = (y − μ)/σ and r = σ/b,
    −log 2b + r²/2 + logaddexp(−zr + log Φ(z − r), zr + log Φ(−z − r)); σ = 0 gives the
    Laplace density."""
    y, mu, sigma, b = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (y, mu, sigma, b)))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = sigma / b
        z = (y - mu) / sigma
        out = (
            -np.log(2.0 * b)
            + 0.5 * r * r
            + np.logaddexp(-z * r + special.log_ndtr(z - r), z * r + special.log_ndtr(-z - r))
        )
    return np.where(sigma == 0, -np.log(2.0 * b) - np.abs(y - mu) / b, out)


def truncated_exponential_moments(theta: Any, v: float, w: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of Exponential(rate θ) truncated to [v, w], 0 ≤ v < w ≤ inf:
    Lemma 1 (Eq. 3-4) in closed form, mean = v + d h(θd), var = d² g(θd), d = w − v,
    h(x) = 1/x − 1/expm1(x), g(x) = 1/x² − 1/(4 sinh²(x/2)); Taylor series for θd < 0.1
    (where both cancel), the untruncated tail moments for θd > 50 or w = inf."""
    theta = np.asarray(theta, dtype=float)
    v, w = float(v), float(w)
    if math.isinf(w):
        return v + 1.0 / theta, 1.0 / theta**2
    d = w - v
    x = theta * d
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        h = np.array(1.0 / x - 1.0 / np.expm1(x), dtype=float)
        g = np.array(1.0 / x**2 - 0.25 / np.sinh(0.5 * x) ** 2, dtype=float)
    small = x < 0.1
    if np.any(small):
        xs = x[small]
        x2 = xs * xs
        h[small] = 0.5 - xs / 12 + xs * x2 / 720 - xs * x2**2 / 30240 + xs * x2**3 / 1209600
        g[small] = 1.0 / 12 - x2 / 240 + x2**2 / 6048 - 7 * x2**3 / 1209600
    large = x > 50.0
    if np.any(large):
        h[large] = 1.0 / x[large]
        g[large] = 1.0 / x[large] ** 2
    return v + d * h, d * d * g


def rs_clt_exponential(theta: Any, n: float, v: float, w: float) -> tuple[np.ndarray, np.ndarray]:
    """RS-CLT (Algorithm 3, Prop. 1) for the sum of the records of n iid Exponential(θ) that
    fall in [v, w]: q = e^(−θv) − e^(−θw), m = n q μ̂, V = n q Σ̂ + n q (1 − q) μ̂²."""
    theta = np.asarray(theta, dtype=float)
    v, w = float(v), float(w)
    mu, var = truncated_exponential_moments(theta, v, w)
    if math.isinf(w):
        q = np.exp(-theta * v)
        one_minus_q = -np.expm1(-theta * v)
    else:
        q = np.exp(-theta * v) * -np.expm1(-theta * (w - v))
        one_minus_q = -np.expm1(-theta * v) + np.exp(-theta * w)
    return n * q * mu, n * q * (var + one_minus_q * mu**2)


@dataclasses.dataclass(eq=False)
class ConjugatePosterior:
    """Closed-form posteriors of R data sets: ``family`` beta (params α, β), dirichlet
    (params α_1..α_K) or gamma (params shape, rate); ``params`` has shape (R, p).

    ``privacy`` says what guarantee it carries, as
    :attr:`pystanprivacy.sampling.posterior.Posterior.privacy` does: ``"non-private"`` for the
    exact posterior of a model's ``fit_nonprivate``; ``None`` when nobody said (e.g. the
    naive baseline's conjugate update of a release's values)."""

    family: str
    params: np.ndarray
    label: str = ""
    privacy: dict[str, Any] | str | None = None

    def __post_init__(self) -> None:
        if self.family not in ("beta", "dirichlet", "gamma"):
            raise ValueError(f"family must be 'beta', 'dirichlet' or 'gamma', got {self.family!r}")
        params = np.atleast_2d(np.asarray(self.params, dtype=float))
        if not np.all(np.isfinite(params)) or np.any(params <= 0):
            raise ValueError("params must be finite and > 0")
        self.params = params

    @property
    def size(self) -> int:
        """Number of data sets R."""
        return self.params.shape[0]

    def marginal(self, component: int = 0):
        """Frozen scipy distribution of the posterior marginal (of ``component`` for the
        Dirichlet: Beta(α_k, Σα − α_k)), vectorised over the R data sets."""
        p = self.params
        if self.family == "beta":
            return stats.beta(p[:, 0], p[:, 1])
        if self.family == "gamma":
            return stats.gamma(p[:, 0], scale=1.0 / p[:, 1])
        k = check_int(component, "component", minimum=0)
        if k >= p.shape[1]:
            raise ValueError(f"component must be < K={p.shape[1]}, got {component!r}")
        return stats.beta(p[:, k], p.sum(axis=1) - p[:, k])  # Dirichlet marginal

    def cdf(self, theta: Any, component: int = 0) -> np.ndarray:
        """Posterior CDF at ``theta`` (R,) per data set (marginal of ``component`` for the
        Dirichlet): the exact posterior quantile of a value."""
        return self.marginal(component).cdf(np.asarray(theta, dtype=float))

    def mean(self) -> np.ndarray:
        """Posterior means, (R,) or (R, K)."""
        p = self.params
        if self.family == "beta":
            return p[:, 0] / p.sum(axis=1)
        if self.family == "gamma":
            return p[:, 0] / p[:, 1]
        return p / p.sum(axis=1, keepdims=True)

    def sample(self, draws: int, seed: SeedLike = None) -> np.ndarray:
        """``draws`` iid draws per data set: (R, draws) or (R, draws, K)."""
        draws = check_int(draws, "draws", minimum=1)
        rng = check_random_state(seed)
        p = self.params
        if self.family == "beta":
            return rng.beta(p[:, :1], p[:, 1:2], size=(self.size, draws))
        if self.family == "gamma":
            return rng.gamma(p[:, :1], 1.0 / p[:, 1:2], size=(self.size, draws))
        g = rng.standard_gamma(np.broadcast_to(p[:, None, :], (self.size, draws, p.shape[1])))
        return g / g.sum(axis=2, keepdims=True)


def simulate_statistics(kind: str, n: int, datasets: int, seed: int) -> tuple[np.ndarray, dict[str, Any]]:
    """Exact sufficient statistics of ``datasets`` simulated data sets of ``n`` records each,
    and the parameters that generated them (the examples' data, also the benchmarks').

    ``kind``: ``"binomial"`` (theta ~ Beta(10, 10), s = number of ones), ``"multinomial"``
    (theta ~ Dirichlet(5, 5, 5), s = counts of the 3 categories) or ``"exponential"``
    (theta ~ Gamma(8, rate 2), s = sum of the records inside the default bounds of
    :class:`ExponentialGamma`, simulated exactly in chunks of 1e6 records).
    """
    kind = check_choice(kind, "kind", ("binomial", "multinomial", "exponential"))
    n = check_int(n, "n", minimum=1)
    datasets = check_int(datasets, "datasets", minimum=1)
    rng = np.random.default_rng(seed)
    if kind == "binomial":
        theta = rng.beta(10, 10, size=datasets)
        return rng.binomial(n, theta), {"theta": theta}
    if kind == "multinomial":
        theta = rng.dirichlet([5, 5, 5], size=datasets)
        return rng.multinomial(n, theta), {"theta": theta}
    theta = rng.gamma(8, 0.5, size=datasets)
    s = np.zeros(datasets)
    a, b = ExponentialGamma().bounds
    for i in range(datasets):
        left = n
        while left:
            k = min(left, 1_000_000)
            x = rng.exponential(1 / theta[i], size=k)
            s[i] += x[(x >= a) & (x <= b)].sum()
            left -= k
    return s, {"theta": theta}


class _declared_classmethod(classmethod):
    """A classmethod for the operations that need a model's declared bounds (``release``,
    ``release_statistics``, ``published``).

    Called on the class, the declared bounds are keyword arguments named in the class's
    ``_declared`` (``ExponentialGamma.release(x, epsilon=1.0, bounds=(0.0, 5.0))``; omitted:
    those of ``cls()``); called on a model, they are that model's
    (``ExponentialGamma(bounds=(0.0, 5.0)).release(x, epsilon=1.0)``), and giving them again
    is a ``TypeError``. The wrapped function receives the configured model as its first
    argument. ``inspect.getattr_static(cls, name)`` is a :class:`classmethod`.
    """

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        cls = type(instance) if owner is None else owner
        func = self.__func__

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            declared = {k: kwargs.pop(k) for k in cls._declared if k in kwargs}
            if instance is None:
                return func(cls._configured(**declared), *args, **kwargs)
            if declared:
                raise TypeError(
                    f"{cls.__name__}.{func.__name__}: {', '.join(sorted(declared))} is declared by the model "
                    f"this was called on; call {cls.__name__}.{func.__name__}(..., {next(iter(declared))}=...) "
                    "on the class to give other bounds"
                )
            return func(instance, *args, **kwargs)

        return call


class _NoiseAwareModel(Model):
    """Shared release/fit logic; subclasses define the statistic, its family and the Stan data.

    ``release``, ``release_statistics`` and ``published`` are classmethods (see
    :class:`_declared_classmethod`): on the class they take the declared bounds as keyword
    arguments (:attr:`_declared`), on a model they use the model's.
    """

    statistic: ClassVar[str] = ""
    #: equations of the paper behind the release (written into the record)
    equations: ClassVar[str] = ""
    #: whether the statistic is integer (counts): without a seed it then gets discrete
    #: Laplace noise on the integers, with which the continuous Laplace likelihood is exact
    #: up to a constant (pystanprivacy.privacy.noise); real statistics go through the grid
    integer_statistic: ClassVar[bool] = False
    #: the conjugate family of the exact posterior: "beta", "dirichlet" or "gamma"
    family: ClassVar[str] = ""
    #: keyword arguments of a class-level release that declare the bounds (see _configured)
    _declared: ClassVar[tuple[str, ...]] = ()

    def __init__(self, backend: str | None) -> None:
        self.backend = backend

    @classmethod
    def _configured(cls, **declared: Any) -> _NoiseAwareModel:
        """The model whose declared bounds a class-level release uses (the prior plays no part
        in a release)."""
        return cls(**declared)

    #: what :func:`simulate_statistics` simulates for this model
    _example_kind: ClassVar[str] = ""

    @classmethod
    def example(cls, n: int = 100, *, seed: int = 0) -> Example:
        """The exact statistics ``s`` of one simulated data set of ``n`` records
        (:func:`simulate_statistics`), released with ``release_statistics`` at ``epsilon = 0.1``
        (:class:`~pystanprivacy.models.base.Example`)."""
        s, truth = simulate_statistics(cls._example_kind, n, 1, seed)
        return Example(cls(), {"s": s}, {"n": n, "epsilon": 0.1}, "s", truth=truth, method="release_statistics")

    # ------------------------------------------------------------------ properties
    @property
    def dim(self) -> int:
        """Number of released statistics per data set."""
        return 1

    @property
    def sensitivity(self) -> float:
        """L1 sensitivity of the statistic, from the declared bounds (never the data)."""
        raise NotImplementedError

    @property
    def data_bounds(self) -> tuple[float, float]:
        """Declared bounds of one record, written into the record."""
        raise NotImplementedError

    def _statistic_range(self, n: int) -> tuple[float, float]:
        """Range of the exact statistic for n records (for checking exact statistics)."""
        raise NotImplementedError

    # -------------------------------------------------------------------- release
    def _check_statistics(self, s: Any, n: int) -> np.ndarray:
        """Exact statistics as (R, d) floats, checked against n (counts never printed)."""
        raise NotImplementedError

    def _statistics(self, x: Any) -> tuple[np.ndarray, int, bool]:
        """The released statistic of records ``x`` (validated): ``(stats (R, d), n, single)``,
        ``single`` when ``x`` held one data set."""
        raise NotImplementedError

    def _release(
        self,
        stats: np.ndarray,
        n: int,
        *,
        epsilon: float,
        accountant: PrivacyAccountant | None,
        seed: SeedLike,
        single: bool,
    ) -> Release:
        mech = Laplace(epsilon=epsilon, sensitivity=self.sensitivity, seed=seed)
        # R data sets of different people: parallel composition, the accountant pays ε once
        raw = mech.release(
            np.rint(stats).astype(np.int64) if self.integer_statistic else stats,
            accountant=accountant,
            n=n,
            bounds=self.data_bounds,
            label=f"{self.statistic} ({REFERENCE})",
        )
        details = dict(raw.record.details)
        details.update(self._record_details(n, stats.shape[0]))
        record = dataclasses.replace(raw.record, details=details)
        values = raw.values[0] if single else raw.values
        return Release(values=values, record=record)

    def _record_details(self, n: int, datasets: int) -> dict[str, Any]:
        lo, hi = self._statistic_range(n)
        return {
            "statistic": self.statistic,
            "statistic_range": [lo, hi],
            "dim": self.dim,
            "projection": "none",
            "datasets": datasets,
            "model": self.model_name,
            "reference": f"{REFERENCE}, {self.equations}",
        }

    @_declared_classmethod
    def release(
        self,
        x: Any,
        *,
        epsilon: float,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
    ) -> Release:
        """Laplace release of the sufficient statistic of records ``x`` of shape (n,) (one
        data set) or (R, n) (R data sets of different people: each release is ε-DP for its own
        data and the accountant is charged ε once, by parallel composition). Values: (d,) or
        (R, d). The statistic and its bounds are the model's (see the class). Seeds give
        reproducibility, not security: use ``seed=None`` for a real release."""
        stats, n, single = self._statistics(x)
        epsilon = check_epsilon(epsilon)
        return self._release(stats, n, epsilon=epsilon, accountant=accountant, seed=seed, single=single)

    @_declared_classmethod
    def release_statistics(
        self,
        s: Any,
        *,
        n: int,
        epsilon: float,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
    ) -> Release:
        """Laplace release of exact sufficient statistics ``s`` of ``n`` records each.

        ``s`` has shape (d,) for one data set or (R, d) for R independent data sets (for the
        univariate models d = 1 and a scalar or an (R,) array is accepted too). The values
        are checked against ``n`` (without printing them); the noisy values are not
        projected, because the noise-aware likelihood is that of the raw Laplace output.
        """
        n = check_int(n, "n", minimum=1)
        epsilon = check_epsilon(epsilon)
        stats = self._check_statistics(s, n)
        single = np.ndim(s) <= 1 and (self.dim > 1 or np.ndim(s) == 0)
        return self._release(stats, n, epsilon=epsilon, accountant=accountant, seed=seed, single=single)

    @_declared_classmethod
    def published(self, y: Any, *, n: int, epsilon: float) -> Release:
        """Wrap noisy statistics released by someone else with this model's mechanism
        (Laplace, this model's sensitivity and bounds, ``n`` records, ``epsilon``) as a
        :class:`Release`, so that :meth:`fit` can use them; nothing is charged. ``y``: (d,) or
        (R, d) with R >= 1 (an empty ``y`` is a ``ValueError`` naming it)."""
        n = check_int(n, "n", minimum=1)
        epsilon = self._servable_epsilon(epsilon)
        arr = check_array(y, "y", ndim=(0, 1, 2), kinds="iuf")
        values = self._shape_values(arr, "y")
        record = published_laplace_record(
            epsilon=epsilon,
            sensitivity=self.sensitivity,
            n=n,
            bounds=self.data_bounds,
            details=self._record_details(n, values.shape[0]),
        )
        return Release(values=arr if arr.ndim else arr.reshape(1), record=record)

    def _servable_epsilon(self, epsilon: Any) -> float:
        """``epsilon`` checked as :meth:`release` checks it: a positive finite float whose
        Laplace scale ``sensitivity / epsilon`` this model's mechanism can serve (the
        :class:`~pystanprivacy.privacy.mechanisms.Laplace` range, no wider), else a
        ``ValueError`` naming ``epsilon``. Public values only; no noise is drawn."""
        epsilon = check_epsilon(epsilon)
        try:
            Laplace(epsilon=epsilon, sensitivity=self.sensitivity, seed=0)
        except ValueError as exc:
            raise ValueError(
                f"epsilon={epsilon!r} is too small for {type(self).__name__} (the range of its own release): {exc}"
            ) from None
        return epsilon

    def _shape_values(self, arr: np.ndarray, name: str) -> np.ndarray:
        """Released values as (R, d); wrong lengths raise naming ``name``."""
        d = self.dim
        want = "a scalar, (R,) or (R, 1)" if d == 1 else f"({d},) or (R, {d})"
        if d == 1 and arr.ndim <= 1:
            out = arr.reshape(-1, 1)
        elif arr.ndim == 2 and arr.shape[1] == d:
            out = arr
        elif arr.ndim == 1 and arr.shape[0] == d:
            out = arr.reshape(1, d)
        else:
            raise ValueError(f"{name} must have shape {want} for {type(self).__name__}, got shape {arr.shape}")
        if out.shape[0] == 0:  # R = 0 data sets: nothing to release or fit
            raise ValueError(
                f"{name} must hold at least one data set (shape {want}, R >= 1) for "
                f"{type(self).__name__}, got shape {arr.shape}"
            )
        return out

    # -------------------------------------------------------------------- fitting
    def check_release(self, release: Release) -> tuple[np.ndarray, int, float, float]:
        """Validate that ``release`` was made by this model's mechanism.

        Returns ``(values (R, d), n, scale, epsilon)``; raises ``TypeError`` for a non-Release
        and ``ValueError`` naming the mismatched field otherwise.
        """
        if not isinstance(release, Release):
            raise TypeError(
                f"release must be a Release made by {type(self).__name__}.release, got {type(release).__name__}"
            )
        rec = release.record
        name = type(self).__name__
        if rec.mechanism != "laplace" or rec.details.get("statistic") != self.statistic:
            raise ValueError(
                f"release must be a Laplace release of the {self.statistic} (made by {name}.release); "
                f"got mechanism={rec.mechanism!r}, statistic={rec.details.get('statistic')!r}"
            )
        if not _close(rec.sensitivity, self.sensitivity):
            raise ValueError(
                f"release sensitivity={rec.sensitivity!r} does not match this model's sensitivity "
                f"{self.sensitivity!r} (from its declared bounds {self.data_bounds})"
            )
        if rec.bounds is None or not (
            _close(rec.bounds[0], self.data_bounds[0]) and _close(rec.bounds[1], self.data_bounds[1])
        ):
            raise ValueError(f"release bounds={rec.bounds!r} do not match this model's bounds {self.data_bounds}")
        nominal = self.sensitivity / rec.epsilon
        # the likelihood uses rec.scale; a release without a seed may add up to a relative
        # 2^-19 more noise than sensitivity/epsilon (the grid's rounding allowance, noise.py)
        if rec.scale is None or not (nominal * (1 - _REL_TOL) <= rec.scale <= nominal * (1 + _GRID_TOL)):
            raise ValueError(
                f"release scale={rec.scale!r} is not sensitivity/epsilon = {nominal!r} "
                "(up to the grid allowance of discrete noise)"
            )
        if rec.n is None:
            raise ValueError("release record has no n (the public number of records); the model needs it")
        declared = rec.details.get("statistic_range")
        if declared is not None:
            lo, hi = self._statistic_range(rec.n)
            if not (_close(declared[1], hi) and float(declared[0]) == lo):
                raise ValueError(
                    f"release record is inconsistent: n={rec.n} implies the statistic range "
                    f"[{lo:g}, {hi:g}], but the record declares [{declared[0]:g}, {declared[1]:g}]"
                )
        # numbers only (a forged string array is refused, never coerced), finite, R >= 1 data sets
        values = self._shape_values(check_array(release.values, "release values", kinds="iuf"), "release values")
        # as many data sets as the record states (R rows of d statistics)
        check_release_matches_record(release, values, model=name, datasets_axis=0)
        return values, int(rec.n), float(rec.scale), float(rec.epsilon)

    def data(self, release: Release) -> dict[str, Any]:
        """The Stan data of ``release`` (only privatised values and public constants)."""
        raise NotImplementedError

    def fit(
        self,
        release: Release,
        *,
        chains: int = _CHAINS,
        warmup: int = 1000,
        draws: int = 1000,
        seed: SeedLike = None,
        **sample_kwargs: Any,
    ) -> Posterior:
        """Noise-aware posterior p(θ | y) (post-processing of the release: ε-DP); it carries
        the release's record (``posterior.privacy``).

        One Stan run covers every data set of the release: ``theta`` has one entry (one
        simplex for the multinomial) per data set. Further keyword arguments go to
        :meth:`pystanprivacy.sampling.stan.StanModel.sample`.
        """
        data = self.data(release)
        post = self.stan_model.sample(data, chains=chains, warmup=warmup, draws=draws, seed=seed, **sample_kwargs)
        return with_record(post, release.record)

    # ----------------------------------------------------------- non-private baseline
    def conjugate_parameters(self, s: Any, n: int) -> np.ndarray:
        """Parameters (R, p) of the exact conjugate posterior for exact statistics ``s``."""
        raise NotImplementedError

    def conjugate_posterior(self, s: Any, n: int, *, label: str = "") -> ConjugatePosterior:
        """The conjugate update (Sec. 3) of this model's prior with statistics ``s`` of ``n``
        records each, in closed form. With exact statistics it is the exact posterior; the
        naive baseline passes noisy ones."""
        return ConjugatePosterior(self.family, self.conjugate_parameters(s, n), label=label)

    def _full_statistics(self, x: Any) -> tuple[np.ndarray, int, bool]:
        """The exact sufficient statistic of records ``x`` (no truncation: nothing is released)."""
        return self._statistics(x)

    def _check_full_statistics(self, statistics: Any, n: int) -> np.ndarray:
        return self._check_statistics(statistics, n)  # counts checked against n

    def fit_nonprivate(self, x: Any = None, *, statistics: Any = None, n: int | None = None) -> ConjugatePosterior:
        """Named NON-PRIVATE baseline: the exact posterior given the raw records ``x`` (shape
        (n,) or (R, n), as for :meth:`release`), or given their exact sufficient
        ``statistics`` with ``n`` records each (binomial counts (R,), multinomial counts (R, K)
        summing to n, exponential *full* sums (R,)). No noise, so the conjugate update is exact
        and in closed form: a :class:`ConjugatePosterior` marked ``privacy == "non-private"``.
        For comparisons only.
        """
        if (x is None) == (statistics is None):
            raise TypeError(
                "fit_nonprivate takes either x (the raw records) or statistics (their exact "
                "sufficient statistics, with n)"
            )
        if x is not None:
            if n is not None:
                raise TypeError(
                    f"n is the number of records of x (its last axis); give n only with statistics, got n={n!r}"
                )
            s, n, _ = self._full_statistics(x)
        else:
            n = check_int(n, "n", minimum=1)
            s = self._check_full_statistics(statistics, n)
        return with_record(self.conjugate_posterior(s, n, label="non-private"), NONPRIVATE)


def _check_nonempty(arr: np.ndarray, name: str = "x") -> np.ndarray:
    """``arr`` of shape (n,) or (R, n) with n >= 1 records and R >= 1 data sets."""
    if arr.size == 0:
        raise ValueError(
            f"{name} must hold at least one record (and, for shape (R, n), at least one data "
            f"set), got shape {arr.shape}"
        )
    return arr


def _check_binary(x: Any) -> np.ndarray:
    return _check_nonempty(check_array(x, "x", ndim=(1, 2), kinds="biuf", bounds=(0, 1), integer=True))


def _check_exponential(x: Any) -> np.ndarray:
    """Exponential records ``x`` >= 0 of shape (n,) or (R, n) (the count of negative values,
    not the values, in the message)."""
    arr = _check_nonempty(check_array(x, "x", ndim=(1, 2), kinds="biuf"))
    if np.any(arr < 0):
        raise ValueError(f"x must be >= 0 (exponential data); {int(np.count_nonzero(arr < 0))} value(s) are negative")
    return arr


class BinomialBeta(_NoiseAwareModel):
    """Noise-aware beta-binomial posterior, CLT with the noise marginalised in closed form.

    y = s + Laplace(1/ε) with s = Σ x_i, x_i ∈ {0, 1} (L1 sensitivity 1, Sec. 3.1);
    s | θ ≈ N(nθ, nθ(1 − θ)) (Eq. 1); y | θ is then normal-Laplace (closed form), so a fit
    costs the same for every n. For moderate n, :class:`BinomialBetaExact` sums the binomial
    exactly.

    Parameters
    ----------
    prior_alpha, prior_beta : float, default 10.0
        Beta prior (the paper's experiments use Beta(10, 10)).
    backend : str, optional
        Stan backend (see :func:`pystanprivacy.sampling.backends.select_backend`).

    Examples
    --------
    >>> model = BinomialBeta()
    >>> rel = BinomialBeta.release(x, epsilon=0.1)   # doctest: +SKIP
    >>> post = model.fit(rel)                          # doctest: +SKIP
    >>> post.draws("theta")                            # doctest: +SKIP
    """

    _example_kind = "binomial"

    model_name = "bernstein2018/binomial_beta"
    statistic = "binomial count s = sum(x)"
    equations = "Sec. 3.1-3.2, Eq. 1"
    family = "beta"

    def __init__(self, *, prior_alpha: float = 10.0, prior_beta: float = 10.0, backend: str | None = None) -> None:
        super().__init__(backend)
        self.prior_alpha = check_positive(prior_alpha, "prior_alpha")
        self.prior_beta = check_positive(prior_beta, "prior_beta")

    integer_statistic = True

    @property
    def sensitivity(self) -> float:
        return 1.0

    @property
    def data_bounds(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def _statistic_range(self, n: int) -> tuple[float, float]:
        return (0.0, float(n))

    def _check_statistics(self, s: Any, n: int) -> np.ndarray:
        arr = check_array(s, "s", ndim=(0, 1, 2), kinds="biuf", integer=True)
        if np.any(arr < 0):
            raise ValueError("s must hold counts >= 0 (negative counts given)")
        if np.any(arr > n):
            raise ValueError(f"s is inconsistent with n={n}: a count of ones cannot exceed n")
        return self._shape_values(arr.astype(float), "s")

    def _statistics(self, x: Any) -> tuple[np.ndarray, int, bool]:
        """s = Σ x_i per data set for binary records ``x`` of shape (n,) or (R, n)."""
        arr = _check_binary(x)
        return np.atleast_2d(arr).sum(axis=1, dtype=float)[:, None], int(arr.shape[-1]), arr.ndim == 1

    def data(self, release: Release) -> dict[str, Any]:
        values, n, scale, _ = self.check_release(release)
        return {
            "R": values.shape[0],
            "n": n,
            "y": values[:, 0],
            "scale": scale,
            "prior_alpha": self.prior_alpha,
            "prior_beta": self.prior_beta,
        }

    def conjugate_parameters(self, s: Any, n: int) -> np.ndarray:
        """Beta(α + s, β + n − s) parameters (R, 2) for statistics ``s`` in [0, n] (the
        conjugate update of the paper, Sec. 3; used by the non-private and naive baselines)."""
        s = np.asarray(s, dtype=float).reshape(-1)
        return np.stack([self.prior_alpha + s, self.prior_beta + n - s], axis=1)


class BinomialBetaExact(BinomialBeta):
    """Exact noise-aware beta-binomial posterior: Σ_{s=0..n} Binomial(s; n, θ) Laplace(y; s, 1/ε).

    Same release as :class:`BinomialBeta` (a release of one is accepted by the other); one
    gradient costs O(n), so this is for moderate n (≲ 1e4) and as the reference for the CLT.
    """

    model_name = "bernstein2018/binomial_beta_exact"
    equations = "Sec. 3.2 (exact p(s | theta))"

    def data(self, release: Release) -> dict[str, Any]:
        data = super().data(release)
        if data["n"] > 100_000:
            raise ValueError(
                f"BinomialBetaExact costs O(n) per gradient; n={data['n']} is too large (at most "
                "100000): use BinomialBeta (CLT), whose cost does not depend on n"
            )
        return data


class MultinomialDirichlet(_NoiseAwareModel):
    """Noise-aware Dirichlet-multinomial posterior from K Laplace-privatised counts.

    y_k = s_k + Laplace(2/ε) independently for every category (L1 sensitivity 2 under
    replace-one with n public); s | θ ≈ N(nθ, n(diag θ − θθᵀ)) (singular CLT, K − 1 free
    components), the noise as an exact scale mixture of normals, the counts marginalised.

    Parameters
    ----------
    prior_alpha : sequence of float, default (5, 5, 5)
        Dirichlet prior; its length is the number of categories K ≥ 2.
    backend : str, optional

    Notes
    -----
    A class-level release declares K: ``MultinomialDirichlet.release(x, epsilon=0.1, K=4)``
    (default 3); a model's release uses its own K.
    """

    _example_kind = "multinomial"

    model_name = "bernstein2018/multinomial_dirichlet"
    statistic = "multinomial category counts"
    equations = "Sec. 3.1-3.2, Eq. 1"
    family = "dirichlet"
    _declared = ("K",)

    def __init__(self, *, prior_alpha: Any = (5.0, 5.0, 5.0), backend: str | None = None) -> None:
        super().__init__(backend)
        alpha = check_array(prior_alpha, "prior_alpha", ndim=1, kinds="iuf")
        if alpha.shape[0] < 2 or np.any(alpha <= 0):
            raise ValueError(f"prior_alpha must hold K >= 2 positive numbers, got {np.asarray(prior_alpha).tolist()!r}")
        self.prior_alpha = alpha

    @classmethod
    def _configured(cls, K: int = 3) -> MultinomialDirichlet:
        """The model of a class-level release with ``K`` categories (records in {0, …, K − 1});
        the prior plays no part in a release."""
        return cls(prior_alpha=np.full(check_int(K, "K", minimum=2), 5.0))

    @property
    def K(self) -> int:
        """Number of categories."""
        return int(self.prior_alpha.shape[0])

    @property
    def dim(self) -> int:
        return self.K

    integer_statistic = True

    @property
    def sensitivity(self) -> float:
        return 2.0

    @property
    def data_bounds(self) -> tuple[float, float]:
        return (0.0, float(self.K - 1))

    def _statistic_range(self, n: int) -> tuple[float, float]:
        return (0.0, float(n))

    def _check_statistics(self, s: Any, n: int) -> np.ndarray:
        arr = check_array(s, "s", ndim=(1, 2), kinds="biuf", integer=True)
        counts = self._shape_values(arr.astype(float), "s")
        if np.any(counts < 0):
            raise ValueError("s must hold counts >= 0 (negative counts given)")
        bad = int(np.count_nonzero(counts.sum(axis=1) != n))
        if bad:
            raise ValueError(f"s is inconsistent with n={n}: the counts of {bad} data set(s) do not sum to n")
        return counts

    def _statistics(self, x: Any) -> tuple[np.ndarray, int, bool]:
        """The K category counts per data set for categorical records ``x`` ∈ {0, …, K − 1}
        of shape (n,) or (R, n)."""
        arr = _check_nonempty(check_array(x, "x", ndim=(1, 2), kinds="biuf", bounds=(0, self.K - 1), integer=True))
        counts = np.stack([np.bincount(r, minlength=self.K) for r in np.atleast_2d(arr)]).astype(float)
        return counts, int(arr.shape[-1]), arr.ndim == 1

    def data(self, release: Release) -> dict[str, Any]:
        """Stan data: the release, public constants, and the affine conditioning of the
        log-ratio parameters (``eta_loc``, ``eta_scale``: location and rough posterior sd of
        log(θ_k/θ_K) from the smoothed, projected noisy counts -- post-processing of the
        release). They do not change the posterior, only keep NUTS's unconstrained
        parameters O(1) for every n."""
        from ..privacy.mechanisms import project_simplex

        values, n, scale, _ = self.check_release(release)
        a0 = float(self.prior_alpha.sum())
        theta = (self.prior_alpha[None, :] + project_simplex(values, total=float(n))) / (a0 + n)
        prior_var = theta * (1 - theta) / (a0 + 1)
        data_var = theta * (1 - theta) / (a0 + n) + 2.0 * scale**2 / float(n) ** 2
        var = np.minimum(prior_var, data_var)
        log_ratio_sd = np.sqrt(var[:, :-1] / theta[:, :-1] ** 2 + var[:, -1:] / theta[:, -1:] ** 2)
        return {
            "R": values.shape[0],
            "K": self.K,
            "n": n,
            "y": values,
            "scale": scale,
            "prior_alpha": self.prior_alpha,
            "eta_loc": np.log(theta[:, :-1]) - np.log(theta[:, -1:]),
            "eta_scale": log_ratio_sd,
        }

    def conjugate_parameters(self, s: Any, n: int) -> np.ndarray:
        """Dirichlet(α + s) parameters (R, K) for counts ``s`` summing to n."""
        s = np.asarray(s, dtype=float).reshape(-1, self.K)
        return self.prior_alpha[None, :] + s


def prior_predictive_bounds(prior_shape: float, prior_rate: float, coverage: float = 0.95) -> tuple[float, float]:
    """Central ``coverage`` interval of the prior predictive of one exponential record.

    With θ ~ Gamma(shape α, rate β) and x | θ ~ Exponential(θ), x is Lomax: P(x > t) =
    (β / (β + t))^α, so the q-quantile is β((1 − q)^(−1/α) − 1). This chooses truncation
    bounds "that keep the middle 95% of individuals" (Sec. 4) from public prior knowledge
    alone -- never from the data or the true θ (the paper's public code used the true θ).
    """
    a = check_positive(prior_shape, "prior_shape")
    b = check_positive(prior_rate, "prior_rate")
    c = check_real(coverage, "coverage")
    if not 0.0 < c < 1.0:
        raise ValueError(f"coverage must be in (0, 1), got {coverage!r}")
    tail = (1.0 - c) / 2.0

    def quantile(q: float) -> float:
        return b * math.expm1(-math.log1p(-q) / a)

    return quantile(tail), quantile(1.0 - tail)


def exponential_sensitivity(bounds: tuple[float, float]) -> float:
    """L1 sensitivity of the truncated sum Σ x_i 1[a ≤ x_i ≤ b] (Sec. 3.3 bound):
    max(max_{x∈[a,b]} |x|, b − a) = b for 0 ≤ a < b."""
    a, b = _check_exp_bounds(bounds)
    return max(abs(a), abs(b), b - a)


def _check_exp_bounds(bounds: Any) -> tuple[float, float]:
    # a sequence or array, as check_bounds requires (a set or a dict has no order)
    if (
        isinstance(bounds, (str, bytes))
        or not isinstance(bounds, (Sequence, np.ndarray))
        or (isinstance(bounds, np.ndarray) and bounds.ndim != 1)
        or len(bounds) != 2
    ):
        raise TypeError(f"bounds must be a pair (a, b) of finite numbers with 0 <= a < b, got {bounds!r}")
    a = check_real(bounds[0], "bounds[0]")
    b = check_real(bounds[1], "bounds[1]")
    if not (math.isfinite(a) and math.isfinite(b) and 0.0 <= a < b):
        raise ValueError(f"bounds must be finite with 0 <= a < b, got {tuple(bounds)!r}")
    return a, b


class ExponentialGamma(_NoiseAwareModel):
    """Noise-aware gamma-exponential posterior from the noisy truncated sum (Sec. 3.3).

    Records outside the public bounds [a, b] are dropped; ŝ = Σ x_i 1[a ≤ x_i ≤ b] has L1
    sensitivity b (for a ≥ 0; the paper's bound, not b − a) and y = ŝ + Laplace(b/ε). The
    likelihood of θ uses the random-sum CLT (Prop. 1) with the truncated moments of Lemma 1
    (closed form for the exponential), ŝ marginalised in closed form.

    Parameters
    ----------
    bounds : (a, b), optional
        Public truncation bounds, 0 ≤ a < b. Default: the central 95% interval of the prior
        predictive (:func:`prior_predictive_bounds`), chosen without the data.
    prior_shape, prior_rate : float, default 8.0, 2.0
        Gamma prior on the rate θ (the paper's experiments use Gamma(8, 2)).
    backend : str, optional

    Notes
    -----
    A class-level release declares the bounds: ``ExponentialGamma.release(x, epsilon=1.0,
    bounds=(a, b))`` (default: those of ``ExponentialGamma()``); a model's release uses its own.
    """

    _example_kind = "exponential"

    model_name = "bernstein2018/exponential_gamma"
    statistic = "truncated sum of x in [a, b]"
    equations = "Sec. 3.3, Prop. 1, Lemma 1"
    family = "gamma"
    _declared = ("bounds",)

    def __init__(
        self,
        *,
        bounds: tuple[float, float] | None = None,
        prior_shape: float = 8.0,
        prior_rate: float = 2.0,
        backend: str | None = None,
    ) -> None:
        super().__init__(backend)
        self.prior_shape = check_positive(prior_shape, "prior_shape")
        self.prior_rate = check_positive(prior_rate, "prior_rate")
        if bounds is None:
            bounds = prior_predictive_bounds(self.prior_shape, self.prior_rate, 0.95)
            self.bounds_source = "central 95% interval of the prior predictive (Lomax)"
        else:
            self.bounds_source = "given by the user"
        self.bounds = _check_exp_bounds(bounds)

    @classmethod
    def _configured(cls, bounds: tuple[float, float] | None = None) -> ExponentialGamma:
        """The model of a class-level release with truncation ``bounds`` (default: the prior
        predictive's central 95% under the default prior)."""
        return cls(bounds=bounds)

    @property
    def sensitivity(self) -> float:
        return exponential_sensitivity(self.bounds)

    @property
    def data_bounds(self) -> tuple[float, float]:
        return self.bounds

    def _statistic_range(self, n: int) -> tuple[float, float]:
        return (0.0, float(n) * self.bounds[1])

    def _record_details(self, n: int, datasets: int) -> dict[str, Any]:
        out = super()._record_details(n, datasets)
        out.update(
            truncation="records outside [a, b] are dropped from the sum",
            bounds_source=self.bounds_source,
            sensitivity_rule="max(max_[a,b] |x|, b - a) = b for a >= 0 (Sec. 3.3)",
        )
        return out

    def _check_statistics(self, s: Any, n: int) -> np.ndarray:
        arr = check_array(s, "s", ndim=(0, 1, 2), kinds="biuf")
        if np.any(arr < 0) or np.any(arr > n * self.bounds[1]):
            raise ValueError(
                f"s is inconsistent with n={n} and bounds {self.bounds}: a truncated sum lies in "
                f"[0, n*b] = [0, {n * self.bounds[1]:g}]"
            )
        return self._shape_values(arr, "s")

    def truncated_sum(self, x: Any) -> np.ndarray:
        """ŝ = Σ x_i 1[a ≤ x_i ≤ b] per data set, for records ``x`` ≥ 0 of shape (n,) or (R, n)."""
        arr = _check_exponential(x)
        a, b = self.bounds
        rows = np.atleast_2d(arr)
        return np.where((rows >= a) & (rows <= b), rows, 0.0).sum(axis=1)

    def _statistics(self, x: Any) -> tuple[np.ndarray, int, bool]:
        """ŝ per data set (:meth:`truncated_sum`) for records ``x`` ≥ 0 of shape (n,) or (R, n)."""
        s_hat = self.truncated_sum(x)
        shape = np.shape(x)
        return s_hat[:, None], int(shape[-1]), len(shape) == 1

    def _full_statistics(self, x: Any) -> tuple[np.ndarray, int, bool]:
        """The full (untruncated) sum per data set: the exact statistic of the non-private posterior."""
        arr = _check_exponential(x)
        return np.atleast_2d(arr).sum(axis=1)[:, None], int(arr.shape[-1]), arr.ndim == 1

    def _check_full_statistics(self, statistics: Any, n: int) -> np.ndarray:
        s = check_array(statistics, "statistics", ndim=(0, 1), kinds="iuf").reshape(-1)
        if np.any(s < 0):
            raise ValueError("statistics must be >= 0 (sums of exponential records)")
        return s

    def data(self, release: Release) -> dict[str, Any]:
        values, n, scale, _ = self.check_release(release)
        return {
            "R": values.shape[0],
            "n": n,
            "y": values[:, 0],
            "trunc_lower": self.bounds[0],
            "trunc_upper": self.bounds[1],
            "scale": scale,
            "prior_shape": self.prior_shape,
            "prior_rate": self.prior_rate,
        }

    def log_posterior(self, theta: Any, release: Release) -> np.ndarray:
        """Unnormalised log p(θ | y) of every data set at the rates ``theta`` (G,): shape
        (R, G). The numpy twin of the Stan model (Gamma prior, RS-CLT, normal-Laplace)."""
        values, n, scale, _ = self.check_release(release)
        grid = check_array(theta, "theta", ndim=1, kinds="iuf")
        if np.any(grid <= 0):
            raise ValueError("theta must hold rates > 0")
        m, v = rs_clt_exponential(grid, n, *self.bounds)
        log_prior = (self.prior_shape - 1) * np.log(grid) - self.prior_rate * grid
        return log_prior[None, :] + normal_laplace_logpdf(values[:, :1], m[None, :], np.sqrt(v)[None, :], scale)

    def peak_rate(self, n: int = 1) -> float:
        """θ* = argmax_θ E[ŝ | θ]: the expected truncated sum rises for θ < θ* and falls
        after it (few records fall below b when θ is small, and they are small when θ is
        large), so the likelihood of θ can have a second mode on the other side of θ*."""
        grid = np.exp(np.linspace(-12, 12, 24001)) / self.bounds[1]
        m, _ = rs_clt_exponential(grid, n, *self.bounds)
        return float(grid[np.argmax(m)])

    def start_values(
        self, release: Release, *, chains: int = 4, seed: SeedLike = None, grid_size: int = 8001
    ) -> tuple[np.ndarray, np.ndarray]:
        """Starting rates for MCMC and the posterior mass in other, separated modes.

        The log posterior of log θ is evaluated on a log-spaced grid (post-processing of the
        release: no privacy cost). The *basin* of the global mode extends to the deepest
        density valley towards every other local mode that rises at least one e-fold above
        that valley (such valleys come from the non-monotone E[ŝ | θ], see
        :meth:`peak_rate`); a posterior without such a mode has the whole grid as its basin.
        Each chain starts at the global mode, jittered by N(0, (sd/2)²) of the basin's grid
        posterior and kept inside the basin.

        Returns ``(theta0 (chains, R), other_mass (R,))``; ``other_mass`` is the grid
        posterior mass outside the basin -- what a gradient-based sampler started in the
        basin may miss (0 for a unimodal posterior).
        """
        chains = check_int(chains, "chains", minimum=1)
        grid_size = check_int(grid_size, "grid_size", minimum=101)
        rng = check_random_state(seed)
        lo = max(1e-300, float(stats.gamma.ppf(1e-12, self.prior_shape, scale=1 / self.prior_rate)))
        hi = float(stats.gamma.isf(1e-12, self.prior_shape, scale=1 / self.prior_rate))
        grid = np.exp(np.linspace(math.log(lo), math.log(hi), grid_size))
        lp = self.log_posterior(grid, release) + np.log(grid)[None, :]  # density of log θ
        R = lp.shape[0]
        theta0 = np.empty((chains, R))
        other = np.zeros(R)
        for r in range(R):
            row = lp[r]
            top = int(np.argmax(row))
            left, right = 0, grid_size - 1
            inner = row[1:-1]
            peaks = np.flatnonzero((inner > row[:-2]) & (inner >= row[2:]) & (inner > row[top] - 40)) + 1
            for j in peaks:
                if j == top:
                    continue
                span = slice(min(j, top), max(j, top) + 1)
                valley = span.start + int(np.argmin(row[span]))
                if row[j] - row[valley] < 1.0:
                    continue  # a shoulder, not a separate mode
                if j < top:
                    left = max(left, valley)
                else:
                    right = min(right, valley)
            w = np.exp(row - row[top])
            w /= w.sum()
            basin = w[left : right + 1]
            other[r] = max(0.0, 1.0 - float(basin.sum()))
            g = grid[left : right + 1]
            mean = float((basin * g).sum() / basin.sum())
            sd = math.sqrt(max(float((basin * g**2).sum() / basin.sum()) - mean**2, 0.0))
            start = grid[top] + 0.5 * sd * rng.standard_normal(chains)
            theta0[:, r] = np.clip(start, grid[left], grid[right])
        return theta0, other

    def fit(
        self,
        release: Release,
        *,
        seed: SeedLike = None,
        init: Any = None,
        mode_warning: float = 0.01,
        **sample_kwargs: Any,
    ) -> Posterior:
        """Noise-aware posterior p(θ | y) (post-processing of the release: ε-DP), as
        :meth:`BinomialBeta.fit` (``chains``, ``warmup``, ``draws``, ...).

        The likelihood of the truncated sum is not monotone in θ (see :meth:`peak_rate`), so
        p(θ | y) can have a second mode, separated by a density valley, which NUTS crosses only
        now and then: one fit's share of draws in each mode can be far from the posterior's
        (pooled over many fits it matches, ``tests/models/test_bernstein2018_models.py``), and
        chains started in the minor mode may stay there. Unless ``init`` is given, every chain
        starts near the global mode of its data set (:meth:`start_values`), and a ``RuntimeWarning`` says when
        the other mode holds more than ``mode_warning`` of the posterior mass for some data set.
        """
        rng = check_random_state(seed)
        if init is None:
            chains = sample_kwargs.get("chains", _CHAINS)
            theta0, other = self.start_values(release, chains=chains, seed=rng)
            init = [{"theta": theta0[c]} for c in range(theta0.shape[0])]
            big = int(np.count_nonzero(other > mode_warning))
            if big:
                warnings.warn(
                    f"for {big} of {other.size} data set(s) the posterior of theta has more than "
                    f"{mode_warning:g} of its mass (at most {float(other.max()):.3g}) in a second mode "
                    "(the truncated sum cannot tell a small from a large rate; theta*="
                    f"{self.peak_rate(int(release.record.n)):.4g}), which NUTS started in the main "
                    "mode may not visit (see ExponentialGamma.start_values)",
                    RuntimeWarning,
                    stacklevel=2,
                )
        return super().fit(release, seed=rng, init=init, **sample_kwargs)

    def conjugate_parameters(self, s: Any, n: int) -> np.ndarray:
        """Gamma(shape α + n, rate β + s) parameters (R, 2) for full sums ``s`` ≥ 0."""
        s = np.asarray(s, dtype=float).reshape(-1)
        return np.stack([np.full_like(s, self.prior_shape + n), self.prior_rate + s], axis=1)
