"""Shared fixtures. Compiled Stan models are process-wide (StanModel.get) and cached on disk,
so each model is compiled at most once per test session (and not at all when cached): a
per-model file lock makes a process that needs a model another one is compiling wait for it.

The tests run in two pytest-xdist workers (``-n 2`` in pyproject.toml); each worker has a
temporary directory of its own, so that a test looking for what a fit left in ``TMPDIR`` sees only
its own worker's files.

When the whole suite runs (``pytest`` with no paths, as the README's test command runs it), in CI
(``CI`` set) or with PYSTANPRIVACY_PRECOMPILE=1, every model and test program (``tests/stan``) that
is not yet in the cache is compiled at session start, before the workers start, two at a time in
separate processes (a compile is single-threaded; the CI machine has 2 cores). Compiling beside the
tests instead was slower (four compiles and two test workers on two cores). A run of chosen test
files, or any run with PYSTANPRIVACY_PRECOMPILE=0, compiles lazily on first use, in whichever
worker needs a model first.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import pytest

warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _import_file(path: Path):
    """``path`` (a .py file outside the package) imported as a new module."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def load_benchmark():
    """``load_benchmark("bench_parallel")``: ``benchmarks/bench_parallel.py`` imported as a module
    (the benchmarks are scripts, not a package)."""
    return lambda name: _import_file(BENCHMARKS / f"{name}.py")


@pytest.fixture(scope="session")
def load_script():
    """``load_script("kulkarni2022_exponential_check")``: ``scripts/<name>.py`` imported as a module."""
    return lambda name: _import_file(SCRIPTS / f"{name}.py")


_WORKER_TMP: list[str] = []


def pytest_configure(config):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:  # a temporary directory per worker (removed at its end); short, for Unix sockets
        _WORKER_TMP.append(tempfile.mkdtemp(prefix=f"pytest-{worker}-"))
        os.environ["TMPDIR"] = tempfile.tempdir = _WORKER_TMP[0]


def pytest_unconfigure(config):
    for folder in _WORKER_TMP:
        shutil.rmtree(folder, ignore_errors=True)


def _programs_to_compile() -> list[str]:
    """Every model and every program the tests compile (tests/stan, tests/checks, the examples),
    the longest C++ first, so that the two compile processes finish close together."""
    from pystanprivacy.sampling import stan

    root = Path(__file__).parent
    programs = [
        str(p)
        for p in (
            *(root / "stan").glob("*.stan"),
            *(root / "checks").glob("*.stan"),
            *(root.parent / "examples").glob("**/*.stan"),
        )
    ]
    names = [*stan.available_models(), *programs]
    names.sort(key=lambda name: -len(stan.flatten(name)))
    return names


def _report_compiles(seconds: float, results: list) -> None:
    built = [name for name, cached, _, error in results if not cached and error is None]
    if built:
        print(f"\ncompiled {len(built)} Stan model(s) in {seconds:.0f} s: {', '.join(built)}")
    for name, _, _, error in results:
        if error is not None:  # a broken one fails its own tests
            print(f"\nStan model {name} failed to compile: {error.splitlines()[0]}")


def _precompile(config) -> bool:
    """Whether this session compiles every uncached program before the tests (module doc)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return False
    flag = os.environ.get("PYSTANPRIVACY_PRECOMPILE")
    if flag is not None:
        return flag != "0"
    return bool(os.environ.get("CI")) or config.args_source == pytest.Config.ArgsSource.TESTPATHS


def pytest_sessionstart(session):
    # in the controller (or the only process), before xdist starts its workers (xdist's own
    # sessionstart hook runs last)
    if not _precompile(session.config):
        return
    from pystanprivacy.sampling import stan

    start = time.perf_counter()
    results = stan.compile_models(_programs_to_compile(), jobs=2, raise_errors=False)
    _report_compiles(time.perf_counter() - start, results)


@pytest.fixture(scope="session")
def beta_bernoulli_model():
    from pystanprivacy.sampling.stan import StanModel

    return StanModel.get("foulds2016/beta_bernoulli")


@pytest.fixture(scope="session")
def beta_bernoulli_ops_model():
    from pystanprivacy.sampling.stan import StanModel

    return StanModel.get("foulds2016/beta_bernoulli_ops")


@pytest.fixture(scope="session")
def nb_hmm_model():
    from pystanprivacy.sampling.stan import StanModel

    return StanModel.get("foulds2016/nb_hmm")


@pytest.fixture(scope="session")
def nb_hmm_ops_model():
    from pystanprivacy.sampling.stan import StanModel

    return StanModel.get("foulds2016/nb_hmm_ops")


@pytest.fixture(scope="session")
def shared_data_dir():
    """The real UCI files shipped in the repository's ``data/`` folder (also in the sdist);
    a checkout without them is broken, so the tests that need them fail, saying where they looked."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "data"
    if not (folder / "adult.data").is_file():
        pytest.fail(f"the shipped UCI data are missing (looked in {folder})")
    return folder


@pytest.fixture
def no_shipped_data(monkeypatch):
    """Hide the shipped ``data/`` folder (and unset ``$PYSTANPRIVACY_DATA``), so that a test
    sees an installation with no data files; the test may set ``$PYSTANPRIVACY_DATA`` itself."""
    from pystanprivacy.datasets import uci

    monkeypatch.setattr(uci, "shipped_data_dir", lambda: None)
    monkeypatch.delenv(uci.DATA_ENV, raising=False)
