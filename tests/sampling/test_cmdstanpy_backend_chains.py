"""The cmdstanpy backend's chain processes: how many run at once, and that none outlives its
fit when the fit is interrupted, terminated or killed, or when the Python process dies.

Without CmdStan these run the real cmdstanpy (its thread pool, its ``subprocess.Popen``) on a
stand-in installation: a folder with CmdStan's ``makefile`` version line, and a model
"executable" that is a small Python script which answers ``info`` as a CmdStan executable does
and otherwise logs when it starts and ends, then sleeps (a chain that samples for as long as the
test needs). The same kill and interrupt scenarios run on a real CmdStan model where CmdStan is
installed (skipped otherwise). Linux only: processes are found in ``/proc``."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pystanprivacy.sampling import stan as pstan
from pystanprivacy.sampling.backends import base, chain_processes
from pystanprivacy.sampling.backends import cmdstanpy_backend as cb
from pystanprivacy.sampling.backends.base import SamplerSettings, set_parallel_chains

pytestmark = pytest.mark.skipif(not chain_processes.supported(), reason="needs Linux /proc")

REPO = Path(__file__).resolve().parents[2]
HOSTILE = REPO / "tests" / "stan" / "hostile_reject.stan"
CMDSTAN_WHY = cb.CmdStanPyBackend.availability()  # None where a real CmdStan is installed
needs_cmdstan = pytest.mark.skipif(CMDSTAN_WHY is not None, reason=f"needs CmdStan: {CMDSTAN_WHY}")

FAKE_EXE = """#!{python}
# Stand-in for a CmdStan model executable (a test fixture, see the module docstring).
import os, sys, time
if sys.argv[1:] == ["info"]:
    print("stan_version_major = 2\\nstan_version_minor = 35\\nstan_version_patch = 0\\nSTAN_THREADS = false")
    sys.exit(0)
log = os.environ["FAKE_CHAIN_LOG"]
with open(log, "a") as f:
    f.write(f"start {{os.getpid()}} {{time.monotonic()}}\\n")
time.sleep(float(os.environ["FAKE_CHAIN_SECONDS"]))
with open(log, "a") as f:
    f.write(f"end {{os.getpid()}} {{time.monotonic()}}\\n")
sys.exit(1)
"""


def _fake_cmdstan(root: Path) -> tuple[Path, Path]:
    """A stand-in CmdStan folder and model executable under ``root``."""
    home = root / "cmdstan"
    home.mkdir()
    (home / "makefile").write_text("CMDSTAN_VERSION := 2.35.0\n")
    exe = root / "model"
    exe.write_text(FAKE_EXE.format(python=sys.executable))
    exe.chmod(0o700)
    return home, exe


def _naming(folder: Path) -> list[int]:
    """PIDs of live processes with an argument naming a file in ``folder`` (read here from /proc,
    independently of the backend's own search)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(str(folder).encode() + b"/" in a for a in args):
            pids.append(int(entry.name))
    return pids


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


# --------------------------------------------------------------------------- finding chains
def _sleeper(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", *args])


def test_a_fits_chains_are_found_by_their_folder_and_only_they_are_killed(tmp_path):
    fit, other = tmp_path / "fit-a", tmp_path / "fit-a2"  # one folder's name the prefix of the other's
    chains = [_sleeper("data", f"file={fit}/data.json"), _sleeper("output", f"file={fit}/output/x-1.csv")]
    bystanders = [_sleeper(f"file={other}/data.json"), _sleeper(f"file={fit}")]  # the folder itself, no file in it
    try:
        assert _wait_until(lambda: len(_naming(fit)) == 2, 10)
        assert sorted(chain_processes.matching_processes(f"{fit}/", parent=os.getpid())) == sorted(
            p.pid for p in chains
        )
        assert chain_processes.matching_processes(f"{fit}/", parent=1) == []  # not children of init
        assert sorted(cb.kill_fit_chains(fit)) == sorted(p.pid for p in chains)
        assert [p.wait(timeout=10) for p in chains] == [-signal.SIGKILL] * 2
        assert all(p.poll() is None for p in bystanders)
    finally:
        for p in chains + bystanders:
            p.kill()
            p.wait()


_WATCHED_PARENT = r"""
import subprocess, sys, time
from pathlib import Path
from pystanprivacy.sampling.backends import cmdstanpy_backend as cb
from pystanprivacy.sampling.backends.workdirs import workdir_prefix
fit = Path(sys.argv[1]) / (workdir_prefix() + "abc")
other = Path(sys.argv[1]) / "someone-else"
cb._ensure_watchdog()
sleep = [sys.executable, "-c", "import time; time.sleep(120)"]
chain = subprocess.Popen(sleep + [f"file={fit}/data.json"])
bystander = subprocess.Popen(sleep + [f"file={other}/data.json"])
print(cb._WATCHDOG["proc"].pid, chain.pid, bystander.pid, flush=True)
time.sleep(120)
"""


def test_the_watchdog_kills_the_chains_once_their_python_process_is_killed(tmp_path):
    """SIGKILL to the Python process alone: its chains (re-parented, no longer its children)
    die within seconds; a process of the same user that names no folder of that process is
    left alone; Ctrl-C (SIGINT) does not stop the watchdog."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _WATCHED_PARENT, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env
    )
    watchdog = chain = bystander = None
    try:
        watchdog, chain, bystander = map(int, proc.stdout.readline().split())
        assert os.getsid(watchdog) != os.getsid(proc.pid), "a terminal's Ctrl-C does not reach the watchdog"

        def ignores_sigint() -> bool:
            status = Path(f"/proc/{watchdog}/status").read_text()
            mask = int(next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16)
            return bool(mask & (1 << (signal.SIGINT - 1)))

        assert _wait_until(ignores_sigint, 10)
        os.kill(watchdog, signal.SIGINT)
        time.sleep(0.5)
        assert _alive(watchdog) and _alive(chain)
        proc.kill()
        proc.wait(timeout=10)
        assert _wait_until(lambda: not _alive(chain), 5), "the chain outlived its Python process"
        assert _wait_until(lambda: not _alive(watchdog), 5), "the watchdog ends with its work"
        assert _alive(bystander)
    finally:
        proc.kill()
        for pid in (watchdog, chain, bystander):
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


_LATE_CHAIN = r"""
import atexit, subprocess, sys
from pathlib import Path
from pystanprivacy.sampling.backends import cmdstanpy_backend as cb
from pystanprivacy.sampling.backends.workdirs import workdir_prefix
fit = Path(sys.argv[1]) / (workdir_prefix() + "abc")
fit.mkdir()
stop = sys.argv[2] == "stop"


def late_chain():  # registered first, so it runs after the backend's own exit function
    chain = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", f"file={fit}/data.json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    print(cb._WATCHDOG["proc"].pid, chain.pid, flush=True)


atexit.register(late_chain)
cb._ensure_watchdog()
if stop:
    cb.stop_fit(fit)  # a stopped fit: what its queue starts later is the watchdog's to kill
fit.rmdir()
"""


@pytest.mark.parametrize("stopped", [True, False])
def test_a_chain_started_as_the_process_exits_after_a_stop_is_killed(tmp_path, stopped):
    """A process that stopped a fit ends normally, and a chain of that fit starts after the
    backend's exit function ran (as cmdstanpy's worker thread can start a queued chain during
    interpreter shutdown once Ctrl-C interrupted ``Thread.join`` on CPython 3.11): the watchdog
    kills it, then ends. Without a stop, the exit function ends the watchdog at once."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", _LATE_CHAIN, str(tmp_path), "stop" if stopped else "none"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    watchdog, chain = map(int, out.stdout.split())
    try:
        if stopped:
            assert _wait_until(lambda: not _alive(chain), 5), "the late chain outlived its Python process"
            assert _wait_until(lambda: not _alive(watchdog), 5), "the watchdog ends with its work"
        else:
            assert not _alive(watchdog), "ended at exit"
            time.sleep(1.0)
            assert _alive(chain)  # nothing killed it: the case above is the watchdog's work
    finally:
        for pid in (watchdog, chain):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


_FORKING = r"""
import os, time
from pathlib import Path
from pystanprivacy.sampling.backends import cmdstanpy_backend as cb


def cmdline(pid):
    # empty for a moment after Popen returns: the kernel sets a new program's arguments after
    # the close-on-exec pipe that Popen waits on is closed
    deadline = time.monotonic() + 10
    while not (args := Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"))[0] and time.monotonic() < deadline:
        time.sleep(0.01)
    return args


cb._ensure_watchdog()
first = cb._WATCHDOG["proc"]
cb._ensure_watchdog()
same = cb._WATCHDOG["proc"] is first and first.poll() is None
args = cmdline(first.pid)
named = args[-3:-1] == [str(os.getpid()).encode(), (os.sep + cb.workdir_prefix()).encode()]
read, write = os.pipe()
pid = os.fork()
if pid == 0:  # the child: its fits' folders carry its own PID, so it needs its own watchdog
    try:
        cb._ensure_watchdog()
        dog = cb._WATCHDOG["proc"]
        args = cmdline(dog.pid)
        ok = dog is not first and args[-3] == str(os.getpid()).encode()
        os.write(write, f"{dog.pid} {int(ok)}".encode())
        dog.terminate()
        dog.wait()
    except BaseException as exc:
        os.write(write, repr(exc).encode())
    finally:
        os._exit(0)
os.close(write)
reply = os.read(read, 1000).decode()
os.waitpid(pid, 0)
child_dog, ok = map(int, reply.split())
print(same, named, bool(ok), child_dog != first.pid, first.poll() is None)
"""


def test_one_watchdog_per_process_and_a_new_one_after_fork():
    """A process starts one watchdog, named with its PID and its fits' folder prefix; a child
    made by ``fork`` (its fits' folders carry its own PID) starts its own."""
    out = subprocess.run(
        [sys.executable, "-c", _FORKING],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.stdout.split() == ["True"] * 5, (out.stdout, out.stderr[-3000:])


# --------------------------------------------------------------------------- through cmdstanpy
@pytest.fixture
def fake_cmdstan(tmp_path, monkeypatch):
    home, exe = _fake_cmdstan(tmp_path)
    monkeypatch.setenv("CMDSTAN", str(home))
    log = tmp_path / "chains.log"
    monkeypatch.setenv("FAKE_CHAIN_LOG", str(log))
    monkeypatch.delenv(base.PARALLEL_CHAINS_ENV, raising=False)
    yield exe, log
    set_parallel_chains(None)


def _intervals(log: Path) -> list[tuple[float, float]]:
    start, end = {}, {}
    for line in log.read_text().splitlines():
        what, pid, t = line.split()
        (start if what == "start" else end)[pid] = float(t)
    assert set(start) == set(end)
    return [(start[p], end[p]) for p in start]


def _most_at_once(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    running = most = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most


@pytest.mark.parametrize("cap", [1, 2])
def test_cmdstanpy_runs_at_most_the_cap_of_chain_processes_at_once(fake_cmdstan, tmp_path, monkeypatch, cap):
    """A fit of 3 chains with a cap of ``cap`` chains at once (a pool or Dask worker's share of
    the CPUs): cmdstanpy starts a process per chain and never runs more than ``cap`` of them
    at once (checked from the times each one logged)."""
    exe, log = fake_cmdstan
    monkeypatch.setenv("FAKE_CHAIN_SECONDS", "1.0")
    cmdstanpy = cb._cmdstanpy()
    handle = cmdstanpy.CmdStanModel(exe_file=str(exe))
    set_parallel_chains(cap)
    workdir = tmp_path / "fit"
    workdir.mkdir()
    with pytest.raises(RuntimeError, match="Error during sampling"):  # the stand-in chains exit with 1
        cb.CmdStanPyBackend().run(handle, {"N": 1}, SamplerSettings(chains=3, warmup=5, draws=5, seed=1), workdir)
    intervals = _intervals(log)
    assert len(intervals) == 3
    assert _most_at_once(intervals) == cap  # with 1-s chains, the second starts before the first ends


_CHILD = r"""
import json, os, signal, sys
from pathlib import Path

signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (see test_stan_backend)
from pystanprivacy.sampling import stan as pstan
from pystanprivacy.sampling.backends import cmdstanpy_backend as cb

kind, marker, program = sys.argv[1], float(sys.argv[2]), sys.argv[3]
original = cb.CmdStanPyBackend.run


def run(self, handle, data, settings, workdir):
    print("workdir", workdir, flush=True)
    return original(self, handle, data, settings, workdir)


cb.CmdStanPyBackend.run = run
if kind == "fake":  # the real StanModel path, on the stand-in executable
    model = object.__new__(pstan.StanModel)
    model.name, model.backend = program, cb.CmdStanPyBackend()
    model._handle = cb._cmdstanpy().CmdStanModel(exe_file=sys.argv[4])
else:
    model = pstan.StanModel.get(program, backend="cmdstanpy")
model.sample({"mode": 0, "N": 2, "x": [marker, 1.5]}, chains=2, warmup=100, draws=10**7, seed=1)
print("finished", flush=True)
"""


def _start(kind: str, tmp_path: Path, exe: Path | None) -> tuple[subprocess.Popen, Path, list[int]]:
    """A Python process fitting 2 chains, one at a time (the second one queued in cmdstanpy),
    once its first chain runs: the process, the fit's folder and the running chain's PID."""
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    env = {**os.environ, "PYTHONPATH": str(REPO), base.PARALLEL_CHAINS_ENV: "1", "FAKE_CHAIN_SECONDS": "300"}
    args = [
        sys.executable,
        str(script),
        kind,
        repr(float(np.random.default_rng().integers(10_000, 99_999))),
        str(HOSTILE),
    ] + ([str(exe)] if exe else [])
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    line = proc.stdout.readline()
    assert line.startswith("workdir "), proc.stderr.read()[-3000:]
    workdir = Path(line.split()[1])
    assert _wait_until(lambda: len(_naming(workdir)) == 1, 60), "the first chain runs"
    time.sleep(0.5)
    chains = _naming(workdir)
    assert len(chains) == 1, "one chain at a time: the second one waits in cmdstanpy's queue"
    return proc, workdir, chains


def _check_signal_ends_everything(kind: str, tmp_path: Path, exe: Path | None, signame: str) -> None:
    sig = getattr(signal, signame)
    proc, workdir, chains = _start(kind, tmp_path, exe)
    try:
        os.kill(proc.pid, sig)  # the Python process alone, not its group
        try:
            rc = proc.wait(timeout=15)  # a chain here runs for minutes
        except subprocess.TimeoutExpired:
            pytest.fail(f"the process did not end within 15 s of {signame}; chains still running: {_naming(workdir)}")
        assert _wait_until(lambda: not _naming(workdir), 5), f"chains outlived the fit: {_naming(workdir)}"
        assert not any(_alive(c) for c in chains)
        stderr = proc.stderr.read()
        assert rc == -sig, stderr[-3000:]
        if sig != signal.SIGKILL:
            assert not workdir.exists(), "the private folder is removed before the process ends"
            assert "error: code" not in stderr, stderr[-3000:]  # cmdstanpy's line for each killed chain
        time.sleep(1.0)  # the queued second chain never starts (or is killed at once)
        assert _naming(workdir) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        for pid in _naming(workdir):
            os.kill(pid, signal.SIGKILL)
    pstan.remove_stale_workdirs()  # after SIGKILL, the next fit's cleanup removes the folder
    assert not workdir.exists()


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_chains_die_with_the_fit_on_a_stand_in_cmdstan(fake_cmdstan, tmp_path, signame):
    """Ctrl-C or SIGTERM to the Python process alone stops the fit at once (not when its chain
    ends) and kills its chain; the chain waiting in cmdstanpy's queue never samples; after
    SIGKILL the watchdog kills the chain."""
    exe, _ = fake_cmdstan  # CMDSTAN and the chains' log are set in the environment the child gets
    _check_signal_ends_everything("fake", tmp_path, exe, signame)


@needs_cmdstan
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_chains_die_with_the_fit_on_cmdstan(tmp_path, signame):
    """The same on a real CmdStan model (a normal posterior sampled for 10**7 draws)."""
    pstan.StanModel.get(str(HOSTILE), backend="cmdstanpy")  # compiled here, once, not in the child
    _check_signal_ends_everything("cmdstan", tmp_path, None, signame)


class _Alarm(Exception):
    pass


def _exception_kills_the_chains(handle, workdir: Path, data: dict) -> None:
    """An exception raised out of ``CmdStanModel.sample`` while a chain samples and a second one
    waits in cmdstanpy's queue (here from a SIGALRM handler in the thread waiting for the
    chains; no handler of pystanprivacy is installed, as in ``backend.run`` called directly): the
    running chain is killed before the exception leaves the backend, and the queued one, which
    cmdstanpy starts once the first has ended, is killed at once while the fit's folder exists."""

    def alarm(signum, frame):
        raise _Alarm

    previous = signal.signal(signal.SIGALRM, alarm)
    set_parallel_chains(1)
    try:
        signal.setitimer(signal.ITIMER_REAL, 3.0)
        with pytest.raises(_Alarm):
            cb.CmdStanPyBackend().run(handle, data, SamplerSettings(chains=2, warmup=100, draws=10**7, seed=1), workdir)
        first_seen: dict[int, float] = {}
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:  # the folder still exists: the queue may start chain 2
            now = time.monotonic()
            for pid in _naming(workdir):
                first_seen.setdefault(pid, now)
                assert now - first_seen[pid] < 0.5, "a chain of the failed fit lived on"
            time.sleep(0.005)
        assert _naming(workdir) == []
        # cmdstanpy opened chain 2's console file, then started it (and the reaper killed it)
        assert len(list((workdir / "output").glob("*-stdout.txt"))) == 2
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        set_parallel_chains(None)
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)
    time.sleep(cb.REAP_LINGER_S + 0.5)
    assert _naming(workdir) == []


def test_an_exception_kills_the_chains_on_a_stand_in_cmdstan(fake_cmdstan, tmp_path, monkeypatch):
    exe, log = fake_cmdstan
    monkeypatch.setenv("FAKE_CHAIN_SECONDS", "300")
    workdir = tmp_path / "fit"
    workdir.mkdir()
    _exception_kills_the_chains(cb._cmdstanpy().CmdStanModel(exe_file=str(exe)), workdir, {"N": 1})
    assert "end" not in log.read_text(), "no chain ran to its end"


@needs_cmdstan
def test_an_exception_kills_the_chains_on_cmdstan(tmp_path):
    model = pstan.StanModel.get(str(HOSTILE), backend="cmdstanpy")
    workdir = tmp_path / "fit"
    workdir.mkdir()
    _exception_kills_the_chains(model._handle, workdir, {"mode": 0, "N": 2, "x": [1.0, 1.5]})
