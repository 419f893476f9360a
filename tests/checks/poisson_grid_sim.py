"""Simulator of poisson_grid.stan (``pystanprivacy sbc``): G = 3 regions, lambda_g ~ Gamma(4, rate
0.5), counts ~ Poisson(lambda_g), released with the analytic Gaussian mechanism (L2 sensitivity
1: one person is counted once). ``simulate(rng, noise_aware=0)`` gives the naive fit's data.
Under the prior a count is negative binomial (r = 4, p = 1/3): P(count > MAX_COUNT = 80) = 2.1e-11
(``scipy.stats.nbinom(4, 1/3).sf(80)``), so the program's sum up to 80 is the whole likelihood."""

from __future__ import annotations

import numpy as np

from pystanprivacy.privacy.mechanisms import AnalyticGaussian

G = 3
MAX_COUNT = 80
DELTA = 1e-5
NOISE_AWARE = 1


def simulate(rng: np.random.Generator, *, noise_aware: int | None = None) -> dict:
    lam = rng.gamma(4.0, 2.0, size=G)
    counts = rng.poisson(lam).astype(np.int64)
    flag = NOISE_AWARE if noise_aware is None else noise_aware
    return {"parameters": {"lambda": lam}, "private": counts, "data": {"max_count": MAX_COUNT, "noise_aware": flag}}


def release(private, *, epsilon, seed=None, accountant=None):
    return AnalyticGaussian(epsilon=epsilon, delta=DELTA, sensitivity=1.0, seed=seed).release(
        np.asarray(private, dtype=np.int64), accountant=accountant, neighbouring="add-remove"
    )
