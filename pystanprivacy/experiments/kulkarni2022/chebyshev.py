"""Supplement Figure 6 of Kulkarni, Jälkö, Kaski & Honkela (2022) (supplement Sec. 7): how well
the degree-2 Chebyshev polynomial of the sigmoid (Eq. 12), the approximation behind the
perturbed-inputs logistic model (Eq. 44,
:class:`~pystanprivacy.models.kulkarni2022_regression.LogisticRegressionInputs`), approximates
``E[sigmoid(x' theta)]``.

The paper's protocol (caption of supplement Figure 6): for each dimension d, one random full-rank
covariance Sigma; 50 runs, each with a new ``theta ~ N(0, I_d)`` and 1000 samples
``x ~ N(0, Sigma)`` restricted to L2 norm at most 1; the mean absolute difference between the
empirical ``E[sigmoid(x' theta)]`` and its Chebyshev approximation
``b_0 + b_1 E[x' theta] + b_2 E[(x' theta)^2]``, the coefficients from the interval ``[-3, 3]``.
The paper does not say how the norm is restricted (here: rows above norm 1 are scaled to norm 1,
:class:`~pystanprivacy.privacy.mechanisms.ClipL2`, as the model's release clips) nor how Sigma is
drawn (here: ``A A' / d + 0.1 I`` with ``A`` standard normal, a fixed seed per d). Both
expectations are taken over the same samples, so the difference is the polynomial's error alone.
The interval of the package's model (``cheb_radius = 4``) is reported next to the paper's 3.

With zero-mean x the protocol is kind to the polynomial: on a symmetric interval ``b_2 = 0`` and
``sigmoid(t) - 1/2`` is odd, so both sides are close to 1/2. In the model, Eq. 44 averages over
``x | z_x ~ N(h, A)``, whose ``t = x' theta`` has a non-zero mean m.
:func:`chebyshev_error_grid` gives the error there, exactly (Gauss-Hermite quadrature) for
``t ~ N(m, s^2)``, with the approximation clipped to [0, 1] as the model clips it.
No data and no privacy budget are involved.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import expit

from ..._validation import check_int, check_positive
from ...models.kulkarni2022_regression import chebyshev_sigmoid
from ...privacy.mechanisms import ClipL2
from ...run.runner import task_seeds

#: dimensions of the full run (the paper's axis is not stated in its text)
DIMS = (1, 2, 3, 4, 5, 6, 8, 10, 15, 20)
#: the paper's interval [-3, 3] and the model's default [-4, 4]
RADII = (3.0, 4.0)
#: the seed stream of :func:`chebyshev_quality` (one child seed per dimension)
STREAM = "kulkarni2022/chebyshev"
#: mean and sd of t = x' theta in :func:`chebyshev_error_grid`
MEANS = tuple(float(v) for v in np.linspace(-4.0, 4.0, 33))
SDS = (0.0, 0.5, 1.0, 2.0)


def chebyshev_quality(dims: Sequence[int] = DIMS, *, radii: Sequence[float] = RADII, runs: int = 50,
                      samples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """One row per dimension x interval radius x run: the empirical ``E[sigmoid(x' theta)]``, its
    degree-2 Chebyshev approximation on ``[-radius, radius]`` and their absolute difference."""
    dims = [check_int(d, "dims[i]", minimum=1) for d in dims]
    radii = [check_positive(r, "radii[i]") for r in radii]
    runs = check_int(runs, "runs", minimum=1)
    samples = check_int(samples, "samples", minimum=1)
    if not dims or not radii:
        raise ValueError("dims and radii must each hold at least one value")
    rows = []
    for d, ss in zip(dims, task_seeds(seed, len(dims), stream=STREAM)):
        rng = np.random.default_rng(ss)
        A = rng.normal(size=(d, d))
        sigma = A @ A.T / d + 0.1 * np.eye(d)                   # random full rank, fixed for this d
        for run in range(runs):
            theta = rng.normal(size=d)
            x = ClipL2(1.0)(rng.multivariate_normal(np.zeros(d), sigma, size=samples))
            t = x @ theta
            empirical = float(expit(t).mean())
            for radius in radii:
                b = chebyshev_sigmoid(radius, 2)
                approx = float(b[0] + b[1] * t.mean() + b[2] * np.mean(t ** 2))
                rows.append({"d": d, "radius": radius, "run": run, "theta_norm": float(np.linalg.norm(theta)),
                             "empirical": empirical, "chebyshev": approx, "abs_diff": abs(empirical - approx)})
    return pd.DataFrame(rows)


def chebyshev_error_grid(means: Sequence[float] = MEANS, sds: Sequence[float] = SDS, *,
                         radii: Sequence[float] = RADII, nodes: int = 80) -> pd.DataFrame:
    """``|E[sigmoid(t)] - clip(b_0 + b_1 m + b_2 (m^2 + s^2), 0, 1)|`` for ``t ~ N(m, s^2)``: the
    error of Eq. 44 for one user whose ``x' theta`` given the report has mean m and sd s. The
    expectation by ``nodes``-point Gauss-Hermite quadrature (exact to ~1e-12 here)."""
    nodes = check_int(nodes, "nodes", minimum=2)
    radii = [check_positive(r, "radii[i]") for r in radii]
    xi, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    rows = []
    for radius in radii:
        b = chebyshev_sigmoid(radius, 2)
        for m in means:
            for sd in sds:
                sd = float(sd)
                if not (np.isfinite(m) and np.isfinite(sd) and sd >= 0):
                    raise ValueError(f"means must be finite and sds finite and >= 0, got mean {m!r}, sd {sd!r}")
                exact = float(np.sum(w * expit(m + sd * xi)))
                approx = float(np.clip(b[0] + b[1] * m + b[2] * (m * m + sd * sd), 0.0, 1.0))
                rows.append({"radius": radius, "mean": float(m), "sd": sd, "exact": exact, "chebyshev": approx,
                             "abs_diff": abs(exact - approx)})
    return pd.DataFrame(rows)


def summarise_chebyshev(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation of ``abs_diff`` over runs, per dimension and radius."""
    g = table.groupby(["radius", "d"], sort=True)["abs_diff"]
    out = g.agg(["mean", "std", "max", "count"]).reset_index()
    return out.rename(columns={"mean": "abs_diff_mean", "std": "abs_diff_sd", "max": "abs_diff_max", "count": "runs"})


__all__ = ["DIMS", "RADII", "MEANS", "SDS", "STREAM", "chebyshev_quality", "chebyshev_error_grid", "summarise_chebyshev"]
