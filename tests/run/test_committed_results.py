"""The committed full-scale runs in results/PAPER/.tasks are still the current code's: every task
file is read back by the paper's study under ``run_context(saved_only=True)`` (nothing runs, no
Stan program compiles) and no task is missing. A task's key holds its study's name and version, the
digests of the Stan programs and data files it declares, its arguments and seeds
(:mod:`pystanprivacy.run.study`), not its module's source: a docstring or refactoring keeps the
committed files, a changed program, data file or study version orphans them, and this catches it.

The one exception is explicit: a saved task that ran an older Stan program or an older version of
its study (its file records the program digests and study version its key was made with, and they
are not today's) is *stale*. Today's study does not
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


def study_versions() -> dict[str, int]:
    """The version of every study declared today (:class:`pystanprivacy.run.study.Study` objects
    of the modules of :mod:`pystanprivacy.experiments`), by study name."""
    import pkgutil

    from pystanprivacy import experiments
    from pystanprivacy.run.study import Study

    versions: dict[str, int] = {}
    for info in pkgutil.walk_packages(experiments.__path__, f"{experiments.__name__}."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Study):
                assert versions.get(value.name, value.version) == value.version, f"two versions of {value.name}"
                versions[value.name] = value.version
    return versions


def stale_files(tasks: Path) -> dict[str, str]:
    """The task files of ``tasks`` (key -> label) whose recorded inputs name a Stan program or data
    file digest other than today's, or an older version of their study: results of an older
    program or of an older meaning of the task, to be rerun (under a new key, same label)."""
    from pystanprivacy.run.study import data_file_digest
    from pystanprivacy.sampling.stan import program_digest

    versions = study_versions()
    out = {}
    for path in tasks.glob("*.json"):
        saved = json.loads(path.read_text(encoding="utf-8"))
        inputs = saved.get("inputs")
        assert inputs is not None, f"{path} has no recorded key inputs (saved before the keys of scheme 3)"
        assert inputs["study"] in versions, f"{path}: study {inputs['study']!r} is declared nowhere today"
        assert inputs["version"] <= versions[inputs["study"]], f"{path}: a version newer than today's"
        if (
            inputs["version"] < versions[inputs["study"]]
            or any(program_digest(p) != d for p, d in inputs["programs"].items())
            or any(data_file_digest(f) != d for f, d in inputs["data"].items())
        ):
            out[path.stem] = saved.get("label", "")
    return out


def assert_current(tasks: Path, saved: set[str], ctx) -> None:
    """Every saved file of ``tasks`` is read by today's study or is stale, and today's study misses
    exactly one task per stale file, that file's own task under its new key (none once they are
    rerun and their old files removed)."""
    stale = stale_files(tasks)
    assert saved - ctx.found == set(stale), (
        f"{len(saved - ctx.found - set(stale))} saved task file(s) that today's study does not read"
    )
    assert len(ctx.missing) == len(stale), f"{len(ctx.missing)} task(s) missing, {len(stale)} stale: {ctx.missing[:5]}"
    # the missing tasks are the stale files' own, under their new keys (same labels), not some other part's
    assert sorted(ctx.missing) == sorted(stale.values()), (
        f"missing tasks that are not a stale file's: {sorted(set(ctx.missing) - set(stale.values()))[:5]}"
    )


def _read_back(paper: str, out_dir: Path):
    """The committed task files of ``paper`` and the run context of its full study read back from
    them under ``saved_only``, part by part, every part of its ``PARTS`` (the studies that keep
    their tasks in a folder of their own, ``results/PAPER/<folder>/.tasks``, are in the context's
    ``part_folders``): a part whose tasks are all stale builds no table (it stops), and the others
    are still read."""
    tasks = RESULTS / paper / ".tasks"
    saved = {p.stem for p in tasks.glob("*.json")}
    assert saved, f"no committed task files in {tasks}"
    study = importlib.import_module(f"pystanprivacy.experiments.{paper}")
    with run_context(resume_dir=tasks, saved_only=True) as ctx:
        for part in study.PARTS or (None,):
            # an empty table of stale tasks, or a part reading the table of one that built none: the checks count them
            with contextlib.suppress(ValueError, KeyError, FileNotFoundError):
                study.reproduce(out_dir, quick=False, progress=False, **({} if part is None else {"parts": [part]}))
    return saved, ctx


#: the folders of committed tasks apart from results/PAPER/.tasks, and the part that keeps them
#: (every folder of committed task files is named here: a new one must be read by a part)
PART_FOLDERS = {
    "foulds2016": {"dispersed": "dispersed", "heldout_dispersed": "heldout_dispersed", "ops_gate": "ops_gate"},
    "bernstein2018": {"exponential_modes": "exponential_modes"},
    "kulkarni2022": {
        "ldp_sgd_tuned": "ldp_sgd_tuned",
        "k4_sweep": "k4_sweep",
        "exponential_check": "exponential_check",
    },
    "jewson2023": {"banknote": "banknote", "supplements": "counterparts", "paper_design": "paper_design"},
}


@pytest.mark.parametrize("paper", sorted(PART_FOLDERS))
def test_every_committed_task_file_is_read_by_the_full_study(paper, tmp_path):
    """Every committed task file of ``paper``, in ``results/PAPER/.tasks`` and in the folders of
    the parts that keep theirs apart, is read back by ``reproduce PAPER --full`` (all its parts,
    the supplementary studies included) and none is missing, stale files aside."""
    saved, ctx = _read_back(paper, tmp_path)
    assert_current(RESULTS / paper / ".tasks", saved, ctx)
    folders = {p.parent.parent.name for p in (RESULTS / paper).glob("*/.tasks/*.json")}
    assert folders == set(PART_FOLDERS[paper]), f"folders of committed tasks: {sorted(folders)}"
    for folder in sorted(folders):
        tasks = RESULTS / paper / folder / ".tasks"
        assert folder in ctx.part_folders, f"no part of {paper} read {tasks} (part {PART_FOLDERS[paper][folder]!r})"
        assert_current(tasks, {p.stem for p in tasks.glob("*.json")}, ctx.part_folders[folder])


def test_the_tuned_ldp_sgd_folder_holds_its_390_units():
    """Kulkarni et al.'s tuned LDP-SGD (part ``ldp_sgd_tuned``) keeps its tasks in their own
    folder with their own portable keys (the PCA features are LAPACK output): all 390 of them."""
    assert len(list((RESULTS / "kulkarni2022" / "ldp_sgd_tuned" / ".tasks").glob("*.json"))) == 390
