"""The written rule that turns a claim's statistics into a verdict word.

Every row of REPRODUCTION.md's verdict table is judged by this rule, applied by
:func:`judge_part` and :func:`judge_claim`; nobody writes a verdict word by hand.

A claim is one or more **parts** (sub-claims). Each part has a ``kind`` and **cells**: every
cell the claim names, fixed in code before the results are read (the paper's grid). Per cell
``z = estimate / se``; ``estimate`` is signed so that > 0 is the paper's stated direction
("direction" parts) or is the departure observed − stated ("agreement" parts).

**kind = "direction"** (the paper says A is better / larger / falls, in the cells it names).
A cell *supports* if ``z >= 2`` and *contradicts* if ``z <= -2`` (one-sided
``Φ(−2) = 2.28 %`` each by chance). A cell of a test whose statistic is not a z (a
Kolmogorov–Smirnov test that a method is miscalibrated) may give its one-sided ``p_value`` in the
claim's direction instead: it supports if ``p <= Φ(−2)``, contradicts if ``p >= Φ(2)``, and its
z is shown as ``Φ⁻¹(1 − p)``.

* **Reproduced**: every cell supports. This is an intersection–union test (Berger 1982): each
  cell at one-sided 2.28 %, which needs no multiplicity correction.
* **Partly**: not every cell supports, but at least one supports after Holm's step-down
  correction (Holm 1979) of the cells' one-sided p-values ``Φ(−z)`` at family-wise level
  ``Φ(−2) = 0.0228``, so more cells support than chance explains.
* **Not reproduced**: no cell supports after Holm's correction.
* Always shown beside it: "k of m cells beyond 2 SE (m × 0.0228 = e expected by chance),
  c against".

**kind = "agreement"** (the paper states a value or "no difference": calibration, an ARE,
"similar"). Cells give ``estimate`` = observed − stated and its ``se`` (two-sided p-value
``2 Φ(−|z|)``), or a two-sided ``p_value`` for tests such as Kolmogorov–Smirnov whose
statistic is not a z. A cell *departs* if it is rejected by Holm's step-down correction over
the part's cells at family-wise two-sided level 0.05.

* **Reproduced**: no cell departs; **Partly**: some but not all depart; **Not reproduced**:
  every cell departs.

**kind = "no worse"** (the paper says A is *at least as good as* B, "≥"). ``estimate > 0`` is A
better. A cell *falls short* if it is rejected by Holm's correction of the one-sided p-values
``Φ(z)`` (evidence that A is worse) at family-wise level ``Φ(−2) = 0.0228``.

* **Reproduced**: no cell falls short; **Partly**: some but not all do; **Not reproduced**:
  every cell falls short. Shown beside it: how many cells are beyond +2 SE and below −2 SE.
  Without a margin stated by the paper this is a test of "no evidence that A is worse": use it
  only where the paper's words are "at least as good", never for "better".

**Not testable here**: the part declares ``untestable="<reason>"`` and has no cells.

**A claim's verdict** from the verdicts of its testable parts: all Reproduced → Reproduced; all
Not reproduced → Not reproduced; otherwise Partly. Untestable parts are set aside (the table
names them beside the word); a claim none of whose parts can be tested is Not testable here.

**Exact cells.** ``se = 0`` states an exact statistic (no sampling noise): ``z`` is ``+∞`` or
``−∞`` by the sign of the estimate, and 0 when the estimate is 0 (a paired difference whose
pairs are all equal). A NaN or infinite estimate, a negative or non-finite ``se``, or a cell
without the uncertainty its kind needs is an error naming the cell.

**Refused releases** are counted, never dropped: a claims module scores a refused release by
one stated rule inside the cell's paired differences, and the cell carries ``refused`` and
``attempts`` so that the refusal rate is shown beside it.

References
----------
Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian
Journal of Statistics* 6(2), 65–70.

Berger, R. L. (1982). Multiparameter hypothesis testing and acceptance sampling.
*Technometrics* 24(4), 295–300.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

__all__ = [
    "AGREEMENT",
    "AGREEMENT_LEVEL",
    "DIRECTION",
    "DIRECTION_LEVEL",
    "KINDS",
    "NO_WORSE",
    "NOT_REPRODUCED",
    "NOT_TESTABLE",
    "PARTLY",
    "REPRODUCED",
    "SUPPORT_Z",
    "VERDICTS",
    "Cell",
    "CellDecision",
    "Judgement",
    "Part",
    "holm_reject",
    "judge_claim",
    "judge_part",
]

REPRODUCED = "Reproduced"
PARTLY = "Partly"
NOT_REPRODUCED = "Not reproduced"
NOT_TESTABLE = "Not testable here"
#: the verdict words, in the order of the rule
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_TESTABLE)

DIRECTION = "direction"
AGREEMENT = "agreement"
NO_WORSE = "no worse"
#: the kinds of part
KINDS = (DIRECTION, AGREEMENT, NO_WORSE)

#: a direction cell supports at z >= 2 and contradicts at z <= -2
SUPPORT_Z = 2.0
#: one-sided level of one direction cell and family-wise level of Holm's correction: Φ(−2)
DIRECTION_LEVEL = float(norm.sf(SUPPORT_Z))
#: family-wise two-sided level of an agreement part's Holm correction
AGREEMENT_LEVEL = 0.05


@dataclass(frozen=True)
class Cell:
    """One cell of a part: a statistic and its uncertainty.

    Parameters
    ----------
    label : str
        What the cell is, for the per-cell table ("Wine, ε = 1, n = 200").
    estimate : float
        Signed: > 0 is the claim's direction ("direction" parts); observed − stated
        ("agreement" parts). Must be finite.
    se : float or None
        Standard error of ``estimate`` (paired differences: sd / sqrt(n)); 0 for an exact
        statistic. Finite and >= 0.
    p_value : float or None
        Instead of ``se``: a two-sided p-value in [0, 1] ("agreement" cells) or a one-sided
        p-value in the claim's direction ("direction" cells).
    n : int or None
        Pairs / runs behind the cell (>= 1).
    refused : int
        Releases refused in this cell (scored by the claims module's stated rule).
    attempts : int
        Releases attempted in this cell (0: not a release cell); ``refused <= attempts``.
    """

    label: str
    estimate: float
    se: float | None = None
    p_value: float | None = None
    n: int | None = None
    refused: int = 0
    attempts: int = 0

    def __post_init__(self) -> None:
        where = f"cell {self.label!r}"
        if not isinstance(self.label, str) or not self.label:
            raise ValueError(f"Cell: label={self.label!r}; a non-empty string is required")
        if not _is_real(self.estimate) or not math.isfinite(self.estimate):
            raise ValueError(f"{where}: estimate={self.estimate!r}; a finite number is required")
        if self.se is not None and (not _is_real(self.se) or not math.isfinite(self.se) or self.se < 0):
            raise ValueError(f"{where}: se={self.se!r}; a finite number >= 0 (or None) is required")
        if self.p_value is not None and (not _is_real(self.p_value) or not 0.0 <= self.p_value <= 1.0):
            raise ValueError(f"{where}: p_value={self.p_value!r}; a number in [0, 1] (or None) is required")
        if self.se is not None and self.p_value is not None:
            raise ValueError(f"{where}: se={self.se!r} and p_value={self.p_value!r}; give one of them, not both")
        if self.n is not None and (not _is_int(self.n) or self.n < 1):
            raise ValueError(f"{where}: n={self.n!r}; an integer >= 1 (or None) is required")
        for name in ("refused", "attempts"):
            value = getattr(self, name)
            if not _is_int(value) or value < 0:
                raise ValueError(f"{where}: {name}={value!r}; an integer >= 0 is required")
        if self.refused > self.attempts:
            raise ValueError(
                f"{where}: refused={self.refused!r} > attempts={self.attempts!r}; "
                "a cell cannot refuse more releases than it attempted"
            )

    @property
    def z(self) -> float | None:
        """``estimate / se`` (±∞ when ``se = 0`` and the estimate is not 0), or None without ``se``."""
        if self.se is None:
            return None
        if self.se == 0.0:
            return 0.0 if self.estimate == 0.0 else math.copysign(math.inf, self.estimate)
        return self.estimate / self.se


@dataclass(frozen=True)
class Part:
    """One sub-claim: its kind and the cells it is judged on.

    Parameters
    ----------
    text : str
        The sub-claim in a few words ("DP-SGD better at small n").
    kind : str
        ``"direction"``, ``"agreement"`` or ``"no worse"``.
    cells : tuple of Cell
        Every cell the sub-claim names (empty only when ``untestable`` is set).
    untestable : str or None
        One-line reason when the data or setup here cannot test the sub-claim.
    """

    text: str
    kind: str
    cells: tuple[Cell, ...] = ()
    untestable: str | None = None

    def __post_init__(self) -> None:
        where = f"part {self.text!r}"
        if not isinstance(self.text, str) or not self.text:
            raise ValueError(f"Part: text={self.text!r}; a non-empty string is required")
        if self.kind not in KINDS:
            raise ValueError(f"{where}: kind={self.kind!r}; allowed: {', '.join(map(repr, KINDS))}")
        if not isinstance(self.cells, tuple) or not all(isinstance(c, Cell) for c in self.cells):
            raise ValueError(f"{where}: cells must be a tuple of Cell, got {type(self.cells).__name__}")
        if self.untestable is not None:
            if not isinstance(self.untestable, str) or not self.untestable:
                raise ValueError(f"{where}: untestable={self.untestable!r}; a non-empty reason is required")
            if self.cells:
                raise ValueError(
                    f"{where}: untestable={self.untestable!r} with {len(self.cells)} cells; an untestable part has no cells"
                )
        elif not self.cells:
            raise ValueError(f"{where}: no cells and no untestable reason; a part is judged on at least one cell")
        labels = [c.label for c in self.cells]
        duplicated = sorted({x for x in labels if labels.count(x) > 1})
        if duplicated:
            raise ValueError(f"{where}: duplicated cell labels {duplicated}; each cell needs its own label")


@dataclass(frozen=True)
class CellDecision:
    """What the rule decided for one cell.

    ``p`` is one-sided ``Φ(−z)`` (direction), two-sided (agreement) or one-sided ``Φ(z)``
    against the claim (no worse); ``holm`` is True when Holm's correction over the part's cells
    rejects it (direction: supports after Holm; agreement: departs; no worse: falls short).
    ``beyond`` is +1 / −1 when the cell is beyond +2 / −2 SE (direction and no worse), else 0
    (always 0 for agreement cells).
    """

    cell: Cell
    z: float | None
    p: float
    holm: bool
    beyond: int


@dataclass(frozen=True)
class Judgement:
    """The verdict of a part or of a claim, with the counts it rests on.

    For a claim the counts are the sums over its parts and ``parts`` holds the parts' judgements.
    ``chance_expected`` is ``m × Φ(−2)`` over the direction cells.
    """

    verdict: str
    kind: str | None = None
    n_cells: int = 0
    n_support: int = 0
    n_contradict: int = 0
    chance_expected: float = 0.0
    holm_support: int = 0
    n_depart: int = 0
    n_agreement_cells: int = 0
    n_short: int = 0
    n_no_worse_cells: int = 0
    decisions: tuple[CellDecision, ...] = ()
    parts: tuple[Judgement, ...] = ()
    untestable: str | None = None

    @property
    def summary(self) -> str:
        """The counts the verdict rests on, in words (a claim: its parts' summaries)."""
        if self.parts:
            return "; ".join(p.summary for p in self.parts)
        if self.verdict == NOT_TESTABLE and self.n_cells == 0:
            return f"not testable: {self.untestable}" if self.untestable else "not testable"
        m = self.n_cells
        if self.kind == AGREEMENT:
            return f"{self.n_depart} of {m} cells depart (Holm, two-sided 5 %)"
        if self.kind == NO_WORSE:
            return (
                f"{self.n_short} of {m} cells fall short (Holm, one-sided 2.28 %); "
                f"{self.n_support} beyond +2 SE, {self.n_contradict} below −2 SE"
            )
        return (
            f"{self.n_support} of {m} cells beyond 2 SE "
            f"({m} × 0.0228 = {self.chance_expected:.2g} expected by chance), {self.n_contradict} against"
        )


def holm_reject(p_values: Sequence[float], *, alpha: float) -> np.ndarray:
    """Holm's step-down procedure (Holm 1979): which hypotheses are rejected.

    Sort the p-values ascending, ``p_(1) <= ... <= p_(m)``; reject ``H_(1), ..., H_(k)`` where
    ``k`` is the largest index with ``p_(j) <= alpha / (m − j + 1)`` for every ``j <= k``.
    Controls the family-wise error rate at ``alpha`` under any dependence.

    Parameters
    ----------
    p_values : sequence of float
        The p-values, each in [0, 1].
    alpha : float
        Family-wise level in (0, 1).

    Returns
    -------
    numpy.ndarray of bool
        Rejections, in the input order.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"holm_reject: alpha={alpha!r}; a level in (0, 1) is required")
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"holm_reject: p_values={p_values!r}; a 1-d sequence of numbers in [0, 1] is required")
    m = p.size
    reject = np.zeros(m, dtype=bool)
    order = np.argsort(p, kind="stable")
    for step, idx in enumerate(order):
        if p[idx] > alpha / (m - step):
            break
        reject[idx] = True
    return reject


def judge_part(part: Part) -> Judgement:
    """Judge one part by the rule (module docstring).

    Parameters
    ----------
    part : Part
        The sub-claim and its cells.

    Returns
    -------
    Judgement
        Its verdict, counts and per-cell decisions.

    Raises
    ------
    ValueError
        A direction cell without ``se`` or with a ``p_value``; an agreement cell with neither;
        the message names the part and the cell.
    """
    if not isinstance(part, Part):
        raise TypeError(f"judge_part: part must be a Part, got {type(part).__name__}")
    if part.untestable is not None:
        return Judgement(verdict=NOT_TESTABLE, kind=part.kind, untestable=part.untestable)
    if part.kind == DIRECTION:
        return _judge_direction(part)
    if part.kind == NO_WORSE:
        return _judge_no_worse(part)
    return _judge_agreement(part)


def judge_claim(parts: Sequence[Part]) -> Judgement:
    """Judge a claim from its testable parts: all Reproduced → Reproduced; all Not reproduced →
    Not reproduced; otherwise Partly. Untestable parts are set aside; with no testable part the
    claim is Not testable here.

    Parameters
    ----------
    parts : sequence of Part
        The claim's parts (at least one).

    Returns
    -------
    Judgement
        The claim's verdict, the summed counts and each part's judgement in ``parts``.
    """
    parts = tuple(parts)
    if not parts:
        raise ValueError("judge_claim: parts=(); a claim has at least one part")
    texts = [p.text for p in parts if isinstance(p, Part)]
    duplicated = sorted({t for t in texts if texts.count(t) > 1})
    if duplicated:
        raise ValueError(f"judge_claim: duplicated part texts {duplicated}; each part needs its own text")
    judged = tuple(judge_part(p) for p in parts)
    # untestable parts are set aside (the verdict cell names them): the word comes from the parts
    # the data here can test, and is "Not testable here" only when no part can be tested
    words = {j.verdict for j in judged if j.verdict != NOT_TESTABLE} or {NOT_TESTABLE}
    verdict = next(iter(words)) if len(words) == 1 else PARTLY
    reasons = [j.untestable for j in judged if j.untestable]
    return Judgement(
        verdict=verdict,
        n_cells=sum(j.n_cells for j in judged),
        n_support=sum(j.n_support for j in judged),
        n_contradict=sum(j.n_contradict for j in judged),
        chance_expected=sum(j.chance_expected for j in judged),
        holm_support=sum(j.holm_support for j in judged),
        n_depart=sum(j.n_depart for j in judged),
        n_agreement_cells=sum(j.n_agreement_cells for j in judged),
        n_short=sum(j.n_short for j in judged),
        n_no_worse_cells=sum(j.n_no_worse_cells for j in judged),
        parts=judged,
        untestable="; ".join(reasons) if reasons else None,
    )


def _judge_direction(part: Part) -> Judgement:
    zs, ps, beyond = [], [], []
    for cell in part.cells:
        if (cell.se is None) == (cell.p_value is None):
            raise ValueError(
                f"part {part.text!r}, cell {cell.label!r}: a direction cell needs se or a one-sided p_value "
                f"(one of them), got se={cell.se!r}, p_value={cell.p_value!r}"
            )
        if cell.se is not None:
            z = cell.z
            p = float(norm.sf(z))  # one-sided, in the claim's direction; sf(inf) = 0, sf(-inf) = 1
            beyond.append(1 if z >= SUPPORT_Z else -1 if z <= -SUPPORT_Z else 0)
        else:
            p = float(cell.p_value)
            z = float(norm.isf(p))
            beyond.append(1 if p <= DIRECTION_LEVEL else -1 if p >= 1.0 - DIRECTION_LEVEL else 0)
        zs.append(z)
        ps.append(p)
    holm = holm_reject(ps, alpha=DIRECTION_LEVEL)
    m = len(part.cells)
    n_support = beyond.count(1)
    n_holm = int(np.sum(holm))
    if n_support == m:
        verdict = REPRODUCED
    elif n_holm >= 1:
        verdict = PARTLY
    else:
        verdict = NOT_REPRODUCED
    decisions = tuple(
        CellDecision(cell=c, z=zi, p=pi, holm=bool(hi), beyond=bi)
        for c, zi, pi, hi, bi in zip(part.cells, zs, ps, holm, beyond, strict=True)
    )
    return Judgement(
        verdict=verdict,
        kind=DIRECTION,
        n_cells=m,
        n_support=n_support,
        n_contradict=beyond.count(-1),
        chance_expected=m * DIRECTION_LEVEL,
        holm_support=n_holm,
        decisions=decisions,
    )


def _judge_no_worse(part: Part) -> Judgement:
    zs = []
    for cell in part.cells:
        if cell.se is None or cell.p_value is not None:
            raise ValueError(
                f"part {part.text!r}, cell {cell.label!r}: a 'no worse' cell needs se (and no p_value), "
                f"got se={cell.se!r}, p_value={cell.p_value!r}"
            )
        zs.append(cell.z)
    z = np.asarray(zs, dtype=float)
    p = norm.cdf(z)  # one-sided, against the claim: small when A is worse
    holm = holm_reject(p, alpha=DIRECTION_LEVEL)
    beyond = np.where(z >= SUPPORT_Z, 1, np.where(z <= -SUPPORT_Z, -1, 0))
    m = len(part.cells)
    n_short = int(np.sum(holm))
    verdict = REPRODUCED if n_short == 0 else NOT_REPRODUCED if n_short == m else PARTLY
    decisions = tuple(
        CellDecision(cell=c, z=float(zi), p=float(pi), holm=bool(hi), beyond=int(bi))
        for c, zi, pi, hi, bi in zip(part.cells, z, p, holm, beyond, strict=True)
    )
    return Judgement(
        verdict=verdict,
        kind=NO_WORSE,
        n_cells=m,
        n_support=int(np.sum(beyond == 1)),
        n_contradict=int(np.sum(beyond == -1)),
        n_short=n_short,
        n_no_worse_cells=m,
        decisions=decisions,
    )


def _judge_agreement(part: Part) -> Judgement:
    zs: list[float | None] = []
    ps: list[float] = []
    for cell in part.cells:
        if cell.se is None and cell.p_value is None:
            raise ValueError(
                f"part {part.text!r}, cell {cell.label!r}: an agreement cell needs se or p_value, got neither"
            )
        if cell.p_value is not None:
            zs.append(None)
            ps.append(float(cell.p_value))
        else:
            zc = cell.z
            zs.append(zc)
            ps.append(float(2.0 * norm.sf(abs(zc))))
    holm = holm_reject(ps, alpha=AGREEMENT_LEVEL)
    m = len(part.cells)
    n_depart = int(np.sum(holm))
    if n_depart == 0:
        verdict = REPRODUCED
    elif n_depart == m:
        verdict = NOT_REPRODUCED
    else:
        verdict = PARTLY
    decisions = tuple(
        CellDecision(cell=c, z=zc, p=pc, holm=bool(hc), beyond=0)
        for c, zc, pc, hc in zip(part.cells, zs, ps, holm, strict=True)
    )
    return Judgement(
        verdict=verdict,
        kind=AGREEMENT,
        n_cells=m,
        n_depart=n_depart,
        n_agreement_cells=m,
        decisions=decisions,
    )


def _is_real(x: object) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _is_int(x: object) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))
