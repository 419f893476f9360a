"""The pystan backend builds models without debug information (``-g0``, issue 54 item 3): Python's
``sysconfig`` flags ask for ``-g``, which makes a small model's module ~46 MB and its compile
slower, and changes no generated code (``benchmarks/bench_pch.py --variant g0`` compares draws).

A small C++ extension is built through the backend's own ``_run_build_ext`` (the real setuptools
and compiler, about a second; Stan's header is not involved) and its module's ELF sections are read
with ``readelf``, independently of the flags. Deterministic: no sampling, no false rejections."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pystanprivacy.sampling.backends import pch, pystan_backend

pytestmark = pytest.mark.skipif(
    shutil.which("readelf") is None or shutil.which("g++") is None, reason="needs GCC and readelf"
)

SOURCE = """#include <Python.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "tiny_ext", nullptr, -1, nullptr};
PyMODINIT_FUNC PyInit_tiny_ext(void) { return PyModule_Create(&def); }
"""


def _build(tmp_path: Path, name: str, monkeypatch, seen: list) -> Path:
    """Build the small extension like a model (``_run_build_ext``, a header root given); returns the module."""
    from setuptools import Extension

    folder = tmp_path / name
    (folder / "build").mkdir(parents=True)
    (folder / "tiny_ext.cpp").write_text(SOURCE)

    def record(cmd, *, root, env):  # the command the precompiled header would be keyed and built by
        seen.append(list(cmd))
        return list(cmd)

    monkeypatch.setattr(pch, "with_precompiled_header", record)
    extension = Extension("tiny_ext", sources=[str(folder / "tiny_ext.cpp")], language="c++")
    pystan_backend._run_build_ext(
        [extension], str(folder / "lib"), build_temp=folder / "build", pch_root=folder / "pch"
    )
    (module,) = (folder / "lib").glob("tiny_ext*.so")
    return module


def _sections(module: Path) -> str:
    return subprocess.run(["readelf", "-S", "-W", str(module)], capture_output=True, text=True, check=True).stdout


def test_models_are_built_without_debug_information(tmp_path, monkeypatch):
    seen: list = []
    module = _build(tmp_path, "default", monkeypatch, seen)
    compiles = [cmd for cmd in seen if pch._model_compile(cmd) is not None]
    assert len(compiles) == 1
    # -g0 and -O2 come last, after sysconfig's -g and httpstan's -O3, so they win; the header is
    # built from this same command
    cmd = compiles[0]
    assert cmd[-2:] == ["-g0", "-O2"] and "-g" in cmd
    assert [f for f in cmd if f.startswith("-O")][-1] == "-O2"
    assert ".debug_info" not in _sections(module)


def test_the_check_sees_debug_information_where_the_flag_is_left_out(tmp_path, monkeypatch):
    """The ELF check above can fail: without ``MODEL_COMPILE_FLAGS`` the module has ``.debug_info``."""
    monkeypatch.setattr(pystan_backend, "MODEL_COMPILE_FLAGS", ())
    seen: list = []
    module = _build(tmp_path, "debug", monkeypatch, seen)
    assert ".debug_info" in _sections(module)
