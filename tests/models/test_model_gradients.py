"""Every model's gradient against central finite differences of its log density.

For each model of the registry: the Stan data of its own example (``Model.example`` at the
benchmark's small quick size, the first Stan run of ``Example.fit``, intercepted before it
samples), then at three random points u ~ U(-1.5, 1.5)^P of the unconstrained space (where Stan
starts its chains) the directional derivative of the log density along a random unit direction:
autodiff (``StanModel.log_density``) against (lp(u + h v) - lp(u - h v)) / 2h, h = 1e-5.

Deterministic (fixed seeds, no Monte Carlo). The finite difference's own error is about
h^2 |f'''| + 1e-16 |lp| / h, far inside the tolerance (relative 1e-6 plus 1e-8 (1 + |lp|));
on 2026-11-27 the largest relative difference over the 21 models was 1.1e-7. A gradient that
is wrong (as std_normal_lcdf's was, deep in the tail: tests/models/test_log_phi_gradients.py
checks those far points) shows up as a difference of order 1e-3 or more.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from pystanprivacy.models.registry import model_names
from pystanprivacy.sampling.stan import StanModel, model_info

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


class _Intercepted(Exception):
    pass


def _example_data(name: str, monkeypatch):
    """(StanModel, data) of the first Stan run the example's own data path makes."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_models
    finally:
        sys.path.remove(str(BENCHMARKS))
    case = bench_models.case_of(name)
    seen = {}

    def grab(self, data, **kwargs):
        seen["model"], seen["data"] = self, data
        raise _Intercepted

    with monkeypatch.context() as m:
        m.setattr(StanModel, "sample", grab)
        fit, _ = case.build(case.quick[0], 0)
        with warnings.catch_warnings(), pytest.raises(_Intercepted):
            warnings.simplefilter("ignore")
            fit(seed=1)
    return seen["model"], seen["data"]


@pytest.mark.parametrize("name", model_names())
def test_gradient_matches_finite_differences(name, monkeypatch):
    model, data = _example_data(name, monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = model.sample(data, chains=1, warmup=20, draws=1, seed=3)  # a valid point, to learn P
    _, grad = model.log_density(data, {k: post.draws(k)[0] for k in model_info(model.name)["parameters"]})
    p = grad.shape[1]
    rng = np.random.default_rng(0)
    h = 1e-5
    for _ in range(3):
        u = rng.uniform(-1.5, 1.5, p)
        v = rng.normal(size=p)
        v /= np.linalg.norm(v)
        lp, g = model.log_density(data, unconstrained=np.stack([u, u + h * v, u - h * v]))
        assert np.all(np.isfinite(lp)), (name, lp)
        autodiff, fd = g[0] @ v, (lp[1] - lp[2]) / (2 * h)
        assert abs(autodiff - fd) <= 1e-6 * max(abs(autodiff), abs(fd)) + 1e-8 * (1 + abs(lp[0])), (name, autodiff, fd)
