"""The cmdstanpy backend against stand-ins for cmdstanpy's documented objects (CmdStan itself
cannot be installed on these machines; the backend is run against a real CmdStan elsewhere).

These tests pin down what the backend must get right on its own: where it writes files, which
documented arguments it passes, and how it reshapes draws to (chains, draws, *dims)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from pystanprivacy.sampling.backends import cmdstanpy_backend as cb
from pystanprivacy.sampling.backends.base import SamplerSettings


class FakeFit:
    def __init__(self, chains, draws):
        self.chains = chains
        rng = np.random.default_rng(0)
        # stan_variable returns (chains*draws, *dims) with chains concatenated in order
        self.p = rng.normal(size=(chains, draws, 3))
        self.metadata = SimpleNamespace(stan_vars={"p": object(), "sigma": object()})
        self.sigma = rng.normal(size=(chains, draws))

    def draws(self, *, concat_chains=True):
        # CmdStanMCMC.draws(concat_chains=False): (draws, chains, columns)
        assert concat_chains is False
        c, d = self.sigma.shape
        return np.zeros((d, c, 4))

    def stan_variable(self, name):
        arr = {"p": self.p, "sigma": self.sigma}[name]
        return arr.reshape(-1, *arr.shape[2:])

    def method_variables(self):
        c, d = self.sigma.shape
        return {
            "lp__": np.arange(c * d, dtype=float).reshape(d, c),
            "divergent__": np.zeros((d, c)),
            "treedepth__": np.full((d, c), 3.0),
        }


class FakeModel:
    #: a program file the backend keys its cached ``stanc --info`` by (CmdStanModel.stan_file)
    stan_file = __file__

    def __init__(self):
        self.calls = []

    def src_info(self):
        # CmdStanModel.src_info(): stanc --info, every output with its number of dimensions
        return {
            "parameters": {"p": {"type": "real", "dimensions": 1}},
            "generated quantities": {"sigma": {"type": "real", "dimensions": 0}},
        }

    def sample(self, **kwargs):
        data_file = Path(kwargs["data"])
        self.calls.append(
            {
                **kwargs,
                "data_json": json.loads(data_file.read_text()),
                "data_mode": stat.S_IMODE(os.stat(data_file).st_mode),
            }
        )
        (Path(kwargs["output_dir"]) / "model-1.csv").write_text("draws")
        return FakeFit(kwargs["chains"], kwargs["iter_sampling"])


def test_run_writes_only_into_the_private_workdir_and_reshapes(tmp_path):
    model = FakeModel()
    settings = SamplerSettings(chains=2, warmup=50, draws=7, seed=3, adapt_delta=0.9, max_treedepth=8)
    raw = cb.CmdStanPyBackend().run(model, {"y": [1.0, 2.0]}, settings, tmp_path)
    call = model.calls[0]
    assert Path(call["data"]).parent == tmp_path and call["data_json"] == {"y": [1.0, 2.0]}
    assert call["data_mode"] == 0o600
    assert Path(call["output_dir"]).parent == tmp_path
    assert (call["chains"], call["iter_warmup"], call["iter_sampling"], call["seed"]) == (2, 50, 7, 3)
    assert (call["adapt_delta"], call["max_treedepth"], call["show_progress"]) == (0.9, 8, False)
    assert not Path(call["output_dir"]).exists(), "CSV output is deleted once read"
    fake = FakeFit(2, 7)
    np.testing.assert_array_equal(raw.variables["p"], fake.p)
    assert raw.variables["sigma"].shape == (2, 7)
    # method_variables are (draws, chains); RawFit wants (chains, draws)
    np.testing.assert_array_equal(raw.sampler["lp__"], fake.method_variables()["lp__"].T)
    assert set(raw.sampler) == {"lp__", "divergent__", "treedepth__"}


def test_fixed_param_run_passes_no_adaptation_arguments(tmp_path):
    model = FakeModel()
    cb.CmdStanPyBackend().run(model, {"y": [1.0]}, SamplerSettings(chains=1, draws=4, fixed_param=True), tmp_path)
    call = model.calls[0]
    assert call["fixed_param"] is True and "adapt_delta" not in call and "iter_warmup" not in call


def _fake_cmdstan(root: Path, version: str) -> Path:
    """A folder cmdstanpy accepts as a CmdStan installation (it checks for the makefile and
    reads CMDSTAN_VERSION from it)."""
    root.mkdir(exist_ok=True)
    (root / "makefile").write_text(f"# CmdStan makefile\nCMDSTAN_VERSION := {version}\n")
    return root


def test_compile_writes_program_into_the_cache_and_reuses_the_executable(tmp_path, monkeypatch):
    made = []

    class FakeCmdStanModel:
        def __init__(self, stan_file=None, exe_file=None, force_compile=False, **kwargs):
            assert "compile" not in kwargs, "compile='force' is deprecated: force_compile=True"
            made.append({"stan_file": stan_file, "exe_file": exe_file, "force_compile": force_compile})
            if force_compile:
                Path(stan_file).with_suffix("").write_text("exe")

    import cmdstanpy

    monkeypatch.setattr(cmdstanpy, "CmdStanModel", FakeCmdStanModel)
    monkeypatch.setenv("CMDSTAN", str(_fake_cmdstan(tmp_path / "cmdstan", "2.35.0")))
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    backend = cb.CmdStanPyBackend()
    program = "parameters { real y; } model { y ~ std_normal(); }"
    assert not backend.is_compiled(program, "k1", cache)
    backend.compile(program, "k1", cache)
    assert backend.is_compiled(program, "k1", cache)
    tag = backend.version_tag()
    model_dir = cache / tag / "k1"
    assert (model_dir / "model.stan").read_text() == program
    for d in (cache / tag, model_dir):  # every level private, not only the last
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700, d
    backend.compile(program, "k1", cache)
    assert made[0]["force_compile"] is True and made[1]["exe_file"] == str(model_dir / "model")
    assert "-cmdstan-2.35-" in tag
    # an in-place upgrade of CmdStan (same folder) must not reuse the old executables
    _fake_cmdstan(tmp_path / "cmdstan", "2.36.0")
    assert backend.version_tag() != tag and "-cmdstan-2.36-" in backend.version_tag()
    assert not backend.is_compiled(program, "k1", cache)
    # nor a second installation of the same version
    monkeypatch.setenv("CMDSTAN", str(_fake_cmdstan(tmp_path / "other", "2.35.0")))
    assert backend.version_tag() not in (tag, "")


_LOGGING_CHILD = r"""
import sys
import cmdstanpy
from pystanprivacy.sampling.backends import cmdstanpy_backend as cb

cmdstanpy.CmdStanModel = lambda **kwargs: None  # no compiler here: the compile is not the point
cb.CmdStanPyBackend().compile("parameters { real y; }", "k", __import__("pathlib").Path(sys.argv[1]))
logger = cmdstanpy.utils.get_logger()  # what cmdstanpy calls before each of its messages
logger.info("CmdStan start processing")
logger.warning("a warning")
"""


def test_cmdstanpy_logs_no_info_lines_per_fit(tmp_path):
    """cmdstanpy sets its logger to DEBUG with an INFO handler on stderr the first time it logs
    (when no handler is configured, as in a plain script): the backend's WARNING level must
    survive that, so a fit prints no INFO lines. Run in a fresh interpreter (pytest's own log
    handler would hide the effect)."""
    import subprocess
    import sys

    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = {
        **os.environ,
        "CMDSTAN": str(_fake_cmdstan(tmp_path / "cmdstan", "2.35.0")),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    out = subprocess.run(
        [sys.executable, "-c", _LOGGING_CHILD, str(cache)], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "a warning" in out.stderr and "start processing" not in out.stderr, out.stderr


def test_cmdstan_is_never_downloaded(monkeypatch):
    import cmdstanpy

    def forbidden(*a, **k):  # pragma: no cover - must not be called
        raise AssertionError("install_cmdstan must never be called")

    monkeypatch.setattr(cmdstanpy, "install_cmdstan", forbidden)
    monkeypatch.setattr(cb, "_cmdstan_path", lambda: None)
    assert "never downloads" in cb.CmdStanPyBackend.availability()


def test_log_density_runs_cmdstan_log_prob_inside_the_workdir(tmp_path):
    """The documented CmdStan ``log_prob`` method, run on the model's executable: its files
    (data, parameters, output CSV) all go into the private directory, and the CSV's first row
    is read as (lp__, gradient)."""
    log = tmp_path / "args.txt"
    exe = tmp_path / "model"
    exe.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {log}\n'
        'for a in "$@"; do case "$a" in file=*log_prob*) out="${a#file=}";; esac; done\n'
        'printf "# stan_version_major = 2\\n# model = m\\nlp__,g_1,g_2\\n-3.5,0.25,-1.5\\n" > "$out"\n'
    )
    exe.chmod(0o700)
    work = tmp_path / "work"
    work.mkdir(mode=0o700)
    handle = SimpleNamespace(exe_file=str(exe))
    out = cb.CmdStanPyBackend().log_density(handle, {"y": [1.0]}, [{"p": [0.1, 0.2]}, {"p": [0.3, 0.4]}], work)
    assert [lp for lp, _ in out] == [-3.5, -3.5]
    np.testing.assert_array_equal(out[1][1], [0.25, -1.5])
    calls = log.read_text().splitlines()
    assert len(calls) == 2 and calls[0].split()[0] == "log_prob" and "jacobian=1" in calls[0]
    assert f"constrained_params={work / 'params-0.json'}" in calls[0]
    assert f"file={work / 'data.json'}" in calls[0]
    assert json.loads((work / "params-1.json").read_text()) == {"p": [0.3, 0.4]}
    assert stat.S_IMODE(os.stat(work / "data.json").st_mode) == 0o600
    assert {p.parent for p in work.rglob("*")} == {work}
    # an unconstrained point goes in as params_r, through unconstrained_params=
    cb.CmdStanPyBackend().log_density(handle, {"y": [1.0]}, [[0.5, -0.5]], work, unconstrained=True)
    call = log.read_text().splitlines()[-1]
    assert f"unconstrained_params={work / 'params-0.json'}" in call and "constrained_params=" not in call.replace(
        "unconstrained_params=", ""
    )
    assert json.loads((work / "params-0.json").read_text()) == {"params_r": [0.5, -0.5]}
