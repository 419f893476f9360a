"""When the test session compiles every uncached Stan program up front (tests/conftest.py): the
whole suite as the README runs it, CI, or the environment's explicit choice; never a worker, and
not a run of chosen files (which compiles only what it uses, lazily)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# a conftest-free probe: pytest's own decision of where the arguments came from, read by the same
# rule as tests/conftest.py's _precompile through a plugin that prints it and stops the session
PROBE = '''
import os, sys
sys.path.insert(0, {tests!r})
import conftest
def pytest_sessionstart(session):
    print("PRECOMPILE=" + str(conftest._precompile(session.config)))
    os._exit(0)
'''


def _decision(tmp_path: Path, args: list[str], env: dict[str, str | None]) -> bool:
    plugin = tmp_path / "probe_plugin.py"
    plugin.write_text(PROBE.format(tests=str(ROOT / "tests")))
    environ = {
        k: v
        for k, v in __import__("os").environ.items()
        if k not in ("CI", "PYSTANPRIVACY_PRECOMPILE", "PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS")
    }
    environ.update({k: v for k, v in env.items() if v is not None})
    environ["PYTHONPATH"] = str(tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "probe_plugin", "-n", "0", "--co", "-q", *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("PRECOMPILE=")]
    assert lines, out.stdout + out.stderr
    return lines[0] == "PRECOMPILE=True"


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        ([], {}, True),  # the README's command: whole suite
        (["tests/test_layout.py"], {}, False),  # chosen files: lazily
        (["tests/test_layout.py"], {"CI": "true"}, True),  # CI always
        (["tests/test_layout.py"], {"PYSTANPRIVACY_PRECOMPILE": "1"}, True),
        ([], {"PYSTANPRIVACY_PRECOMPILE": "0"}, False),  # an explicit no wins
        ([], {"CI": "true", "PYSTANPRIVACY_PRECOMPILE": "0"}, False),
        ([], {"PYTEST_XDIST_WORKER": "gw0"}, False),  # a worker never compiles everything
    ],
)
def test_the_session_precompiles_only_for_the_whole_suite_ci_or_when_asked(tmp_path, args, env, expected):
    assert _decision(tmp_path, args, env) is expected
