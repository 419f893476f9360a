"""Differential-privacy mechanisms, clipping and projections.

Every mechanism is a small class with keyword-only arguments:

* ``randomise(value)`` -- privatise a scalar or an array (independent noise
  per element);
* ``log_prob(output, input)`` -- exact log density / log probability of an
  output given an input (elementwise, float64);
* ``record(**context)`` -- a :class:`~pystanprivacy.privacy.records.PrivacyRecord`
  describing the mechanism;
* ``release(value, *, accountant=None, ...)`` -- validate, charge an
  accountant, privatise, and return a :class:`~pystanprivacy.privacy.records.Release`.

Randomness and noise
--------------------
* ``seed=None`` (the default, for real releases): **floating-point-safe noise
  and cryptographic randomness** (:mod:`pystanprivacy.privacy.noise`). Integer inputs
  (integer dtype) get exact discrete Laplace / discrete Gaussian noise on the
  integers; real inputs are rounded exactly to a power-of-two grid ``2^k``
  first (the rounding is charged to the sensitivity) and the output is the
  float64 nearest ``(m + K) 2^k`` (exact within ``2^52`` grid steps). The Gaussian mechanisms' sigma is re-calibrated
  for the discrete Gaussian (exact delta, Canonne-Kamath-Steinke 2020,
  Theorem 7, for one changed coordinate; zCDP otherwise). Randomised response
  and OUE flip bits with exact Bernoulli(1/(1+e^eps)) draws. The record's
  ``scale`` is the scale of the noise actually added and ``details`` state
  ``noise``, ``randomness``, ``secure``, ``grid``.
* Data domain and range: the additive mechanisms take **finite reals** (NaN,
  ±inf and non-numbers are refused as not being data). No finite value is
  refused: a refusal that depends on the private values would tell
  neighbouring inputs apart without any noise. None is clamped either: the
  secure path computes exact grid indices and noisy sums in Python ints, so
  ``details["representable_range"]`` is the whole float64 range; only a noisy
  value beyond it is returned as ``±1.8e308`` (post-processing). Integer data
  (the integer grid) is what the caller declares with an integer ndarray's
  dtype; a list, tuple or Python scalar is real data, whatever its values
  (:func:`~pystanprivacy._validation.declares_integer`). Parameters whose noise
  could not be calibrated are refused from the public inputs alone, before
  anything is charged (:mod:`pystanprivacy.privacy.noise`, "Range"); after the
  charge nothing can raise.
* An empty input is refused before anything is charged (its emptiness is a
  public property of its shape).
* ``seed`` given (an int or ``numpy.random.Generator``): the continuous NumPy
  samplers, **reproducible, not secure** (noise from a known seed can be
  regenerated; float noise leaks through its low-order bits, Mironov 2012).
  For research and simulation; marked in the record and warned about once
  (:class:`~pystanprivacy.privacy.records.ReproducibleNotSecureWarning`).

``log_prob`` is the density of the continuous (seeded) mechanism; see
:mod:`pystanprivacy.privacy.noise` for how far the discrete one is from it.

Modules (one per family, as in IBM's diffprivlib)
-------------------------------------------------
* :mod:`._base` -- :class:`Mechanism`, the secure path's noise plan and the range
  constants every family shares;
* :mod:`._additive` -- the ``value + noise`` base (output check, noise grid) of:
* :mod:`.laplace` -- :class:`Laplace`;
* :mod:`.gaussian` -- :class:`Gaussian`, :class:`AnalyticGaussian` and
  :func:`analytic_gaussian_sigma`;
* :mod:`.randomized_response` -- :class:`RandomizedResponse`;
* :mod:`.unary_encoding` -- :class:`OptimalUnaryEncoding`;
* :mod:`.clipping` -- :class:`Clip`, :class:`ClipL2`, :func:`row_norms`,
  :func:`project_nonnegative`, :func:`project_simplex`.

Import the public names from here (``from pystanprivacy.privacy.mechanisms import Laplace``);
the module a name lives in is an implementation detail.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
   Privacy", 2014.
.. [2] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
   Differential Privacy: Analytical Calibration and Optimal Denoising",
   ICML 2018.
.. [3] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private
   Protocols for Frequency Estimation", USENIX Security 2017.
.. [4] I. Mironov, "On Significance of the Least Significant Bits for
   Differential Privacy", CCS 2012.
"""

from __future__ import annotations

from ._base import Mechanism
from .clipping import Clip, ClipL2, project_nonnegative, project_simplex, row_norms
from .gaussian import AnalyticGaussian, Gaussian, analytic_gaussian_sigma
from .laplace import Laplace
from .randomized_response import RandomizedResponse
from .unary_encoding import OptimalUnaryEncoding

__all__ = [
    "Mechanism",
    "Laplace",
    "Gaussian",
    "AnalyticGaussian",
    "analytic_gaussian_sigma",
    "RandomizedResponse",
    "OptimalUnaryEncoding",
    "Clip",
    "ClipL2",
    "project_nonnegative",
    "project_simplex",
    "row_norms",
]
