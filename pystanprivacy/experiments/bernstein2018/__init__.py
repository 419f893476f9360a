"""Bernstein & Sheldon (2018): calibration and MMD study (:mod:`.study`), the paper's
non-Stan baselines (:mod:`.baselines`), Figure 1 (:mod:`.figures`) and the exponential
posterior's modes (:mod:`.exponential_modes`, part ``exponential_modes``).
"""

from __future__ import annotations

from . import study as _study
from .study import *  # noqa: F401,F403 - its public names, as listed in its __all__

__all__ = list(_study.__all__)

#: the paper protocol of :mod:`pystanprivacy.experiments`: no data file (PARTS comes from :mod:`.study`)
DATA_HELP = None
