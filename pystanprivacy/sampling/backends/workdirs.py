"""Private (0700) working folders of fits, named so that a later process can tell whether
their owner still runs, and removed when it does not.

A fit's folder is ``$TMPDIR/pystanprivacy-fit-<host hash>-<pid>-<process start time>-<random>``.
It holds what a backend writes during the fit (data file, sockets, draws) and is removed when
the fit ends. A process killed by a signal it cannot handle (SIGKILL, the out-of-memory killer)
leaves its folder behind; :func:`remove_stale_workdirs`, run before every fit, removes the
folders of this user's processes on this host that are gone.

cmdstanpy makes a temporary folder of its own when it is first imported (``cmdstanpy._TMPDIR``,
removed by an ``atexit`` hook, so a killed process leaves it behind): :func:`import_cmdstanpy`
imports it with that folder inside a per-process folder of the same naming scheme, so that it
too is removed once its process is gone.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

WORKDIR_PREFIX = "pystanprivacy-fit-"
#: the first part of a model build's staging folder in the model cache
STAGING_PREFIX = "staging-"
_IMPORT_LOCK = threading.Lock()
#: private folders this process made outside a fit (cmdstanpy's), removed at exit
_OWN_FOLDERS: list[str] = []
#: how often (seconds) a worker process checks that its parent still runs
PARENT_WATCH_PERIOD = 0.2


def _host_token() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _process_start(pid: int) -> str:
    """Start time of process ``pid`` in clock ticks since boot (Linux ``/proc``), or ``"0"``
    where unknown; together with the PID it names a process even after PID reuse."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "0"
    return stat.rsplit(")", 1)[1].split()[19]


def workdir_prefix(kind: str = WORKDIR_PREFIX) -> str:
    """The name prefix of this process's private folders of a ``kind`` (fit folders by default;
    :data:`STAGING_PREFIX` for builds): ``<kind><host>-<pid>-<start time>-`` (the random part
    follows)."""
    pid = os.getpid()
    return f"{kind}{_host_token()}-{pid}-{_process_start(pid)}-"


def staging_folder(parent: str | Path) -> Path:
    """A new private (0700) build folder in ``parent`` (a model cache), named as fit folders are
    (``staging-<host>-<pid>-<start time>-<random>``), after removing the build folders in
    ``parent`` whose process is gone: a build killed with SIGKILL leaves its folder behind (up to
    1 GB for the precompiled Stan header)."""
    remove_stale_workdirs(parent, kind=STAGING_PREFIX)
    return Path(tempfile.mkdtemp(prefix=workdir_prefix(STAGING_PREFIX), dir=parent))


def _owner_alive(pid: int, start: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user has this PID
        return True
    except OSError:
        return True
    return start == "0" or _process_start(pid) in ("0", start)


def remove_stale_workdirs(tmpdir: str | Path | None = None, *, kind: str = WORKDIR_PREFIX) -> list[Path]:
    """Remove fit directories left in the temporary directory by processes of this user
    on this host that no longer run (killed with SIGKILL, out of memory, power loss).

    A fit directory is named ``pystanprivacy-fit-<host>-<pid>-<start time>-<random>``;
    it is removed when it belongs to the current user, was made on this host and its
    process (PID and start time) is gone. ``kind`` is the name's first part
    (:data:`STAGING_PREFIX`: the build folders of a model cache ``tmpdir``). Returns the
    removed directories.
    """
    root = Path(tmpdir if tmpdir is not None else tempfile.gettempdir())
    host = _host_token()
    removed: list[Path] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        if not entry.name.startswith(kind):
            continue
        parts = entry.name[len(kind) :].split("-")
        if len(parts) != 4 or parts[0] != host or not parts[1].isdigit():
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not entry.is_dir(follow_symlinks=False) or (uid is not None and info.st_uid != uid):
            continue
        if _owner_alive(int(parts[1]), parts[2]):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed


def import_cmdstanpy() -> ModuleType:
    """``import cmdstanpy``, with the temporary folder it makes at import time placed inside
    a private per-process folder ``pystanprivacy-fit-<host>-<pid>-<start>-cmdstanpy<random>``
    (removed at exit, or by the next fit once this process is gone). A cmdstanpy that was
    imported before (by the caller) is returned as it is."""
    with _IMPORT_LOCK:
        if "cmdstanpy" in sys.modules:
            return sys.modules["cmdstanpy"]
        folder = tempfile.mkdtemp(prefix=workdir_prefix() + "cmdstanpy")  # 0700
        saved = tempfile.tempdir
        tempfile.tempdir = folder
        try:
            import cmdstanpy
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        finally:
            tempfile.tempdir = saved
        _OWN_FOLDERS.append(folder)
        # registered after cmdstanpy's own hook, so it runs first (atexit is LIFO)
        atexit.register(remove_own_folders)
        return cmdstanpy


def remove_own_folders() -> None:
    """Remove the private folders this process made outside its fits (at exit, or before it
    ends by a signal)."""
    while _OWN_FOLDERS:
        shutil.rmtree(_OWN_FOLDERS.pop(), ignore_errors=True)


def watch_parent(parent: int, on_orphan: Callable[[], None]) -> threading.Thread:
    """Start a daemon thread that calls ``on_orphan()`` once process ``parent`` is no longer
    this process's parent (it died, by any signal, and this process was re-parented).

    Worker processes that hold private data (httpstan's chain processes, the runner's pool
    workers) use it so that they do not run on after the process that started them was
    killed. It needs the GIL now and then: Stan's samplers release it while they run."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_WATCH_PERIOD)
        on_orphan()

    thread = threading.Thread(target=watch, name="pystanprivacy-parent-watch", daemon=True)
    thread.start()
    return thread


__all__ = [
    "WORKDIR_PREFIX",
    "workdir_prefix",
    "remove_stale_workdirs",
    "import_cmdstanpy",
    "remove_own_folders",
    "watch_parent",
]
