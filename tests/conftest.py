"""Shared fixtures. Compiled Stan models are process-wide (StanModel.get) and cached on disk,
so each model is compiled at most once per test session (and not at all when cached).

At session start every model that is not yet in the cache is compiled, two at a time in
separate processes (a compile is single-threaded; the CI machine has 2 cores). Set
PYSTANPRIVACY_PRECOMPILE=0 to skip this and compile lazily instead.
"""
from __future__ import annotations

import os
import time
import warnings

import pytest

warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")


def pytest_sessionstart(session):
    if os.environ.get("PYSTANPRIVACY_PRECOMPILE", "1") == "0":
        return
    from pystanprivacy import stan

    start = time.perf_counter()
    results = stan.compile_models(jobs=2, raise_errors=False)  # a broken model fails its own tests
    built = [name for name, cached, _, error in results if not cached and error is None]
    if built:
        print(f"\ncompiled {len(built)} Stan model(s) in {time.perf_counter() - start:.0f} s: {', '.join(built)}")
    for name, _, _, error in results:
        if error is not None:
            print(f"\nStan model {name} failed to compile: {error.splitlines()[0]}")


@pytest.fixture(scope="session")
def beta_bernoulli_model():
    from pystanprivacy.stan import StanModel

    return StanModel.get("foulds2016/beta_bernoulli")


@pytest.fixture(scope="session")
def beta_bernoulli_ops_model():
    from pystanprivacy.stan import StanModel

    return StanModel.get("foulds2016/beta_bernoulli_ops")
