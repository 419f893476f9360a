"""Command line: ``pystanprivacy models``, ``reproduce PAPER``, ``audit``, ``fit``, ``sbc``, ``budget`` and ``report``.

Examples
--------
::

    pystanprivacy models
    pystanprivacy reproduce foulds2016 --quick --out results-quick/foulds2016 --seed 0 --workers 2
    pystanprivacy reproduce foulds2016 --data afg_war_logs.csv   # the HMM study on a real file
    python -m pystanprivacy reproduce foulds2016 --full
    pystanprivacy audit --quick                     # every mechanism and OPS model
    pystanprivacy audit --mechanism laplace --broken  # show that the audit catches a broken Laplace
    pystanprivacy audit --workflow --quick          # 5 Gaussian releases: composed guarantee per rule vs lower bound
    pystanprivacy fit model.stan release.json --data extra.json --out fit/   # your program on a published release
    pystanprivacy reproduce bernstein2018 --full --scheduler local --workers 2   # local Dask cluster
    pystanprivacy reproduce bernstein2018 --full --scheduler tcp://10.0.0.5:8786 # a running cluster
    pystanprivacy reproduce all --quick --out results-quick                    # every paper + index.md
    pystanprivacy budget create budget.db --dataset clinic-2026 --epsilon 1 --delta 1e-6 --composition zcdp
    pystanprivacy budget show budget.db      # budget, spent, remaining (every process's spends)
    pystanprivacy budget history budget.db   # the ledger table of every stored spend
    pystanprivacy report --write REPRODUCTION.md --cells results/verdict_cells.csv --details results/verdict_parts.md

A reproduction saves every finished task's table in ``OUT/.tasks/``; running the same command
again after an interruption runs only the missing tasks (``--fresh``: start again,
``--no-resume``: no task files).
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import os
import stat
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .run.options import (
    RESUME_DIR,
    add_scale_options,
    check_full_extras,
    check_scale_options,
    default_out,
    resume_context,
    scale_executor,
)

__all__ = [
    "main",
    "build_parser",
    "data_help",
    "parts_help",
    "add_scale_options",
    "check_scale_options",
    "scale_executor",
    "resume_context",
    "write_index",
    "RESUME_DIR",
]


#: the metadata keys of a model's JSON file that ``pystanprivacy models`` shows, after its class
_METADATA_KEYS = ("paper", "equations", "privacy")


def _format_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    return str(value)


def _cmd_models(args: argparse.Namespace) -> int:
    """List the registry (:mod:`pystanprivacy.models.registry`): each model, its class and
    metadata; exit code 1 when an entry's JSON is missing, unreadable or names no class."""
    from .models.registry import class_path, model_metadata, model_names

    models = model_names()
    broken = []
    for name in models:
        print(name)
        try:
            meta = model_metadata(name)
            where = class_path(name)
        except (OSError, ValueError) as exc:
            print(f"    (registry: {exc})")
            broken.append(name)
            continue
        print(f"    class: {where.replace(':', '.')}")
        for key in _METADATA_KEYS:
            if key in meta:
                print(f"    {key}: {_format_value(meta[key])}")
    print(
        f"{len(models)} model(s)" + (f"; broken registry entries: {', '.join(broken)}" if broken else ""),
        file=sys.stderr,
    )
    return 1 if broken else 0


def _check_out_dir(parser: argparse.ArgumentParser, option: str, value: str | os.PathLike) -> Path:
    """``value`` as an output folder this process can write, or a usage error (exit code 2,
    one line naming ``option`` and the path) before any work starts.

    An empty value is refused (``Path("")`` would be the working directory). An existing path
    must be a folder; a missing one is created later by the run, so its nearest existing
    parent must be a folder, and no component on the way may be a broken symbolic link. A name
    the file system cannot take (too long, a loop of links) is refused. Whether the folder can
    be written is tried, not read from permission bits (which root passes everywhere, also on
    read-only file systems): a temporary file (in the folder) or folder (in the parent) is made
    and removed at once, so nothing is left behind.
    """
    if not os.fspath(value):
        parser.error(f"{option} is empty; give a folder for the results")
    path = Path(value)
    target = Path("/")
    try:
        for candidate in (path, *path.absolute().parents):
            try:
                os.lstat(candidate)
            except (FileNotFoundError, NotADirectoryError):
                continue  # created by the run, or below a file (refused just below)
            if candidate.is_symlink() and not candidate.exists():
                parser.error(
                    f"{option} {str(path)!r}: {str(candidate)!r} is a broken symbolic link; give a folder "
                    "for the results"
                )
            target = candidate
            break
    except OSError as exc:  # a name too long, a loop of links, ...
        parser.error(f"{option} {str(path)!r}: cannot be used ({exc.strerror or type(exc).__name__})")
    if target is path and not path.is_dir():
        parser.error(f"{option} {str(path)!r}: exists and is not a folder; give a folder for the results")
    if not target.is_dir():
        parser.error(f"{option} {str(path)!r}: cannot be created, {str(target)!r} is not a folder")
    try:
        if target is path:
            with tempfile.TemporaryFile(dir=path):
                pass
        else:
            os.rmdir(tempfile.mkdtemp(dir=target, prefix=".pystanprivacy-check-"))
    except OSError as exc:
        where = "" if target is path else f" (in {str(target)!r})"
        parser.error(f"{option} {str(path)!r}: cannot write there{where}: {exc.strerror or type(exc).__name__}")
    return path


def _read_war_logs(path: str) -> None:
    from .experiments.foulds2016.warlogs import load_war_logs

    load_war_logs(path)


def _read_kosarak(path: str) -> None:
    from .experiments.kulkarni2022.kosarak import load_kosarak

    load_kosarak(path)


def _read_uci_folder(path: str) -> None:
    from .experiments.jewson2023.data import load_uci
    from .experiments.jewson2023.study import UCI_FILES

    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"it must be a folder holding {', '.join(sorted(UCI_FILES.values()))}")
    for name, file in UCI_FILES.items():  # a file the run needs but that is missing: the run says which
        if (folder / file).exists():
            load_uci(name, folder)


#: paper package -> what reads its ``--data PATH`` with the paper's own loader, before the run
#: starts: a file the loader cannot read is a usage error, not a traceback minutes into the run
_DATA_READERS = {
    "pystanprivacy.experiments.foulds2016": _read_war_logs,
    "pystanprivacy.experiments.kulkarni2022": _read_kosarak,
    "pystanprivacy.experiments.jewson2023": _read_uci_folder,
}


def _check_data_path(parser: argparse.ArgumentParser, module: Any, paper: str, path: str) -> str:
    """``reproduce --data PATH``, checked before any work: it must exist and be a regular file
    or a folder (a FIFO, device or socket is refused from ``stat``, never opened, so nothing
    blocks), and the paper's own loader must read it. Any failure is a usage error (exit code
    2) naming ``--data`` and the path."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        parser.error(f"--data {path!r}: no such file or folder")
    except OSError as exc:
        parser.error(f"--data {path!r}: cannot be read ({exc.strerror or type(exc).__name__})")
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "not a regular file"
        )
        parser.error(f"--data {path!r}: is {kind}; give a regular data file or a folder")
    reader = _DATA_READERS.get(getattr(module, "__name__", ""))
    if reader is not None:
        try:
            reader(path)
        except UnicodeDecodeError:  # its message quotes a byte of the file
            parser.error(f"--data {path!r}: {paper} cannot read it: it is not a text file in the expected encoding")
        except FileNotFoundError as exc:  # the loader's message says which file and where to get it
            parser.error(f"--data {path!r}: {exc}")
        except (ValueError, OSError, csv.Error) as exc:
            parser.error(f"--data {path!r}: {paper} cannot read it: {exc}")
    return path


def _run_paper(
    module: Any, paper: str, out: Path, args: argparse.Namespace, executor: Any, workers: int, extra: dict[str, Any]
) -> float:
    start = time.perf_counter()
    with resume_context(args, out, executor):
        module.reproduce(
            out, quick=not args.full, seed=args.seed, workers=workers, progress=not args.no_progress, **extra
        )
    return time.perf_counter() - start


def _print_files(out: Path, paper: str, elapsed: float) -> None:
    files = sorted(p for p in out.iterdir() if p.is_file() and p.name.startswith(paper))
    print(f"done in {elapsed:.1f} s; wrote {len(files)} files to {out.resolve()}:")
    for p in files:
        print(f"  {p.name}")


def _cmd_reproduce(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .experiments import get_paper, known_papers

    if args.paper != "all" and args.paper not in known_papers():
        parser.error(f"unknown paper {args.paper!r}; known papers: {', '.join(known_papers())} (or all)")
    check_scale_options(args, parser)
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    if args.paper == "all":
        return _cmd_reproduce_all(args, parser)
    module = get_paper(args.paper)  # declares DATA_HELP and PARTS (the paper protocol of experiments)
    extra: dict[str, Any] = {}
    if args.data is not None:
        if module.DATA_HELP is None:
            parser.error(f"--data is not used by paper {args.paper!r}: it reads no data file")
        extra["data_path"] = args.data  # read by _check_data_path below, after the cheap checks
    if args.parts is not None:
        known = module.PARTS
        if known is None:
            parser.error(f"--parts is not used by paper {args.paper!r}: it runs as a whole")
        parts = tuple(p.strip() for p in args.parts.split(","))
        unknown = [p for p in parts if p not in known]
        if unknown or not parts:
            parser.error(f"--parts {args.parts!r}: {args.paper} has the parts {', '.join(known)} (comma-separated)")
        extra["parts"] = parts
        data_parts = getattr(module, "DATA_PARTS", None)
        if args.data is not None and data_parts and not set(data_parts) & set(parts):
            parser.error(
                f"--data is read only by the part(s) {', '.join(data_parts)} of {args.paper}; "
                f"--parts {args.parts!r} runs none of them"
            )
    check_full_extras(args, parser, [module], extra.get("parts"))
    if args.data is not None:
        _check_data_path(parser, module, args.paper, args.data)
    out = _check_out_dir(parser, "--out", args.out if args.out is not None else default_out(args.full, args.paper))
    mode = "quick" if not args.full else "full"
    with scale_executor(args) as (executor, workers, how):
        print(f"reproducing {args.paper} ({mode}, seed {args.seed}, {how}) into {out}", flush=True)
        try:
            elapsed = _run_paper(module, args.paper, out, args, executor, workers, extra)
        except FileNotFoundError as exc:  # a data file the run needs: the loader's message says which and where
            parser.error(str(exc))
    _print_files(out, args.paper, elapsed)
    return 0


def _cmd_reproduce_all(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .experiments import get_paper, known_papers

    if args.parts is not None:
        parser.error("--parts is not allowed with 'all': it names parts of one paper")
    if args.data is not None:
        parser.error(
            "--data is not allowed with 'all': every paper then runs on its default data (the data "
            "files in $PYSTANPRIVACY_DATA, then in the repository's data/ folder, else synthetic data); "
            "give a data file one paper at a time with 'reproduce PAPER --data PATH'"
        )
    check_full_extras(args, parser, [get_paper(p) for p in known_papers()])
    root = _check_out_dir(parser, "--out", args.out if args.out is not None else default_out(args.full))
    mode = "quick" if not args.full else "full"
    outcomes: dict[str, dict[str, Any]] = {}
    with scale_executor(args) as (executor, workers, how):
        for paper in known_papers():
            out = root / paper
            print(f"reproducing {paper} ({mode}, seed {args.seed}, {how}) into {out}", flush=True)
            try:
                elapsed = _run_paper(get_paper(paper), paper, out, args, executor, workers, {})
            except Exception as exc:  # noqa: BLE001 - reported; the other papers still run
                outcomes[paper] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
                print(f"FAILED {paper}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
                continue
            outcomes[paper] = {"ok": True, "seconds": elapsed}
            _print_files(out, paper, elapsed)
    index = write_index(root, outcomes, mode=mode, seed=args.seed)
    failed = [p for p, o in outcomes.items() if not o["ok"]]
    print(
        f"index of {len(outcomes)} paper(s): {index.resolve()}" + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


def _sidecar(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.with_suffix(".json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _describe(meta: dict[str, Any]) -> tuple[str | None, str | None]:
    extra = meta.get("extra") if isinstance(meta.get("extra"), dict) else {}
    title = meta.get("title") or extra.get("title")
    description = meta.get("description") or extra.get("description")
    return (str(title) if title else None), (str(description) if description else None)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_index(
    root: str | os.PathLike, outcomes: dict[str, dict[str, Any]], *, mode: str = "quick", seed: int | None = None
) -> Path:
    """Write ``<root>/index.md``: per paper (``outcomes``: paper -> ``{"ok", "seconds"}``
    or ``{"ok": False, "error"}``), its figures (``<root>/<paper>/*.png``, shown inline)
    and tables (``*.csv``, linked, with their rows and the title/description of their
    JSON sidecar when it has one). Returns the path of the index."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    lines = [
        "# pystanprivacy reproductions",
        "",
        f"{mode} runs" + (f", root seed {seed}" if seed is not None else "") + f"; written {now}.",
        "",
    ]
    lines += ["| Paper | Status | Figures | Tables |", "|---|---|---|---|"]
    listing: dict[str, tuple[list[Path], list[Path]]] = {}
    for paper, outcome in outcomes.items():
        folder = root / paper
        files = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
        figures = [p for p in files if p.suffix.lower() == ".png"]
        tables = [p for p in files if p.suffix.lower() == ".csv"]
        listing[paper] = (figures, tables)
        status = f"done in {outcome['seconds']:.1f} s" if outcome.get("ok") else "**failed**"
        lines.append(f"| [{paper}](#{paper}) | {status} | {len(figures)} | {len(tables)} |")
    for paper, outcome in outcomes.items():
        figures, tables = listing[paper]
        lines += ["", f"## {paper}", ""]
        if not outcome.get("ok"):
            lines += [f"Failed: `{_md(str(outcome.get('error', 'unknown error')))}`", ""]
        if figures:
            lines += ["### Figures", ""]
            for fig in figures:
                link = urllib.parse.quote(f"{paper}/{fig.name}")
                title, description = _describe(_sidecar(fig))
                lines.append(
                    f"- [{fig.name}]({link})"
                    + (f": {_md(title)}" if title else "")
                    + (f". {_md(description)}" if description else "")
                )
                lines += ["", f"  ![{fig.stem}]({link})", ""]
        if tables:
            lines += ["### Tables", "", "| Table | Rows | Description |", "|---|---|---|"]
            for tab in tables:
                link = urllib.parse.quote(f"{paper}/{tab.name}")
                meta = _sidecar(tab)
                title, description = _describe(meta)
                text = " ".join(t for t in (title, description) if t) or ", ".join(map(str, meta.get("columns", [])))
                rows = meta.get("rows", "")
                lines.append(f"| [{tab.name}]({link}) | {rows} | {_md(text)} |")
        if not figures and not tables:
            lines.append("No figures or tables.")
    path = root / "index.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _cmd_audit_workflow(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``audit --workflow``: a workflow of ``--releases`` Gaussian releases, its composed
    guarantee under each composition rule next to its empirical lower bound; exit code 1 when
    a composed guarantee is below the lower bound."""
    from .privacy.audit import audit_gaussian_composition

    if args.out is not None or args.broken:
        parser.error("--workflow prints its table only: --out and --broken do not apply to it")
    if not 1 <= args.releases <= 100:
        parser.error(f"--releases must be in 1..100 (its draws cost --releases times the audit's), got {args.releases}")
    n_draws = 200_000 if args.quick else 2_000_000
    print(
        f"auditing a workflow of {args.releases} Gaussian releases ({n_draws} draws per input, seed {args.seed})",
        flush=True,
    )
    start = time.perf_counter()
    result = audit_gaussian_composition(releases=args.releases, n_draws=n_draws, seed=args.seed)
    print(result.table())
    print(f"done in {time.perf_counter() - start:.1f} s")
    return 0 if result.passed else 1


def _cmd_audit(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the audits; exit code 1 when an audit of a mechanism as claimed fails (its
    empirical epsilon lower bound exceeds the claimed epsilon) or, with ``--broken``, when a
    broken variant is not caught; 0 otherwise."""
    import pandas as pd

    from .models.audits import audit_names, markdown_table, run_audits
    from .run.runner import write_results

    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    if args.workflow:
        return _cmd_audit_workflow(args, parser)
    names = audit_names()
    for kind, chosen in (("mechanism", args.mechanism), ("model", args.model)):
        if chosen is not None:
            valid = audit_names(kind)
            if chosen not in valid:
                parser.error(f"unknown {kind} {chosen!r}; valid {kind}s: {', '.join(valid)}")
            names = [chosen]
    if args.out is not None:  # before the audit runs (minutes), not when its table is written
        _check_out_dir(parser, "--out", args.out)
    mode = "quick" if args.quick else "full"
    variant = "broken variants" if args.broken else "as claimed"
    from .sampling.stan import StanModel

    print(f"auditing {len(names)} mechanism(s)/model(s) ({mode}, {variant}, seed {args.seed})", flush=True)
    start = time.perf_counter()
    models_before = len(StanModel.loaded)

    def progress(row: dict[str, Any]) -> None:
        print(
            f"  {row['name']}: epsilon_lb {row['epsilon_lb']:.3f} (claimed {row['epsilon']:.4g}), {row['samples']} "
            f"samples per side, {row['verdict']} ({row['seconds']:.1f} s)",
            flush=True,
        )

    import warnings

    from .privacy.records import ReproducibleNotSecureWarning

    with warnings.catch_warnings():
        # the audit seeds its mechanisms on purpose (a reproducible audit of the seeded path;
        # the secure path gets a seeded source of the same interface): no advice to drop seeds
        warnings.simplefilter("ignore", ReproducibleNotSecureWarning)
        rows = run_audits(names, quick=args.quick, seed=args.seed, broken=args.broken, progress=progress)
    wall = time.perf_counter() - start
    loaded = StanModel.loaded[models_before:]
    compiled = [(name, sec) for name, cached, sec in loaded if not cached]
    load_seconds = sum(sec for _, _, sec in loaded)
    print()
    print(markdown_table(rows))
    # the real wall time, with the share spent compiling Stan models (a cold cache) or loading them
    print(
        f"\ndone in {wall:.1f} s wall: {len(compiled)} Stan model(s) compiled "
        f"({sum(sec for _, sec in compiled):.1f} s), {len(loaded) - len(compiled)} loaded from the cache, "
        f"{load_seconds:.1f} s in all on models; {wall - load_seconds:.1f} s auditing"
    )
    if args.out is not None:
        table = pd.DataFrame([{**r, "info": json.dumps(r["info"])} for r in rows])
        name = "audit_broken" if args.broken else "audit"
        csv, side = write_results(
            args.out,
            name,
            table,
            {
                "names": names,
                "quick": args.quick,
                "seed": args.seed,
                "broken": args.broken,
                "wall_seconds": wall,
                "model_seconds": load_seconds,
                "models_compiled": [name for name, _ in compiled],
            },
            seed=args.seed,
        )
        print(f"wrote {csv} and {side}")
    bad = [r["name"] for r in rows if (r["passed"] if args.broken else not r["passed"])]
    if bad:
        what = "broken variant(s) NOT caught" if args.broken else "audit(s) FAILED (epsilon_lb > claimed epsilon)"
        print(f"{len(bad)} {what}: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


#: placeholder helps of ``reproduce --data`` and ``--parts``, filled in by :class:`_PaperHelpFormatter`
_DATA_HELP = "a real data file or folder for the papers that take one"
_PARTS_HELP = "run only these parts of a paper that has several"


#: the largest --data JSON file ``pystanprivacy fit`` reads (16 MiB)
_MAX_FIT_DATA_BYTES = 16 * 2**20


def _no_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def _read_fit_data(parser: argparse.ArgumentParser, path: str) -> dict[str, Any]:
    """``fit --data PATH``: a regular file (checked as ``reproduce --data``) holding one JSON
    object of the program's other data; anything else is a usage error naming ``--data``."""
    _check_data_path(parser, None, "fit", path)
    if os.path.isdir(path):
        parser.error(f"--data {path!r}: is a folder; give a JSON file of the program's data")
    if os.stat(path).st_size > _MAX_FIT_DATA_BYTES:
        parser.error(f"--data {path!r}: larger than {_MAX_FIT_DATA_BYTES} bytes")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"), parse_constant=_no_json_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):  # the reader's message quotes the file
        parser.error(f"--data {path!r}: not a UTF-8 JSON file (NaN and Infinity are not allowed)")
    except OSError as exc:
        parser.error(f"--data {path!r}: cannot be read ({exc.strerror or type(exc).__name__})")
    if not isinstance(data, dict):
        parser.error(f"--data {path!r}: must hold a JSON object (data name -> value), got {type(data).__name__}")
    return data


def _cmd_fit(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``pystanprivacy fit MODEL.stan RELEASE.json --out DIR``: fit a user's Stan program on a
    published release (:class:`~pystanprivacy.models.custom.StanProgram`, ``Release.load``);
    write ``summary.csv``, ``posterior.nc`` (the draws, ArviZ netCDF) and ``record.json``.
    Every input is checked before anything is compiled or sampled: a bad path, file, release
    or program is a usage error (exit code 2) naming it; a failed Stan run exits with 1."""
    from .models.custom import StanProgram
    from .privacy.records import Release, ReleaseFileError
    from .sampling.stan import StanRunError

    program_path = args.program
    try:
        mode = os.stat(program_path).st_mode
    except OSError as exc:
        parser.error(f"MODEL.stan {program_path!r}: cannot be read ({exc.strerror or type(exc).__name__})")
    if not stat.S_ISREG(mode) or not program_path.endswith(".stan"):
        parser.error(f"MODEL.stan {program_path!r}: must be a regular file whose name ends in .stan")
    try:
        release = Release.load(args.release)
    except (ReleaseFileError, TypeError) as exc:
        parser.error(f"RELEASE.json {args.release!r}: {exc}")
    for option, value, least in (
        ("--chains", args.chains, 1),
        ("--draws", args.draws, 1),
        ("--warmup", args.warmup, 0),
        ("--seed", args.seed, 0),
    ):
        if value < least:  # before anything is read or compiled
            parser.error(f"{option} must be >= {least}, got {value}")
    data = _read_fit_data(parser, args.data) if args.data is not None else None
    out = _check_out_dir(parser, "--out", args.out)
    try:
        program = StanProgram(Path(program_path))
        program.data_for(release, data)  # every check before anything is compiled
    except (TypeError, ValueError) as exc:
        parser.error(f"fit {program_path!r} on {args.release!r}: {exc}")
    print(
        f"fitting {program_path} on {args.release} ({release.record.mechanism}, epsilon "
        f"{release.record.epsilon:g}; {args.chains} chains x {args.draws} draws, seed {args.seed})",
        flush=True,
    )
    try:
        posterior = program.fit(
            release,
            data=data,
            chains=args.chains,
            warmup=args.warmup,
            draws=args.draws,
            seed=args.seed,
            public_data=args.public_data,
        )
    except StanRunError as exc:
        print(f"pystanprivacy fit: {exc}", file=sys.stderr)
        return 1
    except (TypeError, ValueError) as exc:  # the sampler's settings (--chains 0 ...), before any run
        parser.error(f"fit {program_path!r}: {exc}")
    out.mkdir(parents=True, exist_ok=True)
    posterior.summary().to_csv(out / "summary.csv")
    posterior.save(out / "posterior.nc")
    (out / "record.json").write_text(json.dumps(release.record.to_dict(), indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out / 'summary.csv'}, {out / 'posterior.nc'}, {out / 'record.json'}")
    problems = posterior.check()
    if problems:
        print("convergence warnings: " + "; ".join(problems), file=sys.stderr)
    return 0


def _cmd_budget(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``pystanprivacy budget create | show | history LEDGER``: a persistent budget
    (:class:`~pystanprivacy.privacy.ledger.PrivacyLedger`). ``create`` makes the file (never
    over an existing one); ``show`` prints the budget, what is spent and what remains;
    ``history`` prints the ledger table (``PrivacyAccountant.ledger_table``). Exit code 2 for a
    usage error (bad value, missing file, a file that exists for ``create``, another data
    set's ledger), 1 for a file that is not a usable ledger (damaged, tampered with, newer
    format)."""
    from .privacy.ledger import LedgerFileError, PrivacyLedger

    action = args.budget_command
    try:
        if action == "create":
            ledger = PrivacyLedger.create(
                args.ledger,
                dataset=args.dataset,
                epsilon=args.epsilon,
                delta=args.delta,
                composition=args.composition,
            )
        else:
            ledger = PrivacyLedger.open(args.ledger, dataset=args.dataset)
    except LedgerFileError as exc:
        print(f"pystanprivacy budget {action}: {exc}", file=sys.stderr)
        return 1
    except (FileNotFoundError, FileExistsError, TypeError, ValueError) as exc:
        parser.error(f"budget {action} {args.ledger!r}: {exc}")
    except OSError as exc:
        parser.error(f"budget {action} {args.ledger!r}: {exc.strerror or type(exc).__name__}")
    with ledger:
        if action == "history":
            print(ledger.ledger_table())
            return 0
        history = ledger.history
        eps, delta = ledger.total
        spent, remaining = ledger.spent, ledger.remaining
        last = f" (last {history[-1].time}, {history[-1].label or '-'})" if history else ""
        print(f"ledger     {ledger.location}")  # a server URL without its password
        print(f"dataset    {ledger.dataset}")
        print(f"id         {ledger.ledger_id} (created {ledger.created})")
        print(f"budget     epsilon={eps!r}, delta={delta!r}, {ledger.composition} composition")
        print(f"spent      epsilon={spent[0]!r}, delta={spent[1]!r}")
        print(f"remaining  epsilon={remaining[0]!r}, delta={remaining[1]!r}")
        print(f"entries    {len(history)}{last}")
        print(f"head hash  {ledger.head_hash}")
    return 0


def _cmd_sbc(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``pystanprivacy sbc MODEL --out DIR``: simulation-based calibration of a registry model
    (or the naive baseline, or a user's ``.stan`` program with its simulator file) on the runner
    (``--workers``, ``--scheduler``, resume from ``DIR/.tasks``); writes ``DIR/sbc_summary.csv``
    (+ ``.json`` sidecar), ``DIR/sbc_ranks.csv`` and ``DIR/sbc.png``. Exit code 0 when every
    parameter passes, 1 when one fails (a calibrated model fails with probability at most
    ``--alpha``), 2 for a usage error (every input is checked before anything runs)."""
    from .checks.sbc import RANK_DRAWS, Sampler, make_problem, problem_names, run_sbc, write_sbc

    options: dict[str, Any] = {"n": args.n, "epsilon": args.epsilon, "d": args.d}
    name = args.model
    if name.endswith(".stan"):
        simulator = args.simulator or str(Path(name).with_name(Path(name).stem + "_sim.py"))
        if args.n is not None or args.d is not None:
            parser.error("--n and --d are for the registry models; a program's simulator draws its own data")
        options = {"program": name, "simulator": simulator, "epsilon": args.epsilon, "seeded": args.seeded}
        if not os.path.isfile(name):
            parser.error(f"MODEL {name!r}: not a file")
        name = "program"
    elif args.simulator is not None or args.seeded:
        parser.error(
            f"{'--simulator' if args.simulator is not None else '--seeded'} goes with a MODEL.stan file, not a "
            "registry model"
        )
    elif name not in problem_names():
        parser.error(
            f"no SBC check for {name!r}; checks: {', '.join(problem_names())}, or a MODEL.stan file with "
            "its simulator (docs/guide/sbc.md)"
        )
    rank_draws = RANK_DRAWS if args.rank_draws is None else args.rank_draws
    check_scale_options(args, parser)
    try:
        make_problem(name, **options).preflight()
        sampler = Sampler(chains=args.chains, warmup=args.warmup, draws=args.draws)
        if args.replicates < 2:
            raise ValueError(f"--replicates must be >= 2, got {args.replicates}")
        if rank_draws < 1 or sampler.chains * sampler.draws < rank_draws:
            raise ValueError(
                f"--rank-draws must be >= 1 and at most --chains x --draws = {sampler.chains} x "
                f"{sampler.draws}, got {rank_draws}"
            )
        if not 0.0 < args.alpha < 1.0:
            raise ValueError(f"--alpha must be in (0, 1), got {args.alpha}")
    except TypeError as exc:  # an option the check does not take (--d for a binomial model ...)
        parser.error(f"sbc {args.model}: {exc}")
    except ValueError as exc:
        parser.error(f"sbc {args.model}: {exc}")
    out = _check_out_dir(parser, "--out", args.out)
    print(
        f"SBC of {args.model}: {args.replicates} replicates, {sampler.chains} chain(s) x {sampler.draws} draws, "
        f"L = {rank_draws}, seed {args.seed}; the releases are of simulated data, no accountant is charged",
        flush=True,
    )
    start = time.perf_counter()
    with scale_executor(args) as (executor, workers, how), resume_context(args, out, executor):
        result = run_sbc(
            name,
            replicates=args.replicates,
            chunk=args.chunk,
            options=options,
            sampler=sampler,
            rank_draws=rank_draws,
            alpha=args.alpha,
            seed=args.seed,
            workers=workers,
            progress=not args.no_progress,
        )
        paths = write_sbc(result, out, args={k: v for k, v in vars(args).items() if k != "handler"})
    print(result.summary.to_string(index=False))
    verdict = "PASS" if result.passed else "FAIL"
    print(
        f"{verdict} at family-wise alpha = {args.alpha:g} ({how}, {time.perf_counter() - start:.1f} s); wrote "
        f"{', '.join(str(p) for p in paths.values())}"
    )
    return 0 if result.passed else 1


def data_help() -> str:
    """The help of ``reproduce --data``: each paper's ``DATA_HELP`` (the paper protocol of
    :mod:`pystanprivacy.experiments`), for the papers that take data."""
    said = "; ".join(f"{name}: {paper.DATA_HELP}" for name, paper in _papers().items() if paper.DATA_HELP is not None)
    return f"{_DATA_HELP}: {said}. Not allowed with 'all'"


def parts_help() -> str:
    """The help of ``reproduce --parts``: the ``PARTS`` each paper declares, for those that have parts."""
    said = "; ".join(f"{name}: {', '.join(paper.PARTS)}" for name, paper in _papers().items() if paper.PARTS)
    return f"{_PARTS_HELP} ({said}), comma-separated. Not allowed with 'all'"


def _papers() -> dict[str, Any]:
    from .experiments import get_paper, known_papers

    return {name: get_paper(name) for name in known_papers()}


class _PaperHelpFormatter(argparse.HelpFormatter):
    """Writes the helps of ``--data`` and ``--parts`` from the papers' declarations when the
    help is shown: importing every paper takes about a second, too long for every command."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        fill = {_DATA_HELP: data_help, _PARTS_HELP: parts_help}.get(action.help) if action.help else None
        return fill().replace("%", "%%") if fill else action.help  # argparse %-formats help strings


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``pystanprivacy`` command."""
    parser = argparse.ArgumentParser(
        prog="pystanprivacy",
        description="Differentially private Bayesian inference with Stan: models and paper reproductions.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    p_models = sub.add_parser(
        "models",
        help=(
            "list every model of the registry (stan/<paper>/<model>.json): its "
            "Python class, paper, equations and privacy statement"
        ),
    )
    p_models.set_defaults(handler=lambda a, _p: _cmd_models(a))
    p_rep = sub.add_parser(
        "reproduce", help="reproduce a paper's tables and figures", formatter_class=_PaperHelpFormatter
    )
    p_rep.add_argument(
        "paper",
        metavar="PAPER",
        help="paper short name, e.g. foulds2016, or 'all' (every paper into OUT/PAPER, and OUT/index.md)",
    )
    size = p_rep.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small run (default): minutes on a laptop")
    size.add_argument("--full", action="store_true", help="the paper's full number of repeats")
    p_rep.add_argument(
        "--out",
        metavar="DIR",
        default=None,
        help="output folder (default: ./results/PAPER with --full, ./results-quick/PAPER with --quick; for 'all': "
        "./results or ./results-quick)",
    )
    p_rep.add_argument(
        "--seed", type=int, default=0, help="root seed of the run (default 0); seeds give reproducibility, not security"
    )
    p_rep.add_argument(
        "--workers",
        type=int,
        default=None,
        help="local worker processes (default 1: no pool), or the size of the --scheduler local cluster",
    )
    add_scale_options(p_rep)
    p_rep.add_argument("--no-progress", action="store_true", help="no progress bars")
    p_rep.add_argument("--data", metavar="PATH", default=None, help=_DATA_HELP)
    p_rep.add_argument("--parts", metavar="PART[,PART]", default=None, help=_PARTS_HELP)
    p_rep.set_defaults(handler=_cmd_reproduce)
    p_aud = sub.add_parser(
        "audit",
        help="empirical epsilon lower bounds (Clopper-Pearson) for every mechanism and OPS model",
        description=(
            "Run each mechanism / OPS model many times on worst-case neighbouring inputs and report a "
            "Clopper-Pearson lower bound on epsilon (95 % confidence) next to the claimed epsilon. Exit "
            "code 1 if any bound exceeds its claimed epsilon (with --broken: if any deliberately broken "
            "variant is not caught)."
        ),
    )
    which = p_aud.add_mutually_exclusive_group()
    which.add_argument("--mechanism", metavar="NAME", default=None, help="audit one mechanism only")
    which.add_argument("--model", metavar="NAME", default=None, help="audit one OPS model only")
    which.add_argument(
        "--workflow",
        action="store_true",
        help="audit a workflow of --releases Gaussian releases: its composed guarantee under each "
        "composition rule (basic, zcdp, rdp, pld) next to its empirical lower bound",
    )
    p_aud.add_argument(
        "--releases", type=int, default=5, metavar="K", help="Gaussian releases in the --workflow audit (default 5)"
    )
    p_aud.add_argument("--quick", action="store_true", help="the test-suite sample sizes (default: full)")
    p_aud.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p_aud.add_argument("--out", metavar="DIR", default=None, help="write audit.csv + audit.json (runner.write_results)")
    p_aud.add_argument(
        "--broken", action="store_true", help="audit the deliberately broken variants instead (each should be caught)"
    )
    p_aud.set_defaults(handler=_cmd_audit)
    p_fit = sub.add_parser(
        "fit",
        help="fit your own Stan program on a published release (a Release.save JSON file)",
        description=(
            "Fit MODEL.stan (its data block declares dp_y, dp_scale, ...: the release's values and record "
            "fields, see pystanprivacy.models.custom) on RELEASE.json, checked as Release.load does, and "
            "write DIR/summary.csv, DIR/posterior.nc (ArviZ netCDF) and DIR/record.json."
        ),
    )
    p_fit.add_argument("program", metavar="MODEL.stan", help="the Stan program (#include dp_noise.stanfunctions ...)")
    p_fit.add_argument("release", metavar="RELEASE.json", help="the published release (Release.save)")
    p_fit.add_argument(
        "--data",
        metavar="PATH",
        default=None,
        help="JSON object of the program's other data (sizes, hyperparameters); never dp_* names",
    )
    p_fit.add_argument("--out", metavar="DIR", required=True, help="output folder")
    p_fit.add_argument("--chains", type=int, default=4, help="chains (default 4)")
    p_fit.add_argument("--warmup", type=int, default=1000, help="warm-up iterations per chain (default 1000)")
    p_fit.add_argument("--draws", type=int, default=1000, help="draws per chain (default 1000)")
    p_fit.add_argument("--seed", type=int, default=0, help="Stan's seed (default 0); reproducibility, not security")
    p_fit.add_argument(
        "--public-data",
        action="store_true",
        help="the release and data are simulated or public: a failed Stan run's message keeps its numbers "
        "(default: masked as <num>, since Stan's messages can quote the data)",
    )
    p_fit.set_defaults(handler=_cmd_fit)
    p_sbc = sub.add_parser(
        "sbc",
        allow_abbrev=False,
        help="simulation-based calibration of a noise-aware model (registry name or MODEL.stan + simulator)",
        description=(
            "Draw theta from the prior, simulate data, release them through the model's mechanism (simulated "
            "data: nothing is charged), fit, and test the ranks of theta among the posterior draws for "
            "uniformity (ECDF test, Bonferroni over the parameters). Writes DIR/sbc_summary.csv (+ .json), "
            "DIR/sbc_ranks.csv and DIR/sbc.png. Exit code 1 when the model fails (a calibrated model fails "
            "with probability at most --alpha). See docs/guide/sbc.md."
        ),
    )
    p_sbc.add_argument(
        "model",
        metavar="MODEL",
        help="a registry model with a check (e.g. bernstein2018/binomial_beta), "
        "naive/bernstein2018/binomial_beta, or a .stan file with its simulator",
    )
    p_sbc.add_argument(
        "--simulator",
        metavar="FILE.py",
        default=None,
        help="with MODEL.stan: the Python file defining simulate(rng) and release(private, *, epsilon, "
        "seed, accountant) (default: MODEL_sim.py beside it)",
    )
    p_sbc.add_argument(
        "--seeded",
        action="store_true",
        help="with MODEL.stan: seeded releases (continuous float noise) instead of the default, releases made "
        "as real ones are (the secure path's grid and exact discrete noise, from a seeded source)",
    )
    p_sbc.add_argument("--replicates", type=int, default=200, help="replicates R (default 200)")
    p_sbc.add_argument("--epsilon", type=float, default=None, help="epsilon of the releases (default: the check's)")
    p_sbc.add_argument("--n", type=int, default=None, help="records per simulated data set (default: the check's)")
    p_sbc.add_argument("--d", type=int, default=None, help="categories of kulkarni2022/histogram_oue (default 3)")
    p_sbc.add_argument(
        "--chunk",
        type=int,
        default=None,
        help="replicates per task, fitted in one Stan run where the model takes R data sets "
        "(default 50; 1 for a program)",
    )
    p_sbc.add_argument("--chains", type=int, default=1, help="chains per fit (default 1)")
    p_sbc.add_argument("--warmup", type=int, default=500, help="warm-up iterations per chain (default 500)")
    p_sbc.add_argument("--draws", type=int, default=1000, help="draws per chain (default 1000)")
    p_sbc.add_argument(
        "--rank-draws",
        type=int,
        default=None,
        help="L: posterior draws each true value is ranked among, spaced evenly (default 99)",
    )
    p_sbc.add_argument(
        "--alpha", type=float, default=0.01, help="family-wise false-rejection rate of the verdict (default 0.01)"
    )
    p_sbc.add_argument("--seed", type=int, default=0, help="root seed (default 0); simulated data only")
    p_sbc.add_argument("--out", metavar="DIR", required=True, help="output folder (resumes from DIR/.tasks)")
    p_sbc.add_argument(
        "--workers",
        type=int,
        default=None,
        help="local worker processes (default 1: no pool), or the size of the --scheduler local cluster",
    )
    add_scale_options(p_sbc)
    p_sbc.add_argument("--no-progress", action="store_true", help="no progress bar")
    p_sbc.set_defaults(handler=_cmd_sbc)
    _add_budget_parser(sub)
    _add_report_parser(sub)
    return parser


def _add_report_parser(sub: Any) -> None:
    """``pystanprivacy report``: every verdict of REPRODUCTION.md computed from ``results/``
    (:mod:`pystanprivacy.report`)."""
    p_report = sub.add_parser(
        "report",
        allow_abbrev=False,
        help="compute every verdict of the reproduction report from results/ by the written rule",
        description=(
            "Read every paper's claims (pystanprivacy/experiments/<paper>/claims.py) from the results folder, "
            "judge each by the rule of pystanprivacy.report.rule and print the verdict block, or write it "
            "between <!-- verdicts:begin --> and <!-- verdicts:end --> of FILE (--write), or exit 1 with a diff "
            "when FILE's block differs (--check). See docs/guide/verdicts.md."
        ),
    )
    p_report.add_argument("--results", metavar="DIR", default="results", help="the results folder (default results)")
    mode = p_report.add_mutually_exclusive_group()
    mode.add_argument("--write", metavar="FILE", default=None, help="replace FILE's verdict block")
    mode.add_argument("--check", metavar="FILE", default=None, help="exit 1 and print a diff if FILE's block differs")
    p_report.add_argument(
        "--cells",
        metavar="CSV",
        default=None,
        help="write every cell of every claim to CSV (with --check: exit 1 if CSV differs instead)",
    )
    p_report.add_argument(
        "--details",
        metavar="MD",
        default=None,
        help="write each claim's parts and statistics to MD, linked from the block instead of held in it "
        "(with --check: exit 1 if MD differs instead)",
    )
    p_report.set_defaults(handler=_cmd_report)


def _cmd_report(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``pystanprivacy report``: exit code 0, 1 when ``--check`` finds a difference, 2 for an error."""
    from .report.command import run_report

    def path(value: str | None) -> Path | None:
        return None if value is None else Path(value)

    return run_report(
        results_dir=Path(args.results),
        write=path(args.write),
        check=path(args.check),
        cells=path(args.cells),
        details=path(args.details),
    )


def _add_budget_parser(sub: Any) -> None:
    """``pystanprivacy budget create | show | history``."""
    from .privacy.records import COMPOSITION_RULES

    p_budget = sub.add_parser(
        "budget",
        allow_abbrev=False,
        help="a privacy budget stored in a ledger file, shared by every process: create, show, history",
        description=(
            "A persistent privacy budget (pystanprivacy.privacy.ledger.PrivacyLedger, an SQLite file or a "
            "postgresql:// URL): "
            "every spend is one synced transaction, hash-chained to the one before. Open it in Python with "
            "PrivacyAccountant.open(LEDGER) and pass it as accountant=. See docs/guide/accounting.md."
        ),
    )
    actions = p_budget.add_subparsers(dest="budget_command", metavar="ACTION")
    actions.required = True
    create = actions.add_parser("create", allow_abbrev=False, help="create a new ledger file (never over one)")
    show = actions.add_parser("show", allow_abbrev=False, help="the budget, what is spent and what remains")
    history = actions.add_parser("history", allow_abbrev=False, help="every stored spend, as the ledger table")
    for p in (create, show, history):
        p.add_argument("ledger", metavar="LEDGER", help="the ledger file, e.g. budget.db, or a postgresql:// URL")
        p.set_defaults(handler=_cmd_budget)
    create.add_argument("--dataset", required=True, help="the name of the data set whose budget this is")
    create.add_argument("--epsilon", type=float, required=True, help="total epsilon (finite, > 0)")
    create.add_argument("--delta", type=float, default=0.0, help="total delta in [0, 1) (default 0)")
    create.add_argument(
        "--composition", choices=COMPOSITION_RULES, default="basic", help="composition rule (default basic)"
    )
    for p in (show, history):
        p.add_argument("--dataset", default=None, help="refuse the file unless it is this data set's ledger")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pystanprivacy`` console script; returns the exit code
    (argparse errors, e.g. an unknown paper, exit with code 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.handler(args, parser) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
