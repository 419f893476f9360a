"""pystanprivacy: differentially private Bayesian inference with Stan.

Release mechanisms with machine-readable privacy records (:mod:`pystanprivacy.privacy.mechanisms`,
:mod:`pystanprivacy.privacy.records`), noise-aware and one-posterior-sampling Stan models
(:mod:`pystanprivacy.models`), and reproductions of the papers they come from
(:mod:`pystanprivacy.experiments`, ``pystanprivacy reproduce``).
"""
from . import _moved
from .privacy.records import BudgetExceededError, PrivacyAccountant, PrivacyRecord, Release

_moved.install()

__version__ = "0.2.0"

__all__ = ["BudgetExceededError", "PrivacyAccountant", "PrivacyRecord", "Release", "__version__"]
