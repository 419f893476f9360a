"""The privacy core: release records and the accountant (:mod:`.records`), exact noise samplers
(:mod:`.noise`), central-DP mechanisms (:mod:`.mechanisms`), local-DP mechanisms (:mod:`.ldp`)
and the empirical privacy audit's statistics (:mod:`.audit`). Never imports Stan.
"""
from __future__ import annotations

from . import records as _records
from .records import *  # noqa: F401,F403 - its public names, as listed in its __all__

__all__ = list(_records.__all__)
