"""The committed full-scale runs in results/PAPER/.tasks are still the current code's: every task
file is read back by the paper's study under ``run_context(saved_only=True)`` (nothing runs, no
Stan program compiles) and no task is missing. A change to an experiment's module gives its tasks
new keys (its source is part of each key); this catches the committed files that it orphans
and the runs it would restart. Jewson et al., whose ``nn_features`` part is still running, has
its own check in tests/experiments/test_jewson2023_paired.py."""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from pystanprivacy.run.runner import run_context

RESULTS = Path(__file__).resolve().parents[2] / "results"


@pytest.mark.parametrize("paper", ["foulds2016", "bernstein2018", "kulkarni2022"])
def test_every_committed_task_file_is_read_by_the_full_study(paper, tmp_path):
    tasks = RESULTS / paper / ".tasks"
    saved = {p.stem for p in tasks.glob("*.json")}
    assert saved, f"no committed task files in {tasks}"
    study = importlib.import_module(f"pystanprivacy.experiments.{paper}")
    with run_context(resume_dir=tasks, saved_only=True) as ctx:
        study.reproduce(tmp_path, quick=False, progress=False)
    assert ctx.missing == []
    assert saved == ctx.found
