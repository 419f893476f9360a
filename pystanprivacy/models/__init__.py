"""The model collection: one module per paper, one Python class per Stan model.

Every class follows the one interface of :mod:`pystanprivacy.models.base` (release -> fit ->
Posterior, or ``sample_one`` for one-posterior sampling). Which class runs which Stan program
is written in one place, the JSON file beside each program (``stan/<paper>/<model>.json``,
key ``"python"``), and read through :mod:`pystanprivacy.models.registry`:

>>> from pystanprivacy.models import model_class, model_names
>>> model_class("kulkarni2022/gaussian").__name__
'GaussianLDP'
"""

from __future__ import annotations

import importlib
from typing import Any

from .registry import ModelEntry, model_class, model_entry, model_metadata, model_names

#: the model modules, one per paper (``psp.models.foulds2016``...), imported on first access
PAPER_MODULES = (
    "foulds2016",
    "foulds2016_hmm",
    "bernstein2018",
    "kulkarni2022",
    "kulkarni2022_regression",
    "jewson2023",
)

# literal strings (tests/test_public_api.py checks that the paper modules are exactly PAPER_MODULES)
__all__ = [
    "ModelEntry",
    "model_class",
    "model_entry",
    "model_metadata",
    "model_names",
    "PAPER_MODULES",
    "foulds2016",
    "foulds2016_hmm",
    "bernstein2018",
    "kulkarni2022",
    "kulkarni2022_regression",
    "jewson2023",
]


def __getattr__(name: str) -> Any:
    if name in PAPER_MODULES or name in ("base", "audits", "registry", "custom"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
