"""pystan 3 backend (httpstan compiles offline with the system C++ compiler).

A fit does not go through pystan's ``Model.sample`` and httpstan's HTTP API: :meth:`PystanBackend.run`
calls the model's compiled ``stan::services`` wrapper (the function httpstan's
``services_stub.call`` calls) in a chain pool of this module's own, kept from fit to fit, and
reads the chains' messages itself (:func:`_sample`), with the same arguments, seeds and therefore
the same draws, bit for bit (``tests/sampling/test_pystan_fast_path.py``). pystan's way cost
about 0.14 s per fit, most of it waiting (an HTTP server started and stopped to build and
another to sample, three requests to build and two or more per chain to sample, a 50 ms poll
for finished chains, the draws gzipped to a fit file, read back and parsed from JSON line by
line); now a warm 1-chain x 1-draw fit takes about 5-15 ms (``benchmarks/bench_fixed_cost.py``). :meth:`PystanBackend.log_density`
still goes through pystan's API (see below).

Several things pystan and httpstan do by default are not acceptable for private data, and this
module changes them without touching pystan's public API:

* httpstan keeps compiled models *and fits* under ``~/.cache/httpstan``; with a random seed
  it keeps every fit (the draws) there for good, world-readable. Here compiled models go to
  pystanprivacy's own cache directory; a fit keeps its draws in memory only, and a pystan call
  (log densities) writes its fit files into the private working directory of the call, which
  the caller deletes when it ends.
* Stan's messages are captured, never printed. Stan's C++ code writes ``print`` output of the
  transformed data block straight to the process's standard output (file descriptor 1, which
  ``contextlib.redirect_stdout`` cannot catch): file descriptors 1 and 2 point at ``os.devnull``
  while a model is built or evaluated in this process, and for good in the chain processes, so
  that no data value printed by Stan reaches a terminal or a log file.
* Each chain sends its messages (the draws) through a Unix socket, which httpstan makes in the
  system temporary directory and leaves there; here it is made inside the fit's private socket
  folder. A Unix socket's path has at most :data:`MAX_SOCKET_PATH` bytes: where ``TMPDIR`` is
  too long a path for the sockets (more than about 35 bytes), they go to a second private folder
  in ``$XDG_RUNTIME_DIR`` or ``/tmp`` (:func:`socket_root`), and where no folder is short enough
  the fit is refused before it starts (:meth:`PystanBackend.preflight`).
* pystan serves httpstan's HTTP API on a TCP port of 127.0.0.1 while it builds and samples,
  where every local user can connect to it (read the models, start fits, delete compiled
  models). A fit here serves no API at all; a pystan call (log densities) serves it on a Unix
  socket inside the call's private 0700 directory (:class:`_PrivateServerClient`), so no other
  user can reach it, and no TCP port is opened.
* httpstan runs the chains in a pool of forked processes that outlive a killed parent. Here
  every chain process watches its parent and ends when it is gone
  (:func:`_chain_process_init`), and the pool is killed when a fit is interrupted or fails, so
  no process holding the data keeps running after the fit.

More changes make the model cache robust and a compile independent of the working directory:

* httpstan names a compiled model by a hash that includes ``sys.executable``, so
  ``python``, ``python3`` and a venv's ``pytest`` launcher compiled the same program
  separately. Here the executable is resolved to the interpreter it links to, and the
  name also hashes where httpstan is installed: a compiled module finds httpstan's
  ``libtbb.so.2`` through an absolute run path into that installation, so venvs sharing one
  interpreter must not share a module (once the venv that built it is deleted, it no longer
  loads in the others: ``ImportError: libtbb.so.2``).
* A model is built in a staging folder and moved into the cache in one rename, so a build
  that is interrupted (killed, out of memory) never leaves a half-built model behind, and
  compiling no longer goes through httpstan's HTTP client (whose 300 s timeout a slow
  compile on a loaded machine could hit).
* setuptools builds an extension module in ``./build/temp.<platform>`` of the working
  directory (a 40-70 MB object file per model, left there) and reads the working directory's
  ``setup.cfg``: here it builds in the model's private staging folder in the cache, the
  compiler's temporary files included, which is removed when the compile ends
  (:func:`_run_build_ext`), so a compile writes nothing into the working directory.
* httpstan runs ``stanc`` (Stan to C++) with a 1 s timeout (``httpstan.compile.compile``), which
  a loaded machine exceeds (a ``reproduce`` run under ``nice -n 19`` beside two C++ compiles
  failed on it): :func:`stanc` runs the same command with :data:`STANC_TIMEOUT_S`.
* Models (and their precompiled header) are compiled with ``-g0`` appended
  (:data:`MODEL_COMPILE_FLAGS`): no debug information, which ``sysconfig``'s ``-g`` asked for;
  the same draws, about 45 % less compiler CPU time and a 29 MB instead of a 46 MB module
  (``benchmarks/bench_pch.py --variant g0``). The model cache key is unchanged: a model built
  with ``-g`` runs the same code.
* They are optimised with ``-O2`` (appended after httpstan's ``-O3``, so it wins): about 14 %
  less compiler CPU time for a model's own code, the same draws bit for bit and the same time
  per gradient (``benchmarks/bench_compile_flags.py --variants O3,O2``). GCC keeps IEEE
  semantics at every ``-O`` level (no ``-ffast-math``): ``-O3``'s extra passes (more
  vectorisation, loop unswitching, cloning) do not reorder floating-point arithmetic. The
  model cache key is unchanged, for the same reason as ``-g0``'s.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import errno
import hashlib
import io
import logging
import os
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Self

import numpy as np

from . import pch
from .base import SAMPLER_COLUMNS, Backend, RawFit, SamplerSettings, chain_process_cap, reshape_column_major
from .workdirs import remove_stale_workdirs, staging_folder, watch_parent, workdir_prefix

# httpstan serves one event loop per call and its fit files are addressed through a
# module-level function, so runs in one process are serialised.
_RUN_LOCK = threading.RLock()
_STATE: dict[str, Path | None] = {"cache_root": None, "fit_dir": None, "socket_dir": None}
#: the chain pool this module made: the executor, its size and the process that made it
_CHAIN_POOL: dict[str, Any] = {"executor": None, "size": None, "pid": None}
#: seconds :func:`_kill_chain_pool` waits for the killed pool's manager thread to end
MANAGER_JOIN_TIMEOUT_S = 10.0
#: the name of the API socket inside the fit's private directory
SERVER_SOCKET = "api.sock"
#: seconds ``stanc`` may take to translate one program (httpstan allows 1 s)
STANC_TIMEOUT_S = 600.0
#: the flags appended last to each model's C++ compile (and so to its precompiled header's):
#: ``-g0`` drops the debug information that Python's ``sysconfig`` flags (``-g``) ask for, which
#: changes no generated code (``benchmarks/bench_pch.py --variant g0``); ``-O2`` replaces
#: httpstan's ``-O3``: less compiler time, the same draws (module docstring)
MODEL_COMPILE_FLAGS: tuple[str, ...] = ("-g0", "-O2")
#: the longest path of a Unix socket in bytes: ``sockaddr_un.sun_path`` holds 108 bytes on Linux
#: (104 on macOS and the BSDs), the last one the closing NUL; Python refuses a longer path
#: (``OSError: AF_UNIX path too long``)
MAX_SOCKET_PATH = (104 if sys.platform == "darwin" or "bsd" in sys.platform else 108) - 1
#: the socket httpstan makes for every run: ``tempfile.mkstemp(prefix="httpstan_", suffix=".sock")``
#: in ``httpstan.services_stub.call``; ``tempfile`` puts 8 random characters between
HTTPSTAN_SOCKET_PREFIX, HTTPSTAN_SOCKET_SUFFIX = "httpstan_", ".sock"
_RANDOM_NAME_LEN = 8  # the random part of a ``tempfile.mkstemp`` / ``mkdtemp`` name
#: bytes of the longest socket name of a fit (httpstan's: 22; the API's ``api.sock``: 8)
LONGEST_SOCKET_NAME = max(
    len(SERVER_SOCKET), len(HTTPSTAN_SOCKET_PREFIX) + _RANDOM_NAME_LEN + len(HTTPSTAN_SOCKET_SUFFIX)
)
#: short folders for a fit's sockets when the temporary directory is too long a path (after
#: ``$XDG_RUNTIME_DIR``, where it is this user's private folder): see :func:`socket_root`
FALLBACK_SOCKET_ROOTS: tuple[str, ...] = ("/tmp",)


def _import_pystan() -> Any:
    """Pystan's ``stan`` package, imported without the ``UserWarning`` that setuptools 67 to 80 print
    when ``stan/plugins.py`` imports ``pkg_resources`` ("pkg_resources is deprecated as an API"):
    a user cannot act on it (``setuptools<81`` is pinned because pystan needs ``pkg_resources``),
    and it would be the first line of every program's stderr. Only that warning, only during the
    import; a later ``import stan`` is a lookup in ``sys.modules``."""
    if "stan" not in sys.modules:
        import warnings

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="pkg_resources is deprecated as an API", category=UserWarning)
            import stan  # noqa: F401
    return sys.modules["stan"]


def _stanc_binary() -> Path:
    """The ``stanc`` that httpstan ships (and ``httpstan.compile.compile`` runs)."""
    import httpstan

    return Path(httpstan.__file__).parent / "stanc"


def stanc(program_code: str, stan_model_name: str) -> tuple[str, str]:
    """``httpstan.compile.compile`` with a timeout of :data:`STANC_TIMEOUT_S` instead of 1 s:
    the same ``stanc`` binary and arguments; returns ``(C++ code, stanc warnings)`` and raises
    ``ValueError`` with stanc's message for a program that does not compile."""
    import subprocess

    with tempfile.TemporaryDirectory(prefix="httpstan_") as tmpdir:
        filepath = Path(tmpdir) / f"{stan_model_name}.stan"
        filepath.write_text(program_code)
        args = [str(_stanc_binary()), "--name", stan_model_name, "--warn-pedantic", "--print-cpp", str(filepath)]
        try:
            done = subprocess.run(args, capture_output=True, timeout=STANC_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise RuntimeError(
                f"stanc did not translate model {stan_model_name} within STANC_TIMEOUT_S={STANC_TIMEOUT_S} s"
            ) from None
    stderr = done.stderr.decode().strip()
    if done.returncode != 0:
        raise ValueError(stderr)
    return done.stdout.decode().strip(), stderr


@contextlib.contextmanager
def _patient_stanc() -> Iterator[None]:
    """Route httpstan's own ``stanc`` calls (``build_services_extension_module`` makes one)
    through :func:`stanc` while a model is built; callers hold ``_RUN_LOCK``."""
    import httpstan.compile

    original = httpstan.compile.compile
    httpstan.compile.compile = stanc
    try:
        yield
    finally:
        httpstan.compile.compile = original


def _run_build_ext(extensions: list, build_lib: str, *, build_temp: Path, pch_root: Path | None = None) -> str:
    """``httpstan.build_ext.run_build_ext`` (setuptools' ``build_ext`` of the model's extension
    module into ``build_lib``, returning what the compiler wrote to stderr), made independent of
    the working directory:

    * the object files go to ``build_temp`` (setuptools' default is ``./build/temp.<platform>``
      in the working directory: a 40-70 MB object file per model);
    * the compiler's own temporary files go there too (``TMPDIR`` of the compiler processes);
    * a ``setup.cfg`` in the working directory is not read (its ``[build]`` section, e.g.
      ``build_base`` or ``compiler``, would change where and how the model is built, while the
      module is cached for every directory); the system's and the user's distutils
      configuration still are, as httpstan reads them.

    ``build_temp`` is an empty private folder that the caller removes. With ``pch_root`` (a private
    folder of the model cache), the model's C++ is compiled against a precompiled Stan header kept
    there (:func:`pch.with_precompiled_header`), built on the first compile that needs it.
    """
    import setuptools
    from setuptools.command.build_ext import build_ext

    compiler_env = {**os.environ, "TMPDIR": str(build_temp)}

    class _PrivateBuildExt(build_ext):
        def build_extensions(self) -> None:
            spawn = self.compiler.spawn

            def private_spawn(cmd: list, **kwargs: Any) -> Any:
                if pch._model_compile(cmd) is not None:
                    cmd = [*cmd, *MODEL_COMPILE_FLAGS]
                if pch_root is not None:
                    cmd = pch.with_precompiled_header(cmd, root=pch_root, env=compiler_env)
                return spawn(cmd, **{**kwargs, "env": compiler_env})

            self.compiler.spawn = private_spawn
            super().build_extensions()

    dist = setuptools.Distribution()
    # find_config_files names the working directory's setup.cfg by a relative path
    dist.parse_config_files([f for f in dist.find_config_files() if os.path.isabs(f)])
    command = _PrivateBuildExt(dist)
    command.build_lib, command.build_temp = build_lib, str(build_temp)
    command.finalize_options()  # keeps build_lib and build_temp (set_undefined_options)
    for extension in extensions:
        extension._needs_stub = False  # as httpstan does (setuptools' stub loader is not wanted)
    command.extensions = extensions
    with tempfile.TemporaryFile(dir=build_temp) as stream:  # the compiler's stderr
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        try:
            saved: int | None = os.dup(2)
        except OSError:  # descriptor 2 is closed
            saved = None
        os.dup2(stream.fileno(), 2)
        try:
            command.run()
        finally:
            if saved is None:
                os.close(2)
            else:
                os.dup2(saved, 2)
                os.close(saved)
            stream.seek(0)
            output = stream.read().decode(errors="replace")
    return output


@contextlib.contextmanager
def _private_build(build_temp: Path, pch_root: Path | None = None) -> Iterator[None]:
    """Route httpstan's build of an extension module (``build_services_extension_module``) through
    :func:`_run_build_ext` in ``build_temp`` (against the precompiled header in ``pch_root``, if
    given) and its ``stanc`` calls through :func:`stanc`; callers hold ``_RUN_LOCK``."""
    import functools

    import httpstan.build_ext

    original = httpstan.build_ext.run_build_ext
    httpstan.build_ext.run_build_ext = functools.partial(_run_build_ext, build_temp=build_temp, pch_root=pch_root)
    try:
        with _patient_stanc():
            yield
    finally:
        httpstan.build_ext.run_build_ext = original


def model_name(program_code: str) -> str:
    """httpstan's model name (``models/<id>``) for ``program_code``: the hash of
    ``httpstan.models.calculate_model_name`` with the Python executable resolved to the
    interpreter it runs (a venv's ``python`` and ``python3`` are the same interpreter) and
    httpstan's installation folder, whose ``lib`` the compiled module's run path names."""
    import httpstan

    digest = hashlib.blake2b(digest_size=5)
    for part in (
        program_code,
        httpstan.__version__,
        sys.platform,
        str(sys.maxsize),
        sys.version,
        os.path.realpath(sys.executable),
        os.path.realpath(os.path.dirname(httpstan.__file__)),
    ):
        digest.update(part.encode())
    return "models/" + base64.b32encode(digest.digest()).decode().lower()


@contextlib.contextmanager
def _silenced_fds() -> Any:
    """Point file descriptors 1 and 2 at ``os.devnull`` (Stan's C++ code prints data values
    of ``print`` statements there), restoring them afterwards."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = []
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            try:
                saved.append((fd, os.dup(fd)))
            except OSError:  # the descriptor is closed: nothing to protect
                continue
            os.dup2(devnull, fd)
        yield
    finally:
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)
        os.close(devnull)


def _has_module(model_dir: Path) -> bool:
    from importlib.machinery import EXTENSION_SUFFIXES

    try:
        return any(p.name.endswith(tuple(EXTENSION_SUFFIXES)) for p in model_dir.iterdir())
    except FileNotFoundError:
        return False


def _install_cache_redirect(cache_root: Path) -> None:
    """Point httpstan's model cache at ``cache_root``, its fit files at the current fit's
    private directory and its model naming at :func:`model_name` (see module docstring)."""
    import httpstan.cache
    import httpstan.models

    _STATE["cache_root"] = cache_root
    if getattr(httpstan.cache, "_pystanprivacy_patched", False):
        return

    def cache_directory() -> Path:
        root = _STATE["cache_root"]
        assert root is not None
        return root

    def fit_path(fit_name: str) -> Path:
        fit_dir = _STATE["fit_dir"]
        if fit_dir is None:
            raise RuntimeError(
                "httpstan tried to write a fit outside a pystanprivacy fit; refusing to write draws to a shared cache"
            )
        return Path(fit_dir) / (fit_name.rsplit("/", maxsplit=1)[1] + ".jsonlines.gz")

    httpstan.cache.cache_directory = cache_directory
    httpstan.cache.fit_path = fit_path
    httpstan.models.calculate_model_name = model_name  # looked up as a module attribute everywhere
    httpstan.cache._pystanprivacy_patched = True


def _chain_process_init(parent: int) -> None:
    """Initializer of a chain process: httpstan's own (ignore SIGINT), and a watch that ends
    the process as soon as its parent ``parent`` is gone (killed with SIGKILL or SIGTERM),
    instead of letting it sample on with the data until its run ends. Its file descriptors 1
    and 2 point at ``os.devnull`` for good: Stan's C++ code prints data values of ``print``
    statements there."""
    import httpstan.services_stub as stub

    stub.init_worker()
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    watch_parent(parent, lambda: os._exit(1))  # nothing of this process is worth finishing


def _own_chain_pool() -> Any:
    """httpstan's chain pool if this process made it (:func:`_ensure_chain_pool`), else
    ``None``: httpstan's own pool, or one inherited through ``fork`` from the parent."""
    import httpstan.services_stub as stub

    pool = stub.executor
    return pool if pool is _CHAIN_POOL["executor"] and _CHAIN_POOL["pid"] == os.getpid() else None


def _ensure_chain_pool(size: int) -> None:
    """Give httpstan a chain process pool of ``size`` processes whose processes die with this
    one (:func:`_chain_process_init`); httpstan runs every chain of a fit in a module-level
    ``fork`` pool. Called with ``_RUN_LOCK`` held, before a run, so no chain of this process
    is running on a pool being replaced. A pool inherited through ``fork`` (its processes are
    the parent's children) or broken is replaced too."""
    import concurrent.futures
    import multiprocessing as mp

    import httpstan.services_stub as stub

    pid = os.getpid()
    old, own = stub.executor, _own_chain_pool()
    if own is not None and _CHAIN_POOL["size"] == size and not getattr(own, "_broken", False):
        return
    stub.executor = concurrent.futures.ProcessPoolExecutor(
        max_workers=size,
        mp_context=mp.get_context("fork"),
        initializer=_chain_process_init,
        initargs=(pid,),
    )
    atexit.unregister(_drop_chain_pool)  # registered once
    atexit.register(_drop_chain_pool)
    inherited = old is _CHAIN_POOL["executor"] and own is None  # the parent's: not ours to shut down
    _CHAIN_POOL.update(executor=stub.executor, size=size, pid=pid)
    if old is not None and not inherited:
        old.shutdown(wait=True)


def _drop_chain_pool() -> None:
    """At exit: shut the pool down while the modules it uses still exist (an executor that is
    garbage-collected during interpreter teardown prints an error)."""
    import httpstan.services_stub as stub

    pool = _own_chain_pool()
    if pool is not None:
        with contextlib.suppress(Exception):
            pool.shutdown(wait=True, cancel_futures=True)
        if stub.executor is pool:
            stub.executor = None
    _CHAIN_POOL.update(executor=None, size=None, pid=None)


class _KilledPoolNoise(logging.Filter):
    """Drop asyncio's "Future exception was never retrieved" record for the futures of chains
    that :func:`_kill_chain_pool` killed (httpstan's, collected after its loop closed): an
    interrupted fit is reported by its own exception; every other record passes.

    It imports nothing when called: those futures are often collected while the interpreter
    shuts down (after Ctrl-C), when an import fails (``ImportError: sys.meta_path is None``,
    printed as ``Exception ignored in ...``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (
            isinstance(exc, BrokenProcessPool) and str(record.msg).startswith("Future exception was never retrieved")
        )


_KILLED_POOL_NOISE = _KilledPoolNoise()


def _kill_chain_pool() -> None:
    """Kill the chain processes of this process's pool (a fit was interrupted or failed: they
    may still be sampling it, with the data) and drop the pool; the next fit makes a new one."""

    pool = _own_chain_pool()
    if pool is None:
        return  # httpstan's own pool, never used by this module, or a pool of the parent process
    asyncio_logger = logging.getLogger("asyncio")
    if _KILLED_POOL_NOISE not in asyncio_logger.filters:
        asyncio_logger.addFilter(_KILLED_POOL_NOISE)
    # taken before shutdown(), which drops the executor's reference to it
    manager = getattr(pool, "_executor_manager_thread", None)
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            proc.kill()
    with contextlib.suppress(Exception):
        pool.shutdown(wait=False, cancel_futures=True)
    # The pool's manager thread sees the killed processes, closes its wakeup pipe and ends. Wait
    # for it (briefly): at interpreter exit, concurrent.futures' atexit hook writes to that pipe
    # unless it is already closed, and on CPython 3.11 a close that races with the write prints
    # "Exception ignored in: <module 'threading'> ... OSError: [Errno 9] Bad file descriptor"
    # after a Ctrl-C (the hook checks ``_closed`` without a lock).
    if manager is not None and manager is not threading.current_thread():
        manager.join(timeout=MANAGER_JOIN_TIMEOUT_S)
    _CHAIN_POOL.update(executor=None, size=None, pid=None)


def _socket_path_bytes(root: str, folder_prefix: str) -> int:
    """Bytes of the longest socket path of a fit whose sockets are in a folder
    ``tempfile.mkdtemp(prefix=folder_prefix, dir=root)``."""
    folder = len(os.fsencode(root)) + 1 + len(os.fsencode(folder_prefix)) + _RANDOM_NAME_LEN
    return folder + 1 + LONGEST_SOCKET_NAME


def _short_socket_roots() -> list[str]:
    """Folders for a fit's sockets when the temporary directory is too long a path:
    ``$XDG_RUNTIME_DIR`` where it is this user's private (0700) folder, as the XDG Base
    Directory specification makes it (the place meant for a user's sockets), then those of
    :data:`FALLBACK_SOCKET_ROOTS` that are folders this process can write in."""
    roots = []
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        try:
            info = os.stat(runtime)
        except OSError:
            info = None
        if (
            info is not None
            and stat.S_ISDIR(info.st_mode)
            and info.st_uid == os.getuid()
            and stat.S_IMODE(info.st_mode) & 0o077 == 0
        ):
            roots.append(runtime)
    roots += [r for r in FALLBACK_SOCKET_ROOTS if os.path.isdir(r) and os.access(r, os.W_OK | os.X_OK)]
    return roots


def socket_root() -> str | None:
    """Where the Unix sockets of this process's next fit go: ``None`` for the fit's own
    private directory in the temporary directory (``tempfile.gettempdir()``, set by
    ``TMPDIR``), where their paths fit in :data:`MAX_SOCKET_PATH` bytes; else the first folder of
    :func:`_short_socket_roots` where they do, in which the fit makes a second private (0700)
    folder for them, removed with the fit.

    Raises
    ------
    RuntimeError
        No folder is short enough: names the temporary directory, its length, the longest socket
        path a fit would make there and the limit.
    """
    prefix = workdir_prefix()
    tmpdir = tempfile.gettempdir()
    if _socket_path_bytes(tmpdir, prefix) <= MAX_SOCKET_PATH:
        return None
    roots = _short_socket_roots()
    for root in roots:
        if _socket_path_bytes(root, prefix) <= MAX_SOCKET_PATH:
            return root
    longest = _socket_path_bytes(tmpdir, prefix)
    allowed = MAX_SOCKET_PATH - (longest - len(os.fsencode(tmpdir)))
    raise RuntimeError(
        f"the temporary directory {tmpdir!r} (TMPDIR) is {len(os.fsencode(tmpdir))} bytes long: the Unix "
        f"sockets of a pystan fit, made in a private folder there, would have paths of up to {longest} bytes, "
        f"over the limit of {MAX_SOCKET_PATH} bytes ({MAX_SOCKET_PATH + 1} with the closing NUL), and no shorter "
        f"private place can be used instead (looked for $XDG_RUNTIME_DIR where it is this user's 0700 folder, "
        f"then {', '.join(FALLBACK_SOCKET_ROOTS) or 'no other folder'} where writable; found "
        f"{', '.join(roots) + ', too long as well' if roots else 'none'}). Set TMPDIR to a folder of at most "
        f"{allowed} bytes"
    )


@contextlib.contextmanager
def _socket_folder(workdir: Path) -> Iterator[Path]:
    """The private folder for the sockets of the fit in ``workdir``: ``workdir`` itself, or
    (see :func:`socket_root`) a private (0700) folder in a short root, named like a fit's
    directory (so that the next fit removes it once this process is gone, as after SIGKILL) and
    removed on exit."""
    root = socket_root()
    if root is None:
        yield workdir
        return
    remove_stale_workdirs(root)
    folder = Path(tempfile.mkdtemp(prefix=workdir_prefix(), dir=root))  # created 0700
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _server_socket_path() -> Path:
    """The API socket of the running fit: inside its private socket folder (0700)."""
    folder = _STATE["socket_dir"]
    if folder is None:
        raise RuntimeError(
            "pystan tried to start its HTTP server outside a pystanprivacy fit; refusing to open a listener"
        )
    path = Path(folder) / SERVER_SOCKET
    if len(os.fsencode(str(path))) > MAX_SOCKET_PATH:  # socket_root() chose the folder so that it fits
        raise RuntimeError(
            f"the fit's socket folder is too long a path for a Unix socket "
            f"({len(os.fsencode(str(path)))} bytes with the socket name, at most {MAX_SOCKET_PATH})"
        )
    return path


def _install_private_server() -> None:
    """Make pystan serve httpstan's API on :func:`_server_socket_path` (see module docstring).

    pystan looks its client class up as ``stan.common.HttpstanClient`` at every call, so
    replacing that attribute is enough; the HTTP requests and responses are unchanged."""
    _import_pystan()
    import stan.common

    if getattr(stan.common, "_pystanprivacy_patched", False):
        return
    stan.common.HttpstanClient = _private_server_client(stan.common.HttpstanClient)
    stan.common._pystanprivacy_patched = True


def _private_server_client(base: type) -> type:
    import aiohttp
    import aiohttp.web
    import httpstan.app

    class _PrivateServerClient(base):  # type: ignore[misc, valid-type]
        """pystan's ``HttpstanClient`` with the server on a Unix socket in the private
        directory instead of ``127.0.0.1:<port>``."""

        async def __aenter__(self) -> Self:
            path = _server_socket_path()
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # the socket of the previous request of this fit (build, then sample)
            self.runner = aiohttp.web.AppRunner(httpstan.app.make_app())
            await self.runner.setup()
            try:
                await aiohttp.web.UnixSite(self.runner, str(path)).start()
                os.chmod(path, 0o600)
                self.session = aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(path)))
            except BaseException:
                await self.runner.cleanup()
                raise
            self.base_url = "http://localhost/v1"
            return self

    return _PrivateServerClient


@contextlib.contextmanager
def _private_request(root: Path, workdir: Path) -> Iterator[None]:
    """Hold ``_RUN_LOCK`` with httpstan's model cache at ``root`` and everything a pystan call
    makes (its fit file, its messages) inside the private ``workdir``, and its sockets (its
    server's, httpstan's) in the call's private socket folder (:func:`_socket_folder`: ``workdir``
    unless that is too long a path for a socket); every setting is restored on exit. Used by
    :meth:`PystanBackend.log_density` (a fit does not go through pystan: :func:`_sample`)."""
    with _RUN_LOCK, _socket_folder(workdir) as sockets:
        _install_cache_redirect(root)  # another model may live in another cache
        _STATE["fit_dir"], _STATE["socket_dir"] = workdir, sockets
        _install_private_server()
        # httpstan streams the draws through a Unix socket it creates with
        # tempfile.mkstemp and never removes: create it inside the private socket folder.
        saved_tempdir, tempfile.tempdir = tempfile.tempdir, str(sockets)
        captured = io.StringIO()
        try:
            with _silenced_fds(), contextlib.redirect_stderr(captured), contextlib.redirect_stdout(captured):
                yield
        finally:
            _STATE["fit_dir"] = _STATE["socket_dir"] = None
            tempfile.tempdir = saved_tempdir


# --------------------------------------------------------------------------- the chain runner
# A fit calls the model's compiled ``stan::services`` wrapper in the chain pool directly and
# reads its messages itself, as httpstan's ``services_stub.call`` does, without pystan's HTTP
# round trips, its 50 ms polling and the gzip/JSON copies of the draws: see PystanBackend.run.

#: the start of a draw as httpstan's sample writer sends it (``socket_writer.hpp``: one JSON
#: object per line; adaptation messages of the same topic hold an array, not an object)
_DRAW_PREFIX = b'{"version":1,"topic":"sample","values":{'
_LOGGER_TOPIC = b'"topic":"logger"'
_SAMPLE_TOPIC = b'{"version":1,"topic":"sample",'  # every message of the sample writer starts so
#: the ``stan::services::sample`` function a fit calls
_FUNCTION = {True: "fixed_param", False: "hmc_nuts_diag_e_adapt"}
#: compiled services modules loaded in this process (copies of their namespaces, see
#: :func:`_services_module`), by (path, inode, mtime): httpstan loads the module anew for every
#: call; a chain process forked from this one inherits them
_MODULES: dict[tuple[str, int, int], Any] = {}
#: the settings of ``CreateFitRequest`` that are not data: validated and typed by its schema
_SCALAR_FIELDS = ("function", "random_seed", "chain", "num_warmup", "num_samples", "num_thin", "max_depth", "delta")
#: seconds the reader of a fit's messages lets them gather after a read (see :func:`_gather_messages`)
READ_BATCH_S = 0.005
#: a read of fewer bytes than this is a trickle of messages (see :func:`_gather_messages`)
READ_BATCH_BYTES = 1 << 15
_SCHEMA: dict[str, Any] = {}  # the CreateFitRequest schema, made once (a schema's construction takes ms)


def _services_module_path(root: Path, program: str) -> Path:
    """The compiled services module of ``program`` in the cache ``root`` (where
    :meth:`PystanBackend.compile` put it); ``RuntimeError`` if it is not there."""
    from importlib.machinery import EXTENSION_SUFFIXES

    folder = root / "models" / model_name(program).split("/")[1]
    with contextlib.suppress(FileNotFoundError):
        for path in folder.iterdir():
            if path.name.endswith(tuple(EXTENSION_SUFFIXES)):
                return path
    raise RuntimeError(f"the compiled model is missing from {folder}: construct the StanModel again to compile it")


def _services_module(path: str) -> Any:
    """The services module at ``path``, loaded as ``httpstan.models.import_services_extension_module``
    loads it (module name ``stan_services``), once per version of the file: a copy of its
    namespace, which no later import can change.

    Every httpstan services module is named ``stan_services``, and CPython keeps a single-phase
    extension module per (file, name): importing a file that the process has loaded before
    refills whatever module ``sys.modules["stan_services"]`` holds with that file's functions
    (``import_find_extension``, CPython 3.11). httpstan's loader, which pystan's ``log_density``
    and ``stan.build`` use, imports anew on every call. So the module loaded here is kept out of
    ``sys.modules`` (whatever was there is put back), and the fits use a copy of its namespace:
    a later import of another model cannot make this one run that model's code."""
    import importlib.util
    import types

    info = os.stat(path)
    key = (path, info.st_ino, info.st_mtime_ns)
    module = _MODULES.get(key)
    if module is None:
        held = sys.modules.pop("stan_services", None)
        try:
            spec = importlib.util.spec_from_file_location("stan_services", path)
            loaded = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
            spec.loader.exec_module(loaded)  # type: ignore[union-attr]
        finally:
            sys.modules.pop("stan_services", None)
            if held is not None:
                sys.modules["stan_services"] = held
        module = types.SimpleNamespace(**vars(loaded))
        _MODULES[key] = module
    return module


def _run_chain(path: str, function: str, socket_name: str, kwargs: dict) -> int:
    """In a chain process: run one chain, as httpstan's ``_make_lazy_function_wrapper_helper``
    does: the module's ``<function>_wrapper``, which sends Stan's messages to ``socket_name``;
    returns Stan's return code."""
    return getattr(_services_module(path), function + "_wrapper")(socket_name, **kwargs)


def _json_normal(value: Any) -> Any:
    """``value`` as pystan sends it to httpstan: through JSON with pystan's encoder (numpy arrays
    as nested lists, numpy integers as ints)."""
    import json

    _import_pystan()
    from stan.model import DataJSONEncoder

    return json.loads(DataJSONEncoder().encode(value))


def _chain_arguments(module: Any, settings: SamplerSettings, data: dict) -> list[dict]:
    """The arguments of each chain's ``*_wrapper`` call, built as pystan's ``Model._create_fit``
    builds its requests (JSON-normalised data and inits, ``chain`` 1, 2, ...) and as httpstan
    reads them (``CreateFitRequest``'s schema types the settings; ``services_stub.call`` adds the
    defaults of every argument not given)."""
    import marshmallow
    from httpstan import schemas
    from httpstan.services import arguments

    function = _FUNCTION[settings.fixed_param]
    common: dict[str, Any] = {"num_samples": settings.draws, "num_thin": settings.thin}
    if not settings.fixed_param:
        common.update(num_warmup=settings.warmup, delta=settings.adapt_delta, max_depth=settings.max_treedepth)
    inits = _json_normal([dict(i) for i in settings.init]) if settings.init is not None else [{}] * settings.chains
    names = arguments.function_arguments(function, module)
    schema = _SCHEMA.get("fit") or _SCHEMA.setdefault("fit", schemas.CreateFitRequest())
    common = _json_normal(common)
    out = []
    for chain in range(1, settings.chains + 1):
        payload = {
            **common,
            "function": f"stan::services::sample::{function}",
            "chain": chain,
            "random_seed": int(settings.seed),
        }
        try:
            kwargs = schema.load({k: payload[k] for k in _SCALAR_FIELDS if k in payload})
        except marshmallow.ValidationError as exc:  # pystan: httpstan answers 422, pystan raises ValueError
            raise ValueError(str(exc.messages)) from None
        del kwargs["function"]
        kwargs.update(data=data, init=inits[chain - 1])
        for name in names:
            if name not in kwargs:
                kwargs[name] = arguments.lookup_default(arguments.Method.SAMPLE, name)
        out.append(kwargs)
    return out


def _bind_chain_socket(folder: Path) -> Any:
    """A listening Unix socket (mode 0600) for one chain's messages in the fit's private socket
    folder, with a name of httpstan's form (``httpstan_`` + 8 random characters + ``.sock``, as
    ``tempfile.mkstemp(prefix="httpstan_", suffix=".sock")`` makes it), bound directly: a name
    that is taken (``EADDRINUSE``) is replaced by another."""
    import secrets
    import socket

    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_"  # tempfile's random name characters
    while True:
        random_part = "".join(secrets.choice(alphabet) for _ in range(_RANDOM_NAME_LEN))
        name = str(folder / f"{HTTPSTAN_SOCKET_PREFIX}{random_part}{HTTPSTAN_SOCKET_SUFFIX}")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(name)
        except OSError as exc:
            listener.close()
            if exc.errno == errno.EADDRINUSE:
                continue
            raise
        try:
            os.chmod(name, 0o600)
            listener.listen(8)  # a chain connects 4 times: its logger and three writers
            listener.setblocking(False)
        except BaseException:
            listener.close()
            raise
        return listener


def _gather_messages(futures: Sequence[Any], listeners: Sequence[Any]) -> list[list[bytes]]:
    """Read every chain's messages from its listener ``listeners[i]`` until all ``futures`` are
    done and every connection is closed; returns, per chain, the bytes of each connection.

    It sleeps in ``select`` until a chain sends something or finishes (each future's completion
    writes to a socket pair that ``select`` watches), instead of polling. Stan sends every
    message (a draw, a log line) by itself: after a read of less than :data:`READ_BATCH_BYTES`,
    it waits up to :data:`READ_BATCH_S` for more to gather, or less if a chain finishes, so that
    it reads a trickle of small messages in batches (waking for each message took about as much
    CPU as a 4-chain fit of a small model spends sampling), and a stream of large ones at once."""
    import selectors
    import socket

    selector, quiet = selectors.DefaultSelector(), selectors.DefaultSelector()
    wake_r, wake_w = socket.socketpair()
    lock, closed = threading.Lock(), [False]

    def wake(_future: Any) -> None:  # runs in the executor's thread
        with lock:
            if not closed[0]:
                with contextlib.suppress(OSError):
                    wake_w.send(b"\0")

    received: list[list[bytes]] = [[] for _ in listeners]
    open_conns: dict[Any, tuple[int, list[bytes]]] = {}

    def accept_all(listener: Any, chain: int) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            conn.setblocking(False)
            open_conns[conn] = (chain, [])
            selector.register(conn, selectors.EVENT_READ, -1)

    def read(conn: Any) -> int:
        """Read what ``conn`` holds (keeping its bytes once it is closed); returns how many bytes."""
        chain, chunks = open_conns[conn]
        count = 0
        while True:
            try:
                chunk = conn.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                return count
            if not chunk:
                selector.unregister(conn)
                conn.close()
                del open_conns[conn]
                received[chain].append(b"".join(chunks))
                return count
            chunks.append(chunk)
            count += len(chunk)

    try:
        wake_r.setblocking(False)
        selector.register(wake_r, selectors.EVENT_READ, -2)
        for chain, listener in enumerate(listeners):
            selector.register(listener, selectors.EVENT_READ, chain)
        for future in futures:
            future.add_done_callback(wake)
        quiet.register(wake_r, selectors.EVENT_READ)
        while not all(f.done() for f in futures):
            got = None
            for key, _ in selector.select():
                if key.data == -2:
                    with contextlib.suppress(BlockingIOError, InterruptedError):
                        wake_r.recv(4096)
                elif key.data == -1:
                    got = (got or 0) + read(key.fileobj)
                else:
                    accept_all(key.fileobj, key.data)
            if got is not None and got < READ_BATCH_BYTES:  # a trickle: let more gather, unless a chain ends
                quiet.select(READ_BATCH_S)
        # every chain returned (or its process died): its connections are closed, maybe not yet accepted
        for chain, listener in enumerate(listeners):
            accept_all(listener, chain)
        for conn in list(open_conns):
            conn.setblocking(True)
            read(conn)
        return received
    finally:
        with lock:
            closed[0] = True
        for conn in list(open_conns):
            conn.close()
        selector.close()
        quiet.close()
        wake_r.close()
        wake_w.close()


def _chain_failure(future: Any, messages: list[bytes]) -> str | None:
    """The error of a chain that failed, as httpstan and pystan report it (``None`` if it ran):
    a C++ exception of the wrapper, or a non-zero return code with Stan's ``error:`` messages and
    its first 4 ``warn:`` messages (``services_stub.call``)."""
    import json

    exc = future.exception()
    if exc is None:
        if future.result() == 0:
            return None
        errors, warnings_ = [], []
        for blob in messages:
            for line in blob.split(b"\n"):
                if _LOGGER_TOPIC not in line:
                    continue
                text = json.loads(line)["values"][-1]
                if text.startswith("warn:"):
                    warnings_.append(text.replace("warn:", "").strip())
                elif text.startswith("error:"):
                    errors.append(text.replace("error:", "").strip())
        exc = RuntimeError(f"{' '.join(errors)} {' '.join(warnings_[:4])}")
    return f"Exception during call to services function: `{exc!r}`"


def _draw_lines(blob: bytes) -> bytes:
    """The draws among the sample writer's messages ``blob``, joined by commas. They are one
    block of lines (after the adaptation messages, before the timing messages); where some other
    line lies among them, the lines are picked one by one."""
    first = blob.find(_DRAW_PREFIX)
    if first < 0:
        return b""
    block = blob[first : blob.index(b"\n", blob.rfind(_DRAW_PREFIX)) + 1]
    if block.count(b"\n") == block.count(_DRAW_PREFIX):
        return block[:-1].replace(b"\n", b",")
    return b",".join(line for line in block.split(b"\n") if line.startswith(_DRAW_PREFIX))


def _draw_matrix(messages: list[bytes]) -> tuple[list[str], np.ndarray]:
    """One chain's draws from its messages: the column names (Stan's sampler columns, then the
    constrained parameter names) and the array (draws, columns). Numbers are parsed with
    simdjson as pystan's ``Fit`` parses them (JSON's ``NaN``/``Infinity``, which simdjson refuses,
    with Python's ``json``); both round every number correctly, so the doubles are Stan's."""
    import json

    import simdjson

    parts = [_draw_lines(blob) for blob in messages if blob.startswith(_SAMPLE_TOPIC)]  # the sample writer's
    parts = [part for part in parts if part]
    if not parts:
        return [], np.empty((0, 0))
    text = b"[" + b",".join(parts) + b"]"
    try:
        document = simdjson.Parser().parse(text)
        header = list(document[0]["values"].keys())
        rows = [list(message["values"].values()) for message in document]
        del document
    except ValueError:  # NaN or +-Infinity in a draw
        parsed = json.loads(text)
        header = list(parsed[0]["values"])
        rows = [list(message["values"].values()) for message in parsed]
    return header, np.array(rows, dtype=float).reshape(len(rows), len(header))


def _raw_fit(
    matrices: list[tuple[list[str], np.ndarray]],
    param_names: Sequence[str],
    dims: Sequence[Sequence[int]],
    flat_names: Sequence[str],
    expected_draws: int,
) -> RawFit:
    """The draws of every chain as a :class:`RawFit`, laid out as pystan's ``Fit`` lays them out
    (its sampler columns, then each variable's values in Stan's column-major order)."""
    header = matrices[0][0]
    n_sampler = len(header) - len(flat_names)
    for names, rows in matrices:
        if names != header or rows.shape[0] != expected_draws:
            raise RuntimeError(
                f"Stan sent {rows.shape[0]} draws of {len(names)} columns, expected "
                f"{expected_draws} of {len(header)} in every chain"
            )
    if (
        n_sampler < 0
        or list(header[n_sampler:]) != list(flat_names)
        or not all(name.endswith("__") for name in header[:n_sampler])
    ):
        raise RuntimeError("Stan's draws do not hold the model's parameters in the declared order")
    draws = np.stack([rows for _, rows in matrices])  # (chains, draws, columns)
    variables: dict[str, np.ndarray] = {}
    offset = n_sampler
    for name, shape in zip(param_names, dims):
        shape = tuple(int(d) for d in shape)
        size = int(np.prod(shape)) if shape else 1
        if size == 0:  # a zero-length output: Stan writes no column for it
            variables[name] = np.zeros((draws.shape[0], expected_draws, *shape))
            continue
        block = draws[:, :, offset : offset + size]
        variables[name] = np.ascontiguousarray(reshape_column_major(block, shape), dtype=float)
        offset += size
    sampler = {
        col: np.ascontiguousarray(draws[:, :, header.index(col)], dtype=float)
        for col in SAMPLER_COLUMNS
        if col in header[:n_sampler]
    }
    return RawFit(variables=variables, sampler=sampler)


def _model_layout(module: Any, data: dict) -> tuple[list[str], list[list[int]], list[str]]:
    """The model's variable names, their dimensions and its flat (constrained) names for ``data``,
    from the module's functions that httpstan's ``/params`` answer uses. They construct the model,
    which runs the transformed data block; its rejection comes back as pystan reports it."""
    try:
        param_names = list(module.get_param_names(data))
    except Exception as exc:  # noqa: BLE001 - e.g. a rejection in transformed data
        message = f"Error calling get_param_names: `{exc}`"
        logging.getLogger("httpstan").critical(message)  # as httpstan logs it (redacted: see sampling.stan)
        raise RuntimeError(message) from None
    return param_names, [list(d) for d in module.get_dims(data)], list(module.constrained_param_names(data))


class PystanBackend(Backend):
    name = "pystan"

    @classmethod
    def availability(cls) -> str | None:
        try:
            import httpstan  # noqa: F401

            _import_pystan()
        except ImportError as exc:  # pragma: no cover - depends on the install
            return f"pystan/httpstan cannot be imported ({exc}); install 'pystan>=3.10'"
        return None

    def stop_chains(self) -> None:
        """Kill the chain processes (:func:`_kill_chain_pool`)."""
        _kill_chain_pool()

    def preflight(self) -> None:
        """Raise ``RuntimeError`` where no folder is short enough for the fit's Unix sockets
        (:func:`socket_root`)."""
        socket_root()

    def version_tag(self) -> str:
        import httpstan

        stan = _import_pystan()
        return f"pystan-{stan.__version__}-httpstan-{httpstan.__version__}"

    def _root(self, cache_dir: Path) -> Path:
        root = cache_dir / self.version_tag()
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        return root

    def is_compiled(self, program: str, key: str, cache_dir: Path) -> bool:
        root = self._root(cache_dir)
        with _RUN_LOCK:
            _install_cache_redirect(root)
        return _has_module(root / "models" / model_name(program).split("/")[1])

    def compile(self, program: str, key: str, cache_dir: Path) -> Any:
        import httpstan.cache
        import httpstan.models

        root = self._root(cache_dir)
        name = model_name(program)
        model_id = name.split("/")[1]
        final = root / "models" / model_id
        with _RUN_LOCK:
            _install_cache_redirect(root)
            if _has_module(final):
                return (program, root)
            staging = staging_folder(root)  # 0700; stale ones of killed builds removed
            _STATE["cache_root"] = staging  # httpstan builds into cache_directory()/models/<id>
            try:
                try:
                    _, stanc_warnings = stanc(program, f"model_{model_id}")
                except ValueError as exc:
                    raise ValueError(f"Stan program failed to compile: {exc}") from None
                httpstan.cache.dump_stanc_warnings(stanc_warnings, name)
                build_temp = staging / "build"  # private (staging is 0700), removed below
                build_temp.mkdir()
                with _private_build(build_temp, root / "pch" if pch.ENABLED else None):
                    output = asyncio.run(httpstan.models.build_services_extension_module(program))
                httpstan.cache.dump_services_extension_module_compiler_output(output, name)
                if not _has_module(staging / "models" / model_id):
                    raise RuntimeError(f"building the Stan model produced no extension module:\n{output[-2000:]}")
                final.parent.mkdir(parents=True, exist_ok=True)
                if final.exists():  # left by an interrupted build of an older version
                    shutil.rmtree(final)
                os.replace(staging / "models" / model_id, final)
            finally:
                _STATE["cache_root"] = root
                shutil.rmtree(staging, ignore_errors=True)
        return (program, root)

    def log_density(
        self,
        handle: Any,
        data: Mapping[str, Any],
        params: Sequence[Any],
        workdir: Path,
        *,
        unconstrained: bool = False,
    ) -> list[tuple[float, np.ndarray]]:
        stan = _import_pystan()
        program, root = handle
        out = []
        with _private_request(root, workdir):
            posterior = stan.build(program, data=dict(data), random_seed=0)
            for p in params:
                theta = list(p) if unconstrained else posterior.unconstrain_pars(dict(p))
                # httpstan's log_prob_grad includes the Jacobian (adjust_transform)
                out.append(
                    (
                        float(posterior.log_prob(theta, adjust_transform=True)),
                        np.asarray(posterior.grad_log_prob(theta), dtype=float),
                    )
                )
        return out

    def run(
        self,
        handle: Any,
        data: Mapping[str, Any],
        settings: SamplerSettings,
        workdir: Path,
    ) -> RawFit:
        """Run the fit's chains in this process's chain pool (:func:`_ensure_chain_pool`, kept
        from fit to fit) and read their draws from Unix sockets in the fit's private socket
        folder (:func:`_sample`); on any failure or interruption the pool is killed."""
        program, root = handle
        path = str(_services_module_path(root, program))
        with _RUN_LOCK:
            _ensure_chain_pool(chain_process_cap())  # outside the private directory: the pool outlives the fit
            try:
                return _sample(path, data, settings, workdir)
            except BaseException:
                # interrupted (Ctrl-C, SIGTERM) or failed: chains may still be sampling
                _kill_chain_pool()
                raise


def _sample(path: str, data: Mapping[str, Any], settings: SamplerSettings, workdir: Path) -> RawFit:
    """One fit, as pystan's ``Model.sample`` / ``fixed_param`` and httpstan's ``services_stub.call``
    make it, with the same arguments, seeds and draws: each chain calls the model's services
    wrapper in a chain process with a socket of its own in the fit's private socket folder, and
    this process reads the messages as they come and decodes the draws once every chain is done.
    Callers hold ``_RUN_LOCK`` and own the chain pool. Raises ``RuntimeError`` with Stan's message
    where a chain failed (the first, in chain order, as pystan does)."""
    import httpstan.services_stub as stub

    clean = _json_normal(dict(data))
    function = _FUNCTION[settings.fixed_param]
    with _socket_folder(workdir) as sockets:
        listeners: list[Any] = []
        try:
            # Stan prints the data values of `print` statements to file descriptor 1; a chain
            # process forked by the first submit inherits the silenced descriptors too
            with _silenced_fds():
                module = _services_module(path)
                param_names, dims, flat_names = _model_layout(module, clean)
                futures = []
                for kwargs in _chain_arguments(module, settings, clean):
                    listeners.append(_bind_chain_socket(sockets))
                    futures.append(
                        stub.executor.submit(_run_chain, path, function, listeners[-1].getsockname(), kwargs)
                    )
            messages = _gather_messages(futures, listeners)
        finally:
            for listener in listeners:
                listener.close()
    failures = [m for m in (_chain_failure(f, msgs) for f, msgs in zip(futures, messages)) if m is not None]
    for message in failures:
        logging.getLogger("httpstan").critical(message)  # as httpstan logs it (redacted: see sampling.stan)
    if failures:
        if "ValueError('Initialization failed.')" in failures[0]:
            raise RuntimeError("Initialization failed.")  # pystan's wording for this one
        raise RuntimeError(failures[0])
    expected = -(-settings.draws // settings.thin)  # ceil: Stan keeps draws 0, thin, 2 thin, ...
    return _raw_fit([_draw_matrix(msgs) for msgs in messages], param_names, dims, flat_names, expected)
