"""The benchmark suite in one command: one Markdown report and one JSON file.

Run (compiled models are cached; models that are not are compiled first, untimed):

    python benchmarks/run_all.py [--quick] [--out benchmarks/results] [--skip SECTION,...]
                                 [--models GLOB] [--cold GLOB]                       # section 1
                                 [--papers LIST] [--full-papers LIST] [--workers N]  # section 4
                                 [--scheduler local] [--compare-workers] [--timeout S]

writes ``OUT/report.md`` and ``OUT/report.json`` (default ``OUT = benchmarks/results/``).
The exit status is 1 when any reproduction exits non-zero, any section fails, or a
1-vs-2-worker comparison finds different results; 0 otherwise. Nothing is asserted
about the times themselves.

Context of every number. The report opens with the machine (``platform.platform()``,
``os.cpu_count()``), the date (UTC), the git commit of the checkout (``+dirty`` when the
working tree has uncommitted changes to tracked files), the Python executable and the
package versions (``pystanprivacy.run.runner.package_versions()``); in the JSON file every row
carries that context under ``context``. Every row also records ``load1_start`` and
``load1_end``: the 1-minute load average (``os.getloadavg()[0]``) when its measurement
started and ended, and ``date``, when it started. The machine may be shared: compare rows
of one report whose load columns are alike, not reports of different days.

Sections (``--skip models,gibbs,backend,reproduce`` leaves sections out):

1. ``models``: the per-model table of ``bench_models.py`` (its columns are described
   there: ``load s`` construction of the cached model in a fresh process, ``proc s`` that
   process, ``s/1k ESS`` sampling wall time per 1000 bulk effective samples at a small and a
   large n, ``slope`` / ``grad slope`` their log-log slopes in n, ``expected`` the expected
   scaling, leapfrog steps per iteration, tree depth, ESS per draw and divergences of the
   large-n fit; ``cold compile s`` with ``--cold GLOB``). ``--quick`` / ``--models`` /
   ``--cold`` are passed through.
2. ``gibbs``: Stan (NUTS) vs the paper's Gibbs sampler (Bernstein & Sheldon 2018, Alg. 1)
   on the same binomial and multinomial releases (n = 1000, epsilon = 0.1; functions of
   ``bench_bernstein2018.py``), side by side. For each sampler: ``s`` wall time, ``min ESS``
   minimum bulk ESS over the components of theta, ``ESS/s`` = min ESS / s of the same run
   (with repeats, the run with the median ESS/s, the lower one for an even count, so the
   three numbers always come from one run); ``Stan/Gibbs`` = Stan's ESS/s / Gibbs's ESS/s.
   ``data sets``: releases sampled together (1; also 100, the calibration use, without
   ``--quick``). Stan 4 x (1000 + 1000), Gibbs 4 x (2000 + 5000), the paper's run length;
   ``--quick``: one repeat, one data set (else 3 repeats). Compilation and the release are outside the timings.
3. ``backend``: per-fit overhead of each Stan backend, each timing in a fresh Python
   process (``bench_backend.py``), median over the repeats (1 with ``--quick``, else 3):
   ``construct s`` import + construction of the cached model, ``fit s`` a 4 x (1000 + 1000)
   fit of foulds2016/beta_bernoulli, ``fixed_param s`` a Stan run that does (almost) nothing
   (one fixed_param draw: the overhead every fit pays), ``process s`` the whole process. A
   backend that cannot be used here gets a row saying ``not available: <reason>`` with
   the backend's own ``availability()`` reason and no numbers.
4. ``reproduce``: ``python -m pystanprivacy reproduce PAPER --quick --no-resume
   --no-progress --out TMP`` (and ``--full`` for ``--full-papers``; ``PAPER:PART`` adds
   ``--parts PART``) as a subprocess of the
   same interpreter, run from the repository root: ``wall s`` its wall time, ``CPU s`` the
   user + system CPU time of the process and of every descendant it waited for (delta of
   ``resource.getrusage(RUSAGE_CHILDREN)``; so ``CPU s / wall s`` is the mean number of busy
   cores), ``exit`` its exit code (the tail of its stderr in the JSON when non-zero).
   ``--workers N`` / ``--scheduler local`` are passed through; ``--timeout S`` stops a
   reproduction after S seconds (recorded with exit code -9). ``--compare-workers`` also
   runs each reproduction (quick and full) with 1 and with 2 workers and reports ``speed-up`` = wall
   time with 1 / wall time with 2 and whether the outputs agree: ``CSV bytes`` every CSV
   byte for byte; ``CSV w/o timing`` every CSV with its timing columns (names containing
   ``seconds``, ``elapsed`` or ending ``_s``) left out, the rest compared exactly as text;
   ``sidecars`` the JSON sidecars without their volatile fields (creation time, command
   line, worker count, timings); ``figures`` the PNG files byte for byte (informative only).

Outputs of the reproductions go to a temporary folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import json
import math
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))  # benchmark this checkout, as the reproduction subprocesses do

SECTIONS = ("models", "gibbs", "backend", "reproduce")
PAPERS = ("foulds2016", "bernstein2018", "kulkarni2022", "jewson2023")
BACKEND_MODEL = "foulds2016/beta_bernoulli"
TIMING_COLUMN = re.compile(r"seconds|elapsed|_s$")
VOLATILE_KEYS = re.compile(r"^(created|command|workers|executor|seconds|elapsed)$|seconds|elapsed|_s$")


# ---------------------------------------------------------------------------- context
def git_commit(root: Path = ROOT) -> str | None:
    """The checkout's commit (``+dirty`` with uncommitted changes to tracked files), or
    ``None`` outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=30)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def context() -> dict[str, Any]:
    """Machine, date, commit and versions: the context every row is measured in."""
    import pystanprivacy
    from pystanprivacy.run.runner import package_versions

    return {
        "machine": platform.platform(),
        "cpu_count": os.cpu_count(),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "git_commit": git_commit(),
        "python": sys.executable,
        "pystanprivacy_path": str(Path(pystanprivacy.__file__).resolve().parent),
        "versions": package_versions(),
    }


def load1() -> float:
    return float(os.getloadavg()[0])


@contextlib.contextmanager
def stamped(row: dict[str, Any]):
    """Fill ``row`` with ``date``, ``load1_start`` and (on exit) ``load1_end``."""
    row["date"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    row["load1_start"] = load1()
    try:
        yield row
    finally:
        row["load1_end"] = load1()


def _median_record(records: list[dict], key: str) -> dict:
    """The record with the median ``key`` (the lower median for an even count): one real
    record, so that the numbers taken from it belong together."""
    ordered = sorted(records, key=lambda r: r[key])
    return ordered[(len(ordered) - 1) // 2]


# ------------------------------------------------------------------------ 1. models
def models_section(
    patterns: str | None = None,
    *,
    quick: bool = False,
    cold: str | None = None,
    seed: int = 1,
    sampler: dict | None = None,
) -> dict[str, Any]:
    """The rows of ``bench_models.py`` (one per model), each stamped with its load averages."""
    import bench_models

    names = bench_models.select(patterns)
    cold_rows: dict[str, dict] = {}
    if cold:
        for name in bench_models.select(cold):
            cold_rows[name] = bench_models.cold_compile(name)
    fixed = {"what": "fixed_param, 1 draw, foulds2016/beta_bernoulli, median of 3"}
    with stamped(fixed):
        fixed["seconds"] = bench_models.fixed_cost()
    rows = []
    for name in names:
        row: dict[str, Any] = {}
        with stamped(row):
            row.update(bench_models.model_row(name, quick=quick, sampler=sampler, seed=seed, cold=cold_rows.get(name)))
        rows.append(row)
        print(f"  models: {name} done", file=sys.stderr, flush=True)
    used = sampler if sampler is not None else (bench_models.QUICK_SAMPLER if quick else bench_models.SAMPLER)
    return {"rows": rows, "sampler": used, "fixed_cost": fixed, "cold": bool(cold_rows)}


def models_markdown(section: dict[str, Any]) -> str:
    import bench_models

    cols = [c for c in bench_models.COLUMNS if c[0] != "load1"] + [
        ("load1_start", "load1 start"),
        ("load1_end", "load1 end"),
    ]
    s = section["sampler"]
    f = section["fixed_cost"]
    return (
        bench_models.markdown_table(section["rows"], cols, cold=section["cold"])
        + f"\n\n{s['chains']} chains x ({s['warmup']} + {s['draws']}); diagnostics of the large-n fit. "
        f"Fixed cost of one Stan run ({f['what']}): {f['seconds']:.3f} s."
    )


# ------------------------------------------------------------------------- 2. gibbs
def gibbs_section(
    *,
    quick: bool = False,
    repeats: int | None = None,
    datasets: Sequence[int] | None = None,
    stan: dict | None = None,
    gibbs: dict | None = None,
) -> dict[str, Any]:
    """Stan vs Gibbs on the same releases (``bench_bernstein2018.ess_per_second``); one
    side-by-side row per (model, data sets) and every run in ``runs``."""
    import bench_bernstein2018 as bb

    repeats = repeats if repeats is not None else (1 if quick else 3)
    datasets = tuple(datasets) if datasets is not None else ((1,) if quick else (1, 100))
    stan = dict(bb.STAN if stan is None else stan)
    gibbs = dict(bb.GIBBS if gibbs is None else gibbs)
    runs: list[dict] = []
    rows: list[dict] = []
    for kind in ("binomial", "multinomial"):
        for d in datasets:
            row: dict[str, Any] = {"model": kind, "datasets": d, "n": 1000, "epsilon": 0.1, "repeats": repeats}
            with stamped(row):
                these = bb.ess_per_second(repeats, datasets=(d,), stan=stan, gibbs=gibbs, kinds=(kind,))
            runs.extend(these)
            for method, prefix in (("Stan (NUTS)", "stan"), ("Gibbs (Alg. 1)", "gibbs")):
                rec = _median_record([r for r in these if r["method"] == method], "ess_per_s")
                row.update(
                    {
                        f"{prefix}_s": rec["seconds"],
                        f"{prefix}_min_ess": rec["min_ess_bulk"],
                        f"{prefix}_ess_per_s": rec["ess_per_s"],
                        f"{prefix}_rep": rec["rep"],
                    }
                )
            row["stan_over_gibbs"] = row["stan_ess_per_s"] / row["gibbs_ess_per_s"]
            rows.append(row)
            print(f"  gibbs: {kind} x {d} done", file=sys.stderr, flush=True)
    return {"rows": rows, "runs": runs, "stan": stan, "gibbs": gibbs}


def _fmt(x: Any, spec: str = ".3g") -> str:
    if isinstance(x, (float, np.floating)):
        return "nan" if not math.isfinite(x) else format(float(x), spec)
    if x is None:
        return ""
    return str(x)


def table(rows: Iterable[dict], cols: Sequence[tuple[str, str, str]]) -> str:
    """Markdown table of ``rows``; ``cols``: (key, header, format spec)."""
    lines = ["| " + " | ".join(h for _, h, _ in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(k), spec) for k, _, spec in cols) + " |")
    return "\n".join(lines)


def gibbs_markdown(section: dict[str, Any]) -> str:
    s, g = section["stan"], section["gibbs"]
    cols = [
        ("model", "model", ""),
        ("datasets", "data sets", ""),
        ("stan_s", "Stan s", ".3g"),
        ("stan_min_ess", "Stan min ESS", ".0f"),
        ("stan_ess_per_s", "Stan ESS/s", ".0f"),
        ("gibbs_s", "Gibbs s", ".3g"),
        ("gibbs_min_ess", "Gibbs min ESS", ".0f"),
        ("gibbs_ess_per_s", "Gibbs ESS/s", ".0f"),
        ("stan_over_gibbs", "Stan/Gibbs", ".2f"),
        ("repeats", "repeats", ""),
        ("load1_start", "load1 start", ".2f"),
        ("load1_end", "load1 end", ".2f"),
    ]
    return (
        table(section["rows"], cols)
        + f"\n\nn = 1000, epsilon = 0.1, same release for both samplers; Stan {s['chains']} x ({s['warmup']} + "
        f"{s['draws']}), Gibbs {g['chains']} x ({g['burnin']} + {g['iterations']}); with repeats, the run "
        "with the median ESS/s."
    )


# ----------------------------------------------------------------------- 3. backend
def backend_section(
    *,
    quick: bool = False,
    repeats: int | None = None,
    model: str = BACKEND_MODEL,
    backends: Sequence[str] = ("pystan", "cmdstanpy"),
) -> dict[str, Any]:
    """One row per backend: medians of ``bench_backend.measure`` or, when the backend cannot
    be used here, ``status = "not available: <its availability() reason>"`` and no numbers."""
    import bench_backend

    repeats = repeats if repeats is not None else (1 if quick else 3)
    rows = []
    for name in backends:
        row: dict[str, Any] = {"backend": name, "model": model, "repeats": repeats}
        with stamped(row):
            why = bench_backend.availability(name)
            if why is not None:
                row["status"] = f"not available: {why}"
            else:
                try:
                    runs = bench_backend.measure(name, model, repeats=repeats)
                except subprocess.CalledProcessError as exc:
                    row["status"] = f"failed: exit {exc.returncode}: {(exc.stderr or '').strip()[-500:]}"
                else:
                    row["status"] = "ok"
                    row["runs"] = runs
                    for key in ("construct_s", "fit_s", "fixed_param_s", "wall_s"):
                        row[key] = float(np.median([r[key] for r in runs]))
        rows.append(row)
        print(f"  backend: {name} {row['status'][:40]}", file=sys.stderr, flush=True)
    return {"rows": rows}


def backend_markdown(section: dict[str, Any]) -> str:
    cols = [
        ("backend", "backend", ""),
        ("status", "status", ""),
        ("construct_s", "construct s", ".2f"),
        ("fit_s", "fit s", ".2f"),
        ("fixed_param_s", "fixed_param s", ".3f"),
        ("wall_s", "process s", ".2f"),
        ("repeats", "repeats", ""),
        ("load1_start", "load1 start", ".2f"),
        ("load1_end", "load1 end", ".2f"),
    ]
    model = section["rows"][0]["model"] if section["rows"] else BACKEND_MODEL
    return (
        table(section["rows"], cols)
        + f"\n\nEach run a fresh Python process on the cached {model} model; fit: 4 x (1000 + 1000); medians "
        "over the repeats."
    )


# --------------------------------------------------------------------- 4. reproduce
def reproduce_command(paper: str, mode: str, workers: int, scheduler: str | None, out: Path) -> list[str]:
    """``python -m pystanprivacy reproduce PAPER --MODE --no-resume --no-progress ...``;
    ``paper`` may name parts of a paper that has several: ``foulds2016:beta_bernoulli``
    (``--parts beta_bernoulli``)."""
    name, _, parts = paper.partition(":")
    cmd = [
        sys.executable,
        "-m",
        "pystanprivacy",
        "reproduce",
        name,
        f"--{mode}",
        "--no-resume",
        "--no-progress",
        "--out",
        str(out),
        "--workers",
        str(workers),
    ]
    if parts:
        cmd += ["--parts", parts]
    if scheduler is not None:
        cmd += ["--scheduler", scheduler]
    return cmd


def run_command(cmd: Sequence[str], *, cwd: Path = ROOT, timeout: float | None = None) -> dict[str, Any]:
    """Run ``cmd``; its wall time, the CPU time of it and its waited-for descendants
    (``RUSAGE_CHILDREN`` delta), exit code and, on failure, the tail of its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        proc = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout)
        code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        code = -9
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr = (
            exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        ) + f"\n(timed out after {timeout} s)"
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    row = {"command": " ".join(cmd), "exit_code": code, "wall_s": wall, "cpu_s": cpu}
    if code != 0:
        row["stderr_tail"] = stderr[-2000:]
        row["stdout_tail"] = stdout[-1000:]
    return row


def _strip_volatile(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip_volatile(v) for k, v in obj.items() if not VOLATILE_KEYS.search(str(k))}
    if isinstance(obj, list):
        return [_strip_volatile(v) for v in obj]
    return obj


def compare_outputs(a: Path, b: Path) -> dict[str, Any]:
    """Compare two reproduction output folders (file names relative to each)."""

    def files(root: Path, suffix: str) -> dict[str, Path]:
        return {str(p.relative_to(root)): p for p in sorted(root.rglob(f"*{suffix}")) if p.is_file()}

    out: dict[str, Any] = {}
    ca, cb = files(a, ".csv"), files(b, ".csv")
    common = sorted(set(ca) & set(cb))
    out["csv_files"] = len(common)
    out["only_in_one"] = sorted(set(ca) ^ set(cb)) + sorted(set(files(a, ".json")) ^ set(files(b, ".json")))
    out["csv_differ_bytes"] = [n for n in common if ca[n].read_bytes() != cb[n].read_bytes()]
    differ, timing_cols = [], set()
    for n in out["csv_differ_bytes"]:
        ta = pd.read_csv(ca[n], dtype=str, keep_default_na=False)
        tb = pd.read_csv(cb[n], dtype=str, keep_default_na=False)
        drop = [c for c in ta.columns if TIMING_COLUMN.search(str(c))]
        timing_cols.update(drop)
        if list(ta.columns) != list(tb.columns) or not ta.drop(columns=drop).equals(tb.drop(columns=drop)):
            differ.append(n)
    out["csv_differ_without_timing"] = differ
    out["timing_columns_ignored"] = sorted(timing_cols)
    ja, jb = files(a, ".json"), files(b, ".json")

    def sidecar(path: Path) -> Any:
        return _strip_volatile(json.loads(path.read_text()))

    out["json_differ"] = [n for n in sorted(set(ja) & set(jb)) if sidecar(ja[n]) != sidecar(jb[n])]
    pa, pb = files(a, ".png"), files(b, ".png")
    out["png_files"] = len(set(pa) & set(pb))
    out["png_differ"] = [n for n in sorted(set(pa) & set(pb)) if pa[n].read_bytes() != pb[n].read_bytes()]
    # no table to compare is not "identical": a run that wrote nothing proves nothing
    out["csv_identical_bytes"] = bool(common) and not out["csv_differ_bytes"] and not out["only_in_one"]
    out["csv_identical_without_timing"] = bool(common) and not differ and not out["only_in_one"]
    out["sidecars_identical"] = not out["json_differ"] and not out["only_in_one"]
    out["figures_identical"] = not out["png_differ"]
    return out


def reproduce_section(
    papers: Sequence[str] = PAPERS,
    *,
    full_papers: Sequence[str] = (),
    workers: int = 1,
    scheduler: str | None = None,
    compare_workers: bool = False,
    command: Callable[[str, str, int, str | None, Path], list[str]] = reproduce_command,
    timeout: float | None = None,
    workdir: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """Run every reproduction (``command(paper, mode, workers, scheduler, out)``: the
    command line, default :func:`reproduce_command`) and, with ``compare_workers``, each
    one (quick and full) with 1 and 2 workers; rows of runs and of comparisons."""
    runs: list[dict] = []
    compare: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="pystanprivacy-bench-", dir=workdir) as tmp:
        counts = sorted({workers, *((1, 2) if compare_workers else ())})
        plan = [
            (p, mode, w) for mode, names in (("quick", papers), ("full", full_papers)) for p in names for w in counts
        ]
        outs: dict[tuple[str, str, int], Path] = {}
        for paper, mode, w in plan:
            out = Path(tmp) / f"{paper}-{mode}-{w}"
            row: dict[str, Any] = {"paper": paper, "mode": mode, "workers": w, "scheduler": scheduler or "none"}
            with stamped(row):
                row.update(run_command(command(paper, mode, w, scheduler, out), timeout=timeout))
            outs[(paper, mode, w)] = out
            runs.append(row)
            print(
                f"  reproduce: {paper} {mode} workers={w}: exit {row['exit_code']}, {row['wall_s']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
        if compare_workers:
            by = {(r["paper"], r["mode"], r["workers"]): r for r in runs}
            for paper, mode in [(p, "quick") for p in papers] + [(p, "full") for p in full_papers]:
                one, two = by[(paper, mode, 1)], by[(paper, mode, 2)]
                row = {
                    "paper": paper,
                    "mode": mode,
                    "scheduler": scheduler or "none",
                    "wall_s_1": one["wall_s"],
                    "wall_s_2": two["wall_s"],
                    "cpu_s_1": one["cpu_s"],
                    "cpu_s_2": two["cpu_s"],
                    "speedup": one["wall_s"] / two["wall_s"],
                    "exit_codes": [one["exit_code"], two["exit_code"]],
                    "load1_start": one["load1_start"],
                    "load1_end": two["load1_end"],
                    "date": one["date"],
                }
                if one["exit_code"] == 0 and two["exit_code"] == 0:
                    row.update(compare_outputs(outs[(paper, mode, 1)], outs[(paper, mode, 2)]))
                compare.append(row)
    return {"runs": runs, "compare": compare}


def _yes_no(r: dict, key: str) -> str:
    return "" if key not in r else ("yes" if r[key] else "NO")


def reproduce_markdown(section: dict[str, Any]) -> str:
    cols = [
        ("paper", "paper", ""),
        ("mode", "mode", ""),
        ("workers", "workers", ""),
        ("scheduler", "scheduler", ""),
        ("wall_s", "wall s", ".1f"),
        ("cpu_s", "CPU s", ".1f"),
        ("exit_code", "exit", ""),
        ("load1_start", "load1 start", ".2f"),
        ("load1_end", "load1 end", ".2f"),
    ]
    text = table(section["runs"], cols)
    failed = [r for r in section["runs"] if r["exit_code"] != 0]
    for r in failed:
        last = [ln for ln in r.get("stderr_tail", "").strip().splitlines() if ln.strip()][-1:] or ["(no output)"]
        text += f"\n\nFAILED {r['paper']} {r['mode']} (exit {r['exit_code']}): `{last[0][:300]}`"
    if section["compare"]:
        rows = [
            {
                **r,
                **{
                    k: _yes_no(r, k)
                    for k in (
                        "csv_identical_bytes",
                        "csv_identical_without_timing",
                        "sidecars_identical",
                        "figures_identical",
                    )
                },
            }
            for r in section["compare"]
        ]
        cols = [
            ("paper", "paper", ""),
            ("mode", "mode", ""),
            ("scheduler", "scheduler", ""),
            ("wall_s_1", "wall s, 1 worker", ".1f"),
            ("wall_s_2", "wall s, 2 workers", ".1f"),
            ("cpu_s_1", "CPU s, 1", ".1f"),
            ("cpu_s_2", "CPU s, 2", ".1f"),
            ("speedup", "speed-up", ".2f"),
            ("csv_files", "CSVs", ""),
            ("csv_identical_bytes", "CSV bytes", ""),
            ("csv_identical_without_timing", "CSV w/o timing", ""),
            ("sidecars_identical", "sidecars", ""),
            ("figures_identical", "figures", ""),
            ("load1_start", "load1 start", ".2f"),
            ("load1_end", "load1 end", ".2f"),
        ]
        text += "\n\nWorkers 1 vs 2:\n\n" + table(rows, cols)
        for r in section["compare"]:
            differ = r.get("csv_differ_without_timing", []) + r.get("json_differ", []) + r.get("only_in_one", [])
            if differ:
                text += f"\n\n{r['paper']}: results differ between 1 and 2 workers: {', '.join(differ)}"
            if r.get("timing_columns_ignored"):
                text += (
                    f"\n\n{r['paper']}: timing columns left out of the CSV comparison: "
                    f"{', '.join(r['timing_columns_ignored'])}"
                )
    return text


# ---------------------------------------------------------------------------- report
TITLES = {
    "models": "1. Per-model cost",
    "gibbs": "2. Stan vs the paper's Gibbs sampler (Bernstein & Sheldon 2018)",
    "backend": "3. Stan backend overhead",
    "reproduce": "4. Reproduction wall times",
}
RENDER = {
    "models": models_markdown,
    "gibbs": gibbs_markdown,
    "backend": backend_markdown,
    "reproduce": reproduce_markdown,
}


def section_ok(name: str, section: dict[str, Any]) -> bool:
    """False when the section failed, a reproduction exited non-zero or the results of a
    worker comparison differ."""
    if "error" in section:
        return False
    if name == "reproduce":
        if any(r["exit_code"] != 0 for r in section["runs"]):
            return False
        return all(
            r.get("csv_identical_without_timing", False) and r.get("sidecars_identical", False)
            for r in section["compare"]
        )
    return True


def markdown_report(
    ctx: dict[str, Any], sections: dict[str, dict[str, Any]], *, argv: Sequence[str], seconds: float
) -> str:
    v = ctx["versions"]
    lines = [
        "# pystanprivacy benchmarks",
        "",
        f"- date (UTC): {ctx['date']}; total {seconds:.0f} s",
        (
            f"- machine: {ctx['machine']}, {ctx['cpu_count']} CPUs; load average (1 min) at start "
            f"{ctx['load1_start']:.2f}, at end {ctx['load1_end']:.2f}"
        ),
        f"- git commit: {ctx['git_commit'] or 'not a git checkout'}",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val is not None),
        f"- command: `python benchmarks/run_all.py {' '.join(argv)}`".rstrip(),
    ]
    for name in SECTIONS:
        lines += ["", f"## {TITLES[name]}", ""]
        section = sections.get(name)
        if section is None:
            lines.append("skipped (--skip).")
        elif "error" in section:
            lines.append(f"FAILED: `{section['error'].strip().splitlines()[-1]}`")
        else:
            lines.append(RENDER[name](section))
    return "\n".join(lines) + "\n"


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return obj


def _attach_context(section: dict[str, Any], ctx: dict[str, Any]) -> None:
    for key in ("rows", "runs", "compare"):
        for row in section.get(key, []):
            row["context"] = ctx


def _list(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--out",
        default=str(HERE / "results"),
        metavar="DIR",
        help="folder of report.md and report.json (default benchmarks/results/)",
    )
    ap.add_argument("--quick", action="store_true", help="the quick settings of every section")
    ap.add_argument(
        "--skip", default="", metavar="LIST", help=f"comma-separated sections to skip: {', '.join(SECTIONS)}"
    )
    ap.add_argument("--models", default=None, metavar="GLOB", help="section 1: comma-separated glob(s) of model names")
    ap.add_argument("--cold", default=None, metavar="GLOB", help="section 1: also time a cold compile of these models")
    ap.add_argument("--seed", type=int, default=1, help="section 1: seed of the data and fits")
    ap.add_argument(
        "--papers",
        default=",".join(PAPERS),
        metavar="LIST",
        help=f"section 4: comma-separated papers, quick (default {','.join(PAPERS)}); "
        "PAPER:PART runs one part (foulds2016:beta_bernoulli)",
    )
    ap.add_argument(
        "--full-papers",
        default="",
        metavar="LIST",
        help="section 4: also run --full for these papers (PAPER:PART for one part)",
    )
    ap.add_argument("--workers", type=int, default=1, help="section 4: --workers of the reproductions (default 1)")
    ap.add_argument("--scheduler", default=None, choices=["local"], help="section 4: run on a local Dask cluster")
    ap.add_argument(
        "--compare-workers",
        action="store_true",
        help="section 4: run each reproduction (quick and full) with 1 and 2 workers; speed-up and identical outputs",
    )
    ap.add_argument("--timeout", type=float, default=None, help="section 4: seconds allowed per reproduction")
    args = ap.parse_args(argv)
    args.skip = _list(args.skip)
    unknown = sorted(set(args.skip) - set(SECTIONS))
    if unknown:
        ap.error(f"--skip: unknown section(s) {', '.join(unknown)}; sections: {', '.join(SECTIONS)}")
    if args.workers < 1:
        ap.error(f"--workers must be >= 1, got {args.workers}")
    args.papers = _list(args.papers)
    args.full_papers = _list(args.full_papers)
    return args


def main(
    argv: Sequence[str] | None = None, *, runners: dict[str, Callable[[argparse.Namespace], dict]] | None = None
) -> int:
    """Run the suite; write ``OUT/report.md`` and ``OUT/report.json``; exit status 1 when
    anything failed (``runners``: section name -> function of the parsed arguments, for
    tests; default the sections above)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    default_runners = {
        "models": lambda a: models_section(a.models, quick=a.quick, cold=a.cold, seed=a.seed),
        "gibbs": lambda a: gibbs_section(quick=a.quick),
        "backend": lambda a: backend_section(quick=a.quick),
        "reproduce": lambda a: reproduce_section(
            a.papers,
            full_papers=a.full_papers,
            workers=a.workers,
            scheduler=a.scheduler,
            compare_workers=a.compare_workers,
            timeout=a.timeout,
        ),
    }
    runners = {**default_runners, **(runners or {})}
    ctx = context()
    ctx["load1_start"] = load1()
    started = time.perf_counter()
    print(
        f"benchmarks: {ctx['machine']}, {ctx['cpu_count']} CPUs, load {ctx['load1_start']:.2f}, "
        f"commit {ctx['git_commit']}",
        file=sys.stderr,
        flush=True,
    )
    sections: dict[str, dict[str, Any]] = {}
    for name in SECTIONS:
        if name in args.skip:
            continue
        print(f"section {name} ...", file=sys.stderr, flush=True)
        try:
            sections[name] = runners[name](args)
        except (Exception, SystemExit):  # noqa: BLE001 - reported in the report; the other sections still run
            # (SystemExit: a usage error inside a section, e.g. --models matching no model)
            sections[name] = {"error": traceback.format_exc()}
            print(sections[name]["error"], file=sys.stderr, flush=True)
    ctx["load1_end"] = load1()
    seconds = time.perf_counter() - started
    ok = {name: section_ok(name, s) for name, s in sections.items()}
    status = 0 if all(ok.values()) else 1
    report = markdown_report(ctx, sections, argv=argv, seconds=seconds)
    row_ctx = {k: ctx[k] for k in ("machine", "cpu_count", "date", "git_commit", "versions")}
    for s in sections.values():
        _attach_context(s, row_ctx)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(report)
    payload = {
        "context": ctx,
        "argv": argv,
        "seconds": seconds,
        "exit_status": status,
        "sections_ok": ok,
        "sections": sections,
    }
    (out / "report.json").write_text(json.dumps(_jsonable(payload), indent=2) + "\n")
    print(report)
    print(
        f"wrote {out / 'report.md'} and {out / 'report.json'}"
        + ("" if status == 0 else f"; FAILED: {', '.join(n for n, v in ok.items() if not v)}"),
        file=sys.stderr,
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
