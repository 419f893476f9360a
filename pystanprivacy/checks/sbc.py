"""Simulation-based calibration (SBC) of a noise-aware model: ``pystanprivacy sbc``.

A model fitted on privatised data is calibrated when its posterior is the posterior of the data
it was given: then, if θ is drawn from the prior, data from the model, the data released through
the mechanism and the model fitted on the release, the rank of θ among L posterior draws is
uniform on {0, ..., L} (Talts et al. 2018, Theorem 1). A model that ignores the noise (the
"naive" posterior, a conjugate update of the noisy statistic) is too narrow, and its ranks pile
up at both ends.

One replicate is

1. θ ~ prior (:meth:`SBCProblem.replicate` of each problem);
2. private data ~ p(x | θ);
3. a :class:`~pystanprivacy.privacy.records.Release` of the data through the mechanism of the
   model (its own ``release``/``release_statistics`` classmethod, i.e. the library's mechanisms).
   The data are simulated, so nothing private is spent: no accountant is charged
   (``accountant=None``), and the releases are seeded (reproducible, not secure: SBC data are
   synthetic, never a real release);
4. the model's fit on the release (one Stan run for a whole chunk of replicates where the
   program takes R data sets, as every registry model below does; one run per replicate for a
   user's program);
5. the rank of each parameter's true value among L posterior draws.

Thinning. The L draws are spaced evenly over the pooled post-warmup draws of all chains (so
``chains * draws / L`` iterations apart). Talts et al. (Sec. 5) thin to about the effective
sample size so that the draws are close to independent; here L is fixed (the ranks of all
replicates then take the same L + 1 values, which the uniformity test needs), and each
replicate's ``min(ess_bulk, ess_tail)`` is recorded: the table counts, per parameter, the
replicates whose ESS was below L (``low_ess``), whose ranks may be autocorrelated (rank
histograms of such replicates can look non-uniform although the model is right). Give more
draws (``--draws``) when it is not 0. Closed-form posteriors (the naive baseline) and the
reference draws of an OPS check are exact independent draws and need no thinning.

One-posterior sampling. An OPS model releases one draw of a tempered posterior; what can be
checked is that the released draw has the target's distribution. Per replicate the check draws θ
from the prior and data from the model, runs the OPS sampler (:meth:`BetaBernoulliOPS.sample_batch
<pystanprivacy.models.foulds2016.BetaBernoulliOPS.sample_batch>`, every data set released:
``allow_unconverged=True``, so the check sees the sampler as it ran), and ranks the released draw
among L exact independent draws of the tempered, truncated target (closed form: a truncated beta).
The same uniformity test applies. Where the target has no closed form (the HMM's tempered joint,
the βD generalised posteriors of Jewson et al.), the reference draws come from an independent
long NUTS run of the same program on the same data: :mod:`.sbc_problems_foulds2016` and
:mod:`.sbc_problems_jewson2023` (which also say why a βD posterior is not expected to pass a
classical SBC); :mod:`.sbc_problems_kulkarni2022` checks the LDP regressions and their named non-private
baselines (the identity release: a baseline sees the raw records). Their checks are
registered in :data:`PROBLEMS` with the others.

Uniformity test (per parameter). The ECDF of the N ranks is compared with the uniform CDF at the
L points z_j = (j + 1)/(L + 1): under uniformity N·ECDF(z_j) ~ Binomial(N, z_j). The statistic is
T = min_j 2 min(P[X ≤ K_j], P[X ≥ K_j]) (the smallest two-sided binomial tail probability over
the points), whose null distribution is simulated (10 000 sets of N uniform ranks, a fixed seed);
the p-value is the Monte-Carlo p-value of T. The ECDF-difference plot's simultaneous band is the
set of ECDFs this test accepts (Säilynoja, Bürkner & Vehtari 2022, the simulation method). A
chi-square test on equal-width bins of the ranks is reported beside it for reference; pass/fail
uses the ECDF test only.

Pass/fail. A parameter fails when its p-value is at most α/P (Bonferroni over the P checked
parameters); the model fails when any parameter fails. So a calibrated model fails with
probability at most α (default 0.01), whatever the dependence between the parameters' ranks
(``tests/checks/test_sbc.py`` checks the rate on simulated uniform ranks). A model that is not
calibrated fails with a probability (the power) that grows with the number of replicates R.

References
----------
.. [1] S. Talts, M. Betancourt, D. Simpson, A. Vehtari and A. Gelman (2018), "Validating Bayesian
   inference algorithms with simulation-based calibration", arXiv:1804.06788. Algorithm 1,
   Theorem 1, Sec. 5 (thinning).
.. [2] M. Modrák, A. H. Moon, S. Kim, P. Bürkner, N. Huurre, K. Faltejsková, A. Gelman and
   A. Vehtari (2023), "Simulation-based calibration checking for Bayesian computation: the choice
   of test quantities shapes sensitivity", Bayesian Analysis.
.. [3] T. Säilynoja, P.-C. Bürkner and A. Vehtari (2022), "Graphical test for discrete
   uniformity and its applications in goodness-of-fit evaluation and multiple sample
   comparison", Statistics and Computing 32(32).
.. [4] G. Bernstein and D. Sheldon (2018), "Differentially Private Bayesian Inference for
   Exponential Families", NeurIPS, Sec. 4 (the naive baseline).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import inspect
import math
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from .._validation import check_array, check_epsilon, check_int, check_random_state, check_real
from ..privacy.noise import simulated_randomness
from ..privacy.records import Release, ReproducibleNotSecureWarning
from ..run.study import Study


def _sbc_programs(kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """The Stan programs an SBC task may run: every registry model (a check's problem picks one or
    two of them, the naive checks another's) and, for a user's program, its ``.stan`` file as
    :class:`~pystanprivacy.models.custom.StanProgram` names it (resolved)."""
    from ..sampling.stan import available_models

    program = dict(kwargs.get("options") or {}).get("program")
    return (*available_models(), *([str(Path(program).resolve())] if program else []))


#: the study of the SBC tasks: its name and version key their saved results (:mod:`pystanprivacy.run.study`)
STUDY = Study(name="checks/sbc", version=1)

__all__ = [
    "ALPHA",
    "RANK_DRAWS",
    "REFERENCE_SIMULATIONS",
    "Sampler",
    "Replicates",
    "SBCProblem",
    "SBCResult",
    "PROBLEMS",
    "problem_names",
    "make_problem",
    "rank_statistics",
    "thin_indices",
    "ecdf_statistic",
    "ecdf_reference",
    "ecdf_pvalue",
    "ecdf_band",
    "chisquare_uniformity",
    "uniformity_table",
    "sbc_task",
    "run_sbc",
    "plot_ranks",
    "write_sbc",
]

#: family-wise false-rejection rate of the pass/fail verdict (Bonferroni over the parameters)
ALPHA = 0.01
#: number L of posterior draws each true value is ranked among (ranks 0..L)
RANK_DRAWS = 99
#: simulated sets of uniform ranks behind the ECDF test's null distribution
REFERENCE_SIMULATIONS = 10_000
#: the fixed seed of that simulation (the test's reference does not depend on the run's seed)
_REFERENCE_SEED = 20_180_406


# ====================================================================== ranks and thinning
def rank_statistics(reference: Any, draws: Any) -> np.ndarray:
    """Rank of each reference value among its draws: the number of draws below it.

    Parameters
    ----------
    reference : array_like, shape (N, P)
        The true value of each of P parameters in each of N replicates (for an OPS check: the
        released draw).
    draws : array_like, shape (N, L, P)
        L posterior draws (for an OPS check: exact draws of the target) per replicate.

    Returns
    -------
    numpy.ndarray of int, shape (N, P)
        Ranks in {0, ..., L}.

    References
    ----------
    .. [1] Talts et al. (2018), Algorithm 1: r = Σ_l 1[θ_l < θ̃].
    """
    ref = check_array(reference, "reference", ndim=2, kinds="iuf")
    arr = check_array(draws, "draws", ndim=3, kinds="iuf")
    if arr.shape[0] != ref.shape[0] or arr.shape[2] != ref.shape[1]:
        raise ValueError(
            f"draws must have shape (N, L, P) = ({ref.shape[0]}, L, {ref.shape[1]}) for reference of "
            f"shape {ref.shape}, got {arr.shape}"
        )
    return np.sum(arr < ref[:, None, :], axis=1).astype(np.int64)


def thin_indices(total: int, keep: int) -> np.ndarray:
    """``keep`` indices spaced evenly over ``range(total)`` (the pooled draws of all chains):
    index i is ⌊(i + 1/2)·total/keep⌋, so the kept draws are ``total/keep`` iterations apart.
    ``ValueError`` when ``keep > total``."""
    total = check_int(total, "total", minimum=1)
    keep = check_int(keep, "keep", minimum=1)
    if keep > total:
        raise ValueError(
            f"cannot keep {keep} draws out of {total}: give at least rank_draws = {keep} "
            "posterior draws (chains * draws)"
        )
    return np.floor((np.arange(keep) + 0.5) * total / keep).astype(np.int64)


def _min_ess(draws: np.ndarray) -> np.ndarray:
    """min(ess_bulk, ess_tail) of draws (B, C, S, P) per replicate and parameter: (B, P)."""
    import arviz as az

    B, _, _, P = draws.shape
    out = np.empty((B, P))
    for b in range(B):
        for p in range(P):
            x = draws[b, :, :, p]
            if np.ptp(x) == 0:
                out[b, p] = np.nan
                continue
            out[b, p] = min(float(az.ess(x, method="bulk")), float(az.ess(x, method="tail")))
    return out


# ====================================================================== uniformity test
def _check_ranks(ranks: Any, rank_draws: int) -> np.ndarray:
    arr = check_array(ranks, "ranks", ndim=(1, 2), kinds="iu", integer=True)
    L = check_int(rank_draws, "rank_draws", minimum=1)
    if arr.size == 0:
        raise ValueError("ranks must hold at least one replicate, got an empty array")
    if np.any(arr < 0) or np.any(arr > L):
        raise ValueError(f"ranks must lie in 0..rank_draws = 0..{L}")
    return arr.reshape(arr.shape[0], -1)


def _tails(counts: np.ndarray, n: int, rank_draws: int) -> np.ndarray:
    """2 min(P[X ≤ k], P[X ≥ k]), capped at 1, for X ~ Binomial(n, z_j), counts k (..., L)."""
    z = (np.arange(rank_draws) + 1.0) / (rank_draws + 1.0)
    lower = stats.binom.cdf(counts, n, z)
    upper = stats.binom.sf(counts - 1, n, z)
    return np.minimum(1.0, 2.0 * np.minimum(lower, upper))


def _cumulative_counts(ranks: np.ndarray, rank_draws: int) -> np.ndarray:
    """K_j = #(ranks ≤ j), j = 0..L−1, per column of ranks (N, P): shape (P, L)."""
    out = np.empty((ranks.shape[1], rank_draws), dtype=np.int64)
    for p in range(ranks.shape[1]):
        out[p] = np.cumsum(np.bincount(ranks[:, p], minlength=rank_draws + 1))[:rank_draws]
    return out


def ecdf_statistic(ranks: Any, rank_draws: int) -> np.ndarray:
    """The ECDF uniformity statistic T of each column of ``ranks`` (N,) or (N, P): the smallest,
    over z_j = (j + 1)/(L + 1), j = 0..L−1, of the two-sided binomial tail probability
    2 min(P[X ≤ K_j], P[X ≥ K_j]), X ~ Binomial(N, z_j), K_j = #(ranks ≤ j). Small T: the ECDF
    strays far from uniform somewhere. Returns shape (P,).

    References
    ----------
    .. [1] Säilynoja, Bürkner & Vehtari (2022), Sec. 2 (the pointwise binomial intervals whose
       level is adjusted to a simultaneous one).
    """
    arr = _check_ranks(ranks, rank_draws)
    return _tails(_cumulative_counts(arr, rank_draws), arr.shape[0], rank_draws).min(axis=1)


@functools.lru_cache(maxsize=32)
def ecdf_reference(
    n: int, rank_draws: int, simulations: int = REFERENCE_SIMULATIONS, seed: int = _REFERENCE_SEED
) -> np.ndarray:
    """Null distribution of :func:`ecdf_statistic` for ``n`` uniform ranks on 0..``rank_draws``:
    ``simulations`` values, sorted (a fixed ``seed``: the reference is the same in every run)."""
    n = check_int(n, "n", minimum=1)
    L = check_int(rank_draws, "rank_draws", minimum=1)
    simulations = check_int(simulations, "simulations", minimum=100)
    rng = np.random.default_rng(seed)
    out = np.empty(simulations)
    chunk = max(1, 2_000_000 // (L + 1))
    for start in range(0, simulations, chunk):
        m = min(chunk, simulations - start)
        counts = np.cumsum(rng.multinomial(n, np.full(L + 1, 1.0 / (L + 1)), size=m), axis=1)[:, :L]
        out[start : start + m] = _tails(counts, n, L).min(axis=1)
    out.sort()
    out.setflags(write=False)
    return out


def ecdf_pvalue(ranks: Any, rank_draws: int, *, simulations: int = REFERENCE_SIMULATIONS) -> np.ndarray:
    """Monte-Carlo p-value (1 + #{T_sim ≤ T})/(M + 1) of :func:`ecdf_statistic` of each column of
    ``ranks`` against :func:`ecdf_reference` (M = ``simulations``). Shape (P,)."""
    arr = _check_ranks(ranks, rank_draws)
    ref = ecdf_reference(arr.shape[0], rank_draws, simulations)
    t = ecdf_statistic(arr, rank_draws)
    return (1.0 + np.searchsorted(ref, t, side="right")) / (ref.size + 1.0)


def _gamma(n: int, rank_draws: int, level: float, simulations: int) -> float:
    """The threshold γ with: p-value ≤ 1 − level ⟺ T < γ (γ = T_(m), m = ⌊(1 − level)(M + 1)⌋;
    0 when m = 0: nothing is rejected)."""
    ref = ecdf_reference(n, rank_draws, simulations)
    m = math.floor((1.0 - level) * (ref.size + 1) + 1e-9)
    return 0.0 if m < 1 else float(ref[m - 1])


def ecdf_band(
    n: int, rank_draws: int, level: float = 0.95, *, simulations: int = REFERENCE_SIMULATIONS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simultaneous ``level`` band of the ECDF of ``n`` uniform ranks on 0..``rank_draws``:
    ``(z, lower, upper)``, each (L,), lower/upper in ECDF units (counts / n). An ECDF lies inside
    the band at every z_j exactly when :func:`ecdf_pvalue` > 1 − ``level``.

    References
    ----------
    .. [1] Säilynoja, Bürkner & Vehtari (2022), Sec. 2.2 (simulation method).
    """
    level = check_real(level, "level")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    n = check_int(n, "n", minimum=1)
    L = check_int(rank_draws, "rank_draws", minimum=1)
    gamma = _gamma(n, L, level, simulations)
    k = np.arange(n + 1)[:, None]
    ok = _tails(np.broadcast_to(k, (n + 1, L)), n, L) >= gamma  # (n+1, L)
    lower = np.argmax(ok, axis=0)
    upper = n - np.argmax(ok[::-1], axis=0)
    z = (np.arange(L) + 1.0) / (L + 1.0)
    return z, lower / n, upper / n


def _bins(n: int, rank_draws: int) -> int:
    """Number of equal-width rank bins: the largest divisor of L + 1 with at most 20 bins and an
    expected count of at least 5 per bin (at least 2 bins)."""
    divisors = [b for b in range(2, min(20, rank_draws + 1) + 1) if (rank_draws + 1) % b == 0 and n / b >= 5]
    return max(divisors) if divisors else 2


def chisquare_uniformity(ranks: Any, rank_draws: int, bins: int | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Pearson chi-square test of uniform ranks on ``bins`` equal-width bins of 0..L (default
    :func:`_bins`; bins of unequal width get their expected share). Returns ``(statistic (P,),
    pvalue (P,), bins)``."""
    arr = _check_ranks(ranks, rank_draws)
    b = _bins(arr.shape[0], rank_draws) if bins is None else check_int(bins, "bins", minimum=2)
    edges = np.floor(np.arange(rank_draws + 1) * b / (rank_draws + 1)).astype(np.int64)
    share = np.bincount(edges, minlength=b) / (rank_draws + 1)
    stat = np.empty(arr.shape[1])
    pval = np.empty(arr.shape[1])
    for p in range(arr.shape[1]):
        observed = np.bincount(edges[arr[:, p]], minlength=b)
        res = stats.chisquare(observed, share * arr.shape[0])
        stat[p], pval[p] = float(res.statistic), float(res.pvalue)
    return stat, pval, b


def uniformity_table(
    ranks: Any, names: Sequence[str], rank_draws: int, *, alpha: float = ALPHA, simulations: int = REFERENCE_SIMULATIONS
) -> pd.DataFrame:
    """One row per parameter: the ECDF statistic and p-value, the chi-square statistic, its
    degrees of freedom and p-value, the per-parameter level α/P (Bonferroni) and ``passed``
    (ECDF p-value > α/P). The model passes when every row does; a calibrated model then fails
    with probability at most ``alpha``."""
    arr = _check_ranks(ranks, rank_draws)
    names = [str(n) for n in names]
    if len(names) != arr.shape[1]:
        raise ValueError(f"names must name the {arr.shape[1]} columns of ranks, got {len(names)} name(s)")
    alpha = check_real(alpha, "alpha")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    level = alpha / arr.shape[1]
    t = ecdf_statistic(arr, rank_draws)
    p = ecdf_pvalue(arr, rank_draws, simulations=simulations)
    chi, chi_p, b = chisquare_uniformity(arr, rank_draws)
    return pd.DataFrame(
        {
            "parameter": names,
            "replicates": arr.shape[0],
            "rank_draws": rank_draws,
            "ecdf_statistic": t,
            "ecdf_pvalue": p,
            "chisq_statistic": chi,
            "chisq_df": b - 1,
            "chisq_pvalue": chi_p,
            "level": level,
            "passed": p > level,
        }
    )


# ====================================================================== problems
@dataclasses.dataclass(frozen=True)
class Sampler:
    """NUTS settings of each fit of a check (chains, warmup and draws per chain)."""

    chains: int = 1
    warmup: int = 500
    draws: int = 1000

    def __post_init__(self) -> None:
        check_int(self.chains, "chains", minimum=1)
        check_int(self.warmup, "warmup", minimum=0)
        check_int(self.draws, "draws", minimum=1)

    def kwargs(self) -> dict[str, int]:
        """The settings as keyword arguments of a model's ``fit``."""
        return {"chains": self.chains, "warmup": self.warmup, "draws": self.draws}


@dataclasses.dataclass
class Replicates:
    """What one chunk of replicates gives: ``reference`` (B, P) -- the true values (for an OPS
    check, the released draws) -- and ``draws`` (B, C, S, P) -- the posterior draws by chain (for
    an OPS check, exact draws of the target). ``exact``: the draws are independent (closed form),
    no thinning or ESS needed. ``notes``: public remarks on the chunk (divergences, ...)."""

    reference: np.ndarray
    draws: np.ndarray
    exact: bool = False
    notes: dict[str, Any] = dataclasses.field(default_factory=dict)


class SBCProblem:
    """One calibration check: how to draw θ, simulate and release data, and fit.

    Subclasses set :attr:`name`, :attr:`kind` (``"posterior"`` or ``"ops"``), :attr:`batched`
    (one fit takes a chunk of replicates as R data sets) and implement :meth:`parameter_names`
    and :meth:`replicate`.
    """

    name: ClassVar[str] = ""
    kind: ClassVar[str] = "posterior"
    batched: ClassVar[bool] = True
    #: what the check draws, simulates, releases and fits, in words (the sidecar and the docs)
    description: ClassVar[str] = ""

    def parameter_names(self) -> list[str]:
        """Names of the checked scalar parameters (Stan style: ``theta[1]`` for an element)."""
        raise NotImplementedError

    def replicate(self, count: int, *, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        """``count`` replicates: prior draws, simulated and released data, fits."""
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        """The public settings of the check (n, ε, priors ...), for the sidecar."""
        return {}

    def preflight(self) -> None:
        """Checks that can refuse the check before any task runs (``ValueError``/``TypeError``)."""


def _stan_draws(post: Any, names: Sequence[str], count: int) -> np.ndarray:
    """Draws of the batched parameters ``names`` (each (C, S, R) or (C, S, R, K) in Stan) as
    (R, C, S, P)."""
    parts = []
    for name in names:
        x = np.asarray(post.draws(name, combine_chains=False), dtype=float)
        x = x.reshape(x.shape[0], x.shape[1], count, -1)
        parts.append(x)
    return np.moveaxis(np.concatenate(parts, axis=3), 2, 0)


class _Seeded:
    """``with _Seeded():`` -- seeded releases of simulated data, their warning silenced."""

    def __enter__(self) -> None:
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", ReproducibleNotSecureWarning)

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)


def _check_n(n: Any) -> int:
    return check_int(n, "n", minimum=1)


class _BernsteinProblem(SBCProblem):
    """Bernstein & Sheldon (2018): θ from the model's prior, the exact statistic of ``n`` records,
    its Laplace release (``release_statistics``), the model's batched noise-aware fit."""

    variable: ClassVar[str] = "theta"

    def __init__(self, *, n: int = 100, epsilon: float = 0.1) -> None:
        self.n = _check_n(n)
        self.epsilon = check_epsilon(epsilon)
        self.model = self._model()

    def _model(self) -> Any:
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        return {"n": self.n, "epsilon": self.epsilon, "model": self.model.model_name}

    def parameter_names(self) -> list[str]:
        return [self.variable]

    def prior(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """θ (count, P) from the model's prior."""
        m = self.model
        return rng.beta(m.prior_alpha, m.prior_beta, size=count)[:, None]

    def statistics(self, truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The exact statistic of ``n`` simulated records per replicate."""
        return rng.binomial(self.n, truth[:, 0])

    def release(self, truth: np.ndarray, rng: np.random.Generator) -> Release:
        """The Laplace release of the simulated statistics (no accountant: synthetic data)."""
        with _Seeded():
            return self.model.release_statistics(
                self.statistics(truth, rng), n=self.n, epsilon=self.epsilon, accountant=None, seed=rng
            )

    def fit_draws(self, release: Release, count: int, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        post = self.model.fit(release, seed=rng, **sampler.kwargs())
        return Replicates(
            np.empty(0), _stan_draws(post, [self.variable], count), notes={"divergences": post.num_divergences}
        )

    def replicate(self, count: int, *, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        truth = self.prior(count, rng)
        out = self.fit_draws(self.release(truth, rng), count, rng, sampler)
        out.reference = truth
        return out


class BinomialBetaSBC(_BernsteinProblem):
    """bernstein2018/binomial_beta: θ ~ Beta(10, 10), s ~ Binomial(n, θ), y = s + Laplace(1/ε)."""

    name = "bernstein2018/binomial_beta"
    description = "theta ~ Beta(10, 10); s ~ Binomial(n, theta); y = s + Laplace(1/epsilon); noise-aware CLT fit"

    def _model(self) -> Any:
        from ..models.bernstein2018 import BinomialBeta

        return BinomialBeta()


class BinomialBetaExactSBC(BinomialBetaSBC):
    """bernstein2018/binomial_beta_exact: as :class:`BinomialBetaSBC`, exact Σ_s likelihood."""

    name = "bernstein2018/binomial_beta_exact"
    description = "theta ~ Beta(10, 10); s ~ Binomial(n, theta); y = s + Laplace(1/epsilon); exact noise-aware fit"

    def _model(self) -> Any:
        from ..models.bernstein2018 import BinomialBetaExact

        return BinomialBetaExact()


class NaiveBinomialBetaSBC(BinomialBetaSBC):
    """The naive baseline (Bernstein & Sheldon 2018, Sec. 4): the same release as
    :class:`BinomialBetaSBC`, but the posterior is the conjugate update Beta(α + y', β + n − y')
    with the noisy count y' = min(max(y, 0), n) treated as exact. Exact independent draws
    (closed form), no Stan. It ignores the noise, so it is too narrow: SBC must fail it."""

    name = "naive/bernstein2018/binomial_beta"
    description = (
        "theta ~ Beta(10, 10); s ~ Binomial(n, theta); y = s + Laplace(1/epsilon); NAIVE conjugate "
        "update Beta(10 + y', 10 + n - y'), y' = y clipped to [0, n] (ignores the noise)"
    )

    def fit_draws(self, release: Release, count: int, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        y = np.clip(np.asarray(release.values, dtype=float).reshape(count), 0.0, self.n)
        post = self.model.conjugate_posterior(y, self.n, label="naive")
        draws = post.sample(sampler.chains * sampler.draws, seed=rng)  # (R, S)
        return Replicates(np.empty(0), draws[:, None, :, None], exact=True)


class MultinomialDirichletSBC(_BernsteinProblem):
    """bernstein2018/multinomial_dirichlet: θ ~ Dirichlet(5, 5, 5), counts ~ Multinomial(n, θ),
    Laplace(2/ε) on each count."""

    name = "bernstein2018/multinomial_dirichlet"
    description = "theta ~ Dirichlet(5, 5, 5); s ~ Multinomial(n, theta); y = s + Laplace(2/epsilon); noise-aware fit"

    def _model(self) -> Any:
        from ..models.bernstein2018 import MultinomialDirichlet

        return MultinomialDirichlet()

    def parameter_names(self) -> list[str]:
        return [f"theta[{k + 1}]" for k in range(self.model.K)]

    def prior(self, count: int, rng: np.random.Generator) -> np.ndarray:
        return rng.dirichlet(self.model.prior_alpha, size=count)

    def statistics(self, truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.stack([rng.multinomial(self.n, t) for t in truth])


class ExponentialGammaSBC(_BernsteinProblem):
    """bernstein2018/exponential_gamma: θ ~ Gamma(8, rate 2), n records ~ Exponential(θ), the
    Laplace release of their truncated sum (the model's default bounds)."""

    name = "bernstein2018/exponential_gamma"
    description = (
        "theta ~ Gamma(8, rate 2); x_i ~ Exponential(theta), i = 1..n; y = sum of x in [a, b] + "
        "Laplace(b/epsilon); noise-aware RS-CLT fit"
    )

    def _model(self) -> Any:
        from ..models.bernstein2018 import ExponentialGamma

        return ExponentialGamma()

    def prior(self, count: int, rng: np.random.Generator) -> np.ndarray:
        m = self.model
        return rng.gamma(m.prior_shape, 1.0 / m.prior_rate, size=count)[:, None]

    def statistics(self, truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        x = rng.exponential(1.0 / truth, size=(truth.shape[0], self.n))
        return self.model.truncated_sum(x)

    def fit_draws(self, release: Release, count: int, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        with warnings.catch_warnings():  # the second-mode warning: SBC measures its effect
            warnings.simplefilter("ignore", RuntimeWarning)
            return super().fit_draws(release, count, rng, sampler)


class BetaBernoulliSBC(SBCProblem):
    """foulds2016/beta_bernoulli: p ~ Beta(1, 1), N binary records, Laplace(2/ε) on (n₊, n₋),
    projected onto [0, ∞) (Eq. 16-17). The paper's posterior plugs the noisy counts into the
    conjugate update (it does not model the noise): a naive variant in the registry, which SBC
    fails where the noise is large against the binomial spread (the default ε = 0.1, n = 100)."""

    name = "foulds2016/beta_bernoulli"
    description = (
        "p ~ Beta(1, 1); x_i ~ Bernoulli(p), i = 1..n; (n+, n-) + Laplace(2/epsilon), projected; the "
        "paper's posterior Beta(1 + y+, 1 + y-), which treats the noisy counts as exact (plug-in)"
    )

    def __init__(self, *, n: int = 100, epsilon: float = 0.1) -> None:
        from ..models.foulds2016 import BetaBernoulli

        self.n = _check_n(n)
        self.epsilon = check_epsilon(epsilon)
        self.model = BetaBernoulli()

    def settings(self) -> dict[str, Any]:
        return {"n": self.n, "epsilon": self.epsilon, "model": self.model.model_name}

    def parameter_names(self) -> list[str]:
        return ["p"]

    def replicate(self, count: int, *, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        m = self.model
        p = rng.beta(m.prior_alpha, m.prior_beta, size=count)
        x = (rng.random((count, self.n)) < p[:, None]).astype(np.int64)
        with _Seeded():
            release = type(m).release(x, epsilon=self.epsilon, accountant=None, seed=rng)
        post = m.fit(release, seed=rng, **sampler.kwargs())
        return Replicates(p[:, None], _stan_draws(post, ["p"], count), notes={"divergences": post.num_divergences})


class BetaBernoulliOPSSBC(SBCProblem):
    """foulds2016/beta_bernoulli_ops: the released OPS draw against the tempered target.

    p ~ Beta(1, 1), N binary records; :meth:`sample_batch` releases one draw per data set (all
    released: ``allow_unconverged=True``); the reference draws are exact: the target
    ∝ [p^(n₊+α−1) (1−p)^(n₋+β−1)]^(1/T) on [a0, 1 − a0] is Beta(1 + (n₊+α−1)/T, 1 + (n₋+β−1)/T)
    truncated to [a0, 1 − a0] (Foulds et al. 2016, Eq. 14), drawn by inverting its CDF. The rank
    of the released draw among them is uniform when the draw comes from the target."""

    name = "foulds2016/beta_bernoulli_ops"
    kind = "ops"
    description = (
        "p ~ Beta(1, 1); x_i ~ Bernoulli(p); one OPS draw at temperature T(epsilon) ranked among exact draws "
        "of the tempered target, Beta truncated to [a0, 1 - a0]"
    )

    def __init__(self, *, n: int = 100, epsilon: float = 1.0) -> None:
        from ..models.foulds2016 import BetaBernoulliOPS

        self.n = _check_n(n)
        self.epsilon = check_epsilon(epsilon)
        self.model = BetaBernoulliOPS()

    def settings(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "epsilon": self.epsilon,
            "model": self.model.model_name,
            "a0": self.model.a0,
            "temperature": self.model.temperature(self.epsilon),
            "allow_unconverged": True,
        }

    def parameter_names(self) -> list[str]:
        return ["p"]

    def target_draws(self, x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` exact draws of each data set's tempered target: (R, size)."""
        m = self.model
        ones = x.sum(axis=1).astype(float)
        T = m.temperature(self.epsilon)
        a = 1.0 + (ones + m.prior_alpha - 1.0) / T
        b = 1.0 + (x.shape[1] - ones + m.prior_beta - 1.0) / T
        lo = stats.beta.cdf(m.a0, a, b)[:, None]
        hi = stats.beta.cdf(1.0 - m.a0, a, b)[:, None]
        u = lo + (hi - lo) * rng.random((x.shape[0], size))
        return stats.beta.ppf(u, a[:, None], b[:, None])

    def replicate(self, count: int, *, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        m = self.model
        p = rng.beta(m.prior_alpha, m.prior_beta, size=count)
        x = (rng.random((count, self.n)) < p[:, None]).astype(np.int64)
        with _Seeded():
            out = m.sample_batch(x, epsilon=self.epsilon, seed=rng, allow_unconverged=True, **sampler.kwargs())
        released = np.asarray(out.params["p"], dtype=float)
        reference = self.target_draws(x, sampler.chains * sampler.draws, rng)
        return Replicates(
            released[:, None], reference[:, None, :, None], exact=True, notes={"gate_problems": len(out.problems)}
        )


class _KulkarniProblem(SBCProblem):
    """Kulkarni et al. (2022): θ from the model's prior, N users' records perturbed locally
    (the model's ``release``), the batched noise-aware fit (generators of the paper's calibration
    study, :mod:`pystanprivacy.experiments.kulkarni2022.study`)."""

    variables: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, n: int = 200, epsilon: float = 1.0) -> None:
        self.n = _check_n(n)
        self.epsilon = check_epsilon(epsilon)
        self.model = self._model()

    def _model(self) -> Any:
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        return {"n": self.n, "epsilon": self.epsilon, "model": self.model.model_name}

    def parameter_names(self) -> list[str]:
        return list(self.variables)

    def simulate(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """(truth (count, P), records, extra release arguments)."""
        raise NotImplementedError

    def replicate(self, count: int, *, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        truth, x, extra = self.simulate(count, rng)
        with _Seeded():
            release = type(self.model).release(x, epsilon=self.epsilon, accountant=None, seed=rng, **extra)
        post = self.model.fit(release, seed=rng, **sampler.kwargs())
        names = list(dict.fromkeys(v.split("[")[0] for v in self.variables))
        return Replicates(truth, _stan_draws(post, names, count), notes={"divergences": post.num_divergences})


class GaussianLDPSBC(_KulkarniProblem):
    """kulkarni2022/gaussian: μ ~ N(0, 2), σ ~ Gamma(2, 1); x_i ~ N(μ, σ); clipped + Laplace reports."""

    name = "kulkarni2022/gaussian"
    variables = ("mu", "sigma")
    description = "mu ~ N(0, 2), sigma ~ Gamma(2, 1); x_i ~ N(mu, sigma); clip to bounds + Laplace per user"

    def _model(self) -> Any:
        from ..models.kulkarni2022 import GaussianLDP

        return GaussianLDP()

    def simulate(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        mu, sigma = self.model.sample_prior(count, seed=rng)
        x = rng.normal(mu[:, None], sigma[:, None], size=(count, self.n))
        return np.column_stack([mu, sigma]), x, {}


class ExponentialLDPSBC(_KulkarniProblem):
    """kulkarni2022/exponential: θ ~ Gamma(2, 2); x_i ~ Exponential(θ); min(x, b) + Laplace(b/ε)."""

    name = "kulkarni2022/exponential"
    variables = ("theta",)
    description = "theta ~ Gamma(2, rate 2); x_i ~ Exponential(theta); min(x, b) + Laplace(b/epsilon) per user"

    def _model(self) -> Any:
        from ..models.kulkarni2022 import ExponentialLDP

        return ExponentialLDP()

    def simulate(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        theta = np.asarray(self.model.sample_prior(count, seed=rng), dtype=float)
        x = rng.exponential(1.0 / theta[:, None], size=(count, self.n))
        return theta[:, None], x, {}


class HistogramOUESBC(_KulkarniProblem):
    """kulkarni2022/histogram_oue: θ ~ Dirichlet(1, ..., 1) on d categories; x_i ~ Categorical(θ);
    optimal unary encoding reports."""

    name = "kulkarni2022/histogram_oue"
    description = "theta ~ Dirichlet(1,...,1) on d categories; x_i ~ Categorical(theta); OUE reports per user"

    def __init__(self, *, n: int = 200, epsilon: float = 1.0, d: int = 3) -> None:
        self.d = check_int(d, "d", minimum=2)
        super().__init__(n=n, epsilon=epsilon)

    @property
    def variables(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(f"theta[{k + 1}]" for k in range(self.d))

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "d": self.d}

    def _model(self) -> Any:
        from ..models.kulkarni2022 import HistogramOUE

        return HistogramOUE()

    def simulate(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        theta = rng.dirichlet(np.ones(self.d), size=count)
        u = rng.random((count, self.n, 1))
        x = np.minimum((u > np.cumsum(theta, axis=1)[:, None, :]).sum(axis=2), self.d - 1)
        return theta, x, {"d": self.d}


# ---------------------------------------------------------------------- a user's program
def _load_simulator(path: str | Path) -> Any:
    """The user's simulator module (a Python file; running it is running the user's code)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(
            f"simulator {str(p)!r} is not a file: give the Python file that defines simulate(rng) and "
            "release(private, *, epsilon, seed, accountant) (docs/guide/sbc.md)"
        )
    digest = hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"pystanprivacy_sbc_simulator_{digest}", p)
    if spec is None or spec.loader is None:
        raise ValueError(f"simulator {str(p)!r} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's code: its error, named, not a traceback of ours
        raise ValueError(f"simulator {str(p)!r} cannot be run: {type(exc).__name__}: {exc}") from None
    for attr in ("simulate", "release"):
        if not callable(getattr(module, attr, None)):
            raise TypeError(f"simulator {str(p)!r} must define a function {attr}(...) (docs/guide/sbc.md); it has none")
    return module


def _flatten_parameters(values: Mapping[str, Any], where: str) -> tuple[list[str], np.ndarray]:
    """Names (Stan style, 1-based ``theta[2]``) and values of the parameters a simulator drew."""
    names: list[str] = []
    out: list[float] = []
    if not isinstance(values, Mapping):
        raise TypeError(f"{where}: 'parameters' must be a dict of parameter name -> value, got {type(values).__name__}")
    if not values:
        raise ValueError(f"{where}: 'parameters' must be a non-empty dict of parameter name -> value")
    for key, value in values.items():
        arr = check_array(value, f"{where}: parameters[{key!r}]", kinds="biuf")
        if arr.ndim == 0:
            names.append(str(key))
            out.append(float(arr))
            continue
        for idx in np.ndindex(arr.shape):
            names.append(f"{key}[{','.join(str(i + 1) for i in idx)}]")
            out.append(float(arr[idx]))
    return names, np.asarray(out)


class StanProgramSBC(SBCProblem):
    """A user's Stan program (:class:`pystanprivacy.models.custom.StanProgram`) with a Python
    simulator file that defines::

        def simulate(rng):          # one replicate, rng a numpy Generator
            ...
            return {"parameters": {"lam": lam},     # the prior draw, by the program's parameter names
                    "private": count,               # the private data the mechanism releases
                    "data": {"exposure": 10.0}}     # optional: public extra Stan data
        def release(private, *, epsilon, seed, accountant):
            return Laplace(epsilon=epsilon, sensitivity=1.0, seed=seed).release(
                private, accountant=accountant, n=1)   # any mechanism of pystanprivacy.privacy

    Each replicate is one Stan run of the program on the release (``StanProgram.fit(release,
    data=..., public_data=True)``: the data are simulated, so Stan's error messages keep their
    numbers); the draws of the parameters that ``simulate`` names are ranked. ``accountant`` is
    ``None`` (simulated data). The program's file and the simulator's are read for their
    digests, so a resumed run with edited files runs again.

    The releases (``seeded``):

    * ``False`` (default): made **as real ones are**. ``release`` gets ``seed=None``, so the
      mechanism takes its secure path (the same noise plan, grid, exact discrete samplers and
      record as a published release: ``dp_grid``, integer or grid-valued outputs), inside
      :func:`~pystanprivacy.privacy.noise.simulated_randomness`, which feeds those samplers
      from the replicate's seeded generator instead of the CSPRNG. So the check sees the
      distribution a real release has, and the ranks are reproducible from ``--seed``; the
      simulated releases are not secure, and need not be (the data are simulated).
    * ``True``: ``release`` gets the replicate's generator as ``seed``: the seeded form,
      continuous float noise (no grid). For a program written for seeded releases only.
    """

    name = "program"
    batched = False
    description = "a user's Stan program with its simulator file (simulate(rng), release(private, ...))"

    def __init__(self, *, program: str, simulator: str, epsilon: float = 1.0, seeded: bool = False) -> None:
        self.program_path = str(program)
        self.simulator_path = str(simulator)
        self.epsilon = check_epsilon(epsilon)
        if not isinstance(seeded, bool):
            raise TypeError(f"seeded must be True or False, got {type(seeded).__name__} {seeded!r}")
        self.seeded = seeded
        self.simulator = _load_simulator(simulator)
        self._names: list[str] | None = None

    def settings(self) -> dict[str, Any]:
        return {
            "program": self.program_path,
            "simulator": self.simulator_path,
            "epsilon": self.epsilon,
            "releases": (
                "seeded: continuous float noise from the replicate's generator (--seeded)"
                if self.seeded
                else "as real releases: the secure path (grid, exact discrete samplers), its uniform "
                "integers from the replicate's seeded generator (noise.simulated_randomness)"
            ),
        }

    def _program(self) -> Any:
        try:
            from ..models.custom import StanProgram
        except ImportError as exc:  # pragma: no cover - until the StanProgram class exists
            raise RuntimeError(f"a user's Stan program needs pystanprivacy.models.custom.StanProgram: {exc}") from None
        return StanProgram(self.program_path)

    def _user(self, function: str, *args: Any, **kwargs: Any) -> Any:
        """The simulator's ``function`` called; an error there is a ``ValueError`` naming it (a
        ``TypeError``/``ValueError`` of the library it calls keeps its class and message)."""
        try:
            return getattr(self.simulator, function)(*args, **kwargs)
        except (TypeError, ValueError):
            raise
        except Exception as exc:  # noqa: BLE001 - the user's code: its error, named
            raise ValueError(
                f"simulator {self.simulator_path!r} {function}(...) failed: {type(exc).__name__}: {exc}"
            ) from None

    def _release(self, private: Any, rng: np.random.Generator) -> Release:
        if self.seeded:
            with _Seeded():
                release = self._user("release", private, epsilon=self.epsilon, seed=rng, accountant=None)
        else:
            with simulated_randomness(rng):
                release = self._user("release", private, epsilon=self.epsilon, seed=None, accountant=None)
            if release.record.details.get("secure") is True:  # a CSPRNG the block did not reach
                raise ValueError(
                    f"simulator {self.simulator_path!r} release(...) made a release with cryptographic "
                    "randomness: with seed=None, build the mechanism inside release() (it takes its "
                    "randomness when it is made), or pass --seeded for seeded releases"
                )
        if not isinstance(release, Release):
            raise TypeError(
                f"simulator {self.simulator_path!r} release(...) must return a Release, got {type(release).__name__}"
            )
        return release

    def _draw(self, rng: np.random.Generator) -> tuple[list[str], np.ndarray, Any, dict[str, Any]]:
        out = self._user("simulate", rng)
        where = f"simulator {self.simulator_path!r} simulate(rng)"
        if not isinstance(out, Mapping) or "parameters" not in out or "private" not in out:
            raise TypeError(f"{where} must return a dict with keys 'parameters', 'private' and optionally 'data'")
        names, values = _flatten_parameters(out["parameters"], where)
        extra = out.get("data") or {}
        if not isinstance(extra, Mapping):
            raise TypeError(f"{where}: 'data' must be a dict of Stan data names -> values")
        return names, values, out["private"], dict(extra)

    def parameter_names(self) -> list[str]:
        if self._names is None:
            self._names = self._draw(np.random.default_rng(0))[0]
        return list(self._names)

    def preflight(self) -> None:
        """One simulated replicate (a throwaway seed) through the simulator and the program's data
        checks (:meth:`StanProgram.data_for <pystanprivacy.models.custom.StanProgram.data_for>`:
        declared data, record fields, mechanism of the functions it calls) before anything is
        compiled or sampled."""
        rng = np.random.default_rng(0)
        names, _, private, extra = self._draw(rng)
        self._program().data_for(self._release(private, rng), extra or None)
        self._names = names

    def replicate(self, count: int, *, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        program = self._program()
        refs, draws, divergences = [], [], 0
        for _ in range(count):
            names, values, private, extra = self._draw(rng)
            post = program.fit(
                self._release(private, rng), data=extra or None, seed=rng, public_data=True, **sampler.kwargs()
            )
            divergences += int(post.num_divergences)
            cols = []
            for name in names:
                base, _, index = name.partition("[")
                x = np.asarray(post.draws(base, combine_chains=False), dtype=float)
                if index:
                    idx = tuple(int(i) - 1 for i in index.rstrip("]").split(","))
                    x = x[(slice(None), slice(None), *idx)]
                cols.append(x.reshape(x.shape[0], x.shape[1]))
            refs.append(values)
            draws.append(np.stack(cols, axis=-1))
        self._names = names
        return Replicates(np.stack(refs), np.stack(draws), notes={"divergences": divergences})


#: the registry models SBC can check (and the naive baseline), by name
PROBLEMS: dict[str, type[SBCProblem]] = {
    cls.name: cls
    for cls in (
        BinomialBetaSBC,
        BinomialBetaExactSBC,
        MultinomialDirichletSBC,
        ExponentialGammaSBC,
        NaiveBinomialBetaSBC,
        BetaBernoulliSBC,
        BetaBernoulliOPSSBC,
        GaussianLDPSBC,
        ExponentialLDPSBC,
        HistogramOUESBC,
    )
}


def _register_more() -> None:
    """The checks split into modules of their own (``sbc_problems_<paper>``), added to :data:`PROBLEMS`."""
    from .sbc_problems_foulds2016 import NaiveBayesHMMOPSSBC, NaiveBayesHMMSBC
    from .sbc_problems_jewson2023 import (
        LinearRegressionBetaDSBC,
        LogisticBetaDSBC,
        NNClassifierBetaDSBC,
        NNRegressionBetaDSBC,
    )
    from .sbc_problems_kulkarni2022 import (
        LinearRegressionInputsSBC,
        LinearRegressionNonPrivateSBC,
        LinearRegressionSSSBC,
        LogisticRegressionInputsSBC,
        LogisticRegressionNonPrivateSBC,
        LogisticRegressionSSSBC,
    )

    for cls in (
        NaiveBayesHMMSBC,
        NaiveBayesHMMOPSSBC,
        LinearRegressionSSSBC,
        LinearRegressionInputsSBC,
        LogisticRegressionSSSBC,
        LogisticRegressionInputsSBC,
        LinearRegressionNonPrivateSBC,
        LogisticRegressionNonPrivateSBC,
        LogisticBetaDSBC,
        LinearRegressionBetaDSBC,
        NNClassifierBetaDSBC,
        NNRegressionBetaDSBC,
    ):
        PROBLEMS[cls.name] = cls


_register_more()


def problem_names() -> list[str]:
    """Names :func:`make_problem` knows: the checked registry models and the naive baseline."""
    return sorted(PROBLEMS)


def make_problem(name: str, **options: Any) -> SBCProblem:
    """The check of ``name`` -- a registry model of :data:`PROBLEMS`, ``naive/...``, or
    ``"program"`` with ``program=`` (a ``.stan`` file) and ``simulator=`` (its Python file) --
    with ``options`` (``n``, ``epsilon``, ``d`` ...). ``None`` options are left out (defaults)."""
    if not isinstance(name, str):
        raise TypeError(f"model must be a registry name or 'program', got {type(name).__name__}")
    options = {k: v for k, v in options.items() if v is not None}
    if name == StanProgramSBC.name:
        cls: type[SBCProblem] = StanProgramSBC
    elif name in PROBLEMS:
        cls = PROBLEMS[name]
    else:
        raise ValueError(
            f"no SBC check for model {name!r}; known: {', '.join(problem_names())}, or a .stan file with its simulator"
        )
    takes = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(options) - set(takes))
    if unknown:
        raise TypeError(
            f"option(s) {', '.join(unknown)} do not apply to the check of {name!r}; it takes "
            f"{', '.join(takes) or 'none'}"
        )
    return cls(**options)


# ====================================================================== running
def _ranks_of(rep: Replicates, rank_draws: int) -> tuple[np.ndarray, np.ndarray]:
    """Ranks (B, P) and min ESS (B, P; NaN for exact draws) of one chunk."""
    B, C, S, P = rep.draws.shape
    pooled = rep.draws.reshape(B, C * S, P)
    if rep.exact:
        kept = pooled[:, :rank_draws, :]
        if kept.shape[1] < rank_draws:
            raise ValueError(f"cannot keep {rank_draws} draws out of {C * S}: give at least rank_draws posterior draws")
        ess = np.full((B, P), np.nan)
    else:
        kept = pooled[:, thin_indices(C * S, rank_draws), :]
        ess = _min_ess(rep.draws)
    return rank_statistics(rep.reference, kept), ess


@STUDY.task(programs=_sbc_programs)
def sbc_task(
    *,
    problem: str,
    options: Mapping[str, Any],
    count: int,
    first: int,
    sampler: Mapping[str, int],
    rank_draws: int,
    seed: Any,
) -> pd.DataFrame:
    """One chunk of ``count`` replicates (numbered from ``first``) of check ``problem``: one row
    per replicate × parameter with its rank, the min ESS of its draws, the reference value and
    the chunk's divergences. A runner task (:mod:`pystanprivacy.run.runner`)."""
    rng = check_random_state(seed)
    prob = make_problem(problem, **dict(options))
    start = time.perf_counter()
    rep = prob.replicate(count, rng=rng, sampler=Sampler(**dict(sampler)))
    ranks, ess = _ranks_of(rep, rank_draws)
    names = prob.parameter_names()
    seconds = time.perf_counter() - start
    rows = []
    for j, name in enumerate(names):
        rows.append(
            pd.DataFrame(
                {
                    "replicate": first + np.arange(count),
                    "parameter": name,
                    "rank": ranks[:, j],
                    "ess": ess[:, j],
                    "reference": rep.reference[:, j],
                    "divergences": int(rep.notes.get("divergences", 0)),
                    "chunk_seconds": seconds,
                    # the chunk's other public remarks (clipped share, gate refusals ...), one column each
                    **{
                        f"note_{k}": v
                        for k, v in rep.notes.items()
                        if k != "divergences" and isinstance(v, (int, float))
                    },
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


@dataclasses.dataclass
class SBCResult:
    """A finished check: ``ranks`` (one row per replicate × parameter), ``summary`` (one row per
    parameter: :func:`uniformity_table` plus ``low_ess``), ``passed`` and the public settings."""

    problem: str
    ranks: pd.DataFrame
    summary: pd.DataFrame
    passed: bool
    rank_draws: int
    alpha: float
    settings: dict[str, Any]


def run_sbc(
    problem: str,
    *,
    replicates: int = 200,
    chunk: int | None = None,
    options: Mapping[str, Any] | None = None,
    sampler: Sampler | None = None,
    rank_draws: int = RANK_DRAWS,
    alpha: float = ALPHA,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = False,
) -> SBCResult:
    """Run ``replicates`` replicates of check ``problem`` (:func:`make_problem`) on the runner
    (``workers``, an ``executor`` such as a Dask client, and the resume folder of an enclosing
    :func:`pystanprivacy.run.runner.run_context`), in chunks of ``chunk`` replicates (one Stan run
    per chunk for a batched problem; default 50, 1 replicate per fit for a user's program), and
    test the ranks.

    Returns
    -------
    SBCResult
        ``passed`` is False when any parameter's ECDF p-value is at most ``alpha / P``: a
        calibrated model fails with probability at most ``alpha``.
    """
    from ..run.runner import Task, run_tasks

    replicates = check_int(replicates, "replicates", minimum=2)
    rank_draws = check_int(rank_draws, "rank_draws", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    sampler = sampler or Sampler()
    if not isinstance(sampler, Sampler):
        raise TypeError(f"sampler must be a Sampler, got {type(sampler).__name__}")
    options = dict(options or {})
    prob = make_problem(problem, **options)  # refuses bad options before any task runs
    prob.preflight()
    if chunk is None:
        chunk = 50 if prob.batched else 1
    chunk = check_int(chunk, "chunk", minimum=1)
    if sampler.chains * sampler.draws < rank_draws:
        raise ValueError(
            f"chains * draws = {sampler.chains * sampler.draws} must be at least rank_draws = {rank_draws}"
        )
    # a user's program: the digests of its two files key the tasks, so edited files run again
    key_extra = (
        {}
        if not isinstance(prob, StanProgramSBC)
        else {
            "digests": [
                hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in (prob.program_path, prob.simulator_path)
            ]
        }
    )
    tasks = []
    for first in range(0, replicates, chunk):
        count = min(chunk, replicates - first)
        tasks.append(
            Task(
                sbc_task if not key_extra else _program_task,
                dict(
                    problem=problem,
                    options=options,
                    count=count,
                    first=first,
                    sampler=dataclasses.asdict(sampler),
                    rank_draws=rank_draws,
                    **key_extra,
                ),
                label=f"sbc {problem} replicates {first}..{first + count - 1}",
            )
        )
    # one stream for every check: with the same seed and chunk, two checks that simulate alike (the naive and
    # the noise-aware binomial) see the same thetas and the same releases
    table = run_tasks(
        tasks, seed=seed, stream="sbc", workers=workers, executor=executor, progress=progress, desc=f"sbc {problem}"
    )
    names = prob.parameter_names() if not isinstance(prob, StanProgramSBC) else list(dict.fromkeys(table["parameter"]))
    wide = table.pivot(index="replicate", columns="parameter", values="rank")[names]
    summary = uniformity_table(wide.to_numpy(dtype=np.int64), names, rank_draws, alpha=alpha)
    low = table.assign(low=table["ess"] < rank_draws).groupby("parameter", sort=False)["low"].sum()
    summary["low_ess"] = [int(low.get(n, 0)) for n in names]
    settings = {
        **prob.settings(),
        "kind": prob.kind,
        "description": prob.description,
        "sampler": dataclasses.asdict(sampler),
        "chunk": chunk,
        "replicates": replicates,
        "rank_draws": rank_draws,
        "alpha": alpha,
        "seed": seed,
        "accountant": "none: the releases are of simulated data, nothing is charged",
        "thinning": (
            f"{rank_draws} draws spaced evenly over the pooled chains (chains * draws / {rank_draws} "
            "iterations apart); low_ess counts replicates with min(ess_bulk, ess_tail) < rank_draws"
        ),
        "test": (
            "ECDF uniformity test (simulated null, Säilynoja et al. 2022) per parameter at level "
            "alpha / P (Bonferroni): family-wise false-rejection rate <= alpha"
        ),
    }
    return SBCResult(
        problem=problem,
        ranks=table,
        summary=summary,
        passed=bool(summary["passed"].all()),
        rank_draws=rank_draws,
        alpha=alpha,
        settings=settings,
    )


@STUDY.task(programs=_sbc_programs)
def _program_task(*, digests: Sequence[str], **kwargs: Any) -> pd.DataFrame:
    """:func:`sbc_task` for a user's program; ``digests`` (of its two files) only key the task."""
    return sbc_task(**kwargs)


# ====================================================================== output
def plot_ranks(result: SBCResult, path: str | Path) -> Path:
    """Rank histograms (top; grey: pointwise 99% binomial range per bin) and ECDF-difference
    plots (bottom; shaded: simultaneous 95% band; dashed: the band of the pass/fail test at level
    1 − α/P) of every parameter, written as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result.summary["parameter"])
    L = result.rank_draws
    wide = result.ranks.pivot(index="replicate", columns="parameter", values="rank")[names].to_numpy(dtype=np.int64)
    n = wide.shape[0]
    bins = _bins(n, L)
    fig, axes = plt.subplots(2, len(names), figsize=(max(4.8, 3.2 * len(names) + 0.6), 6.0), squeeze=False)
    level = result.alpha / len(names)
    z, lo95, hi95 = ecdf_band(n, L, 0.95)
    _, lo_t, hi_t = ecdf_band(n, L, 1.0 - level)
    edges = np.floor(np.arange(L + 1) * bins / (L + 1)).astype(np.int64)
    share = np.bincount(edges, minlength=bins) / (L + 1)
    for j, name in enumerate(names):
        row = result.summary.iloc[j]
        ax = axes[0, j]
        counts = np.bincount(edges[wide[:, j]], minlength=bins)
        lo, hi = stats.binom.interval(0.99, n, share)
        starts = np.append(np.searchsorted(edges, np.arange(bins)), L + 1) - 0.5  # bin edges in rank units
        ax.fill_between(
            starts, np.append(lo, lo[-1]), np.append(hi, hi[-1]), step="post", color="0.85", label="99% pointwise"
        )
        ax.bar(starts[:-1], counts, width=0.9 * np.diff(starts), align="edge", color="C0" if row["passed"] else "C3")
        ax.set_title(f"{name}: {'pass' if row['passed'] else 'FAIL'} (p = {row['ecdf_pvalue']:.3g})", fontsize=9)
        ax.set_xlabel(f"rank (0..{L}, {bins} bins)", fontsize=8)
        ax.set_ylabel("replicates", fontsize=8)
        ax = axes[1, j]
        ecdf = _cumulative_counts(wide[:, j : j + 1], L)[0] / n
        ax.fill_between(z, lo95 - z, hi95 - z, step="post", color="0.85", label="95% simultaneous")
        ax.step(z, lo_t - z, where="post", color="0.4", ls="--", lw=0.8, label=f"test band (level {1 - level:.4g})")
        ax.step(z, hi_t - z, where="post", color="0.4", ls="--", lw=0.8)
        ax.step(z, ecdf - z, where="post", color="C0" if row["passed"] else "C3", lw=1.2)
        ax.axhline(0, color="k", lw=0.5)
        ax.set_xlabel("normalised rank z", fontsize=8)
        ax.set_ylabel("ECDF(z) - z", fontsize=8)
        if j == 0:
            ax.legend(fontsize=7, loc="lower left")
    fig.suptitle(
        f"SBC of {result.problem}\n{n} replicates, L = {L}: "
        f"{'PASS' if result.passed else 'FAIL'} at family-wise alpha = {result.alpha:g}",
        fontsize=10,
    )
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_sbc(
    result: SBCResult,
    out_dir: str | Path,
    *,
    name: str = "sbc",
    args: Mapping[str, Any] | None = None,
    backend: str | None = None,
) -> dict[str, Path]:
    """Write ``<out>/<name>_summary.csv`` (+ JSON sidecar with every setting, the seed and the
    versions), ``<out>/<name>_ranks.csv`` and ``<out>/<name>.png``. Returns the paths."""
    from ..run.runner import write_results

    out = Path(out_dir)
    extra = {**result.settings, "passed": result.passed, "problem": result.problem}
    csv_path, json_path = write_results(
        out,
        f"{name}_summary",
        result.summary,
        dict(args or result.settings),
        seed=result.settings.get("seed"),
        backend=backend,
        extra=extra,
    )
    ranks_path = out / f"{name}_ranks.csv"
    result.ranks.to_csv(ranks_path, index=False)
    png = plot_ranks(result, out / f"{name}.png")
    return {"summary": csv_path, "sidecar": json_path, "ranks": ranks_path, "plot": png}
