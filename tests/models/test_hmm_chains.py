"""Per-cell conditional log-likelihood of the naive-Bayes HMM (``foulds2016_hmm.chains``): the
leave-one-cell-out density that PSIS-LOO and chain stacking use, against brute-force
enumeration of every state path; bad input refused."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from pystanprivacy.models.foulds2016_hmm.chains import cell_log_likelihood

SIZES = (3, 2)
R, T, K = 2, 4, 3


def _random_draw(rng):
    theta = np.concatenate([rng.dirichlet(np.ones(s), size=K) for s in SIZES], axis=1)  # (K, J)
    A = rng.dirichlet(np.ones(K), size=K + 1)  # (K + 1, K)
    return theta, A


def _region_log_marginal(theta, A, counts_r, cells):
    """log p(y of the cells in ``cells`` (T,) bool) of one region, summing over every path."""
    emis = counts_r @ np.log(theta).T  # (T, K)
    terms = []
    for z in itertools.product(range(K), repeat=T):
        lp = np.log(A[0, z[0]]) + sum(np.log(A[1 + z[t - 1], z[t]]) for t in range(1, T))
        terms.append(lp + sum(emis[t, z[t]] for t in range(T) if cells[t]))
    return logsumexp(terms)


def test_cell_log_likelihood_equals_brute_force_enumeration():
    """For an observed cell: log p(y_O) - log p(y_{O - c}); for a held-out cell:
    log p(y_{O + c}) - log p(y_O); every path of each region enumerated (3^4 = 81)."""
    rng = np.random.default_rng(0)
    counts = np.concatenate([rng.multinomial(5, np.full(s, 1 / s), size=(R, T)) for s in SIZES], axis=2).astype(float)
    observed = np.ones((R, T), dtype=bool)
    observed[0, 1] = observed[1, 3] = False
    draws = [_random_draw(rng) for _ in range(3)]
    got = cell_log_likelihood(np.stack([d[0] for d in draws]), np.stack([d[1] for d in draws]), counts, observed)
    assert got.shape == (3, R, T)
    for s, (theta, A) in enumerate(draws):
        for r, t in itertools.product(range(R), range(T)):
            with_c, without_c = observed[r].copy(), observed[r].copy()
            with_c[t], without_c[t] = True, False
            want = _region_log_marginal(theta, A, counts[r], with_c) - _region_log_marginal(
                theta, A, counts[r], without_c
            )
            assert got[s, r, t] == pytest.approx(want, abs=1e-9), (s, r, t)


def test_cell_log_likelihood_refuses_bad_input():
    rng = np.random.default_rng(1)
    theta, A = _random_draw(rng)
    counts = np.ones((R, T, 5))
    obs = np.ones((R, T), dtype=bool)
    with pytest.raises(ValueError, match="theta must have 3 dimension"):
        cell_log_likelihood(theta, A[None], counts, obs)
    with pytest.raises(ValueError, match=r"A must have shape \(1, 4, 3\)"):
        cell_log_likelihood(theta[None], A, counts, obs)
    with pytest.raises(ValueError, match="counts must have 5 values per cell"):
        cell_log_likelihood(theta[None], A[None], np.ones((R, T, 4)), obs)
    with pytest.raises(ValueError, match=r"observed must have shape \(2, 4\)"):
        cell_log_likelihood(theta[None], A[None], counts, obs[:1])
    with pytest.raises(ValueError, match=r"counts contains 1 value\(s\) below 0"):
        bad = counts.copy()
        bad[0, 0, 0] = -1.0
        cell_log_likelihood(theta[None], A[None], bad, obs)
