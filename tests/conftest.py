"""Shared fixtures. Compiled Stan models are process-wide (StanModel.get) and cached on disk,
so each model is compiled at most once per test session (and not at all when cached)."""
from __future__ import annotations

import warnings

import pytest

warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")


@pytest.fixture(scope="session")
def beta_bernoulli_model():
    from pystanprivacy.stan import StanModel

    return StanModel.get("foulds2016/beta_bernoulli")


@pytest.fixture(scope="session")
def beta_bernoulli_ops_model():
    from pystanprivacy.stan import StanModel

    return StanModel.get("foulds2016/beta_bernoulli_ops")
