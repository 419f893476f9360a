"""Command line: ``pystanprivacy models``, ``pystanprivacy reproduce PAPER`` and ``pystanprivacy audit``.

Examples
--------
::

    pystanprivacy models
    pystanprivacy reproduce foulds2016 --quick --out results/foulds2016 --seed 0 --workers 2
    pystanprivacy reproduce foulds2016 --data afg_war_logs.csv   # the HMM study on a real file
    python -m pystanprivacy reproduce foulds2016 --full
    pystanprivacy audit --quick                     # every mechanism and OPS model
    pystanprivacy audit --mechanism laplace --broken  # show that the audit catches a broken Laplace
"""
from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "build_parser", "model_metadata"]

_METADATA_KEYS = ("paper", "equations", "privacy")


def model_metadata(name: str) -> dict[str, Any] | None:
    """The JSON metadata file ``stan/<paper>/<model>.json`` beside a model's ``.stan``
    file (keys such as paper, equations, privacy), or ``None`` when there is none.
    ``ValueError`` when the file exists but is not a JSON object."""
    from .stan import model_file

    path = model_file(name).with_suffix(".json")
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"metadata file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"metadata file {path} must hold a JSON object, got {type(data).__name__}")
    return data


def _format_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    return str(value)


def _cmd_models(args: argparse.Namespace) -> int:
    from .stan import available_models

    models = available_models()
    for name in models:
        print(name)
        try:
            meta = model_metadata(name)
        except ValueError as exc:
            print(f"    (metadata: {exc})")
            continue
        if meta:
            for key in _METADATA_KEYS:
                if key in meta:
                    print(f"    {key}: {_format_value(meta[key])}")
    print(f"{len(models)} model(s)", file=sys.stderr)
    return 0


def _cmd_reproduce(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .experiments import get_paper, known_papers

    if args.paper not in known_papers():
        parser.error(f"unknown paper {args.paper!r}; known papers: {', '.join(known_papers())}")
    if args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    module = get_paper(args.paper)
    extra: dict[str, Any] = {}
    if args.data is not None:
        if "data_path" not in inspect.signature(module.reproduce).parameters:
            parser.error(f"--data is not used by paper {args.paper!r}")
        if not Path(args.data).exists():
            parser.error(f"--data {args.data!r}: no such file or folder")
        extra["data_path"] = args.data
    out = Path(args.out) if args.out is not None else Path("results") / args.paper
    quick = not args.full
    mode = "quick" if quick else "full"
    print(f"reproducing {args.paper} ({mode}, seed {args.seed}, {args.workers} worker(s)) into {out}", flush=True)
    start = time.perf_counter()
    try:
        module.reproduce(out, quick=quick, seed=args.seed, workers=args.workers, progress=not args.no_progress, **extra)
    except FileNotFoundError as exc:  # a data file the run needs: the loader's message says which and where
        parser.error(str(exc))
    elapsed = time.perf_counter() - start
    files = sorted(p for p in out.iterdir() if p.is_file() and p.name.startswith(args.paper))
    print(f"done in {elapsed:.1f} s; wrote {len(files)} files to {out.resolve()}:")
    for p in files:
        print(f"  {p.name}")
    return 0


def _cmd_audit(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the audits; exit code 1 when an audit of a mechanism as claimed fails (its
    empirical epsilon lower bound exceeds the claimed epsilon) or, with ``--broken``, when a
    broken variant is not caught; 0 otherwise."""
    import pandas as pd

    from .audits import audit_names, markdown_table, run_audits
    from .runner import write_results

    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    names = audit_names()
    for kind, chosen in (("mechanism", args.mechanism), ("model", args.model)):
        if chosen is not None:
            valid = audit_names(kind)
            if chosen not in valid:
                parser.error(f"unknown {kind} {chosen!r}; valid {kind}s: {', '.join(valid)}")
            names = [chosen]
    mode = "quick" if args.quick else "full"
    variant = "broken variants" if args.broken else "as claimed"
    print(f"auditing {len(names)} mechanism(s)/model(s) ({mode}, {variant}, seed {args.seed})", flush=True)
    start = time.perf_counter()

    def progress(row: dict[str, Any]) -> None:
        print(f"  {row['name']}: epsilon_lb {row['epsilon_lb']:.3f} (claimed {row['epsilon']:.4g}), {row['samples']} "
              f"samples per side, {row['verdict']} ({row['seconds']:.1f} s)", flush=True)

    rows = run_audits(names, quick=args.quick, seed=args.seed, broken=args.broken, progress=progress)
    print()
    print(markdown_table(rows))
    print(f"\ndone in {time.perf_counter() - start:.1f} s")
    if args.out is not None:
        table = pd.DataFrame([{**r, "info": json.dumps(r["info"])} for r in rows])
        name = "audit_broken" if args.broken else "audit"
        csv, side = write_results(args.out, name, table,
                                  {"names": names, "quick": args.quick, "seed": args.seed, "broken": args.broken},
                                  seed=args.seed)
        print(f"wrote {csv} and {side}")
    bad = [r["name"] for r in rows if (r["passed"] if args.broken else not r["passed"])]
    if bad:
        what = "broken variant(s) NOT caught" if args.broken else "audit(s) FAILED (epsilon_lb > claimed epsilon)"
        print(f"{len(bad)} {what}: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``pystanprivacy`` command."""
    parser = argparse.ArgumentParser(
        prog="pystanprivacy",
        description="Differentially private Bayesian inference with Stan: models and paper reproductions.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    p_models = sub.add_parser("models", help="list every Stan model (with its paper, equations and privacy statement)")
    p_models.set_defaults(handler=lambda a, _p: _cmd_models(a))
    p_rep = sub.add_parser("reproduce", help="reproduce a paper's tables and figures")
    p_rep.add_argument("paper", metavar="PAPER", help="paper short name, e.g. foulds2016")
    size = p_rep.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small run (default): minutes on a laptop")
    size.add_argument("--full", action="store_true", help="the paper's full number of repeats")
    p_rep.add_argument("--out", metavar="DIR", default=None, help="output folder (default: ./results/PAPER)")
    p_rep.add_argument("--seed", type=int, default=0, help="root seed of the run (default 0); seeds give reproducibility, not security")
    p_rep.add_argument("--workers", type=int, default=1, help="local worker processes (default 1: no pool)")
    p_rep.add_argument("--no-progress", action="store_true", help="no progress bars")
    p_rep.add_argument(
        "--data", metavar="PATH", default=None,
        help=("a real data file or folder for the papers that take one (foulds2016: a war-logs CSV for the HMM "
              "study, default synthetic logs; kulkarni2022: a Kosarak click-stream file, one session of "
              "space-separated item ids per line, or a folder holding kosarak.dat, for Figure 2, default a "
              "synthetic click-stream; jewson2023: a folder holding adult.data, abalone.data and "
              "winequality-red.csv, default $PYSTANPRIVACY_DATA or ../shared/data)"),
    )
    p_rep.set_defaults(handler=_cmd_reproduce)
    p_aud = sub.add_parser(
        "audit", help="empirical epsilon lower bounds (Clopper-Pearson) for every mechanism and OPS model",
        description=("Run each mechanism / OPS model many times on worst-case neighbouring inputs and report a "
                     "Clopper-Pearson lower bound on epsilon (95 %% confidence) next to the claimed epsilon. Exit "
                     "code 1 if any bound exceeds its claimed epsilon (with --broken: if any deliberately broken "
                     "variant is not caught)."),
    )
    which = p_aud.add_mutually_exclusive_group()
    which.add_argument("--mechanism", metavar="NAME", default=None, help="audit one mechanism only")
    which.add_argument("--model", metavar="NAME", default=None, help="audit one OPS model only")
    p_aud.add_argument("--quick", action="store_true", help="the test-suite sample sizes (default: full)")
    p_aud.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p_aud.add_argument("--out", metavar="DIR", default=None, help="write audit.csv + audit.json (runner.write_results)")
    p_aud.add_argument("--broken", action="store_true",
                       help="audit the deliberately broken variants instead (each should be caught)")
    p_aud.set_defaults(handler=_cmd_audit)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pystanprivacy`` console script; returns the exit code
    (argparse errors, e.g. an unknown paper, exit with code 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.handler(args, parser) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
