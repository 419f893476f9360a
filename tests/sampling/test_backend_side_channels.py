"""The pystan backend's last side channels (issue 53, items 4, 10 and 11): the length of the
paths of its Unix sockets (a long ``TMPDIR``), what Ctrl-C prints at shutdown, and what a cold
compile leaves in the caller's working directory and temporary directory."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from pystanprivacy.privacy.records import PrivacyAccountant
from pystanprivacy.sampling import stan as pstan
from pystanprivacy.sampling.backends import ENV_VAR, pch, select_backend
from pystanprivacy.sampling.backends import pystan_backend as pb
from pystanprivacy.sampling.backends.workdirs import STAGING_PREFIX, workdir_prefix

ROOT = Path(__file__).resolve().parents[2]
BB_DATA = {"R": 1, "successes": [3.0], "failures": [4.0], "prior_alpha": 1.0, "prior_beta": 1.0}


@pytest.fixture(scope="module")
def pystan_backend():
    if select_backend().name != "pystan":
        pytest.skip("the pystan backend's sockets and build")
    return select_backend()


def _child_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), ENV_VAR: "pystan", **extra}


def _dir_of_length(parent: Path, total: int) -> Path:
    """A new folder whose path is exactly ``total`` bytes long, inside a new folder of
    ``parent`` (which the caller removes)."""
    base = Path(tempfile.mkdtemp(dir=parent)) / "d"
    path = Path(str(base) + "x" * (total - len(os.fsencode(str(base)))))
    assert len(os.fsencode(str(path))) == total
    path.mkdir()
    return path


# --------------------------------------------------------------------------- item 4: socket paths
def test_socket_name_and_path_limit_are_what_httpstan_and_the_kernel_use(tmp_path):
    """The constants the check uses, each against an independent source: the name httpstan
    gives its socket (its source; the length ``tempfile`` gives such a name) and the longest
    path ``bind`` accepts here."""
    import inspect

    import httpstan.services_stub

    source = inspect.getsource(httpstan.services_stub)
    assert f'tempfile.mkstemp(prefix="{pb.HTTPSTAN_SOCKET_PREFIX}", suffix="{pb.HTTPSTAN_SOCKET_SUFFIX}")' in source, (
        "httpstan names its socket differently: update HTTPSTAN_SOCKET_*"
    )
    fd, name = tempfile.mkstemp(prefix=pb.HTTPSTAN_SOCKET_PREFIX, suffix=pb.HTTPSTAN_SOCKET_SUFFIX, dir=tmp_path)
    os.close(fd)
    assert len(Path(name).name) == 22 == pb.LONGEST_SOCKET_NAME  # the issue: 14 bytes more than api.sock
    assert len(pb.SERVER_SOCKET) == 8

    # a folder short enough to end in socket paths of the limit and one byte over it
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        for total, fits in ((pb.MAX_SOCKET_PATH, True), (pb.MAX_SOCKET_PATH + 1, False)):
            name = "s" * (total - len(os.fsencode(str(folder))) - 1)
            with socket.socket(socket.AF_UNIX) as s:
                if fits:
                    s.bind(str(folder / name))
                else:
                    with pytest.raises(OSError, match="AF_UNIX path too long"):
                        s.bind(str(folder / name))
    finally:
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()


_OPS_CHILD = r"""
import json, os, socket, stat, sys, tempfile
from pathlib import Path

binds = []
original_bind = socket.socket.bind


def recording_bind(self, address):
    if self.family == socket.AF_UNIX and isinstance(address, str):
        folder = Path(address).parent
        binds.append({"path": address, "bytes": len(os.fsencode(address)),
                      "folder_mode": stat.S_IMODE(folder.stat().st_mode), "folder": str(folder)})
    return original_bind(self, address)


socket.socket.bind = recording_bind
from pystanprivacy.models.foulds2016 import BetaBernoulliOPS
from pystanprivacy.privacy.records import PrivacyAccountant
from pystanprivacy.sampling.backends.workdirs import workdir_prefix

accountant = PrivacyAccountant(epsilon=5.0)
x = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1]
result = BetaBernoulliOPS().sample_one(x, epsilon=1.0, accountant=accountant, seed=7,
                                       warmup=500, draws=1000, chains=2)
print(json.dumps({"tmpdir": tempfile.gettempdir(), "spent": accountant.spent[0],
                  "value": float(result.release.values[0]), "binds": binds, "prefix": workdir_prefix()}))
"""


@pytest.fixture(scope="module")
def ops_reference(pystan_backend, beta_bernoulli_ops_model):
    """The draw the child's OPS call releases, made in this process (a short temporary directory)."""
    from pystanprivacy.models.foulds2016 import BetaBernoulliOPS

    x = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1]
    return float(
        BetaBernoulliOPS().sample_one(x, epsilon=1.0, seed=7, warmup=500, draws=1000, chains=2).release.values[0]
    )


@pytest.mark.parametrize("length", [40, 100])
def test_ops_release_works_with_a_long_tmpdir(ops_reference, tmp_path, length):
    """Issue 53 item 4: with a 40-character ``TMPDIR`` every pystan fit failed (``AF_UNIX path
    too long``: httpstan's socket ``httpstan_XXXXXXXX.sock`` in the fit's folder) after the OPS
    attempt was charged. Now the sockets go to a short private (0700) folder when ``TMPDIR`` is
    too long, the release succeeds, it is the same draw as with a short ``TMPDIR`` (same seed),
    and nothing is left in ``TMPDIR`` or in the short folder's root."""
    tmpdir = _dir_of_length(Path("/tmp") if len(str(tmp_path)) > length - 20 else tmp_path, length)
    script = tmp_path / "ops_child.py"
    script.write_text(_OPS_CHILD)
    try:
        out = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            timeout=600,
            env=_child_env(TMPDIR=str(tmpdir)),
            cwd=tmp_path,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        got = json.loads(out.stdout.strip().splitlines()[-1])
        assert got["tmpdir"] == str(tmpdir)
        assert got["spent"] == pytest.approx(1.0)
        assert got["value"] == ops_reference, "the socket folder changed the draw"
        binds = got["binds"]
        assert any(Path(b["path"]).name.startswith(pb.HTTPSTAN_SOCKET_PREFIX) for b in binds)  # the chains' sockets
        for b in binds:
            assert b["bytes"] <= pb.MAX_SOCKET_PATH and b["folder_mode"] == 0o700, b
            assert Path(b["folder"]).name.startswith(got["prefix"]), b
            assert not Path(b["folder"]).exists(), "the socket folder is removed with the fit"
        assert list(tmpdir.iterdir()) == [], "the fit's private directory is removed"
    finally:
        import shutil

        shutil.rmtree(tmpdir.parent)


def test_no_folder_short_enough_refuses_before_the_charge(
    pystan_backend, beta_bernoulli_ops_model, tmp_path, monkeypatch
):
    """Where no folder is short enough for the sockets (``TMPDIR`` too long, no usable
    ``$XDG_RUNTIME_DIR`` or ``/tmp``), the OPS attempt is refused before it is charged, with an
    error naming TMPDIR, its length and the limit; a plain fit is refused before it starts
    (unredacted: the numbers are settings, not data) and leaves nothing behind."""
    from pystanprivacy.models.foulds2016 import BetaBernoulliOPS

    long_tmp = _dir_of_length(tmp_path, 120)
    monkeypatch.setattr(tempfile, "tempdir", str(long_tmp))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(pb, "FALLBACK_SOCKET_ROOTS", (), raising=False)
    accountant = PrivacyAccountant(epsilon=5.0)
    # independent: the longest socket path a fit would make there
    folder = len(os.fsencode(str(long_tmp))) + 1 + len(pstan._workdir_prefix()) + 8
    longest = folder + 1 + len("httpstan_XXXXXXXX.sock")
    expected = (
        rf"TMPDIR\) is 120 bytes long.*paths of up to {longest} bytes, over the limit of 107 bytes "
        rf"\(108 with the closing NUL\).*at most {107 - (longest - 120)} bytes"
    )
    with pytest.raises(RuntimeError, match=expected):
        BetaBernoulliOPS().sample_one([1, 0, 1], epsilon=1.0, accountant=accountant, seed=1)
    assert accountant.spent == (0.0, 0.0) and accountant.ledger == []
    with pytest.raises(RuntimeError, match=expected) as info:
        beta_bernoulli_ops_model.sample(
            BB_DATA | {"temperature": 1.0, "a0": 0.2}, chains=1, warmup=10, draws=10, seed=1
        )
    assert not isinstance(info.value, pstan.StanRunError)
    assert list(long_tmp.iterdir()) == []


# --------------------------------------------------------------------------- item 10: Ctrl-C
_SIGINT_CHILD = r"""
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C in a terminal
from pystanprivacy.sampling.stan import StanModel

model = StanModel.get("foulds2016/beta_bernoulli")
print("sampling", flush=True)
model.sample({"R": 1, "successes": [3.0], "failures": [4.0], "prior_alpha": 1.0, "prior_beta": 1.0},
             chains=2, warmup=100, draws=10**7, seed=1)
print("finished", flush=True)
"""


def test_ctrl_c_prints_nothing_but_the_interrupt(pystan_backend, beta_bernoulli_model, tmp_path):
    """Issue 53 item 10: Ctrl-C (SIGINT to the Python process only) during a fit printed
    ``Exception ignored ... ImportError: sys.meta_path is None`` at shutdown (a log filter that
    imported a module while the interpreter was being torn down). The process ends by SIGINT
    and its stderr holds the KeyboardInterrupt's traceback and nothing else."""
    script = tmp_path / "sigint_child.py"
    script.write_text(_SIGINT_CHILD)
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_child_env(),
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        assert proc.stdout.readline().strip() == "sampling", proc.stderr.read()[-2000:]
        time.sleep(2.0)  # the chains sample (10**7 draws: minutes)
        os.kill(proc.pid, signal.SIGINT)
        rc = proc.wait(timeout=60)
        stderr = proc.stderr.read()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    assert rc == -signal.SIGINT, stderr[-3000:]
    assert "Exception ignored" not in stderr, stderr[-3000:]
    lines = stderr.strip().splitlines()
    assert lines[0] == "Traceback (most recent call last):" and lines[-1] == "KeyboardInterrupt", stderr[-3000:]
    assert stderr.count("Traceback") == 1, stderr[-3000:]


# --------------------------------------------------------------------------- item 11: cold compile
_COMPILE_CHILD = r"""
import sys
from pystanprivacy.sampling.stan import StanModel

model = StanModel(sys.argv[1])
assert not model.was_cached, "the test's cache was to be empty"
fit = model.sample({"y": 2.5}, chains=1, warmup=100, draws=200, seed=3)
print(float(fit.draws("mu").mean()))
"""

_WRAPPER = """#!/bin/sh
echo "$TMPDIR" >> "{log}"
exec {real} "$@"
"""


def test_cold_compile_writes_nothing_into_the_working_or_temporary_directory(pystan_backend, tmp_path):
    """Issue 53 item 11: a first-time compile left ``./build/temp.*`` (a 40-70 MB object file)
    in the caller's working directory. One cold compile in a subprocess whose working directory
    is a fresh folder holding a project's ``setup.cfg`` (whose build settings must not apply to
    the model's build either: here they would move the build folder to ``./project-build``), with
    a fresh model cache and a fresh (short) ``TMPDIR``: afterwards the working directory holds
    only its ``setup.cfg``, ``TMPDIR`` is empty, the cache holds the model and no build folder,
    and the compiler's own temporary files went into the cache's private staging folder (the
    ``TMPDIR`` each compiler call saw, logged by wrappers named in ``CC``/``CXX``), not into
    ``TMPDIR``. The model then samples, so the module was really built."""
    import shutil
    import sysconfig

    work, cache, tools = (tmp_path / d for d in ("work", "cache", "tools"))
    for d in (work, cache, tools):
        d.mkdir()
    tmp = Path(tempfile.mkdtemp(dir="/tmp"))  # short: the fit's sockets fit in it on any version
    (work / "setup.cfg").write_text("[build]\nbuild_base = project-build\n")
    program = work.parent / "program.stan"  # outside the working directory
    program.write_text("data { real y; }\nparameters { real mu; }\nmodel { mu ~ normal(y, 1); }\n")
    log = tools / "tmpdirs.log"
    env = _child_env(TMPDIR=str(tmp), **{pstan.CACHE_ENV_VAR: str(cache)})
    for var in ("CC", "CXX"):
        real = sysconfig.get_config_var(var).split()
        wrapper = tools / var.lower()
        wrapper.write_text(_WRAPPER.format(log=log, real=real[0]))
        wrapper.chmod(0o700)
        env[var] = " ".join([str(wrapper), *real[1:]])
    before = {p.name: p.read_bytes() for p in work.iterdir()}
    # staging folders of a model build and of a header build killed with SIGKILL: this build removes them
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host, _, start = workdir_prefix(STAGING_PREFIX)[len(STAGING_PREFIX) :].split("-")[:3]
    version_root = cache / pystan_backend.version_tag()
    for folder in (version_root, version_root / "pch"):
        folder.mkdir(mode=0o700)  # as the library makes them
        stale = folder / f"{STAGING_PREFIX}{host}-{dead.pid}-{start}-killed00"
        stale.mkdir(mode=0o700)
        (stale / "left.o").write_bytes(b"\0" * 64)
    try:
        out = subprocess.run(
            [sys.executable, "-c", _COMPILE_CHILD, str(program)],
            capture_output=True,
            text=True,
            timeout=900,
            env=env,
            cwd=work,
        )
        left_in_tmp = sorted(p.name for p in tmp.iterdir())
    finally:
        shutil.rmtree(tmp)
    assert {p.name: p.read_bytes() for p in work.iterdir() if p.is_file()} == before and sorted(
        p.name for p in work.iterdir()
    ) == sorted(before), f"the compile wrote into the working directory: {sorted(p.name for p in work.iterdir())}"
    assert out.returncode == 0, out.stderr[-3000:]
    # mu | y = 2.5 ~ N(2.5, 1): the mean of 200 draws is off by more than 0.5 with a
    # probability below 1e-6 even for an effective sample size of 25
    assert abs(float(out.stdout.strip().splitlines()[-1]) - 2.5) < 0.5
    assert left_in_tmp == [], f"left in TMPDIR: {left_in_tmp}"
    seen = log.read_text().split()
    assert len(seen) >= 2, "the wrappers ran (compile and link)"
    assert all(Path(s).is_relative_to(cache) and STAGING_PREFIX in s for s in seen), seen
    assert sorted(p.name for p in version_root.iterdir()) == ["models", "pch"], "no staging or build folder is left"
    # the precompiled Stan header (backends/pch.py), built by this compile with the same wrappers: one
    # keyed private folder holding the header and its .gch, and its lock; no staging folder
    (header_dir,) = [p for p in (version_root / "pch").iterdir() if p.is_dir()]
    assert sorted(p.name for p in header_dir.iterdir()) == [pch.HEADER_NAME, f"{pch.HEADER_NAME}.gch"]
    assert [p.name for p in (version_root / "pch").iterdir() if not p.is_dir()] == [f"{header_dir.name}.lock"]
    assert stat.S_IMODE(header_dir.stat().st_mode) == stat.S_IMODE((version_root / "pch").stat().st_mode) == 0o700
    built = [p for p in version_root.rglob("*") if p.is_file()]
    assert not [p for p in built if p.suffix == ".o"], "object files are not kept"
    assert stat.S_IMODE(version_root.stat().st_mode) == 0o700
    shutil.rmtree(version_root / "pch")  # about 1 GB
