"""When the test session compiles every uncached Stan program up front (tests/conftest.py): the
whole suite as the README runs it, CI, or the environment's explicit choice; never a worker, and
not a run of chosen files (which compiles only what it uses, lazily)."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # the module pytest loads: its rule, not a restatement of it

_ENV = ("CI", "PYSTANPRIVACY_PRECOMPILE", "PYTEST_XDIST_WORKER")
WHOLE = pytest.Config.ArgsSource.TESTPATHS
CHOSEN = pytest.Config.ArgsSource.ARGS

# a plugin that prints the decision for pytest's real configuration of a command line, then stops
PROBE = """
import os, sys
sys.path.insert(0, {tests!r})
import conftest
def pytest_sessionstart(session):
    print("PRECOMPILE=" + str(conftest._precompile(session.config)))
    os._exit(0)
"""


@pytest.mark.parametrize(
    ("source", "env", "expected"),
    [
        (WHOLE, {}, True),  # the README's command: the whole suite
        (CHOSEN, {}, False),  # chosen files: lazily
        (CHOSEN, {"CI": "true"}, True),  # CI always
        (CHOSEN, {"PYSTANPRIVACY_PRECOMPILE": "1"}, True),
        (WHOLE, {"PYSTANPRIVACY_PRECOMPILE": "0"}, False),  # an explicit no wins
        (WHOLE, {"CI": "true", "PYSTANPRIVACY_PRECOMPILE": "0"}, False),
        (WHOLE, {"PYTEST_XDIST_WORKER": "gw0"}, False),  # a worker never compiles everything
    ],
)
def test_the_session_precompiles_only_for_the_whole_suite_ci_or_when_asked(monkeypatch, source, env, expected):
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert conftest._precompile(types.SimpleNamespace(args_source=source)) is expected


@pytest.mark.parametrize(("args", "expected"), [([], True), (["tests/test_layout.py"], False)])
def test_pytest_reads_the_readme_command_as_the_whole_suite(tmp_path, args, expected):
    (tmp_path / "probe_plugin.py").write_text(PROBE.format(tests=str(ROOT / "tests")))
    environ = {k: v for k, v in os.environ.items() if k not in (*_ENV, "PYTEST_ADDOPTS")}
    environ["PYTHONPATH"] = str(tmp_path)
    cmd = [sys.executable, "-m", "pytest", "-p", "probe_plugin", "-n", "0", "--co", "-q", *args]
    out = subprocess.run(cmd, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)
    lines = [line for line in out.stdout.splitlines() if line.startswith("PRECOMPILE=")]
    assert lines == [f"PRECOMPILE={expected}"], out.stdout + out.stderr
