"""Differential-privacy mechanisms, clipping and projections (being split into one module per family)."""
from __future__ import annotations

from . import gaussian as _impl
from .gaussian import *  # noqa: F401,F403
from .gaussian import _MAX_MAGNITUDE, _clamp_magnitude  # noqa: F401 - used by ..ldp

__all__ = list(_impl.__all__)
