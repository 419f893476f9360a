"""``pystanprivacy report``: compute every verdict from ``results/`` and write or check the table.

Without ``--write`` or ``--check`` the block is printed. ``--write FILE`` replaces the block
between ``<!-- verdicts:begin -->`` and ``<!-- verdicts:end -->`` in FILE; ``--check FILE``
exits 1 and prints a unified diff when FILE's block is not what the command computes.
``--cells CSV`` writes every cell of every claim and ``--details MD`` each claim's parts and
statistics, which the block then links instead of holding (with ``--check``: checks them instead).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pystanprivacy.report.claims import all_claims
from pystanprivacy.report.render import (
    ClaimError,
    block_diff,
    cells_csv,
    evaluate_all,
    extract_block,
    render_block,
    render_details,
    replace_block,
)

__all__ = ["compute", "run_report"]


def compute(*, results_dir: Path, document: Path | None = None, details: Path | None = None) -> tuple[str, str, str]:
    """The verdict block, the cells CSV text and the details text for every registered claim.

    Parameters
    ----------
    results_dir : Path
        The ``results/`` folder.
    document : Path or None
        The document the block goes into: figure links are relative to its folder (None: the
        current folder).
    details : Path or None
        Where the details go: the block links it (relative to the document) instead of holding
        the parts table and the statistics.

    Returns
    -------
    (block, cells, details) : tuple of str
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ValueError(f"results_dir={str(results_dir)!r} is not a folder; the results/ folder is required")
    base = Path(document).resolve().parent if document is not None else Path.cwd()
    link_prefix = Path(os.path.relpath(results_dir.resolve(), base)).as_posix()
    results = evaluate_all(all_claims(), results_dir=results_dir)
    details_link = None if details is None else Path(os.path.relpath(Path(details).resolve(), base)).as_posix()
    block = render_block(results, link_prefix=link_prefix, details_link=details_link)
    return block, cells_csv(results), render_details(results)


def run_report(
    *, results_dir: Path, write: Path | None, check: Path | None, cells: Path | None, details: Path | None = None
) -> int:
    """The command: exit code 0, 1 (``--check`` found a difference) or 2 (a claim or file error)."""
    if write is not None and check is not None:
        print("pystanprivacy report: give --write or --check, not both", file=sys.stderr)
        return 2
    document = write if write is not None else check
    try:
        block, cells_text, details_text = compute(results_dir=results_dir, document=document, details=details)
        if document is not None:
            text = Path(document).read_text(encoding="utf-8")
            committed = extract_block(text, source=str(document))
    except (ClaimError, ValueError, OSError) as exc:
        print(f"pystanprivacy report: {exc}", file=sys.stderr)
        return 2
    if check is not None:
        status = 0
        diff = block_diff(committed, block, source=str(check))
        if diff:
            sys.stdout.write(diff)
            status = 1
        for path, text_now in ((cells, cells_text), (details, details_text)):
            if path is None:
                continue
            try:
                old = Path(path).read_text(encoding="utf-8")
            except OSError as exc:
                print(f"pystanprivacy report: {str(path)!r}: {exc.strerror or exc}", file=sys.stderr)
                return 2
            diff = block_diff(old, text_now, source=str(path))
            if diff:
                sys.stdout.write(diff)
                status = 1
        print(f"{check}: verdict block {'differs from' if status else 'matches'} results/", file=sys.stderr)
        return status
    if write is not None:
        new = replace_block(text, block, source=str(write))
        if new != text:
            Path(write).write_text(new, encoding="utf-8")
        print(f"wrote the verdict block of {write}", file=sys.stderr)
    else:
        sys.stdout.write(block)
    for path, text_now in ((cells, cells_text), (details, details_text)):
        if path is not None:
            Path(path).write_text(text_now, encoding="utf-8")
            print(f"wrote {path}", file=sys.stderr)
    return 0
