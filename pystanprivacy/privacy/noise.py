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
  operating system's CSPRNG) through :class:`SecureRandom`; the vectorised samplers
  (:func:`discrete_laplace_array`, :func:`discrete_gaussian_array`, used by every release
  without a seed) draw the same CSPRNG's bytes in bulk (:func:`secrets.token_bytes`) and
  have exactly the scalar samplers' distributions, at about a million coordinates a second. :class:`SeededRandom` wraps a
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
import functools
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
    "discrete_laplace_array",
    "discrete_gaussian_array",
    "NoiseDraw",
    "noisy_grid_release",
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

    def random_bytes(self, n: int) -> bytes:
        """``n`` uniform bytes from the same CSPRNG (:func:`secrets.token_bytes`, i.e.
        ``os.urandom``), for the vectorised samplers; nothing is kept between calls."""
        return secrets.token_bytes(n)

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

    def random_bytes(self, n: int) -> bytes:
        """``n`` bytes from the generator (reproducible, not secure). Only the vectorised
        samplers called directly (tests) use it: the releases draw through ``randbelow``."""
        return self.generator.bytes(n)

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


def _as_int64(draws: np.ndarray) -> np.ndarray:
    if draws.dtype == object:
        if any(abs(int(k)) > 2**63 - 1 for k in draws):  # pragma: no cover - needs a scale near 2^60
            raise OverflowError("a discrete noise draw does not fit in int64; the scale is too large")
        return draws.astype(np.int64)
    return draws


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
    if _vector_ok(src):  # the CSPRNG: all draws at once, the same distribution
        shape = _check_size(size)
        return _as_int64(discrete_laplace_array(tt, math.prod(shape), src)).reshape(shape)
    return _fill(size, lambda: discrete_laplace(tt, src))


def sample_discrete_gaussian(sigma2: Any, size: Any, *, rng: Any = None) -> np.ndarray:
    """Exact discrete Gaussian draws ``P(k) ∝ exp(-k²/(2 sigma2))`` as an int64 array.

    ``sigma2`` (the variance parameter sigma², finite, > 0) is used exactly; ``rng`` as in
    :func:`sample_discrete_laplace`. Canonne, Kamath & Steinke (2020), Algorithm 3.
    """
    s2 = exact_rational(sigma2, "sigma2")
    src = as_source(rng)
    if _vector_ok(src):
        shape = _check_size(size)
        return _as_int64(discrete_gaussian_array(s2, math.prod(shape), src)).reshape(shape)
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
    m, big, vals = _grid_parts(arr, k, name=name)
    ints = m.tolist()
    for i, v in zip(big.tolist(), vals):
        ints[i] = v
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
    arr = np.asarray(m)
    if arr.dtype.kind == "i" and arr.dtype.itemsize <= 8:  # exact floats: one ldexp (as below)
        flat = arr.reshape(-1).astype(np.int64)
        exact = (flat >= -(2**53)) & (flat <= 2**53)
        if exact.all():
            return _floats_from_grid(flat, k).reshape(arr.shape)
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


# ==========================================================================
# Vectorised exact samplers: bulk cryptographic randomness
# ==========================================================================
#
# The samplers above draw one uniform integer at a time from ``secrets`` and do their
# arithmetic in Python ints: about 20 µs per coordinate. The samplers below have the SAME
# output distribution (the same pmf, proved below and tested in
# tests/privacy/test_noise_vectorised.py) and run over all coordinates at once: every
# comparison of a uniform random number with a probability is made on whole arrays, with
# the random bytes drawn in bulk from the same operating-system CSPRNG (``secrets.token_bytes``,
# i.e. ``os.urandom``; nothing is buffered between calls). Rejected coordinates are drawn
# again; how many rounds that takes depends only on the random draws, never on the data.
#
# Exactness rests on three facts.
#
# 1. Bernoulli(p) is ``[R < p]`` for ``R`` uniform on [0, 1). ``R`` is built lazily:
#    ``R = (W + R') 2^-16`` with ``W`` a uniform 16-bit word and ``R'`` uniform on [0, 1),
#    independent. Given bounds ``lo <= p <= hi``, ``W < floor(lo 2^16)`` implies
#    ``R < (W + 1) 2^-16 <= lo <= p`` (true) and ``W >= ceil(hi 2^16)`` implies
#    ``R >= W 2^-16 >= hi >= p`` (false); every other ``W`` (probability about
#    ``2^-16 + hi - lo``) is finished exactly by :class:`_LazyUniform`, which draws the
#    bits of ``R'`` 64 at a time and compares with the exact rational ``p``
#    (:class:`~fractions.Fraction`). So the outcome is exactly ``[R < p]``: Bernoulli(p).
# 2. The float bounds are rigorous: IEEE 754 rounds ``+ - * /`` and ``float(Fraction)``
#    correctly (to nearest, relative error <= 2^-53), so moving a rounded result one step
#    outwards (``nextafter``), or widening a chain of at most 128 such operations by the
#    relative margin 2^-44 (plus 2^-1000 for subnormals), gives a lower and an upper bound
#    of the exact value. Only these operations are used (no ``exp`` or ``log``), and only
#    on integers below 2^52 (exact in float64). Where the bounds cannot settle a step (the floor of gamma is ambiguous,
#    gamma >= 2^40, a draw >= 2^52), that coordinate's step is done by the scalar exact
#    sampler on the exact rational; that choice depends only on draws made before the
#    step, never on the randomness of the step itself.
# 3. The algorithms are Canonne, Kamath & Steinke's (2020): Algorithm 1 for
#    Bernoulli(exp(-gamma)), Algorithm 3 for the discrete Gaussian, and for the discrete
#    Laplace Algorithm 2 with the geometric part split at a power of two ``M <= t`` instead
#    of at the numerator of ``t`` (see :func:`_v_geometric`).

_FIRST_BITS = 16
"""Random bits read by the first, vectorised stage of each Bernoulli comparison."""

_FAST_LIMIT = 2.0**52
"""Integers below this are exact in float64 with room for one more bit."""

_FAST_GAMMA = 2.0**40
"""Bernoulli(exp(-gamma)) on arrays for gamma below this (the integer part then is exact)."""


def _words(src: Any, n: int, dtype: Any) -> np.ndarray:
    """``n`` independent uniform unsigned words of ``dtype`` from ``src.random_bytes``."""
    dt = np.dtype(dtype)
    return np.frombuffer(src.random_bytes(n * dt.itemsize), dtype=dt)


def _float_bounds(q: Fraction) -> tuple[float, float]:
    """Floats ``lo <= q <= hi``, adjacent or equal: ``float(q)`` is correctly rounded, and an
    exact comparison says on which side of it ``q`` lies."""
    f = float(q)
    exact = Fraction(f)
    if exact == q:
        return f, f
    return (f, math.nextafter(f, math.inf)) if exact < q else (math.nextafter(f, -math.inf), f)


class _LazyUniform:
    """A uniform real ``R`` on [0, 1) of which only ``[lo, lo + width)`` is known so far: its
    first ``bits`` bits are ``prefix``; :meth:`less` draws further bits (64 at a time) only
    until ``R < p`` is settled, so one ``R`` serves several comparisons consistently."""

    def __init__(self, prefix: int, bits: int, src: Any) -> None:
        self.lo = Fraction(prefix, 1 << bits)
        self.width = Fraction(1, 1 << bits)
        self.src = src

    def less(self, p: Fraction) -> bool:
        """``[R < p]`` exactly; open after ``r`` rounds with probability at most ``width 2^(-64 r)``."""
        while True:
            if self.lo + self.width <= p:
                return True
            if self.lo >= p:
                return False
            self.width /= 1 << 64
            self.lo += self.width * int.from_bytes(self.src.random_bytes(8), "little")


def _finish_bexp(prefix: int, gamma: Fraction, k: int, src: Any) -> bool:
    """The exact end of :func:`_v_bexp_le1` for one coordinate: ``R`` has the first 16 bits
    ``prefix`` and ``R < T_j`` for ``j < k`` is already known; returns ``[N even]``."""
    r = _LazyUniform(prefix, _FIRST_BITS, src)
    tk = gamma**k / math.factorial(k)
    while tk > 0 and r.less(tk):
        k += 1
        tk = tk * gamma / k
    return (k - 1) % 2 == 0


_REL = 2.0**-44  # relative margin: covers <= 128 roundings of 2^-53 each (fact 2)
_ABS = 2.0**-1000  # absolute margin: covers rounding among subnormal numbers


def _v_bexp_le1(r_lo: np.ndarray, r_hi: np.ndarray, exact: Any, src: Any) -> np.ndarray:
    """Bernoulli(exp(-r_i)) for rationals ``0 <= r_i <= 1`` with float bounds
    ``r_lo <= r <= r_hi``, from ONE uniform ``R`` per coordinate.

    With ``T_k = r^k / k!`` (non-increasing in k, ``T_0 = 1``) let ``N = #{k >= 1: R < T_k}``.
    Then ``P(N >= k) = T_k`` and ``P(N even) = sum_k (-r)^k / k! = exp(-r)``. CKS 2020
    Algorithm 1 draws ``K`` with ``P(K > k) = r^k / k!`` by independent Bernoulli(r/k) trials
    and returns ``[K odd]``; ``K = N + 1`` has that law, here from one uniform.

    ``T_k`` is bounded by products of the bounds of ``r`` in float64 (``2k`` roundings, and
    the margins' own, covered by the relative margin 2^-44; the absolute margin covers
    subnormals). ``R``'s first 16 bits ``W`` settle ``R < T_k`` unless
    ``lo_k 2^16 < W + 1`` and ``W < hi_k 2^16``; such a coordinate is finished exactly by
    :func:`_finish_bexp` with ``exact(i)`` (the Fraction ``r_i``).
    """
    n = r_lo.size
    w = _words(src, n, np.uint16).astype(np.float64)
    scale = float(1 << _FIRST_BITS)
    c_lo, c_hi, c_abs = (1.0 - _REL) * scale, (1.0 + _REL) * scale, _ABS * scale  # exact products
    rh = np.minimum(r_hi, 1.0)
    # k = 1 on the whole array (T_1 = r): most coordinates stop here
    go = w + 1.0 <= r_lo * c_lo - c_abs  # W < floor(lo_1 2^16): R < T_1, so N >= 1
    out = w >= rh * c_hi + c_abs  # W >= ceil(hi_1 2^16): R >= T_1, so N = 0 (even)
    for i in np.flatnonzero(~(go | out)).tolist():
        out[i] = _finish_bexp(int(w[i]), exact(i), 1, src)
    idx = np.flatnonzero(go)
    rl, rh, wk = r_lo[idx], rh[idx], w[idx]
    lo, hi = rl, rh
    k = 2
    while idx.size:
        lo = lo * rl / k
        hi = hi * rh / k
        go = wk + 1.0 <= lo * c_lo - c_abs  # W < floor(lo_k 2^16): R < T_k, so N >= k
        stop = wk >= hi * c_hi + c_abs  # W >= ceil(hi_k 2^16): R >= T_k, so N = k - 1
        out[idx[stop]] = (k - 1) % 2 == 0
        for j in np.flatnonzero(~(go | stop)).tolist():
            i = int(idx[j])
            out[i] = _finish_bexp(int(w[i]), exact(i), k, src)
        idx, lo, hi, rl, rh, wk = idx[go], lo[go], hi[go], rl[go], rh[go], wk[go]
        k += 1
    return out


@functools.lru_cache(maxsize=64)
def _fixed_table(gamma: Fraction) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For a public ``0 <= gamma <= 1`` and every 16-bit ``W``: ``N(W) = #{k >= 1: W < floor(T_k 2^16)}``
    (``T_k = gamma^k/k!``; the thresholds do not increase, and the last one computed is 0),
    whether ``N`` is even, and whether the comparison at ``k = N + 1`` is open
    (``W < ceil(T_k 2^16)``). Exact integer thresholds from Fractions."""
    a, b = [], []
    tk = Fraction(1)
    k = 0
    while not a or a[-1] > 0:
        k += 1
        tk = tk * gamma / k
        s = tk * (1 << _FIRST_BITS)
        a.append(math.floor(s))
        b.append(math.ceil(s))
    w = np.arange(1 << _FIRST_BITS, dtype=np.int64)
    count = (w[:, None] < np.array(a, dtype=np.int64)[None, :]).sum(axis=1)
    is_open = w < np.array(b, dtype=np.int64)[count]
    return count % 2 == 0, is_open, count


def _v_bexp_fixed(gamma: Fraction, n: int, src: Any) -> np.ndarray:
    """``n`` Bernoulli(exp(-gamma)) for one public rational ``0 <= gamma <= 1``: the
    construction of :func:`_v_bexp_le1` with exact integer thresholds, looked up by ``R``'s
    first 16 bits ``W`` (:func:`_fixed_table`); an open comparison goes to :func:`_finish_bexp`."""
    even, is_open, count = _fixed_table(gamma)
    w = _words(src, n, np.uint16)
    out = even[w]
    for i in np.flatnonzero(is_open[w]).tolist():
        out[i] = _finish_bexp(int(w[i]), gamma, int(count[w[i]]) + 1, src)
    return out


def _v_bexp_public(gamma: Fraction, n: int, src: Any) -> np.ndarray:
    """``n`` Bernoulli(exp(-gamma)) for one public rational ``gamma >= 0``: ``floor(gamma)``
    Bernoulli(exp(-1)) trials that must all succeed, then one Bernoulli(exp(-frac(gamma)))
    (CKS 2020, Algorithm 1), each trial from :func:`_v_bexp_fixed`."""
    whole = math.floor(gamma)
    if whole == 0:
        return _v_bexp_fixed(gamma, n, src)
    out = np.zeros(n, dtype=bool)
    cur = np.arange(n)
    for _ in range(whole):
        if not cur.size:
            return out
        cur = cur[_v_bexp_fixed(Fraction(1), cur.size, src)]
    out[cur] = _v_bexp_fixed(gamma - whole, cur.size, src)
    return out


def _v_bexp(g_lo: np.ndarray, g_hi: np.ndarray, exact: Any, src: Any) -> np.ndarray:
    """Bernoulli(exp(-gamma_i)) for rationals ``gamma_i >= 0`` with float bounds ``g_lo <= gamma <= g_hi``
    (CKS 2020, Algorithm 1): ``floor(gamma)`` Bernoulli(exp(-1)) trials, all of which must
    succeed, then one Bernoulli(exp(-(gamma - floor(gamma)))).

    Where the bounds leave ``floor(gamma)`` open or ``gamma >= 2^40``, the scalar
    :func:`_bexp` runs on the exact ``exact(i)`` (fact 2)."""
    n = g_lo.size
    out = np.zeros(n, dtype=bool)
    g_lo = np.maximum(g_lo, 0.0)
    whole = np.floor(g_lo)
    fast = (whole == np.floor(g_hi)) & (g_hi < _FAST_GAMMA)
    for j in np.flatnonzero(~fast).tolist():
        g = exact(j)
        out[j] = _bexp(g.numerator, g.denominator, src)
    idx = np.flatnonzero(fast)
    alive = np.ones(idx.size, dtype=bool)
    left = whole[idx]
    cur = np.flatnonzero(left > 0)
    while cur.size:  # the Bernoulli(exp(-1)) trials; a coordinate stops at its first failure
        ok = _v_bexp_fixed(Fraction(1), cur.size, src)
        alive[cur[~ok]] = False
        cur = cur[ok]
        left[cur] -= 1
        cur = cur[left[cur] > 0]
    sel = idx[alive]
    w = whole[sel]
    # gamma - floor(gamma) is exact in float64 for gamma < 2^40 (both are multiples of its ulp)
    r_lo = g_lo[sel] - w
    r_hi = g_hi[sel] - w
    out[sel] = _v_bexp_le1(r_lo, r_hi, lambda j: exact(int(sel[j])) - int(w[j]), src)
    return out


def _v_randbelow(m: int, n: int, src: Any) -> np.ndarray:
    """``n`` uniform integers on ``{0, ..., m - 1}`` (``1 <= m <= 2^53``), int64: the low
    ``bits(m - 1)`` bits of uniform 64-bit words, redrawn while ``>= m``."""
    bits = (m - 1).bit_length()
    dtype = np.uint32 if bits <= 32 else np.uint64
    mask = dtype((1 << bits) - 1)
    if m == 1 << bits:  # a power of two: the masked words are uniform, nothing to redraw
        return (_words(src, n, dtype) & mask).astype(np.int64)
    out = np.empty(n, dtype=np.int64)
    idx = np.arange(n)
    while idx.size:
        w = (_words(src, idx.size, dtype) & mask).astype(np.int64)
        ok = w < m
        out[idx[ok]] = w[ok]
        idx = idx[~ok]
    return out


def _v_geometric(t: Fraction, n: int, src: Any) -> np.ndarray:
    """``n`` draws with ``P(Y = y) = (1 - q) q^y``, ``y >= 0``, ``q = exp(-1/t)``.

    With ``M`` the power of two in ``(t/2, t]`` (``M = 1`` for ``t < 1``), write ``y = M v + u``, ``0 <= u < M``: then
    ``q^y = (q^M)^v q^u``, so ``V = floor(Y / M)`` and ``U = Y mod M`` are independent,
    ``P(V = v) = (1 - q^M) (q^M)^v`` and ``P(U = u) ∝ exp(-u/t)`` on ``{0, ..., M - 1}``.
    ``U``: a uniform ``u``, accepted with probability ``exp(-u/t)`` (rejection; ``u/t < 1``).
    ``V``: the number of successes of Bernoulli(exp(-M/t)) before the first failure. This
    is CKS 2020 Algorithm 2's construction with the split at ``M`` (there: at the numerator
    of ``t``, then a division by its denominator), so that ``u < M <= 2^53`` is exact in
    float64. Returns int64, or Python ints (object) if a draw could pass 2^62.
    """
    m = 1 << (math.floor(t).bit_length() - 1) if t >= 1 else 1  # the power of two in (t/2, t]
    t_lo, t_hi = _float_bounds(t)
    u_out = np.zeros(n, dtype=np.int64)
    if m > 1:
        idx = np.arange(n)
        while idx.size:
            u = _v_randbelow(m, idx.size, src)
            uf = u.astype(np.float64)
            acc = _v_bexp_le1(  # u / t < 1 as u <= m - 1 < t
                np.nextafter(uf / t_hi, -np.inf),
                np.nextafter(uf / t_lo, np.inf),
                lambda j, u=u: Fraction(int(u[j])) / t,
                src,
            )
            u_out[idx[acc]] = u[acc]
            idx = idx[~acc]
    gm = Fraction(m) / t
    v = np.zeros(n, dtype=np.int64)
    idx = np.arange(n)
    while idx.size:
        idx = idx[_v_bexp_public(gm, idx.size, src)]
        v[idx] += 1
    if n and int(v.max()) > (2**62 - m) // m:  # never in practice; exact all the same
        return v.astype(object) * m + u_out.astype(object)
    return v * m + u_out


def _v_fair_bits(n: int, src: Any) -> np.ndarray:
    """``n`` fair coins (bool) from ``ceil(n / 8)`` uniform bytes."""
    raw = np.frombuffer(src.random_bytes((n + 7) // 8), dtype=np.uint8)
    return np.unpackbits(raw, count=n).astype(bool)


def _v_discrete_laplace(t: Fraction, n: int, src: Any) -> np.ndarray:
    """CKS 2020 Algorithm 2, vectorised: ``Y`` geometric (:func:`_v_geometric`), a fair sign
    ``B``; ``(B = 1, Y = 0)`` is rejected and drawn again; the output is ``(1 - 2B) Y``.
    ``P(k) ∝ exp(-|k|/t)`` exactly (CKS 2020, Proposition/proof of Algorithm 2: each
    ``k != 0`` has probability ``P(Y = |k|)/2``, ``0`` has ``P(Y = 0)/2``, before the
    common normalisation by the acceptance probability)."""
    out = np.zeros(n, dtype=np.int64)
    idx = np.arange(n)
    while idx.size:
        y = _v_geometric(t, idx.size, src)
        if y.dtype == object and out.dtype != object:
            out = out.astype(object)
        neg = _v_fair_bits(idx.size, src)
        bad = neg & (y == 0)
        good = ~bad
        out[idx[good]] = np.where(neg[good], -y[good], y[good])
        idx = idx[bad]
    return out


def _gaussian_gamma_bounds(ay: np.ndarray, c_f: float, inv: float) -> tuple[np.ndarray, np.ndarray]:
    """Float bounds of ``gamma = (|Y| - c)² / (2 sigma²)`` from the exact floats ``|Y| < 2^52``,
    ``c_f = float(c)`` and ``inv = float(1 / (2 sigma²))``; see :func:`_v_discrete_gaussian`."""
    a = np.abs(ay - c_f)
    e = (ay + c_f) * 2.0**-49
    g_lo = np.square(np.maximum(a - e, 0.0)) * inv * (1.0 - _REL) - _ABS
    g_hi = np.square(a + e) * inv * (1.0 + _REL) + _ABS
    return g_lo, g_hi


def _v_discrete_gaussian(sigma2: Fraction, n: int, src: Any) -> np.ndarray:
    """CKS 2020 Algorithm 3, vectorised: ``t = floor(sigma) + 1``, ``Y`` discrete Laplace with
    scale ``t``, accepted with probability ``exp(-gamma)``, ``gamma = (|Y| - sigma²/t)² / (2 sigma²)``;
    the rejected coordinates are drawn again.

    Bounds of ``gamma`` (fact 2): ``c = sigma²/t`` as the float ``ĉ`` (two roundings:
    ``|ĉ - c| <= 2^-51 c``), ``â = fl(|Y| - ĉ)`` with ``|Y| < 2^52`` exact, so
    ``|â - a| <= 2^-51 c + 2^-53 (|Y| + ĉ) <= e = 2^-49 (|Y| + ĉ)`` (``e`` as computed, its
    rounding included); then ``(max(|â| - e, 0))²`` and ``(|â| + e)²`` times the float
    ``1/(2 sigma²)``, four correctly rounded operations of relative error ``2^-53`` each,
    covered by the margin ``2^-44``. ``|Y| >= 2^52`` goes to the exact scalar step."""
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1
    c = sigma2 / t
    c_f = float(c)
    inv = float(1 / (2 * sigma2))
    two_s2 = 2 * sigma2
    out = np.zeros(n, dtype=np.int64)
    idx = np.arange(n)
    while idx.size:
        y = _v_discrete_laplace(Fraction(t), idx.size, src)
        if y.dtype == object:  # a draw beyond 2^62 (never in practice): all exact
            out = out.astype(object)
            ay = np.array([abs(int(v)) for v in y], dtype=object)
            small = np.zeros(ay.size, dtype=bool)
            af = np.zeros(ay.size)
        else:
            ay = np.abs(y)
            small = ay < _FAST_LIMIT
            af = np.where(small, ay, 0).astype(np.float64)
        g_lo, g_hi = _gaussian_gamma_bounds(af, c_f, inv)
        g_lo[~small] = g_hi[~small] = _FAST_GAMMA  # the exact scalar step (fact 2)
        acc = _v_bexp(g_lo, g_hi, lambda j, ay=ay: (int(ay[j]) - c) ** 2 / two_s2, src)
        out[idx[acc]] = y[acc]
        idx = idx[~acc]
    return out


def _vector_ok(src: Any) -> bool:
    """Whether the vectorised samplers serve ``src``: the CSPRNG. A seeded source keeps the
    scalar samplers, so every seeded (reproducible) draw stays what it was."""
    return isinstance(src, SecureRandom)


def discrete_laplace_array(t: Fraction, n: int, src: Any) -> np.ndarray:
    """``n`` exact draws with ``P(k) ∝ exp(-|k|/t)``, rational ``t > 0``, all coordinates at once.

    The same distribution as :func:`discrete_laplace` (CKS 2020, Algorithm 2; see the
    section comment above this function in the source and :func:`_v_geometric`), with the
    randomness drawn in bulk from ``src.random_bytes`` (the CSPRNG for
    :class:`SecureRandom`); ``src.randbelow`` serves the rare exact scalar steps. Returns
    int64, or Python ints (object) for a draw beyond 2^62 (never in practice). A scale
    outside ``[2^-100, 2^50]`` uses the scalar sampler.
    """
    n = int(n)
    if not Fraction(1, 2**100) <= t <= 2**50:
        return _object_fill(n, t, src, True)
    return _v_discrete_laplace(t, n, src)


def discrete_gaussian_array(sigma2: Fraction, n: int, src: Any) -> np.ndarray:
    """``n`` exact draws with ``P(k) ∝ exp(-k²/(2 sigma2))``, rational ``sigma2 > 0``, all at once.

    The same distribution as :func:`discrete_gaussian` (CKS 2020, Algorithm 3), with the
    randomness drawn in bulk as in :func:`discrete_laplace_array`. ``sigma2`` outside
    ``[2^-100, 2^100]`` uses the scalar sampler.
    """
    n = int(n)
    if not Fraction(1, 2**100) <= sigma2 <= 2**100:
        return _object_fill(n, sigma2, src, False)
    return _v_discrete_gaussian(sigma2, n, src)


def _object_fill(n: int, param: Fraction, src: Any, laplace: bool) -> np.ndarray:
    draw = discrete_laplace if laplace else discrete_gaussian
    return _object_array([draw(param, src) for _ in range(n)], (n,))


class NoiseDraw:
    """The secure path's integer noise for one release: ``draw()`` is one exact draw of the
    scalar sampler ``scalar(param, src)``; ``many(n)`` is ``n`` draws of the vectorised
    sampler ``vector(param, n, src)`` when ``src`` is the CSPRNG, else ``None`` (a seeded
    source draws one at a time, as it always has, so its releases are unchanged)."""

    def __init__(self, scalar: Any, vector: Any, param: Fraction, src: Any) -> None:
        self._scalar, self._vector, self._param, self._src = scalar, vector, param, src

    def __call__(self) -> int:
        return self._scalar(self._param, self._src)

    def many(self, n: int) -> np.ndarray | None:
        return self._vector(self._param, n, self._src) if _vector_ok(self._src) else None


def _grid_parts(x: np.ndarray, k: int, *, name: str = "value") -> tuple[np.ndarray, np.ndarray, list[int]]:
    """:func:`to_grid` as int64 indices (0 where an index has ``|m| >= 2^62``) plus the flat
    positions and exact Python-int indices of those beyond (the same values as ``to_grid``,
    whose float path is this one)."""
    k = int(k)
    if isinstance(x, np.ndarray) and x.dtype.kind in "iu":
        flat = x.reshape(-1)
        if k <= 0 and 62 + k > 0:
            lim = 1 << (62 + k)
            fast = flat < lim if x.dtype.kind == "u" else (flat < lim) & (flat > -lim)
            m = np.where(fast, flat, 0).astype(np.int64) << np.int64(-k)
        else:
            fast = np.zeros(flat.size, dtype=bool)
            m = np.zeros(flat.size, dtype=np.int64)
        big = np.flatnonzero(~fast)
        vals = [v << -k if k <= 0 else round(Fraction(v, 1 << k)) for v in flat[big].tolist()]
        return m, big, vals
    arr = np.asarray(x, dtype=np.float64)
    n_bad = int(np.count_nonzero(~np.isfinite(arr)))
    if n_bad:
        raise ValueError(
            f"{name} contains {n_bad} non-finite value(s) (NaN or inf); the data domain is the finite reals"
        )
    with np.errstate(over="ignore", under="ignore"):
        scaled = np.ldexp(arr, -k).reshape(-1)
    fast = np.abs(scaled) < 2.0**62  # False for an overflow to inf
    m = np.rint(np.where(fast, scaled, 0.0)).astype(np.int64)
    big = np.flatnonzero(~fast)
    flat = arr.reshape(-1)
    vals = [round(Fraction(float(flat[i])) / Fraction(2) ** k) for i in big.tolist()]
    return m, big, vals


def _floats_from_grid(y: np.ndarray, k: int) -> np.ndarray:
    """:func:`from_grid` of int64 indices with ``|y| <= 2^53``: the exact float ``y`` scaled by
    ``2^k`` with one correct rounding (``ldexp``), beyond the float64 range ``±FLOAT_MAX``."""
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(y.astype(np.float64), int(k))
    return np.clip(out, -FLOAT_MAX, FLOAT_MAX)


def noisy_grid_release(x: np.ndarray, k: int, draw: Any) -> np.ndarray:
    """``from_grid(noisy_sum(to_grid(x, k), draw), k)``: the secure path of the additive
    mechanisms, the same values, computed on arrays when ``draw.many`` gives the noise in
    bulk (:class:`NoiseDraw` with the CSPRNG); otherwise one draw per element in C order.

    Indices and sums stay exact: int64 where ``|m| < 2^62`` and ``|K| < 2^62`` (the sum
    cannot overflow), Python ints elsewhere; the float64 is ``ldexp`` of the exact float
    ``m + K`` where ``|m + K| <= 2^53`` (one correct rounding, as Python's int division),
    :func:`_nearest_float` elsewhere. The noise is drawn before the input is read; its
    amount of work does not depend on the values.
    """
    many = getattr(draw, "many", None)
    noise = many(int(np.size(x))) if many is not None else None
    if noise is None:
        return from_grid(noisy_sum(to_grid(x, k), draw), k)
    shape = np.shape(x)
    m, big, vals = _grid_parts(x, k)
    if noise.dtype == object:  # a draw beyond 2^62: everything in Python ints
        mm = m.astype(object)
        for i, v in zip(big.tolist(), vals, strict=True):
            mm[i] = v
        return from_grid((mm + noise).reshape(shape), k)
    slow = (noise <= -(2**62)) | (noise >= 2**62)
    slow[big] = True
    y = m + np.where(slow, 0, noise)
    exact_f = ~slow & (np.abs(y) <= 2**53)
    out = np.empty(y.size, dtype=np.float64)
    out[exact_f] = _floats_from_grid(y[exact_f], k)
    big_val = dict(zip(big.tolist(), vals, strict=True))
    for i in np.flatnonzero(~exact_f).tolist():
        mi = big_val[i] if i in big_val else int(m[i])
        out[i] = _nearest_float(mi + int(noise[i]), k)
    return out.reshape(shape)
