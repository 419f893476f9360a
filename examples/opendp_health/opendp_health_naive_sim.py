"""The simulator of the naive fit of opendp_health.stan (``noise_aware = 0``) for
``pystanprivacy sbc``: the replicates and OpenDP releases of ``opendp_health_sim.py``, the
program told to take the released numbers as the true ones."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("opendp_health_sim", Path(__file__).with_name("opendp_health_sim.py"))
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)

release = _base.release


def simulate(rng):
    """As ``opendp_health_sim.simulate``, with the public data's ``noise_aware`` set to 0."""
    return _base.simulate(rng, noise_aware=0)
