"""The simulator of ss_regression.stan for ``pystanprivacy sbc`` (simulation-based calibration).

The design: N = 5000 records with a public covariate t_i (evenly spaced on [-1, 1]; rows
x_i = (1, t_i), so ||x_i|| <= sqrt(2)) and a private outcome y_i, clipped to [-B, B], B = 6.
The release is the statistic (X'y, y'y), three numbers, with the analytic Gaussian mechanism.
Its L2 sensitivity under replace-one neighbours (one record's outcome changes, the design is
public) follows from the clipping bounds:

    |Δ X'y| = ||x_i|| |y_i - y_i'| <= sqrt(2) 2B,    |Δ y'y| = |y_i² - y_i'²| <= B²,
    Δ_2 <= sqrt(8 B² + B⁴) = B sqrt(8 + B²)  (= 39.8 at B = 6).

``simulate(rng)`` draws (beta, sigma) from the program's prior and the outcomes given them;
``release(...)`` clips and releases. ``ss_regression_naive_sim.py`` is the same simulator for
the naive fit. The program's likelihood assumes that the clipping does not bind. Under the
prior a record is clipped with probability 6.8e-5 on average (exact normal tails averaged over
20 000 prior draws), so about 7 % of the replicates clip one or more of their 5000 records, each
by a little: that moves y'y by far less than the noise (sigma about 180), and is what the
simulation includes (``clipped_share`` counts it).
"""

from __future__ import annotations

import numpy as np

from pystanprivacy.privacy.mechanisms import AnalyticGaussian

N = 5000
#: the public covariate and design X (N, 2)
T = np.linspace(-1.0, 1.0, N)
X = np.column_stack([np.ones(N), T])
#: the clipping bound of the outcomes: a public declaration, never read from the data
B = 6.0
SENSITIVITY = B * np.sqrt(8.0 + B**2)
DELTA = 1e-6


def public_data(*, noise_aware: int = 1) -> dict:
    """The program's data besides the release (the ``--data`` file of ``pystanprivacy fit``)."""
    return {"n": N, "XtX": (X.T @ X).tolist(), "noise_aware": int(noise_aware)}


def simulate(rng: np.random.Generator, *, noise_aware: int = 1) -> dict:
    """One draw of (beta, sigma) from the prior and of the private outcomes given them."""
    beta = rng.normal(0.0, 0.5, size=2)
    sigma = float(np.exp(rng.normal(0.0, 0.25)))
    y = X @ beta + sigma * rng.normal(size=N)
    return {"parameters": {"beta": beta, "sigma": sigma}, "private": y, "data": public_data(noise_aware=noise_aware)}


def statistics(y) -> np.ndarray:
    """(X'y, y'y) of the outcomes clipped to [-B, B]."""
    yc = np.clip(np.asarray(y, dtype=float), -B, B)
    return np.append(X.T @ yc, yc @ yc)


def clipped_share(y) -> float:
    """The share of outcomes the clipping changes (for the simulation's own report)."""
    return float(np.mean(np.abs(np.asarray(y)) > B))


def release(private, *, epsilon, seed=None, accountant=None):
    """(X'y, y'y) of the clipped outcomes with the analytic Gaussian mechanism (``seed=None``:
    discrete Gaussian noise on a fine power-of-two grid from the secure sampler; a seed:
    reproducible continuous noise, for simulations only)."""
    mechanism = AnalyticGaussian(epsilon=epsilon, delta=DELTA, sensitivity=SENSITIVITY, seed=seed)
    return mechanism.release(
        statistics(private), accountant=accountant, n=N, bounds=(-B, B), neighbouring="replace-one"
    )
