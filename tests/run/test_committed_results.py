"""The committed full-scale runs in results/PAPER/.tasks are still the current code's: every task
file is read back by the paper's study under ``run_context(saved_only=True)`` (nothing runs, no
Stan program compiles) and no task is missing. A task's key holds its study's name and version, the
digests of the Stan programs and data files it declares, its arguments and seeds
(:mod:`pystanprivacy.run.study`), not its module's source: a docstring or refactoring keeps the
committed files, a changed program, data file or study version orphans them, and this catches it.

The one exception is explicit: a saved task that ran an older Stan program (its file records the
program digests its key was made with, and they are not today's) is *stale*. Today's study does not
find it (a resume runs it again); the tables built from it must be rerun, and such files are
removed once their tasks are saved again. The checks allow exactly those: every file that today's
study does not read is stale, and the study misses exactly as many tasks as there are stale files."""

from __future__ import annotations

import contextlib
import importlib
import json
from pathlib import Path

import pytest

from pystanprivacy.run.runner import run_context

RESULTS = Path(__file__).resolve().parents[2] / "results"


def stale_files(tasks: Path) -> set[str]:
    """The task files of ``tasks`` (keys) whose recorded inputs name a Stan program or data file
    digest other than today's: results of an older program, to be rerun."""
    from pystanprivacy.run.study import data_file_digest
    from pystanprivacy.sampling.stan import program_digest

    out = set()
    for path in tasks.glob("*.json"):
        inputs = json.loads(path.read_text(encoding="utf-8")).get("inputs")
        assert inputs is not None, f"{path} has no recorded key inputs (saved before the keys of scheme 3)"
        if any(program_digest(p) != d for p, d in inputs["programs"].items()) or any(
            data_file_digest(f) != d for f, d in inputs["data"].items()
        ):
            out.add(path.stem)
    return out


#: Foulds et al.'s Afghanistan tasks of parts hmm and occupancy (F5, F6, F8) ran on synthetic logs;
#: the full study now runs them on the shipped Afghan War Diary (data/afg_war_diary.csv.gz), so
#: these saved files are superseded: today's study misses their diary counterparts, one for one,
#: until the rerun on the diary saves them (then these files are removed and this entry with them)
SUPERSEDED_BY_THE_DIARY = {
    "foulds2016": ("states synthetic afghanistan", "heldout synthetic afghanistan", "occupancy synthetic afghanistan")
}


def superseded_files(tasks: Path, paper: str) -> tuple[set[str], int]:
    """The task files of ``tasks`` whose label says they ran on synthetic logs that the study now
    reads from the real diary (:data:`SUPERSEDED_BY_THE_DIARY`), and how many of them there are."""
    prefixes = SUPERSEDED_BY_THE_DIARY.get(paper, ())
    out = {
        path.stem
        for path in tasks.glob("*.json")
        if prefixes and json.loads(path.read_text(encoding="utf-8")).get("label", "").startswith(prefixes)
    }
    return out, len(out)


def assert_current(tasks: Path, saved: set[str], ctx, paper: str | None = None) -> None:
    """Every saved file of ``tasks`` is read by today's study or is stale (or superseded by the real
    diary), and today's study misses exactly the stale and superseded tasks (none once they are
    rerun and their old files removed)."""
    stale = stale_files(tasks)
    superseded, n_superseded = superseded_files(tasks, paper) if paper else (set(), 0)
    assert saved - ctx.found == stale | superseded, (
        f"{len(saved - ctx.found - stale - superseded)} saved task file(s) that today's study does not read"
    )
    assert len(ctx.missing) == len(stale) + n_superseded, (
        f"{len(ctx.missing)} task(s) missing, {len(stale)} stale and {n_superseded} superseded file(s): "
        f"{ctx.missing[:5]}"
    )
    if n_superseded:  # the missing ones are the diary's counterparts, not some other part's tasks
        outside = [label for label in ctx.missing if "afghanistan" not in label or "synthetic" in label]
        assert not outside, f"missing tasks other than the diary's Afghanistan tasks: {outside[:5]}"


def _read_back(paper: str, out_dir: Path, also=lambda: None):
    """The committed task files of ``paper`` and the run context of its full study (plus
    ``also()``) read back from them under ``saved_only``, part by part: a part whose tasks are all
    stale builds no table (it stops), and the others are still read."""
    tasks = RESULTS / paper / ".tasks"
    saved = {p.stem for p in tasks.glob("*.json")}
    assert saved, f"no committed task files in {tasks}"
    study = importlib.import_module(f"pystanprivacy.experiments.{paper}")
    with run_context(resume_dir=tasks, saved_only=True) as ctx:
        for part in study.PARTS or (None,):
            with contextlib.suppress(ValueError, KeyError):  # an empty table of stale tasks; the checks count them
                study.reproduce(out_dir, quick=False, progress=False, **({} if part is None else {"parts": [part]}))
        also()
    return saved, ctx


def _kulkarni_tuned_ldp_sgd_as_run():
    """Kulkarni et al.: the tuned LDP-SGD units of scripts/kulkarni2022_ldp_sgd_tuned.py (issue 49,
    item 2) as its committed sidecars say it ran (the 10K subsample: the regression run's)."""
    from pystanprivacy.experiments.kulkarni2022 import ldp_sgd_tuning as tun
    from pystanprivacy.experiments.kulkarni2022.data import regression_data

    out = RESULTS / "kulkarni2022"
    subsample = json.loads((out / "kulkarni2022_regression_figure5.json").read_text())["args"]["subsample"]
    for figure, run in (("figure4", tun.figure4_tuned), ("figure5", tun.figure5_tuned)):
        args = json.loads((out / f"kulkarni2022_{figure}_ldp_sgd_tuned.json").read_text())["args"]
        if figure == "figure4":
            data, extra = regression_data("wine", d=4, seed=args["seed"], R_y=2.0), {}
        else:
            data, extra = regression_data("adult", d=5, seed=args["seed"]), {"subsample": subsample}
        run(
            data,
            epsilons=args["epsilons"],
            repeats=args["repeats"],
            delta=args["delta"],
            grid=args["grid"],
            runs=args["runs_per_candidate"],
            seed=args["seed"],
            progress=False,
            **extra,
        )


def _foulds_ops_states_as_run():
    """Foulds et al.: Figure 7's OPS runs of scripts/foulds2016_ops_states.py (issue 49, item 5) as
    its committed sidecar says it ran."""

    from pystanprivacy.experiments.foulds2016 import occupancy
    from pystanprivacy.experiments.foulds2016.hmm import FULL, NAME
    from pystanprivacy.experiments.foulds2016.ops_states import ops_states_study

    args = json.loads((RESULTS / "foulds2016" / f"{NAME}_ops_states.json").read_text())["args"]
    datasets = occupancy._datasets(FULL, args["seed"], None)  # Figures 3-5's logs, as part hmm draws them
    assert list(datasets) == args["datasets"]
    ops_states_study(
        datasets, repeats=args["repeats"], sampler=args["sampler"], last=args["last"], seed=args["seed"], progress=False
    )


_ALSO = {"foulds2016": _foulds_ops_states_as_run}


@pytest.mark.parametrize("paper", ["foulds2016", "bernstein2018", "kulkarni2022"])
def test_every_committed_task_file_is_read_by_the_full_study(paper, tmp_path):
    saved, ctx = _read_back(paper, tmp_path, also=_ALSO.get(paper, lambda: None))
    assert_current(RESULTS / paper / ".tasks", saved, ctx, paper)


def test_every_committed_tuned_ldp_sgd_task_file_is_read_by_its_script():
    """Kulkarni et al.'s tuned LDP-SGD keeps its tasks apart from the study's (results/kulkarni2022/
    ldp_sgd_tuned/.tasks, with their own portable keys: the PCA features are LAPACK output): every
    file is read back by the script's run as its sidecars say it ran, and none is missing."""
    tasks = RESULTS / "kulkarni2022" / "ldp_sgd_tuned" / ".tasks"
    saved = {p.stem for p in tasks.glob("*.json")}
    assert len(saved) == 390
    with run_context(resume_dir=tasks, saved_only=True) as ctx:
        _kulkarni_tuned_ldp_sgd_as_run()
    assert_current(tasks, saved, ctx)


def test_every_committed_jewson_task_file_is_read_by_the_study_or_the_dpsgd_settings_script(tmp_path):
    """Jewson et al.: the files are read by the full study (all its parts), by the DP-SGD
    settings script or by the tuned DP-SGD script as their committed sidecars say they ran, and no task is missing (``nn_features``,
    the last part to run, was completed 2026-12-05)."""
    from pystanprivacy.experiments.jewson2023.dpsgd_settings import dpsgd_settings

    def dpsgd_settings_as_run():
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

    def dpsgd_as_run():
        dpsgd_settings_as_run()
        _jewson_tuned_dpsgd_as_run()

    saved, ctx = _read_back("jewson2023", tmp_path, also=dpsgd_as_run)
    assert_current(RESULTS / "jewson2023" / ".tasks", saved, ctx)


def _jewson_tuned_dpsgd_as_run():
    """Jewson et al.: DP-SGD tuned as App. B describes (scripts/jewson2023_dpsgd_tuned.py, issue 49,
    item 2), its tuning units and evaluation tasks, as its committed sidecars say it ran: ``--part
    figures`` per task, and ``--part features`` once its sidecar is committed."""
    from pystanprivacy.experiments.jewson2023.dpsgd_tuning import dpsgd_tuned, dpsgd_tuned_features
    from pystanprivacy.experiments.jewson2023.study import FULL, nn_figure_grid

    out = RESULTS / "jewson2023"
    for task in ("regression", "classification"):
        args = json.loads((out / f"jewson2023_nn_{task}_dpsgd_tuned.json").read_text())["args"]
        for ds in args["datasets"]:
            dpsgd_tuned(
                task=task,
                datasets=ds,
                ns=args["ns"],
                epsilons=args["epsilons"],
                repeats=args["repeats"],
                replicates=args["replicates"],
                seed=args["seed"],
                progress=False,
            )
    features = out / "jewson2023_nn_features_dpsgd_tuned.json"
    if features.is_file():
        args = json.loads(features.read_text())["args"]
        for task in args["tasks"]:
            dpsgd_tuned_features(
                task=task,
                ds=args["ds"],
                n_obs=args["n_obs"],
                epsilons=args["epsilons"],
                repeats=args["repeats"],
                replicates=args["replicates"],
                figure=nn_figure_grid(FULL),
                seed=args["seed"],
                progress=False,
            )


def _foulds_supplements_as_run(folder: str):
    """The supplementary Foulds studies in results/foulds2016/<folder> (issue 49, item 1), each as its
    committed sidecars say it ran."""
    from pystanprivacy.experiments.foulds2016 import occupancy
    from pystanprivacy.experiments.foulds2016.hmm import FULL, NAME

    out = RESULTS / "foulds2016" / folder
    if folder == "dispersed":
        from pystanprivacy.experiments.foulds2016.dispersed import dispersed_study

        logs = occupancy._datasets(FULL, 0, None)
        for part in ("states", "occupancy"):
            args = json.loads((out / f"{NAME}_dispersed_{part}.json").read_text())["args"]
            dispersed_study(
                logs,
                n_states=args["n_states"],
                sampler=args["sampler"],
                epsilon=args["epsilon"],
                ops_multiplier=args["ops_multiplier"],
                stream=part,
                seed=args["seed"],
                progress=False,
            )
    elif folder == "ops_gate":
        from pystanprivacy.experiments.foulds2016.ops_gate import ops_gate_study
        from pystanprivacy.experiments.foulds2016.warlogs import non_mixing_war_logs, preprocess_war_logs

        args = json.loads((out / f"{NAME}_ops_gate.json").read_text())["args"]
        counts = preprocess_war_logs(non_mixing_war_logs().records)
        ops_gate_study(counts, epsilons=args["epsilons"], repeats=args["repeats"], seed=args["seed"], progress=False)
    else:
        from pystanprivacy.experiments.foulds2016.heldout_dispersed import heldout_dispersed_study

        args = json.loads((out / f"{NAME}_heldout_dispersed.json").read_text())["args"]
        logs = occupancy._datasets(FULL, args["seed"], None)
        for label in args["datasets"]:
            heldout_dispersed_study(
                logs[label][0],
                label=label,
                splits=args["splits"],
                epsilons=args["epsilons"],
                seed=args["seed"],
                progress=False,
            )


@pytest.mark.parametrize("folder", ["dispersed", "ops_gate", "heldout_dispersed"])
def test_every_committed_foulds_supplement_task_file_is_read_by_its_study(folder):
    """F5/F8 from dispersed starts, the OPS gate study and F6 from dispersed starts keep their tasks in
    folders of their own; a change of their study versions, programs or data would orphan them, and a
    resume would refit them."""
    tasks = RESULTS / "foulds2016" / folder / ".tasks"
    saved = {p.stem for p in tasks.glob("*.json")}
    assert saved
    with run_context(resume_dir=tasks, saved_only=True) as ctx:
        _foulds_supplements_as_run(folder)
    assert_current(tasks, saved, ctx)


@pytest.mark.parametrize("name", ["jewson2023/banknote", "jewson2023/paper_design", "jewson2023/supplements"])
def test_every_committed_jewson_script_task_file_is_read_by_its_script(name, tmp_path):
    """Jewson et al.'s studies run by scripts into folders of their own (banknote with its tuned
    DP-SGD, the paper's design, the Chaudhuri counterparts and paper-round attack): each script's
    main run as it ran (``--full``, its sidecars' arguments), reading its saved tasks only, as
    ``scripts/migrate_task_keys.py`` reads them; every file is read and none is missing."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        "_migrate_task_keys", RESULTS.parent / "scripts" / "migrate_task_keys.py"
    )
    migrate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migrate)
    folder, read = {n: (f, r) for n, f, r in migrate.studies(sys.modules[__name__])}[name]
    saved = {p.stem for p in folder.glob("*.json")}
    assert saved
    with run_context(resume_dir=folder, saved_only=True) as ctx:
        read(tmp_path)
    assert_current(folder, saved, ctx)
