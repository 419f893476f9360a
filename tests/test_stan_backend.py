"""The Stan layer: model registry, stanc checks, data validation before Stan, backend
selection, private temporary files, draws layout and diagnostics."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pystanprivacy import stan as pstan
from pystanprivacy.backends import ENV_VAR, select_backend
from pystanprivacy.backends.base import reshape_column_major
from pystanprivacy.backends.cmdstanpy_backend import CmdStanPyBackend

ALL_MODELS = pstan.available_models()


def test_registry_lists_the_foulds_models():
    assert "foulds2016/beta_bernoulli" in ALL_MODELS
    assert "foulds2016/beta_bernoulli_ops" in ALL_MODELS
    assert all(not m.startswith("functions/") for m in ALL_MODELS)


def test_unknown_model_names_the_available_ones():
    with pytest.raises(ValueError, match="unknown model 'nope/x'.*foulds2016/beta_bernoulli"):
        pstan.model_file("nope/x")
    with pytest.raises(TypeError, match="model name must be a string"):
        pstan.model_file(3)


@pytest.mark.parametrize("name", ALL_MODELS)
def test_every_model_parses_with_stanc_and_has_a_header(name):
    info = pstan.model_info(name)  # stanc --info: a compiler-free syntax check
    assert info["parameters"], f"{name} declares no parameters"
    text = pstan.model_file(name).read_text()
    first = text.lstrip().splitlines()[0]
    assert first.startswith("//") and "(20" in text.split("\n", 3)[0] + text.split("\n", 3)[1], (
        f"{name} must start with a header comment naming the paper"
    )
    assert "array[" in text or "vector" in text  # current syntax, no old-style arrays
    assert "privacy" in text.lower() or "dp" in text.lower()


def test_flatten_resolves_includes(tmp_path):
    (tmp_path / "twice.stanfunctions").write_text("real twice(real x) { return 2 * x; }\n")
    model = tmp_path / "m.stan"
    model.write_text("functions {\n#include twice.stanfunctions\n}\nparameters { real y; }\nmodel { y ~ normal(twice(1), 1); }\n")
    flat = pstan.flatten(model)
    assert "#include" not in flat and "return 2 * x" in flat


def test_stanc_error_is_reported(tmp_path):
    bad = tmp_path / "bad.stan"
    bad.write_text("parameters { real y } model { }")
    with pytest.raises(ValueError, match="stanc rejected bad.stan"):
        pstan.flatten(bad)


def test_backend_selection(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "pystan")
    assert select_backend().name == "pystan"
    with pytest.raises(ValueError, match="PYSTANPRIVACY_BACKEND must be one of auto, cmdstanpy, pystan; got 'stanx'"):
        monkeypatch.setenv(ENV_VAR, "stanx")
        select_backend()
    monkeypatch.delenv(ENV_VAR)
    with pytest.raises(ValueError, match="backend must be one of"):
        select_backend("julia")


def test_auto_prefers_cmdstanpy_only_when_cmdstan_is_installed(monkeypatch, tmp_path):
    monkeypatch.setenv("CMDSTAN", str(tmp_path / "missing"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert CmdStanPyBackend.availability() is not None  # never downloads CmdStan
    assert select_backend("auto").name == "pystan"
    with pytest.raises(RuntimeError, match="Stan backend 'cmdstanpy' cannot be used: no CmdStan installation"):
        select_backend("cmdstanpy")


def test_no_backend_error_names_both_options(monkeypatch):
    from pystanprivacy.backends import pystan_backend

    monkeypatch.setattr(CmdStanPyBackend, "availability", classmethod(lambda cls: "no CmdStan"))
    monkeypatch.setattr(pystan_backend.PystanBackend, "availability", classmethod(lambda cls: "no pystan"))
    with pytest.raises(RuntimeError, match="pystan.*CmdStan.*cmdstanpy: no CmdStan; pystan: no pystan"):
        select_backend("auto")


def test_reshape_column_major_matches_stan_order():
    m = np.arange(24).reshape(2, 3, 4)
    flat = np.stack([m.flatten(order="F")] * 2)[None]  # (1 chain, 2 draws, 24)
    out = reshape_column_major(flat, (2, 3, 4))
    assert out.shape == (1, 2, 2, 3, 4)
    np.testing.assert_array_equal(out[0, 1], m)


def _data(s, f):
    return {"R": len(s), "successes": s, "failures": f, "prior_alpha": 1.0, "prior_beta": 1.0}


def test_data_is_validated_before_stan(beta_bernoulli_model):
    m = beta_bernoulli_model
    with pytest.raises(ValueError, match="missing prior_beta"):
        m.sample({"R": 1, "successes": [1.0], "failures": [1.0], "prior_alpha": 1.0})
    with pytest.raises(ValueError, match="does not declare: extra"):
        m.sample({**_data([1.0], [1.0]), "extra": 1})
    with pytest.raises(ValueError, match=r"data\['successes'\] contains NaN"):
        m.sample(_data([float("nan")], [1.0]))
    with pytest.raises(ValueError, match="must have 1 dimension"):
        m.sample({**_data([1.0], [1.0]), "successes": 1.0})
    with pytest.raises(TypeError, match="must be numeric"):
        m.sample(_data(["a"], [1.0]))
    with pytest.raises(ValueError, match="chains must be an int >= 1, got 0"):
        m.sample(_data([1.0], [1.0]), chains=0)
    with pytest.raises(TypeError, match="seed must be an int"):
        m.sample(_data([1.0], [1.0]), seed="1")
    with pytest.raises(ValueError, match=r"adapt_delta must be in \(0, 1\)"):
        m.sample(_data([1.0], [1.0]), adapt_delta=1.5)


def test_draws_layout_summary_and_closed_form(beta_bernoulli_model):
    counts = np.array([[3.0, 7.0], [30.0, 70.0], [0.0, 0.0]])
    post = beta_bernoulli_model.sample(_data(counts[:, 0], counts[:, 1]), chains=4, warmup=500, draws=1000, seed=11)
    assert post.draws("p").shape == (4000, 3)
    assert post.draws("p", combine_chains=False).shape == (4, 1000, 3)
    assert post.idata.posterior["p"].shape == (4, 1000, 3)
    assert "observed_data" not in post.idata.groups()  # no data in the saved object
    assert set(post.idata.sample_stats.data_vars) >= {"diverging", "tree_depth", "lp"}
    assert post.check() == []
    summary = post.summary()
    assert list(summary.index) == ["p[0]", "p[1]", "p[2]"]
    # Each component is Beta(n+ + 1, n- + 1): KS per component at alpha = 1e-3 on thinned
    # (near-independent) draws; deterministic with the fixed seed, false-rejection rate 1e-3
    # per component across seeds.
    draws = post.draws("p")[::4]
    for r, (a, b) in enumerate(counts + 1):
        assert stats.kstest(draws[:, r], stats.beta(a, b).cdf).pvalue > 1e-3


def test_per_element_diagnostics_and_with_draws(beta_bernoulli_model):
    post = beta_bernoulli_model.sample(_data([3.0, 30.0], [7.0, 70.0]), chains=2, warmup=200, draws=200, seed=3)
    table = post.diagnostics(["p"])
    assert list(table["index"]) == [(0,), (1,)]
    np.testing.assert_allclose(table["rhat"], post.rhat()["p"])
    np.testing.assert_allclose(table["ess_tail"], post.ess_tail()["p"])
    # a view with other draws keeps the run's sampler statistics; two chains stuck at
    # different values are flagged by R-hat, the divergence count is the run's
    stuck = np.stack([np.full((200, 1), 0.2), np.full((200, 1), 0.8)]) + np.random.default_rng(0).normal(0, 1e-3, (2, 200, 1))
    view = post.with_draws({"q": stuck})
    assert view.variables == ["q"] and view.num_divergences == post.num_divergences
    assert any("R-hat of q" in problem for problem in view.check())
    with pytest.raises(ValueError, match=r"must have shape \(2, 200, ...\)"):
        post.with_draws({"q": stuck[:, :10]})


def test_same_seed_same_draws(beta_bernoulli_model):
    d = _data([2.0], [5.0])
    a = beta_bernoulli_model.sample(d, chains=2, warmup=100, draws=50, seed=5).draws("p")
    b = beta_bernoulli_model.sample(d, chains=2, warmup=100, draws=50, seed=5).draws("p")
    c = beta_bernoulli_model.sample(d, chains=2, warmup=100, draws=50, seed=6).draws("p")
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_check_reports_unconverged_run_in_words(beta_bernoulli_model):
    post = beta_bernoulli_model.sample(_data([3.0], [7.0]), chains=2, warmup=3, draws=20, seed=2)
    problems = post.check()
    assert any("ESS of p" in p for p in problems)
    one_chain = beta_bernoulli_model.sample(_data([3.0], [7.0]), chains=1, warmup=200, draws=200, seed=2)
    assert any("only one chain" in p for p in one_chain.check())


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    hits = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            try:
                if p.is_file() and p.stat().st_size < 50_000_000 and needle in p.read_bytes():
                    hits.append(p)
            except OSError:
                continue
    return hits


def test_fit_leaves_no_file_with_data_or_draws(beta_bernoulli_model, monkeypatch):
    seen = {}
    backend = beta_bernoulli_model.backend
    original = type(backend).run

    def spy(self, handle, data, settings, workdir):
        seen["mode"] = stat.S_IMODE(os.stat(workdir).st_mode)
        seen["workdir"] = workdir
        out = original(self, handle, data, settings, workdir)
        seen["files"] = [p.name for p in Path(workdir).rglob("*")]
        return out

    monkeypatch.setattr(type(backend), "run", spy)
    # a distinctive "private" value made at run time, so no source file contains it
    marker = float(f"{1000 + np.random.default_rng().integers(10**8) / 10**5:.5f}")
    before = {p.name for p in Path(tempfile.gettempdir()).glob("pystanprivacy-fit-*")}
    sockets_before = set(Path(tempfile.gettempdir()).glob("httpstan_*.sock"))
    post = beta_bernoulli_model.sample(_data([marker], [4321.0]), chains=2, warmup=200, draws=100, seed=123)
    assert seen["mode"] == 0o700
    assert seen["files"], "the backend wrote its fit files into the private directory"
    assert not Path(seen["workdir"]).exists(), "private fit directory must be removed"
    after = {p.name for p in Path(tempfile.gettempdir()).glob("pystanprivacy-fit-*")}
    assert after <= before
    assert tempfile.gettempdir() != str(seen["workdir"]), "the temporary-directory redirect is undone"
    assert set(Path(tempfile.gettempdir()).glob("httpstan_*.sock")) <= sockets_before
    if beta_bernoulli_model.backend.name == "pystan":
        assert any(name.endswith(".sock") for name in seen["files"]), "httpstan's socket lives in the private dir"
    needle = repr(post.draws("p")[0, 0])[:12].encode()
    tmp = Path(tempfile.gettempdir())
    places = [pstan.cache_dir(), Path.home() / ".cache" / "httpstan"]
    places += [p for p in tmp.iterdir() if p.name.startswith(("pystanprivacy", "httpstan", "tmp"))]
    top_level_files = [p for p in tmp.iterdir() if p.is_file()]
    for root in places:
        if root.exists():
            assert _files_containing(root, repr(marker).encode()) == []
            assert _files_containing(root, needle) == []
    for f in top_level_files:
        try:
            content = f.read_bytes()
        except OSError:
            continue
        assert repr(marker).encode() not in content and needle not in content, f


def test_fit_directory_removed_on_error(beta_bernoulli_model, monkeypatch):
    backend = beta_bernoulli_model.backend
    seen = {}

    def boom(self, handle, data, settings, workdir):
        (Path(workdir) / "data.json").write_text("secret")
        seen["workdir"] = workdir
        raise KeyboardInterrupt

    monkeypatch.setattr(type(backend), "run", boom)
    with pytest.raises(KeyboardInterrupt):
        beta_bernoulli_model.sample(_data([1.0], [1.0]), seed=1)
    assert not Path(seen["workdir"]).exists()


def test_second_construction_uses_the_cache(beta_bernoulli_model):
    again = pstan.StanModel("foulds2016/beta_bernoulli", backend=beta_bernoulli_model.backend)
    assert again.was_cached
    assert again.key == beta_bernoulli_model.key
    assert pstan.StanModel.get("foulds2016/beta_bernoulli") is pstan.StanModel.get("foulds2016/beta_bernoulli")


def test_compile_models_reports_cached_models(beta_bernoulli_model, beta_bernoulli_ops_model):
    out = pstan.compile_models(["foulds2016/beta_bernoulli", "foulds2016/beta_bernoulli_ops"], jobs=2)
    assert [(name, cached, err) for name, cached, _, err in out] == [
        ("foulds2016/beta_bernoulli", True, None),
        ("foulds2016/beta_bernoulli_ops", True, None),
    ]
    with pytest.raises(ValueError, match="unknown model"):
        pstan.compile_models(["foulds2016/nope"])


def test_model_name_does_not_depend_on_the_launcher(monkeypatch, tmp_path):
    """``python``, ``python3`` and a venv launcher of the same interpreter share one compiled
    model (httpstan's own name hashes the launcher path and compiled each separately)."""
    import sys

    from pystanprivacy.backends.pystan_backend import model_name

    name = model_name("parameters { real x; } model { x ~ std_normal(); }")
    link = tmp_path / "python-alias"
    link.symlink_to(os.path.realpath(sys.executable))
    monkeypatch.setattr(sys, "executable", str(link))
    assert model_name("parameters { real x; } model { x ~ std_normal(); }") == name
    assert model_name("parameters { real y; } model { y ~ std_normal(); }") != name


def test_interrupted_build_leaves_no_half_built_model(tmp_path, monkeypatch):
    """Models are built in a staging folder and renamed into place: a build that fails
    half-way leaves neither a model folder nor a staging folder, and a later build
    succeeds. (The C++ build is replaced by a stand-in; stanc runs for real.)"""
    import httpstan.models

    from pystanprivacy.backends.pystan_backend import PystanBackend, _has_module, model_name

    program = "parameters { real x; } model { x ~ std_normal(); }"
    backend = PystanBackend()
    root = backend._root(tmp_path)
    final = root / "models" / model_name(program).split("/")[1]

    async def broken_build(program_code, extra_compile_args=None):
        import httpstan.cache

        d = httpstan.cache.model_directory(model_name(program_code))
        (d / "half-written.o").write_bytes(b"")
        raise MemoryError("compiler killed")

    async def fake_build(program_code, extra_compile_args=None):
        import httpstan.cache

        (httpstan.cache.model_directory(model_name(program_code)) / "stan_services_x.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
        return "built"

    monkeypatch.setattr(httpstan.models, "build_services_extension_module", broken_build)
    with pytest.raises(MemoryError):
        backend.compile(program, "key", tmp_path)
    assert not final.exists() and not list(root.glob("staging-*"))
    assert not backend.is_compiled(program, "key", tmp_path)
    final.mkdir(parents=True)
    (final / "leftover.cpp").write_text("// from a build killed by an older version")
    monkeypatch.setattr(httpstan.models, "build_services_extension_module", fake_build)
    assert backend.compile(program, "key", tmp_path) == (program, root)
    assert _has_module(final) and not (final / "leftover.cpp").exists()
    assert backend.is_compiled(program, "key", tmp_path) and not list(root.glob("staging-*"))
    with pytest.raises(ValueError, match="failed to compile"):
        backend.compile("parameters { real x } model { }", "key", tmp_path)
