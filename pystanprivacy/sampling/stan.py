"""Find, flatten, compile (once, cached, locked) and run the package's Stan models.

Every model is a ``.stan`` file under the top-level ``stan/`` folder (shipped inside the
wheel as ``pystanprivacy/stan``) and is addressed by name, e.g. ``"foulds2016/beta_bernoulli"``.
``#include`` directives are resolved with the ``stanc`` binary shipped in the httpstan wheel
(``stanc --print-canonical``), because pystan cannot resolve them itself.

Compiled models are cached in a user cache directory (``$PYSTANPRIVACY_CACHE`` or the
platform's user cache dir), keyed by a hash of the flattened program, the backend and its
versions; a file lock per key makes sure two processes never compile the same model at once.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from filelock import FileLock

from .backends import Backend, SamplerSettings, select_backend
from .backends.workdirs import WORKDIR_PREFIX, remove_own_folders, remove_stale_workdirs  # noqa: F401 - re-exported
from .backends.workdirs import workdir_prefix as _workdir_prefix
from .checkpoints import active_checkpoints
from .posterior import Posterior

CACHE_ENV_VAR = "PYSTANPRIVACY_CACHE"
_FUNCTIONS_DIR = "functions"

# --------------------------------------------------------------------------- redaction
# Stan's own messages print data values (``reject("x = ", x)``, failed initialisation,
# ``print``). Every message that comes out of a backend is passed through :func:`redact`
# before it reaches an exception or a log record: numeric literals are replaced, the
# structure of the message (what failed, where in the program) is kept.
_NUMBER = re.compile(
    r"(?<!line )(?<!column )(?<![\d.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
    r"|(?<![A-Za-z])[-+]?(?:nan|inf(?:inity)?)(?![A-Za-z])",
    re.IGNORECASE,
)
#: a file path at the start of a token (``/tmp/pystanprivacy-fit-…/data.json``, ``~/x``,
#: ``./m.stan``) that holds a letter: kept whole, since the paths in backend messages are the
#: package's own folders and files, and their digits (PIDs, hashes) are not data
_PATH = r"(?:^|(?<=[\s'\"(=\[]))(?:~|\.{1,2})?/[\w.+@%~/-]*[A-Za-z][\w.+@%~/-]*"
_REDACT = re.compile(f"(?P<path>{_PATH})|{_NUMBER.pattern}", re.IGNORECASE | re.MULTILINE)
_MAX_MESSAGE = 2000
#: loggers of the Stan backends whose records can quote Stan's messages
BACKEND_LOGGERS = ("httpstan", "cmdstanpy", "stan")


def redact(text: str) -> str:
    """``text`` with every numeric literal (and nan/inf) replaced by ``<num>``, shortened
    to at most 2000 characters; line and column numbers of the Stan program and file paths
    (a token that starts with ``/``, ``~/``, ``./`` or ``../`` and holds a letter) are kept."""
    return _shorten(_REDACT.sub(lambda m: m.group(0) if m.group("path") else "<num>", str(text)))


def _shorten(text: str) -> str:
    """``text`` shortened to at most 2000 characters (the limit of :func:`redact`)."""
    out = str(text)
    if len(out) > _MAX_MESSAGE:
        suffix = " ... (shortened)"
        out = out[: _MAX_MESSAGE - len(suffix)] + suffix
    return out


class _RedactingFilter(logging.Filter):
    """Rewrite a backend's log record so that it carries no numeric literal (Stan's
    messages quote data); tracebacks attached to the record are dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record (any error formatting it): keep only its format string
            message = str(record.msg)
        record.msg = redact(message)
        record.args = None
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        return True


_REDACTING_FILTER = _RedactingFilter()


def install_log_redaction() -> None:
    """Attach the redacting filter to the loggers of httpstan, pystan and cmdstanpy (once)."""
    for name in BACKEND_LOGGERS:
        logger = logging.getLogger(name)
        if _REDACTING_FILTER not in logger.filters:
            logger.addFilter(_REDACTING_FILTER)


install_log_redaction()


class StanRunError(RuntimeError):
    """A Stan run failed. The message is Stan's, with numeric literals redacted (Stan's
    messages can print data values); the backend's original exception is not chained."""


class _Terminated(BaseException):
    """SIGTERM arrived during a fit (raised by the handler :func:`_signals_end_fit` installs)."""


@contextlib.contextmanager
def _signals_end_fit(stop: Any = None) -> Iterator[list]:
    """While a fit runs in the main thread, make SIGTERM (what ``timeout``, batch schedulers and
    Dask send) and Ctrl-C stop it at once: ``stop()`` (the backend's
    :meth:`~pystanprivacy.sampling.backends.Backend.stop_chains`) kills its chain processes, so that
    nothing waits for a chain to finish, and an exception unwinds the fit, so that its private
    directory is removed. SIGTERM raises :class:`_Terminated`, and :func:`_deliver_sigterm`
    then hands the signal to the handler that was there before; Ctrl-C raises
    ``KeyboardInterrupt`` (only where SIGINT has Python's default handler). Yields a list that
    holds the SIGTERM's previous handler and frame once it came.

    Signal handlers can be set only from the main thread: a fit in another thread (a Dask
    worker thread) keeps the process's handlers, and a directory left by a process that SIGTERM
    killed is removed by the next fit, as after SIGKILL."""
    received: list = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

    def on_sigterm(signum: int, frame: Any) -> None:
        if not received:
            received.append((previous[signal.SIGTERM], frame))
            if stop is not None:
                stop()
            raise _Terminated

    def on_sigint(signum: int, frame: Any) -> None:
        if stop is not None:
            stop()
        raise KeyboardInterrupt

    installed = []
    # SIG_IGN: the process ignores it; None: a handler not set from Python, left alone
    if previous[signal.SIGTERM] not in (signal.SIG_IGN, None):
        installed.append((signal.SIGTERM, on_sigterm))
    if previous[signal.SIGINT] is signal.default_int_handler:
        installed.append((signal.SIGINT, on_sigint))
    for sig, handler in installed:
        signal.signal(sig, handler)
    try:
        yield received
    finally:
        for sig, _ in installed:
            signal.signal(sig, previous[sig])


def _deliver_sigterm(received: list) -> None:
    """Hand a SIGTERM that stopped a fit to the handler that was set before the fit: the
    default one ends the process by SIGTERM, as it would have without pystanprivacy (after
    this process's other private folders are removed too); a Python handler is called, and if
    the process lives on, the fit is reported as interrupted (``KeyboardInterrupt``)."""
    previous, frame = received[0]
    if callable(previous):
        previous(signal.SIGTERM, frame)
        raise KeyboardInterrupt("the fit was stopped by SIGTERM")
    remove_own_folders()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.raise_signal(signal.SIGTERM)
    raise SystemExit(128 + signal.SIGTERM)  # pragma: no cover - SIGTERM was blocked


def stan_root() -> Path:
    """The folder holding the ``.stan`` files: inside the installed package, or the
    top-level ``stan/`` folder of a source checkout (editable install)."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "stan", package.parent / "stan"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"pystanprivacy's Stan models were not found (looked in {package / 'stan'} and "
        f"{package.parent / 'stan'}); the installation is incomplete"
    )


def available_models() -> list[str]:
    """Names of every Stan model, e.g. ``['foulds2016/beta_bernoulli', ...]``."""
    root = stan_root()
    return sorted(
        p.relative_to(root).with_suffix("").as_posix()
        for p in root.rglob("*.stan")
        if p.relative_to(root).parts[0] != _FUNCTIONS_DIR
    )


def model_file(name: str) -> Path:
    """Path of the ``.stan`` file of model ``name``; ``ValueError`` listing the models if
    there is no such model."""
    if not isinstance(name, str):
        raise TypeError(f"model name must be a string such as 'foulds2016/beta_bernoulli', got {name!r}")
    models = available_models()
    if name not in models:
        raise ValueError(f"unknown model {name!r}; available models: {', '.join(models)}")
    return stan_root() / f"{name}.stan"


def stanc_executable() -> Path:
    """The ``stanc`` compiler: the one shipped in the httpstan wheel, else CmdStan's."""
    try:
        import importlib.resources

        path = Path(str(importlib.resources.files("httpstan") / "stanc"))
        if path.exists():
            return path
    except ModuleNotFoundError:
        pass
    cmdstan = os.environ.get("CMDSTAN")
    if cmdstan and (Path(cmdstan) / "bin" / "stanc").exists():
        return Path(cmdstan) / "bin" / "stanc"
    raise RuntimeError("no stanc found: install httpstan (pystan 3) or set CMDSTAN")


def _stanc(args: Sequence[str], path: Path) -> str:
    include = f"--include-paths={stan_root() / _FUNCTIONS_DIR},{path.parent}"
    proc = subprocess.run(
        [str(stanc_executable()), *args, include, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise ValueError(f"stanc rejected {path.name}:\n{proc.stderr.strip()}")
    return proc.stdout


@functools.cache
def _flatten_cached(path: str, mtime: float, includes: tuple[int, ...] = ()) -> str:
    return _stanc(["--print-canonical"], Path(path))


def _include_stamp(path: Path) -> tuple[int, ...]:
    """The modification times of the files an ``#include`` of ``path`` can read (the function
    library and the program's own folder): a changed included file flattens again."""
    folders = (stan_root() / _FUNCTIONS_DIR, path.parent)
    return tuple(sorted(f.stat().st_mtime_ns for d in folders if d.is_dir() for f in d.iterdir() if f.is_file()))


def flatten(name_or_path: str | Path) -> str:
    """The program of a model with every ``#include`` resolved (``stanc --print-canonical``)."""
    path = Path(name_or_path) if str(name_or_path).endswith(".stan") else model_file(str(name_or_path))
    return _flatten_cached(str(path), path.stat().st_mtime, _include_stamp(path))


def strip_comments(program: str) -> str:
    """``program`` (Stan source) without its ``//``, ``#`` and ``/* */`` comments (string
    literals kept as they are), without trailing blanks and without the lines left empty."""
    out: list[str] = []
    i, n = 0, len(program)
    while i < n:
        c = program[i]
        if c == '"':  # a string literal (Stan's have no escaped quotes): copied whole
            end = program.find('"', i + 1)
            end = n - 1 if end < 0 else end
            out.append(program[i : end + 1])
            i = end + 1
        elif program.startswith("/*", i):
            end = program.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif program.startswith("//", i) or c == "#" and not program.startswith("#include", i):
            end = program.find("\n", i)
            i = n if end < 0 else end
        else:
            out.append(c)
            i += 1
    lines = (line.rstrip() for line in "".join(out).splitlines())
    return "\n".join(line for line in lines if line) + "\n"


@functools.lru_cache(maxsize=256)
def program_text_digest(program: str) -> str:
    """The digest of a flattened Stan program (:func:`flatten`) by what it computes: SHA-256 of
    the program without comments (:func:`strip_comments`), 24 hex digits. A changed statement,
    declaration or included function changes it; a comment does not."""
    return hashlib.sha256(strip_comments(program).encode()).hexdigest()[:24]


def program_digest(name_or_path: str | Path) -> str:
    """:func:`program_text_digest` of the flattened model ``name_or_path`` (a registry name such
    as ``'bernstein2018/binomial_beta'`` or the path of a ``.stan`` file), as it is on disk now."""
    return program_text_digest(flatten(name_or_path))


#: the ``{program name: digest}`` of the programs run inside :func:`recording_programs`
_RUN_PROGRAMS: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "pystanprivacy_run_programs", default=None
)


@contextlib.contextmanager
def recording_programs() -> Iterator[dict[str, str]]:
    """Inside, every Stan program that runs (a fit, a fixed-parameter run, a log-density
    evaluation) in this thread's context is added to the yielded ``{name: digest}`` dict, the
    digest (:func:`program_text_digest`) of the program text that was compiled, which a
    long-lived process keeps even when the file changes. The task runner uses it to refuse a
    task result whose programs are not those its key names (:mod:`pystanprivacy.run.study`)."""
    used: dict[str, str] = {}
    token = _RUN_PROGRAMS.set(used)
    try:
        yield used
    finally:
        _RUN_PROGRAMS.reset(token)


@functools.cache
def _info_cached(path: str, mtime: float) -> dict:
    return json.loads(_stanc(["--info"], Path(path)))


def model_info(name_or_path: str | Path) -> dict:
    """``stanc --info`` of a model: its data inputs, parameters and generated quantities
    with types and numbers of dimensions (a compiler-free syntax check)."""
    path = Path(name_or_path) if str(name_or_path).endswith(".stan") else model_file(str(name_or_path))
    return _info_cached(str(path), path.stat().st_mtime)


def cache_dir() -> Path:
    """The private (0700) directory holding compiled models."""
    root = os.environ.get(CACHE_ENV_VAR)
    if root:
        path = Path(root)
    else:
        import platformdirs

        path = Path(platformdirs.user_cache_dir("pystanprivacy"))
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def seed_to_int(seed: int | np.random.Generator | None) -> int:
    """Stan's seed (an int in [0, 2**31 − 1]) from an int, a Generator or ``None``
    (fresh OS entropy). Seeds give reproducibility, not security."""
    if seed is None:
        return secrets.randbelow(2**31 - 1)
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**31 - 1))
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, a numpy.random.Generator or None, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return int(seed) % (2**31 - 1)


def _check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value}")
    return int(value)


def _check_data(name: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """Presence and finiteness of every data input, checked before anything reaches Stan
    (Stan's own messages can print data values; these never do)."""
    if not isinstance(data, Mapping):
        raise TypeError(f"data must be a mapping of Stan data names to values, got {type(data).__name__}")
    inputs = model_info(name)["inputs"]
    missing = sorted(set(inputs) - set(data))
    if missing:
        raise ValueError(f"data for model {name!r} is missing {', '.join(missing)}")
    unknown = sorted(set(data) - set(inputs))
    if unknown:
        raise ValueError(f"data for model {name!r} has entries the model does not declare: {', '.join(unknown)}")
    clean: dict[str, Any] = {}
    for key in inputs:
        value = data[key]
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):  # numpy's message may quote data: not chained
            raise TypeError(f"data[{key!r}] must be numeric (a ragged or non-numeric sequence was given)") from None
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"data[{key!r}] must be numeric, got dtype {arr.dtype}")
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise ValueError(f"data[{key!r}] contains NaN or infinite values")
        want_int = inputs[key]["type"].startswith("int")
        if want_int:
            if arr.dtype.kind == "f" and not np.all(arr == np.round(arr)):
                raise TypeError(f"data[{key!r}] must hold integers")
            # Stan's int is 32-bit; a larger value would wrap in the cast (or make Stan
            # print it): refuse it, counting the values, never showing them
            n_big = int(np.count_nonzero((arr < -(2**31)) | (arr > 2**31 - 1)))
            if n_big:
                raise ValueError(f"data[{key!r}] holds {n_big} value(s) outside Stan's 32-bit int range")
            arr = arr.astype(np.int64)
            clean[key] = int(arr) if arr.ndim == 0 else arr.tolist()
        else:
            arr = arr.astype(float)
            clean[key] = float(arr) if arr.ndim == 0 else arr.tolist()
        if arr.ndim != inputs[key]["dimensions"]:
            raise ValueError(f"data[{key!r}] must have {inputs[key]['dimensions']} dimension(s), got shape {arr.shape}")
    return clean


class StanModel:
    """One compiled Stan model of the package, ready to sample.

    Parameters
    ----------
    name : str
        Model name, e.g. ``"foulds2016/beta_bernoulli"`` (see :func:`available_models`).
    backend : str or Backend, optional
        ``"cmdstanpy"``, ``"pystan"``, ``"auto"`` or ``None`` (``$PYSTANPRIVACY_BACKEND``,
        default ``auto``), or a :class:`~pystanprivacy.sampling.backends.Backend` instance.

    Notes
    -----
    Use :meth:`get` to share one compiled model per process.
    """

    _instances: ClassVar[dict[tuple[str, str], StanModel]] = {}
    _instances_lock = threading.Lock()
    #: ``(name, was_cached, seconds)`` of every model this process compiled or loaded, in order
    #: (what a command's wall time spent on compiles, e.g. ``pystanprivacy audit``)
    loaded: ClassVar[list[tuple[str, bool, float]]] = []
    _loaded_lock = threading.Lock()

    def __init__(self, name: str, *, backend: str | Backend | None = None) -> None:
        self.name = name
        self.backend = backend if isinstance(backend, Backend) else select_backend(backend)
        self.program = flatten(name)
        self._digest: str | None = None  # program_text_digest(self.program), when first asked
        digest = hashlib.sha256()
        digest.update(self.program.encode())
        digest.update(self.backend.version_tag().encode())
        self.key = f"{name.replace('/', '-')}-{digest.hexdigest()[:20]}"
        root = cache_dir()
        lock_dir = root / "locks"
        lock_dir.mkdir(exist_ok=True, mode=0o700)
        start = time.perf_counter()
        with FileLock(str(lock_dir / f"{self.key}.lock")):  # waiting for another process's compile counts
            self.was_cached = self.backend.is_compiled(self.program, self.key, root)
            self._handle = self.backend.compile(self.program, self.key, root)
        #: seconds spent finding or compiling the model (a compile: ~30-90 s; cached: ~1 s)
        self.load_seconds = time.perf_counter() - start
        with StanModel._loaded_lock:  # not _instances_lock: get() holds it while constructing
            StanModel.loaded.append((name, self.was_cached, self.load_seconds))

    @classmethod
    def get(cls, name: str, *, backend: str | Backend | None = None) -> StanModel:
        """The process-wide instance of model ``name`` (compiled or loaded once)."""
        resolved = backend if isinstance(backend, Backend) else select_backend(backend)
        key = (name, resolved.name)
        with cls._instances_lock:
            if key not in cls._instances:
                cls._instances[key] = cls(name, backend=resolved)
            return cls._instances[key]

    def sample(
        self,
        data: Mapping[str, Any],
        *,
        chains: int = 4,
        warmup: int = 1000,
        draws: int = 1000,
        seed: int | np.random.Generator | None = None,
        adapt_delta: float = 0.8,
        max_treedepth: int = 10,
        thin: int = 1,
        init: Sequence[Mapping[str, Any]] | None = None,
        public_data: bool = False,
    ) -> Posterior:
        """Run NUTS (diagonal metric, adapted) and return a :class:`Posterior`.

        Everything the backend writes goes to a private (0700) temporary directory that is
        removed when the fit ends, also on error or interruption.

        ``public_data``: the data are simulated or public (simulation-based calibration, a
        worked example), so a failed run's :class:`StanRunError` quotes Stan's message with its
        numbers (shortened, not redacted). Default ``False``: every numeric literal is
        ``<num>`` (Stan's messages can quote data values). Log records of the backends are
        redacted either way.
        """
        if not isinstance(public_data, bool):
            raise TypeError(f"public_data must be True or False, got {type(public_data).__name__} {public_data!r}")
        if not (isinstance(adapt_delta, (float, int)) and 0 < adapt_delta < 1):
            raise ValueError(f"adapt_delta must be in (0, 1), got {adapt_delta!r}")
        settings = SamplerSettings(
            chains=_check_positive_int(chains, "chains"),
            warmup=_check_positive_int(warmup, "warmup", 0),
            draws=_check_positive_int(draws, "draws"),
            seed=seed_to_int(seed),
            adapt_delta=float(adapt_delta),
            max_treedepth=_check_positive_int(max_treedepth, "max_treedepth"),
            thin=_check_positive_int(thin, "thin"),
            init=init,
        )
        if init is not None and len(init) != settings.chains:
            raise ValueError(f"init must hold one mapping per chain ({settings.chains}), got {len(init)}")
        return self._run(data, settings, public_data=public_data)

    def fixed_param(
        self,
        data: Mapping[str, Any],
        *,
        draws: int = 1,
        seed: int | np.random.Generator | None = None,
    ) -> Posterior:
        """Evaluate generated quantities without sampling (one chain), e.g. to test a
        Stan function against scipy."""
        settings = SamplerSettings(
            chains=1,
            warmup=0,
            draws=_check_positive_int(draws, "draws"),
            seed=seed_to_int(seed),
            fixed_param=True,
        )
        return self._run(data, settings)

    def log_density(
        self,
        data: Mapping[str, Any],
        params: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        *,
        unconstrained: Any = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The log density and its gradient at given parameter values, e.g. to check a
        model's gradient against finite differences.

        Parameters
        ----------
        data:
            The model's data, as for :meth:`sample`.
        params:
            Values of every parameter on the constrained (natural) scale: one mapping
            ``name -> value``, or a sequence of them (one point each).
        unconstrained:
            Instead of ``params``: points on the unconstrained scale, an array (P,) or (K, P)
            in Stan's order (what finite differences of the gradient need).

        Returns
        -------
        (lp, grad):
            ``lp`` (K,): the log density on the unconstrained scale, Jacobian of the
            constraining transform included (up to the constants that ``~`` statements drop,
            which may differ between backends); ``grad`` (K, P): its gradient with respect
            to the P unconstrained parameters, in Stan's order.

        Notes
        -----
        A program whose free parameters have no element (``vector[P] p`` with ``P = 0``, or no
        parameters block) is evaluated on both backends alike: its model block runs once, ``lp``
        is its log density and ``grad`` is empty, (K, 0); a ``reject`` or a failed argument
        check raises :class:`StanRunError` with Stan's message. Give its points as ``params``
        (e.g. ``{"p": []}``); ``unconstrained`` needs at least one value. pystan evaluates such
        a program directly. CmdStan's ``log_prob`` method refuses it ("Model ... has no
        parameters, nothing to estimate."), so the cmdstanpy backend evaluates a copy of it
        with one unused, unconstrained parameter at 0 (the same ``target``, no Jacobian term,
        the same messages at the same lines), compiled once into the model's cache folder on
        first use (:func:`~pystanprivacy.sampling.backends.cmdstanpy_backend.padded_program`).
        """
        if (params is None) == (unconstrained is None):
            raise TypeError("give exactly one of params (constrained values) and unconstrained (an array)")
        if unconstrained is not None:
            try:
                arr = np.asarray(unconstrained, dtype=float)
            except (TypeError, ValueError):
                raise TypeError(
                    f"unconstrained must be an array of numbers, got {type(unconstrained).__name__}"
                ) from None
            if arr.ndim not in (1, 2) or arr.size == 0 or not np.isfinite(arr).all():
                raise ValueError(
                    f"unconstrained must be a finite, non-empty array (P,) or (K, P), got shape {arr.shape}"
                )
            points: list[Any] = [row.tolist() for row in np.atleast_2d(arr)]
        else:
            given = [params] if isinstance(params, Mapping) else list(params)
            if not given or not all(isinstance(p, Mapping) for p in given):
                raise TypeError(
                    f"params must be a mapping of parameter values or a non-empty sequence of them, "
                    f"got {type(params).__name__}"
                )
            points = []
            for point in given:
                values = {}
                for name, value in point.items():
                    try:
                        v = np.asarray(value, dtype=float)
                    except (TypeError, ValueError):
                        raise TypeError(f"params[{name!r}] must be numbers, got {type(value).__name__}") from None
                    if not np.isfinite(v).all():
                        raise ValueError(f"params[{name!r}] must be finite")
                    values[name] = v.tolist()
                points.append(values)
        clean = _check_data(self.name, data)
        flag = unconstrained is not None
        evaluated = self._in_private_dir(
            lambda workdir: self.backend.log_density(self._handle, clean, points, workdir, unconstrained=flag),
            "evaluating",
        )
        return np.array([lp for lp, _ in evaluated]), np.array([g for _, g in evaluated])

    def _in_private_dir(self, call: Callable[[Path], Any], doing: str = "running", *, public_data: bool = False) -> Any:
        """``call(workdir)`` with a private (0700) working directory that is removed when it
        returns, also on error, SIGTERM or interruption; errors come back redacted. The
        backend's :meth:`~pystanprivacy.sampling.backends.Backend.preflight` runs first (its
        error depends on settings only, so it comes unredacted, and nothing has started).
        ``public_data`` (simulated or public data only): Stan's message is kept with its numbers."""
        used = _RUN_PROGRAMS.get()
        if used is not None:
            if self._digest is None:
                self._digest = program_text_digest(self.program)
            used[self.name] = self._digest
        self.backend.preflight()
        remove_stale_workdirs()
        workdir = Path(tempfile.mkdtemp(prefix=_workdir_prefix()))  # created 0700
        failure: StanRunError | None = None
        terminated: list = []
        result = None
        try:
            with _signals_end_fit(self.backend.stop_chains) as terminated:
                result = call(workdir)
        except _Terminated:
            pass  # handled below, once the private directory is gone
        except Exception as exc:  # noqa: BLE001 - re-raised below, redacted
            # Stan's message can quote data: keep it redacted, and raise outside this
            # block so that the original exception (and its frames) is not chained.
            message = _shorten(str(exc)) if public_data else redact(str(exc))
            failure = StanRunError(f"Stan failed while {doing} model {self.name!r} ({type(exc).__name__}): {message}")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        if terminated:
            _deliver_sigterm(terminated)
        if failure is not None:
            raise failure
        return result

    def _run(self, data: Mapping[str, Any], settings: SamplerSettings, *, public_data: bool = False) -> Posterior:
        clean = _check_data(self.name, data)
        checkpoints = active_checkpoints()  # a resumable task's finished fits (sampling.checkpoints)
        key = None if checkpoints is None else checkpoints.key(self.key, clean, settings)
        stored = None if key is None else checkpoints.load(key)
        if stored is not None:
            raw, elapsed = stored
        else:
            start = time.perf_counter()
            raw = self._in_private_dir(
                lambda workdir: self.backend.run(self._handle, clean, settings, workdir), public_data=public_data
            )
            elapsed = time.perf_counter() - start
            if key is not None:
                checkpoints.save(key, raw, elapsed)
        return Posterior(raw, model=self.name, backend=self.backend.name, settings=settings, elapsed=elapsed)

    def __repr__(self) -> str:
        return f"StanModel({self.name!r}, backend={self.backend.name!r})"


def _compile_one(name: str, backend: str | None, raise_errors: bool = True) -> tuple[str, bool, float, str | None]:
    start = time.perf_counter()
    try:
        model = StanModel(name, backend=backend)
    except Exception as exc:  # reported to the caller when raise_errors is False
        if raise_errors:
            raise
        return name, False, time.perf_counter() - start, f"{type(exc).__name__}: {exc}"
    return name, model.was_cached, time.perf_counter() - start, None


def compile_models(
    names: Sequence[str] | None = None,
    *,
    jobs: int = 2,
    backend: str | None = None,
    raise_errors: bool = True,
) -> list[tuple[str, bool, float, str | None]]:
    """Compile (or find cached) every model in ``names`` (default: all), ``jobs`` at a time
    in separate processes (one compile is single-threaded; each needs ~1.6 GB). A name may
    also be the path of a ``.stan`` program (e.g. a test program), as for :class:`StanModel`.

    Returns ``(name, was_cached, seconds, error)`` per model; ``error`` is ``None`` unless
    ``raise_errors=False`` and the model failed to compile. The per-model file lock still
    guarantees that no two processes compile the same model at once.
    """
    import concurrent.futures
    import multiprocessing

    names = list(available_models() if names is None else names)
    for name in names:
        if str(name).endswith(".stan"):
            if not Path(name).is_file():
                raise FileNotFoundError(f"no Stan program at {name}")
        else:
            model_file(name)  # unknown names fail before any work starts
    jobs = _check_positive_int(jobs, "jobs")
    args = ([backend] * len(names), [raise_errors] * len(names))
    if jobs == 1 or len(names) <= 1:
        return [_compile_one(n, backend, raise_errors) for n in names]
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(jobs, len(names)), mp_context=ctx) as pool:
        return list(pool.map(_compile_one, names, *args))
