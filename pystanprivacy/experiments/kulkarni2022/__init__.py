"""Kulkarni et al. (2022): the LDP Gaussian/exponential/histogram study (:mod:`.study`), the
regressions (:mod:`.regression`), their data (:mod:`.data`, :mod:`.kosarak`), baselines
(:mod:`.oue`, :mod:`.ldp_sgd`) and figures (:mod:`.figures`).
"""
from __future__ import annotations

from . import study as _study
from .study import *  # noqa: F401,F403 - its public names, as listed in its __all__

__all__ = list(_study.__all__)

#: the paper protocol of :mod:`pystanprivacy.experiments`: ``--data PATH`` (PARTS comes from :mod:`.study`)
#: the parts that read ``--data`` (the optional ``DATA_PARTS`` of the paper protocol)
DATA_PARTS = ("kosarak",)
DATA_HELP = ("a Kosarak click-stream file (one session of space-separated item ids per line, plain or gzip) or a "
             "folder holding kosarak.dat, for Figure 2 (default: the shipped prefix kosarak_prefix.dat.gz, the "
             "first 36,683 transactions)")
