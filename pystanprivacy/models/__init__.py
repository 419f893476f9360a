"""The model collection: one module per paper, one Python class per Stan model.

Every class follows the one interface of :mod:`pystanprivacy.models.base` (release -> fit ->
Posterior, or ``sample_one`` for one-posterior sampling). Which class runs which Stan program
is written in one place, the JSON file beside each program (``stan/<paper>/<model>.json``,
key ``"python"``), and read through :mod:`pystanprivacy.models.registry`:

>>> from pystanprivacy.models import model_class, model_names
>>> model_class("kulkarni2022/gaussian").__name__
'GaussianLDP'
"""
from .registry import ModelEntry, model_class, model_entry, model_metadata, model_names

__all__ = ["ModelEntry", "model_class", "model_entry", "model_metadata", "model_names"]
