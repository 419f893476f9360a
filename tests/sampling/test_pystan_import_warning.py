"""pystan's ``stan/plugins.py`` imports ``pkg_resources``, which setuptools 67 to 80 answer with a
``UserWarning`` ("pkg_resources is deprecated as an API"). With the ``dpsgd`` extra installed
(torch pulls setuptools 80) that warning was the first line of every program's stderr, Ctrl-C's
included. The backend imports pystan without it (``pystan_backend._import_pystan``), and only it.

The test does not depend on the installed setuptools: the child process finds a stand-in
``pkg_resources`` first on its path, which warns as setuptools 80's does (stacklevel 2, so the
warning is attributed to the importing module, ``stan.plugins``) and lends pystan the one function
it uses
(``iter_entry_points``, and ``EntryPoint`` in an annotation)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("stan")

FAKE_PKG_RESOURCES = '''
import warnings
from importlib.metadata import EntryPoint, entry_points

warnings.warn(
    "pkg_resources is deprecated as an API. See https://setuptools.pypa.io/en/latest/pkg_resources.html.",
    UserWarning,
    stacklevel=2,
)


def iter_entry_points(group):
    return iter(entry_points(group=group))
'''

CHILD = """
import sys, warnings
sys.path.insert(0, {folder!r})
from pystanprivacy.sampling.backends.pystan_backend import PystanBackend
assert "stan" not in sys.modules
assert PystanBackend.availability() is None
import pkg_resources
assert pkg_resources.__file__.startswith({folder!r}), pkg_resources.__file__
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
