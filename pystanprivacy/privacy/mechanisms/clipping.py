"""Clipping and projections: deterministic maps that bound the data before a mechanism
(:class:`Clip`, :class:`ClipL2`, :func:`row_norms`) or post-process a release at no privacy
cost (:func:`project_nonnegative`, :func:`project_simplex`).

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
   Privacy", 2014, Section 3.3 and Proposition 2.1 (post-processing).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._validation import check_array, check_bounds, check_positive, check_radius

__all__ = ["Clip", "ClipL2", "project_nonnegative", "project_simplex", "row_norms"]


class Clip:
    """Clip values elementwise to ``[lower, upper]``.

    Bounding the data this way makes e.g. a sum have L1 sensitivity
    ``upper - lower`` under replace-one neighbouring.

    References
    ----------
    .. [1] Dwork & Roth (2014), Section 3.3 (sensitivity of bounded queries).
    """

    def __init__(self, lower: float, upper: float) -> None:
        self.lower, self.upper = check_bounds((lower, upper), "(lower, upper)")

    def __repr__(self) -> str:
        return f"Clip(lower={self.lower!r}, upper={self.upper!r})"

    def __call__(self, x: Any) -> np.ndarray:
        """Return a clipped float64 copy of ``x`` (no NaN/inf allowed)."""
        arr = check_array(x, "x", kinds="iuf")
        return np.clip(arr, self.lower, self.upper)

    def details(self) -> dict[str, Any]:
        """JSON-safe description for ``PrivacyRecord.details``."""
        return {"clipping": {"type": "interval", "lower": self.lower, "upper": self.upper}}


def row_norms(rows: np.ndarray, *, strict: bool = False) -> np.ndarray:
    """L2 norm of each row of a 2-d array, without overflow or underflow.

    With ``strict``, return the larger of this and the plain
    ``numpy.linalg.norm`` (where finite), so that a bound checked against it
    also holds for the straightforward computation.
    """
    peak = np.max(np.abs(rows), axis=1, initial=0.0)
    safe = np.where(peak > 0, peak, 1.0)
    norms = peak * np.linalg.norm(rows / safe[:, None], axis=1)
    if strict:
        with np.errstate(over="ignore"):
            plain = np.linalg.norm(rows, axis=1)
        norms = np.maximum(norms, np.where(np.isfinite(plain), plain, 0.0))
    return norms


class ClipL2:
    """Scale each row with L2 norm above ``radius`` down to norm ``radius``.

    After clipping, every row's norm is ``<= radius`` exactly (checked in
    floating point), so replacing one row changes a sum by at most
    ``2 * radius`` in L2 (``radius`` under add/remove). ``radius`` must be at least
    the smallest normal float64, 2**-1022 (:func:`~pystanprivacy._validation.check_radius`):
    a public check, so whether a row can be clipped never depends on the row.

    References
    ----------
    .. [1] M. Abadi et al., "Deep Learning with Differential Privacy", CCS
       2016, Algorithm 1 (per-example norm clipping x / max(1, ||x||/C)).
    """

    def __init__(self, radius: float) -> None:
        self.radius = check_radius(radius, "radius")

    def __repr__(self) -> str:
        return f"ClipL2(radius={self.radius!r})"

    def __call__(self, x: Any) -> np.ndarray:
        """Clip the rows of an ``(n, d)`` array (a 1-d array is one row)."""
        arr = check_array(x, "x", ndim=(1, 2), kinds="iuf")
        rows = np.atleast_2d(arr)
        # norm = peak * |rows / peak| with |rows / peak| in [1, sqrt(d)]: compare and scale
        # through the unit rows, so neither the norm (> 1.8e308) nor the factor
        # radius / norm (subnormal) is ever formed
        peak = np.max(np.abs(rows), axis=1, initial=0.0)
        unit = rows / np.where(peak > 0, peak, 1.0)[:, None]
        unit_norm = np.linalg.norm(unit, axis=1)
        big = peak > self.radius / np.where(unit_norm > 0, unit_norm, 1.0)
        rows[big] = unit[big] * (self.radius / unit_norm[big])[:, None]
        for _ in range(8):  # rounding may leave a norm 1 ulp above radius
            over = row_norms(rows, strict=True) > self.radius
            if not over.any():
                break
            rows[over] *= np.nextafter(1.0, 0.0) ** 4
        else:
            # subnormal coordinates (a radius near 2**-1022 over many coordinates) do not move
            # by a relative step: halve what is still over, which ends (at 0 at the latest)
            over = row_norms(rows, strict=True) > self.radius
            while over.any():
                rows[over] *= 0.5
                over = row_norms(rows, strict=True) > self.radius
        return rows.reshape(arr.shape)

    def details(self) -> dict[str, Any]:
        """JSON-safe description for ``PrivacyRecord.details``."""
        return {"clipping": {"type": "l2", "radius": self.radius}}


def project_nonnegative(x: Any) -> np.ndarray:
    """Euclidean projection onto the nonnegative orthant, ``max(x, 0)``.

    Post-processing of a private release: costs no privacy.

    References
    ----------
    .. [1] Dwork & Roth (2014), Proposition 2.1 (post-processing).
    """
    return np.maximum(check_array(x, "x", kinds="iuf"), 0.0)


def project_simplex(x: Any, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of each row onto ``{v >= 0, sum(v) = total}``.

    Sort-based algorithm: sort ``u`` descending, let
    ``rho = max{j : u_j - (sum_{i<=j} u_i - total)/j > 0}`` and
    ``theta = (sum_{i<=rho} u_i - total)/rho``; the projection is
    ``max(x - theta, 0)``. Vectorised over the rows of a 2-d array.

    Parameters
    ----------
    x : array_like, shape (d,) or (n, d)
    total : float, default 1.0
        Finite, > 0.

    Returns
    -------
    numpy.ndarray
        Same shape as ``x``.

    References
    ----------
    .. [1] J. Duchi, S. Shalev-Shwartz, Y. Singer and T. Chandra, "Efficient
       Projections onto the l1-Ball for Learning in High Dimensions", ICML
       2008, Figure 1.
    .. [2] W. Wang and M. A. Carreira-Perpinan, "Projection onto the
       probability simplex: An efficient algorithm with a simple proof",
       arXiv:1309.1541, 2013, Algorithm 1.
    """
    total = check_positive(total, "total")
    arr = check_array(x, "x", ndim=(1, 2), kinds="iuf")
    if arr.shape[-1] == 0:
        raise ValueError("x must have at least one column")
    rows = np.atleast_2d(arr)
    # The projection does not change when a constant is added to a row: shift each row so
    # that its largest value is 0, and raise values that cannot be in the support (below
    # max - total) to -total, so that huge inputs neither overflow nor swamp the total.
    peak = np.max(rows, axis=1, keepdims=True, initial=-np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        rows = np.maximum(rows - peak, -total)
    u = -np.sort(-rows, axis=1)
    css = np.cumsum(u, axis=1) - total
    j = np.arange(1, rows.shape[1] + 1)
    rho = np.count_nonzero(u - css / j > 0, axis=1)  # >= 1 always
    theta = css[np.arange(rows.shape[0]), rho - 1] / rho
    return np.maximum(rows - theta[:, None], 0.0).reshape(arr.shape)
