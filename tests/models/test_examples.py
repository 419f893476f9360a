"""Model.example: every model of the registry simulates its own data and names the one call
that takes them (models.base.Example). Stan is replaced by a trap (as in
test_hostile_models): the release path runs for real, a fit stops where it would start
Stan, after StanModel's own validation of the data against the program's declared inputs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pystanprivacy.models.base import Example, Model
from pystanprivacy.models.registry import model_class, model_names
from pystanprivacy.privacy.records import PrivacyAccountant, Release
from pystanprivacy.sampling import stan as stan_module

N = 7


class _Reached(BaseException):
    """Raised where Stan would start; carries the validated data."""


class _Trap:
    def __init__(self, name):
        self.name = name

    def sample(self, data, **kwargs):
        raise _Reached(self.name, stan_module._check_data(self.name, data), kwargs)


@pytest.fixture(autouse=True)
def no_stan(monkeypatch):
    monkeypatch.setattr(stan_module.StanModel, "get", classmethod(lambda cls, n, backend=None: _Trap(n)))


def _variables(name):
    info = stan_module.model_info(name)
    return {*info["parameters"], *info["transformed parameters"], *info["generated quantities"]}


@pytest.mark.parametrize("name", model_names())
def test_example_has_the_data_of_its_size_and_the_truth_by_parameter_name(name):
    cls = model_class(name)
    ex = cls.example(N, seed=0)
    assert isinstance(ex, Example) and type(ex.model) is cls
    private = np.asarray(ex.data[ex.private_argument])
    if name.startswith("bernstein2018/"):
        assert ex.kwargs["n"] == N and ex.method == "release_statistics"  # exact statistics of N records
    elif name.startswith("foulds2016/nb_hmm"):
        assert private.sum() == N * len(ex.kwargs["feature_sizes"])  # N log entries, each counted once per feature
    else:
        assert private.shape[0] == N
    assert ex.truth and set(ex.truth) <= _variables(name), (set(ex.truth), _variables(name))
    again = cls.example(N, seed=0)
    for key in ex.data:
        np.testing.assert_array_equal(ex.data[key], again.data[key])
    a, b = cls.example(50, seed=0), cls.example(50, seed=1)  # another seed, other data (and truth)
    assert any(not np.array_equal(a.data[k], b.data[k]) for k in a.data)


@pytest.mark.parametrize("name", model_names())
def test_example_fit_takes_the_model_path_up_to_stan(name):
    ex = model_class(name).example(N, seed=0)
    with pytest.raises(_Reached) as info:
        ex.fit(seed=3, chains=2, warmup=10, draws=10)
    got, data, kwargs = info.value.args
    assert got == name and kwargs["chains"] == 2 and kwargs["draws"] == 10
    assert set(data) == set(stan_module.model_info(name)["inputs"])


@pytest.mark.parametrize("name", [n for n in model_names() if model_class(n).private])
def test_example_call_is_charged_once(name):
    ex = model_class(name).example(N, seed=0)
    acc = PrivacyAccountant(100.0, 0.5)
    try:
        out = ex.call(ex.data[ex.private_argument], acc)
    except _Reached:
        assert ex.kind == "ops"  # an OPS attempt runs Stan, after its charge
    else:
        assert ex.kind == "release" and isinstance(out, Release)
        assert out.record.epsilon == ex.kwargs["epsilon"]
    assert len(acc.ledger) == 1


def test_example_release_is_reproducible_and_refused_for_other_kinds():
    ex = model_class("kulkarni2022/gaussian").example(N)
    np.testing.assert_array_equal(ex.release(seed=1).values, ex.release(seed=1).values)
    for name in ("foulds2016/beta_bernoulli_ops", "kulkarni2022/linear_regression_nonprivate"):
        with pytest.raises(NotImplementedError, match="has no release"):
            model_class(name).example(N).release(seed=1)


def test_example_contract():
    with pytest.raises(NotImplementedError, match="^Model has no example"):
        Model.example(3)
    ex = model_class("foulds2016/beta_bernoulli").example(N)
    with pytest.raises(ValueError, match="private_argument must be a key of data"):
        dataclasses.replace(ex, private_argument="y")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ex.kwargs = {}  # type: ignore[misc]
