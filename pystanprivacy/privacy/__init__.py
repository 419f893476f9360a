"""The privacy core: release records and the accountant (:mod:`.records`; its tight composition
rules, each release's privacy curve built from its record: :mod:`.accounting`), exact noise samplers
(:mod:`.noise`), central-DP mechanisms, one module per family (:mod:`.mechanisms`), local-DP
report functions (:mod:`.ldp`) and the empirical privacy audit's statistics (:mod:`.audit`).
Never imports Stan, nor :mod:`pystanprivacy.sampling`, :mod:`pystanprivacy.models` or an
experiment.

Names available from here
-------------------------
* every public name of :mod:`.records`: :class:`~.records.PrivacyRecord`,
  :class:`~.records.Release`, :class:`~.records.PrivacyAccountant`,
  :class:`~.records.BudgetExceededError`, :class:`~.records.ReproducibleNotSecureWarning`,
  :class:`~.records.ReleaseFileError` (a release file that :meth:`~.records.Release.load` refuses),
  ``RELEASE_FORMAT``, ``RELEASE_FORMAT_VERSION`` and ``MAX_RELEASE_FILE_BYTES`` (the published
  release file), :func:`~.records.check_record_consistent` (a record against its mechanism's calibration),
  ``NEIGHBOURING_RELATIONS``, ``SENSITIVITY_NORMS``, ``COMPOSITION_RULES`` (the accountant's
  ``composition=``: ``"basic"``, ``"zcdp"``, ``"rdp"``, ``"pld"``), :func:`~.records.noise_details`,
  :func:`~.records.warn_reproducible_not_secure`, :func:`~.records.reset_reproducible_warning`;
* the mechanisms most releases need (:mod:`.mechanisms`): :class:`~.mechanisms.Laplace`,
  :class:`~.mechanisms.Gaussian`, :class:`~.mechanisms.AnalyticGaussian`,
  :class:`~.mechanisms.RandomizedResponse`, :class:`~.mechanisms.OptimalUnaryEncoding`;
* the local-DP reports (:mod:`.ldp`): :func:`~.ldp.clipped_laplace_reports`,
  :func:`~.ldp.gaussian_reports`, :func:`~.ldp.randomized_response_reports`,
  :func:`~.ldp.oue_reports` and :func:`~.ldp.split_budget`.

Everything else (clipping and projections, :func:`~.mechanisms.analytic_gaussian_sigma`, the
noise samplers, the privacy curves and their conversions in :mod:`.accounting`, the audit) is
imported from its module. The mechanism and LDP names are loaded
on first use, so that ``import pystanprivacy`` (which needs only the records) stays free of SciPy.

Example
-------
>>> from pystanprivacy.privacy import Laplace, PrivacyAccountant
>>> accountant = PrivacyAccountant(epsilon=1.0)
>>> release = Laplace(epsilon=0.5, sensitivity=1.0).release([3.0], accountant=accountant)
>>> release.record.mechanism, accountant.spent
('laplace', (0.5, 0.0))
>>> tight = PrivacyAccountant(epsilon=1.0, delta=1e-6, composition="zcdp")  # rule in one argument
>>> tight.composition
'zcdp'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import records as _records
from .records import *  # its public names, as listed in its __all__

if TYPE_CHECKING:  # what the lazy names below resolve to, for type checkers and IDEs
    from .ldp import (  # noqa: F401
        clipped_laplace_reports,
        gaussian_reports,
        oue_reports,
        randomized_response_reports,
        split_budget,
    )
    from .mechanisms import (  # noqa: F401
        AnalyticGaussian,
        Gaussian,
        Laplace,
        OptimalUnaryEncoding,
        RandomizedResponse,
    )

#: curated re-exports: name -> the submodule that defines it (imported on first access, PEP 562)
_LAZY: dict[str, str] = {
    "Laplace": "mechanisms",
    "Gaussian": "mechanisms",
    "AnalyticGaussian": "mechanisms",
    "RandomizedResponse": "mechanisms",
    "OptimalUnaryEncoding": "mechanisms",
    "clipped_laplace_reports": "ldp",
    "gaussian_reports": "ldp",
    "randomized_response_reports": "ldp",
    "oue_reports": "ldp",
    "split_budget": "ldp",
}

__all__ = list(_records.__all__) + list(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
