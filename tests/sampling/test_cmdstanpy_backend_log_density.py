"""``StanModel.log_density`` on the cmdstanpy backend for a program whose free parameters have
total size 0 (``vector[P] p`` with ``P = 0``, or no parameters block).

CmdStan's ``log_prob`` method refuses such a program before evaluating anything: it prints
"Model <name> has no parameters, nothing to estimate." and exits with a non-zero code
(``get_constrained_param_names`` in CmdStan's ``src/cmdstan/command_helper.hpp``); pystan
evaluates it. The backend then evaluates an evaluation copy of the program with one unused,
unconstrained parameter (``padded_program``), compiled once beside the model's executable.

CmdStan cannot be installed on these machines, so (as the chain tests do) a stand-in plays it:
a small Python script in place of the model's executable that answers ``log_prob`` for the test
program beside it as CmdStan does -- the refusal above where the program's parameters have no
element, "variable does not exist" for a parameter missing from the point, the model block's
``reject`` as "Error during log_prob calculation:" with the line of the ``reject`` statement in
its own program file, and otherwise a CSV with ``lp__`` and one gradient column per
unconstrained parameter. The "compile" of the evaluation copy (``cmdstanpy.CmdStanModel`` with
``force_compile=True``) writes the same stand-in beside the copy. The padded programs are also
checked with the real Stan compiler's front end (``stanc --info``, shipped with httpstan)."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from pystanprivacy.sampling import stan as pstan
from pystanprivacy.sampling.backends import cmdstanpy_backend as cb

#: the test program: its log density is -y^2 / 2 + sum(p), its gradient 1 in each p[k]
PROGRAM = """data {
  int<lower=0> P;
  real y;
}
parameters {
  vector[P] p;
}
model {
  if (y < 0) {
    reject("y must be non-negative");
  }
  target += -0.5 * square(y) + sum(p);
}
"""

STAND_IN = r'''#!{python}
# Stand-in for a CmdStan model executable, answering the log_prob method for the test program
# beside it (model.stan) as CmdStan does (a test fixture; see the test module's docstring).
import json, re, sys
from pathlib import Path

program_file = Path(sys.argv[0]).with_suffix(".stan")
program = program_file.read_text()
args, section = {{}}, None
for a in sys.argv[1:]:
    if a in ("data", "output"):
        section = a
    elif "=" in a:
        k, v = a.split("=", 1)
        args[f"{{section}}.{{k}}" if k == "file" else k] = v
data = json.loads(Path(args["data.file"]).read_text())
block = re.search(r"(?<!transformed )parameters\s*\{{([^}}]*)\}}", program)
declared = []  # (name, number of elements): the declaration forms this stand-in knows
for decl in (block.group(1).split(";")[:-1] if block else []):
    decl = decl.strip()
    if m := re.fullmatch(r"vector\[P\]\s+(\w+)", decl):
        declared.append((m.group(1), data["P"]))
    elif m := re.fullmatch(r"real\s+(\w+)", decl):
        declared.append((m.group(1), 1))
    else:
        sys.exit(f"stand-in: unknown declaration {{decl!r}}")
if sum(n for _, n in declared) == 0:  # CmdStan: get_constrained_param_names, caught in main
    print("Model model_model has no parameters, nothing to estimate.", file=sys.stderr)
    sys.exit(1)
point = json.loads(Path(args["constrained_params"]).read_text())
for name, n in declared:
    value = point.get(name)
    if value is None or (len(value) if isinstance(value, list) else 1) != n:
        print(f"variable does not exist; processing stage=parameter initialization; variable name={{name}}; "
              "base type=double\nBad or missing parameter values, cannot unconstrain.", file=sys.stderr)
        sys.exit(1)
if data["y"] < 0:  # the model block's reject, at its line in this program file
    line = next(i for i, text in enumerate(program.splitlines(), 1) if "reject(" in text)
    print(f"Error during log_prob calculation:\nException: y must be non-negative (in '{{program_file}}', line {{line}}, "
          "column 4 to column 29)", file=sys.stderr)
    sys.exit(1)
values = {{name: (point[name] if n != 1 or isinstance(point[name], list) else [point[name]]) for name, n in declared}}
lp = -0.5 * data["y"] ** 2 + sum(values.get("p", []))
names, grad = [], []
for name, n in declared:
    for k in range(n):
        names.append(f"g_{{name}}.{{k + 1}}" if name == "p" else f"g_{{name}}")
        grad.append(1.0 if name == "p" else 0.0)  # the model block uses p only
with open(args["output.file"], "w") as f:
    f.write("# model = model_model\n# method = log_prob\n")
    f.write(",".join(["lp__"] + names) + "\n")
    f.write(",".join(repr(float(v)) for v in [lp] + grad) + "\n")
'''


def _stand_in(path: Path) -> Path:
    path.write_text(STAND_IN.format(python=sys.executable))
    path.chmod(0o700)
    return path


@pytest.fixture
def cmdstan_model(tmp_path, monkeypatch):
    """A model compiled into a stand-in cache folder (``<cache>/<tag>/<key>/model.stan`` and its
    stand-in executable ``model``), a ``StanModel`` of it on the cmdstanpy backend, and the list
    of the compiles the backend asks cmdstanpy for."""
    import cmdstanpy

    compiles = []

    class StandInCmdStanModel:  # cmdstanpy.CmdStanModel(stan_file=..., force_compile=True): "compiles"
        def __init__(self, stan_file=None, exe_file=None, force_compile=False, **kwargs):
            assert force_compile and exe_file is None and not kwargs
            compiles.append(Path(stan_file))
            self.stan_file = stan_file
            self.exe_file = str(_stand_in(Path(stan_file).with_suffix("")))

    monkeypatch.setattr(cmdstanpy, "CmdStanModel", StandInCmdStanModel)
    folder = tmp_path / "cache" / "tag" / "key"
    folder.mkdir(parents=True, mode=0o700)
    (folder / "model.stan").write_text(PROGRAM)
    handle = SimpleNamespace(stan_file=str(folder / "model.stan"), exe_file=str(_stand_in(folder / "model")))
    program_file = tmp_path / "no_free_parameters.stan"  # what the StanModel is named by (its data check)
    program_file.write_text(PROGRAM)
    model = object.__new__(pstan.StanModel)
    model.name, model.backend, model._handle = str(program_file), cb.CmdStanPyBackend(), handle
    return model, folder, compiles


def test_the_stand_in_refuses_a_program_without_free_parameters_as_cmdstan_does(cmdstan_model, tmp_path):
    """What the backend has to handle: the model's own executable refuses P = 0 (and evaluates
    P = 1), as CmdStan's log_prob method does."""
    _, folder, _ = cmdstan_model
    data, point, out = tmp_path / "d.json", tmp_path / "p.json", tmp_path / "o.csv"
    point.write_text(json.dumps({"p": []}))

    def run(P):
        data.write_text(json.dumps({"P": P, "y": 1.0}))
        cmd = [str(folder / "model"), "log_prob", f"constrained_params={point}", "jacobian=1"]
        cmd += ["data", f"file={data}", "output", f"file={out}", "sig_figs=18"]
        return subprocess.run(cmd, capture_output=True, text=True, check=False)

    refused = run(0)
    assert refused.returncode != 0
    assert refused.stderr.strip() == "Model model_model has no parameters, nothing to estimate."
    point.write_text(json.dumps({"p": [0.25]}))
    assert run(1).returncode == 0 and out.read_text().splitlines()[-2:] == ["lp__,g_p.1", "-0.25,1.0"]


def test_log_density_of_a_program_without_free_parameters_on_a_stand_in_cmdstan(cmdstan_model):
    """P = 0: the value and (empty) gradient pystan gives, from the evaluation copy, compiled
    once into a private folder beside the model's executable; the model block's reject reaches
    the caller with its line in the program, never "nothing to estimate"; P > 0 runs on the
    model's own executable."""
    model, folder, compiles = cmdstan_model
    y = 1.5
    lp, grad = model.log_density({"P": 0, "y": y}, {"p": []})
    np.testing.assert_array_equal(lp, [-0.5 * y**2])  # -1.125, exact in binary
    assert grad.shape == (1, 0)
    copy = folder / cb.PAD_FOLDER / "model.stan"
    assert compiles == [copy]
    assert stat.S_IMODE(os.stat(copy.parent).st_mode) == 0o700
    lines, padded_lines = PROGRAM.splitlines(), copy.read_text().splitlines()
    assert len(padded_lines) == len(lines)  # every statement keeps its line
    changed = [i for i, (a, b) in enumerate(zip(lines, padded_lines, strict=True)) if a != b]
    assert changed == [lines.index("parameters {")]
    assert padded_lines[changed[0]] == f"parameters {{ real {cb.PAD_PARAMETER};"

    # several points, the copy reused (no second compile)
    lp, grad = model.log_density({"P": 0, "y": 2.0}, [{"p": []}, {"p": np.zeros(0)}])
    np.testing.assert_array_equal(lp, [-2.0, -2.0])
    assert grad.shape == (2, 0) and compiles == [copy]

    # the model block's own message, at the reject's line of the program (line 10)
    reject_line = next(i for i, text in enumerate(lines, 1) if "reject(" in text)
    with pytest.raises(pstan.StanRunError) as err:
        model.log_density({"P": 0, "y": -1.0}, {"p": []})
    message = str(err.value)
    assert "y must be non-negative" in message and f"line {reject_line}," in message, message
    assert cb.NO_PARAMETERS not in message and cb.PAD_PARAMETER not in message

    # free parameters with elements: the model's own executable, no copy involved
    lp, grad = model.log_density({"P": 2, "y": 1.0}, {"p": [0.5, 0.25]})
    np.testing.assert_array_equal(lp, [-0.5 + 0.75])
    np.testing.assert_array_equal(grad, [[1.0, 1.0]])
    assert compiles == [copy]


def test_a_stale_or_missing_evaluation_copy_is_compiled_again(cmdstan_model):
    model, folder, compiles = cmdstan_model
    model.log_density({"P": 0, "y": 1.0}, {"p": []})
    copy = folder / cb.PAD_FOLDER / "model.stan"
    copy.write_text(copy.read_text() + "\n// edited\n")  # not the copy of this program any more
    model.log_density({"P": 0, "y": 1.0}, {"p": []})
    (folder / cb.PAD_FOLDER / "model").unlink()
    model.log_density({"P": 0, "y": 1.0}, {"p": []})
    assert compiles == [copy] * 3
    assert copy.read_text() == cb.padded_program(PROGRAM)


def test_a_model_made_from_an_executable_alone_gets_a_clear_error(cmdstan_model):
    model, folder, _ = cmdstan_model
    model._handle = SimpleNamespace(stan_file=None, exe_file=str(folder / "model"))
    with pytest.raises(pstan.StanRunError, match="needs the program's file"):
        model.log_density({"P": 0, "y": 1.0}, {"p": []})


# --------------------------------------------------------------------------- padded_program
NO_BLOCK = """functions {
  real f(real x) { return x; }  // parameters { in a comment
}
data { real y; }
model { target += f(y); }
generated quantities { real z = y; }
"""
NOTHING_AFTER = """data { real y; }
transformed data { real parameters_ = y; /* parameters { */ print("parameters {"); }
"""
TRANSFORMED = """data { int N; }
transformed data { int M = N; }
transformed parameters { real w = 1; }
"""
CANONICAL = """data {
  int<lower=0> N;
}
parameters {
  real<lower=0> sigma;
  array[N] real x;
}
transformed parameters {
  real s = sum(x);
}
model {
  x ~ normal(0, sigma);
}
"""


@pytest.mark.parametrize(
    "program, parameters",
    [(NO_BLOCK, []), (NOTHING_AFTER, []), (TRANSFORMED, []), (CANONICAL, ["sigma", "x"]), (PROGRAM, ["p"])],
    ids=["no-block", "nothing-after", "transformed-only", "canonical", "zero-size"],
)
def test_the_padded_program_is_the_program_with_one_more_parameter(program, parameters, tmp_path):
    """Checked with Stan's own compiler front end (``stanc --info``): the copy is a valid
    program whose parameters are the program's and the pad (a real, 0 dimensions), with the
    same data and the same other outputs; and it has the program's lines (the pad's text
    removed, the program itself)."""
    padded = cb.padded_program(program)
    before, after = tmp_path / "before.stan", tmp_path / "after.stan"
    before.write_text(program)
    after.write_text(padded)
    info, padded_info = pstan.model_info(before), pstan.model_info(after)
    assert list(info["parameters"]) == parameters
    assert padded_info["parameters"] == {
        **info["parameters"],
        cb.PAD_PARAMETER: {"type": "real", "dimensions": 0},
    }
    for section in ("inputs", "transformed parameters", "generated quantities"):
        assert padded_info[section] == info[section]
    assert len(padded.rstrip("\n").splitlines()) == len(program.rstrip("\n").splitlines()) + (program is NOTHING_AFTER)
    pad = f"real {cb.PAD_PARAMETER};"
    assert padded.count(pad) == 1
    assert (
        re.sub(rf"( {re.escape(pad)}|parameters \{{ {re.escape(pad)} \}}\s*)", "", padded).rstrip() == program.rstrip()
    )


def test_a_program_that_uses_the_pads_name_is_refused():
    with pytest.raises(ValueError, match=cb.PAD_PARAMETER):
        cb.padded_program(f"data {{ real {cb.PAD_PARAMETER}; }}")


def test_the_noise_function_programs_copy_keeps_its_lines(tmp_path):
    """The program of tests/models/test_noise_functions.py's domain tests (``vector[P] p`` with
    P = 0 there), flattened as it is compiled: its copy is valid Stan (``stanc --info``), with
    the pad as one more parameter, and only the ``parameters {`` line differs, so a rejection
    names the same line on both backends."""
    program = pstan.flatten(str(Path(__file__).parents[1] / "stan" / "noise_functions.stan"))
    padded = cb.padded_program(program)
    before, after = tmp_path / "noise.stan", tmp_path / "noise_padded.stan"
    before.write_text(program)
    after.write_text(padded)
    info, padded_info = pstan.model_info(before), pstan.model_info(after)
    assert padded_info["parameters"] == {**info["parameters"], cb.PAD_PARAMETER: {"type": "real", "dimensions": 0}}
    assert padded_info["inputs"] == info["inputs"]
    lines, padded_lines = program.splitlines(), padded.splitlines()
    assert len(padded_lines) == len(lines)
    changed = [i for i, (a, b) in enumerate(zip(lines, padded_lines, strict=True)) if a != b]
    assert [lines[i] for i in changed] == ["parameters {"]
