"""Where the HMM chains start: an EM (Baum-Welch) solution or k-means clusterings of the
counts the fit sees, the sampler defaults, and the checks of ``init``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ..._validation import SeedLike, check_int, check_random_state, check_real
from .counts import CountLayout, _check_heldout, _check_reference, reference_values

__all__ = [
    "DEFAULT_MAX_TREEDEPTH",
    "DISPERSED_KINDS",
    "INIT_METHODS",
    "balanced_reference_values",
    "dispersed_initial_values",
    "dispersed_kinds",
    "em_initial_values",
    "em_solution",
    "kmeans_initial_values",
]

#: the named starts of the HMM fits (``init=``): "em" (default), "kmeans", "random", "dispersed"
INIT_METHODS = ("em", "kmeans", "random", "dispersed")

#: the kinds of start that ``init="dispersed"`` gives chains 1, 2, 3, 4, ... in turn (chain 0
#: starts from the best EM solution): see :func:`dispersed_initial_values`
DISPERSED_KINDS = ("em-own", "kmeans", "prior")

#: NUTS tree-depth limit of the HMM fits unless given (Stan's default is 10). Early warm-up,
#: with the unit metric, reaches depth 10 (1023 leapfrog steps) on these posteriors while
#: after adaptation depth 5 is typical; a limit of 7 cut the warm-up cost ~3x in the
#: benchmark (10 states, 5 regions x 36 months) with identical post-warm-up behaviour.
#: Post-warm-up iterations that hit the limit are reported by the convergence checks.
DEFAULT_MAX_TREEDEPTH = 7


def kmeans_initial_values(
    counts: np.ndarray,
    layout: CountLayout,
    n_states: int,
    chains: int,
    seed: SeedLike = None,
    *,
    heldout: Any = None,
    iterations: int = 20,
    restarts: int = 5,
    stickiness: float = 0.8,
) -> list[dict[str, Any]]:
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
    cells = counts[mask]  # (C, J)
    freq = np.concatenate(
        [cells[:, s] / np.maximum(cells[:, s].sum(axis=1, keepdims=True), 1e-12) for s in layout.slices], axis=1
    )
    used = cells[:, layout.slices[0]].sum(axis=1) > 0
    freq, cells = freq[used], cells[used]
    K = n_states
    out = []
    for _ in range(chains):
        if len(freq) >= K > 1:
            best = None
            for _restart in range(restarts):
                assign, sse = _kmeans(freq, K, iterations, rng)
                if best is None or sse < best[1]:
                    best = (assign, sse)
            assign = best[0]
            pooled = np.array(
                [
                    cells[assign == k].sum(axis=0) if np.any(assign == k) else cells[int(rng.integers(len(cells)))]
                    for k in range(K)
                ]
            )
        else:
            pooled = np.repeat(cells.sum(axis=0, keepdims=True), K, axis=0) if len(cells) else np.ones((K, layout.J))
        A = np.full((K + 1, K), (1.0 - stickiness) / max(K - 1, 1))
        A[0] = 1.0 / K
        A[1:][np.arange(K), np.arange(K)] = stickiness if K > 1 else 1.0
        out.append(_start(pooled + 0.5, A, layout, refs))
    return out


def _start(weights: np.ndarray, A: np.ndarray, layout: CountLayout, refs: list[int]) -> dict[str, Any]:
    """Initial values ``{"A", "eta"}`` in the programs' coordinates from positive emission
    weights (K, J) (normalised per feature: theta^(k,d) proportional to them) and transitions A
    (K + 1, K)."""
    K = weights.shape[0]
    eta = np.empty((layout.J - len(layout.feature_sizes), K))
    pos = 0
    for sl, ref in zip(layout.slices, refs):
        block = np.log(weights[:, sl])  # (K, K_d)
        n = sl.stop - sl.start
        eta[pos : pos + n - 1] = np.delete(block - block[:, ref : ref + 1], ref, axis=1).T
        pos += n - 1
    return {"A": np.asarray(A, dtype=float).tolist(), "eta": eta.tolist()}


def _normalise_features(weights: np.ndarray, layout: CountLayout) -> np.ndarray:
    """log theta (K, J) from positive weights: every feature's block normalised."""
    out = np.empty_like(weights, dtype=float)
    for sl in layout.slices:
        block = np.log(weights[:, sl])
        out[:, sl] = block - logsumexp(block, axis=1, keepdims=True)
    return out


def _forward_backward(
    E: np.ndarray, log_rho: np.ndarray, log_a: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward-backward on every region at once: emission log-likelihoods E (R, T, K),
    initial log_rho (K,), transitions log_a (K, K). Returns the per-region log-likelihood
    (R,), the state posteriors gamma (R, T, K) and the expected transition counts summed
    over regions and time (K, K)."""
    R, T, K = E.shape
    la = np.empty((R, T, K))
    lb = np.zeros((R, T, K))
    la[:, 0] = log_rho + E[:, 0]
    for t in range(1, T):
        la[:, t] = logsumexp(la[:, t - 1, :, None] + log_a[None], axis=1) + E[:, t]
    for t in range(T - 2, -1, -1):
        lb[:, t] = logsumexp(log_a[None] + (E[:, t + 1] + lb[:, t + 1])[:, None, :], axis=2)
    ll = logsumexp(la[:, -1], axis=1)  # (R,)
    gamma = np.exp(la + lb - ll[:, None, None])
    if T > 1:
        xi = la[:, :-1, :, None] + log_a[None, None] + (E[:, 1:] + lb[:, 1:])[:, :, None, :] - ll[:, None, None, None]
        trans = np.exp(xi).sum(axis=(0, 1))
    else:
        trans = np.zeros((K, K))
    return ll, gamma, trans


def _baum_welch(
    counts: np.ndarray,
    observed: np.ndarray,
    layout: CountLayout,
    log_theta: np.ndarray,
    A: np.ndarray,
    *,
    iterations: int,
    tol: float,
    pseudo: float,
) -> tuple[np.ndarray, np.ndarray, float]:
    """EM for the naive-Bayes HMM from (log_theta, A): the M-step adds ``pseudo`` to every
    expected count (a Dirichlet(1 + pseudo) MAP, which keeps every value positive).
    Returns (log_theta, A, log-likelihood of the cells in ``observed`` at the result)."""
    ll_old = -np.inf
    for _it in range(iterations + 1):
        E = (counts @ log_theta.T) * observed[..., None]  # (R, T, K)
        log_a = np.log(A)
        lls, gamma, trans = _forward_backward(E, log_a[0], log_a[1:])
        ll = float(lls.sum())
        if ll - ll_old <= tol * max(abs(ll), 1.0) or _it == iterations:
            return log_theta, A, ll
        ll_old = ll
        weights = np.einsum("rtk,rtj->kj", gamma * observed[..., None], counts) + pseudo
        log_theta = _normalise_features(weights, layout)
        rows = np.vstack([gamma[:, 0].sum(axis=0), trans]) + pseudo
        A = rows / rows.sum(axis=1, keepdims=True)
    return log_theta, A, ll  # pragma: no cover (the loop returns)


def em_solution(
    counts: np.ndarray,
    layout: CountLayout,
    n_states: int,
    seed: SeedLike = None,
    *,
    heldout: Any = None,
    restarts: int = 8,
    iterations: int = 200,
    tol: float = 1e-8,
    pseudo: float = 0.5,
) -> tuple[np.ndarray, np.ndarray, float]:
    """The best of ``restarts`` EM (Baum-Welch) runs of the naive-Bayes HMM on ``counts``:
    ``(theta (K, J), A (K + 1, K), log-likelihood)``.

    Each run starts from the k-means clustering of one k-means++ seeding of the cells
    (:func:`kmeans_initial_values`) and iterates until the relative log-likelihood gain is
    below ``tol`` (at most ``iterations`` steps); the M-step adds ``pseudo`` to every
    expected count (every probability stays positive). Held-out cells are left out. A
    function of ``counts`` and ``seed`` only.
    """
    rng = check_random_state(seed)
    K = check_int(n_states, "n_states", minimum=1)
    restarts = check_int(restarts, "restarts", minimum=1)
    iterations = check_int(iterations, "iterations", minimum=1)
    counts = np.asarray(counts, dtype=float)
    refs = reference_values(counts, layout)
    observed = (~_check_heldout(heldout, layout)).astype(float)
    best = None
    for start in kmeans_initial_values(counts, layout, K, restarts, rng, heldout=heldout, restarts=1):
        log_theta = _normalise_features(np.exp(_eta_to_log_weights(np.asarray(start["eta"]), layout, refs)), layout)
        fit = _baum_welch(
            counts, observed, layout, log_theta, np.asarray(start["A"]), iterations=iterations, tol=tol, pseudo=pseudo
        )
        if best is None or fit[2] > best[2]:
            best = fit
    log_theta, A, ll = best
    return np.exp(log_theta), A, ll


def balanced_reference_values(theta: np.ndarray, layout: CountLayout) -> list[int]:
    """Per feature, the (0-based) value whose smallest probability over the states of
    ``theta`` (K, J) is largest: a reference value that is common in EVERY state.

    Why: the programs' coordinates are eta_j = log theta_j - log theta_reference. When the
    reference is rare in one state (the corpus-wide most frequent category can be rare in a
    state when regions and states differ, as in the war logs), log theta_reference of that
    state is uncertain and every eta of the state moves with it: a strongly correlated
    posterior that a diagonal metric cannot adapt to (bulk ESS of theta near 10 in 100
    draws). The model is the same for any reference.
    """
    theta = np.asarray(theta, dtype=float)
    return [int(np.argmax(theta[:, sl].min(axis=0))) for sl in layout.slices]


def em_initial_values(
    counts: np.ndarray,
    layout: CountLayout,
    n_states: int,
    chains: int,
    seed: SeedLike = None,
    *,
    heldout: Any = None,
    reference: Sequence[int] | None = None,
    restarts: int = 8,
    iterations: int = 200,
    tol: float = 1e-8,
    jitter: float = 0.05,
    pseudo: float = 0.5,
) -> tuple[list[dict[str, Any]], list[int]]:
    """Initial values of (A, eta) for every chain from the best EM (Baum-Welch) solution of
    the HMM on ``counts`` (:func:`em_solution`), and the reference values of their ``eta``
    coordinates.

    Why: on logs like the real war logs (tens of thousands of entries, skewed regions,
    bursts, empty cells, emissions that drift) the posterior has several deep modes; NUTS
    chains started apart (Stan's random values, or each chain's own k-means clustering)
    can settle in different ones and never meet, so R-hat fails however long they run.
    Here every chain starts from the EM solution of highest likelihood, its ``eta`` moved
    by independent N(0, ``jitter``^2) noise so that the chains do not start at one point;
    the chains then sample the mode of highest likelihood (where the posterior mass
    concentrates with this much data) and R-hat checks mixing within it.

    Returns
    -------
    (inits, reference)
        One mapping ``{"A", "eta"}`` per chain, and the 0-based reference value per feature
        of the ``eta`` coordinates: ``reference`` when given, else
        :func:`balanced_reference_values` of the EM solution. Fit with the same reference
        (the models' ``init="em"`` does).

    Privacy: a function of ``counts`` and ``seed`` only. For a Laplace fit ``counts`` are
    the released noisy counts (post-processing of the release); for OPS they are the exact
    counts, and the start is part of the charged mechanism; for the non-private baseline
    the exact counts. Held-out cells are left out.
    """
    rng = check_random_state(seed)
    chains = check_int(chains, "chains", minimum=1)
    jitter = check_real(jitter, "jitter")
    if not (np.isfinite(jitter) and jitter >= 0):
        raise ValueError(f"jitter must be a finite number >= 0, got {jitter!r}")
    theta, A, _ = em_solution(
        counts, layout, n_states, rng, heldout=heldout, restarts=restarts, iterations=iterations, tol=tol, pseudo=pseudo
    )
    refs = (
        balanced_reference_values(theta, layout)
        if reference is None
        else _check_reference(reference, np.asarray(counts, dtype=float), layout)
    )
    eta = np.asarray(_start(theta, A, layout, refs)["eta"])
    inits = [
        {"A": np.asarray(A).tolist(), "eta": (eta + jitter * rng.standard_normal(eta.shape)).tolist()}
        for _ in range(chains)
    ]
    return inits, refs


def dispersed_kinds(chains: int) -> list[str]:
    """The kind of start of every chain under ``init="dispersed"``: ``"em"`` for chain 0,
    then :data:`DISPERSED_KINDS` in turn (``"em-own"``, ``"kmeans"``, ``"prior"``, ``"em-own"``, ...)."""
    chains = check_int(chains, "chains", minimum=1)
    return ["em"] + [DISPERSED_KINDS[(c - 1) % len(DISPERSED_KINDS)] for c in range(1, chains)]


def _prior_weights(
    rng: np.random.Generator, layout: CountLayout, n_states: int, alpha: float, beta: float
) -> tuple[np.ndarray, np.ndarray]:
    """One draw of the prior: emission weights (K, J), every feature's block ~ Dirichlet(beta)
    per state, and transitions A (K + 1, K), every row ~ Dirichlet(alpha). Gamma draws that
    underflow to 0 (tiny concentrations) are raised to the smallest positive double, so that
    the start has finite coordinates; they are initial values, not a release."""
    tiny = np.finfo(float).tiny
    weights = np.maximum(rng.gamma(beta, size=(n_states, layout.J)), tiny)
    rows = np.maximum(rng.gamma(alpha, size=(n_states + 1, n_states)), tiny)
    for sl in layout.slices:
        weights[:, sl] /= weights[:, sl].sum(axis=1, keepdims=True)
    return weights, rows / rows.sum(axis=1, keepdims=True)


def dispersed_initial_values(
    counts: np.ndarray,
    layout: CountLayout,
    n_states: int,
    chains: int,
    seed: SeedLike = None,
    *,
    heldout: Any = None,
    alpha: float = 1.0,
    beta: float = 1.0,
    restarts: int = 8,
    iterations: int = 200,
    tol: float = 1e-8,
    jitter: float = 0.05,
    pseudo: float = 0.5,
) -> tuple[list[dict[str, Any]], list[int]]:
    """Initial values of (A, eta) that put every chain at its own, dispersed start, and the
    reference values of their ``eta`` coordinates: for many chains from different starts,
    combined by stacking (:mod:`pystanprivacy.sampling.stacking`) or judged by
    label-invariant R-hat.

    The mix (:func:`dispersed_kinds`), chain by chain:

    * chain 0, ``"em"``: the best of ``restarts`` EM runs (:func:`em_solution`), the centre
      of the default ``init="em"`` start, without jitter;
    * then in turn ``"em-own"``: ONE EM run from the chain's own k-means++ seeding (a local
      optimum of its own; :func:`em_solution` with ``restarts=1``), ``"kmeans"``: the chain's
      own k-means clustering (:func:`kmeans_initial_values`, no EM), and ``"prior"``: a draw
      of the prior (every transition row ~ Dirichlet(``alpha``), every state's emission
      distribution of every feature ~ Dirichlet(``beta``)).

    Every start's ``eta`` is then moved by independent N(0, ``jitter``^2) noise (as in
    :func:`em_initial_values`), so that no two chains start at one point even where two EM
    runs end at the same optimum.

    Why: the default start puts every chain near one EM solution, so chains that agree show
    only that NUTS stays in that mode; on logs like the real war logs the posterior has
    several deep modes that NUTS does not cross (Foulds et al. 2016's HMM; issue 49). Chains
    from dispersed starts find such modes, which label-invariant R-hat then reports and
    stacking weighs (Yao, Vehtari & Gelman 2022, Sec. 4: many chains from dispersed starts).

    Returns
    -------
    (inits, reference)
        One mapping ``{"A", "eta"}`` per chain (every start in the same coordinates) and the
        0-based reference value per feature: :func:`balanced_reference_values` of the best
        EM solution.

    Privacy: a function of ``counts``, ``seed`` and the public prior only (as
    :func:`em_initial_values`): for a Laplace fit the released noisy counts
    (post-processing), for OPS the exact counts (the start is part of the charged
    mechanism), for the non-private baseline the exact counts. Held-out cells are left out.

    References
    ----------
    .. [1] Y. Yao, A. Vehtari and A. Gelman (2022), "Stacking for non-mixing Bayesian
       computations: the curse and blessing of multimodal posteriors", JMLR 23(79).
    .. [2] J. Foulds, J. Geumlek, M. Welling and K. Chaudhuri (2016), UAI, Sec. 5.
    """
    rng = check_random_state(seed)
    kinds = dispersed_kinds(chains)
    jitter = check_real(jitter, "jitter")
    if not (np.isfinite(jitter) and jitter >= 0):
        raise ValueError(f"jitter must be a finite number >= 0, got {jitter!r}")
    alpha, beta = check_real(alpha, "alpha"), check_real(beta, "beta")
    if not (np.isfinite(alpha) and alpha > 0 and np.isfinite(beta) and beta > 0):
        raise ValueError(f"alpha and beta must be finite numbers > 0, got {alpha!r} and {beta!r}")
    em = dict(heldout=heldout, iterations=iterations, tol=tol, pseudo=pseudo)
    theta, A, _ = em_solution(counts, layout, n_states, rng, restarts=restarts, **em)
    refs = balanced_reference_values(theta, layout)
    counts = np.asarray(counts, dtype=float)
    kmeans_refs = reference_values(counts, layout)
    inits = []
    for kind in kinds:
        if kind == "em-own":
            theta, A, _ = em_solution(counts, layout, n_states, rng, restarts=1, **em)
        elif kind == "kmeans":
            (start,) = kmeans_initial_values(counts, layout, n_states, 1, rng, heldout=heldout)
            theta = np.exp(_eta_to_log_weights(np.asarray(start["eta"]), layout, kmeans_refs))
            A = np.asarray(start["A"])
        elif kind == "prior":
            theta, A = _prior_weights(rng, layout, n_states, alpha, beta)
        start = _start(theta, A, layout, refs)
        eta = np.asarray(start["eta"])
        inits.append({"A": start["A"], "eta": (eta + jitter * rng.standard_normal(eta.shape)).tolist()})
    return inits, refs


def _eta_to_log_weights(eta: np.ndarray, layout: CountLayout, refs: list[int]) -> np.ndarray:
    """Unnormalised log theta (K, J) of programme coordinates eta (J - D, K) (reference 0)."""
    K = eta.shape[1]
    out = np.zeros((K, layout.J))
    pos = 0
    for sl, ref in zip(layout.slices, refs):
        n = sl.stop - sl.start
        cols = [j for j in range(n) if j != ref]
        out[:, sl.start + np.array(cols)] = eta[pos : pos + n - 1].T
        pos += n - 1
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


def _initial(
    init: Any,
    counts: np.ndarray,
    layout: CountLayout,
    n_states: int,
    heldout: Any,
    sample_kwargs: Mapping[str, Any],
    *,
    prior: tuple[float, float] = (1.0, 1.0),
) -> tuple[dict[str, Any], Any, list[int] | None]:
    """Sampler keyword arguments (with a Generator seed), the initial values of ``init`` and
    the reference values of their coordinates (``None``: :func:`reference_values`);
    ``prior`` is the model's (alpha, beta), for the prior draws of ``init="dispersed"``."""
    kwargs = dict(sample_kwargs)
    if "init" in kwargs:
        raise TypeError("give initial values through init=, not in sample keyword arguments twice")
    rng = check_random_state(kwargs.pop("seed", None))
    kwargs["seed"] = rng
    kwargs.setdefault("max_treedepth", DEFAULT_MAX_TREEDEPTH)
    chains = kwargs.get("chains", 4)
    if isinstance(init, str):
        _check_init(init, chains)
        chains = check_int(chains, "chains", minimum=1)
        if init == "random":
            return kwargs, None, None
        if init == "em":
            return kwargs, *em_initial_values(counts, layout, n_states, chains, rng, heldout=heldout)
        if init == "dispersed":
            alpha, beta = prior
            return kwargs, *dispersed_initial_values(
                counts, layout, n_states, chains, rng, heldout=heldout, alpha=alpha, beta=beta
            )
        return kwargs, kmeans_initial_values(counts, layout, n_states, chains, rng, heldout=heldout), None
    return kwargs, init, None


def _check_init(init: Any, chains: int) -> None:
    """``init`` is 'em', 'kmeans', 'random', 'dispersed' or one mapping per chain (checked before a charge)."""
    if isinstance(init, str):
        if init not in INIT_METHODS:
            raise ValueError(
                f"init must be 'em', 'kmeans', 'random', 'dispersed' or one mapping per chain, got {init!r}"
            )
        return
    if not isinstance(init, Sequence) or not all(isinstance(m, Mapping) for m in init):
        raise TypeError(
            f"init must be 'em', 'kmeans', 'random', 'dispersed' or one mapping per chain, got {type(init).__name__}"
        )
    if len(init) != chains:
        raise ValueError(f"init must hold one mapping per chain ({chains}), got {len(init)}")
