"""The .stan files and the shipped data sets go into the wheel (and the sdist), and the
installed package finds them without any environment variable."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from pystanprivacy.sampling.stan import available_models, stan_root

ROOT = Path(__file__).resolve().parents[1]
#: the files of data/ (data/README.md gives each one's source and licence)
DATA_FILES = sorted(p.name for p in (ROOT / "data").iterdir() if p.is_file())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    build = pytest.importorskip("hatchling.build", reason="hatchling is part of the [test] extra")
    out = tmp_path_factory.mktemp("wheel")
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return out / build.build_wheel(str(out))
    finally:
        os.chdir(cwd)


def test_wheel_contains_every_stan_model(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    for model in available_models():
        assert f"pystanprivacy/stan/{model}.stan" in names, f"{model}.stan is missing from the wheel"
    assert "pystanprivacy/sampling/stan.py" in names
    assert any(n.endswith("entry_points.txt") for n in names)


def test_wheel_contains_the_data_files(wheel):
    assert {
        "adult.data",
        "adult.test",
        "abalone.data",
        "winequality-red.csv",
        "winequality-white.csv",
        "afg_war_diary.csv.gz",  # Foulds et al.'s war-logs case study (GPL; data/README.md)
        "kosarak_prefix.dat.gz",  # Kulkarni et al.'s Figure 2: the first 36,683 Kosarak transactions
        "README.md",
    } <= set(DATA_FILES)
    with zipfile.ZipFile(wheel) as zf:
        for name in DATA_FILES:
            assert zf.read(f"pystanprivacy/data/{name}") == (ROOT / "data" / name).read_bytes(), name


def test_installed_wheel_finds_its_data_without_the_environment_variable(wheel, tmp_path):
    # a pure-Python wheel unpacked onto sys.path is what pip installs; run from elsewhere,
    # with $PYSTANPRIVACY_DATA unset, so that neither the checkout nor the variable can help
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    env = {k: v for k, v in os.environ.items() if k != "PYSTANPRIVACY_DATA"}
    env["PYTHONPATH"] = str(site)
    code = (
        "from pystanprivacy.datasets import uci; "
        "print(uci.shipped_data_dir()); print(uci.find_data_file('adult.data')); "
        "print(len(uci.load_adult()), len(uci.load_abalone()), len(uci.load_wine()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == [
        str(site / "pystanprivacy" / "data"),
        str(site / "pystanprivacy" / "data" / "adult.data"),
        "32561 4177 1599",
    ]


def test_sdist_contains_the_data_files(tmp_path, monkeypatch):
    build = pytest.importorskip("hatchling.build", reason="hatchling is part of the [test] extra")
    monkeypatch.chdir(ROOT)
    name = build.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    assert {f"data/{n}" for n in DATA_FILES} <= names
    assert {"README.md", "CONTRIBUTING.md", "benchmarks/README.md"} <= names


def test_models_are_found_through_one_function():
    root = stan_root()
    assert (root / "foulds2016" / "beta_bernoulli.stan").is_file()
