"""pystanprivacy: differentially private Bayesian inference with Stan.

One curated import surface::

    import pystanprivacy as psp

    accountant = psp.PrivacyAccountant(epsilon=1.0)
    release = psp.models.foulds2016.BetaBernoulli.release(x, epsilon=0.5, accountant=accountant)
    posterior = psp.models.foulds2016.BetaBernoulli().fit(release)   # carries release.record
    psp.models.model_class("kulkarni2022/gaussian")                 # the registry

The layers, each a subpackage (loaded on first use, so ``import pystanprivacy`` stays light):

* :mod:`pystanprivacy.privacy` -- records, accountant, exact noise, mechanisms, LDP reports, audit;
* :mod:`pystanprivacy.sampling` -- Stan programs and compile cache, backends, :class:`Posterior`;
* :mod:`pystanprivacy.models` -- one module per paper, one class per ``.stan`` model, the registry;
* :mod:`pystanprivacy.experiments` -- each paper's reproduction (``pystanprivacy reproduce``);
* :mod:`pystanprivacy.datasets`, :mod:`pystanprivacy.run` -- shared data loaders; the task runner.

Names at the top level: the privacy records (:class:`Release`, :class:`PrivacyRecord`,
:class:`PrivacyAccountant` -- basic or tight composition, ``composition="basic" | "zcdp" | "rdp" | "pld"`` --,
:class:`BudgetExceededError`), the mechanisms most releases need
(:class:`Laplace`, :class:`Gaussian`, :class:`AnalyticGaussian`, :class:`RandomizedResponse`,
:class:`OptimalUnaryEncoding`), the model interface (:class:`Model`, :class:`OPSModel`,
:class:`OPSResult`, :func:`model_class`, :func:`model_names`), a user's own program
(:class:`StanProgram`, fitted on a :class:`Release`) and what a fit returns
(:class:`Posterior`, :class:`Thresholds`, :class:`ConvergenceError`).
"""

from __future__ import annotations

import importlib
from typing import Any

from . import _moved
from .privacy.records import BudgetExceededError, PrivacyAccountant, PrivacyRecord, Release

_moved.install()

__version__ = "0.2.0"

#: the layer subpackages, imported on first attribute access
_SUBPACKAGES = ("privacy", "sampling", "models", "experiments", "datasets", "run")
#: curated names loaded on first use: name -> module holding it
_LAZY = {
    **{
        name: "pystanprivacy.privacy.mechanisms"
        for name in ("Laplace", "Gaussian", "AnalyticGaussian", "RandomizedResponse", "OptimalUnaryEncoding")
    },
    **{name: "pystanprivacy.models.base" for name in ("Model", "OPSModel", "OPSResult")},
    **{name: "pystanprivacy.models.registry" for name in ("model_class", "model_names")},
    "StanProgram": "pystanprivacy.models.custom",
    **{name: "pystanprivacy.sampling.posterior" for name in ("Posterior", "Thresholds", "ConvergenceError")},
}

# every entry a literal string, so that static tools read the public names (tests/test_public_api.py
# checks that the list holds exactly the eager names, _LAZY and _SUBPACKAGES)
__all__ = [
    "BudgetExceededError",
    "PrivacyAccountant",
    "PrivacyRecord",
    "Release",
    "Laplace",
    "Gaussian",
    "AnalyticGaussian",
    "RandomizedResponse",
    "OptimalUnaryEncoding",
    "Model",
    "OPSModel",
    "OPSResult",
    "model_class",
    "model_names",
    "StanProgram",
    "Posterior",
    "Thresholds",
    "ConvergenceError",
    "privacy",
    "sampling",
    "models",
    "experiments",
    "datasets",
    "run",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY:
        if _LAZY[name] == "pystanprivacy.sampling.posterior":
            # models.base registers the record check that Posterior.load applies (the sampling
            # layer cannot import the privacy layer): psp.Posterior.load validates records
            importlib.import_module("pystanprivacy.models.base")
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
