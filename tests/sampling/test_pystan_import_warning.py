"""pystan's ``stan/plugins.py`` imports ``pkg_resources``, which setuptools 67 to 80 answer with a
``UserWarning`` ("pkg_resources is deprecated as an API"). With the ``dpsgd`` extra installed
(torch pulls setuptools 80) that warning was the first line of every program's stderr, Ctrl-C's
included. The backend imports pystan without it (``pystan_backend._import_pystan``), and only it.

The test does not depend on the installed setuptools: the child process finds a stand-in
``pkg_resources`` first on its path, which warns as setuptools 80's does (stacklevel 2, so the
warning is attributed to the importing module) and then loads the real ``pkg_resources`` in its
place (setuptools 65, a fresh venv's, imports it too, and needs all of it)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("stan")

FAKE_PKG_RESOURCES = '''
"""Warns as setuptools 80's pkg_resources does, then becomes the real one (found on the path
after this folder): setuptools 65 imports pkg_resources itself and needs all of it."""
import importlib.machinery
import importlib.util
import os
import sys
import warnings

warnings.warn(
    "pkg_resources is deprecated as an API. See https://setuptools.pypa.io/en/latest/pkg_resources.html.",
    UserWarning,
    stacklevel=2,
)
_here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.machinery.PathFinder.find_spec(
    "pkg_resources", [p for p in sys.path if os.path.abspath(p or ".") != _here]
)
_real = importlib.util.module_from_spec(_spec)
sys.modules["pkg_resources"] = _real  # what the importing statement gets
_spec.loader.exec_module(_real)
'''

CHILD = """
import sys, warnings
sys.path.insert(0, {folder!r})
from pystanprivacy.sampling.backends.pystan_backend import PystanBackend
assert "stan" not in sys.modules
assert PystanBackend.availability() is None
import pkg_resources
assert not pkg_resources.__file__.startswith({folder!r}), pkg_resources.__file__  # the real one
warnings.warn("another UserWarning", UserWarning)
print("imported")
"""


def test_importing_pystan_prints_no_pkg_resources_warning_and_keeps_others(tmp_path):
    (tmp_path / "pkg_resources").mkdir()
    (tmp_path / "pkg_resources" / "__init__.py").write_text(FAKE_PKG_RESOURCES)
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(folder=str(tmp_path))],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "imported"
    assert "pkg_resources is deprecated" not in done.stderr, done.stderr[-3000:]
    # the filter is scoped to pystan's import: a later UserWarning still reaches stderr
    assert "another UserWarning" in done.stderr
