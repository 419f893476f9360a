"""poisson_grid_sim.py for the naive fit of poisson_grid.stan (``noise_aware = 0``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("poisson_grid_sim", Path(__file__).with_name("poisson_grid_sim.py"))
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)
release = _base.release


def simulate(rng):
    return _base.simulate(rng, noise_aware=0)
