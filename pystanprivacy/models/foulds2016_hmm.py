"""Private hidden Markov model with naive-Bayes emissions (Foulds et al. 2016, Sec. 4-5, E).

The war-logs case study of the paper: R regions, each a chain of T monthly timesteps with a
latent state z_{r,t} in 1..K; every log entry of a region/month has D categorical features,
independent given the state (naive Bayes). The data enter only through the count vectors
n_{r,t,d,:} (Eq. 50-51), so

* :class:`NaiveBayesHMM` releases those counts once with the Laplace mechanism (E.1) and
  fits the model to the noisy counts (post-processing: any number of MCMC iterations is
  free), or fits the exact counts as a named non-private baseline;
* :class:`NaiveBayesHMMOPS` releases one draw of (A, theta, z) from the tempered posterior
  of the model with truncated Dirichlets (one-posterior sampling, Sec. 2.2 and 4.1), after
  checking that the sampler converged.

``n_states=1`` is the naive-Bayes model of the paper's naive-Bayes panels.

References
----------
.. [1] J. Foulds, J. Geumlek, M. Welling and K. Chaudhuri (2016), "On the theory and
   practice of privacy-preserving Bayesian data analysis", UAI. Eq. 6-10 (OPS at
   temperature T), Sec. 4.2 (Laplace mechanism inside MCMC), Sec. 5 and supplement E
   (generative process, Eq. 47; exponential-family form, Eq. 50-51; E.1 privacy).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp

from .._validation import (
    SeedLike,
    check_array,
    check_epsilon,
    check_int,
    check_positive,
    check_random_state,
    check_real,
)
from ..privacy.mechanisms import Laplace, project_nonnegative
from ..sampling.posterior import ConvergenceError, Posterior, Thresholds
from ..privacy.records import (
    PrivacyAccountant,
    PrivacyRecord,
    Release,
    noise_details,
    warn_reproducible_not_secure,
)
from ..sampling.stan import StanModel
from ._ops import (
    charge_attempt,
    check_allow_unconverged,
    check_ops_call,
    convergence_gate,
    ops_randomness,
    secure_index,
    secure_permutation,
)

__all__ = [
    "COUNT_SENSITIVITY",
    "DEFAULT_MAX_TREEDEPTH",
    "CountLayout",
    "HMMDraws",
    "NaiveBayesHMM",
    "NaiveBayesHMMOPS",
    "OPSDraw",
    "OPSResult",
    "align_states",
    "convergence_problems",
    "heldout_log_likelihood",
    "kmeans_initial_values",
    "match_states",
    "neighbour_state_log_weights",
    "ops_log_likelihood_sensitivity",
    "ops_temperature",
    "ops_truncation",
    "reference_values",
    "state_agreement",
]

#: NUTS tree-depth limit of the HMM fits unless given (Stan's default is 10). Early warm-up,
#: with the unit metric, reaches depth 10 (1023 leapfrog steps) on these posteriors while
#: after adaptation depth 5 is typical; a limit of 7 cut the warm-up cost ~3x in the
#: benchmark (10 states, 5 regions x 36 months) with identical post-warm-up behaviour.
#: Post-warm-up iterations that hit the limit are reported by the convergence checks.
DEFAULT_MAX_TREEDEPTH = 7

#: L1 sensitivity of one feature's count array n_{., ., d, :} under replace-one (E.1): the
#: replaced entry leaves one cell's vector (-1) and enters one (+1)
COUNT_SENSITIVITY = 2.0


# ------------------------------------------------------------------------------ layout
@dataclasses.dataclass(frozen=True)
class CountLayout:
    """The public structure of a count array (R, T, J): feature sizes and labels.

    Built by :meth:`from_counts` from a :class:`~pystanprivacy.experiments.foulds2016.warlogs.WarLogCounts` or
    from an array plus ``feature_sizes``.
    """

    feature_sizes: tuple[int, ...]
    features: tuple[str, ...]
    regions: tuple[str, ...]
    months: tuple[str, ...]
    structure_from_data: bool = False

    def __post_init__(self) -> None:
        # ints >= 2, never coerced (int("22"), int(2.5) would pass silently)
        sizes = tuple(int(s) for s in _feature_sizes(self.feature_sizes))
        object.__setattr__(self, "feature_sizes", sizes)
        if len(self.features) != len(sizes):
            raise ValueError(f"features must name the {len(sizes)} features, got {len(self.features)} names")

    @property
    def J(self) -> int:  # noqa: N802 - the paper's symbol
        return sum(self.feature_sizes)

    @property
    def R(self) -> int:  # noqa: N802
        return len(self.regions)

    @property
    def T(self) -> int:  # noqa: N802
        return len(self.months)

    @property
    def slices(self) -> list[slice]:
        out, pos = [], 0
        for s in self.feature_sizes:
            out.append(slice(pos, pos + s))
            pos += s
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "feature_sizes": list(self.feature_sizes),
            "features": list(self.features),
            "regions": list(self.regions),
            "months": list(self.months),
            "structure_from_data": self.structure_from_data,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CountLayout":
        return cls(
            feature_sizes=tuple(d["feature_sizes"]),
            features=tuple(d["features"]),
            regions=tuple(d["regions"]),
            months=tuple(d["months"]),
            structure_from_data=bool(d.get("structure_from_data", False)),
        )

    @classmethod
    def from_counts(cls, counts: Any, feature_sizes: Sequence[int] | None = None) -> tuple["CountLayout", np.ndarray]:
        """Layout and validated exact counts (int64, shape (R, T, J)) of ``counts``.

        ``counts`` is a :class:`~pystanprivacy.experiments.foulds2016.warlogs.WarLogCounts` or an array of
        non-negative integer counts of shape (R, T, J) with ``feature_sizes`` summing to J.
        Every cell's per-feature blocks must add up to the same number of entries.
        """
        from ..experiments.foulds2016.warlogs import WarLogCounts

        if isinstance(counts, WarLogCounts):
            if feature_sizes is not None and tuple(_feature_sizes(feature_sizes).tolist()) != counts.feature_sizes:
                raise ValueError("feature_sizes disagrees with the WarLogCounts given; leave it out")
            layout = cls(counts.feature_sizes, counts.features, counts.regions, counts.months, counts.structure_from_data)
            arr = np.asarray(counts.counts)
        else:
            if feature_sizes is None:
                raise ValueError("feature_sizes is required when counts is an array (R, T, J)")
            # the raw argument: check_array refuses a ragged or non-numeric one naming counts
            arr = check_array(counts, "counts", ndim=3, kinds="iuf", integer=True)
            sizes = tuple(int(s) for s in _feature_sizes(feature_sizes))  # check_int per entry
            layout = cls(
                sizes,
                tuple(f"feature{d + 1}" for d in range(len(sizes))),
                tuple(f"region{r + 1}" for r in range(arr.shape[0])),
                tuple(f"t{t + 1}" for t in range(arr.shape[1])),
            )
        arr = check_array(arr, "counts", ndim=3, kinds="iuf", integer=True)
        if arr.shape[2] != layout.J:
            raise ValueError(f"counts has {arr.shape[2]} columns, feature_sizes sum to {layout.J}")
        if arr.shape[0] < 1 or arr.shape[1] < 1:
            raise ValueError(f"counts must have at least one region and one timestep, got shape {arr.shape}")
        n_neg = int((arr < 0).sum())
        if n_neg:
            raise ValueError(f"counts contains {n_neg} negative value(s); counts must be >= 0")
        totals = np.stack([arr[:, :, s].sum(axis=2) for s in layout.slices])
        n_bad = int((totals != totals[0]).any(axis=0).sum())
        if n_bad:
            raise ValueError(
                f"counts of {n_bad} cell(s) disagree between features: every feature of a cell must "
                "count the same log entries"
            )
        return layout, arr


def _check_heldout(heldout: Any, layout: CountLayout) -> np.ndarray:
    if heldout is None:
        return np.zeros((layout.R, layout.T), dtype=bool)
    arr = check_array(heldout, "heldout", shape=(layout.R, layout.T), kinds="biu", bounds=(0, 1), integer=True)
    if arr.all(axis=1).any():
        raise ValueError("heldout leaves a region without any cell in the likelihood; hold out fewer cells")
    return arr.astype(bool)


def reference_values(counts: np.ndarray, layout: CountLayout) -> list[int]:
    """Per feature, the (0-based) value with the largest total count: the reference of the
    additive-logistic coordinates of the Stan programs. The model is the same for any
    reference; the most frequent value leaves the coordinates nearly uncorrelated, which
    roughly halves NUTS's leapfrog steps. Taken from whatever counts the fit sees (the
    release for a Laplace fit: post-processing)."""
    totals = np.asarray(counts, dtype=float).sum(axis=(0, 1))
    return [int(np.argmax(totals[sl])) for sl in layout.slices]


def _stan_data(counts: np.ndarray, layout: CountLayout, heldout: np.ndarray, n_states: int,
               alpha: float, beta: float) -> dict[str, Any]:
    """Stan data in the programs' timestep-major cell layout: row (t - 1) * R + r."""
    R, T, J = counts.shape
    return {
        "R": R,
        "T": T,
        "K": n_states,
        "D": len(layout.feature_sizes),
        "feature_size": list(layout.feature_sizes),
        "reference": [r + 1 for r in reference_values(counts, layout)],
        "counts": np.asarray(counts, dtype=float).transpose(1, 0, 2).reshape(T * R, J),
        "heldout": heldout.T.reshape(-1).astype(int),
        "alpha": alpha,
        "beta": beta,
    }


# ------------------------------------------------------------------- initial values
def kmeans_initial_values(counts: np.ndarray, layout: CountLayout, n_states: int, chains: int,
                          seed: SeedLike = None, *, heldout: Any = None, iterations: int = 20,
                          restarts: int = 5, stickiness: float = 0.8) -> list[dict[str, Any]]:
    """Initial values of (A, eta) for every chain from a k-means clustering of the cells.

    ``eta`` follows the programs' coordinates (reference value per feature from
    :func:`reference_values`). Why: with many entries per cell the HMM posterior has deep local modes in which some
    states hold no cell; NUTS started at Stan's random initial values often stays in one
    (all cells in one state), which the Gibbs sampler of the paper avoids by starting from
    random state assignments. Here every chain starts from its own k-means clustering of
    the cells' per-feature value frequencies (the best, by within-cluster sum of squares, of
    ``restarts`` k-means++ seedings with ``iterations`` Lloyd steps each): theta^(k,d) is the
    pooled frequency of cluster k (plus 1/2 pseudo-count per value; an empty cluster takes
    a random cell's counts), the transition
    rows put ``stickiness`` on staying, the dummy row is uniform. ``counts`` are whatever the
    fit sees (the noisy release for a Laplace fit: post-processing); held-out cells are left
    out.
    """
    rng = check_random_state(seed)
    counts = np.asarray(counts, dtype=float)
    refs = reference_values(counts, layout)
    mask = ~_check_heldout(heldout, layout)
    cells = counts[mask]                                     # (C, J)
    freq = np.concatenate([cells[:, s] / np.maximum(cells[:, s].sum(axis=1, keepdims=True), 1e-12)
                           for s in layout.slices], axis=1)
    used = cells[:, layout.slices[0]].sum(axis=1) > 0
    freq, cells = freq[used], cells[used]
    K = n_states
    out = []
    for _ in range(chains):
        if len(freq) >= K and K > 1:
            best = None
            for _restart in range(restarts):
                assign, sse = _kmeans(freq, K, iterations, rng)
                if best is None or sse < best[1]:
                    best = (assign, sse)
            assign = best[0]
            pooled = np.array([cells[assign == k].sum(axis=0) if np.any(assign == k)
                               else cells[int(rng.integers(len(cells)))] for k in range(K)])
        else:
            pooled = np.repeat(cells.sum(axis=0, keepdims=True), K, axis=0) if len(cells) else np.ones((K, layout.J))
        pooled = pooled + 0.5
        eta = np.empty((layout.J - len(layout.feature_sizes), K))
        pos = 0
        for sl, ref in zip(layout.slices, refs):
            block = np.log(pooled[:, sl])                                       # (K, K_d)
            n = sl.stop - sl.start
            eta[pos:pos + n - 1] = np.delete(block - block[:, ref:ref + 1], ref, axis=1).T
            pos += n - 1
        A = np.full((K + 1, K), (1.0 - stickiness) / max(K - 1, 1))
        A[0] = 1.0 / K
        A[1:][np.arange(K), np.arange(K)] = stickiness if K > 1 else 1.0
        out.append({"A": A.tolist(), "eta": eta.tolist()})
    return out


def _kmeans(x: np.ndarray, k: int, iterations: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """k-means++ seeding then Lloyd iterations: (assignment, within-cluster sum of squares)."""
    centres = [x[int(rng.integers(len(x)))]]
    for _k in range(1, k):
        d2 = np.min([((x - c) ** 2).sum(axis=1) for c in centres], axis=0)
        p = d2 / d2.sum() if d2.sum() > 0 else np.full(len(x), 1 / len(x))
        centres.append(x[int(rng.choice(len(x), p=p))])
    centres = np.array(centres)
    for _it in range(iterations + 1):
        dist = ((x[:, None, :] - centres[None]) ** 2).sum(axis=2)
        assign = np.argmin(dist, axis=1)
        for j in range(k):
            if np.any(assign == j):
                centres[j] = x[assign == j].mean(axis=0)
    return assign, float(dist[np.arange(len(x)), assign].sum())


# ---------------------------------------------------------------------- draws & labels
@dataclasses.dataclass
class HMMDraws:
    """Draws of an HMM fit with state labels aligned across chains.

    Arrays have a leading draw axis S = chains * draws (chain-major); ``chain`` gives each
    draw's chain. ``A[:, 0]`` is the dummy initial state's row, ``A[:, k + 1]`` state k's.
    ``state_prob`` is ``None`` for OPS fits (which output only z).
    """

    theta: np.ndarray                 # (S, K, J)
    A: np.ndarray                     # (S, K + 1, K)
    log_lik: np.ndarray               # (S,)
    state_prob: np.ndarray | None     # (S, R, T, K)
    z: np.ndarray | None              # (S, R, T), 0-based states
    chain: np.ndarray                 # (S,)
    permutations: np.ndarray          # (chains, K): aligned label k = chain's label perm[k]

    @property
    def n_states(self) -> int:
        return self.theta.shape[1]

    def modal_states(self) -> np.ndarray:
        """Most frequent state of every cell over the draws (the paper's summary after
        burn-in): shape (R, T), 0-based. Needs ``z``."""
        if self.z is None:
            raise ValueError("the fit has no state draws")
        counts = np.stack([(self.z == k).sum(axis=0) for k in range(self.n_states)], axis=-1)
        return counts.argmax(axis=-1)

    def mean_state_prob(self) -> np.ndarray:
        """Posterior probability of every state per cell: (R, T, K)."""
        if self.state_prob is None:
            raise ValueError("the fit has no state probabilities (OPS fits output only z)")
        return self.state_prob.mean(axis=0)

    def mean_theta(self) -> np.ndarray:
        """Posterior mean emission probabilities: (K, J)."""
        return self.theta.mean(axis=0)

    def occupancy(self) -> np.ndarray:
        """Share of cells in each state, averaged over draws: (K,)."""
        if self.z is None:
            raise ValueError("the fit has no state draws")
        return np.array([(self.z == k).mean() for k in range(self.n_states)])

    def relabel(self, perm: Sequence[int]) -> "HMMDraws":
        """New labels: new state k is old state ``perm[k]``."""
        return _permute(self, np.asarray(perm, dtype=int))


def _permute_arrays(theta: np.ndarray, A: np.ndarray, state_prob: np.ndarray | None, z: np.ndarray | None,
                    perm: np.ndarray) -> tuple:
    """Relabel draws (leading draw axis): new state k is old state ``perm[k]``; z 0-based."""
    inv = np.argsort(perm)
    A = np.concatenate([A[:, :1, perm], A[:, 1:][:, perm][:, :, perm]], axis=1)
    return (theta[:, perm], A, None if state_prob is None else state_prob[..., perm],
            None if z is None else inv[z])


def _permute(d: HMMDraws, perm: np.ndarray) -> HMMDraws:
    K = d.n_states
    if sorted(perm.tolist()) != list(range(K)):
        raise ValueError(f"perm must be a permutation of 0..{K - 1}, got {perm.tolist()}")
    theta, A, sp, z = _permute_arrays(d.theta, d.A, d.state_prob, d.z, perm)
    return HMMDraws(theta=theta, A=A, log_lik=d.log_lik, state_prob=sp, z=z, chain=d.chain,
                    permutations=d.permutations[:, perm])


def align_states(posterior: Posterior) -> HMMDraws:
    """Draws of an HMM fit with the state labels of every chain matched to one reference
    chain (the one with the highest mean log density), by the Hungarian algorithm on the
    L1 distance between the chains' mean emission probabilities.

    The posterior is invariant to relabelling the states, so chains settle in different
    labelings; aligning them makes per-state summaries and diagnostics meaningful.
    (Label switching *within* a chain is not undone; it shows up as poor R-hat/ESS.)
    """
    if not isinstance(posterior, Posterior):
        raise TypeError(f"posterior must be a Posterior of an HMM fit, got {type(posterior).__name__}")
    theta = posterior.draws("theta", combine_chains=False)
    A = posterior.draws("A", combine_chains=False)
    log_lik = posterior.draws("log_lik", combine_chains=False)
    sp = posterior.draws("state_prob", combine_chains=False) if "state_prob" in posterior.variables else None
    z = posterior.draws("z", combine_chains=False) if "z" in posterior.variables else None
    if sp is not None and sp.size == 0:
        sp = None
    if z is not None and z.size == 0:
        z = None
    n_chains, _, K, _ = theta.shape
    try:
        lp = posterior.sample_stat("lp")
        ref = int(np.argmax(lp.mean(axis=1)))
    except KeyError:
        ref = 0
    ref_mean = theta[ref].mean(axis=0)
    out_t, out_a, out_sp, out_z, perms = [], [], [], [], []
    for c in range(n_chains):
        cost = np.abs(ref_mean[:, None, :] - theta[c].mean(axis=0)[None, :, :]).sum(axis=2)
        _, perm = linear_sum_assignment(cost)
        t_c, a_c, sp_c, z_c = _permute_arrays(
            theta[c], A[c], None if sp is None else sp[c],
            None if z is None else (z[c].astype(np.int64) - 1), perm,
        )
        out_t.append(t_c), out_a.append(a_c), out_sp.append(sp_c), out_z.append(z_c), perms.append(perm)
    n_draws = theta.shape[1]
    return HMMDraws(
        theta=np.concatenate(out_t),
        A=np.concatenate(out_a),
        log_lik=log_lik.reshape(-1),
        state_prob=None if sp is None else np.concatenate(out_sp),
        z=None if z is None else np.concatenate(out_z),
        chain=np.repeat(np.arange(n_chains), n_draws),
        permutations=np.array(perms),
    )


def match_states(estimated: np.ndarray, truth: np.ndarray, n_states: int | None = None) -> np.ndarray:
    """The relabelling of ``estimated`` states (0-based, any shape) that agrees best with
    ``truth`` (Hungarian algorithm on the confusion matrix): returns ``perm`` with
    ``perm[estimated]`` the matched labels."""
    est = np.asarray(estimated, dtype=int).ravel()
    tru = np.asarray(truth, dtype=int).ravel()
    if est.shape != tru.shape:
        raise ValueError(f"estimated and truth must have the same shape, got {np.shape(estimated)} and {np.shape(truth)}")
    k = max(int(est.max(initial=0)), int(tru.max(initial=0))) + 1
    k = max(k, n_states or 0)
    confusion = np.zeros((k, k))
    np.add.at(confusion, (est, tru), 1)
    rows, cols = linear_sum_assignment(-confusion)
    perm = np.empty(k, dtype=int)
    perm[rows] = cols
    return perm


def state_agreement(estimated: np.ndarray, truth: np.ndarray) -> float:
    """Share of cells whose estimated state equals the true one after the best relabelling
    (:func:`match_states`)."""
    perm = match_states(estimated, truth)
    return float(np.mean(perm[np.asarray(estimated, dtype=int)] == np.asarray(truth, dtype=int)))


# ------------------------------------------------------------------ held-out likelihood
def heldout_log_likelihood(theta: np.ndarray, log_state_weights: np.ndarray, counts: np.ndarray,
                           heldout: np.ndarray) -> np.ndarray:
    """Held-out log-likelihood of the entries of held-out cells, per draw.

    ``sum_{c held out} log sum_k w_{c,k} prod_{d,j} theta^(k,d)_j ^ n_{c,d,j}`` with
    ``theta`` (S, K, J) or (K, J), normalised log state weights (S, R, T, K) or (R, T, K)
    -- e.g. the forward-backward probabilities of a fit that masked those cells, or
    :func:`neighbour_state_log_weights` of a released OPS draw -- and the true counts
    (R, T, J). Returns an array (S,) (a scalar array for unbatched input).
    """
    theta = np.asarray(theta, dtype=float)
    w = np.asarray(log_state_weights, dtype=float)
    single = theta.ndim == 2
    if single:
        theta, w = theta[None], w[None]
    mask = np.asarray(heldout, dtype=bool)
    n = np.asarray(counts, dtype=float)[mask]                        # (C, J)
    # emission log-likelihoods of held-out cells: (S, C, K); a probability that underflowed
    # to 0 in Stan's exp(log theta) is read as the smallest positive double
    E = np.einsum("cj,skj->sck", n, np.log(np.maximum(theta, np.finfo(float).tiny)))
    out = logsumexp(w[:, mask, :] + E, axis=2).sum(axis=1)
    return out[0] if single else out


def neighbour_state_log_weights(A: np.ndarray, z: np.ndarray, heldout: np.ndarray) -> np.ndarray:
    """Log predictive state weights of held-out cells from one draw of (A, z):
    ``w_{r,t,k} ∝ A[z_{r,t-1}, k] A[k, z_{r,t+1}]`` (the dummy row ``A[0]`` before the
    first timestep, no right factor after the last). Shape (R, T, K); cells not held out
    get uniform weights (they are not used)."""
    A = np.asarray(A, dtype=float)
    z = np.asarray(z, dtype=int)
    R, T = z.shape
    K = A.shape[1]
    mask = np.asarray(heldout, dtype=bool)
    with np.errstate(divide="ignore"):
        logA = np.log(A)
    out = np.full((R, T, K), -math.log(K))
    for r, t in zip(*np.nonzero(mask)):
        w = logA[0].copy() if t == 0 else logA[1 + z[r, t - 1]].copy()
        if t + 1 < T:
            w = w + logA[1:, z[r, t + 1]]
        out[r, t] = w - logsumexp(w)
    return out


# --------------------------------------------------------------- Laplace / non-private
class _HMM:
    """Shared state: number of states, Dirichlet concentrations, the Stan model."""

    model_name = ""

    def __init__(self, n_states: int, alpha: float, beta: float, backend: str | None) -> None:
        self.n_states = check_int(n_states, "n_states", minimum=1)
        self.alpha = check_positive(alpha, "alpha")
        self.beta = check_positive(beta, "beta")
        self.backend = backend

    @property
    def stan_model(self) -> StanModel:
        return StanModel.get(self.model_name, backend=self.backend)


class NaiveBayesHMM(_HMM):
    """HMM with naive-Bayes emissions fitted to Laplace-privatised counts (E.1), and the
    named non-private baseline.

    Parameters
    ----------
    n_states : int
        K latent states (1: the naive-Bayes model).
    alpha, beta : float, default 1.0
        Dirichlet concentrations of the transition rows (including the dummy initial
        state) and of the emission distributions.
    backend : str, optional
        Stan backend (see :func:`pystanprivacy.sampling.backends.select_backend`).

    Examples
    --------
    >>> from pystanprivacy.experiments.foulds2016.warlogs import synthetic_war_logs, preprocess_war_logs
    >>> data = preprocess_war_logs(synthetic_war_logs("iraq", seed=1).records)   # doctest: +SKIP
    >>> release = NaiveBayesHMM.release(data, epsilon=5.0)                        # doctest: +SKIP
    >>> post = NaiveBayesHMM(2).fit(release, chains=2)                            # doctest: +SKIP
    >>> align_states(post).modal_states()                                         # doctest: +SKIP
    """

    model_name = "foulds2016/nb_hmm"

    def __init__(self, n_states: int, *, alpha: float = 1.0, beta: float = 1.0, backend: str | None = None) -> None:
        super().__init__(n_states, alpha, beta, backend)

    @staticmethod
    def release(
        counts: Any,
        *,
        epsilon: float | None = None,
        epsilon_per_feature: Sequence[float] | None = None,
        feature_sizes: Sequence[int] | None = None,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
        aggregate: bool = False,
        cells: Any = None,
    ) -> Release:
        """Release every cell's count vectors once: ``proj_{>=0}(n_{r,t,d,:} + Laplace(2/ε_d))``.

        Parameters
        ----------
        counts : WarLogCounts or array (R, T, J)
            Exact counts; with an array, ``feature_sizes`` gives the K_d.
        epsilon : float
            Total ε, split equally over the D features (the paper: ε = 5, 1 per feature).
        epsilon_per_feature : sequence of float
            ε_d per feature instead (the total is their sum). Give one of the two.
        accountant : PrivacyAccountant, optional
            Charged the total ε once, before any noise is drawn; nothing is released when
            it refuses.
        aggregate : bool, default False
            Release only the corpus-wide count vectors sum_{r,t} n_{r,t,d,:} (over the cells
            where ``cells`` is True, default all), as one cell: all that naive Bayes (one
            state) needs, with one draw of noise per value instead of one per cell and
            value (the same sensitivity 2). Fit it with ``NaiveBayesHMM(1)``.
        cells : array (R, T) of bool, optional
            With ``aggregate``: the cells to sum (e.g. the training cells of a split; the
            choice must not depend on the data).

        Notes
        -----
        Per feature, the count array over all cells and values has L1 sensitivity 2 under
        replace-one neighbouring log entries (the entry leaves one cell and enters one:
        parallel composition over cells); the D features of an entry compose sequentially,
        so the release is (sum_d ε_d)-DP. Every cell of the grid is released, also cells
        without entries. The grid itself (regions, months, feature values) is public input:
        when preprocessing chose it from the data, the record says so.
        """
        layout, exact = CountLayout.from_counts(counts, feature_sizes)
        D = len(layout.feature_sizes)
        if (epsilon is None) == (epsilon_per_feature is None):
            raise ValueError("give exactly one of epsilon (total, split equally) and epsilon_per_feature")
        if epsilon is not None:
            total = check_epsilon(epsilon)
            eps = [total / D] * D
        else:
            if isinstance(epsilon_per_feature, (str, bytes)) or not isinstance(epsilon_per_feature, Sequence):
                raise TypeError(f"epsilon_per_feature must be a sequence of {D} numbers, got {type(epsilon_per_feature).__name__}")
            if len(epsilon_per_feature) != D:
                raise ValueError(f"epsilon_per_feature must have one entry per feature ({D}), got {len(epsilon_per_feature)}")
            eps = [check_epsilon(e, f"epsilon_per_feature[{d}]") for d, e in enumerate(epsilon_per_feature)]
            total = float(sum(eps))
        if aggregate:
            keep = np.ones((layout.R, layout.T), dtype=bool) if cells is None else check_array(
                cells, "cells", shape=(layout.R, layout.T), kinds="biu", bounds=(0, 1), integer=True).astype(bool)
            if not keep.any():
                raise ValueError("cells must select at least one cell")
            exact = exact[keep].sum(axis=0)[None, None, :]
            layout = dataclasses.replace(layout, regions=("all regions",), months=(f"{int(keep.sum())} cells",))
        elif cells is not None:
            raise ValueError("cells selects the cells to sum and needs aggregate=True")
        # seed None: every feature's mechanism uses exact discrete Laplace noise on the integer
        # counts with cryptographic randomness; a seed: one shared Generator (reproducible)
        rng = None if seed is None else check_random_state(seed)
        if accountant is not None:
            if not isinstance(accountant, PrivacyAccountant):
                raise TypeError(f"accountant must be a PrivacyAccountant or None, got {type(accountant).__name__}")
            accountant.spend(total, label="war-log count vectors (Laplace, all features)")
        noisy = np.empty(exact.shape, dtype=float)
        per_feature = []
        randomness: dict[str, Any] = {}
        for d, sl in enumerate(layout.slices):
            mech = Laplace(epsilon=eps[d], sensitivity=COUNT_SENSITIVITY, seed=rng)
            part = mech.release(np.rint(exact[:, :, sl]).astype(np.int64))  # charged above, once
            noisy[:, :, sl] = part.values
            randomness = noise_details(part.record)
            per_feature.append({"feature": layout.features[d], "epsilon": eps[d], "scale": part.record.scale,
                                "sensitivity": COUNT_SENSITIVITY, "size": layout.feature_sizes[d]})
        scales = {f["scale"] for f in per_feature}
        record = PrivacyRecord(
            mechanism="laplace",
            epsilon=total,
            delta=0.0,
            sensitivity=COUNT_SENSITIVITY,
            sensitivity_norm="l1",
            scale=scales.pop() if len(scales) == 1 else None,
            n=max(int(exact[:, :, layout.slices[0]].sum()), 1),
            neighbouring="replace-one",
            details={
                "statistic": "count vectors n[r,t,d,:] of every region/timestep cell and feature (Eq. 50-51)",
                "per_feature": per_feature,
                "composition": (
                    "per feature the whole count array has L1 sensitivity 2 (one entry leaves one "
                    "cell, enters one: parallel composition over cells); features compose "
                    "sequentially: epsilon = sum of epsilon_d"
                ),
                "projection": "nonnegative",
                "aggregated": bool(aggregate),
                "layout": layout.to_dict(),
                "structure_from_data": layout.structure_from_data,
                "structure_note": (
                    "regions, months and feature values are treated as public; when they were chosen "
                    "from the data (thresholds, empty months, vocabularies) that choice is not covered"
                ),
                "seeded": seed is not None,
                **randomness,
                "reference": "Foulds et al. 2016, Sec. 4.2 and supplement E.1",
            },
        )
        return Release(values=project_nonnegative(noisy), record=record)

    @staticmethod
    def _check_release(release: Release) -> tuple[np.ndarray, CountLayout]:
        if not isinstance(release, Release):
            raise TypeError(f"release must be a Release made by NaiveBayesHMM.release, got {type(release).__name__}")
        rec = release.record
        if (rec.mechanism != "laplace" or rec.sensitivity != COUNT_SENSITIVITY
                or rec.details.get("projection") != "nonnegative" or "layout" not in rec.details):
            raise ValueError(
                "release must come from NaiveBayesHMM.release (Laplace, sensitivity 2, projected, with "
                f"its layout); got mechanism={rec.mechanism!r}, sensitivity={rec.sensitivity!r}"
            )
        layout = CountLayout.from_dict(rec.details["layout"])
        values = release.values
        if values.shape != (layout.R, layout.T, layout.J):
            raise ValueError(f"release values must have shape {(layout.R, layout.T, layout.J)}, got {values.shape}")
        values = check_array(values, "release values")  # finite: a tampered release never reaches the k-means start or Stan
        return values, layout

    def data(self, counts: np.ndarray, layout: CountLayout, heldout: Any = None) -> dict[str, Any]:
        """The Stan data of nb_hmm.stan for counts (R, T, J)."""
        return _stan_data(counts, layout, _check_heldout(heldout, layout), self.n_states, self.alpha, self.beta)

    def fit(self, release: Release, *, heldout: Any = None, init: str | Sequence[Mapping[str, Any]] = "kmeans",
            **sample_kwargs: Any) -> Posterior:
        """Posterior of (A, theta) given the released counts, plus per-cell state
        probabilities and state draws (post-processing of the release: ε-DP).

        ``heldout`` (R, T) bool masks cells out of the likelihood (their state probabilities
        are then predictive). ``init="kmeans"`` (default) starts every chain from a k-means
        clustering of the released counts (:func:`kmeans_initial_values`), ``"random"`` from
        Stan's random values; or give one mapping per chain. ``sample_kwargs`` go to
        :meth:`~pystanprivacy.sampling.stan.StanModel.sample` (``max_treedepth`` defaults to
        :data:`DEFAULT_MAX_TREEDEPTH`).
        """
        values, layout = self._check_release(release)
        if release.record.details.get("aggregated") and self.n_states > 1:
            raise ValueError("an aggregated release (corpus-wide counts) has no time structure; fit it with n_states=1")
        return self._sample(values, layout, heldout, init, sample_kwargs)

    def fit_nonprivate(self, counts: Any, *, feature_sizes: Sequence[int] | None = None, heldout: Any = None,
                       init: str | Sequence[Mapping[str, Any]] = "kmeans", **sample_kwargs: Any) -> Posterior:
        """Named non-private baseline: the posterior given the exact counts."""
        layout, exact = CountLayout.from_counts(counts, feature_sizes)
        return self._sample(exact, layout, heldout, init, sample_kwargs)

    def _sample(self, counts: np.ndarray, layout: CountLayout, heldout: Any, init: Any,
                sample_kwargs: Mapping[str, Any]) -> Posterior:
        data = self.data(counts, layout, heldout)
        kwargs, inits = _initial(init, counts, layout, self.n_states, heldout, sample_kwargs)
        return self.stan_model.sample(data, init=inits, **kwargs)


def _initial(init: Any, counts: np.ndarray, layout: CountLayout, n_states: int, heldout: Any,
             sample_kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """Sampler keyword arguments (with a Generator seed) and the initial values of ``init``."""
    kwargs = dict(sample_kwargs)
    if "init" in kwargs:
        raise TypeError("give initial values through init=, not in sample keyword arguments twice")
    rng = check_random_state(kwargs.pop("seed", None))
    kwargs["seed"] = rng
    kwargs.setdefault("max_treedepth", DEFAULT_MAX_TREEDEPTH)
    chains = kwargs.get("chains", 4)
    if isinstance(init, str):
        if init == "kmeans":
            return kwargs, kmeans_initial_values(counts, layout, n_states, check_int(chains, "chains", minimum=1),
                                                 rng, heldout=heldout)
        if init == "random":
            return kwargs, None
        raise ValueError(f"init must be 'kmeans', 'random' or one mapping per chain, got {init!r}")
    return kwargs, init


# ------------------------------------------------------------------------------ OPS
def _feature_sizes(feature_sizes: Sequence[int]) -> np.ndarray:
    """The feature sizes K_d as int64: a non-empty sequence of ints >= 2 (public)."""
    if isinstance(feature_sizes, (str, bytes)) or not isinstance(feature_sizes, (Sequence, np.ndarray)):
        raise TypeError(f"feature_sizes must be a sequence of ints >= 2, got {type(feature_sizes).__name__}")
    sizes = np.array([check_int(s, f"feature_sizes[{d}]", minimum=2) for d, s in enumerate(feature_sizes)],
                     dtype=np.int64)
    if sizes.size == 0:
        raise ValueError("feature_sizes must hold at least one feature")
    return sizes


def _check_multiplier(multiplier: Any) -> float:
    m = check_real(multiplier, "multiplier")
    if not (math.isfinite(m) and m > 1):
        raise ValueError(f"multiplier M must be a finite number > 1 (a0 = 1/(M K_d) < 1/K_d), got {multiplier!r}")
    return m


def ops_truncation(feature_sizes: Sequence[int], multiplier: float) -> np.ndarray:
    """Truncation points a0_d = 1 / (M K_d) of the paper's OPS experiments (Fig. 6)."""
    return 1.0 / (_check_multiplier(multiplier) * _feature_sizes(feature_sizes))


def _check_a0(a0: Any, sizes: np.ndarray) -> np.ndarray:
    arr = check_array(a0, "a0", shape=(len(sizes),), kinds="iuf")
    n_bad = int((~((arr > 0) & (arr * sizes < 1))).sum())
    if n_bad:
        raise ValueError(f"a0 must satisfy 0 < a0_d < 1/K_d for every feature; {n_bad} entr(y/ies) do not")
    return arr


def ops_log_likelihood_sensitivity(feature_sizes: Sequence[int], a0: Any) -> float:
    """Δ = sum_d log((1 - (K_d - 1) a0_d) / a0_d): the most one log entry's log-likelihood
    term sum_d log theta^(z,d)_{x_d} can change when the entry is replaced (also by one in
    another cell, whose state may differ), for emissions truncated at theta_j >= a0_d. The
    largest feasible theta_j is 1 - (K_d - 1) a0_d, the smallest a0_d. With a0_d = 1/(M K_d):
    Δ = sum_d log((M - 1) K_d + 1). The transition and prior terms do not involve the data.
    """
    sizes = _feature_sizes(feature_sizes)
    a = _check_a0(a0, sizes)
    return float(np.sum(np.log1p(-(sizes - 1) * a) - np.log(a)))


def ops_temperature(epsilon: float, feature_sizes: Sequence[int], a0: Any) -> float:
    """T = max(1, 2Δ/ε) that makes one draw of the tempered posterior ε-DP (Eq. 10)."""
    eps = check_epsilon(epsilon)
    return max(1.0, 2.0 * ops_log_likelihood_sensitivity(feature_sizes, a0) / eps)


@dataclasses.dataclass
class OPSResult:
    """Outcome of :meth:`NaiveBayesHMMOPS.sample`: the release (``None`` when refused), the
    convergence problems found (empty when every check passed), the temperature, and the
    full posterior when asked for (non-private: diagnostics only)."""

    release: Release | None
    problems: list[str]
    temperature: float
    posterior: Posterior | None = None

    @property
    def converged(self) -> bool:
        return not self.problems


@dataclasses.dataclass
class OPSDraw:
    """One released OPS draw, unpacked: theta (K, J), A (K + 1, K), z (R, T) 0-based."""

    theta: np.ndarray
    A: np.ndarray
    z: np.ndarray


class NaiveBayesHMMOPS(_HMM):
    """One-posterior sampling for the naive-Bayes HMM with truncated Dirichlet emissions.

    Parameters
    ----------
    n_states : int
        K latent states (1: naive Bayes).
    multiplier : float, default 100
        M of the truncation a0_d = 1/(M K_d) (the paper: 10 or 100); or give ``a0``.
    a0 : sequence of float, optional
        Truncation points per feature, 0 < a0_d < 1/K_d (overrides ``multiplier``).
    alpha, beta : float, default 1.0
        Dirichlet concentrations (transitions, truncated emissions).
    backend : str, optional

    Notes
    -----
    The target is ``Pr(A, theta, z, X)^(1/T)`` with T = max(1, 2Δ/ε) and Δ from
    :func:`ops_log_likelihood_sensitivity`; Stan samples (A, theta) with z summed out and
    draws z from its tempered conditional, so every iteration is an exact draw of the
    tempered joint once the chain has converged. The target is symmetric in the state
    labels, so chains are aligned before the convergence checks (:func:`align_states`) and
    the released draw gets a uniformly random relabelling (which the exact target has). The
    refusal decision looks at the data too (as in the beta-Bernoulli OPS), so
    :meth:`sample_one` charges ε for every attempt, refused or not.
    """

    model_name = "foulds2016/nb_hmm_ops"
    label = "OPS naive-Bayes HMM"

    def __init__(self, n_states: int, *, multiplier: float = 100.0, a0: Sequence[float] | None = None,
                 alpha: float = 1.0, beta: float = 1.0, backend: str | None = None) -> None:
        super().__init__(n_states, alpha, beta, backend)
        self.multiplier = _check_multiplier(multiplier)
        # numbers only (never numpy's coercion of strings); 0 < a0_d < 1/K_d is checked once the
        # feature sizes are known
        self._a0 = None if a0 is None else check_array(a0, "a0", ndim=1, kinds="iuf")

    def a0(self, feature_sizes: Sequence[int]) -> np.ndarray:
        """Truncation points for features of these sizes."""
        sizes = _feature_sizes(feature_sizes)
        if self._a0 is not None:
            return _check_a0(self._a0, sizes)
        return ops_truncation(sizes, self.multiplier)

    def sensitivity(self, feature_sizes: Sequence[int]) -> float:
        return ops_log_likelihood_sensitivity(feature_sizes, self.a0(feature_sizes))

    def temperature(self, epsilon: float, feature_sizes: Sequence[int]) -> float:
        return ops_temperature(epsilon, feature_sizes, self.a0(feature_sizes))

    def record(self, epsilon: float, layout: CountLayout, n: int, *, override: bool = False,
               seeded: bool = False) -> PrivacyRecord:
        """The privacy record of one OPS draw (``override``: ``allow_unconverged`` was used;
        ``seeded``: made with a seed, not secure). It holds public values only: no statistic of
        the run, not even whether a convergence check failed."""
        sizes = layout.feature_sizes
        a0 = self.a0(sizes)
        return PrivacyRecord(
            mechanism="ops",
            epsilon=check_epsilon(epsilon),
            delta=0.0,
            sensitivity=self.sensitivity(sizes),
            n=max(int(n), 1),
            neighbouring="replace-one",
            details={
                "model": self.model_name,
                "n_states": self.n_states,
                "temperature": self.temperature(epsilon, sizes),
                "a0": [float(a) for a in a0],
                "multiplier": None if self._a0 is not None else self.multiplier,
                "sensitivity_is": "log-likelihood sensitivity sum_d log((1-(K_d-1)a0_d)/a0_d) of one log entry",
                "released": "one draw of (theta, A, z), labels uniformly permuted",
                "assumption": "the draw comes from the converged target (checked on label-aligned theta, A "
                              "and on log_lik: split R-hat, ESS, divergences, tree depth)",
                **convergence_gate(override, "label-aligned theta, A and log_lik: split R-hat and ESS; no "
                                              "divergences or tree-depth hits"),
                "layout": layout.to_dict(),
                "structure_from_data": layout.structure_from_data,
                **ops_randomness(bool(seeded), "the released iteration and the relabelling of its states"),
                "reference": "Foulds et al. 2016, Eq. 6-10, Sec. 4.1, Sec. 5 / Fig. 6",
            },
        )

    def data(self, counts: np.ndarray, layout: CountLayout, heldout: Any, epsilon: float) -> dict[str, Any]:
        """The Stan data of nb_hmm_ops.stan (exact counts: OPS sees the raw data)."""
        mask = _check_heldout(heldout, layout)
        out = _stan_data(counts, layout, mask, self.n_states, self.alpha, self.beta)
        out["a0"] = self.a0(layout.feature_sizes)
        out["temperature"] = self.temperature(epsilon, layout.feature_sizes)
        return out

    def sample(
        self,
        counts: Any,
        *,
        epsilon: float,
        feature_sizes: Sequence[int] | None = None,
        heldout: Any = None,
        seed: SeedLike = None,
        chains: int = 4,
        warmup: int = 1000,
        draws: int = 1000,
        thresholds: Thresholds | None = None,
        allow_unconverged: bool = False,
        keep_posterior: bool = False,
        init: str | Sequence[Mapping[str, Any]] = "kmeans",
        max_treedepth: int = DEFAULT_MAX_TREEDEPTH,
        adapt_delta: float = 0.8,
    ) -> "OPSResult":
        """Run the sampler and release one draw when the convergence checks pass (or when
        ``allow_unconverged=True``, which the record states); never raises for a failed
        check: the result says what failed and ``release`` is ``None`` when refused.

        Charges no accountant and ``problems`` states statistics of the run: for
        simulations; :meth:`sample_one` is the private release. ``keep_posterior=True``
        keeps the full non-private posterior in the result, for diagnostics only. ``init``
        as in :meth:`NaiveBayesHMM.fit` (the k-means start looks at the exact counts: the
        guarantee rests on convergence to the target, whatever the start). With a seed, the
        start, Stan's seed, the iteration and the relabelling come from its Generator
        (reproducible, not secure: warned once); without one, Stan gets 31 bits from
        ``secrets`` and the iteration and relabelling come from ``secrets``.
        """
        layout, exact = CountLayout.from_counts(counts, feature_sizes)
        epsilon = check_epsilon(epsilon)
        allow_unconverged = check_allow_unconverged(allow_unconverged)
        kwargs, inits = _initial(init, exact, layout, self.n_states, heldout,
                                 dict(seed=seed, chains=chains, warmup=warmup, draws=draws,
                                      max_treedepth=max_treedepth, adapt_delta=adapt_delta))
        rng = kwargs["seed"] if seed is not None else None
        if rng is None:
            kwargs["seed"] = None  # Stan's seed from secrets (the start keeps its OS-entropy Generator)
        post = self.stan_model.sample(self.data(exact, layout, heldout, epsilon), init=inits, **kwargs)
        aligned = align_states(post)
        problems = convergence_problems(post, aligned, thresholds)
        release = None
        if not problems or allow_unconverged:
            # one iteration uniformly at random, then a uniformly random relabelling
            if rng is not None:
                warn_reproducible_not_secure()
                i = int(rng.integers(aligned.theta.shape[0]))
            else:
                i = secure_index(aligned.theta.shape[0])
            one = _permute(HMMDraws(
                theta=aligned.theta[i:i + 1], A=aligned.A[i:i + 1], log_lik=aligned.log_lik[i:i + 1],
                state_prob=None, z=aligned.z[i:i + 1], chain=aligned.chain[i:i + 1],
                permutations=aligned.permutations,
            ), rng.permutation(self.n_states) if rng is not None else secure_permutation(self.n_states))
            values = np.concatenate([one.theta[0].ravel(), one.A[0].ravel(), one.z[0].ravel().astype(float)])
            # the public override, never whether a check failed (a statistic of the private run)
            record = self.record(epsilon, layout, int(exact[:, :, layout.slices[0]].sum()),
                                 override=allow_unconverged, seeded=rng is not None)
            release = Release(values=values, record=record)
        return OPSResult(release=release, problems=problems, temperature=self.temperature(epsilon, layout.feature_sizes),
                         posterior=post if keep_posterior else None)

    def sample_one(
        self,
        counts: Any,
        *,
        epsilon: float,
        feature_sizes: Sequence[int] | None = None,
        heldout: Any = None,
        accountant: PrivacyAccountant | None = None,
        seed: SeedLike = None,
        chains: int = 4,
        warmup: int = 1000,
        draws: int = 1000,
        thresholds: Thresholds | None = None,
        allow_unconverged: bool = False,
        init: str | Sequence[Mapping[str, Any]] = "kmeans",
        max_treedepth: int = DEFAULT_MAX_TREEDEPTH,
        adapt_delta: float = 0.8,
    ) -> Release:
        """Release one draw of (theta, A, z): ε-DP for a draw from the converged target.

        ``values`` of the release pack theta, A and z (unpack with :meth:`unpack`). The
        accountant is charged ε for every attempt, before sampling, whether or not a draw is
        then released (the refusal depends on the data, so it is an output too);
        ``BudgetExceededError`` when the budget cannot cover it (nothing is charged or run).
        A failed convergence check raises :class:`~pystanprivacy.sampling.posterior.ConvergenceError`
        (ε stays charged), whose message names only the public thresholds and settings,
        unless ``allow_unconverged=True``, which the record states (``convergence_override=True``
        and ``convergence_gate``, whether or not a check failed: that is a statistic of the
        private run and is not recorded). A seed gives
        reproducibility, not security (the record says ``secure: False``; warned once).
        """
        layout, _ = CountLayout.from_counts(counts, feature_sizes)
        epsilon = check_epsilon(epsilon)
        self.temperature(epsilon, layout.feature_sizes)  # a0 must fit these features
        _check_heldout(heldout, layout)
        settings = {"warmup": warmup, "draws": draws, "chains": chains, "adapt_delta": adapt_delta,
                    "max_treedepth": max_treedepth}
        rng = check_ops_call(accountant, seed, thresholds, allow_unconverged, settings)
        _check_init(init, chains)
        charge_attempt(accountant, epsilon, self.label)
        result = self.sample(counts, epsilon=epsilon, feature_sizes=feature_sizes, heldout=heldout, seed=rng,
                             thresholds=thresholds, allow_unconverged=allow_unconverged, init=init, **settings)
        if result.release is None:
            raise ConvergenceError.refused(
                self.label, epsilon=epsilon, thresholds=thresholds or Thresholds(),
                checked=["label-aligned theta", "A", "log_lik"], settings=settings, charged=accountant is not None,
            )
        return result.release

    @staticmethod
    def unpack(release: Release) -> OPSDraw:
        """theta (K, J), A (K + 1, K) and z (R, T, 0-based) of an OPS release."""
        if not isinstance(release, Release) or release.record.mechanism != "ops" or "layout" not in release.record.details:
            raise TypeError("release must be a Release made by NaiveBayesHMMOPS.sample_one")
        layout = CountLayout.from_dict(release.record.details["layout"])
        K = int(release.record.details["n_states"])
        v = release.values
        n_theta, n_a = K * layout.J, (K + 1) * K
        if v.shape != (n_theta + n_a + layout.R * layout.T,):
            raise ValueError(f"release values have shape {v.shape}, which does not match its layout")
        return OPSDraw(
            theta=v[:n_theta].reshape(K, layout.J),
            A=v[n_theta:n_theta + n_a].reshape(K + 1, K),
            z=v[n_theta + n_a:].reshape(layout.R, layout.T).astype(np.int64),
        )


def _check_init(init: Any, chains: int) -> None:
    """``init`` is 'kmeans', 'random' or one mapping per chain (checked before a charge)."""
    if isinstance(init, str):
        if init not in ("kmeans", "random"):
            raise ValueError(f"init must be 'kmeans', 'random' or one mapping per chain, got {init!r}")
        return
    if not isinstance(init, Sequence) or not all(isinstance(m, Mapping) for m in init):
        raise TypeError(f"init must be 'kmeans', 'random' or one mapping per chain, got {type(init).__name__}")
    if len(init) != chains:
        raise ValueError(f"init must hold one mapping per chain ({chains}), got {len(init)}")


def convergence_problems(posterior: Posterior, aligned: HMMDraws | None = None,
                         thresholds: Thresholds | None = None) -> list[str]:
    """:meth:`Posterior.check` on label-aligned theta and A and on log_lik (label-invariant),
    plus the sampler's divergences and tree-depth hits."""
    aligned = aligned if aligned is not None else align_states(posterior)
    chains, n = posterior.num_chains, posterior.num_draws
    variables = {
        "theta": aligned.theta.reshape(chains, n, *aligned.theta.shape[1:]),
        "A": aligned.A.reshape(chains, n, *aligned.A.shape[1:]),
        "log_lik": aligned.log_lik.reshape(chains, n),
    }
    view = posterior.with_draws(variables)
    return view.check(thresholds)
