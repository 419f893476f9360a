"""Where the HMM chains start: k-means initial values of (A, eta) from the counts the fit
sees, the sampler defaults, and the checks of ``init``."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..._validation import SeedLike, check_int, check_random_state
from .counts import CountLayout, _check_heldout, reference_values

__all__ = ["DEFAULT_MAX_TREEDEPTH", "kmeans_initial_values"]

#: NUTS tree-depth limit of the HMM fits unless given (Stan's default is 10). Early warm-up,
#: with the unit metric, reaches depth 10 (1023 leapfrog steps) on these posteriors while
#: after adaptation depth 5 is typical; a limit of 7 cut the warm-up cost ~3x in the
#: benchmark (10 states, 5 regions x 36 months) with identical post-warm-up behaviour.
#: Post-warm-up iterations that hit the limit are reported by the convergence checks.
DEFAULT_MAX_TREEDEPTH = 7


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
