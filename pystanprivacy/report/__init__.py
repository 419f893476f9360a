"""Verdicts as code: the written rule, the claims registry and the verdict table.

REPRODUCTION.md's verdict table is the output of ``pystanprivacy report``: every claim of
every paper (:func:`~pystanprivacy.report.claims.all_claims`) is read from ``results/`` and
judged by one written rule (:mod:`pystanprivacy.report.rule`).
"""

from __future__ import annotations

from pystanprivacy.report.claims import PAPER_ORDER, Claim, all_claims
from pystanprivacy.report.rule import (
    AGREEMENT,
    DIRECTION,
    NO_WORSE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    PARTLY,
    REPRODUCED,
    Cell,
    CellDecision,
    Judgement,
    Part,
    holm_reject,
    judge_claim,
    judge_part,
)

__all__ = [
    "AGREEMENT",
    "DIRECTION",
    "NO_WORSE",
    "NOT_REPRODUCED",
    "NOT_TESTABLE",
    "PAPER_ORDER",
    "PARTLY",
    "REPRODUCED",
    "Cell",
    "CellDecision",
    "Claim",
    "Judgement",
    "Part",
    "all_claims",
    "holm_reject",
    "judge_claim",
    "judge_part",
]
