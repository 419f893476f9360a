#!/usr/bin/env python
"""Jewson et al. (2023) Figure 9 on UCI banknote authentication, the paper's "bank - authenticity":
the network part ``nn_classification`` (βD, DP-SGD, the non-private posterior and SGD) on the second
UCI classification set, beside Abalone.

    python scripts/jewson2023_banknote.py --full --workers 2 --out results/jewson2023/banknote

It runs the part's UCI call with the data sets ("abalone", "banknote"), Abalone first: the data seeds
and task indices of the Abalone tasks are those of ``reproduce jewson2023 --parts nn_classification``
(seeds are spawned in order), so with that part's saved tasks in ``OUT/.tasks`` the Abalone tasks are
read back and only banknote's are run. Writes ``jewson2023_nn_classification.csv`` (both data sets'
rows, as the part's table) and its summary with JSON sidecars into ``--out`` (use a folder of its own,
e.g. ``results/jewson2023/banknote``, holding copies of the part's Abalone task files);
``scripts/redraw_figures.py`` then adds banknote's panels to Figure 9. Resumable. At full scale banknote is 40 tasks of up to about
an hour each on this project's 2-core machines (Abalone's took about 8 h of two workers).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from pystanprivacy.experiments.jewson2023.common import PAPER
from pystanprivacy.experiments.jewson2023.networks import neural
from pystanprivacy.experiments.jewson2023.study import FULL, QUICK, summarise
from pystanprivacy.run.runner import run_context, write_results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="the study's quick grid (default)")
    size.add_argument("--full", action="store_true", help="the study's full grid (the paper's)")
    parser.add_argument(
        "--out", type=Path, default=None, help="output folder (default: results[-quick]/jewson2023/banknote)"
    )
    parser.add_argument("--seed", type=int, default=0, help="root seed: the network part's, 0 by default")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--data", type=Path, default=None, help="folder of the UCI files (default: data/)")
    args = parser.parse_args(argv)
    grid = FULL if args.full else QUICK
    out = args.out if args.out is not None else Path("results" if args.full else "results-quick") / PAPER / "banknote"
    sidecar = out / f"{PAPER}_nn_classification.json"
    if sidecar.is_file() and "banknote" not in json.loads(sidecar.read_text()).get("args", {}).get("datasets", []):
        parser.error(
            f"--out {out} holds the study's own network table, which this script would overwrite; "
            "give it a folder of its own (e.g. results/jewson2023/banknote)"
        )
    start = time.perf_counter()
    with run_context(resume_dir=out / ".tasks"):
        table = neural(
            task="classification",
            datasets=["abalone", "banknote"],
            ns=grid["nn_ns"],
            epsilons=grid["nn_epsilons"],
            repeats=grid["nn_repeats"],
            data_path=args.data,
            sampler=grid["nn_sampler"],
            seed=args.seed,
            workers=args.workers,
            progress=True,
        )
    summary = summarise(table, ["auc"])
    meta = {
        "seed": args.seed,
        "full": bool(args.full),
        "ns": grid["nn_ns"],
        "epsilons": grid["nn_epsilons"],
        "repeats": grid["nn_repeats"],
        "sampler": dict(grid["nn_sampler"]),
        "datasets": ["abalone", "banknote"],
        "seconds": time.perf_counter() - start,
    }
    # the part's own table names, so that paired.network_table and scripts/redraw_figures.py read this
    # folder as a run of the part (Abalone's rows are the study's own, read back from its tasks)
    write_results(out, f"{PAPER}_nn_classification", table, meta)
    write_results(out, f"{PAPER}_nn_classification_summary", summary, meta)
    print(summary.round(3).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
