"""The precompiled-header step of the pystan backend's model builds (``backends/pch.py``), with the
real compiler on a small header (``<vector>``, built in about a second) in place of Stan's
(``HEADER_TEXT``; the Stan header itself takes ~40 CPU-s and ~1 GB, so it is exercised by
``benchmarks/bench_pch.py``, which also compares draws of models built with and without it).
Deterministic: no sampling, no false rejections."""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from pystanprivacy.sampling.backends import pch

GXX = shutil.which("g++") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(GXX is None, reason="no GCC")

SOURCE = "#include <vector>\nint size() { std::vector<int> v(3); return int(v.size()); }\n"
ENV = dict(os.environ)


@pytest.fixture
def small_header(monkeypatch):
    monkeypatch.setattr(pch, "HEADER_TEXT", "#include <vector>\n")


def _compile_command(folder: Path) -> list[str]:
    """As setuptools spawns a model's compile: flags, ``-I`` of the source's own folder, ``-c src -o obj``, extra flags."""
    source = folder / "model_x.cpp"
    source.write_text(SOURCE)
    return [GXX, "-O2", "-DSOME_MACRO", f"-I{folder}", "-c", str(source), "-o", str(folder / "model_x.o"), "-std=c++14"]


def test_a_model_compile_gets_the_header_built_once_in_a_private_folder(tmp_path, small_header):
    root = tmp_path / "pch"
    work = tmp_path / "work"
    work.mkdir()
    cmd = _compile_command(work)

    first = pch.with_precompiled_header(cmd, root=root, env=ENV)
    at = cmd.index("-c")
    assert first[:at] == cmd[:at] and first[at + 3 :] == cmd[at:]
    assert first[at] == "-include" and first[at + 2] == "-Winvalid-pch"
    header = Path(first[at + 1])
    assert header.name == pch.HEADER_NAME and header.read_text() == "#include <vector>\n"
    assert (header.parent / f"{pch.HEADER_NAME}.gch").stat().st_size > 0
    # the cache folder and the header's folder are private; no staging folder is left
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE(header.parent.stat().st_mode) == 0o700
    assert [p.name for p in root.iterdir() if p.is_dir()] == [header.parent.name]

    # GCC really reads the .gch ("!" before its name in -H's include trace), with no invalid-PCH warning
    done = subprocess.run([*first, "-H"], capture_output=True, text=True, env=ENV, check=True)
    assert f"! {header}.gch" in done.stderr
    assert "warning" not in done.stderr

    # a second compile reuses it (same folder, same .gch file), and so does a model in another folder
    gch = header.parent / f"{pch.HEADER_NAME}.gch"
    built = gch.stat().st_mtime_ns
    other = tmp_path / "other"
    other.mkdir()
    assert pch.with_precompiled_header(_compile_command(other), root=root, env=ENV)[at + 1] == str(header)
    assert gch.stat().st_mtime_ns == built


def test_other_flags_or_another_header_get_their_own_build(tmp_path, small_header, monkeypatch):
    root = tmp_path / "pch"
    cmd = _compile_command(tmp_path)
    at = cmd.index("-c")
    header = pch.with_precompiled_header(cmd, root=root, env=ENV)[at + 1]
    other_flags = [cmd[0], "-O3", *cmd[2:]]
    assert pch.with_precompiled_header(other_flags, root=root, env=ENV)[at + 1] != header
    monkeypatch.setattr(pch, "HEADER_TEXT", "#include <map>\n")
    assert pch.with_precompiled_header(cmd, root=root, env=ENV)[at + 1] not in {header}


def test_commands_that_compile_no_model_are_left_alone(tmp_path, small_header):
    root = tmp_path / "pch"
    link = [GXX, "-shared", str(tmp_path / "model_x.o"), "-o", str(tmp_path / "x.so")]
    assert pch.with_precompiled_header(link, root=root, env=ENV) == link
    c_source = [GXX, "-c", str(tmp_path / "x.c"), "-o", str(tmp_path / "x.o")]
    assert pch.with_precompiled_header(c_source, root=root, env=ENV) == c_source
    assert not root.exists()


def test_a_failed_header_build_falls_back_to_the_plain_compile_and_is_not_retried(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(pch, "HEADER_TEXT", "#include <no_such_header_anywhere.hpp>\n")
    root = tmp_path / "pch"
    cmd = _compile_command(tmp_path)
    assert pch.with_precompiled_header(cmd, root=root, env=ENV) == cmd
    failed = list(root.glob("*.failed"))
    assert len(failed) == 1 and "no_such_header_anywhere.hpp" in failed[0].read_text()
    assert "building the precompiled Stan header failed" in caplog.text
    assert [p for p in root.iterdir() if p.is_dir()] == []  # its staging folder is gone

    calls = []
    real_build = pch._build
    monkeypatch.setattr(pch, "_build", lambda *a: calls.append(a) or real_build(*a))
    assert pch.with_precompiled_header(cmd, root=root, env=ENV) == cmd
    assert calls == []
    # the plain compile works
    subprocess.run(cmd, check=True, env=ENV, capture_output=True)


def test_a_compile_while_another_process_builds_the_header_goes_without_it(tmp_path, small_header, monkeypatch):
    root = tmp_path / "pch"
    root.mkdir(mode=0o700)
    cmd = _compile_command(tmp_path)
    key = pch._key(pch._header_flags(cmd, cmd.index("-c"), cmd[cmd.index("-c") + 1]), ENV)
    # the lock as another process holds it while it builds (flock locks belong to the open file)
    fd = os.open(root / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert pch.with_precompiled_header(cmd, root=root, env=ENV) == cmd
        assert not (root / key).exists()
    finally:
        os.close(fd)
    assert pch.with_precompiled_header(cmd, root=root, env=ENV) != cmd


def test_a_header_left_by_a_killed_build_is_not_used(tmp_path, small_header):
    """A build killed mid-way leaves a staging folder (maybe with a partial .gch), never the keyed one."""
    root = tmp_path / "pch"
    root.mkdir(mode=0o700)
    cmd = _compile_command(tmp_path)
    staging = root / "staging-killed"
    staging.mkdir()
    (staging / f"{pch.HEADER_NAME}.gch").write_bytes(b"partial")
    header = Path(pch.with_precompiled_header(cmd, root=root, env=ENV)[cmd.index("-c") + 1])
    assert header.parent != staging and (header.parent / f"{pch.HEADER_NAME}.gch").read_bytes() != b"partial"
