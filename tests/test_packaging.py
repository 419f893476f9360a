"""The .stan files ship inside the wheel, and the installed package finds them by name."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from pystanprivacy.sampling.stan import available_models, stan_root

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_every_stan_model(tmp_path, monkeypatch):
    build = pytest.importorskip("hatchling.build", reason="hatchling is part of the [test] extra")
    monkeypatch.chdir(ROOT)
    name = build.build_wheel(str(tmp_path))
    with zipfile.ZipFile(tmp_path / name) as wheel:
        names = set(wheel.namelist())
    for model in available_models():
        assert f"pystanprivacy/stan/{model}.stan" in names, f"{model}.stan is missing from the wheel"
    assert "pystanprivacy/sampling/stan.py" in names
    assert any(n.endswith("entry_points.txt") for n in names)


def test_models_are_found_through_one_function():
    root = stan_root()
    assert (root / "foulds2016" / "beta_bernoulli.stan").is_file()
