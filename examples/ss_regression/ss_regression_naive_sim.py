"""The simulator of the naive fit of ss_regression.stan (``noise_aware = 0``) for ``pystanprivacy
sbc``: the replicates and releases of ``ss_regression_sim.py``, the program told to plug the noisy
statistics into the exact-data likelihood."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("ss_regression_sim", Path(__file__).with_name("ss_regression_sim.py"))
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)

release = _base.release


def simulate(rng):
    """As ``ss_regression_sim.simulate``, with the public data's ``noise_aware`` set to 0."""
    return _base.simulate(rng, noise_aware=0)
