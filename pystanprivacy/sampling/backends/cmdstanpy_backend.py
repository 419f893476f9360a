"""cmdstanpy backend: used when a CmdStan installation is found (``CMDSTAN`` or ``~/.cmdstan``).

Only the documented cmdstanpy API is used (imported through
:func:`~pystanprivacy.sampling.backends.workdirs.import_cmdstanpy`, so that the temporary folder it makes
at import time is private and removed even after the process is killed). CmdStan is never downloaded: if no installation
is found the backend reports itself unavailable. Every file a run writes (the data JSON,
the per-chain CSV files, console output) goes into the private working directory of the fit,
which the caller removes when the fit ends; draws are read into memory before that.
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .base import SAMPLER_COLUMNS, Backend, RawFit, SamplerSettings, parallel_chains
from .workdirs import import_cmdstanpy


_LOGGING_SET: list[bool] = []


def _cmdstanpy():
    """cmdstanpy, imported privately (:func:`import_cmdstanpy`), with its logger at WARNING.

    cmdstanpy configures its logger on the first call of ``cmdstanpy.utils.get_logger`` (level
    DEBUG, an INFO handler on stderr), which would undo a level set before: that call is made
    here first, so the level set after it stays and no INFO line per fit reaches stderr."""
    cmdstanpy = import_cmdstanpy()
    if not _LOGGING_SET:
        cmdstanpy.utils.get_logger().setLevel(logging.WARNING)
        _LOGGING_SET.append(True)
    return cmdstanpy


def _cmdstan_version() -> str:
    """The installed CmdStan's version, ``major.minor`` (``cmdstanpy.utils.cmdstan_version``),
    or ``"unknown"``."""
    version = _cmdstanpy().utils.cmdstan_version()
    return ".".join(map(str, version)) if version else "unknown"


def _cmdstan_path() -> str | None:
    """The CmdStan installation cmdstanpy would use, or ``None``; never installs one."""
    try:
        cmdstanpy = _cmdstanpy()
    except ImportError:
        return None
    try:
        return cmdstanpy.cmdstan_path()
    except (ValueError, RuntimeError):
        return None


class CmdStanPyBackend(Backend):
    name = "cmdstanpy"

    @classmethod
    def availability(cls) -> str | None:
        try:
            _cmdstanpy()
        except ImportError as exc:  # pragma: no cover - cmdstanpy is a dependency
            return f"cmdstanpy cannot be imported ({exc})"
        if _cmdstan_path() is None:
            return (
                "no CmdStan installation found (set CMDSTAN to its folder or install it in "
                "~/.cmdstan; pystanprivacy never downloads CmdStan)"
            )
        return None

    def version_tag(self) -> str:
        """cmdstanpy's version, CmdStan's version (``cmdstan_version()``, so an in-place
        upgrade of CmdStan gets new executables) and a hash of CmdStan's folder (two
        installations of one version do not share executables)."""
        cmdstanpy = _cmdstanpy()
        path = _cmdstan_path()
        where = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:8] if path else "none"
        version = _cmdstan_version() if path else "none"
        return f"cmdstanpy-{cmdstanpy.__version__}-cmdstan-{version}-{where}"

    def _model_dir(self, key: str, cache_dir: Path) -> Path:
        d = cache_dir
        for part in (self.version_tag(), key):  # each level private (parents=True would make 0755)
            d = d / part
            d.mkdir(exist_ok=True, mode=0o700)
        return d

    def is_compiled(self, program: str, key: str, cache_dir: Path) -> bool:
        d = cache_dir / self.version_tag() / key
        return (d / ("model" + (".exe" if os.name == "nt" else ""))).exists()

    def compile(self, program: str, key: str, cache_dir: Path) -> Any:
        cmdstanpy = _cmdstanpy()
        d = self._model_dir(key, cache_dir)
        stan_file = d / "model.stan"
        if not stan_file.exists() or stan_file.read_text() != program:
            stan_file.write_text(program)
        exe = d / ("model" + (".exe" if os.name == "nt" else ""))
        if exe.exists():
            return cmdstanpy.CmdStanModel(stan_file=str(stan_file), exe_file=str(exe))
        return cmdstanpy.CmdStanModel(stan_file=str(stan_file), force_compile=True)

    def log_density(
        self,
        handle: Any,
        data: Mapping[str, Any],
        params: Sequence[Any],
        workdir: Path,
        *,
        unconstrained: bool = False,
    ) -> list[tuple[float, np.ndarray]]:
        """CmdStan's ``log_prob`` method (CmdStan >= 2.31), run on the model's executable
        (``CmdStanModel.exe_file``) with every file in ``workdir`` (cmdstanpy's own
        ``CmdStanModel.log_prob`` leaves its output in a folder it does not remove)."""
        import pandas as pd

        cmdstanpy = _cmdstanpy()
        data_file = workdir / "data.json"
        cmdstanpy.write_stan_json(str(data_file), dict(data))
        os.chmod(data_file, 0o600)
        out = []
        for i, p in enumerate(params):
            params_file = workdir / f"params-{i}.json"
            # an unconstrained point is the vector params_r (CmdStan's log_prob documentation)
            cmdstanpy.write_stan_json(str(params_file), {"params_r": list(p)} if unconstrained else dict(p))
            os.chmod(params_file, 0o600)
            output = workdir / f"log_prob-{i}.csv"
            which = "unconstrained_params" if unconstrained else "constrained_params"
            cmd = [str(handle.exe_file), "log_prob", f"{which}={params_file}", "jacobian=1",
                   "data", f"file={data_file}", "output", f"file={output}", "sig_figs=18"]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=str(workdir))
            if proc.returncode:
                # the caller redacts the message; CmdStan's output can quote data values
                raise RuntimeError(f"CmdStan's log_prob method failed (return code {proc.returncode}): "
                                   f"{proc.stderr.strip() or proc.stdout.strip()}")
            row = pd.read_csv(output, comment="#").iloc[0].to_numpy(dtype=float)  # lp__, then the gradient
            out.append((float(row[0]), np.asarray(row[1:], dtype=float)))
        return out

    def run(
        self,
        handle: Any,
        data: Mapping[str, Any],
        settings: SamplerSettings,
        workdir: Path,
    ) -> RawFit:
        cmdstanpy = _cmdstanpy()

        data_file = workdir / "data.json"
        cmdstanpy.write_stan_json(str(data_file), dict(data))
        os.chmod(data_file, 0o600)
        out_dir = workdir / "output"
        out_dir.mkdir(mode=0o700)
        inits = None
        if settings.init is not None:
            inits = []
            for i, init in enumerate(settings.init):
                path = workdir / f"init-{i}.json"
                cmdstanpy.write_stan_json(str(path), dict(init))
                inits.append(str(path))
        kwargs: dict[str, Any] = dict(
            data=str(data_file),
            chains=settings.chains,
            parallel_chains=parallel_chains(settings.chains),
            iter_sampling=settings.draws,
            thin=settings.thin,
            seed=int(settings.seed),
            inits=inits,
            output_dir=str(out_dir),
            show_progress=False,
            show_console=False,
            sig_figs=15,
        )
        if settings.fixed_param:
            kwargs["fixed_param"] = True
        else:
            kwargs.update(
                iter_warmup=settings.warmup,
                adapt_delta=settings.adapt_delta,
                max_treedepth=settings.max_treedepth,
            )
        fit = handle.sample(**kwargs)
        variables: dict[str, np.ndarray] = {}
        chains = fit.chains
        for name in fit.metadata.stan_vars:
            arr = np.asarray(fit.stan_variable(name), dtype=float)  # (chains*draws, *dims)
            variables[name] = np.ascontiguousarray(arr.reshape(chains, -1, *arr.shape[1:]))
        sampler = {}
        for col, arr in fit.method_variables().items():  # (draws, chains)
            if col in SAMPLER_COLUMNS:
                sampler[col] = np.ascontiguousarray(np.asarray(arr, dtype=float).T)
        shutil.rmtree(out_dir, ignore_errors=True)
        return RawFit(variables=variables, sampler=sampler)
