"""Task keys by what determines a task's result (:mod:`pystanprivacy.run.study`): the study's name and
version, the digests of its declared Stan programs (flattened with their includes, comments aside)
and data files, its arguments and seeds -- never its module's source text. The task modules here
are written to a temporary folder and imported from it, so that their source, program and data
can be changed between two keys; nothing is compiled except the one cached test model of
``beta_bernoulli_model`` (tests/conftest.py)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.datasets import uci
from pystanprivacy.run import runner
from pystanprivacy.run.runner import Task, run_tasks
from pystanprivacy.run.study import Study, UndeclaredInput, declaration

STUDY = Study(name="tests/run/task_keys", version=1)

PROGRAM = """// a test program: the mean of a normal sample
functions {
#include twice.stanfunctions
}
data {
  int<lower=0> N;
  vector[N] y;
}
parameters {
  real mu;
}
model {
  y ~ normal(twice(mu), 1); // the likelihood
}
"""
INCLUDE = "real twice(real x) {\n  return 2 * x;\n}\n"

MODULE = '''"""{doc}"""
from pystanprivacy.run.study import Study

STUDY = Study(name="tests/keys", version={version})


@STUDY.task(programs=({program!r},), data=("abalone.data",))
def fit_task(*, x, data_path, seed):
    """{doc}"""
    return None
'''


def _module(folder: Path, *, doc: str = "One task.", version: int = 1, program: Path) -> object:
    """Write and import (again) the task module ``keys_task_module`` from ``folder``."""
    path = folder / "keys_task_module.py"
    path.write_text(MODULE.format(doc=doc, version=version, program=str(program)))
    spec = importlib.util.spec_from_file_location("keys_task_module", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["keys_task_module"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def setup(tmp_path):
    """A program with an include, a copy of the shipped abalone.data and a task module using both."""
    (tmp_path / "twice.stanfunctions").write_text(INCLUDE)
    program = tmp_path / "mean.stan"
    program.write_text(PROGRAM)
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(uci.find_data_file("abalone.data"), data / "abalone.data")
    yield tmp_path, program, data
    sys.modules.pop("keys_task_module", None)


def _key(mod: object, data: Path, x: float = 1.0) -> str:
    return runner.task_key(Task(mod.fit_task, {"x": x, "data_path": str(data)}), 0, 7, "s")


def test_a_docstring_change_keeps_the_key_and_a_version_bump_changes_it(setup):
    folder, program, data = setup
    key = _key(_module(folder, program=program), data)
    assert _key(_module(folder, doc="One task, its docstring corrected.", program=program), data) == key
    assert _key(_module(folder, version=2, program=program), data) != key
    # the arguments and seeds are still in the key
    mod = _module(folder, program=program)
    assert _key(mod, data, x=2.0) != key
    assert runner.task_key(Task(mod.fit_task, {"x": 1.0, "data_path": str(data)}), 0, 8, "s") != key


def test_a_changed_program_or_included_function_changes_the_key_and_a_comment_does_not(setup):
    folder, program, data = setup
    mod = _module(folder, program=program)
    key = _key(mod, data)
    program.write_text(PROGRAM.replace("// the likelihood", "// the likelihood of the sample"))
    assert _key(mod, data) == key  # comments are not what the program computes
    program.write_text(PROGRAM.replace("normal(twice(mu), 1)", "normal(twice(mu), 2)"))
    changed = _key(mod, data)
    assert changed != key
    program.write_text(PROGRAM)
    assert _key(mod, data) == key
    (folder / "twice.stanfunctions").write_text(INCLUDE.replace("2 * x", "2.5 * x"))  # the included function
    assert _key(mod, data) not in (key, changed)


def test_a_changed_data_file_changes_the_key(setup):
    folder, program, data = setup
    mod = _module(folder, program=program)
    key = _key(mod, data)
    text = (data / "abalone.data").read_text()
    (data / "abalone.data").write_text(text.replace("M,0.455", "F,0.455", 1))
    assert _key(mod, data) != key
    (data / "abalone.data").write_text(text)
    assert _key(mod, data) == key


def test_the_key_inputs_are_saved_with_the_task_and_the_portable_key_holds_them(setup, tmp_path):
    folder, program, data = setup
    mod = _module(folder, program=program)
    task = Task(mod.fit_task, {"x": np.linspace(0, 1, 5), "data_path": str(data)})
    portable = runner.portable_task_key(task, 0, 7, "s")
    assert portable is not None
    program.write_text(PROGRAM.replace("normal(twice(mu), 1)", "normal(twice(mu), 2)"))
    assert runner.portable_task_key(task, 0, 7, "s") != portable


# ------------------------------------------------------------------------ declarations enforced
def undeclared_task(*, seed) -> pd.DataFrame:
    return pd.DataFrame({"a": [1]})


@STUDY.task()
def runs_a_program(*, seed) -> pd.DataFrame:
    """Runs foulds2016/beta_bernoulli, which it does not declare."""
    from pystanprivacy.sampling.stan import StanModel

    post = StanModel.get("foulds2016/beta_bernoulli").sample(
        {"R": 1, "successes": [3.0], "failures": [7.0], "prior_alpha": 1.0, "prior_beta": 1.0},
        chains=1,
        warmup=50,
        draws=50,
        seed=np.random.default_rng(seed),
    )
    return pd.DataFrame({"p": [float(post.draws("p").mean())]})


@STUDY.task(programs=("foulds2016/beta_bernoulli",))
def runs_its_program(*, seed) -> pd.DataFrame:
    return runs_a_program(seed=seed)


@STUDY.task()
def reads_a_file(*, data_path, seed) -> pd.DataFrame:
    return pd.DataFrame({"rows": [len(uci.load_abalone(data_path))]})


def test_a_task_function_without_a_declaration_is_refused():
    with pytest.raises(TypeError, match=r"undeclared_task declares no study.*@STUDY\.task"):
        Task(undeclared_task)
    with pytest.raises(TypeError, match="declares no study"):
        declaration(undeclared_task)
    with pytest.raises(ValueError, match="version must be an int >= 1"):
        Study(name="x", version=0)
    with pytest.raises(TypeError, match="programs must be a tuple of names"):
        STUDY.task(programs="foulds2016/beta_bernoulli")


def test_a_task_that_runs_an_undeclared_program_or_reads_an_undeclared_file_is_not_saved(
    tmp_path, beta_bernoulli_model
):
    resume = tmp_path / ".tasks"
    with pytest.raises(RuntimeError, match=r"ran the Stan program 'foulds2016/beta_bernoulli'.*does not name") as err:
        run_tasks([Task(runs_a_program)], seed=1, resume_dir=resume, progress=False)
    assert isinstance(err.value.__cause__, UndeclaredInput)
    assert not list(resume.glob("*.json"))
    with pytest.raises(RuntimeError, match="read the data file 'abalone.data'"):
        run_tasks([Task(reads_a_file, {"data_path": None})], seed=1, progress=False)
    # declared: saved, with the inputs of its key
    run_tasks([Task(runs_its_program)], seed=1, resume_dir=resume, progress=False)
    (saved,) = resume.glob("*.json")
    inputs = json.loads(saved.read_text())["inputs"]
    from pystanprivacy.sampling.stan import program_digest

    assert inputs == {
        "study": "tests/run/task_keys",
        "version": 1,
        "programs": {"foulds2016/beta_bernoulli": program_digest("foulds2016/beta_bernoulli")},
        "data": {},
    }
