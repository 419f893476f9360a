"""benchmarks/bench_models.py: every model of the registry has a benchmark case, and each
case's data builder produces data its model accepts (checked against the model's declared
inputs, without compiling or running Stan; no timings are asserted)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from pystanprivacy.models.registry import model_names
from pystanprivacy.sampling import stan as stan_module

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_models.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_models", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_models"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("bench_models", None)


def test_every_model_has_a_case(bench):
    assert sorted(bench.CASES) == model_names()
    for name, case in bench.CASES.items():
        assert 0 < case.sizes[0] < case.sizes[1], name
        assert 0 < case.quick[0] < case.quick[1], name
        assert case.expected.split()[0] in ("flat", "linear"), name


def test_select_globs(bench):
    assert bench.select("kulkarni2022/*") == [m for m in model_names() if m.startswith("kulkarni2022/")]
    assert bench.select(None) == model_names()
    assert bench.select("foulds2016/beta_bernoulli, jewson2023/logistic") == [
        "foulds2016/beta_bernoulli",
        "jewson2023/logistic",
    ]
    with pytest.raises(SystemExit, match="matches none"):
        bench.select("nosuchpaper/*")


def test_select_refuses_a_registry_and_a_case_table_that_disagree(bench, monkeypatch):
    cases = dict(bench.CASES)
    dropped = cases.pop("kulkarni2022/gaussian")
    monkeypatch.setattr(bench, "CASES", cases)
    with pytest.raises(SystemExit, match="no benchmark case for kulkarni2022/gaussian: add one to CASES"):
        bench.select(None)
    monkeypatch.setattr(bench, "CASES", {**cases, "kulkarni2022/gaussian": dropped, "nopaper/gone": dropped})
    with pytest.raises(SystemExit, match="benchmark cases for models that are not in the registry: nopaper/gone"):
        bench.select("kulkarni2022/*")


class _Accepted(Exception):
    def __init__(self, name, data, kwargs):
        super().__init__(name)
        self.name, self.data, self.kwargs = name, data, kwargs


class _FakeModel:
    """Stands in for a compiled model: validates the data against the model's declared
    inputs (names, types, dimensions, finiteness) and stops before Stan runs."""

    def __init__(self, name):
        self.name = name

    def sample(self, data, **kwargs):
        raise _Accepted(self.name, stan_module._check_data(self.name, data), kwargs)


@pytest.mark.parametrize("name", model_names())
def test_builder_data_is_accepted_by_its_model(bench, name, monkeypatch):
    monkeypatch.setattr(stan_module.StanModel, "get", classmethod(lambda cls, n, backend=None: _FakeModel(n)))
    case = bench.CASES[name]
    fit, n_records = case.build(case.quick[0], 3)
    assert n_records >= case.quick[0]
    with pytest.raises(_Accepted) as info:
        fit(seed=5, chains=2, warmup=10, draws=10)
    assert info.value.name == name
    assert info.value.kwargs["chains"] == 2 and info.value.kwargs["draws"] == 10
    assert set(info.value.data) == set(stan_module.model_info(name)["inputs"])
