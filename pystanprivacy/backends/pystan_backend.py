"""pystan 3 backend (httpstan compiles offline with the system C++ compiler).

Two things pystan does by default are not acceptable for private data, and this module
changes them without touching pystan's public API:

* httpstan keeps compiled models *and fits* under ``~/.cache/httpstan``; with a random seed
  it keeps every fit (the draws) there for good, world-readable. Here compiled models go to
  pystanprivacy's own cache directory and every fit file goes into the private working
  directory of the fit, which the caller deletes when the fit ends.
* pystan prints Stan's messages to stderr; they are captured instead of printed.
* httpstan streams draws through a Unix socket file it leaves in the system temporary
  directory; it is created inside the fit's private directory instead.
"""
from __future__ import annotations

import asyncio
import contextlib
import io
import tempfile
import threading
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .base import SAMPLER_COLUMNS, Backend, RawFit, SamplerSettings

# httpstan serves one event loop per call and its fit files are addressed through a
# module-level function, so runs in one process are serialised.
_RUN_LOCK = threading.RLock()
_STATE: dict[str, Path | None] = {"cache_root": None, "fit_dir": None}


def _install_cache_redirect(cache_root: Path) -> None:
    """Point httpstan's model cache at ``cache_root`` and its fit files at the current fit's
    private directory (see module docstring)."""
    import httpstan.cache

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
    httpstan.cache._pystanprivacy_patched = True


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

    def version_tag(self) -> str:
        import httpstan
        import stan

        return f"pystan-{stan.__version__}-httpstan-{httpstan.__version__}"

    def _root(self, cache_dir: Path) -> Path:
        root = cache_dir / self.version_tag()
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        return root

    def is_compiled(self, program: str, key: str, cache_dir: Path) -> bool:
        import httpstan.models

        with _RUN_LOCK:
            _install_cache_redirect(self._root(cache_dir))
            try:
                model_dir = self._root(cache_dir) / "models" / httpstan.models.calculate_model_name(
                    program
                ).split("/")[1]
                return model_dir.is_dir() and any(p.suffix == ".so" for p in model_dir.iterdir())
            except FileNotFoundError:
                return False

    def compile(self, program: str, key: str, cache_dir: Path) -> Any:
        import stan.common

        with _RUN_LOCK:
            _install_cache_redirect(self._root(cache_dir))

            async def build() -> None:
                async with stan.common.HttpstanClient() as client:
                    resp = await client.post("/models", json={"program_code": program})
                    if resp.status != 201:
                        raise ValueError(f"Stan program failed to compile: {resp.json()['message']}")

            asyncio.run(build())
        return program

    def run(
        self,
        handle: Any,
        data: Mapping[str, Any],
        settings: SamplerSettings,
        workdir: Path,
    ) -> RawFit:
        import stan

        program = handle
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
        captured = io.StringIO()
        with _RUN_LOCK:
            _STATE["fit_dir"] = workdir
            # httpstan streams the draws through a Unix socket it creates with
            # tempfile.mkstemp and never removes: create it inside the private directory.
            saved_tempdir, tempfile.tempdir = tempfile.tempdir, str(workdir)
            try:
                with contextlib.redirect_stderr(captured), contextlib.redirect_stdout(captured):
                    posterior = stan.build(program, data=dict(data), random_seed=int(settings.seed))
                    if settings.fixed_param:
                        fit = posterior.fixed_param(**kwargs)
                    else:
                        fit = posterior.sample(**kwargs)
            finally:
                _STATE["fit_dir"] = None
                tempfile.tempdir = saved_tempdir
        if fit is None:  # pystan swallows KeyboardInterrupt and returns None
            raise KeyboardInterrupt
        chains = settings.chains
        n_draws = fit._draws.shape[1]  # noqa: SLF001 - shape of pystan's draw array

        def per_chain(flat: np.ndarray) -> np.ndarray:
            # pystan's last axis enumerates draw-major then chain: k = draw * chains + chain
            return flat.reshape(*flat.shape[:-1], n_draws, chains)

        variables: dict[str, np.ndarray] = {}
        for name, dims in zip(fit.param_names, fit.dims):
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

