"""Baselines of Bernstein & Sheldon (2018): the paper's Gibbs samplers, naive and non-private
conjugate posteriors, and one-posterior sampling (OPS).

Gibbs samplers (numpy/scipy, vectorised over data sets and chains)
-------------------------------------------------------------------
A second, independent implementation of the noise-aware posteriors of
:mod:`pystanprivacy.models.bernstein2018`, following the paper's algorithms:

* Algorithm 1 (bounded statistics: binomial, multinomial): θ | s by conjugacy; s | θ, σ², y
  by ``NormProduct`` of the CLT normal N(nμ, nΣ) and N(y, diag σ²); 1/σ_j² | s, y ~
  InverseGaussian(1/(b|y_j − s_j|), 1/b²) (the Bayesian-lasso augmentation of the Laplace
  noise, Park & Casella 2008), b = Δ/ε.
* Algorithms 2-3 (truncated exponential): the lower, centre and upper partial sums
  ŝ_ℓ, ŝ_c, ŝ_u, each normal by the random-sum CLT (Prop. 1) with the truncated moments of
  Lemma 1 (closed form for the exponential); θ | s = ŝ_ℓ + ŝ_c + ŝ_u by conjugacy.

The paper draws the statistics "until the values drawn are valid" (Algorithm 2, line 8).
Here univariate statistics are drawn from the truncated normal *exactly* (inverse CDF in log
space, no rejection loop), and the multinomial counts by rejection with a state-independent
cap followed by exact coordinate-wise truncated-normal Gibbs updates (both leave the same
conditional invariant, so the chain is valid and never loops forever). Valid ranges: the
binomial count in [0, n], the multinomial counts ≥ 0 with sum n, the exponential centre sum
in [0, n b] and the total sum s > 0. The exponential *tail* sums are left normal: truncating
each at 0 raises its mean when few records fall in the tail, and because θ | s and s | θ
feed back into each other, that small shift of E[s | θ] moves the stationary θ by roughly
n/α times as much (measured: the stationary mean of θ under an uninformative release drops
from the prior's 4.0 to 3.5 at n = 100).

Deliberate differences from the paper's public code (bugs there)
----------------------------------------------------------------
* every multinomial statistic gets its own noise draw (and its own σ_j²);
* the multinomial sensitivity is 2 (replace-one, n public), not 1; the exponential one is b
  (Sec. 3.3 bound for a ≥ 0), not b − a;
* truncation bounds come from public prior knowledge (the model's declared bounds), never
  from the true θ or the data;
* the multinomial CLT covariance is singular; the conditional of the counts is computed in
  the K − 1 free coordinates (with the Kth count n − Σ s and its own noise), not by
  inverting the singular matrix;
* in Algorithm 2 the centre statistic used for the σ² update is the one drawn given y
  (line 7), not a fresh draw from its prior (line 10), which would ignore y.

Naive, non-private and OPS
--------------------------
* Naive (Sec. 4): the conjugate update with the noisy statistics treated as exact, after
  projecting them onto the valid set (post-processing). For the truncated exponential the
  paper lets the naive method "cheat" with the noisy *untruncated* sum (not private);
  :func:`naive_untruncated_posterior` does that, :func:`naive_posterior` uses the released
  truncated sum as if it were the full sum (private, but biased).
* Non-private: the conjugate update with the exact statistics -- the models' own
  ``fit_nonprivate`` (:meth:`pystanprivacy.models.bernstein2018.BinomialBeta.fit_nonprivate`).
* OPS (Sec. 4, binomial only): ``samples`` exact draws from the truncated
  (θ ∈ [a0, 1 − a0]) tempered beta posterior, each (ε/samples)-DP (Foulds et al. 2016), so
  the set is ε-DP by sequential composition. The tempered truncated posterior is a truncated
  Beta distribution, sampled exactly by inverse CDF; the temperature comes from
  :func:`pystanprivacy.models.foulds2016.ops_temperature`.

References
----------
.. [1] G. Bernstein and D. Sheldon (2018), "Differentially Private Bayesian Inference for
   Exponential Families", NeurIPS. Algorithms 1-3, Prop. 1, Lemma 1, Sec. 4.
.. [2] T. Park and G. Casella (2008), "The Bayesian lasso", JASA 103(482).
.. [3] J. Foulds, J. Geumlek, M. Welling and K. Chaudhuri (2016), UAI. Eq. 10, 14, 15.
"""
from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
from scipy import special, stats

from ..._validation import SeedLike, check_array, check_epsilon, check_int, check_random_state
from ...models.base import OPSResult, posterior_from_draws
from ...models.bernstein2018 import (
    BinomialBeta,
    ConjugatePosterior,
    ExponentialGamma,
    MultinomialDirichlet,
    _NoiseAwareModel,
    rs_clt_exponential,
    truncated_exponential_moments,
)
from ...models.foulds2016 import log_likelihood_sensitivity, ops_temperature
from ...privacy.mechanisms import Laplace, project_simplex
from ...privacy.records import PrivacyRecord, Release
from ...sampling.posterior import Posterior

__all__ = [
    "norm_product",
    "truncated_normal",
    "truncated_exponential_moments",
    "rs_clt_exponential",
    "multinomial_count_conditional",
    "gibbs_posterior",
    "ConjugatePosterior",
    "naive_posterior",
    "naive_untruncated_posterior",
    "ops_binomial",
]

_TINY = np.finfo(float).tiny


# --------------------------------------------------------------------------- building blocks
def norm_product(mu1: Any, var1: Any, mu2: Any, var2: Any) -> tuple[np.ndarray, np.ndarray]:
    """``NormProduct`` of Algorithm 1 for univariate normals (elementwise, broadcasting):
    N(x; μ1, v1) N(x; μ2, v2) ∝ N(x; μ3, v3), v3 = (1/v1 + 1/v2)⁻¹, μ3 = v3 (μ1/v1 + μ2/v2)."""
    mu1, var1, mu2, var2 = (np.asarray(a, dtype=float) for a in (mu1, var1, mu2, var2))
    precision = 1.0 / var1 + 1.0 / var2
    var3 = 1.0 / precision
    return var3 * (mu1 / var1 + mu2 / var2), var3


def _uniform_open(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform(0, 1) draws that are never exactly 0 or 1."""
    return (rng.integers(0, 2**53, size=shape) + 0.5) / 2.0**53


def truncated_normal(rng: np.random.Generator, mean: Any, sd: Any, lower: Any, upper: Any) -> np.ndarray:
    """Exact draws of N(mean, sd²) truncated to [lower, upper] (broadcasting; bounds may be
    ±inf).

    A plain normal draw is kept when it lands inside the interval; the others are drawn by
    the inverse CDF in log space (intervals in the upper tail are reflected into the lower
    tail, where ``log_ndtr`` and ``ndtri_exp`` are accurate), so intervals many standard
    deviations from the mean are sampled without a rejection loop or underflow. The result
    is exact: P(inside) TN + P(outside) TN = TN.
    """
    mean, sd, lower, upper = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (mean, sd, lower, upper)))
    out = mean + sd * rng.standard_normal(mean.shape)
    redo = np.flatnonzero((out < lower) | (out > upper))
    if redo.size == 0:
        return out
    m, s_, lo, hi = (a.reshape(-1)[redo] for a in (mean, sd, lower, upper))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        alpha = (lo - m) / s_
        beta = (hi - m) / s_
        flip = alpha > 0
        a = np.where(flip, -beta, alpha)
        b = np.where(flip, -alpha, beta)
        log_fa = special.log_ndtr(a)
        log_fb = special.log_ndtr(b)
        v = _uniform_open(rng, m.shape)
        log_p = log_fb + np.log(v + (1.0 - v) * np.exp(log_fa - log_fb))
        z = np.clip(special.ndtri_exp(log_p), a, b)
    flat = out.reshape(-1)
    flat[redo] = m + s_ * np.where(flip, -z, z)
    return flat.reshape(mean.shape)


def _inverse_gaussian_noise_var(rng: np.random.Generator, residual: np.ndarray, b: float) -> np.ndarray:
    """σ² with 1/σ² ~ InverseGaussian(mean 1/(b|r|), shape 1/b²) (Algorithm 1, line 6)."""
    abs_r = np.maximum(np.abs(residual), 1e-300)
    return 1.0 / rng.wald(1.0 / (b * abs_r), 1.0 / b**2)


def _check_run(iterations: Any, burnin: Any, chains: Any, thin: Any) -> tuple[int, int, int, int]:
    return (
        check_int(iterations, "iterations", minimum=1),
        check_int(burnin, "burnin", minimum=0),
        check_int(chains, "chains", minimum=1),
        check_int(thin, "thin", minimum=1),
    )


def _check_model(model: Any) -> _NoiseAwareModel:
    if not isinstance(model, _NoiseAwareModel):
        raise TypeError(f"model must be a bernstein2018 model instance, got {type(model).__name__}")
    return model


# ------------------------------------------------------------------------------ samplers
def _gibbs_binomial(y, n, b, alpha, beta, iterations, burnin, chains, thin, rng):
    R = y.shape[0]
    shape = (chains, R)
    yy = np.broadcast_to(y, shape)
    theta = rng.beta(alpha, beta, size=shape)
    noise_var = rng.exponential(2.0 * b * b, size=shape)
    out = np.empty((chains, iterations // thin, R))
    for it in range(burnin + iterations):
        # s | θ, σ², y: NormProduct of the CLT normal and N(y, σ²), valid range [0, n]
        mean, var = norm_product(n * theta, n * theta * (1.0 - theta), yy, noise_var)
        s = truncated_normal(rng, mean, np.sqrt(var), 0.0, float(n))
        # θ | s: conjugate beta update (exact model view, Sec. 3.2)
        theta = np.clip(rng.beta(alpha + s, beta + n - s), 1e-15, 1 - 1e-15)
        noise_var = _inverse_gaussian_noise_var(rng, yy - s, b)
        k = it - burnin
        if k >= 0 and k % thin == 0:
            out[:, k // thin] = theta
    return out


def multinomial_count_conditional(theta: Any, noise_var: Any, y: Any, n: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean (B, K−1) and covariance (B, K−1, K−1) of the K − 1 free counts given θ, the noise
    variances σ² and the noisy counts y (B, K): NormProduct (Algorithm 1) for the singular
    multinomial CLT, in the free coordinates.

    The CLT covariance of the free counts is Σ' = n(diag θ' − θ'θ'ᵀ), with inverse
    (diag(1/θ') + 11ᵀ/θ_K)/n; the K noisy counts are y' = s' + e', y_K = n − 1ᵀs' + e_K.
    The precision is P = diag(d) + c 11ᵀ, d_k = 1/(nθ_k) + 1/σ_k², c = 1/(nθ_K) + 1/σ_K², the
    linear term h_k = 1/θ_K + y_k/σ_k² + (n − y_K)/σ_K², and P⁻¹ follows from
    Sherman-Morrison.
    """
    theta, noise_var, y = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (theta, noise_var, y))
    km = theta.shape[1] - 1
    d = 1.0 / (n * theta[:, :km]) + 1.0 / noise_var[:, :km]
    c = 1.0 / (n * theta[:, km]) + 1.0 / noise_var[:, km]
    h = 1.0 / theta[:, km:km + 1] + y[:, :km] / noise_var[:, :km] + ((n - y[:, km]) / noise_var[:, km])[:, None]
    inv_d = 1.0 / d
    denom = 1.0 + c * inv_d.sum(axis=1)
    mean = inv_d * h - (c * (inv_d * h).sum(axis=1) / denom)[:, None] * inv_d
    cov = np.einsum("bi,ij->bij", inv_d, np.eye(km)) - (c / denom)[:, None, None] * inv_d[:, :, None] * inv_d[:, None, :]
    return mean, cov


def _multinomial_counts(rng, theta, noise_var, y, n, s_prev, max_tries):
    """Draw the K − 1 free counts from their conditional (:func:`multinomial_count_conditional`)
    truncated to {s ≥ 0, Σ s ≤ n}: rejection (at most ``max_tries`` rounds, a number
    independent of the state) and, for rows still invalid, one sweep of exact
    coordinate-wise truncated-normal updates from the previous valid counts.
    """
    B, km = theta.shape[0], theta.shape[1] - 1
    mean, cov = multinomial_count_conditional(theta, noise_var, y, n)
    chol = np.linalg.cholesky(cov)
    s = np.empty_like(mean)
    todo = np.arange(B)
    for _ in range(max_tries):
        z = rng.standard_normal((todo.size, km))
        cand = mean[todo] + np.einsum("bij,bj->bi", chol[todo], z)
        ok = np.all(cand >= 0, axis=1) & (cand.sum(axis=1) <= n)
        s[todo[ok]] = cand[ok]
        todo = todo[~ok]
        if todo.size == 0:
            return s
    # exact coordinate-wise updates of the same truncated normal, from the last valid state
    cur = s_prev[todo].copy()
    p_t = np.linalg.inv(cov[todo])
    m_t = mean[todo]
    for k in range(km):
        others = np.delete(np.arange(km), k)
        dev = np.einsum("bj,bj->b", p_t[:, k, others], cur[:, others] - m_t[:, others])
        cond_mean = m_t[:, k] - dev / p_t[:, k, k]
        upper = n - cur[:, others].sum(axis=1)
        cur[:, k] = truncated_normal(rng, cond_mean, 1.0 / np.sqrt(p_t[:, k, k]), 0.0, np.maximum(upper, 0.0))
    s[todo] = cur
    return s


def _gibbs_multinomial(y, n, b, alpha, iterations, burnin, chains, thin, rng, max_tries=50):
    R, K = y.shape
    B = chains * R
    yy = np.tile(y, (chains, 1))
    theta = rng.dirichlet(alpha, size=B)
    noise_var = rng.exponential(2.0 * b * b, size=(B, K))
    s = n * theta[:, :K - 1]
    out = np.empty((chains, iterations // thin, R, K))
    for it in range(burnin + iterations):
        s = _multinomial_counts(rng, theta, noise_var, yy, n, s, max_tries)
        full = np.concatenate([s, n - s.sum(axis=1, keepdims=True)], axis=1)
        g = rng.standard_gamma(alpha[None, :] + full)
        theta = np.maximum(g / g.sum(axis=1, keepdims=True), 1e-300)
        theta /= theta.sum(axis=1, keepdims=True)
        noise_var = _inverse_gaussian_noise_var(rng, yy - full, b)
        k = it - burnin
        if k >= 0 and k % thin == 0:
            out[:, k // thin] = theta.reshape(chains, R, K)
    return out


def _gibbs_exponential(y, n, b, bounds, shape0, rate0, iterations, burnin, chains, thin, rng, theta0):
    R = y.shape[0]
    shape = (chains, R)
    yy = np.broadcast_to(y, shape)
    lo, hi = bounds
    theta = np.array(theta0, dtype=float).reshape(shape)
    noise_var = rng.exponential(2.0 * b * b, size=shape)
    out = np.empty((chains, iterations // thin, R))
    for it in range(burnin + iterations):
        # Algorithm 2, lines 6-8. Centre: NormProduct of its RS-CLT normal and N(y, σ²), on
        # its valid range [0, n b]. Tails: the RS-CLT normals of [0, a] and [b, inf); only
        # their sum enters the θ update, drawn so that the total s stays > 0 (line 8).
        # (Truncating each tail at 0 instead shifts its mean when few records fall in it, and
        # the θ <-> s feedback amplifies that shift about n/α-fold: see the module notes.)
        mc, vc = rs_clt_exponential(theta, n, lo, hi)
        mean_c, var_c = norm_product(mc, vc, yy, noise_var)
        s_c = truncated_normal(rng, mean_c, np.sqrt(var_c), 0.0, n * hi)
        mt, vt = rs_clt_exponential(theta, n, hi, np.inf)
        if lo > 0:
            ml, vl = rs_clt_exponential(theta, n, 0.0, lo)
            mt, vt = mt + ml, vt + vl
        s_tails = truncated_normal(rng, mt, np.sqrt(np.maximum(vt, 1e-300)), -s_c, np.inf)
        # line 9: θ | s by conjugacy, s = ŝ_ℓ + ŝ_c + ŝ_u
        theta = rng.gamma(shape0 + n, 1.0 / (rate0 + s_c + s_tails))
        # line 11, with the centre statistic drawn given y (not a fresh prior draw, line 10)
        noise_var = _inverse_gaussian_noise_var(rng, yy - s_c, b)
        k = it - burnin
        if k >= 0 and k % thin == 0:
            out[:, k // thin] = theta
    return out


def gibbs_posterior(
    model: _NoiseAwareModel,
    release: Release,
    *,
    iterations: int = 5000,
    burnin: int = 2000,
    chains: int = 1,
    thin: int = 1,
    seed: SeedLike = None,
) -> Posterior:
    """The paper's Gibbs sampler for ``model`` given ``release`` (Algorithms 1-3).

    Parameters
    ----------
    model : BinomialBeta, BinomialBetaExact, MultinomialDirichlet or ExponentialGamma
        Supplies the prior, the declared bounds and the release check.
    release : Release
        Made by ``model.release`` (or ``release_statistics`` / ``published``); R data sets
        are sampled together, vectorised.
    iterations, burnin : int, default 5000, 2000
        Kept iterations and burn-in per chain (the paper's settings).
    chains : int, default 1
        Independent chains, for R-hat: initialised from the prior (binomial, multinomial)
        or, for the exponential, near the global mode of each data set
        (:meth:`ExponentialGamma.start_values`), because the truncated-sum likelihood can
        have a second mode that no local move leaves.
    thin : int, default 1
    seed : int, Generator or None
        Reproducibility only, not security.

    Returns
    -------
    Posterior
        ``theta`` of shape (chains, iterations // thin, R) (…, R, K for the multinomial);
        ``check()``, ``rhat()``, ``ess_bulk()`` work as for a Stan fit.
    """
    iterations, burnin, chains, thin = _check_run(iterations, burnin, chains, thin)
    values, n, scale, _ = _check_model(model).check_release(release)
    rng = check_random_state(seed)
    start = time.perf_counter()
    if isinstance(model, BinomialBeta):
        theta = _gibbs_binomial(values[:, 0], n, scale, model.prior_alpha, model.prior_beta,
                                iterations, burnin, chains, thin, rng)
        label = "bernstein2018/gibbs_binomial (Algorithm 1)"
    elif isinstance(model, MultinomialDirichlet):
        theta = _gibbs_multinomial(values, n, scale, model.prior_alpha, iterations, burnin, chains, thin, rng)
        label = "bernstein2018/gibbs_multinomial (Algorithm 1)"
    elif isinstance(model, ExponentialGamma):
        theta0, _ = model.start_values(release, chains=chains, seed=rng)
        theta = _gibbs_exponential(values[:, 0], n, scale, model.bounds, model.prior_shape, model.prior_rate,
                                   iterations, burnin, chains, thin, rng, theta0)
        label = "bernstein2018/gibbs_exponential (Algorithms 2-3)"
    else:  # pragma: no cover - every subclass is handled above
        raise TypeError(f"no Gibbs sampler for {type(model).__name__}")
    return posterior_from_draws({"theta": theta}, model=label, backend="numpy-gibbs", seed=seed, warmup=burnin,
                                thin=thin, elapsed=time.perf_counter() - start)


# ------------------------------------------------------------------- conjugate posteriors
def naive_posterior(model: _NoiseAwareModel, release: Release) -> ConjugatePosterior:
    """Naive baseline (Sec. 4): the conjugate update with the released noisy statistics
    treated as exact, after projecting them onto the valid set (counts into [0, n], the
    multinomial counts onto {s ≥ 0, Σ s = n}, the exponential sum onto [0, ∞)). Post-
    processing of the release, so ε-DP. For the exponential model the released *truncated*
    sum is used as if it were the full sum (see :func:`naive_untruncated_posterior` for the
    paper's non-private variant)."""
    family = _check_model(model).family
    values, n, _, _ = model.check_release(release)
    if family == "beta":
        s = np.clip(values[:, 0], 0.0, n)
    elif family == "dirichlet":
        s = project_simplex(values, total=float(n))
    else:
        s = np.maximum(values[:, 0], 0.0)
    return model.conjugate_posterior(s, n, label="naive")


def naive_untruncated_posterior(
    model: ExponentialGamma,
    full_sum: Any,
    *,
    n: int,
    epsilon: float,
    seed: SeedLike = None,
) -> ConjugatePosterior:
    """The paper's "cheating" naive baseline for the truncated exponential (Sec. 4): the
    *untruncated* sum plus Laplace noise of the same magnitude as the release (b/ε), then the
    conjugate update as if exact. NOT private (the untruncated sum has unbounded
    sensitivity); it receives strictly more information than the noise-aware method."""
    if not isinstance(model, ExponentialGamma):
        raise TypeError(f"model must be an ExponentialGamma, got {type(model).__name__}")
    n = check_int(n, "n", minimum=1)
    epsilon = check_epsilon(epsilon)
    s = check_array(full_sum, "full_sum", ndim=(0, 1), kinds="iuf").reshape(-1)
    if np.any(s < 0):
        raise ValueError("full_sum must be >= 0 (sums of exponential records)")
    noisy = Laplace(epsilon=epsilon, sensitivity=model.sensitivity, seed=seed).randomise(s)
    return model.conjugate_posterior(np.maximum(noisy, 0.0), n, label="naive (untruncated, non-private)")


def nonprivate_posterior(model: _NoiseAwareModel, statistics: Any, *, n: int) -> ConjugatePosterior:
    """Deprecated (removed in 0.3): ``model.fit_nonprivate(statistics=statistics, n=n)``, the one
    spelling of the non-private baseline (the same exact conjugate posterior, marked
    ``"non-private"``)."""
    warnings.warn("nonprivate_posterior(model, statistics, n=n) is deprecated and will be removed in 0.3; use "
                  "model.fit_nonprivate(statistics=statistics, n=n)", DeprecationWarning, stacklevel=2)
    return _check_model(model).fit_nonprivate(statistics=statistics, n=n)


# -------------------------------------------------------------------------------------- OPS
def _truncated_beta(rng: np.random.Generator, a: np.ndarray, b: np.ndarray, lo: float, hi: float,
                    size: tuple[int, int]) -> np.ndarray:
    """Exact inverse-CDF draws of Beta(a, b) truncated to [lo, hi], rows of ``size`` per
    (a, b) pair; the survival function is used where the interval lies in the upper half."""
    dist = stats.beta(a[:, None], b[:, None])
    f_lo, f_hi = dist.cdf(lo), dist.cdf(hi)
    upper = f_lo > 0.5
    s_lo, s_hi = dist.sf(lo), dist.sf(hi)
    u = _uniform_open(rng, size)
    from_cdf = dist.ppf(f_lo + u * (f_hi - f_lo))
    from_sf = dist.isf(s_hi + u * (s_lo - s_hi))
    return np.clip(np.where(upper, from_sf, from_cdf), lo, hi)


def ops_binomial(
    model: BinomialBeta,
    s: Any,
    *,
    n: int,
    epsilon: float,
    a0: float = 0.1,
    samples: int = 100,
    seed: SeedLike = None,
) -> OPSResult:
    """OPS baseline of Sec. 4: ``samples`` draws, each from the beta posterior truncated to
    [a0, 1 − a0] and tempered at T = ops_temperature(ε/samples, a0) (Foulds et al. 2016,
    Eq. 14), so each draw is (ε/samples)-DP and the set ε-DP (sequential composition).

    The tempered truncated target ∝ [θ^(s+α−1) (1−θ)^(n−s+β−1)]^(1/T) on [a0, 1 − a0] is a
    truncated Beta(1 + (s+α−1)/T, 1 + (n−s+β−1)/T), drawn exactly (no MCMC). OPS sees the
    exact counts ``s`` (the sampler is the mechanism).

    Returns an :class:`~pystanprivacy.models.base.OPSResult`: the draws (R, samples) in
    ``params["theta"]`` and as the values of ``release``, whose record states the ε of the set
    and, in its details, the per-draw ε and the temperature.
    """
    if not isinstance(model, BinomialBeta):
        raise TypeError(f"model must be a BinomialBeta, got {type(model).__name__}")
    n = check_int(n, "n", minimum=1)
    epsilon = check_epsilon(epsilon)
    samples = check_int(samples, "samples", minimum=1)
    counts = model._check_statistics(s, n)[:, 0]
    eps_each = epsilon / samples
    temperature = ops_temperature(eps_each, a0)  # also validates a0
    rng = check_random_state(seed)
    a = 1.0 + (counts + model.prior_alpha - 1.0) / temperature
    b = 1.0 + (n - counts + model.prior_beta - 1.0) / temperature
    draws = _truncated_beta(rng, a, b, a0, 1.0 - a0, (counts.size, samples))
    record = PrivacyRecord(
        mechanism="ops",
        epsilon=epsilon,
        sensitivity=log_likelihood_sensitivity(a0),
        bounds=(0.0, 1.0),
        n=n,
        details={
            "samples": samples,
            "epsilon_per_sample": eps_each,
            "composition": "sequential over the samples",
            "temperature": temperature,
            "a0": a0,
            "prior": [model.prior_alpha, model.prior_beta],
            "sampler": "exact inverse CDF of the truncated tempered beta (no MCMC)",
            "datasets": int(counts.size),
            "reference": "Foulds et al. 2016, Eq. 10, 14, 15; Bernstein & Sheldon 2018, Sec. 4",
        },
    )
    return OPSResult(release=Release(values=draws, record=record), problems=[], params={"theta": draws},
                     details={"temperature": temperature, "epsilon_per_sample": eps_each})


def __getattr__(name: str) -> Any:
    if name == "OPSSamples":  # the one OPS result type since 0.2
        warnings.warn("OPSSamples is deprecated and will be removed in 0.3; ops_binomial returns "
                      "pystanprivacy.models.base.OPSResult (draws in .params['theta'] and .release.values)",
                      DeprecationWarning, stacklevel=2)
        return OPSResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
