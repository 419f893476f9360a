"""The verdict table: every claim read from ``results/``, judged by the rule, written as Markdown.

:func:`evaluate` reads one claim's cells and judges them (:mod:`pystanprivacy.report.rule`);
:func:`render_block` writes the table ``| # | paper, item | the paper's claim | verdict | number
| figure |`` and the table of each claim's parts between the markers ``<!-- verdicts:begin -->``
and ``<!-- verdicts:end -->``; :func:`replace_block` puts it into a document such as
REPRODUCTION.md; :func:`cells_csv` writes every cell of every claim (its estimate, se, z, p,
Holm decision and refusals). ``pystanprivacy report`` is the command over these.
"""

from __future__ import annotations

import csv
import difflib
import io
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pystanprivacy.report.claims import Claim
from pystanprivacy.report.rule import (
    AGREEMENT,
    NO_WORSE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    PARTLY,
    REPRODUCED,
    VERDICTS,
    Judgement,
    Part,
    judge_claim,
)

__all__ = [
    "BEGIN",
    "END",
    "ClaimError",
    "ClaimResult",
    "block_diff",
    "cells_csv",
    "evaluate",
    "evaluate_all",
    "extract_block",
    "render_block",
    "render_details",
    "replace_block",
]

BEGIN = "<!-- verdicts:begin -->"
END = "<!-- verdicts:end -->"
#: the columns of the cells CSV
CELL_COLUMNS = (
    "claim",
    "claim_verdict",
    "part",
    "kind",
    "part_verdict",
    "cell",
    "estimate",
    "se",
    "z",
    "p",
    "holm",
    "beyond_2se",
    "n",
    "refused",
    "attempts",
)
_MAX_NUMBER_WORDS = 40


class ClaimError(ValueError):
    """A claim whose cells could not be read or judged; the message names the claim."""


@dataclass(frozen=True)
class ClaimResult:
    """One claim, its parts as read from ``results/``, its judgement and its number text."""

    claim: Claim
    parts: tuple[Part, ...]
    judgement: Judgement
    number: str
    secondary: str = ""


def evaluate(claim: Claim, *, results_dir: Path) -> ClaimResult:
    """Read a claim's cells from ``results_dir`` and judge them by the rule.

    Parameters
    ----------
    claim : Claim
        The claim.
    results_dir : Path
        The ``results/`` folder.

    Returns
    -------
    ClaimResult

    Raises
    ------
    ClaimError
        A declared table or figure is missing, reading or judging the cells fails (a NaN
        estimate, a cell without its se, ...), or the number text is empty or longer than 40
        words; the message names the claim and the cause.
    """
    results_dir = Path(results_dir)
    missing = [
        t for t in (*claim.tables, *((claim.figure,) if claim.figure else ())) if not (results_dir / t).is_file()
    ]
    if missing:
        raise ClaimError(f"claim {claim.key}: missing under {results_dir}: {', '.join(missing)}")
    try:
        parts = tuple(claim.parts(results_dir))
        judgement = judge_claim(parts)
        number = claim.number(results_dir, parts)
        secondary = claim.secondary(results_dir) if callable(claim.secondary) else claim.secondary
    except ClaimError:
        raise
    except Exception as exc:  # every failure of a claim's own code is reported with the claim's key
        raise ClaimError(f"claim {claim.key}: {type(exc).__name__}: {exc}") from exc
    if not isinstance(number, str) or not number.strip():
        raise ClaimError(f"claim {claim.key}: number={number!r}; a non-empty string is required")
    n_words = len(number.split())
    if n_words > _MAX_NUMBER_WORDS:
        raise ClaimError(f"claim {claim.key}: the number text has {n_words} words; at most {_MAX_NUMBER_WORDS}")
    if not isinstance(secondary, str):
        raise ClaimError(f"claim {claim.key}: secondary={secondary!r}; a string is required")
    return ClaimResult(
        claim=claim, parts=parts, judgement=judgement, number=number.strip(), secondary=secondary.strip()
    )


def evaluate_all(claims: Sequence[Claim], *, results_dir: Path) -> tuple[ClaimResult, ...]:
    """:func:`evaluate` for every claim, in order."""
    return tuple(evaluate(c, results_dir=results_dir) for c in claims)


def render_block(
    results: Sequence[ClaimResult], *, link_prefix: str = "results", details_link: str | None = None
) -> str:
    """The verdict block: the markers, the verdict table, the count of verdicts and the parts table
    (or, with ``details_link``, a link to the file :func:`render_details` writes).

    Parameters
    ----------
    results : sequence of ClaimResult
        The judged claims, in table order.
    link_prefix : str
        Path of the ``results/`` folder as seen from the document (for the figure links).
    details_link : str or None
        The details file's path as seen from the document: the parts table and the statistics go
        there instead of into the block.

    Returns
    -------
    str
        The block, from ``BEGIN`` to ``END`` inclusive, ending in a newline.
    """
    lines = [
        BEGIN,
        "<!-- written by `pystanprivacy report --write REPRODUCTION.md` from results/; do not edit by hand -->",
        "",
        "| # | paper, item | the paper's claim | verdict | number | figure |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        c = r.claim
        verdict = _verdict_cell(r)
        if len(verdict.split()) > _MAX_NUMBER_WORDS:
            raise ClaimError(
                f"claim {c.key}: the verdict cell has {len(verdict.split())} words (the data line is too long); "
                f"at most {_MAX_NUMBER_WORDS}"
            )
        prefix = "" if link_prefix in ("", ".") else link_prefix.rstrip("/") + "/"
        fig = f"[fig]({prefix}{c.figure})" if c.figure else "–"
        lines.append("| " + " | ".join(_md(x) for x in (c.key, c.item, c.claim, verdict, r.number)) + f" | {fig} |")
    lines += ["", _count_sentence(results), ""]
    if details_link is not None:
        lines += [
            f"Each claim's parts, their counts and the statistic its cells hold: [{details_link}]({details_link}).",
            "",
        ]
    else:
        lines += _details_lines(results) + [""]
    lines.append(END)
    return "\n".join(lines) + "\n"


#: the title of the details file written beside the cells CSV (:func:`render_details`)
DETAILS_TITLE = "# Verdicts: each claim's parts and statistics"


def render_details(results: Sequence[ClaimResult]) -> str:
    """The details of the verdict block as a document of its own: each claim's parts with their
    verdicts and counts, the statistic each claim's cells hold, and the secondary numbers."""
    head = [
        DETAILS_TITLE,
        "",
        (
            "Written by `pystanprivacy report --write REPRODUCTION.md --details results/verdict_parts.md` from "
            "`results/`; do not edit by hand. The verdict table and the rule: REPRODUCTION.md, Conclusions."
        ),
        "",
    ]
    return "\n".join(head + _details_lines(results)) + "\n"


def _details_lines(results: Sequence[ClaimResult]) -> list[str]:
    lines = [
        "Each claim's parts, the statistic its cells hold and their counts:",
        "",
        "| # | part | kind | verdict | cells |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        for part, j in zip(r.parts, r.judgement.parts, strict=True):
            lines.append(
                "| "
                + " | ".join(_md(x) for x in (r.claim.key, part.text, part.kind, j.verdict, _part_counts(part, j)))
                + " |"
            )
    lines.append("")
    statistic_lines = [f"- **{r.claim.key}** ({_md(r.claim.where)}): {_md(r.claim.statistic)}." for r in results]
    secondary = [
        f"- **{r.claim.key}**, secondary (chosen after the fact): {_md(r.secondary)}" for r in results if r.secondary
    ]
    lines += ["Statistics (where the paper says it: what each cell is):", "", *statistic_lines]
    if secondary:
        lines += ["", *secondary]
    return lines


def extract_block(text: str, *, source: str = "document") -> str:
    """The block between (and including) the markers of ``text``.

    Raises
    ------
    ValueError
        The markers are missing, repeated or out of order (the message names ``source``).
    """
    start, stop = _marker_span(text, source=source)
    return text[start:stop]


def replace_block(text: str, block: str, *, source: str = "document") -> str:
    """``text`` with its verdict block replaced by ``block`` (markers included)."""
    start, stop = _marker_span(text, source=source)
    if not block.startswith(BEGIN) or not block.rstrip("\n").endswith(END):
        raise ValueError(f"replace_block: the block must start with {BEGIN!r} and end with {END!r}")
    return text[:start] + block + text[stop:]


def block_diff(committed: str, computed: str, *, source: str) -> str:
    """A unified diff from the committed block to the computed one ('' when equal)."""
    return "".join(
        difflib.unified_diff(
            committed.splitlines(keepends=True),
            computed.splitlines(keepends=True),
            fromfile=f"{source} (committed)",
            tofile=f"{source} (computed from results)",
        )
    )


def cells_csv(results: Sequence[ClaimResult]) -> str:
    """Every cell of every claim as CSV text (columns :data:`CELL_COLUMNS`; numbers to 6
    significant digits; an untestable part is one row with an empty cell)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CELL_COLUMNS)
    for r in results:
        for part, j in zip(r.parts, r.judgement.parts, strict=True):
            base = [r.claim.key, r.judgement.verdict, part.text, part.kind, j.verdict]
            if part.untestable is not None:
                writer.writerow([*base, f"untestable: {part.untestable}", *[""] * (len(CELL_COLUMNS) - 6)])
                continue
            for d in j.decisions:
                cell = d.cell
                writer.writerow(
                    [
                        *base,
                        cell.label,
                        _num(cell.estimate),
                        _num(cell.se),
                        _num(d.z),
                        _num(d.p),
                        int(d.holm),
                        d.beyond if part.kind != AGREEMENT else "",
                        "" if cell.n is None else cell.n,
                        cell.refused,
                        cell.attempts,
                    ]
                )
    return out.getvalue()


def _verdict_cell(r: ClaimResult) -> str:
    j = r.judgement
    text = f"**{j.verdict}**"
    if len(j.parts) == 1:
        text += f" ({_part_counts(r.parts[0], j.parts[0])})"
    else:
        counts = Counter(p.verdict for p in j.parts)
        text += " (parts: " + ", ".join(f"{counts[w]} {w.lower()}" for w in VERDICTS if counts[w]) + ")"
    if r.claim.data:
        text += f"; data: {r.claim.data}"
    return text


def _part_counts(part: Part, j: Judgement) -> str:
    if j.verdict == NOT_TESTABLE and not part.cells:
        return f"not testable: {part.untestable}"
    m = j.n_cells
    if part.kind == AGREEMENT:
        text = f"{j.n_depart} of {m} depart"
    elif part.kind == NO_WORSE:
        text = f"{j.n_short} of {m} fall short; {j.n_support} beyond +2 SE, {j.n_contradict} below −2 SE"
    else:
        text = f"{j.n_support} of {m} beyond 2 SE ({j.chance_expected:.2g} by chance), {j.n_contradict} against"
    attempts = sum(c.attempts for c in part.cells)
    if attempts:
        refused = sum(c.refused for c in part.cells)
        text += f"; {refused} of {attempts} releases refused"
    return text


def _count_sentence(results: Sequence[ClaimResult]) -> str:
    counts = Counter(r.judgement.verdict for r in results)
    words = {
        REPRODUCED: "reproduced",
        PARTLY: "partly reproduced",
        NOT_REPRODUCED: "not reproduced",
        NOT_TESTABLE: "not testable here",
    }
    bits = []
    for w in VERDICTS:
        keys = [r.claim.key for r in results if r.judgement.verdict == w]
        if keys:
            bits.append(f"{counts[w]} {words[w]} ({', '.join(keys)})")
    return f"Of the {len(results)} claims: " + "; ".join(bits) + "."


def _marker_span(text: str, *, source: str) -> tuple[int, int]:
    n_begin, n_end = text.count(BEGIN), text.count(END)
    if n_begin != 1 or n_end != 1:
        raise ValueError(f"{source}: needs exactly one {BEGIN!r} and one {END!r}; found {n_begin} and {n_end}")
    start, end = text.index(BEGIN), text.index(END)
    if end < start:
        raise ValueError(f"{source}: {END!r} comes before {BEGIN!r}")
    stop = end + len(END)
    if text[stop : stop + 1] == "\n":
        stop += 1
    return start, stop


def _md(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _num(x: float | None) -> str:
    if x is None:
        return ""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.6g}"
