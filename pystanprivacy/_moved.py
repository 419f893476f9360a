"""Old import paths (before the 0.2 layout) that keep working for one release.

``import pystanprivacy.mechanisms`` (and every other path in :data:`MOVED`) still works: a
finder on ``sys.meta_path`` imports the module's new home, warns with a
``DeprecationWarning`` naming it, and binds the old name to the *same* module object, so
attributes read or patched through either name are the same. ``None`` marks a former package
whose modules all moved (importing it gives an empty package that only serves those paths).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

#: old dotted path -> new dotted path (None: a former package with no module of its own)
MOVED: dict[str, str | None] = {
    "pystanprivacy.noise": 'pystanprivacy.privacy.noise',
    "pystanprivacy.mechanisms": 'pystanprivacy.privacy.mechanisms',
    "pystanprivacy.ldp": 'pystanprivacy.privacy.ldp',
    "pystanprivacy.audit": 'pystanprivacy.privacy.audit',
    "pystanprivacy.stan": 'pystanprivacy.sampling.stan',
    "pystanprivacy.backends": 'pystanprivacy.sampling.backends',
    "pystanprivacy.backends.base": 'pystanprivacy.sampling.backends.base',
    "pystanprivacy.backends.cmdstanpy_backend": 'pystanprivacy.sampling.backends.cmdstanpy_backend',
    "pystanprivacy.backends.pystan_backend": 'pystanprivacy.sampling.backends.pystan_backend',
    "pystanprivacy.backends.workdirs": 'pystanprivacy.sampling.backends.workdirs',
    "pystanprivacy.posterior": 'pystanprivacy.sampling.posterior',
    "pystanprivacy.mcmc_diagnostics": 'pystanprivacy.sampling.diagnostics',
    "pystanprivacy.evaluate": 'pystanprivacy.sampling.evaluate',
    "pystanprivacy.audits": 'pystanprivacy.models.audits',
    "pystanprivacy.runner": 'pystanprivacy.run.runner',
    "pystanprivacy.cluster": 'pystanprivacy.run.cluster',
    "pystanprivacy._dask_plugin": 'pystanprivacy.run._dask_plugin',
    "pystanprivacy.experiments.script": 'pystanprivacy.run.script',
    "pystanprivacy.kosarak": 'pystanprivacy.experiments.kulkarni2022.kosarak',
    "pystanprivacy.jewson_data": 'pystanprivacy.experiments.jewson2023.data',
    "pystanprivacy.kulkarni_data": 'pystanprivacy.experiments.kulkarni2022.data',
    "pystanprivacy.uci": 'pystanprivacy.datasets.uci',
    "pystanprivacy.plots": 'pystanprivacy.experiments.foulds2016.figures',
    "pystanprivacy.plots_hmm": 'pystanprivacy.experiments.foulds2016.hmm_figures',
    "pystanprivacy.plots_jewson2023": 'pystanprivacy.experiments.jewson2023.figures',
    "pystanprivacy.plots_kulkarni2022": 'pystanprivacy.experiments.kulkarni2022.figures',
    "pystanprivacy.baselines": None,
    "pystanprivacy.baselines.bernstein2018": 'pystanprivacy.experiments.bernstein2018.baselines',
    "pystanprivacy.baselines.jewson2023": 'pystanprivacy.experiments.jewson2023.baselines',
    "pystanprivacy.baselines.ldp_sgd": 'pystanprivacy.experiments.kulkarni2022.ldp_sgd',
    "pystanprivacy.baselines.oue": 'pystanprivacy.experiments.kulkarni2022.oue',
    "pystanprivacy.experiments.foulds2016_hmm": 'pystanprivacy.experiments.foulds2016.hmm',
    "pystanprivacy.experiments.kulkarni2022_regression": 'pystanprivacy.experiments.kulkarni2022.regression',
}

REMOVAL = "0.3"


class _MovedLoader(importlib.abc.Loader):
    def create_module(self, spec):  # the default module, replaced in exec_module
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        old = module.__name__
        new = MOVED[old]
        if new is None:
            module.__path__ = []  # a package, so that its moved submodules can be imported
            warnings.warn(
                f"{old} is no longer a package: its modules moved (see pystanprivacy._moved.MOVED); "
                f"the old paths will be removed in {REMOVAL}",
                DeprecationWarning,
                stacklevel=2,
            )
            return
        warnings.warn(
            f"{old} moved to {new}; import it from there (the old path will be removed in {REMOVAL})",
            DeprecationWarning,
            stacklevel=2,
        )
        # (stacklevel 2: warnings skips importlib's frames, so it names the importing line)
        # importlib returns sys.modules[name] after exec_module: bind the old name to the new module
        sys.modules[old] = importlib.import_module(new)


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED:
            return importlib.util.spec_from_loader(fullname, _MovedLoader(), is_package=MOVED[fullname] is None)
        return None


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
