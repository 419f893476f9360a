"""Jewson et al. (2023): the beta-D Bayes OPS study (:mod:`.study`, with its neural-network
experiments in :mod:`.networks`, Figure 10's network rows in :mod:`.network_features` and what
they share in :mod:`.common`), its data
(:mod:`.data`), baselines (:mod:`.baselines`) and figures (:mod:`.figures`).
"""
from __future__ import annotations

from . import study as _study
from .study import *  # noqa: F401,F403 - its public names, as listed in its __all__

__all__ = list(_study.__all__)

#: the paper protocol of :mod:`pystanprivacy.experiments`: ``--data PATH`` (PARTS comes from :mod:`.study`)
DATA_HELP = ("a folder holding adult.data, abalone.data and winequality-red.csv (default: $PYSTANPRIVACY_DATA, "
             "then the repository's data/ folder)")

#: the parts whose figure compares with DP-SGD (Figures 3, 9, 10's network rows): at full scale they need the extra
#: [dpsgd], or their saved tasks would lack the DP-SGD rows for good (the paper protocol)
FULL_EXTRAS = {part: ("dpsgd", _study.dpsgd_available) for part in ("nn_regression", "nn_classification",
                                                                       "nn_features", "dpsgd_settings",
                                                                       "dpsgd_tuned", "banknote")}
