"""pystan 3 backend (httpstan compiles offline with the system C++ compiler).

Two things pystan does by default are not acceptable for private data, and this module
changes them without touching pystan's public API:

* httpstan keeps compiled models *and fits* under ``~/.cache/httpstan``; with a random seed
  it keeps every fit (the draws) there for good, world-readable. Here compiled models go to
  pystanprivacy's own cache directory and every fit file goes into the private working
  directory of the fit, which the caller deletes when the fit ends.
* pystan prints Stan's messages to stderr; they are captured instead of printed. Stan's
  C++ code writes ``print`` output of the transformed data block straight to the process's
  standard output (file descriptor 1, which ``contextlib.redirect_stdout`` cannot catch):
  file descriptors 1 and 2 point at ``os.devnull`` while a model is built and run, so
  that no data value printed by Stan reaches a terminal or a log file.
* httpstan streams draws through a Unix socket file it leaves in the system temporary
  directory; it is created inside the fit's private directory instead.
* pystan serves httpstan's HTTP API on a TCP port of 127.0.0.1 while it builds and samples,
  where every local user can connect to it (read the models, start fits, delete compiled
  models). Here the API is served on a Unix socket inside the fit's private 0700 directory
  (:class:`_PrivateServerClient`), so no other user can reach it, and no TCP port is opened.
* httpstan runs the chains in a pool of forked processes that outlive a killed parent. Here
  every chain process watches its parent and ends when it is gone
  (:func:`_chain_process_init`), and the pool is killed when a fit is interrupted or fails, so
  no process holding the data keeps running after the fit.

Two more changes make the model cache robust:

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
* httpstan runs ``stanc`` (Stan to C++) with a 1 s timeout (``httpstan.compile.compile``), which
  a loaded machine exceeds (a ``reproduce`` run under ``nice -n 19`` beside two C++ compiles
  failed on it): :func:`stanc` runs the same command with :data:`STANC_TIMEOUT_S`.
"""
from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import hashlib
import io
import logging
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from .base import SAMPLER_COLUMNS, Backend, RawFit, SamplerSettings, chain_process_cap
from .workdirs import watch_parent

# httpstan serves one event loop per call and its fit files are addressed through a
# module-level function, so runs in one process are serialised.
_RUN_LOCK = threading.RLock()
_STATE: dict[str, Path | None] = {"cache_root": None, "fit_dir": None}
#: the chain pool this module made: the executor, its size and the process that made it
_CHAIN_POOL: dict[str, Any] = {"executor": None, "size": None, "pid": None}
#: the name of the API socket inside the fit's private directory
SERVER_SOCKET = "api.sock"
#: seconds ``stanc`` may take to translate one program (httpstan allows 1 s)
STANC_TIMEOUT_S = 600.0
_MAX_SOCKET_PATH = 107  # sockaddr_un.sun_path holds 108 bytes, the last one NUL


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
            raise RuntimeError(f"stanc did not translate model {stan_model_name} within "
                               f"STANC_TIMEOUT_S={STANC_TIMEOUT_S} s") from None
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
                "httpstan tried to write a fit outside a pystanprivacy fit; refusing to "
                "write draws to a shared cache"
            )
        return Path(fit_dir) / (fit_name.rsplit("/", maxsplit=1)[1] + ".jsonlines.gz")

    httpstan.cache.cache_directory = cache_directory
    httpstan.cache.fit_path = fit_path
    httpstan.models.calculate_model_name = model_name  # looked up as a module attribute everywhere
    httpstan.cache._pystanprivacy_patched = True


def _chain_process_init(parent: int) -> None:
    """Initializer of a chain process: httpstan's own (ignore SIGINT), and a watch that ends
    the process as soon as its parent ``parent`` is gone (killed with SIGKILL or SIGTERM),
    instead of letting it sample on with the data until its run ends."""
    import httpstan.services_stub as stub

    stub.init_worker()
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
        max_workers=size, mp_context=mp.get_context("fork"),
        initializer=_chain_process_init, initargs=(pid,),
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
    interrupted fit is reported by its own exception; every other record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        import concurrent.futures.process as cfp

        exc = record.exc_info[1] if record.exc_info else None
        return not (isinstance(exc, cfp.BrokenProcessPool)
                    and str(record.msg).startswith("Future exception was never retrieved"))


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
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            proc.kill()
    with contextlib.suppress(Exception):
        pool.shutdown(wait=False, cancel_futures=True)
    _CHAIN_POOL.update(executor=None, size=None, pid=None)


def _server_socket_path() -> Path:
    """The API socket of the running fit: inside its private directory (0700)."""
    fit_dir = _STATE["fit_dir"]
    if fit_dir is None:
        raise RuntimeError(
            "pystan tried to start its HTTP server outside a pystanprivacy fit; refusing to open "
            "a listener"
        )
    path = Path(fit_dir) / SERVER_SOCKET
    if len(os.fsencode(str(path))) > _MAX_SOCKET_PATH:
        raise RuntimeError(
            f"the fit's private directory {fit_dir} is too long a path for a Unix socket "
            f"({len(os.fsencode(str(path)))} bytes with the socket name, at most {_MAX_SOCKET_PATH}); "
            "set TMPDIR to a shorter folder"
        )
    return path


def _install_private_server() -> None:
    """Make pystan serve httpstan's API on :func:`_server_socket_path` (see module docstring).

    pystan looks its client class up as ``stan.common.HttpstanClient`` at every call, so
    replacing that attribute is enough; the HTTP requests and responses are unchanged."""
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

        async def __aenter__(self) -> "_PrivateServerClient":
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
    makes (its server's socket, httpstan's temporary sockets, its messages) inside the
    private ``workdir``; every setting is restored on exit."""
    with _RUN_LOCK:
        _install_cache_redirect(root)  # another model may live in another cache
        _STATE["fit_dir"] = workdir
        _install_private_server()
        # httpstan streams the draws through a Unix socket it creates with
        # tempfile.mkstemp and never removes: create it inside the private directory.
        saved_tempdir, tempfile.tempdir = tempfile.tempdir, str(workdir)
        captured = io.StringIO()
        try:
            with _silenced_fds(), contextlib.redirect_stderr(captured), contextlib.redirect_stdout(captured):
                yield
        finally:
            _STATE["fit_dir"] = None
            tempfile.tempdir = saved_tempdir


class PystanBackend(Backend):
    name = "pystan"

    @classmethod
    def availability(cls) -> str | None:
        try:
            import httpstan  # noqa: F401
            import stan  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the install
            return f"pystan/httpstan cannot be imported ({exc}); install 'pystan>=3.10'"
        return None

    def stop_chains(self) -> None:
        """Kill the chain processes (:func:`_kill_chain_pool`)."""
        _kill_chain_pool()

    def version_tag(self) -> str:
        import httpstan
        import stan

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
            staging = Path(tempfile.mkdtemp(prefix="staging-", dir=root))
            _STATE["cache_root"] = staging  # httpstan builds into cache_directory()/models/<id>
            try:
                try:
                    _, stanc_warnings = stanc(program, f"model_{model_id}")
                except ValueError as exc:
                    raise ValueError(f"Stan program failed to compile: {exc}") from None
                httpstan.cache.dump_stanc_warnings(stanc_warnings, name)
                with _patient_stanc():
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
        import stan

        program, root = handle
        out = []
        with _private_request(root, workdir):
            posterior = stan.build(program, data=dict(data), random_seed=0)
            for p in params:
                theta = list(p) if unconstrained else posterior.unconstrain_pars(dict(p))
                # httpstan's log_prob_grad includes the Jacobian (adjust_transform)
                out.append((float(posterior.log_prob(theta, adjust_transform=True)),
                            np.asarray(posterior.grad_log_prob(theta), dtype=float)))
        return out

    def run(
        self,
        handle: Any,
        data: Mapping[str, Any],
        settings: SamplerSettings,
        workdir: Path,
    ) -> RawFit:
        import stan

        program, root = handle
        kwargs: dict[str, Any] = {
            "num_chains": settings.chains,
            "num_samples": settings.draws,
            "num_thin": settings.thin,
        }
        if not settings.fixed_param:
            kwargs.update(
                num_warmup=settings.warmup,
                delta=settings.adapt_delta,
                max_depth=settings.max_treedepth,
            )
        if settings.init is not None:
            kwargs["init"] = [dict(i) for i in settings.init]
        with _RUN_LOCK:
            _ensure_chain_pool(chain_process_cap())  # outside the private directory: the pool outlives the fit
            try:
                with _private_request(root, workdir):
                    posterior = stan.build(program, data=dict(data), random_seed=int(settings.seed))
                    if settings.fixed_param:
                        fit = posterior.fixed_param(**kwargs)
                    else:
                        fit = posterior.sample(**kwargs)
                if fit is None:  # pystan swallows KeyboardInterrupt and returns None
                    raise KeyboardInterrupt
            except BaseException:
                # interrupted (Ctrl-C, SIGTERM) or failed: chains may still be sampling
                _kill_chain_pool()
                raise
        chains = settings.chains
        n_draws = fit._draws.shape[1]  # noqa: SLF001 - shape of pystan's draw array

        def per_chain(flat: np.ndarray) -> np.ndarray:
            # pystan's last axis enumerates draw-major then chain: k = draw * chains + chain
            return flat.reshape(*flat.shape[:-1], n_draws, chains)

        variables: dict[str, np.ndarray] = {}
        for name, dims in zip(fit.param_names, fit.dims):
            if 0 in dims:  # a zero-length output: pystan holds no column for it
                variables[name] = np.zeros((chains, n_draws, *dims))
                continue
            arr = per_chain(np.asarray(fit[name]).reshape(*dims, -1) if dims else np.asarray(fit[name]).reshape(-1))
            # (*dims, draws, chains) -> (chains, draws, *dims)
            nd = len(dims)
            arr = np.moveaxis(arr, [nd, nd + 1], [1, 0]) if nd else arr.T
            variables[name] = np.ascontiguousarray(arr, dtype=float)
        sampler = {}
        for col in SAMPLER_COLUMNS:
            if col in fit.sample_and_sampler_param_names:
                sampler[col] = np.ascontiguousarray(per_chain(np.asarray(fit[col]).reshape(-1)).T, dtype=float)
        return RawFit(variables=variables, sampler=sampler)

