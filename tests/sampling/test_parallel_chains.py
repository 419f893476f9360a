"""How many chains of a fit run at once (``backends.base.set_parallel_chains``): the
setting, its environment variable, the share each pool or Dask worker gets, and that the
draws do not depend on it."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pystanprivacy.run import cluster, runner
from pystanprivacy.sampling.backends import base
from pystanprivacy.sampling.backends.base import (
    PARALLEL_CHAINS_ENV,
    chain_process_cap,
    parallel_chains,
    set_parallel_chains,
)

CPUS = os.cpu_count() or 1


@pytest.fixture
def restore_cap(monkeypatch):
    monkeypatch.delenv(PARALLEL_CHAINS_ENV, raising=False)
    yield monkeypatch
    set_parallel_chains(None)


def test_default_is_every_cpu_and_the_setting_caps_the_chains(restore_cap):
    assert chain_process_cap() == CPUS
    assert parallel_chains(64) == CPUS and parallel_chains(1) == 1
    set_parallel_chains(3)
    assert chain_process_cap() == 3 and parallel_chains(4) == 3 and parallel_chains(2) == 2
    set_parallel_chains(None)
    assert chain_process_cap() == CPUS


def test_environment_variable_is_the_default_and_the_setting_overrides_it(restore_cap):
    restore_cap.setenv(PARALLEL_CHAINS_ENV, "5")
    assert chain_process_cap() == 5
    set_parallel_chains(2)
    assert chain_process_cap() == 2
    for bad in ("0", "-1", "two", "1.5"):
        set_parallel_chains(None)
        restore_cap.setenv(PARALLEL_CHAINS_ENV, bad)
        with pytest.raises(ValueError, match=rf"{PARALLEL_CHAINS_ENV} must be an int >= 1, got '{bad}'"):
            chain_process_cap()


@pytest.mark.parametrize("bad", [0, -2, 1.0, True, "2"])
def test_bad_setting_is_refused_and_changes_nothing(restore_cap, bad):
    set_parallel_chains(2)
    with pytest.raises(ValueError, match=rf"parallel chains must be an int >= 1 or None \(the default\), got {bad!r}"):
        set_parallel_chains(bad)
    assert chain_process_cap() == 2


def test_share_of_cpus_per_task_slot():
    assert runner.worker_chain_cap(2, 1) == 2
    assert runner.worker_chain_cap(2, 2) == 1
    assert runner.worker_chain_cap(2, 8) == 1  # never 0
    assert runner.worker_chain_cap(16, 3) == 5
    # two hosts: 16 CPUs for 2 one-thread workers, 4 CPUs for one 4-thread worker -> min(8, 1)
    info = {"a": {"host": "h1", "cpus": 16}, "b": {"host": "h1", "cpus": 16}, "c": {"host": "h2", "cpus": 4}}
    assert cluster.chain_cap(info, {"a": 1, "b": 1, "c": 4}) == 1
    assert cluster.chain_cap(info, {"a": 1, "b": 1, "c": 1}) == 4
    assert cluster.chain_cap({k: info[k] for k in "ab"}, {"a": 1, "b": 1}) == 8


def test_worker_setup_respects_the_environment_unless_told_otherwise(restore_cap):
    runner._init_worker(1)
    assert chain_process_cap() == 1
    set_parallel_chains(None)
    restore_cap.setenv(PARALLEL_CHAINS_ENV, "3")
    runner._init_worker(1)  # the user's variable stands
    assert chain_process_cap() == 3
    runner._init_worker(2, override_env=True)  # an explicit --parallel-chains wins
    assert chain_process_cap() == 2


def _cap_in_worker() -> int:
    return chain_process_cap()


@pytest.mark.parametrize("env", [None, "3"])
def test_pool_workers_get_their_share(restore_cap, env):
    if env is not None:
        restore_cap.setenv(PARALLEL_CHAINS_ENV, env)
    with runner.make_executor(2) as pool:
        caps = {pool.submit(_cap_in_worker).result() for _ in range(4)}
    assert caps == {runner.worker_chain_cap(CPUS, 2) if env is None else int(env)}


def test_draws_do_not_depend_on_the_cap_and_httpstan_pool_follows_it(restore_cap, beta_bernoulli_model):
    data = {"R": 1, "successes": [6.0], "failures": [14.0], "prior_alpha": 1.0, "prior_beta": 1.0}
    kw = dict(chains=3, warmup=100, draws=100, seed=11)
    free = beta_bernoulli_model.sample(data, **kw).draws("p")
    set_parallel_chains(1)
    one_at_a_time = beta_bernoulli_model.sample(data, **kw).draws("p")
    np.testing.assert_array_equal(one_at_a_time, free)
    if beta_bernoulli_model.backend.name == "pystan":
        import httpstan.services_stub as stub

        assert stub.executor._max_workers == 1  # the pool a chain runs in
    set_parallel_chains(None)  # on every backend (it was reset only on pystan: 1 == 2 below on cmdstanpy)
    beta_bernoulli_model.sample(data, **kw)
    if beta_bernoulli_model.backend.name == "pystan":
        assert stub.executor._max_workers == CPUS
    assert base.parallel_chains(3) == min(3, CPUS)
