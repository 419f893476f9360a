"""Simulated count grids for the examples of the naive-Bayes HMMs (:meth:`NaiveBayesHMM.example`).

The data follow the model itself: every region is a chain of ``months`` latent states with a
sticky transition matrix, and every log entry of a (region, month) cell draws each of its
features from that cell's state's emission distribution. The result is the (R, T, J) array
of count vectors the models release (J = the sum of the feature sizes), with the state
paths and transition matrix that generated it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._validation import check_int

#: the grid of the examples: 6 regions x 72 months (as the Afghanistan logs), 3 features
REGIONS, MONTHS, FEATURE_SIZES = 6, 72, (2, 3, 4)
#: probability mass on staying in the same state (the rest spread by a Dirichlet(1) draw)
STICKINESS = 0.8


def simulate_counts(
    n: int,
    *,
    n_states: int = 2,
    seed: int = 0,
    regions: int = REGIONS,
    months: int = MONTHS,
    feature_sizes: Sequence[int] = FEATURE_SIZES,
) -> tuple[np.ndarray, dict[str, Any]]:
    """``(counts, truth)``: ``n`` log entries spread uniformly over ``regions`` x ``months``
    cells, counted per cell and feature value (shape (R, T, sum(feature_sizes))), and the
    model's quantities that generated them: ``A`` (K + 1, K) (row 0: the initial state's
    distribution, row k + 1: state k's transitions) and ``z`` (R, T), the state paths."""
    n = check_int(n, "n", minimum=1)
    K = check_int(n_states, "n_states", minimum=1)
    rng = np.random.default_rng(seed)
    A = np.vstack(
        [rng.dirichlet(np.ones(K)), (1 - STICKINESS) * rng.dirichlet(np.ones(K), size=K) + STICKINESS * np.eye(K)]
    )
    emissions = [rng.dirichlet(np.ones(size), size=K) for size in feature_sizes]  # (K, size) each
    z = np.empty((regions, months), dtype=np.int64)
    for r in range(regions):
        z[r, 0] = rng.choice(K, p=A[0])
        for t in range(1, months):
            z[r, t] = rng.choice(K, p=A[z[r, t - 1] + 1])
    entries = rng.multinomial(n, np.full(regions * months, 1.0 / (regions * months))).reshape(regions, months)
    counts = np.concatenate([rng.multinomial(entries, theta[z]) for theta in emissions], axis=-1)
    return counts.astype(np.int64), {"A": A, "z": z}
