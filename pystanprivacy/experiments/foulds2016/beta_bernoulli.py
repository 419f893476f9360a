"""Experiments of Foulds, Geumlek, Welling & Chaudhuri (2016), "On the theory and practice
of privacy-preserving Bayesian data analysis", UAI: Laplace mechanism on the sufficient
statistics vs one-posterior sampling (OPS) for the truncated beta-Bernoulli model.

* :func:`figure1` -- Figure 1: the non-private posterior, the OPS target (T = 2.77) and 30
  Laplace-mechanism posteriors for one data set (ε = 1, p = 0.3, a0 = 0.2, N = 20), as
  densities on a grid estimated from the Stan draws next to the closed-form densities.
* :func:`figure2` -- Figure 2: L1 error |p̂ − p| of one private posterior draw vs N
  (p = 0.1, a0 = 0.05, ε = 0.1).
* :func:`theorems` -- Theorems 4 and 5: N·E[(draw − p0)²] → 2/I (Laplace, non-private)
  and (1 + T)/I (OPS), I = 1/(p0(1 − p0)) the Fisher information of p.
* :func:`adversarial` -- Supplement A: an adversary greedily adds data points to push the
  data-set-specific ε of plain posterior sampling (T = 1, a0 = 0.1) towards 2Δ.
* :func:`reproduce` -- all four, written as CSV + JSON sidecars + PNG figures.

Every Stan run is batched: one run per (method, setting) holds all R repeats as R
independent components of a product target, so each component is an exact draw from its
own posterior (the models' ``R`` data dimension), instead of R separate Stan processes.

The priors are Beta(1, 1) (the paper does not state them). Seeds give reproducibility,
not security.
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from ..._validation import check_epsilon, check_int, check_positive, check_random_state, check_sampler
from ...models.foulds2016 import BetaBernoulli, BetaBernoulliOPS, log_likelihood_sensitivity, ops_temperature
from ...sampling.posterior import Thresholds
from ...run.runner import Task, make_executor, run_tasks, task_seeds, write_results
from ...run.study import Study

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="foulds2016/beta_bernoulli", version=1)

PAPER = "foulds2016"
METHODS = ("non-private", "laplace", "ops")

#: NUTS settings of the batched runs of the non-private and Laplace posteriors (R up to
#: 1000 components). pystan moves every draw of every component through (gzipped) JSON, so
#: a run costs ~ R x chains x (warm-up + draws). Two chains keep split R-hat meaningful (4
#: half-chains); 300 warm-up iterations are plenty for a product of unimodal 1-d targets
#: (the diagonal metric adapts to each component's scale). These draws gate nothing (the
#: Laplace posterior is post-processing), so 500 per chain suffice for one exact draw per
#: component; their R-hat/ESS are still reported (with 1000 components and 500 draws per
#: chain, R-hat's own sampling noise puts a few per cent of components just above 1.01).
BATCH_SAMPLER: dict[str, int] = {"chains": 2, "warmup": 300, "draws": 500}
#: NUTS settings of the batched OPS runs: a draw is released only if its component passes
#: split R-hat <= 1.01 and bulk/tail ESS >= 100 per chain; 1000 draws per chain keep
#: R-hat's sampling noise small enough that only ~0.5 % of 1000 components are refused.
OPS_SAMPLER: dict[str, int] = {"chains": 2, "warmup": 300, "draws": 1000}
#: NUTS settings of Figure 1 (R ≤ 30): many draws for smooth density estimates.
FIGURE1_SAMPLER: dict[str, int] = {"chains": 4, "warmup": 1000, "draws": 2500}

#: sizes of the two modes of :func:`reproduce`
QUICK: dict[str, Any] = {
    "figure2_ns": (10, 100, 1000, 10000),
    "figure2_repeats": 100,
    "theorems_repeats": 300,
    "adversarial_n_max": 1000,
}
FULL: dict[str, Any] = {
    "figure2_ns": (10, 40, 160, 630, 2500, 10000),
    "figure2_repeats": 1000,
    "theorems_repeats": 1000,
    "adversarial_n_max": 5000,
}


def _method_samplers(sampler: Mapping[str, Any] | None, ops_sampler: Mapping[str, Any] | None) -> dict[str, dict[str, int]]:
    """Sampler settings per method: ``sampler`` over :data:`BATCH_SAMPLER` for the non-private
    and Laplace runs, ``ops_sampler`` over :data:`OPS_SAMPLER` for OPS (>= 2 chains: R-hat)."""
    samplers = {m: check_sampler(sampler, BATCH_SAMPLER) for m in METHODS}
    samplers["ops"] = check_sampler(ops_sampler, OPS_SAMPLER)
    return samplers


def _check_prob(p: Any, name: str) -> float:
    p = check_positive(p, name)
    if not p < 1:
        raise ValueError(f"{name} must be in (0, 1), got {p!r}")
    return p


def _check_a0(a0: Any) -> float:
    a0 = check_positive(a0, "a0")
    if not a0 < 0.5:
        raise ValueError(f"a0 must be in (0, 0.5), got {a0!r}")
    return a0


# ------------------------------------------------------------------ closed forms
def _betacf(a: float, b: float, x: float, *, max_iter: int = 100_000, tol: float = 1e-15) -> float:
    """Continued fraction of the regularised incomplete beta function (modified Lentz;
    Press et al., Numerical Recipes, Sec. 6.4). Converges fast for x < (a+1)/(a+b+2)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, max_iter + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < tol:
            return h
    raise RuntimeError(f"incomplete beta continued fraction did not converge for a={a}, b={b}, x={x}")


def log_betainc(a: float, b: float, x: float) -> float:
    """log I_x(a, b), the log of the regularised incomplete beta function, also where
    ``scipy.special.betainc`` underflows (continued fraction with a log-space prefactor)."""
    if x <= 0.0:
        return -math.inf
    if x >= 1.0:
        return 0.0
    v = float(special.betainc(a, b, x))
    if v > 1e-250 or x >= (a + 1.0) / (a + b + 2.0):
        return math.log(v) if v > 0 else -math.inf
    log_front = a * math.log(x) + b * math.log1p(-x) - math.log(a) - float(special.betaln(a, b))
    return log_front + math.log(_betacf(a, b, x))


def log_betaincc(a: float, b: float, x: float) -> float:
    """log(1 − I_x(a, b)) = log I_{1−x}(b, a)."""
    return log_betainc(b, a, 1.0 - x)


def log_truncated_beta_mass(a: float, b: float, lo: float, hi: float) -> float:
    """log(I_hi(a, b) − I_lo(a, b)): the log probability that Beta(a, b) lies in [lo, hi],
    computed without cancellation or underflow (the complement side is used when the mass
    lies above ``lo``'s upper tail)."""
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"need 0 <= lo < hi <= 1, got lo={lo!r}, hi={hi!r}")
    l_lo = log_betainc(a, b, lo)
    if l_lo < math.log(0.5):
        l_hi = log_betainc(a, b, hi)
        return l_hi + math.log1p(-math.exp(l_lo - l_hi))
    lc_lo = log_betaincc(a, b, lo)
    lc_hi = log_betaincc(a, b, hi)
    return lc_lo + math.log1p(-math.exp(lc_hi - lc_lo))


def tempered_beta_parameters(
    successes: float, failures: float, *, temperature: float, prior_alpha: float = 1.0, prior_beta: float = 1.0
) -> tuple[float, float]:
    """(a', b') of the tempered posterior ∝ [p^(n+ + α − 1) (1 − p)^(n− + β − 1)]^(1/T)
    = Beta(a', b') kernel, a' = (n+ + α − 1)/T + 1, b' = (n− + β − 1)/T + 1 (Eq. 14)."""
    return (
        (successes + prior_alpha - 1.0) / temperature + 1.0,
        (failures + prior_beta - 1.0) / temperature + 1.0,
    )


def log_normaliser(
    successes: float, failures: float, *, a0: float, temperature: float = 1.0, prior_alpha: float = 1.0, prior_beta: float = 1.0
) -> float:
    """log Z of the truncated tempered beta-Bernoulli target on [a0, 1 − a0]:
    log ∫ [p^(n+ + α − 1) (1 − p)^(n− + β − 1)]^(1/T) dp = log B(a', b') + log(I_{1−a0} − I_{a0})."""
    a, b = tempered_beta_parameters(successes, failures, temperature=temperature, prior_alpha=prior_alpha, prior_beta=prior_beta)
    return float(special.betaln(a, b)) + log_truncated_beta_mass(a, b, a0, 1.0 - a0)


def ops_log_density(
    p: Any, successes: float, failures: float, *, a0: float, temperature: float, prior_alpha: float = 1.0, prior_beta: float = 1.0
) -> np.ndarray:
    """Log density of the OPS target (truncated tempered Beta, Eq. 14-15) at ``p``;
    ``-inf`` outside [a0, 1 − a0]."""
    p = np.asarray(p, dtype=float)
    a, b = tempered_beta_parameters(successes, failures, temperature=temperature, prior_alpha=prior_alpha, prior_beta=prior_beta)
    inside = (p >= a0) & (p <= 1.0 - a0)
    out = np.full(p.shape, -np.inf)
    out[inside] = stats.beta.logpdf(p[inside], a, b) - log_truncated_beta_mass(a, b, a0, 1.0 - a0)
    return out


def ops_cdf(
    p: Any, successes: float, failures: float, *, a0: float, temperature: float, prior_alpha: float = 1.0, prior_beta: float = 1.0
) -> np.ndarray:
    """CDF of the OPS target (for goodness-of-fit tests of the Stan draws)."""
    a, b = tempered_beta_parameters(successes, failures, temperature=temperature, prior_alpha=prior_alpha, prior_beta=prior_beta)
    dist = stats.beta(a, b)
    lo, hi = dist.cdf(a0), dist.cdf(1.0 - a0)
    return np.clip((dist.cdf(np.clip(np.asarray(p, dtype=float), a0, 1.0 - a0)) - lo) / (hi - lo), 0.0, 1.0)


def _bandwidth(z: np.ndarray) -> float:
    """Silverman's rule of thumb, 0.9 min(sd, IQR/1.34) n^(-1/5)."""
    sd = float(np.std(z, ddof=1))
    iqr = float(np.subtract(*np.percentile(z, [75, 25])))
    spread = min(sd, iqr / 1.34) if iqr > 0 else sd
    return 0.9 * spread * len(z) ** -0.2


def _binned_kde(z: np.ndarray, points: np.ndarray, h: float, bins: int = 2048) -> np.ndarray:
    """Gaussian KDE of ``z`` at ``points`` from ``bins`` linear bins (bin width << h)."""
    lo, hi = float(z.min()), float(z.max())
    if hi <= lo:
        hi = lo + 1e-12
    counts, edges = np.histogram(z, bins=bins, range=(lo, hi))
    centres = 0.5 * (edges[:-1] + edges[1:])
    keep = counts > 0
    u = (points[:, None] - centres[None, keep]) / h
    return (np.exp(-0.5 * u * u) @ counts[keep]) / (len(z) * h * math.sqrt(2 * math.pi))


def kde_density(draws: np.ndarray, grid: np.ndarray, lo: float = 0.0, hi: float = 1.0) -> np.ndarray:
    """Density of ``draws`` of a probability on ``grid`` (zero outside [lo, hi]).

    On the full support (lo = 0, hi = 1): a Gaussian KDE of logit(draws), transformed back
    (f(p) = f_logit(logit p) / (p(1 − p))), which follows a Beta density's steep rise at 0 or
    1. On a truncated support: a Gaussian KDE in p reflected at ``lo`` and ``hi`` (the
    truncated density is positive at the truncation points, so no mass is lost there).
    Binned (2048 bins), so it costs O(grid × bins) whatever the number of draws.
    """
    draws = np.asarray(draws, dtype=float).ravel()
    grid = np.asarray(grid, dtype=float)
    dens = np.zeros_like(grid)
    inside = (grid > lo) & (grid < hi) if (lo, hi) == (0.0, 1.0) else (grid >= lo) & (grid <= hi)
    if (lo, hi) == (0.0, 1.0):
        z = special.logit(np.clip(draws, 1e-300, 1 - 1e-16))
        g = grid[inside]
        dens[inside] = _binned_kde(z, special.logit(g), _bandwidth(z)) / (g * (1 - g))
    else:
        g = grid[inside]
        h = _bandwidth(draws)
        dens[inside] = (_binned_kde(draws, g, h) + _binned_kde(draws, 2 * lo - g, h)
                        + _binned_kde(draws, 2 * hi - g, h))
    return dens


# ------------------------------------------------------------------ data and draws
def bernoulli_data(seed: Any, repeats: int, n_obs: int, p: float) -> np.ndarray:
    """``repeats`` independent data sets of ``n_obs`` Bernoulli(p) draws, shape (R, N), int8."""
    rng = check_random_state(seed)
    return (rng.random((repeats, n_obs)) < p).astype(np.int8)


def _one_draw_per_component(draws: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """From draws (chains, iterations, R), one draw per component at an independently
    chosen (chain, iteration)."""
    chains, iters, r = draws.shape
    c = rng.integers(chains, size=r)
    i = rng.integers(iters, size=r)
    return draws[c, i, np.arange(r)]


def _diagnostics(post: Any, chains: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-component split R-hat, min(bulk, tail) ESS and the verdict of the default
    thresholds of :class:`~pystanprivacy.sampling.posterior.Thresholds`."""
    t = Thresholds()
    rhat = np.atleast_1d(post.rhat()["p"])
    ess = np.minimum(np.atleast_1d(post.ess_bulk()["p"]), np.atleast_1d(post.ess_tail()["p"]))
    ok = (rhat <= t.max_rhat) & (ess >= t.min_ess_per_chain * chains) & np.isfinite(rhat)
    ok &= post.num_divergences <= t.max_divergences
    return rhat, ess, ok


@STUDY.task(programs=("foulds2016/beta_bernoulli", "foulds2016/beta_bernoulli_ops"))
def one_draw_task(
    *,
    method: str,
    n_obs: int,
    repeats: int,
    p: float,
    a0: float,
    epsilon: float,
    data_seed: Any,
    sampler: Mapping[str, int],
    prior_alpha: float = 1.0,
    prior_beta: float = 1.0,
    diagnostics: bool = True,
    seed: Any = None,
) -> pd.DataFrame:
    """One released draw of p for each of ``repeats`` data sets of size ``n_obs``, from
    ONE batched Stan run of ``method``:

    * ``"non-private"`` -- one draw from the exact posterior Beta(n+ + α, n− + β);
    * ``"laplace"`` -- Laplace mechanism on (n+, n−) (Eq. 16-17), one draw from the
      posterior given the released counts;
    * ``"ops"`` -- one draw from the truncated tempered posterior at T = max(1, 2Δ/ε)
      (Eq. 14-15) via :meth:`BetaBernoulliOPS.sample_batch`; a draw whose component failed
      the convergence checks is refused (``released`` False, ``draw`` NaN).

    The data come from ``data_seed`` (shared by the methods of one setting, so methods
    are compared on the same data sets); the mechanism and Stan from ``seed``.
    Returns one row per repeat: the ``draw``, its absolute and squared errors,
    ``released`` (False only for refused OPS draws), ``converged`` (the per-component
    R-hat/ESS verdict; missing when ``diagnostics`` is off), ``rhat``, ``ess`` and the
    wall time of the run (``stan_seconds``).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    rng = check_random_state(seed)
    x = bernoulli_data(data_seed, repeats, n_obs, p)
    temperature = float("nan")
    rhat = ess = np.full(repeats, np.nan)
    start = time.perf_counter()
    if method == "ops":
        ops = BetaBernoulliOPS(a0=a0, prior_alpha=prior_alpha, prior_beta=prior_beta)
        temperature = ops.temperature(epsilon)
        batch = ops.sample_batch(x, epsilon=epsilon, seed=rng, **sampler)
        draws, released = batch.params["p"], batch.released_mask
        converged = pd.array(released, dtype="boolean")
    else:
        model = BetaBernoulli(prior_alpha=prior_alpha, prior_beta=prior_beta)
        if method == "non-private":
            post = model.fit_nonprivate(x, seed=rng, **sampler)
        else:
            release = model.release(x, epsilon=epsilon, seed=rng)
            post = model.fit(release, seed=rng, **sampler)
        draws = _one_draw_per_component(post.draws("p", combine_chains=False), rng)
        # every draw is released: the Laplace posterior is post-processing of an ε-DP
        # release (and the non-private one is the baseline); convergence is reported only
        released = np.ones(repeats, dtype=bool)
        if diagnostics:
            rhat, ess, ok = _diagnostics(post, sampler["chains"])
            converged = pd.array(ok, dtype="boolean")
        else:
            converged = pd.array([pd.NA] * repeats, dtype="boolean")  # not checked
    seconds = time.perf_counter() - start
    return pd.DataFrame(
        {
            "method": method,
            "n_obs": n_obs,
            "repeat": np.arange(repeats),
            "p_true": p,
            "epsilon": epsilon if method != "non-private" else np.inf,
            "a0": a0 if method == "ops" else np.nan,
            "temperature": temperature,
            "draw": draws,
            "abs_error": np.abs(draws - p),
            "sq_error": (draws - p) ** 2,
            "released": released,
            "converged": converged,
            "rhat": rhat,
            "ess": ess,
            "stan_seconds": seconds,
        }
    )


# ------------------------------------------------------------------ Figure 1
@STUDY.task(programs=("foulds2016/beta_bernoulli", "foulds2016/beta_bernoulli_ops"))
def figure1_task(
    *,
    curve: str,
    n_obs: int,
    p: float,
    a0: float,
    epsilon: float,
    n_laplace: int,
    grid_size: int,
    data_seed: Any,
    sampler: Mapping[str, int],
    prior_alpha: float = 1.0,
    prior_beta: float = 1.0,
    seed: Any = None,
) -> pd.DataFrame:
    """The density rows of one curve kind of Figure 1 (``"non-private"``, ``"ops"`` or
    ``"laplace"`` -- the latter ``n_laplace`` posteriors, one Stan run)."""
    rng = check_random_state(seed)
    x = bernoulli_data(data_seed, 1, n_obs, p)[0]
    counts = np.array([x.sum(), n_obs - x.sum()], dtype=float)
    grid = (np.arange(grid_size) + 0.5) / grid_size  # bin midpoints: no p = 0 or 1
    rows = []
    if curve == "ops":
        ops = BetaBernoulliOPS(a0=a0, prior_alpha=prior_alpha, prior_beta=prior_beta)
        temperature = ops.temperature(epsilon)
        batch = ops.sample_batch(x[None, :], epsilon=epsilon, seed=rng, keep_posterior=True, **sampler)
        draws = batch.posterior.draws("p")[:, 0]
        stan = kde_density(draws, grid, a0, 1 - a0)
        exact = np.exp(ops_log_density(grid, *counts, a0=a0, temperature=temperature, prior_alpha=prior_alpha, prior_beta=prior_beta))
        rows.append(dict(curve=curve, replicate=0, successes=counts[0], failures=counts[1], temperature=temperature,
                         converged=bool(batch.released_mask[0]), p_grid=grid, density_stan=stan, density_exact=exact,
                         draws_mean=draws.mean()))
    else:
        model = BetaBernoulli(prior_alpha=prior_alpha, prior_beta=prior_beta)
        if curve == "non-private":
            post = model.fit_nonprivate(x, seed=rng, **sampler)
            stat = counts[None, :]
        elif curve == "laplace":
            release = model.release(np.tile(x, (n_laplace, 1)), epsilon=epsilon, seed=rng)
            post = model.fit(release, seed=rng, **sampler)
            stat = np.atleast_2d(release.values)
        else:
            raise ValueError(f"curve must be 'non-private', 'ops' or 'laplace', got {curve!r}")
        all_draws = post.draws("p")  # (draws, R)
        _, _, ok = _diagnostics(post, sampler["chains"])
        ab = model.beta_parameters(stat)
        for r in range(stat.shape[0]):
            rows.append(dict(curve=curve, replicate=r, successes=stat[r, 0], failures=stat[r, 1], temperature=1.0,
                             converged=bool(ok[r]), p_grid=grid,
                             density_stan=kde_density(all_draws[:, r], grid),
                             density_exact=stats.beta.pdf(grid, ab[r, 0], ab[r, 1]),
                             draws_mean=all_draws[:, r].mean()))
    frames = [
        pd.DataFrame(
            {
                "curve": r["curve"],
                "replicate": r["replicate"],
                "p": r["p_grid"],
                "density_stan": r["density_stan"],
                "density_exact": r["density_exact"],
                "successes": r["successes"],
                "failures": r["failures"],
                "temperature": r["temperature"],
                "draws_mean": r["draws_mean"],
                "converged": r["converged"],
            }
        )
        for r in rows
    ]
    out = pd.concat(frames, ignore_index=True)
    out.insert(2, "n_obs", n_obs)
    out["p_true"] = p
    out["epsilon"] = epsilon if curve != "non-private" else np.inf
    out["a0"] = a0 if curve == "ops" else np.nan
    return out


def figure1(
    *,
    epsilon: float = 1.0,
    p: float = 0.3,
    a0: float = 0.2,
    n_obs: int = 20,
    n_laplace: int = 30,
    grid_size: int = 200,
    prior_alpha: float = 1.0,
    prior_beta: float = 1.0,
    sampler: Mapping[str, int] | None = None,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Figure 1: approximate posteriors for one data set of N = 20 Bernoulli(0.3) draws.

    Curves: the non-private posterior; the OPS target, truncated to [a0, 1 − a0] at
    T = max(1, 2 log((1 − a0)/a0)/ε) = 2.77 for the defaults; and ``n_laplace`` Laplace
    posteriors, each from its own noise draw on the same data (one release of the data set
    tiled ``n_laplace`` times, one Stan fit with R = ``n_laplace``).

    Returns
    -------
    pandas.DataFrame
        One row per curve × replicate × grid point ``p``: ``density_stan`` (reflected
        Gaussian KDE of the Stan draws) and ``density_exact`` (closed form: Beta, or the
        truncated tempered Beta via scipy), the counts the curve used, ``temperature``,
        ``converged`` (split R-hat / ESS checks) and the settings.
    """
    epsilon = check_epsilon(epsilon)
    p = _check_prob(p, "p")
    a0 = _check_a0(a0)
    n_obs = check_int(n_obs, "n_obs", minimum=1)
    n_laplace = check_int(n_laplace, "n_laplace", minimum=1)
    grid_size = check_int(grid_size, "grid_size", minimum=2)
    sampler = check_sampler(sampler, FIGURE1_SAMPLER)
    data_seed = task_seeds(seed, 1, stream=f"{PAPER}/figure1/data")[0]
    common = dict(n_obs=n_obs, p=p, a0=a0, epsilon=epsilon, n_laplace=n_laplace, grid_size=grid_size,
                  data_seed=data_seed, sampler=sampler, prior_alpha=prior_alpha, prior_beta=prior_beta)
    tasks = [Task(figure1_task, dict(curve=c, **common), label=f"figure 1 {c}") for c in ("non-private", "ops", "laplace")]
    return run_tasks(tasks, seed=seed, stream=f"{PAPER}/figure1", workers=workers, executor=executor,
                     progress=progress, desc="Foulds 2016 figure 1")


# ------------------------------------------------------------------ Figure 2
def figure2(
    *,
    ns: Sequence[int] = FULL["figure2_ns"],
    repeats: int = 1000,
    p: float = 0.1,
    a0: float = 0.05,
    epsilon: float = 0.1,
    methods: Sequence[str] = METHODS,
    prior_alpha: float = 1.0,
    prior_beta: float = 1.0,
    sampler: Mapping[str, int] | None = None,
    ops_sampler: Mapping[str, int] | None = None,
    diagnostics: bool = True,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Figure 2: L1 error |p̂ − p| of ONE private posterior draw vs the number of
    observations N (p = 0.1, a0 = 0.05, ε = 0.1, so T = 2 log 19 / 0.1 = 58.9 for OPS).

    One batched Stan run per (method, N) with R = ``repeats`` data sets; the methods see
    the same data sets at each N. Returns one row per method × N × repeat (see
    :func:`one_draw_task`); refused OPS draws have ``released`` False and NaN errors.
    :func:`summarise_figure2` gives the mean error per method × N with the refusal counts.

    ``sampler`` (chains/warmup/draws; default :data:`BATCH_SAMPLER`) is used for the
    non-private and Laplace runs, ``ops_sampler`` (default :data:`OPS_SAMPLER`) for OPS;
    ``diagnostics`` adds per-component R-hat/ESS of the non-private and Laplace runs
    (informational: those draws are not gated).
    """
    p = _check_prob(p, "p")
    a0 = _check_a0(a0)
    epsilon = check_epsilon(epsilon)
    repeats = check_int(repeats, "repeats", minimum=2)
    ns = [check_int(n, "ns[i]", minimum=1) for n in ns]
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"methods must be among {list(METHODS)}, got {m!r}")
    samplers = _method_samplers(sampler, ops_sampler)
    data_seeds = task_seeds(seed, len(ns), stream=f"{PAPER}/figure2/data")
    tasks = [
        Task(
            one_draw_task,
            dict(method=m, n_obs=n, repeats=repeats, p=p, a0=a0, epsilon=epsilon, data_seed=ds, sampler=samplers[m],
                 prior_alpha=prior_alpha, prior_beta=prior_beta, diagnostics=diagnostics),
            label=f"figure 2 {m} N={n}",
        )
        for n, ds in zip(ns, data_seeds)
        for m in methods
    ]
    return run_tasks(tasks, seed=seed, stream=f"{PAPER}/figure2", workers=workers, executor=executor,
                     progress=progress, desc="Foulds 2016 figure 2")


def summarise_figure2(table: pd.DataFrame) -> pd.DataFrame:
    """Mean L1 error (and its standard error, median) per method × N over the released
    draws, with the numbers of released and refused draws."""
    rows = []
    for (method, n_obs), g in table.groupby(["method", "n_obs"], sort=False):
        err = g.loc[g["released"].astype(bool), "abs_error"]
        n = len(err)
        rows.append(
            {
                "method": method,
                "n_obs": n_obs,
                "mean_abs_error": err.mean(),
                "se_abs_error": err.std(ddof=1) / math.sqrt(n) if n > 1 else np.nan,
                "median_abs_error": err.median(),
                "n_released": n,
                "n_refused": int((~g["released"].astype(bool)).sum()),
                "n_not_converged": int((g["converged"] == False).sum()),  # noqa: E712 (NA: not checked)
                "stan_seconds": g["stan_seconds"].iloc[0],
            }
        )
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ Theorems 4-5
def theorems(
    *,
    p0: float = 0.3,
    a0: float = 0.05,
    epsilon: float = 1.0,
    n_obs: int = 10_000,
    repeats: int = 1000,
    prior_alpha: float = 1.0,
    prior_beta: float = 1.0,
    sampler: Mapping[str, int] | None = None,
    ops_sampler: Mapping[str, int] | None = None,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Theorems 4 and 5 at large N: N·E[(draw − p0)²] of one draw vs 2·p0(1 − p0)
    (non-private and Laplace: ARE 2, i.e. 2/I) and (1 + T)·p0(1 − p0) (OPS: ARE 1 + T),
    I = 1/(p0(1 − p0)) the Fisher information of p.

    Choice of settings: p0 = 0.3, a0 = 0.05, ε = 1 (T = 2 log 19 = 5.89, so the two
    predictions 2 and 6.89 (× p0(1 − p0)) are far apart) and N = 10⁴. The OPS draws then
    have sd ≈ sqrt((1 + T) p0(1 − p0)/N) ≈ 0.012, and the truncation point a0 = 0.05 is
    more than 20 sd from p0, so the truncation does not bias OPS; the O(1/N) terms (prior,
    mode shift of the tempered Beta, Laplace noise of variance 8/ε² on counts of order N)
    change N·E[(draw − p0)²] by well under 1 %. (The settings of Figure 2, ε = 0.1 and
    a0 = 0.05, would give T = 58.9 and a truncation only ~2 sd from p0 = 0.1.)

    Returns one row per method × repeat (see :func:`one_draw_task`); summarise with
    :func:`summarise_theorems`.
    """
    p0 = _check_prob(p0, "p0")
    a0 = _check_a0(a0)
    epsilon = check_epsilon(epsilon)
    n_obs = check_int(n_obs, "n_obs", minimum=1)
    repeats = check_int(repeats, "repeats", minimum=2)
    samplers = _method_samplers(sampler, ops_sampler)
    data_seed = task_seeds(seed, 1, stream=f"{PAPER}/theorems/data")[0]
    tasks = [
        Task(
            one_draw_task,
            dict(method=m, n_obs=n_obs, repeats=repeats, p=p0, a0=a0, epsilon=epsilon, data_seed=data_seed,
                 sampler=samplers[m], prior_alpha=prior_alpha, prior_beta=prior_beta, diagnostics=False),
            label=f"theorems {m}",
        )
        for m in METHODS
    ]
    return run_tasks(tasks, seed=seed, stream=f"{PAPER}/theorems", workers=workers, executor=executor,
                     progress=progress, desc="Foulds 2016 theorems 4-5")


def summarise_theorems(table: pd.DataFrame) -> pd.DataFrame:
    """Per method: ``estimate`` = N·mean((draw − p0)²) over released draws, its Monte-Carlo
    standard error ``mc_se`` = N·sd/√n, the asymptotic ``theory`` value (2·p0(1 − p0), or
    (1 + T)·p0(1 − p0) for OPS), ``ratio`` = estimate/theory, ``z`` = (estimate − theory)/mc_se,
    and the ARE estimate/(p0(1 − p0))."""
    rows = []
    for method, g in table.groupby("method", sort=False):
        n_obs = int(g["n_obs"].iloc[0])
        p0 = float(g["p_true"].iloc[0])
        sq = g.loc[g["released"].astype(bool), "sq_error"].to_numpy()
        k = len(sq)
        est = n_obs * sq.mean()
        se = n_obs * sq.std(ddof=1) / math.sqrt(k)
        info_inv = p0 * (1 - p0)
        if method == "ops":
            temperature = float(g["temperature"].iloc[0])
            are, label = 1.0 + temperature, "(1+T) p0(1-p0) [Theorem 5]"
        else:
            temperature = float("nan")
            are, label = 2.0, "2 p0(1-p0) [Theorem 4]" if method == "laplace" else "2 p0(1-p0) [posterior sampling]"
        theory = are * info_inv
        rows.append(
            dict(method=method, n_obs=n_obs, p0=p0, temperature=temperature, n_released=k,
                 n_refused=int((~g["released"]).sum()), estimate=est, mc_se=se, theory=theory, theory_label=label,
                 ratio=est / theory, z=(est - theory) / se, are_estimate=est / info_inv, are_theory=are)
        )
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ Supplement A
def local_epsilon(
    successes: int,
    failures: int,
    *,
    a0: float,
    temperature: float = 1.0,
    prior_alpha: float = 1.0,
    prior_beta: float = 1.0,
    grid: np.ndarray | None = None,
) -> float:
    """Data-set-specific ("local") ε of one draw from the truncated tempered
    beta-Bernoulli posterior of a data set with counts (n+, n−) (Supplement A):

        max over replace-one neighbours X' (x → x′ with x ≠ x′) and p on ``grid`` of
        |log f(p | X) − log f(p | X')|,

    log f(p | X) = [(n+ + α − 1) log p + (n− + β − 1) log(1 − p)]/T − log Z(X), with the
    truncated Beta normalising constants Z in log space (:func:`log_normaliser`).
    ``grid`` defaults to 2001 points on [a0, 1 − a0] (the maximum over p of the log-ratio,
    which is monotone in p, is attained at an end point, which the grid contains).
    Returns 0 for the empty data set (it has no neighbours).
    """
    if grid is None:
        grid = np.linspace(a0, 1.0 - a0, 2001)
    log_p, log_q = np.log(grid), np.log1p(-grid)
    kw = dict(a0=a0, temperature=temperature, prior_alpha=prior_alpha, prior_beta=prior_beta)
    log_z = log_normaliser(successes, failures, **kw)
    best = 0.0
    neighbours = []
    if successes >= 1:
        neighbours.append((successes - 1, failures + 1))  # a success replaced by a failure
    if failures >= 1:
        neighbours.append((successes + 1, failures - 1))  # a failure replaced by a success
    for s2, f2 in neighbours:
        diff = ((successes - s2) * log_p + (failures - f2) * log_q) / temperature - (
            log_z - log_normaliser(s2, f2, **kw)
        )
        best = max(best, float(np.max(np.abs(diff))))
    return best


def adversarial(
    *,
    a0: float = 0.1,
    temperature: float = 1.0,
    n_max: int = 1000,
    grid_size: int = 2001,
    prior_alpha: float = 1.0,
    prior_beta: float = 1.0,
) -> pd.DataFrame:
    """Supplement A: an adversary greedily adds a success or a failure to the data set,
    whichever gives the larger data-set-specific ε (:func:`local_epsilon`; ties go to the
    failure), for plain posterior sampling (T = 1) from the Beta(α, β) prior truncated to
    [a0, 1 − a0]. Deterministic (no seed).

    Returns one row per N = 1 … ``n_max``: the counts after the step, the choice, the
    local ε of both candidates and of the chosen data set, and the worst case
    ``worst_case_epsilon`` = 2Δ/T with Δ = log((1 − a0)/a0) (= 2 log 9 ≈ 4.39 for a0 = 0.1).
    """
    a0 = _check_a0(a0)
    temperature = check_positive(temperature, "temperature")
    if temperature < 1:
        raise ValueError(f"temperature must be >= 1, got {temperature!r}")
    n_max = check_int(n_max, "n_max", minimum=1)
    grid = np.linspace(a0, 1.0 - a0, check_int(grid_size, "grid_size", minimum=2))
    kw = dict(a0=a0, temperature=temperature, prior_alpha=prior_alpha, prior_beta=prior_beta, grid=grid)
    worst = 2.0 * log_likelihood_sensitivity(a0) / temperature
    s = f = 0
    rows = []
    for n in range(1, n_max + 1):
        eps_s = local_epsilon(s + 1, f, **kw)
        eps_f = local_epsilon(s, f + 1, **kw)
        if eps_s > eps_f:
            s, choice, eps = s + 1, "success", eps_s
        else:
            f, choice, eps = f + 1, "failure", eps_f
        rows.append((n, choice, s, f, eps_s, eps_f, eps))
    out = pd.DataFrame(rows, columns=["n_obs", "added", "successes", "failures", "epsilon_if_success",
                                      "epsilon_if_failure", "local_epsilon"])
    out["worst_case_epsilon"] = worst
    out["a0"] = a0
    out["temperature"] = temperature
    return out


# ------------------------------------------------------------------ reproduce
#: the parts of :func:`reproduce`: the beta-Bernoulli study, the HMM war-logs study
#: (Figures 3-6) and the 10-state occupancy claim of Sec. 5 (:mod:`.occupancy`); then the studies
#: that REPRODUCTION.md's verdicts also rest on (:mod:`.supplementary`)
PARTS = ("beta_bernoulli", "hmm", "hmm_occupancy", "ops_states", "dispersed", "heldout_dispersed", "ops_gate")


def reproduce(
    out_dir: str | Path,
    *,
    quick: bool = True,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    data_path: str | Path | None = None,
    parts: tuple[str, ...] = PARTS,
) -> dict[str, pd.DataFrame]:
    """Run every experiment of the paper: the beta-Bernoulli study (Sec. 3, supplement A)
    and the naive-Bayes HMM war-logs case study (Sec. 5, supplement E;
    :func:`pystanprivacy.experiments.foulds2016.hmm.reproduce`, on synthetic war logs or,
    with ``data_path``, on a real war-logs CSV file). ``parts`` selects a subset of
    :data:`PARTS`: ``beta_bernoulli``, ``hmm``, ``hmm_occupancy``, then the studies the verdicts
    F5-F8 also rest on (:mod:`.supplementary`, on the study's own logs, never ``data_path``):
    ``ops_states`` (Figure 7), ``dispersed`` (F5, F8 from dispersed starts, in
    ``out_dir/dispersed``), ``heldout_dispersed`` (F6 from dispersed starts, in
    ``out_dir/heldout_dispersed``) and ``ops_gate`` (the OPS gate on non-mixing chains, in
    ``out_dir/ops_gate``).

    The beta-Bernoulli study writes ``<out_dir>/foulds2016_<name>.csv``
    with a JSON sidecar each (arguments, seed, versions, Stan backend) and the figures
    ``foulds2016_{figure1,figure2,theorems,adversarial}.png``; the HMM study and the
    10-state occupancy claim (``hmm_occupancy``, :mod:`.occupancy`) write
    ``foulds2016_hmm_*`` files (their tables are returned as ``hmm_<name>``).

    ``quick=True``: 100 repeats on 4 values of N for Figure 2, 300 for the theorems and an
    adversary up to N = 1000 (about a minute on 2 cores). ``quick=False``: the paper's
    1000 repeats on 6 values of N (10 to 10⁴), 1000 for the theorems and N up to 5000.

    Returns the tables by name (``figure1``, ``figure2``, ``figure2_summary``,
    ``theorems``, ``theorems_summary``, ``adversarial``, ``hmm_*``).
    """
    parts = tuple(parts)
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise ValueError(f"parts must be a non-empty subset of {PARTS}, got {parts!r}")
    if data_path is not None and not {"hmm", "hmm_occupancy"} & set(parts):
        raise ValueError("data_path is a war-logs file for the HMM study; it needs 'hmm' or 'hmm_occupancy' in parts")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables: dict[str, pd.DataFrame] = {}
    if "beta_bernoulli" in parts:
        tables.update(_reproduce_beta_bernoulli(out, quick=quick, seed=seed, workers=workers, progress=progress))
    if "hmm" in parts:
        from .hmm import reproduce as reproduce_hmm

        hmm = reproduce_hmm(out, quick=quick, seed=seed, workers=workers, progress=progress, data_path=data_path)
        tables.update({f"hmm_{name}": table for name, table in hmm.items()})
    if "hmm_occupancy" in parts:
        from .occupancy import reproduce as reproduce_occupancy

        occ = reproduce_occupancy(out, quick=quick, seed=seed, workers=workers, progress=progress, data_path=data_path)
        tables.update({f"hmm_{name}": table for name, table in occ.items()})
    from .supplementary import SUPPLEMENTARY_PARTS

    for part, run_part in SUPPLEMENTARY_PARTS.items():  # after part hmm, whose held-out table one reads
        if part in parts:
            tables.update(run_part(out, quick=quick, seed=seed, workers=workers, progress=progress))
    return tables


def _reproduce_beta_bernoulli(out: Path, *, quick: bool, seed: int, workers: int, progress: bool) -> dict[str, pd.DataFrame]:
    """The beta-Bernoulli study of :func:`reproduce`."""
    from . import figures as plots

    size = QUICK if quick else FULL
    common = dict(seed=seed, quick=quick, workers=workers)
    tables: dict[str, pd.DataFrame] = {}
    timings: dict[str, float] = {}
    with make_executor(workers) as ex:
        run = dict(seed=seed, workers=workers, executor=ex, progress=progress)

        t = time.perf_counter()
        f1_args = dict(epsilon=1.0, p=0.3, a0=0.2, n_obs=20, n_laplace=30, grid_size=200, sampler=dict(FIGURE1_SAMPLER))
        tables["figure1"] = figure1(**f1_args, **run)
        timings["figure1"] = time.perf_counter() - t
        write_results(out, f"{PAPER}_figure1", tables["figure1"], {**f1_args, **common, "stream": f"{PAPER}/figure1",
                      "seconds": timings["figure1"]})
        plots.figure1(tables["figure1"], out / f"{PAPER}_figure1.png")

        t = time.perf_counter()
        f2_args = dict(ns=list(size["figure2_ns"]), repeats=size["figure2_repeats"], p=0.1, a0=0.05, epsilon=0.1,
                       methods=list(METHODS), sampler=dict(BATCH_SAMPLER), ops_sampler=dict(OPS_SAMPLER))
        tables["figure2"] = figure2(**f2_args, **run)
        tables["figure2_summary"] = summarise_figure2(tables["figure2"])
        timings["figure2"] = time.perf_counter() - t
        meta = {**f2_args, **common, "stream": f"{PAPER}/figure2", "seconds": timings["figure2"]}
        write_results(out, f"{PAPER}_figure2", tables["figure2"], meta)
        write_results(out, f"{PAPER}_figure2_summary", tables["figure2_summary"], meta)
        plots.figure2(tables["figure2_summary"], out / f"{PAPER}_figure2.png")

        t = time.perf_counter()
        th_args = dict(p0=0.3, a0=0.05, epsilon=1.0, n_obs=10_000, repeats=size["theorems_repeats"],
                       sampler=dict(BATCH_SAMPLER), ops_sampler=dict(OPS_SAMPLER))
        tables["theorems"] = theorems(**th_args, **run)
        tables["theorems_summary"] = summarise_theorems(tables["theorems"])
        timings["theorems"] = time.perf_counter() - t
        meta = {**th_args, **common, "stream": f"{PAPER}/theorems", "seconds": timings["theorems"]}
        write_results(out, f"{PAPER}_theorems", tables["theorems"], meta)
        write_results(out, f"{PAPER}_theorems_summary", tables["theorems_summary"], meta)
        plots.theorems(tables["theorems_summary"], out / f"{PAPER}_theorems.png")

    t = time.perf_counter()
    adv_args = dict(a0=0.1, temperature=1.0, n_max=size["adversarial_n_max"], grid_size=2001)
    tables["adversarial"] = adversarial(**adv_args)
    timings["adversarial"] = time.perf_counter() - t
    write_results(out, f"{PAPER}_adversarial", tables["adversarial"],
                  {**adv_args, **common, "seconds": timings["adversarial"]}, seed="none (deterministic)")
    plots.adversarial(tables["adversarial"], out / f"{PAPER}_adversarial.png")
    return tables


__all__ = [
    "PAPER",
    "PARTS",
    "METHODS",
    "BATCH_SAMPLER",
    "OPS_SAMPLER",
    "FIGURE1_SAMPLER",
    "QUICK",
    "FULL",
    "figure1",
    "figure2",
    "summarise_figure2",
    "theorems",
    "summarise_theorems",
    "adversarial",
    "local_epsilon",
    "reproduce",
    "one_draw_task",
    "figure1_task",
    "bernoulli_data",
    "log_betainc",
    "log_betaincc",
    "log_truncated_beta_mass",
    "log_normaliser",
    "tempered_beta_parameters",
    "ops_log_density",
    "ops_cdf",
    "kde_density",
    "ops_temperature",
]
