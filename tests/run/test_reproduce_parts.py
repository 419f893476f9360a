"""Every study that a verdict of REPRODUCTION.md rests on is a part of ``pystanprivacy reproduce
PAPER --full`` (issue 65, item 4): each paper declares it in ``PARTS``, the command line runs it
alone (``--parts NAME``), ``reproduce`` dispatches it to its study after the paper's own parts,
and the parts that keep their tasks apart save them in ``OUT/<folder>/.tasks``
(:func:`pystanprivacy.run.runner.part_folder`). Nothing here compiles or samples."""

from __future__ import annotations

import importlib
from pathlib import Path

import pandas as pd
import pytest

from pystanprivacy import cli
from pystanprivacy.experiments import get_paper, known_papers
from pystanprivacy.run.runner import Task, current_context, part_folder, run_context, run_tasks
from pystanprivacy.run.study import Study

#: the paper's own figures, then the studies the verdicts also rest on (once scripts/*.py)
PAPER_PARTS = {
    "foulds2016": ("beta_bernoulli", "hmm", "hmm_occupancy"),
    "bernstein2018": ("calibration",),
    "kulkarni2022": ("calibration", "histogram_rmse", "kosarak", "regression"),
    "jewson2023": ("logistic", "attack", "nn_regression", "nn_classification", "features", "nn_features"),
}
STUDY_PARTS = {
    "foulds2016": ("ops_states", "dispersed", "heldout_dispersed", "ops_gate"),
    "bernstein2018": ("exponential_modes",),
    "kulkarni2022": ("exponential_check", "k4_sweep", "ldp_sgd_tuned"),
    "jewson2023": ("dpsgd_settings", "dpsgd_tuned", "paired", "banknote", "counterparts", "paper_design"),
}
#: where each study part's function lives: paper -> part -> (module, function)
FUNCTIONS = {
    "foulds2016": {p: ("foulds2016.supplementary", f"reproduce_{p}") for p in STUDY_PARTS["foulds2016"]},
    "bernstein2018": {"exponential_modes": ("bernstein2018.exponential_modes", "reproduce_exponential_modes")},
    "kulkarni2022": {
        "exponential_check": ("kulkarni2022.exponential_check", "reproduce_exponential_check"),
        "k4_sweep": ("kulkarni2022.k4_sweep", "reproduce_k4_sweep"),
        "ldp_sgd_tuned": ("kulkarni2022.ldp_sgd_tuned", "reproduce_ldp_sgd_tuned"),
    },
    "jewson2023": {p: ("jewson2023.supplementary", f"reproduce_{p}") for p in STUDY_PARTS["jewson2023"]},
}


def test_every_paper_declares_the_studies_of_its_verdicts_as_parts():
    assert set(PAPER_PARTS) == set(known_papers())
    for paper, own in PAPER_PARTS.items():
        declared = get_paper(paper).PARTS
        assert declared == (None if own is None else own + STUDY_PARTS[paper])


@pytest.mark.parametrize("paper,part", [(p, x) for p, parts in STUDY_PARTS.items() for x in parts])
def test_the_command_line_runs_each_study_part_alone(paper, part, monkeypatch, tmp_path):
    """``reproduce PAPER --quick --parts NAME`` is accepted and hands exactly that part over."""
    module = get_paper(paper)
    calls = []

    def fake(out, **kwargs):
        Path(out).mkdir(parents=True, exist_ok=True)
        calls.append(kwargs)

    monkeypatch.setattr(module, "reproduce", fake)
    argv = ["reproduce", paper, "--quick", "--no-resume", "--no-progress", "--parts", part]
    assert cli.main([*argv, "--out", str(tmp_path / "o")]) == 0
    assert [(c["quick"], c["parts"]) for c in calls] == [(True, (part,))]
    assert part in cli.parts_help()


@pytest.mark.parametrize("paper", sorted(FUNCTIONS))
def test_reproduce_runs_the_study_parts_in_their_order_with_the_run_settings(paper, monkeypatch, tmp_path):
    """``reproduce(parts=...)`` calls each study part's own function once, in ``PARTS`` order
    (after the paper's parts, whose tables some of them read), with the run's scale, seed and
    workers; a part not asked for is not called."""
    seen = []
    for part, (module, function) in FUNCTIONS[paper].items():
        mod = importlib.import_module(f"pystanprivacy.experiments.{module}")

        def record(out, *, part=part, **kwargs):
            seen.append((part, Path(out), kwargs["quick"], kwargs["seed"], kwargs["workers"]))
            return {part: pd.DataFrame({"x": [1]})}

        monkeypatch.setattr(mod, function, record)
        table = getattr(mod, "SUPPLEMENTARY_PARTS", None)
        if table is not None:  # the dispatch table holds the functions themselves
            monkeypatch.setitem(table, part, record)
    study = get_paper(paper)
    parts = STUDY_PARTS[paper]
    tables = study.reproduce(tmp_path, quick=True, seed=7, workers=3, progress=False, parts=parts[::-1])
    assert seen == [(p, tmp_path, True, 7, 3) for p in parts]
    assert set(parts) <= set(tables)
    seen.clear()
    study.reproduce(tmp_path, quick=False, seed=0, workers=1, progress=False, parts=parts[-1:])
    assert seen == [(parts[-1], tmp_path, False, 0, 1)]


STUDY = Study(name="tests/run/reproduce_parts", version=1)


@STUDY.task()
def _double(*, x: int, seed=None) -> pd.DataFrame:
    return pd.DataFrame({"x": [x], "double": [2 * x]})


def _tasks() -> list[Task]:
    return [Task(_double, {"x": x}, label=f"double {x}") for x in range(3)]


def test_part_folder_saves_and_reads_a_parts_tasks_beside_the_resume_folder(tmp_path):
    resume = tmp_path / "out" / ".tasks"
    with run_context(resume_dir=resume) as outer:
        with part_folder("extra") as ctx:
            assert current_context() is ctx and ctx.resume_dir == tmp_path / "out" / "extra" / ".tasks"
            first = run_tasks(_tasks(), seed=0, stream="parts", workers=1, progress=False)
        assert current_context() is outer and outer.part_folders == {"extra": ctx}
    assert len(list((tmp_path / "out" / "extra" / ".tasks").glob("*.json"))) == 3
    assert not resume.exists() or not list(resume.glob("*.json"))  # nothing in the paper's own folder
    # read back under saved_only from the outer folder: found in the part's folder, nothing runs
    with run_context(resume_dir=resume, saved_only=True) as outer:
        with part_folder("extra") as ctx:
            again = run_tasks(_tasks(), seed=0, stream="parts", workers=1, progress=False)
            assert ctx.saved_only and not ctx.missing and len(ctx.found) == 3
        with part_folder("other") as empty:
            assert run_tasks(_tasks(), seed=0, stream="parts", workers=1, progress=False).empty
    assert sorted(empty.missing) == ["double 0", "double 1", "double 2"]
    assert outer.found == set() and outer.missing == []
    pd.testing.assert_frame_equal(first, again)


def test_part_folder_without_a_resume_folder_saves_nothing(tmp_path):
    with part_folder("extra") as ctx:
        assert ctx.resume_dir is None and not ctx.saved_only
        run_tasks(_tasks(), seed=0, stream="parts", workers=1, progress=False)
    assert current_context().part_folders == {}  # the default context is never written to
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", 3, None])
def test_part_folder_refuses_a_name_that_is_not_a_plain_folder(name):
    with pytest.raises(ValueError, match="name must be a plain folder name"), part_folder(name):
        pass
