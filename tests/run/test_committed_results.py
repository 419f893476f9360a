"""The committed full-scale runs in results/PAPER/.tasks are still the current code's: every task
file is read back by the paper's study under ``run_context(saved_only=True)`` (nothing runs, no
Stan program compiles) and no task is missing. A change to an experiment's module gives its tasks
new keys (its source is part of each key); this catches the committed files that it orphans
and the runs it would restart."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from pystanprivacy.run.runner import run_context

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _read_back(paper: str, out_dir: Path, also=lambda: None):
    """The committed task files of ``paper`` and the run context of its full study (plus
    ``also()``) read back from them under ``saved_only``."""
    tasks = RESULTS / paper / ".tasks"
    saved = {p.stem for p in tasks.glob("*.json")}
    assert saved, f"no committed task files in {tasks}"
    study = importlib.import_module(f"pystanprivacy.experiments.{paper}")
    with run_context(resume_dir=tasks, saved_only=True) as ctx:
        study.reproduce(out_dir, quick=False, progress=False)
        also()
    return saved, ctx


@pytest.mark.parametrize("paper", ["foulds2016", "bernstein2018", "kulkarni2022"])
def test_every_committed_task_file_is_read_by_the_full_study(paper, tmp_path):
    saved, ctx = _read_back(paper, tmp_path)
    assert ctx.missing == []
    assert saved == ctx.found


def test_every_committed_jewson_task_file_is_read_by_the_study_or_the_dpsgd_settings_script(tmp_path):
    """Jewson et al.: the files are read by the full study (all its parts) or by the DP-SGD
    settings script as its committed sidecars say it ran, and no task is missing (``nn_features``,
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

    saved, ctx = _read_back("jewson2023", tmp_path, also=dpsgd_settings_as_run)
    assert ctx.missing == []
    assert saved == ctx.found
