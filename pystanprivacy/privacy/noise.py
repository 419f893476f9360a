"""Floating-point-safe noise: exact discrete samplers, cryptographic randomness, a power-of-two grid.

Why
---
Adding ``numpy`` Laplace or Gaussian noise to a float leaks information through the
low-order bits of the result (Mironov 2012), and a seeded pseudo-random generator can be
replayed. Releases made **without a seed** therefore use, as OpenDP and Google's DP
library do,

* **exact samplers** (Canonne, Kamath & Steinke 2020, Algorithms 1-3): Bernoulli(p) for
  rational p, Bernoulli(exp(-gamma)) for rational gamma >= 0, the discrete Laplace
  distribution ``P(k) ∝ exp(-|k|/t)`` for rational t > 0, and the discrete Gaussian
  ``P(k) ∝ exp(-k²/(2σ²))`` for rational σ² > 0. They use only integer and
  :class:`fractions.Fraction` arithmetic: no float is involved in sampling, so the output
  distribution is exactly the stated one (given uniform random integers).
* **cryptographic randomness**: uniform integers from :func:`secrets.randbelow` (the
  operating system's CSPRNG) through :class:`SecureRandom`. :class:`SeededRandom` wraps a
  ``numpy.random.Generator`` (exact for arbitrarily large ranges, by rejection over 63-bit
  chunks); it is reproducible and **not secure** and is meant for tests and audits.
* **a power-of-two grid** for real-valued statistics: a value ``x`` is rounded exactly to
  the nearest multiple of ``g = 2^k`` (``m = rint(x / g)``, an exact Python int for every
  finite float64), integer noise ``K`` is added in Python ints, and the float64 nearest
  ``(m + K) g`` is returned: exact while ``|m + K| <= 2^53`` (see "Range" below: nothing on
  this path refuses or clamps a finite value).

Privacy parameters as exact rationals
-------------------------------------
A float epsilon is used as its exact binary value ``Fraction(epsilon)``. The discrete
Laplace scale for integer sensitivity ``D`` is ``t = D / Fraction(epsilon)``, so the
mechanism is exactly epsilon-DP: ``P(k)/P(k') <= exp(|k - k'| / t) <= exp(epsilon)``.
Randomised response flips with the exact probability ``1/(1 + e^epsilon)``
(:func:`bernoulli_logistic`).

Grid choice and rounding
------------------------
For a real statistic with sensitivity ``Δ`` (L1 for Laplace, L2 for Gaussian) where one
neighbour can change at most ``c`` coordinates, the grid is

    g = 2^k,  k = floor(log2(Δ / (2^20 c)))       (so g <= Δ 2^-20 / c),

see :func:`grid_exponent`. Rounding moves each coordinate by at most ``g/2``, so two
neighbouring inputs differ after rounding by at most ``Δ/g + c`` grid units in L1 (each
changed coordinate's rounding errors differ by at most one unit), hence the integer L1
sensitivity ``floor(Δ/g) + c``; in L2 by at most ``Δ/g + sqrt(c)``. The extra noise this
costs is a relative ``c g / Δ <= 2^-20`` of the scale (about 1e-6). Integer statistics
(integer dtype) use ``g = 1`` and no rounding. The Gaussian mechanisms also keep σ >= 128
grid steps (a finer grid when σ is small against Δ; integer input is exactly on every grid
``2^k``, k <= 0, so it is never rounded). When the noise would be too wide for the grid
(see "Range"), the grid is coarsened (a larger ``k``) until it fits; the rounding allowance
then costs more, and the record's ``scale`` says how much.

Range: no data-dependent refusal, no clamp
------------------------------------------
The data domain is the **finite reals**: NaN, ±inf and non-numbers are refused (they are
not data, like a wrong type). Every finite value is accepted: a refusal that depends on
the private values would tell neighbouring data sets apart for free. And every finite value
is **represented**: :func:`to_grid` gives its exact grid index as a Python int of any size,
:func:`noisy_sum` adds the noise in Python ints, and :func:`from_grid` returns the float64
nearest ``(m + K) g``, or ``±FLOAT_MAX`` beyond the float64 range. That last step is a
function of the noisy value ``m + K`` alone (post-processing: no privacy cost). (Before
issue 53 each value was clamped to ``2^52`` grid steps, e.g. 262,144 for a 10,000-bin
histogram at any epsilon: a count of 300,000 came back as 262,144 without a word.)
The mechanisms record ``details["representable_range"]`` = ``±FLOAT_MAX`` and
``details["exact_range"]`` = ``±2^52 g``, within which a value comes back exactly on the
grid (except with probability ``<= 2^-64`` per coordinate, below); beyond it the output is
the nearest float64, which is all a float64 can hold.

The noise limits are decided from public parameters only, before any budget is spent.
Per coordinate,

* discrete Laplace with scale ``t`` (grid steps): ``P(|K| >= n) = 2 q^n / (1 + q)`` with
  ``q = e^{-1/t}``, so ``P(|K| > N) <= 2 exp(-N/t)``;
* discrete Gaussian ``N_Z(0, σ²)``: sub-Gaussian, ``E[e^{λK}] <= e^{λ²σ²/2}`` (CKS 2020,
  Corollary 9), so ``P(|K| > N) <= 2 exp(-N²/(2σ²))`` (Chernoff).

With ``N = 2^52`` these are ``<= 2^-64`` when ``t <= 2^52 / (65 ln 2)`` (about 1.0e14,
:data:`MAX_LAPLACE_SCALE_UNITS`) and ``σ <= 2^52 / sqrt(130 ln 2)`` (about 4.7e14,
:data:`MAX_GAUSSIAN_SIGMA_UNITS`). The mechanisms coarsen the grid until their noise
meets this and refuse (``ValueError`` naming epsilon) only when no grid does, i.e. when
epsilon is too small for the number of changed coordinates. Then ``|m + K| <= 2^53`` for a
value in the exact range except with probability ``<= 2^-64`` per coordinate, and nothing
after the budget is charged can raise (Python ints do not overflow; :func:`from_grid`
saturates instead of raising).

Noise-aware models: the continuous likelihood for discrete/grid noise
--------------------------------------------------------------------
The models use the continuous Laplace/Gaussian density with the scale recorded in the
release (``record.scale`` = ``t g`` for discrete Laplace, ``σ g`` for the discrete
Gaussian). What that approximation costs:

* **Integer statistic, integer noise (g = 1).** The discrete Laplace pmf is
  ``P(y | s) = tanh(1/(2t)) exp(-|y - s| / t)`` for integers y, s: the continuous density
  at ``y - s`` times a normaliser that does not depend on the latent ``s``. Likewise the
  discrete Gaussian pmf is ``exp(-(y - s)²/(2σ²)) / Z(σ)``. So when the latent statistic
  is an integer (a count) the continuous likelihood is **exact up to a constant**, and the
  posterior is exactly the noise-aware posterior.
* **Real statistic on the grid g.** The output is ``y = r(x) + K g`` with
  ``r(x) = g rint(x / g)``, ``|r(x) - x| <= g/2``. For Laplace (``b = t g``)

      | log p_disc(y | x) - log p_cont(y | x) - C | = | |y - x| - |y - r(x)| | / b <= g / (2b),

  and for the Gaussian (``s = σ g``)

      | log p_disc(y | x) - log p_cont(y | x) - C | <= (g |y - x| + g²/4) / (2 s²),

  i.e. about ``g/(2s)`` per observation at typical ``|y - x| ≈ s``; C does not depend on
  x. With the grid above ``g / b <= epsilon 2^-20 / c``, so the log-likelihood of every
  observation is within about ``1e-6 epsilon`` of the exact one (tested in
  ``tests/privacy/test_noise.py``).

Discrete Gaussian privacy
-------------------------
For one changed coordinate (``c = 1``) with integer sensitivity ``D``, the discrete
Gaussian mechanism is (epsilon, delta)-DP with (CKS 2020, Theorem 7)

    delta = P[Y > epsilon σ²/D - D/2] - e^epsilon P[Y > epsilon σ²/D + D/2],  Y ~ N_Z(0, σ²);

:func:`discrete_gaussian_delta` bounds it rigorously from above (integral bounds on the
tails, Poisson summation for the normaliser). For several changed coordinates the
mechanism is rho-zCDP with ``rho = D2² / (2σ²)`` (CKS 2020, Theorem 14; its extra term is
below 1e-300 for σ >= 100 grid units, which we require), converted to (epsilon, delta)
with CKS 2020, Corollary 13 (:func:`zcdp_delta`). This conversion is looser than the
analytic Gaussian calibration, so vector releases get a somewhat larger σ (recorded).

References
----------
.. [1] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
   Privacy", NeurIPS 2020 (arXiv:2004.00010). Algorithm 1 (Bernoulli(exp(-gamma))),
   Algorithm 2 (discrete Laplace), Algorithm 3 (discrete Gaussian), Theorem 7
   (privacy of the discrete Gaussian), Theorem 14 (multivariate, zCDP), Corollary 13
   (zCDP to approximate DP).
.. [2] I. Mironov, "On Significance of the Least Significant Bits for Differential
   Privacy", CCS 2012.
.. [3] OpenDP Library, "Floating-point safety" (rounding to a power-of-two grid before
   adding integer noise).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import secrets
from collections.abc import Iterator
from fractions import Fraction
from typing import Any, Protocol

import numpy as np
from scipy.special import log_ndtr

from .._validation import check_random_state

__all__ = [
    "RandomSource",
    "SecureRandom",
    "SeededRandom",
    "as_source",
    "simulated_randomness",
    "secure_source",
    "SIMULATED_RANDOMNESS",
    "bernoulli",
    "bernoulli_exp",
    "bernoulli_logistic",
    "discrete_laplace",
    "discrete_gaussian",
    "sample_discrete_laplace",
    "sample_discrete_gaussian",
    "sample_bernoulli_logistic",
    "exact_rational",
    "grid_exponent",
    "to_grid",
    "from_grid",
    "discrete_gaussian_delta",
    "zcdp_delta",
    "discrete_gaussian_sigma",
    "noisy_sum",
    "laplace_tail_bound",
    "gaussian_tail_bound",
    "GRID_BITS",
    "MAX_EXACT",
    "MAX_INPUT_STEPS",
    "FLOAT_MAX",
    "OVERFLOW_PROBABILITY",
    "MAX_LAPLACE_SCALE_UNITS",
    "MAX_GAUSSIAN_SIGMA_UNITS",
]

GRID_BITS = 20
"""The grid is at most ``2^-GRID_BITS`` of the sensitivity (per changed coordinate)."""

MAX_EXACT = 2**53
"""Integers of absolute value <= 2^53 are exact in float64."""

MAX_INPUT_STEPS = 2**52
"""Values within ``|x / g| <= 2^52`` come back exactly on the grid (the noise limits below
keep ``|m + K| <= 2^53`` there except with probability 2^-64); larger values come back as
the nearest float64. Nothing is clamped."""

FLOAT_MAX = float(np.finfo(np.float64).max)
"""The largest finite float64: a noisy value beyond it is returned as ±FLOAT_MAX."""

OVERFLOW_PROBABILITY = 2.0**-64
"""Per-coordinate bound on ``P(|noise| > 2^52 grid steps)`` that the mechanisms require."""

_LN2 = math.log(2.0)

MAX_LAPLACE_SCALE_UNITS = math.floor(MAX_INPUT_STEPS / (65.0 * _LN2) * (1.0 - 1e-12))
"""Largest discrete Laplace scale ``t`` (grid steps) with ``2 exp(-2^52/t) <= 2^-64``
(about 1.0e14; the factor ``1 - 1e-12`` covers the rounding of ``ln 2``)."""

MAX_GAUSSIAN_SIGMA_UNITS = MAX_INPUT_STEPS / math.sqrt(130.0 * _LN2) * (1.0 - 1e-12)
"""Largest discrete Gaussian σ (grid steps) with ``2 exp(-2^104/(2σ²)) <= 2^-64`` (about 4.7e14)."""


# ==========================================================================
# Randomness sources
# ==========================================================================


class RandomSource(Protocol):
    """Anything with ``randbelow(n) -> int`` uniform on {0, ..., n-1} for any n >= 1."""

    secure: bool

    def randbelow(self, n: int) -> int: ...


class SecureRandom:
    """Uniform integers from the operating system's CSPRNG (:func:`secrets.randbelow`).

    Deliberately unbuffered and stateless: a buffer of random bytes would be shared by
    threads and duplicated into forked worker processes (identical noise in two releases).
    """

    secure = True
    description = "cryptographic (secrets)"

    def randbelow(self, n: int) -> int:
        return secrets.randbelow(n)

    def __repr__(self) -> str:
        return "SecureRandom()"


class SeededRandom:
    """Uniform integers from a ``numpy.random.Generator``: reproducible, **not secure**.

    ``randbelow(n)`` is exact for every ``n >= 1``: rejection sampling over
    ``ceil(bits(n) / 63)`` uniform 63-bit chunks (drawn from the generator in batches of
    4096), keeping the low ``bits(n)`` bits and retrying while the result is ``>= n``.
    """

    secure = False
    description = "seeded numpy generator: reproducible, not secure"
    _BATCH = 4096

    def __init__(self, seed: Any = None) -> None:
        self.generator = check_random_state(seed)
        self._buf: list[int] = []
        self._pos = 0

    def _chunk(self) -> int:
        if self._pos >= len(self._buf):
            self._buf = self.generator.integers(0, 2**63, size=self._BATCH, dtype=np.int64).tolist()
            self._pos = 0
        c = self._buf[self._pos]
        self._pos += 1
        return c

    def randbelow(self, n: int) -> int:
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n!r}")
        bits = (n - 1).bit_length()
        if bits == 0:
            return 0
        chunks = -(-bits // 63)
        mask = (1 << bits) - 1
        while True:
            r = 0
            for _ in range(chunks):
                r = (r << 63) | self._chunk()
            r &= mask
            if r < n:
                return r

    def __repr__(self) -> str:
        return "SeededRandom(<numpy Generator>)"


def as_source(rng: Any) -> SecureRandom | SeededRandom:
    """``None`` -> :class:`SecureRandom`; a seed or Generator -> :class:`SeededRandom`;
    a source (anything with ``randbelow``) is returned as is."""
    if rng is None:
        return SecureRandom()
    if hasattr(rng, "randbelow") and not isinstance(rng, np.random.Generator):
        return rng
    return SeededRandom(rng)


SIMULATED_RANDOMNESS = (
    "simulation: the secure path's exact samplers fed by a seeded generator "
    "(reproducible, not secure; simulated data only)"
)
"""``details["randomness"]`` of a release made inside :func:`simulated_randomness`."""

_SIMULATION_SOURCE: contextvars.ContextVar[SeededRandom | None] = contextvars.ContextVar(
    "pystanprivacy_simulation_source", default=None
)


@contextlib.contextmanager
def simulated_randomness(seed: Any) -> Iterator[SeededRandom]:
    """Within the block, a mechanism made with ``seed=None`` runs its **secure path** (the
    same plan, grid, exact integer samplers and record as a real release), its uniform
    integers drawn from :class:`SeededRandom` ``(seed)`` instead of the CSPRNG.

    For simulated data only (simulation-based calibration, audits): the releases have the
    distribution of real ones (discrete noise on the recorded grid), and they are
    reproducible, so **not secure**: their records say ``secure: False``, ``simulated: True``
    and ``randomness`` = :data:`SIMULATED_RANDOMNESS`. The source is taken when the mechanism
    is constructed (:func:`secure_source`); the block is per thread / per asyncio task
    (a :class:`contextvars.ContextVar`), so a real release elsewhere in the process keeps
    the CSPRNG. Yields the source.
    """
    source = seed if isinstance(seed, SeededRandom) else SeededRandom(seed)
    token = _SIMULATION_SOURCE.set(source)
    try:
        yield source
    finally:
        _SIMULATION_SOURCE.reset(token)


def secure_source() -> SecureRandom | SeededRandom:
    """The source of a mechanism's secure path: :class:`SecureRandom`, or inside
    :func:`simulated_randomness` that block's seeded source."""
    simulated = _SIMULATION_SOURCE.get()
    return SecureRandom() if simulated is None else simulated


# ==========================================================================
# Exact rationals of public parameters
# ==========================================================================


def exact_rational(value: Any, name: str, *, positive: bool = True) -> Fraction:
    """The exact rational value of a finite real (a float's binary value, not its decimal).

    Raises ``TypeError`` for non-reals (bool, str, None, complex) and ``ValueError`` for
    NaN, inf or (with ``positive``) values <= 0, naming ``name`` and the value.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Rational, numbers.Real)):
        raise TypeError(f"{name} must be a real number (int, float or Fraction), got {type(value).__name__} {value!r}")
    if isinstance(value, numbers.Rational):
        frac = Fraction(int(value.numerator), int(value.denominator))
    else:
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite, got {value!r}")
        frac = Fraction(v)
    if positive and frac <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return frac


def _check_size(size: Any) -> tuple[int, ...]:
    if isinstance(size, (bool, np.bool_)):
        raise TypeError(f"size must be an int or a tuple of ints, got bool {size!r}")
    if isinstance(size, (int, np.integer)):
        size = (int(size),)
    if not isinstance(size, tuple) or not all(
        isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)) for s in size
    ):
        raise TypeError(f"size must be an int or a tuple of ints, got {type(size).__name__} {size!r}")
    if any(s < 0 for s in size):
        raise ValueError(f"size must be non-negative, got {size!r}")
    return tuple(int(s) for s in size)


# ==========================================================================
# Exact samplers (Canonne, Kamath & Steinke 2020)
# ==========================================================================


def bernoulli(p: Fraction, src: RandomSource) -> bool:
    """Exact Bernoulli(p) for rational p in [0, 1]: ``randbelow(den) < num``."""
    return src.randbelow(p.denominator) < p.numerator


# The samplers below carry rationals as (numerator, denominator) pairs of Python ints:
# the same exact arithmetic as Fraction, without its per-operation cost.


def _bexp_le1(num: int, den: int, src: RandomSource) -> bool:
    """Bernoulli(exp(-num/den)) for 0 <= num/den <= 1 (CKS 2020, Algorithm 1, first part):
    K = 1; while Bernoulli(gamma/K): K += 1; return K odd."""
    k = 1
    while src.randbelow(den * k) < num:
        k += 1
    return k % 2 == 1


def _bexp(num: int, den: int, src: RandomSource) -> bool:
    """Bernoulli(exp(-num/den)) for num/den >= 0 (CKS 2020, Algorithm 1): floor(gamma)
    Bernoulli(exp(-1)) trials, then one Bernoulli(exp(-frac(gamma)))."""
    whole = num // den
    for _ in range(whole):
        if not _bexp_le1(1, 1, src):
            return False
    return _bexp_le1(num - whole * den, den, src)


def bernoulli_exp(gamma: Fraction, src: RandomSource) -> bool:
    """Exact Bernoulli(exp(-gamma)) for rational gamma >= 0 (CKS 2020, Algorithm 1)."""
    return _bexp(gamma.numerator, gamma.denominator, src)


def _blogistic(num: int, den: int, src: RandomSource) -> bool:
    while True:
        if src.randbelow(2) == 0:
            return False
        if _bexp(num, den, src):
            return True


def bernoulli_logistic(epsilon: Fraction, src: RandomSource) -> bool:
    """Exact Bernoulli(1/(1 + e^epsilon)) for rational epsilon >= 0.

    Rejection: a fair coin c; c = 0 is accepted as 0; c = 1 is accepted as 1 with
    probability exp(-epsilon) (else start again). So
    ``P(1) = e^-eps / (1 + e^-eps) = 1 / (1 + e^eps)`` exactly.
    """
    return _blogistic(epsilon.numerator, epsilon.denominator, src)


def _dlap(num: int, den: int, src: RandomSource) -> int:
    # CKS 2020, Algorithm 2 with t = num, s = den (scale t/s)
    while True:
        u = src.randbelow(num)
        if not _bexp(u, num, src):
            continue
        v = 0
        while _bexp_le1(1, 1, src):
            v += 1
        y = (u + num * v) // den
        if src.randbelow(2):
            if y == 0:
                continue
            return -y
        return y


def discrete_laplace(t: Fraction, src: RandomSource) -> int:
    """One exact draw with ``P(k) ∝ exp(-|k| / t)``, rational t > 0 (CKS 2020, Algorithm 2)."""
    return _dlap(t.numerator, t.denominator, src)


def _dgauss(s2n: int, s2d: int, src: RandomSource) -> int:
    # CKS 2020, Algorithm 3: t = floor(sigma) + 1, Y ~ DLap(t), accept w.p.
    # exp(-(|Y| - sigma²/t)² / (2 sigma²)) = exp(-(|Y| t s2d - s2n)² / (2 t² s2d s2n))
    t = math.isqrt(s2n // s2d) + 1
    den = 2 * t * t * s2d * s2n
    while True:
        y = _dlap(t, 1, src)
        if _bexp((abs(y) * t * s2d - s2n) ** 2, den, src):
            return y


def discrete_gaussian(sigma2: Fraction, src: RandomSource) -> int:
    """One exact draw with ``P(k) ∝ exp(-k² / (2 sigma2))``, rational sigma2 > 0 (CKS 2020, Algorithm 3)."""
    return _dgauss(sigma2.numerator, sigma2.denominator, src)


def _fill(size: Any, draw) -> np.ndarray:
    shape = _check_size(size)
    n = math.prod(shape)
    out = np.empty(n, dtype=np.int64)
    lim = 2**63 - 1
    for i in range(n):
        k = draw()
        if abs(k) > lim:  # pragma: no cover - needs a scale near 2^60
            raise OverflowError("a discrete noise draw does not fit in int64; the scale is too large")
        out[i] = k
    return out.reshape(shape)


def sample_discrete_laplace(t: Any, size: Any, *, rng: Any = None) -> np.ndarray:
    """Exact discrete Laplace draws ``P(k) ∝ exp(-|k|/t)`` as an int64 array.

    Parameters
    ----------
    t : int, float or Fraction
        Scale, finite, > 0; a float is used as its exact binary value.
    size : int or tuple of int
    rng : None, int, numpy.random.Generator or a RandomSource
        ``None`` (default): cryptographic randomness (:class:`SecureRandom`). A seed or
        Generator: :class:`SeededRandom` (reproducible, not secure; tests and audits).

    References
    ----------
    Canonne, Kamath & Steinke (2020), Algorithm 2.
    """
    tt = exact_rational(t, "t")
    src = as_source(rng)
    return _fill(size, lambda: discrete_laplace(tt, src))


def sample_discrete_gaussian(sigma2: Any, size: Any, *, rng: Any = None) -> np.ndarray:
    """Exact discrete Gaussian draws ``P(k) ∝ exp(-k²/(2 sigma2))`` as an int64 array.

    ``sigma2`` (the variance parameter sigma², finite, > 0) is used exactly; ``rng`` as in
    :func:`sample_discrete_laplace`. Canonne, Kamath & Steinke (2020), Algorithm 3.
    """
    s2 = exact_rational(sigma2, "sigma2")
    src = as_source(rng)
    return _fill(size, lambda: discrete_gaussian(s2, src))


def sample_bernoulli_logistic(epsilon: Any, size: Any, *, rng: Any = None) -> np.ndarray:
    """Exact Bernoulli(1/(1 + e^epsilon)) draws (0/1, int64); epsilon finite, > 0."""
    eps = exact_rational(epsilon, "epsilon")
    src = as_source(rng)
    return _fill(size, lambda: int(bernoulli_logistic(eps, src)))


# ==========================================================================
# The power-of-two grid
# ==========================================================================


def grid_exponent(sensitivity: float, changed: int = 1) -> int:
    """``k`` with ``g = 2^k`` the largest power of two ``<= sensitivity 2^-20 / changed``."""
    sens = float(sensitivity)
    if not (math.isfinite(sens) and sens > 0):
        raise ValueError(f"sensitivity must be a finite number > 0, got {sensitivity!r}")
    if isinstance(changed, bool) or not isinstance(changed, (int, np.integer)) or changed < 1:
        raise ValueError(f"changed must be an int >= 1, got {changed!r}")
    ratio = Fraction(sens) / (Fraction(2) ** GRID_BITS * int(changed))
    k = ratio.numerator.bit_length() - ratio.denominator.bit_length()
    # now 2^(k-1) < ratio < 2^(k+1); fix k so that 2^k <= ratio < 2^(k+1)
    while Fraction(2) ** k > ratio:
        k -= 1
    while Fraction(2) ** (k + 1) <= ratio:
        k += 1
    return k


def _object_array(ints: list[int], shape: tuple[int, ...]) -> np.ndarray:
    """An object array of ``shape`` holding the Python ints ``ints`` (C order), unconverted."""
    out = np.empty(len(ints), dtype=object)
    out[:] = ints
    return out.reshape(shape)


def to_grid(x: np.ndarray, k: int, name: str = "value") -> np.ndarray:
    """Exact ``rint(x / 2^k)`` (round half to even) of every finite ``x``, as Python ints.

    Parameters
    ----------
    x : array_like of float, or an integer ndarray
        Finite reals (the data domain). NaN and ±inf are not data: ``ValueError`` (a
        count, never the values). An integer ndarray is used exactly (never through float64,
        which rounds beyond 2^53).
    k : int
        Grid exponent, ``g = 2^k``.
    name : str
        Argument name for the error message.

    Returns
    -------
    numpy.ndarray of object
        Python ints of any size, the shape of ``x``.

    Notes
    -----
    Nothing is clamped or refused for its size: every finite float64 has an exact grid
    index. Scaling by a power of two is exact in binary floating point and ``rint`` of a
    float is exact, so indices below 2^62 come from NumPy; the rest (``x / 2^k`` beyond
    2^62, or beyond the float64 range when the grid is fine) from exact rational arithmetic
    (``round`` of a :class:`~fractions.Fraction`, also half to even). Underflow in the
    scaling only affects values that round to 0 anyway.
    """
    k = int(k)
    if isinstance(x, np.ndarray) and x.dtype.kind in "iu":  # exact integers: m = x / 2^k rounded
        ints = [v << -k if k <= 0 else round(Fraction(v, 1 << k)) for v in x.reshape(-1).tolist()]
        return _object_array(ints, x.shape)
    arr = np.asarray(x, dtype=np.float64)
    n_bad = int(np.count_nonzero(~np.isfinite(arr)))
    if n_bad:
        raise ValueError(
            f"{name} contains {n_bad} non-finite value(s) (NaN or inf); the data domain is the finite reals"
        )
    with np.errstate(over="ignore", under="ignore"):
        scaled = np.ldexp(arr, -k).reshape(-1)
    fast = np.abs(scaled) < 2.0**62  # False for an overflow to inf
    ints = np.rint(np.where(fast, scaled, 0.0)).astype(np.int64).tolist()
    flat = arr.reshape(-1)
    for i in np.flatnonzero(~fast).tolist():
        ints[i] = round(Fraction(float(flat[i])) / Fraction(2) ** k)
    return _object_array(ints, arr.shape)


def noisy_sum(m: np.ndarray, draw) -> np.ndarray:
    """``m_i + K_i`` as Python ints (object array), ``K_i = draw()`` one per element (C order).

    The sum is formed with Python integers: no draw and no index can overflow.
    """
    flat = np.asarray(m, dtype=object).reshape(-1)
    return _object_array([int(mi) + draw() for mi in flat], np.shape(m))


def laplace_tail_bound(t: float, n: float) -> float:
    """Upper bound ``2 exp(-n/t)`` on ``P(|K| > n)`` for the discrete Laplace ``P(k) ∝ exp(-|k|/t)``.

    Exactly ``P(|K| >= j) = 2 q^j / (1 + q)``, ``q = e^{-1/t}``, for integers ``j >= 1``.
    """
    return min(1.0, 2.0 * math.exp(-float(n) / float(t)))


def gaussian_tail_bound(sigma: float, n: float) -> float:
    """Upper bound ``2 exp(-n²/(2σ²))`` on ``P(|K| > n)`` for ``K ~ N_Z(0, σ²)``: the discrete
    Gaussian is sub-Gaussian with variance proxy σ² (CKS 2020, Corollary 9), then Chernoff."""
    return min(1.0, 2.0 * math.exp(-((float(n) / float(sigma)) ** 2) / 2.0))


def _nearest_float(m: int, k: int) -> float:
    """The float64 nearest ``m 2^k`` (half to even: Python's int true division is correctly
    rounded), or the largest float64 of its sign where that is beyond the float64 range."""
    try:
        return m / (1 << -k) if k < 0 else float(m << k)
    except OverflowError:
        return FLOAT_MAX if m > 0 else -FLOAT_MAX


def from_grid(m: np.ndarray, k: int) -> np.ndarray:
    """The float64 nearest ``m 2^k`` for integers ``m`` (any size), saturating at ±``FLOAT_MAX``.

    Exact while ``|m| <= 2^53`` and ``m 2^k`` is a normal float64; otherwise correctly
    rounded (half to even). A deterministic function of ``m`` alone: applied to the noisy
    value ``m + K`` it is post-processing and costs no privacy; it never raises.
    """
    k = int(k)
    flat = np.asarray(m, dtype=object).reshape(-1)
    out = np.fromiter((_nearest_float(int(v), k) for v in flat), dtype=np.float64, count=flat.size)
    return out.reshape(np.shape(m))


# ==========================================================================
# Privacy of the discrete Gaussian
# ==========================================================================

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_MARGIN = 1e-12  # relative safety margin on float evaluations of the bounds


def _log_tail_bounds(m: int, sigma: float) -> tuple[float, float]:
    """(lower, upper) bounds on ``P[Y >= m]`` for ``Y ~ N_Z(0, sigma²)``, as probabilities.

    For ``m >= 1``, f(x) = exp(-x²/(2σ²)) decreases on [m, ∞), so
    ``∫_m^∞ f <= Σ_{k>=m} f(k) <= f(m) + ∫_m^∞ f``, and the normaliser is
    ``Z = σ√(2π) (1 + 2 Σ_n exp(-2π²σ²n²)) ∈ [σ√(2π), σ√(2π)(1 + 3e^{-2π²σ²})]`` (Poisson
    summation). For ``m <= 0`` use ``P[Y >= m] = 1 - P[Y >= 1 - m]``.
    """
    if m <= 0:
        lo, hi = _log_tail_bounds(1 - m, sigma)
        return max(0.0, 1.0 - hi), min(1.0, 1.0 - lo)
    z_corr = 3.0 * math.exp(-2.0 * math.pi**2 * sigma**2)
    q = math.exp(float(log_ndtr(-m / sigma)))  # ∫_m^∞ f / (σ√(2π))
    fm = math.exp(-((m / sigma) ** 2) / 2.0 - math.log(sigma) - _LOG_SQRT_2PI)  # f(m) / (σ√(2π))
    lower = q / (1.0 + z_corr) * (1.0 - _MARGIN)
    upper = (q + fm) * (1.0 + _MARGIN)
    return lower, min(1.0, upper)


def discrete_gaussian_delta(sigma: float, epsilon: float, sensitivity: int) -> float:
    """Upper bound on the delta of the 1-d discrete Gaussian mechanism (CKS 2020, Theorem 7).

    ``delta = P[Y > eps σ²/D - D/2] - e^eps P[Y > eps σ²/D + D/2]`` with ``Y ~ N_Z(0, σ²)``
    and integer sensitivity ``D``; the first tail is bounded from above and the second
    from below (:func:`_log_tail_bounds`), so the result is >= the exact delta and exceeds
    it by at most about ``φ(m/σ)/σ`` (negligible for σ in the thousands of grid units).
    """
    sigma = float(sigma)
    eps = float(epsilon)
    d = int(sensitivity)
    a = Fraction(eps) * Fraction(sigma) ** 2 / d - Fraction(d, 2)
    m_a = math.floor(a) + 1  # P[Y > a] = P[Y >= floor(a) + 1]
    m_b = math.floor(a + d) + 1
    _, pa_hi = _log_tail_bounds(m_a, sigma)
    pb_lo, _ = _log_tail_bounds(m_b, sigma)
    return max(0.0, pa_hi - math.exp(eps) * pb_lo)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """delta such that rho-zCDP implies (epsilon, delta)-DP (CKS 2020, Corollary 13).

    ``delta = inf_{alpha > 1} exp((alpha-1)(alpha rho - eps)) / (alpha-1) (1 - 1/alpha)^alpha``;
    every alpha gives a valid bound, so a numerical minimum over alpha is still an upper
    bound on the best delta (a relative margin covers rounding).
    """
    rho, eps = float(rho), float(epsilon)

    def log_delta(log_am1: float) -> float:
        am1 = math.exp(log_am1)
        alpha = am1 + 1.0
        return am1 * (alpha * rho - eps) - log_am1 + alpha * math.log1p(-1.0 / alpha)

    lo, hi = math.log(1e-6), math.log(1e8)
    invphi = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(200):  # golden-section search (the objective is unimodal in alpha)
        c = hi - invphi * (hi - lo)
        d = lo + invphi * (hi - lo)
        if log_delta(c) < log_delta(d):
            hi = d
        else:
            lo = c
    best = log_delta(0.5 * (lo + hi))
    return min(1.0, math.exp(best) * (1.0 + _MARGIN))


def discrete_gaussian_sigma(
    epsilon: float, delta: float, sensitivity: float, *, changed: int = 1, start: float | None = None
) -> tuple[float, float]:
    """Smallest sigma >= ``start`` (to ~1e-9 relative) making the discrete Gaussian (eps, delta)-DP.

    ``sensitivity`` is in grid units: an int (the L1 = L2 distance) when ``changed == 1``,
    checked with :func:`discrete_gaussian_delta` (CKS Theorem 7); otherwise a real upper
    bound on the L2 distance, checked through rho-zCDP, ``rho = sensitivity² / (2σ²)``
    (CKS Theorem 14) and :func:`zcdp_delta`. Returns ``(sigma, delta_bound)`` with
    ``delta_bound <= delta`` a rigorous upper bound on the mechanism's delta.
    """
    eps, dlt = float(epsilon), float(delta)
    if changed == 1:
        d_int = int(sensitivity)
        if d_int != sensitivity or d_int < 1:
            raise ValueError(f"sensitivity must be an int >= 1 for one changed coordinate, got {sensitivity!r}")

        def bound(s: float) -> float:
            return discrete_gaussian_delta(s, eps, d_int)
    else:
        d2 = float(sensitivity)

        def bound(s: float) -> float:
            return zcdp_delta(d2 * d2 / (2.0 * s * s), eps)

    s = float(start) if start is not None else float(sensitivity) * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps
    if bound(s) <= dlt:
        return s, bound(s)
    lo, step = s, 1e-9
    hi = s * (1.0 + step)
    while bound(hi) > dlt:
        lo = hi
        step *= 2.0
        hi = s * (1.0 + step)
        if step > 1e6:  # epsilon near the float64 maximum: the mechanisms turn it into a ValueError
            raise ArithmeticError("could not calibrate the discrete Gaussian sigma")
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi or (hi - lo) <= 1e-10 * hi:
            break
        if bound(mid) > dlt:
            lo = mid
        else:
            hi = mid
    return hi, bound(hi)
