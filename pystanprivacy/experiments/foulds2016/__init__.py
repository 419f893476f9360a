"""Foulds et al. (2016): the beta-Bernoulli study (:mod:`.beta_bernoulli`, figures in
:mod:`.figures`) and the private naive-Bayes HMM on war logs (:mod:`.hmm`, :mod:`.warlogs`,
:mod:`.hmm_figures`). ``reproduce`` runs both.
"""
from __future__ import annotations

from . import beta_bernoulli as _beta_bernoulli
from .beta_bernoulli import *  # noqa: F401,F403 - its public names, as listed in its __all__

__all__ = list(_beta_bernoulli.__all__)

#: ``--data PATH`` of ``pystanprivacy reproduce foulds2016`` (PARTS comes from :mod:`.beta_bernoulli`)
#: the parts that read ``--data`` (the optional ``DATA_PARTS`` of the paper protocol)
DATA_PARTS = ("hmm", "hmm_occupancy")
DATA_HELP = "a war-logs CSV file (Afghanistan or Iraq schema) for the HMM study (default: synthetic war logs)"
