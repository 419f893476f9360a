"""Point-estimate baselines for histograms from optimal-unary-encoding (OUE) reports, the
comparison of Kulkarni et al. (2022), Figure 3 and 9.

* :func:`oue_frequency_estimate` -- the unbiased frequency estimate of Wang et al. (2017),
  f̂_k = (mean_i z_ik − q) / (p − q), p = 1/2, q = 1/(e^ε + 1); it can be negative and need
  not sum to one.
* :func:`oue_projected_estimate` -- its least-squares (Euclidean) projection onto the
  probability simplex (the L2 post-processing of Hay et al. 2010 that the paper uses).
* :func:`solution_quality` -- whether an estimate is *unusable* (trivial: it puts zero
  mass on a category whose true frequency is positive, i.e. it lies on the simplex
  boundary) or *misordered* (its ranking of the categories differs from the truth), the
  "fraction of unusable or misleading (trivial, unordered) solutions" of Figure 3 and 9.

All are post-processing of ε-LDP reports: they cost no privacy.

References
----------
.. [1] T. Wang, J. Blocki, N. Li and S. Jha (2017), "Locally differentially private
   protocols for frequency estimation", USENIX Security, Sec. 4.4 (OUE, p = 1/2,
   q = 1/(e^ε + 1)) and Eq. 2 (the estimator).
.. [2] M. Hay, V. Rastogi, G. Miklau and D. Suciu (2010), "Boosting the accuracy of
   differentially private histograms through consistency", PVLDB (least-squares
   consistency).
.. [3] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela (2022), Sec. 3.2.2 and 4.5.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..._validation import check_array, check_epsilon
from ...privacy.ldp import oue_probabilities
from ...privacy.mechanisms import project_simplex

__all__ = ["oue_frequency_estimate", "oue_projected_estimate", "solution_quality"]


def oue_frequency_estimate(reports: Any, epsilon: float) -> np.ndarray:
    """Unbiased OUE frequency estimate (mean(z) − q)/(p − q) per category.

    Parameters
    ----------
    reports : array_like of {0, 1}, shape (N, d) or (R, N, d)
    epsilon : float
        The per-user ε the reports were made with.

    Returns
    -------
    ndarray, shape (d,) or (R, d)
    """
    arr = check_array(reports, "reports", ndim=(2, 3), integer=True, bounds=(0, 1))
    if arr.shape[-2] == 0:
        raise ValueError("reports must hold at least one report")
    p, q = oue_probabilities(check_epsilon(epsilon))
    return (arr.mean(axis=-2) - q) / (p - q)


def oue_projected_estimate(reports: Any, epsilon: float) -> np.ndarray:
    """Least-squares projection of :func:`oue_frequency_estimate` onto the simplex."""
    return project_simplex(oue_frequency_estimate(reports, epsilon))


def solution_quality(estimates: Any, truth: Any) -> dict[str, np.ndarray]:
    """Flags per estimate: ``unusable`` (zero mass where the truth is positive),
    ``misordered`` (ranking differs from the truth's; ties in the truth are not allowed),
    and ``bad`` (either).

    Parameters
    ----------
    estimates : array_like, shape (d,) or (R, d)
    truth : array_like, shape (d,), strictly ordered (no ties)
    """
    est = np.atleast_2d(check_array(estimates, "estimates", ndim=(1, 2), kinds="iuf"))
    t = check_array(truth, "truth", ndim=1, shape=(est.shape[1],), kinds="iuf")
    if np.unique(t).size != t.size:
        raise ValueError("truth must have distinct entries for the ordering check")
    unusable = np.any((est <= 0) & (t > 0), axis=1)
    misordered = np.any(np.argsort(-est, axis=1, kind="stable") != np.argsort(-t, kind="stable"), axis=1)
    return {"unusable": unusable, "misordered": misordered, "bad": unusable | misordered}
