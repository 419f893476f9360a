"""Find and kill the CmdStan chain processes of a fit, and a watchdog that kills them once the
Python process that started them is gone (Linux ``/proc``).

cmdstanpy starts every chain with ``subprocess.Popen`` in threads of its own and hands no
handle on them to its caller. A chain is recognised instead by what its command line must hold:
CmdStan reads its data from, and writes its draws into, the fit's private folder (the
``data file=...`` and ``output file=...`` arguments), whose name is unique to the fit and starts
with its process's :func:`~pystanprivacy.sampling.backends.workdirs.workdir_prefix` (host, PID
and start time of that process). Only processes of this user are looked at.

This module imports only the standard library and runs as a script too, so that the watchdog
is a small interpreter (``python -I -S chain_processes.py <parent pid> <needle>``) that loads
neither pystanprivacy nor numpy: it waits until ``<parent pid>`` is no longer its parent (the
parent died, by any signal, SIGKILL included, and the watchdog was re-parented) and then kills
every process of this user whose command line holds ``<needle>``. The watchdog runs in a session
of its own (so Ctrl-C in a terminal, SIGINT to the foreground process group, does not reach it)
and ignores SIGINT.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

#: seconds between two checks of the watchdog that its parent still runs
WATCH_PERIOD = 0.2
#: how often the watchdog scans for chains after its parent died (a chain being started at that
#: moment, forked but not yet running CmdStan, shows its command line a moment later): for one
#: second, so that a chain forked as the parent exits (by a thread the interpreter no longer waits
#: for, see ``cmdstanpy_backend._stop_watchdog``) is seen on a loaded machine too
FINAL_SCANS, FINAL_SCAN_GAP = 20, 0.05
_PROC = "/proc"


def supported() -> bool:
    """Whether processes can be found here (Linux ``/proc``)."""
    return os.path.isfile(f"{_PROC}/self/cmdline") and hasattr(os, "getuid")


def _cmdline(pid: int) -> list[str]:
    with open(f"{_PROC}/{pid}/cmdline", "rb") as f:
        return [a.decode("utf-8", "surrogateescape") for a in f.read().split(b"\0") if a]


def _parent_of(pid: int) -> int:
    with open(f"{_PROC}/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[1])


def _matches(pid: int, needle: str, parent: int | None) -> bool:
    try:
        if os.stat(f"{_PROC}/{pid}").st_uid != os.getuid():
            return False
        if parent is not None and _parent_of(pid) != parent:
            return False
        return any(needle in arg for arg in _cmdline(pid))
    except (OSError, ValueError, IndexError):  # gone meanwhile, or not readable
        return False


def matching_processes(needle: str, *, parent: int | None = None) -> list[int]:
    """PIDs of this user's processes, other than this one, with a command-line argument that
    holds ``needle``, and (when ``parent`` is given) whose parent process is ``parent``.

    A process being started is not seen until it runs its program: between ``fork`` and
    ``exec`` it shows its parent's command line, and for a moment after ``exec`` (after
    ``subprocess.Popen`` has returned) an empty one. Callers scan again: the reaper of a stopped
    fit every 10 ms, the watchdog :data:`FINAL_SCANS` times."""
    if not needle:
        raise ValueError("needle must be a non-empty string")
    own = os.getpid()
    try:
        entries = os.listdir(_PROC)
    except OSError:
        return []
    return [int(e) for e in entries if e.isdigit() and int(e) != own and _matches(int(e), needle, parent)]


def kill_matching(needle: str, *, parent: int | None = None) -> list[int]:
    """SIGKILL every process of :func:`matching_processes`; returns the PIDs signalled.

    Where ``os.pidfd_open`` exists (Linux >= 5.3), each process is signalled through a pidfd
    after its command line was read again, so a PID reused by another process between the scan
    and the kill is never signalled."""
    killed = []
    for pid in matching_processes(needle, parent=parent):
        fd = None
        with contextlib.suppress(OSError, AttributeError):
            fd = os.pidfd_open(pid)
        try:
            if fd is not None:
                if not _matches(pid, needle, parent):  # the pidfd names the process that matched
                    continue
                signal.pidfd_send_signal(fd, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except (ProcessLookupError, PermissionError):
            pass
        finally:
            if fd is not None:
                os.close(fd)
    return killed


def watch(parent: int, needle: str) -> list[int]:
    """Wait until ``parent`` is no longer this process's parent, then kill the processes of this
    user whose command line holds ``needle`` (:func:`kill_matching`); returns their PIDs."""
    with contextlib.suppress(ValueError):  # not the main thread (only when called in-process)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    while os.getppid() == parent:
        time.sleep(WATCH_PERIOD)
    killed: list[int] = []
    for _ in range(FINAL_SCANS):
        killed += kill_matching(needle)
        time.sleep(FINAL_SCAN_GAP)
    return killed


if __name__ == "__main__":  # the watchdog: python -I -S chain_processes.py <parent pid> <needle>
    watch(int(sys.argv[1]), sys.argv[2])
