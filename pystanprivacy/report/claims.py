"""Claims: one paper's sentence, where it says it, and how its cells are read from ``results/``.

Each paper's ``pystanprivacy/experiments/<paper>/claims.py`` declares ``CLAIMS``, a tuple of
:class:`Claim`, one per row of REPRODUCTION.md's verdict table (rows may be split into
sub-claims where the paper's sentence has several parts). :func:`all_claims` collects them in
the table's order. The verdict of a claim is :func:`pystanprivacy.report.rule.judge_claim` of
its parts; it is never written by hand.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pystanprivacy.report.rule import Part

__all__ = ["PAPER_ORDER", "Claim", "all_claims"]

#: the papers of the verdict table, in its order
PAPER_ORDER = ("foulds2016", "bernstein2018", "kulkarni2022", "jewson2023")

_KEY = re.compile(r"^[A-Z][A-Za-z0-9]*(-[A-Za-z0-9]+)*$")


@dataclass(frozen=True)
class Claim:
    """One row of the verdict table.

    Parameters
    ----------
    key : str
        The row's key: "F1", "J10-logistic", "K4".
    paper : str
        One of :data:`PAPER_ORDER`.
    item : str
        The table's "paper, item" column: "Foulds, Fig. 1".
    claim : str
        The paper's claim, at most 25 words.
    where : str
        Where the paper says it: "Sec. 3.2, Fig. 2".
    statistic : str
        What the cells are: "paired difference of log RMSE, βD − DP-SGD (tuned), 10 repeats".
    tables : tuple of str
        The ``results/`` files (relative to ``results/``) the cells are read from.
    figure : str or None
        ``results/``-relative path of the figure showing the verdict's statistic.
    parts : callable
        ``parts(results_dir) -> tuple[Part, ...]``: reads the ``results/`` folder and returns
        the parts, with every cell the claim names. Computes everything from the committed
        tables (no Stan), fast (< 5 s).
    number : callable
        ``number(results_dir, parts) -> str``: the table's "number" column (at most 40 words),
        with the numbers the verdict rests on, computed from the parts / tables.
    data : str
        One line when the data is not the paper's ("synthetic Iraq-style logs").
    secondary : str or callable
        Optional post-hoc subset, labelled as such; it never decides the verdict. A callable
        ``secondary(results_dir) -> str`` reads its numbers from the committed tables (as
        ``number`` does; evaluated by :func:`pystanprivacy.report.render.evaluate`).
    """

    key: str
    paper: str
    item: str
    claim: str
    where: str
    statistic: str
    tables: tuple[str, ...]
    figure: str | None
    parts: Callable[[Path], tuple[Part, ...]]
    number: Callable[[Path, tuple[Part, ...]], str]
    data: str = ""
    secondary: str | Callable[[Path], str] = ""

    def __post_init__(self) -> None:
        where = f"Claim {self.key!r}"
        if not isinstance(self.key, str) or not _KEY.match(self.key):
            raise ValueError(f"Claim: key={self.key!r}; a key like 'F1', 'J10-logistic' is required")
        if self.paper not in PAPER_ORDER:
            raise ValueError(f"{where}: paper={self.paper!r}; allowed: {', '.join(PAPER_ORDER)}")
        for name in ("item", "claim", "where", "statistic"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{where}: {name}={value!r}; a non-empty string is required")
        n_words = len(self.claim.split())
        if n_words > 25:
            raise ValueError(f"{where}: claim has {n_words} words; at most 25 are allowed")
        if (
            not isinstance(self.tables, tuple)
            or not self.tables
            or not all(isinstance(t, str) and t for t in self.tables)
        ):
            raise ValueError(
                f"{where}: tables={self.tables!r}; a non-empty tuple of results/-relative paths is required"
            )
        for path in (*self.tables, *((self.figure,) if self.figure is not None else ())):
            if Path(path).is_absolute() or ".." in Path(path).parts:
                raise ValueError(f"{where}: path {path!r} must be relative to results/ and stay inside it")
        if not callable(self.parts) or not callable(self.number):
            raise TypeError(f"{where}: parts and number must be callables")
        if not isinstance(self.data, str):
            raise TypeError(f"{where}: data={self.data!r}; a string is required")
        if not isinstance(self.secondary, str) and not callable(self.secondary):
            raise TypeError(f"{where}: secondary={self.secondary!r}; a string or a callable is required")


def all_claims(*, papers: tuple[str, ...] = PAPER_ORDER) -> tuple[Claim, ...]:
    """Every paper's ``CLAIMS``, in the table's order (Foulds, Bernstein, Kulkarni, Jewson).

    Imports ``pystanprivacy.experiments.<paper>.claims`` for each paper; a paper without a
    claims module is skipped.

    Parameters
    ----------
    papers : tuple of str
        Which papers (a subset of :data:`PAPER_ORDER`, in any order; the result follows
        :data:`PAPER_ORDER`).

    Returns
    -------
    tuple of Claim

    Raises
    ------
    ValueError
        An unknown paper; a claims module whose ``CLAIMS`` is not a tuple of :class:`Claim` of
        that paper; two claims with the same key.
    """
    unknown = [p for p in papers if p not in PAPER_ORDER]
    if unknown:
        raise ValueError(f"all_claims: papers={papers!r}; unknown {unknown}, allowed: {', '.join(PAPER_ORDER)}")
    claims: list[Claim] = []
    for paper in PAPER_ORDER:
        if paper not in papers:
            continue
        name = f"pystanprivacy.experiments.{paper}.claims"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # the module exists but one of its imports is missing: a real error
                raise
            continue
        found = getattr(module, "CLAIMS", None)
        if not isinstance(found, tuple) or not all(isinstance(c, Claim) for c in found):
            raise ValueError(f"{name}.CLAIMS must be a tuple of Claim, got {type(found).__name__}")
        wrong = [c.key for c in found if c.paper != paper]
        if wrong:
            raise ValueError(f"{name}.CLAIMS: claims {wrong} declare another paper than {paper!r}")
        claims.extend(found)
    keys = [c.key for c in claims]
    duplicated = sorted({k for k in keys if keys.count(k) > 1})
    if duplicated:
        raise ValueError(f"all_claims: duplicated claim keys {duplicated}")
    return tuple(claims)
