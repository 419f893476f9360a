"""Noise-aware Bayesian models for locally perturbed data (Kulkarni et al. 2022): Gaussian
(μ, σ) and exponential (θ) from clipped + Laplace reports, histogram from OUE reports.

Each class pairs the client-side release (every user perturbs their own record,
:mod:`pystanprivacy.privacy.ldp`) with the aggregator's Stan model, whose likelihood marginalises
every user's latent input in closed form and is built from the Release's record (ε, the
clipping bounds), so the analyst cannot pass a mismatched noise scale by hand. A release
of shape (R, N) holds R independent data sets; one Stan run fits them all (the joint
posterior is a product, so each component is an exact draw from its own posterior).

The one data path (:mod:`pystanprivacy.models.base`): the classmethod ``release`` perturbs
(simulates the users' devices), ``published`` wraps reports that users perturbed elsewhere
(the aggregator's usual entry point; nothing is charged), ``model.fit(release)`` returns a
Posterior carrying the release's record, and ``model.fit_nonprivate(x)`` is the named
non-private baseline: exact draws of the conjugate (or grid-exact) posterior of the clean,
unclipped data, marked ``"non-private"``.

The linear and logistic regression models of the paper live in
:mod:`pystanprivacy.models.kulkarni2022_regression`.

References
----------
.. [1] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela (2022), "Locally differentially
   private Bayesian inference". Sec. 3.2.1 (Eq. 6), 3.2.2, supplement Sec. 10.1
   (Eq. 22-28), 10.2 (Eq. 29-30), 11 (Eq. 31-33); priors: Figure 8.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from .._validation import (
    SeedLike,
    check_array,
    check_bounds,
    check_epsilon,
    check_int,
    check_positive,
    check_random_state,
    check_real,
)
from ..privacy import ldp
from ..privacy.mechanisms import Clip
from ..privacy.records import PrivacyAccountant, PrivacyRecord, Release
from ..sampling.posterior import Posterior
from .base import (
    NONPRIVATE,
    Example,
    Model,
    check_release_matches_record,
    posterior_from_draws,
    published_laplace_record,
    with_record,
)

__all__ = [
    "GaussianLDP",
    "ExponentialLDP",
    "HistogramOUE",
]

_REFERENCE = "Kulkarni et al. 2022"
#: the backend name of the exact (numpy) draws of the non-private baselines
_EXACT = "numpy-exact"

#: default clipping interval of the Gaussian model (Figure 1: [-5, 5])
GAUSSIAN_BOUNDS = (-5.0, 5.0)
#: default clipping bound of the exponential model (Figure 11: clipped to 5)
EXPONENTIAL_BOUND = 5.0


def _check_reports(values: np.ndarray, name: str = "release values") -> np.ndarray:
    """Real reports of shape (N,) or (R, N) → (R, N)."""
    arr = check_array(values, name, ndim=(1, 2), kinds="iuf")
    if arr.size == 0:  # (0,), (R, 0) and (0, N) alike
        raise ValueError(f"{name} must hold at least one report, got shape {arr.shape}")
    return np.atleast_2d(arr)


def _published_clipped_laplace(z: Any, *, epsilon: float, bounds: tuple[float, float]) -> Release:
    """Reports clip(x) + Laplace((b − a)/ε) that users made on their devices
    (:func:`pystanprivacy.privacy.ldp.clipped_laplace_reports`), as the :class:`Release` that
    the models take: the Laplace record of :func:`~pystanprivacy.models.base.published_laplace_record`
    with the local-release details. ``z`` of shape (N,) or (R, N); nothing is charged."""
    a, b = check_bounds(bounds, "bounds")
    epsilon = check_epsilon(epsilon)
    reports = _check_reports(z, "z")
    details = {
        **Clip(a, b).details(),
        "local": True,
        "per_user": True,
        "reference": f"{_REFERENCE}, Sec. 3.2.1 (clip then Laplace((b-a)/eps))",
    }
    record = published_laplace_record(
        epsilon=epsilon, sensitivity=b - a, n=int(reports.shape[-1]), bounds=(a, b), details=details
    )
    return Release(values=reports[0] if np.ndim(z) == 1 else reports, record=record)


def _exact_posterior(model: Model, variables: dict[str, np.ndarray], seed: SeedLike, start: float) -> Posterior:
    """The exact draws of a non-private baseline (one chain) as a Posterior marked non-private."""
    post = posterior_from_draws(
        {k: v[None] for k, v in variables.items()},
        model=model.model_name,
        backend=_EXACT,
        seed=seed,
        elapsed=time.perf_counter() - start,
    )
    return with_record(post, NONPRIVATE)


class _LDPModel(Model):
    """What every Kulkarni et al. model shares: the Stan data come from the release
    (:meth:`data`), and :meth:`fit` returns the posterior carrying the release's record."""

    def __init__(self, backend: str | None) -> None:
        self.backend = backend

    def fit(self, release: Release, **sample_kwargs: Any) -> Posterior:
        """Posterior given the reports (post-processing of an LDP release); it carries the
        release's record (``posterior.privacy``).

        One Stan run covers every data set of the release. ``sample_kwargs`` go to
        :meth:`pystanprivacy.sampling.stan.StanModel.sample`. The release is checked first
        (:meth:`data`: its mechanism, and its values against its record,
        :func:`~pystanprivacy.models.base.check_release_matches_record`): a release that does
        not fit the model is refused before the Stan model is compiled or loaded.
        """
        data = self.data(release)  # before self.stan_model: never compile for a release we refuse
        return with_record(self.stan_model.sample(data, **sample_kwargs), release.record)

    def data(self, release: Release) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError


# ============================================================================ Gaussian
class GaussianLDP(_LDPModel):
    """Gaussian (μ, σ) from clipped + Laplace reports (Sec. 3.2.1, Eq. 6, 22-28).

    Each user clips x ~ N(μ, σ) to [a, b] and reports clip(x) + Laplace((b − a)/ε). The
    likelihood of a report is the Laplace kernel convolved with the rectified Gaussian
    (point masses Φ((a − μ)/σ) at a and 1 − Φ((b − μ)/σ) at b); see
    ``stan/functions/ldp.stanfunctions`` for the re-derived closed form (Eq. 27 of the
    paper has typos). Priors (Figure 8): μ ~ N(mu_prior_mean, mu_prior_sd),
    σ ~ Gamma(sigma_prior_shape, sigma_prior_rate) (shape-rate).

    Parameters
    ----------
    mu_prior_mean, mu_prior_sd : float, default 0, 2
    sigma_prior_shape, sigma_prior_rate : float, default 2, 1
        The paper does not give the hyper-parameters; these put σ mostly in (0.2, 5) so
        that clipping at [−5, 5] matters for some draws.
    backend : str, optional

    Examples
    --------
    >>> release = GaussianLDP.release(x, epsilon=1.0, bounds=(-5, 5))   # doctest: +SKIP
    >>> posterior = GaussianLDP().fit(release)                          # doctest: +SKIP
    >>> posterior.privacy["mechanism"]                                  # doctest: +SKIP
    'laplace'
    """

    model_name = "kulkarni2022/gaussian"

    def __init__(
        self,
        *,
        mu_prior_mean: float = 0.0,
        mu_prior_sd: float = 2.0,
        sigma_prior_shape: float = 2.0,
        sigma_prior_rate: float = 1.0,
        backend: str | None = None,
    ) -> None:
        super().__init__(backend)
        self.mu_prior_mean = check_real(mu_prior_mean, "mu_prior_mean")
        if not np.isfinite(self.mu_prior_mean):
            raise ValueError(f"mu_prior_mean must be finite, got {mu_prior_mean!r}")
        self.mu_prior_sd = check_positive(mu_prior_sd, "mu_prior_sd")
        self.sigma_prior_shape = check_positive(sigma_prior_shape, "sigma_prior_shape")
        self.sigma_prior_rate = check_positive(sigma_prior_rate, "sigma_prior_rate")

    @classmethod
    def release(
        cls,
        x: Any,
        *,
        epsilon: float,
        bounds: tuple[float, float] = GAUSSIAN_BOUNDS,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
    ) -> Release:
        """Every user clips to ``bounds`` and adds Laplace((b − a)/ε): ε-LDP per user.

        ``x`` of shape (N,) (one data set) or (R, N) (R data sets of different people).
        """
        return ldp.clipped_laplace_reports(
            x,
            epsilon=epsilon,
            bounds=bounds,
            accountant=accountant,
            seed=seed,
            label="Gaussian reports (clip + Laplace)",
        )

    @classmethod
    def published(cls, z: Any, *, epsilon: float, bounds: tuple[float, float] = GAUSSIAN_BOUNDS) -> Release:
        """Reports ``z`` = clip(x, a, b) + Laplace((b − a)/ε) that the users made on their
        devices (shape (N,) or (R, N)), as the Release :meth:`fit` takes; nothing is charged."""
        return _published_clipped_laplace(z, epsilon=epsilon, bounds=bounds)

    def sample_prior(self, size: int | None = None, seed: SeedLike = None) -> tuple[Any, Any]:
        """(μ, σ) drawn from the prior (for calibration studies)."""
        rng = check_random_state(seed)
        mu = rng.normal(self.mu_prior_mean, self.mu_prior_sd, size=size)
        sigma = rng.gamma(self.sigma_prior_shape, 1.0 / self.sigma_prior_rate, size=size)
        return mu, sigma

    @classmethod
    def example(cls, n: int = 1000, *, seed: int = 0) -> Example:
        """``n`` users' values x ~ N(1, 2^2) and ``epsilon = 1`` (:class:`~pystanprivacy.models.base.Example`)."""
        x = np.random.default_rng(seed).normal(1.0, 2.0, size=check_int(n, "n", minimum=1))
        return Example(cls(), {"x": x}, {"epsilon": 1.0}, "x", truth={"mu": 1.0, "sigma": 2.0})

    def fit_nonprivate(self, x: Any, *, draws: int = 4000, grid: int = 4000, seed: SeedLike = None) -> Posterior:
        """Named NON-PRIVATE baseline: draws of (μ, σ) | x for clean, unclipped Gaussian data
        ``x`` (N,) under this model's prior, marked ``posterior.privacy == "non-private"``.

        μ | σ, x is normal (conjugate); σ | x is one-dimensional and is sampled from its
        exact density evaluated on a fine ``grid`` in log σ (inverse-CDF with linear
        interpolation inside each cell). The Posterior has one chain of ``draws`` of ``mu``
        and ``sigma`` (no Stan).
        """
        start = time.perf_counter()
        arr = check_array(x, "x", ndim=1, kinds="iuf")
        rng = check_random_state(seed)
        n, xbar = arr.size, float(arr.mean())
        ss = float(((arr - xbar) ** 2).sum())
        s0, m0 = self.mu_prior_sd, self.mu_prior_mean
        k, r = self.sigma_prior_shape, self.sigma_prior_rate
        sd_hat = max(np.sqrt(ss / max(n - 1, 1)), 1e-8)
        log_s = np.linspace(
            np.log(sd_hat) - 8 / np.sqrt(max(n, 2)) - 3, np.log(sd_hat) + 8 / np.sqrt(max(n, 2)) + 3, grid
        )
        s = np.exp(log_s)
        v = s0**2 + s**2 / n  # x̄ | σ ~ N(m0, s0² + σ²/n) after integrating μ
        logp = (
            (k - 1) * np.log(s)
            - r * s  # Gamma prior on σ
            - (n - 1) * np.log(s)
            - ss / (2 * s**2)
            - 0.5 * np.log(v)
            - (xbar - m0) ** 2 / (2 * v)
            + log_s
        )  # Jacobian of the log-σ grid
        p = np.exp(logp - logp.max())
        cdf = np.concatenate([[0.0], np.cumsum(0.5 * (p[1:] + p[:-1]) * np.diff(log_s))])
        cdf /= cdf[-1]
        sig = np.exp(np.interp(rng.random(draws), cdf, log_s))
        prec = 1 / s0**2 + n / sig**2
        mean = (m0 / s0**2 + n * xbar / sig**2) / prec
        mu = rng.normal(mean, 1 / np.sqrt(prec))
        return _exact_posterior(self, {"mu": mu, "sigma": sig}, seed, start)

    def data(self, release: Release) -> dict[str, Any]:
        """Stan data from a release of :meth:`release` (bounds and ε from its record)."""
        rec = ldp.check_ldp_release(release, mechanism="laplace", what="GaussianLDP.release")
        clip = rec.details.get("clipping")
        if clip is None or rec.bounds is None:
            raise ValueError("release must record its clipping bounds (made by GaussianLDP.release)")
        a, b = rec.bounds
        if not np.isclose(rec.sensitivity, b - a) or not np.isclose(rec.scale, (b - a) / rec.epsilon):
            raise ValueError(
                f"release's Laplace scale {rec.scale!r} does not match (b - a)/epsilon for bounds {rec.bounds}"
            )
        z = _check_reports(release.values)
        check_release_matches_record(release, z, model="GaussianLDP", records_axis=1)  # one report per user
        return {
            "R": z.shape[0],
            "N": [z.shape[1]] * z.shape[0],
            "z": z.ravel(),
            "a": a,
            "b": b,
            "beta": rec.scale,  # the scale of the noise actually added
            "mu_prior_mean": self.mu_prior_mean,
            "mu_prior_sd": self.mu_prior_sd,
            "sigma_prior_shape": self.sigma_prior_shape,
            "sigma_prior_rate": self.sigma_prior_rate,
        }


# ============================================================================ exponential
class ExponentialLDP(_LDPModel):
    """Exponential rate θ from clipped + Laplace reports (Sec. 10.2, Eq. 29-30 re-derived).

    Each user clips x ~ Exponential(θ) (rate θ, mean 1/θ) to [0, b] and reports
    min(x, b) + Laplace(b/ε). Prior (Figure 8): θ ~ Gamma(theta_prior_shape,
    theta_prior_rate) (shape-rate; default Gamma(2, 2), mean 1).
    """

    model_name = "kulkarni2022/exponential"

    def __init__(
        self, *, theta_prior_shape: float = 2.0, theta_prior_rate: float = 2.0, backend: str | None = None
    ) -> None:
        super().__init__(backend)
        self.theta_prior_shape = check_positive(theta_prior_shape, "theta_prior_shape")
        self.theta_prior_rate = check_positive(theta_prior_rate, "theta_prior_rate")

    @classmethod
    def release(
        cls,
        x: Any,
        *,
        epsilon: float,
        bound: float = EXPONENTIAL_BOUND,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
    ) -> Release:
        """Every user clips to [0, ``bound``] and adds Laplace(bound/ε): ε-LDP per user.

        ``x`` must be ≥ 0 (exponential data), shape (N,) or (R, N). ``bound / epsilon`` must
        be in (0, 2**1000] (the Laplace mechanism's scale limit): a ``ValueError`` naming
        ``bound`` and ``epsilon`` otherwise, before anything is charged.
        """
        b = check_positive(bound, "bound")
        eps = check_epsilon(epsilon)
        ldp._check_laplace_scale(b, eps, f"bound={b!r} and epsilon={eps!r}")  # public: before any charge
        arr = _check_exponential(x, ndim=(1, 2))
        return ldp.clipped_laplace_reports(
            arr,
            epsilon=epsilon,
            bounds=(0.0, b),
            accountant=accountant,
            seed=seed,
            label="exponential reports (clip + Laplace)",
        )

    @classmethod
    def published(cls, z: Any, *, epsilon: float, bound: float = EXPONENTIAL_BOUND) -> Release:
        """Reports ``z`` = min(x, bound) + Laplace(bound/ε) that the users made on their
        devices (shape (N,) or (R, N)), as the Release :meth:`fit` takes; nothing is charged."""
        return _published_clipped_laplace(z, epsilon=epsilon, bounds=(0.0, check_positive(bound, "bound")))

    @classmethod
    def example(cls, n: int = 1000, *, seed: int = 0) -> Example:
        """``n`` users' values x ~ Exponential(1) and ``epsilon = 1`` (:class:`~pystanprivacy.models.base.Example`)."""
        x = np.random.default_rng(seed).exponential(1.0, size=check_int(n, "n", minimum=1))
        return Example(cls(), {"x": x}, {"epsilon": 1.0}, "x", truth={"theta": 1.0})

    def fit_nonprivate(self, x: Any, *, draws: int = 4000, seed: SeedLike = None) -> Posterior:
        """Named NON-PRIVATE baseline: exact draws of θ | x ~ Gamma(shape + N, rate + Σx)
        (conjugate, this model's prior) for clean, unclipped data ``x`` (N,) >= 0, marked
        ``posterior.privacy == "non-private"``; one chain of ``draws`` of ``theta``, no Stan."""
        start = time.perf_counter()
        arr = _check_exponential(x)
        rng = check_random_state(seed)
        theta = rng.gamma(self.theta_prior_shape + arr.size, 1.0 / (self.theta_prior_rate + arr.sum()), size=draws)
        return _exact_posterior(self, {"theta": theta}, seed, start)

    def sample_prior(self, size: int | None = None, seed: SeedLike = None) -> Any:
        """θ drawn from the prior."""
        rng = check_random_state(seed)
        return rng.gamma(self.theta_prior_shape, 1.0 / self.theta_prior_rate, size=size)

    def data(self, release: Release) -> dict[str, Any]:
        """Stan data from a release of :meth:`release`."""
        rec = ldp.check_ldp_release(release, mechanism="laplace", what="ExponentialLDP.release")
        if rec.bounds is None or rec.bounds[0] != 0.0:
            raise ValueError(
                f"release must be clipped to [0, b] (made by ExponentialLDP.release), got bounds {rec.bounds}"
            )
        b = rec.bounds[1]
        if not np.isclose(rec.scale, b / rec.epsilon):
            raise ValueError(f"release's Laplace scale {rec.scale!r} does not match b/epsilon")
        z = _check_reports(release.values)
        check_release_matches_record(release, z, model="ExponentialLDP", records_axis=1)  # one report per user
        return {
            "R": z.shape[0],
            "N": [z.shape[1]] * z.shape[0],
            "z": z.ravel(),
            "b": b,
            "beta": rec.scale,
            "theta_prior_shape": self.theta_prior_shape,
            "theta_prior_rate": self.theta_prior_rate,
        }


# ============================================================================ histogram
#: category probabilities of :meth:`HistogramOUE.example`
EXAMPLE_HISTOGRAM = np.array([0.35, 0.25, 0.15, 0.1, 0.1, 0.05])


class HistogramOUE(_LDPModel):
    """Histogram θ on d categories from OUE reports (Sec. 3.2.2, Eq. 31-33).

    Marginalising each user's category, a report z has likelihood
    ∝ (1 − z·θ) + e^ε z·θ (Eq. 33). Identical reports are aggregated (their number, not N,
    sets the cost), and all-zero / all-one reports, which are constant in θ, are dropped.
    Prior (Figure 8): θ ~ Dirichlet(alpha), alpha = 1 by default.

    Parameters
    ----------
    alpha : float or array_like of shape (d,), default 1.0
    backend : str, optional
    """

    model_name = "kulkarni2022/histogram_oue"

    def __init__(self, *, alpha: Any = 1.0, backend: str | None = None) -> None:
        super().__init__(backend)
        arr = check_array(alpha, "alpha", ndim=(0, 1), kinds="iuf")
        if not np.all(arr > 0):
            raise ValueError("alpha must be > 0 (Dirichlet prior)")
        self.alpha = arr

    @classmethod
    def release(
        cls, x: Any, *, epsilon: float, d: int, accountant: PrivacyAccountant | None = None, seed: SeedLike = None
    ) -> Release:
        """OUE reports of categories ``x`` in {0, …, d−1}; shape (N,) or (R, N)."""
        return ldp.oue_reports(
            x, epsilon=epsilon, d=d, accountant=accountant, seed=seed, label="histogram reports (OUE)"
        )

    @classmethod
    def published(cls, reports: Any, *, epsilon: float, d: int) -> Release:
        """OUE reports (bit vectors, shape (N, d) or (R, N, d)) that the users made on their
        devices (:func:`pystanprivacy.privacy.ldp.oue_reports`), as the Release :meth:`fit`
        takes: the OUE record (ε, d, p = 1/2, q = 1/(e^ε + 1)) marked
        ``published_externally``; nothing is charged."""
        d = check_int(d, "d", minimum=2)
        p, q = ldp.oue_probabilities(epsilon)
        arr = check_array(reports, "reports", ndim=(2, 3), integer=True, bounds=(0, 1))
        if arr.shape[-1] != d or arr.shape[-2] == 0:
            raise ValueError(f"reports must have shape (N, {d}) or (R, N, {d}) with N >= 1, got {arr.shape}")
        record = PrivacyRecord(
            mechanism="oue",
            epsilon=epsilon,
            bounds=(0.0, float(d - 1)),
            n=int(arr.shape[-2]),
            details={
                "d": d,
                "p": p,
                "q": q,
                "local": True,
                "per_user": True,
                "published_externally": True,
                "reference": f"{_REFERENCE}, Sec. 3.2.2, Eq. 31-33 (OUE)",
            },
        )
        return Release(values=arr, record=record)

    @classmethod
    def example(cls, n: int = 1000, *, seed: int = 0) -> Example:
        """``n`` users' categories of d = 6 (:data:`EXAMPLE_HISTOGRAM`) and ``epsilon = 1``
        (:class:`~pystanprivacy.models.base.Example`)."""
        x = np.random.default_rng(seed).choice(6, size=check_int(n, "n", minimum=1), p=EXAMPLE_HISTOGRAM)
        return Example(cls(), {"x": x}, {"epsilon": 1.0, "d": 6}, "x", truth={"theta": EXAMPLE_HISTOGRAM.copy()})

    def fit_nonprivate(self, x: Any, *, d: int, draws: int = 4000, seed: SeedLike = None) -> Posterior:
        """Named NON-PRIVATE baseline: exact draws of θ | x ~ Dirichlet(alpha + counts)
        (conjugate, this model's prior) for categories ``x`` (N,) in {0, …, d − 1}, marked
        ``posterior.privacy == "non-private"``; one chain of ``draws`` of ``theta`` (d), no Stan."""
        start = time.perf_counter()
        d = check_int(d, "d", minimum=2)
        arr = check_array(x, "x", ndim=1, integer=True, bounds=(0, d - 1))
        rng = check_random_state(seed)
        counts = np.bincount(arr, minlength=d)
        theta = rng.dirichlet(counts + self._alpha(d), size=draws)
        return _exact_posterior(self, {"theta": theta}, seed, start)

    def _alpha(self, d: int) -> np.ndarray:
        if self.alpha.ndim == 0:
            return np.full(d, float(self.alpha))
        if self.alpha.shape[0] != d:
            raise ValueError(f"alpha has {self.alpha.shape[0]} entries but the reports have d={d} categories")
        return self.alpha

    @staticmethod
    def aggregate(reports: Any) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per data set: distinct informative reports (M, d) and their counts (M,)."""
        arr = check_array(reports, "reports", ndim=(2, 3), integer=True, bounds=(0, 1))
        sets = arr[None] if arr.ndim == 2 else arr
        out = []
        for rep in sets:
            pat, cnt = ldp.aggregate_reports(rep)
            ones = pat.sum(axis=1)
            keep = (ones > 0) & (ones < pat.shape[1])
            out.append((pat[keep], cnt[keep]))
        return out

    def data(self, release: Release) -> dict[str, Any]:
        """Stan data from a release of :meth:`release` (ε and d from its record)."""
        rec = ldp.check_ldp_release(release, mechanism="oue", what="HistogramOUE.release")
        d = int(rec.details["d"])
        values = release.values
        if values.ndim not in (2, 3) or values.shape[-1] != d:
            raise ValueError(f"release values must have shape (N, {d}) or (R, N, {d}), got {values.shape}")
        check_release_matches_record(release, values, model="HistogramOUE", records_axis=-2)  # one report per user
        groups = self.aggregate(values)
        pats = [g[0] for g in groups]
        return {
            "R": len(groups),
            "d": d,
            "M": [len(p) for p in pats],
            "Z": np.concatenate(pats).reshape(-1, d).astype(np.int64),
            "w": np.concatenate([g[1] for g in groups]).astype(float),
            "epsilon": rec.epsilon,
            "alpha": self._alpha(d),
        }


# ============================================================================ non-private
def _check_exponential(x: Any, ndim: int | tuple[int, ...] = 1) -> np.ndarray:
    arr = check_array(x, "x", ndim=ndim, kinds="iuf")
    if np.any(arr < 0):
        raise ValueError(f"x contains {int(np.count_nonzero(arr < 0))} negative value(s); exponential data are >= 0")
    return arr


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"{old} is deprecated and will be removed in 0.3; use {new} (a Posterior marked non-private)",
        DeprecationWarning,
        stacklevel=3,
    )


def histogram_nonprivate_draws(
    x: Any, d: int, *, alpha: float = 1.0, draws: int = 4000, seed: SeedLike = None
) -> np.ndarray:
    """Deprecated (removed in 0.3): ``HistogramOUE(alpha=alpha).fit_nonprivate(x, d=d, ...)``;
    returns its draws of ``theta`` (draws, d)."""
    _deprecated("histogram_nonprivate_draws", "HistogramOUE(alpha=...).fit_nonprivate(x, d=d)")
    model = HistogramOUE(alpha=check_positive(alpha, "alpha"))
    return model.fit_nonprivate(x, d=d, draws=draws, seed=seed).draws("theta")


def exponential_nonprivate_draws(
    x: Any, *, shape: float = 2.0, rate: float = 2.0, draws: int = 4000, seed: SeedLike = None
) -> np.ndarray:
    """Deprecated (removed in 0.3): ``ExponentialLDP(theta_prior_shape=shape,
    theta_prior_rate=rate).fit_nonprivate(x, ...)``; returns its draws of ``theta`` (draws,)."""
    _deprecated("exponential_nonprivate_draws", "ExponentialLDP(...).fit_nonprivate(x)")
    model = ExponentialLDP(theta_prior_shape=shape, theta_prior_rate=rate)
    return model.fit_nonprivate(x, draws=draws, seed=seed).draws("theta")


def gaussian_nonprivate_draws(
    x: Any,
    *,
    mu_prior_mean: float = 0.0,
    mu_prior_sd: float = 2.0,
    sigma_prior_shape: float = 2.0,
    sigma_prior_rate: float = 1.0,
    draws: int = 4000,
    grid: int = 4000,
    seed: SeedLike = None,
) -> np.ndarray:
    """Deprecated (removed in 0.3): ``GaussianLDP(<the priors>).fit_nonprivate(x, ...)``;
    returns its draws of (μ, σ) as an array (draws, 2)."""
    _deprecated("gaussian_nonprivate_draws", "GaussianLDP(...).fit_nonprivate(x)")
    model = GaussianLDP(
        mu_prior_mean=mu_prior_mean,
        mu_prior_sd=mu_prior_sd,
        sigma_prior_shape=sigma_prior_shape,
        sigma_prior_rate=sigma_prior_rate,
    )
    post = model.fit_nonprivate(x, draws=draws, grid=grid, seed=seed)
    return np.column_stack([post.draws("mu"), post.draws("sigma")])
