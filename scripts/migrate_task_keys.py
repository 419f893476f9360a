#!/usr/bin/env python
"""One-off migration of the committed task files (``results/**/.tasks``) from the keys of scheme 2
(task function, *its module's source file*, arguments, seeds) to the keys of scheme 3 (study name
and version, digests of the Stan programs and data files the task declares, arguments, seeds:
:mod:`pystanprivacy.run.study`, :func:`pystanprivacy.run.runner.task_key`).

    python scripts/migrate_task_keys.py --base a93cf0a,8dc50b2 --check   # map and check, write nothing
    python scripts/migrate_task_keys.py --base a93cf0a,8dc50b2           # rewrite the files
    python scripts/migrate_task_keys.py --list-stale results/bernstein2018/.tasks   # results of older programs

It ran once (results/RUNLOG.md, 2026-12-06) with the code of commit 7d5eaabf, whose scripts and
read-back helpers its passes call; check that commit out to run them again. Since then every
study is a part of ``pystanprivacy reproduce`` and ``tests/run/test_committed_results.py`` reads
the committed tasks back through the parts. ``--list-stale`` works with today's code.

For every committed study it reads the saved tasks back as the study ran (the full studies through
``reproduce``, the supplementary studies as ``tests/run/test_committed_results.py`` and the
scripts' sidecars say they ran) under ``run_context(saved_only=True)``, with the code as it is now.
For every task it computes

- the **old key**: scheme 2 with the source digest of the task function's module as committed at
  ``--base`` (the commit before the study declarations were added; the exact key, else the portable
  key through the folder's ``portable-keys.index``, as a resume found it), which names the file the
  task was read from;
- the **new key**: scheme 3 with the digest of every declared program *as the task ran it*: the
  program (flattened, comments removed) at the commit that first added the task's file. A task that
  ran a program other than today's gets a key today's code does not look for: its result is
  kept, named truthfully, but a resume runs it again, and its tables must be rerun.

Pass 1 reads every task by its old key (monkeypatched key functions, the runner otherwise as
is) and records the tables; ``--check`` stops there with the counts. Otherwise the files are rewritten
under their new keys (``"key"`` inside, the ``"inputs"`` the key was made with), the old files and
the old index removed and the portable index written for the new keys. Pass 2 reads every task back
by its new key (the as-run program digests) and checks that each table is bit-identical to pass 1's,
and that every table the studies rebuild (the full studies' ``reproduce`` tables, the Jewson
scripts' tables) is byte-identical to pass 1's and, where a committed CSV of that name exists, says
whether it is identical to it (timing columns aside). Pass 3 reads back with today's keys only and
lists the tasks it misses: those that ran an older program.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import types
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from pystanprivacy import _fingerprint
from pystanprivacy.run import runner
from pystanprivacy.run.runner import Task, run_context
from pystanprivacy.sampling.stan import program_text_digest, stanc_executable

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
#: columns that hold wall times, left out of the table comparison with the committed CSVs
TIMING = ("seconds", "task_seconds", "wall_seconds", "fit_seconds", "stan_seconds", "time")


# ------------------------------------------------------------------------------ the old keys
def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def _old_source_digest(base: str, module: str, cache: dict[str, str | None]) -> str | None:
    """sha256[:16] of the module's file as committed at ``base`` (scheme 2's ``source``)."""
    if module not in cache:
        mod = sys.modules[module]
        rel = Path(mod.__file__).resolve().relative_to(ROOT).as_posix()
        try:
            blob = subprocess.run(["git", "show", f"{base}:{rel}"], cwd=ROOT, check=True, capture_output=True).stdout
            cache[module] = hashlib.sha256(blob).hexdigest()[:16]
        except subprocess.CalledProcessError:
            cache[module] = None
    return cache[module]


def _old_key_text(task: Task, index: int, seed: Any, stream: str | None, portable: bool, source: str | None):
    """Scheme 2's key text (runner._key_text before scheme 3), with the given source digest."""
    kwargs, sketch = (
        _fingerprint.portable_fingerprint(dict(task.kwargs))
        if portable
        else (_fingerprint.fingerprint(dict(task.kwargs)), ())
    )
    fields = {
        "fn": f"{task.fn.__module__}.{task.fn.__qualname__}",
        "source": source,
        "kwargs": kwargs,
        "seed": _fingerprint.fingerprint(seed),
        "stream": stream,
        "index": int(index),
    }
    if portable:
        fields["portable"] = 2
    return json.dumps(fields, sort_keys=True), sketch


# ------------------------------------------------------------------- programs as the tasks ran them
class AsRun:
    """The digests of the programs and data files at the commit that first added a task file."""

    def __init__(self) -> None:
        self.first_commit: dict[str, str] = {}
        out = _git("log", "--format=@%H", "--name-only", "--", "results")
        commit = None
        for line in out.splitlines():
            if line.startswith("@"):
                commit = line[1:]
            elif line.endswith(".json") and "/.tasks/" in line:
                self.first_commit[line] = commit  # the log runs newest first: the last seen is the first
        self._trees: dict[str, Path] = {}
        self._programs: dict[tuple[str, str], str] = {}
        self._data: dict[tuple[str, str], str] = {}
        self._tmp = tempfile.TemporaryDirectory(prefix="migrate-keys-")

    def _tree(self, commit: str) -> Path:
        if commit not in self._trees:
            dest = Path(self._tmp.name) / commit
            dest.mkdir()
            subprocess.run(f"git archive {commit} stan | tar -x -C {dest}", shell=True, cwd=ROOT, check=True)
            self._trees[commit] = dest
        return self._trees[commit]

    def program(self, commit: str, name: str) -> str:
        if (commit, name) not in self._programs:
            root = self._tree(commit) / "stan"
            path = root / f"{name}.stan"
            proc = subprocess.run(
                [
                    str(stanc_executable()),
                    "--print-canonical",
                    f"--include-paths={root / 'functions'},{path.parent}",
                    str(path),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            self._programs[commit, name] = program_text_digest(proc.stdout)
        return self._programs[commit, name]

    def data(self, commit: str, name: str) -> str:
        if (commit, name) not in self._data:
            blob = subprocess.run(["git", "show", f"{commit}:data/{name}"], cwd=ROOT, check=True, capture_output=True)
            self._data[commit, name] = hashlib.sha256(blob.stdout).hexdigest()[:24]
        return self._data[commit, name]

    def inputs(self, task: Task, file: Path) -> dict[str, Any]:
        rel = file.resolve().relative_to(ROOT).as_posix()
        commit = self.first_commit[rel]
        now = task.inputs()
        return {
            **now,
            "programs": {p: self.program(commit, p) for p in now["programs"]},
            "data": {f: self.data(commit, f) for f in now["data"]},
        }


# ------------------------------------------------------------------------ the committed studies
def _committed_helpers() -> types.ModuleType:
    """tests/run/test_committed_results.py: how each committed study is read back as it ran."""
    spec = importlib.util.spec_from_file_location("_committed", ROOT / "tests" / "run" / "test_committed_results.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _script(name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"_script_{name}", ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run_script(name: str, argv: list[str], tables: Path, no_figures: tuple[str, ...]) -> None:
    """``scripts/<name>.py``'s main as it ran, reading its saved tasks only (its run_context made
    ``saved_only`` in the enclosing one's folder), its tables written to ``tables``, no figures."""
    mod = _script(name)
    outer = runner.current_context()

    @contextlib.contextmanager
    def saved_only(*, resume_dir, **_: Any) -> Iterator[Any]:
        assert Path(resume_dir).resolve() == outer.resume_dir.resolve(), (resume_dir, outer.resume_dir)
        yield outer

    mod.run_context = saved_only
    mod.write_results = lambda out, table_name, table, args, **kw: runner.write_results(tables, table_name, table, args)
    for fig in no_figures:
        if fig == "figures":
            mod.figures = types.SimpleNamespace(figure6=lambda *a, **k: None, figure11=lambda *a, **k: None)
        else:
            setattr(mod, fig, lambda *a, **k: None)
    mod.main(argv)


def studies(helpers: types.ModuleType) -> list[tuple[str, Path, Callable[[Path], None]]]:
    """(name, resume folder, read-back writing its tables to a folder) of every committed study."""

    def paper(name: str, also: Callable[[], None] = lambda: None) -> Callable[[Path], None]:
        def read(out: Path) -> None:
            study = importlib.import_module(f"pystanprivacy.experiments.{name}")
            study.reproduce(out, quick=False, progress=False)
            also()

        return read

    def foulds(out: Path) -> None:
        """Foulds et al. as its committed tasks ran: both war logs synthetic (the full study runs
        Afghanistan on the shipped diary since d38f078; those tasks are not committed yet)."""
        from pystanprivacy.experiments.foulds2016 import logs

        study_logs = logs.study_logs
        logs.study_logs = lambda *a, real=False, **kw: study_logs(*a, real=False, **kw)
        try:
            paper("foulds2016", helpers._foulds_ops_states_as_run)(out)
        finally:
            logs.study_logs = study_logs

    def jewson_also() -> None:
        from pystanprivacy.experiments.jewson2023.dpsgd_settings import dpsgd_settings

        for task in ("regression", "classification"):
            args = json.loads((RESULTS / "jewson2023" / f"jewson2023_nn_{task}_dpsgd_settings.json").read_text())[
                "args"
            ]
            for ds in args["datasets"]:
                dpsgd_settings(
                    task=task,
                    datasets=ds,
                    ns=args["ns"],
                    epsilons=args["epsilons"],
                    repeats=args["repeats"],
                    settings=list(args["settings"]),
                    seed=args["seed"],
                    progress=False,
                )
        helpers._jewson_tuned_dpsgd_as_run()

    def banknote(out: Path) -> None:
        """The banknote network run (its script) and the tuned DP-SGD of its two data sets
        (scripts/jewson2023_dpsgd_tuned.py --uci abalone banknote, its sidecar's arguments)."""
        from pystanprivacy.experiments.jewson2023.dpsgd_tuning import dpsgd_tuned

        folder = RESULTS / "jewson2023" / "banknote"
        _run_script("jewson2023_banknote", ["--full", "--out", str(folder)], out, ())
        args = json.loads((folder / "jewson2023_nn_classification_dpsgd_tuned.json").read_text())["args"]
        for ds in args["datasets"]:
            dpsgd_tuned(
                task=args["task"],
                datasets=ds,
                ns=args["ns"],
                epsilons=args["epsilons"],
                repeats=args["repeats"],
                replicates=args["replicates"],
                seed=args["seed"],
                progress=False,
            )

    def paper_design(out: Path) -> None:
        _run_script(
            "jewson2023_paper_design",
            ["--full", "--out", str(RESULTS / "jewson2023")],
            out,
            ("design_figure2", "design_figure10"),
        )

    def counterparts(out: Path) -> None:
        _run_script("jewson2023_counterparts", ["--full", "--out", str(RESULTS / "jewson2023")], out, ("figures",))

    return [
        ("foulds2016", RESULTS / "foulds2016" / ".tasks", foulds),
        ("bernstein2018", RESULTS / "bernstein2018" / ".tasks", paper("bernstein2018")),
        ("kulkarni2022", RESULTS / "kulkarni2022" / ".tasks", paper("kulkarni2022")),
        ("jewson2023", RESULTS / "jewson2023" / ".tasks", paper("jewson2023", jewson_also)),
        (
            "kulkarni2022/ldp_sgd_tuned",
            RESULTS / "kulkarni2022" / "ldp_sgd_tuned" / ".tasks",
            lambda out: helpers._kulkarni_tuned_ldp_sgd_as_run(),
        ),
        *(
            (
                f"foulds2016/{folder}",
                RESULTS / "foulds2016" / folder / ".tasks",
                lambda out, folder=folder: helpers._foulds_supplements_as_run(folder),
            )
            for folder in ("dispersed", "ops_gate", "heldout_dispersed")
        ),
        ("jewson2023/banknote", RESULTS / "jewson2023" / "banknote" / ".tasks", banknote),
        ("jewson2023/paper_design", RESULTS / "jewson2023" / "paper_design" / ".tasks", paper_design),
        ("jewson2023/supplements", RESULTS / "jewson2023" / "supplements" / ".tasks", counterparts),
    ]


# ------------------------------------------------------------------------------------ passes
def _frame_digest(frame: pd.DataFrame) -> str:
    return hashlib.sha256(runner._encode_table(frame.reset_index(drop=True), "", "").encode()).hexdigest()


@contextlib.contextmanager
def _keys(mode: str, base: str, as_run: AsRun, seen: dict[tuple[Path, str], dict[str, Any]]) -> Iterator[None]:
    """Inside, the runner keys each task as ``mode`` says ('old': scheme 2 at ``base``; 'as-run':
    scheme 3 with the as-run program digests of the file the task was read from in pass 1; 'now':
    unchanged) and ``seen`` collects, per (folder, file read), the task's keys and table digest."""
    sources: dict[str, dict[str, str | None]] = {}
    real_key, real_parts, real_load = runner.task_key, runner._portable_parts, runner._load_result
    by_exact: dict[tuple[Path, str], dict[str, Any]] = {}
    by_portable: dict[tuple[Path, str], list[tuple[dict[str, Any], Any]]] = defaultdict(list)

    def info_of(resume: Path, file: str) -> dict[str, Any]:
        """The task read from ``file``: by its exact key, else by the portable index's entry."""
        if (resume, file) in by_exact:
            return by_exact[resume, file]
        for pkey, entries in runner.read_portable_keys(resume).items():
            for f, sketch in entries:
                if f == file:
                    for info, mine in by_portable.get((resume, pkey), []):
                        if _fingerprint.sketches_match(sketch, mine):
                            return info
        raise RuntimeError(f"no task of this read-back names the file {file} of {resume}")

    indexes: dict[Path, Any] = {}

    def by_old(task: Task, index: int, seed: Any, stream: str | None, portable: bool):
        """Scheme 2's key text at the first of the ``base`` commits whose key names a saved file
        (exact: a file of that name; portable: an entry of the folder's index), else at the first."""
        resume = runner.current_context().resume_dir
        texts = []
        for commit in base.split(","):
            src = _old_source_digest(commit, task.fn.__module__, sources.setdefault(commit, {}))
            text, sketch = _old_key_text(task, index, seed, stream, portable, src)
            texts.append((text, sketch))
            if portable:
                if resume not in indexes:
                    indexes[resume] = runner.read_portable_keys(resume)
                if "p" + hashlib.sha256(text.encode()).hexdigest()[:23] in indexes[resume]:
                    return text, sketch
            elif (resume / f"{hashlib.sha256(text.encode()).hexdigest()[:24]}.json").exists():
                return text, sketch
        return texts[0]

    def task_key(task, index, seed, stream=None, *, inputs=None):
        resume = runner.current_context().resume_dir
        info = dict(task=task, index=index, seed=seed, stream=stream)
        if mode == "old":
            key = hashlib.sha256(by_old(task, index, seed, stream, False)[0].encode()).hexdigest()[:24]
        else:
            if mode == "as-run":
                inputs = as_run_inputs[_ident(resume, task, index, stream)]
            key = real_key(task, index, seed, stream, inputs=inputs)
        by_exact[resume, key] = info
        return key

    def portable_parts(task, index, seed, stream, inputs=None):
        if not _fingerprint.has_float_data(dict(task.kwargs)):
            return None
        resume = runner.current_context().resume_dir
        if mode == "old":
            text, sketch = by_old(task, index, seed, stream, True)
            parts = "p" + hashlib.sha256(text.encode()).hexdigest()[:23], sketch
        else:
            if mode == "as-run":
                inputs = as_run_inputs[_ident(resume, task, index, stream)]
            parts = real_parts(task, index, seed, stream, inputs)
        by_portable[resume, parts[0]].append((dict(task=task, index=index, seed=seed, stream=stream), parts[1]))
        return parts

    def load_result(resume_dir, key, remove_damaged=True):
        out = real_load(resume_dir, key, remove_damaged)
        if out is not None:
            seen[(Path(resume_dir), key)] = {"digest": _frame_digest(out[0]), **info_of(Path(resume_dir), key)}
        return out

    runner.task_key, runner._portable_parts, runner._load_result = task_key, portable_parts, load_result
    try:
        yield
    finally:
        runner.task_key, runner._portable_parts, runner._load_result = real_key, real_parts, real_load


#: (resume folder, index, stream, qualname, kwargs fingerprint) -> the as-run inputs of that task
as_run_inputs: dict[tuple, dict[str, Any]] = {}


def _ident(resume: Path, task: Task, index: int, stream: str | None) -> tuple:
    kwargs = json.dumps(_fingerprint.fingerprint(dict(task.kwargs)), sort_keys=True)
    return (Path(resume), int(index), stream, task.fn.__qualname__, kwargs)


def _read(name: str, folder: Path, read: Callable[[Path], None], out: Path) -> Any:
    out.mkdir(parents=True, exist_ok=True)
    with run_context(resume_dir=folder, saved_only=True) as ctx:
        try:
            read(out)
        except Exception as exc:  # noqa: BLE001 - a study missing tasks may fail to build a table
            print(f"  {name}: the read-back stopped ({type(exc).__name__}: {str(exc)[:200]})", flush=True)
            if os.environ.get("MIGRATE_TRACEBACK"):
                import traceback

                traceback.print_exc()
    return ctx


def _compare_csvs(a: Path, b: Path) -> tuple[list[str], list[str]]:
    """(identical, different) CSV names of folder ``a`` against ``b`` (byte for byte)."""
    same, diff = [], []
    for f in sorted(a.glob("*.csv")):
        other = b / f.name
        (same if other.is_file() and other.read_bytes() == f.read_bytes() else diff).append(f.name)
    return same, diff


def _compare_committed(tables: Path, committed: Path) -> tuple[list[str], list[str]]:
    """(identical, different) tables of ``tables`` against the committed CSV of the same name in
    ``committed`` (timing columns aside, values as written)."""
    same, diff = [], []
    for f in sorted(tables.glob("*.csv")):
        mine = committed / f.name
        if not mine.is_file():
            continue
        a, b = pd.read_csv(f, dtype=str, keep_default_na=False), pd.read_csv(mine, dtype=str, keep_default_na=False)
        drop = [c for c in a.columns if c in TIMING or c.endswith("_seconds")]
        a, b = a.drop(columns=drop, errors="ignore"), b.drop(columns=[c for c in drop if c in b.columns])
        (same if a.equals(b) else diff).append(f.name)
    return same, diff


def stale_files(folder: Path) -> list[Path]:
    """The task files of ``folder`` whose recorded key inputs name a Stan program or data file digest
    other than today's: results of an older program, which today's keys do not find (a resume runs
    them again) and which go once their tasks are saved again."""
    from pystanprivacy.run.study import data_file_digest
    from pystanprivacy.sampling.stan import program_digest

    out = []
    for path in sorted(folder.glob("*.json")):
        inputs = json.loads(path.read_text(encoding="utf-8"))["inputs"]
        if any(program_digest(p) != d for p, d in inputs["programs"].items()) or any(
            data_file_digest(f) != d for f, d in inputs["data"].items()
        ):
            out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--list-stale",
        type=Path,
        default=None,
        metavar="FOLDER",
        help="only print the stale task files of FOLDER (results of an older program), one a line",
    )
    parser.add_argument("--base", default=None, help="the commits whose task modules named the committed files")
    parser.add_argument("--check", action="store_true", help="map and report only; write nothing")
    parser.add_argument("--only", default="", help="comma-separated study names (default: all)")
    parser.add_argument("--work", type=Path, default=None, help="folder for the rebuilt tables (default: a temp one)")
    args = parser.parse_args(argv)
    if args.list_stale is not None:
        for path in stale_files(args.list_stale):
            print(path)
        return 0
    if args.base is None:
        parser.error("--base is required (unless --list-stale)")
    os.chdir(ROOT)
    helpers = _committed_helpers()
    as_run = AsRun()
    work = args.work or Path(tempfile.mkdtemp(prefix="migrate-keys-tables-"))
    todo = [s for s in studies(helpers) if not args.only or s[0] in args.only.split(",")]
    report: dict[str, Any] = {}
    for name, folder, read in todo:
        saved = {p.stem for p in folder.glob("*.json")}
        seen: dict[tuple[Path, str], dict[str, Any]] = {}
        with _keys("old", args.base, as_run, seen):
            ctx = _read(name, folder, read, work / "old" / name)
        mine = {k: v for (f, k), v in seen.items() if f == folder}
        # the new key of each file read: scheme 3 with its programs as they were when it was committed
        moves: dict[str, tuple[str, str | None, Any, dict[str, Any]]] = {}
        stale = 0
        for old, info in mine.items():
            task: Task = info["task"]
            inputs = as_run.inputs(task, folder / f"{old}.json")
            if inputs != task.inputs():
                stale += 1
            as_run_inputs[_ident(folder, task, info["index"], info["stream"])] = inputs
            new = runner.task_key(task, info["index"], info["seed"], info["stream"], inputs=inputs)
            parts = runner._portable_parts(task, info["index"], info["seed"], info["stream"], inputs)
            if old in moves and moves[old][0] != new:
                raise RuntimeError(f"{name}: file {old} is read by two tasks with different new keys")
            moves[old] = (new, None if parts is None else parts[0], None if parts is None else parts[1], inputs)
        unread = sorted(saved - set(mine))
        report[name] = {
            "files": len(saved),
            "read_by_old_keys": len(mine),
            "missing_by_old_keys": len(ctx.missing),
            "unread_files": len(unread),
            "ran_an_older_program": stale,
        }
        print(name, report[name], flush=True)
        if unread:
            print(f"  unread: {unread[:5]}", flush=True)
        if args.check:
            continue
        # rewrite: every file read under its new key, with the inputs of that key; then the old files
        # and the old portable index go, and the new index is written
        pairs: dict[str, tuple[str, Any]] = {}
        for old, (new, pkey, sketch, inputs) in moves.items():
            payload = json.loads((folder / f"{old}.json").read_text(encoding="utf-8"))
            payload["key"] = new
            payload["inputs"] = {k: inputs[k] for k in ("study", "version", "programs", "data")}
            tmp = folder / f".{new}.migrate.tmp"
            tmp.write_text(json.dumps(payload), encoding="utf-8")
            os.replace(tmp, folder / f"{new}.json")
            if pkey is not None:
                pairs[pkey] = (new, sketch)
        news = {m[0] for m in moves.values()}
        for old in moves:
            if old not in news:
                (folder / f"{old}.json").unlink()
        index = folder / runner.PORTABLE_KEYS
        if index.exists():
            index.unlink()
        runner.add_portable_keys(folder, pairs)
        # pass 2: every task read by its new key (as-run programs) gives pass 1's table
        seen2: dict[tuple[Path, str], dict[str, Any]] = {}
        with _keys("as-run", args.base, as_run, seen2):
            ctx2 = _read(name, folder, read, work / "new" / name)
        mine2 = {k: v for (f, k), v in seen2.items() if f == folder}
        bad = [old for old, (new, *_) in moves.items() if mine2.get(new, {}).get("digest") != mine[old]["digest"]]
        same, diff = _compare_csvs(work / "old" / name, work / "new" / name)
        committed = RESULTS / ("jewson2023" if name in ("jewson2023/paper_design", "jewson2023/supplements") else name)
        c_same, c_diff = _compare_committed(work / "new" / name, committed)
        # pass 3: today's keys; the tasks it misses are those that ran an older program
        with run_context(resume_dir=folder, saved_only=True) as ctx3:
            try:
                read(work / "now" / name)
            except Exception as exc:  # noqa: BLE001
                print(f"  {name}: today's read-back stopped ({type(exc).__name__}: {str(exc)[:200]})", flush=True)
        report[name].update(
            {
                "rekeyed": len(moves),
                "files_now": len(list(folder.glob("*.json"))),
                "tables_differing_from_pass_1": len(bad),
                "missing_after": len(ctx2.missing),
                "rebuilt_tables_identical": len(same),
                "rebuilt_tables_different": diff,
                "identical_to_committed_csv": len(c_same),
                "different_from_committed_csv": c_diff,
                "missing_with_todays_keys": len(ctx3.missing),
                "found_with_todays_keys": len(ctx3.found),
            }
        )
        print(name, json.dumps(report[name]), flush=True)
    (work / "report.json").write_text(json.dumps(report, indent=1))
    print("report:", work / "report.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
