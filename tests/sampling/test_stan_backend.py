"""The Stan layer: model registry, stanc checks, data validation before Stan, backend
selection, private temporary files, draws layout and diagnostics."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pystanprivacy.sampling import stan as pstan
from pystanprivacy.sampling.backends import ENV_VAR, select_backend
from pystanprivacy.sampling.backends.base import reshape_column_major
from pystanprivacy.sampling.backends.cmdstanpy_backend import CmdStanPyBackend

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
    model.write_text(
        "functions {\n#include twice.stanfunctions\n}\nparameters { real y; }\nmodel { y ~ normal(twice(1), 1); }\n"
    )
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
    from pystanprivacy.sampling.backends import pystan_backend

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
    stuck = np.stack([np.full((200, 1), 0.2), np.full((200, 1), 0.8)]) + np.random.default_rng(0).normal(
        0, 1e-3, (2, 200, 1)
    )
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


#: when the running test began (``time.time()``, set by ``_test_start``): a file that holds a value
#: made during the test was written during it, so the scans below read only files modified since
_TEST_START = {"t": 0.0}
#: seconds of slack for file systems with coarse modification times (FAT: 2 s)
MTIME_SLACK_S = 2.0


@pytest.fixture(autouse=True)
def _test_start():
    _TEST_START["t"] = time.time()


def _files_containing(root: Path, *needles: bytes, newer_than: float = 0.0) -> list[Path]:
    """Files under ``root`` (below 50 MB) that hold any of ``needles``, among those modified at or
    after ``newer_than`` (a ``time.time()``; the default reads every file)."""
    hits = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            try:
                info = p.stat()
                if stat.S_ISREG(info.st_mode) and info.st_size < 50_000_000 and info.st_mtime >= newer_than:
                    content = p.read_bytes()
                    if any(needle in content for needle in needles):
                        hits.append(p)
            except OSError:
                continue
    return hits


def _leftovers(needles: list[bytes]) -> list[Path]:
    """Files that hold any of ``needles``: under the model caches, under the folders of the
    temporary directory pystanprivacy, httpstan or tempfile make (not this checkout, which
    CI clones into the temporary directory) and at the top level of the temporary directory.
    The needles are values made during the running test, so only files modified since it began
    (less :data:`MTIME_SLACK_S`) can hold them; the others (the cache's compiled models, ~1.2 GB,
    read in full by each call before) are not read."""
    since = _TEST_START["t"] - MTIME_SLACK_S
    tmp = Path(tempfile.gettempdir())
    checkout = Path(__file__).resolve().parents[2]
    places = [pstan.cache_dir(), Path.home() / ".cache" / "httpstan"]
    places += [
        p
        for p in tmp.iterdir()
        if p.is_dir()
        and p.name.startswith(("pystanprivacy", "httpstan", "tmp"))
        and p.resolve() not in (checkout, *checkout.parents)
    ]
    hits = []
    for root in places:
        if root.exists():
            hits += _files_containing(root, *needles, newer_than=since)
    for f in tmp.iterdir():
        try:
            info = f.stat()
            content = f.read_bytes() if stat.S_ISREG(info.st_mode) and info.st_mtime >= since else b""
        except OSError:
            continue
        hits += [f for needle in needles if needle in content]
    return hits


def test_the_leftover_scan_reads_files_written_during_the_test_only(tmp_path):
    """The scan can fail: a file holding the needle, written during the test in a folder of the
    temporary directory that the scan covers, is found; the same file dated before the test began
    is not read (what no fit of the test can have written)."""
    folder = Path(tempfile.mkdtemp(prefix="pystanprivacy-scan-check-"))
    try:
        needle = repr(_marker()).encode()
        leftover = folder / "left.json"
        leftover.write_bytes(b"[" + needle + b"]")
        assert _leftovers([needle]) == [leftover]
        old = _TEST_START["t"] - MTIME_SLACK_S - 60
        os.utime(leftover, (old, old))
        assert _leftovers([needle]) == []
    finally:
        shutil.rmtree(folder)


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
    # the full shortest-round-trip repr of a draw (a Python float, so numpy 2's
    # "np.float64(" prefix cannot match source text by accident)
    needle = repr(float(post.draws("p")[0, 0])).encode()
    assert _leftovers([repr(marker).encode(), needle]) == []


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
    # test-only programs by path (the session's precompile passes tests/stan/*.stan)
    hostile = str(Path(__file__).parents[1] / "stan" / "hostile_reject.stan")
    pstan.StanModel.get(hostile)
    assert [(n, c, e) for n, c, _, e in pstan.compile_models([hostile], jobs=1)] == [(hostile, True, None)]
    with pytest.raises(FileNotFoundError, match="no Stan program"):
        pstan.compile_models([str(Path(__file__).parents[1] / "stan" / "nope.stan")])


def test_model_name_does_not_depend_on_the_launcher(monkeypatch, tmp_path):
    """``python``, ``python3`` and a venv launcher of the same interpreter share one compiled
    model (httpstan's own name hashes the launcher path and compiled each separately)."""
    import sys

    from pystanprivacy.sampling.backends.pystan_backend import model_name

    name = model_name("parameters { real x; } model { x ~ std_normal(); }")
    link = tmp_path / "python-alias"
    link.symlink_to(os.path.realpath(sys.executable))
    monkeypatch.setattr(sys, "executable", str(link))
    assert model_name("parameters { real x; } model { x ~ std_normal(); }") == name
    assert model_name("parameters { real y; } model { y ~ std_normal(); }") != name


def test_model_name_depends_on_the_httpstan_installation(monkeypatch, tmp_path):
    """Two venvs of one interpreter get different compiled models: the module's run path
    points into the httpstan installation that built it (``.../httpstan/lib``, where
    ``libtbb.so.2`` lives), so a module shared across venvs stops loading once the venv that
    built it is deleted. A symlink to the same installation keeps the name."""
    import httpstan

    from pystanprivacy.sampling.backends.pystan_backend import model_name

    program = "parameters { real x; } model { x ~ std_normal(); }"
    name = model_name(program)
    real_dir = os.path.realpath(os.path.dirname(httpstan.__file__))
    alias = tmp_path / "alias-of-httpstan"
    alias.symlink_to(real_dir)
    monkeypatch.setattr(httpstan, "__file__", str(alias / "__init__.py"))
    assert model_name(program) == name
    other = tmp_path / "other-venv" / "httpstan"
    other.mkdir(parents=True)
    monkeypatch.setattr(httpstan, "__file__", str(other / "__init__.py"))
    assert model_name(program) != name


def test_cached_models_link_this_installation_s_tbb(beta_bernoulli_model):
    """The run path of a compiled model in the cache names this installation's httpstan
    ``lib`` (the folder :func:`model_name` hashes), which holds the ``libtbb.so.2`` it needs."""
    if beta_bernoulli_model.backend.name != "pystan":
        pytest.skip("httpstan's compiled modules")
    import httpstan

    from pystanprivacy.sampling.backends.pystan_backend import PystanBackend, model_name

    root = PystanBackend()._root(pstan.cache_dir())
    folder = root / "models" / model_name(beta_bernoulli_model.program).split("/")[1]
    (module,) = [p for p in folder.iterdir() if p.name.endswith(".so")]
    lib = Path(os.path.realpath(os.path.dirname(httpstan.__file__))) / "lib"
    assert (lib / "libtbb.so.2").exists()
    assert str(lib).encode() in module.read_bytes()


def test_interrupted_build_leaves_no_half_built_model(tmp_path, monkeypatch):
    """Models are built in a staging folder and renamed into place: a build that fails
    half-way leaves neither a model folder nor a staging folder, and a later build
    succeeds. (The C++ build is replaced by a stand-in; stanc runs for real.)"""
    import httpstan.models

    from pystanprivacy.sampling.backends.pystan_backend import PystanBackend, _has_module, model_name

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

        (
            httpstan.cache.model_directory(model_name(program_code)) / "stan_services_x.cpython-311-x86_64-linux-gnu.so"
        ).write_bytes(b"")
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


def _without_tmpdir(cpp: str) -> str:
    import re

    return re.sub(r"/httpstan_[^/]+/", "/TMP/", cpp)


def test_stanc_is_httpstan_s_translation_without_its_1s_limit(tmp_path, monkeypatch):
    """httpstan gives stanc 1 s, which a loaded machine exceeds; the backend's ``stanc`` runs
    the same binary with the same arguments (same C++ and warnings, but for the temporary
    folder's name) under STANC_TIMEOUT_S, also for httpstan's own call inside the build."""
    import subprocess

    import httpstan.compile
    import httpstan.models

    from pystanprivacy.sampling.backends import pystan_backend as pb

    program = "data { real y; } parameters { real mu; } model { y ~ normal(mu, 1); }"
    ours, theirs = pb.stanc(program, "model_t"), httpstan.compile.compile(program, "model_t")
    assert _without_tmpdir(ours[0]) == _without_tmpdir(theirs[0]) and ours[1] == theirs[1]
    with pytest.raises(ValueError, match="Syntax error"):
        pb.stanc("parameters { real mu } ", "model_t")

    # a stanc that takes 1.5 s: httpstan's limit would fail it, ours does not
    slow = tmp_path / "stanc"
    slow.write_text(f'#!/bin/sh\nsleep 1.5\nexec "{pb._stanc_binary()}" "$@"\n')
    slow.chmod(0o700)
    monkeypatch.setattr(pb, "_stanc_binary", lambda: slow)
    assert _without_tmpdir(pb.stanc(program, "model_t")[0]) == _without_tmpdir(theirs[0])
    monkeypatch.setattr(pb, "STANC_TIMEOUT_S", 0.5)
    with pytest.raises(RuntimeError, match=r"within STANC_TIMEOUT_S=0.5 s"):
        pb.stanc(program, "model_t")
    monkeypatch.undo()

    # every stanc call of a build, httpstan's included, gets STANC_TIMEOUT_S; httpstan's
    # function is put back afterwards
    timeouts, real_run = [], subprocess.run

    def recording_run(*args, **kwargs):
        timeouts.append(kwargs.get("timeout"))
        return real_run(*args, **kwargs)

    async def build_calling_stanc(program_code, extra_compile_args=None):
        import httpstan.cache

        httpstan.compile.compile(program_code, "model_t")  # as httpstan's build does
        (
            httpstan.cache.model_directory(pb.model_name(program_code))
            / "stan_services_x.cpython-311-x86_64-linux-gnu.so"
        ).write_bytes(b"")
        return "built"

    original = httpstan.compile.compile
    monkeypatch.setattr(subprocess, "run", recording_run)
    monkeypatch.setattr(httpstan.models, "build_services_extension_module", build_calling_stanc)
    pb.PystanBackend().compile(program, "key", tmp_path / "cache")
    assert timeouts == [pb.STANC_TIMEOUT_S, pb.STANC_TIMEOUT_S]
    assert httpstan.compile.compile is original


# --------------------------------------------------------------------------- hostile runs
# Stan's own messages print data values. tests/stan/hostile_reject.stan rejects (or prints)
# its data vector x on request; these tests check that no exception, log record, warning,
# terminal output or file made by a failing, interrupted or killed fit carries a data value.
HOSTILE = Path(__file__).parents[1] / "stan" / "hostile_reject.stan"


@pytest.fixture(scope="module")
def hostile_model():
    return pstan.StanModel.get(str(HOSTILE))


def _marker() -> float:
    """A "private" value made at run time (so no source file holds it) that Stan prints in
    full (6 significant digits, e.g. 73519.3) and JSON writes the same way."""
    rng = np.random.default_rng()
    return float(f"{rng.integers(10_000, 100_000)}.{rng.integers(1, 10)}")


def _hostile_data(marker: float, mode: int) -> dict:
    return {"mode": mode, "N": 2, "x": [marker, 1.5]}


@pytest.mark.parametrize("mode, where", [(1, "transformed data rejected"), (2, "model rejected")])
def test_stan_rejection_message_is_redacted_everywhere(hostile_model, mode, where, caplog, capfd, recwarn):
    import logging
    import traceback

    marker = _marker()
    needle = repr(marker)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(pstan.StanRunError, match=where) as info:
        hostile_model.sample(_hostile_data(marker, mode), chains=1, warmup=20, draws=20, seed=1)
    exc = info.value
    assert "<num>" in str(exc), "Stan's message is kept with its numbers redacted"
    assert exc.__cause__ is None and exc.__context__ is None, "the raw exception is not chained"
    shown = "".join(traceback.format_exception(exc))
    out, err = capfd.readouterr()
    texts = {
        "exception": str(exc),
        "traceback": shown,
        "log": caplog.text,
        "stdout": out,
        "stderr": err,
        "warnings": " ".join(str(w.message) for w in recwarn),
    }
    for what, text in texts.items():
        assert needle not in text, f"the data value reached the {what}"
    assert any(r.name == "httpstan" for r in caplog.records) or hostile_model.backend.name != "pystan", (
        "httpstan logged the failure (redacted), so the log check above is not vacuous"
    )
    if mode == 2:  # a fit that failed after sampling started (one scan: the cache is large)
        assert _leftovers([needle.encode()]) == []


def test_stan_print_of_data_reaches_no_output(hostile_model, caplog, capfd):
    """``print`` in transformed data goes to the process's file descriptor 1 from C++ (not
    through sys.stdout); the pystan backend points it at /dev/null during the run."""
    import logging

    marker = _marker()
    caplog.set_level(logging.DEBUG)
    post = hostile_model.sample(_hostile_data(marker, 3), chains=1, warmup=50, draws=50, seed=2)
    assert post.draws("mu").size == 50
    out, err = capfd.readouterr()
    for text in (out, err, caplog.text):
        assert repr(marker) not in text
    print("still printing")  # the descriptors are restored after the run
    assert "still printing" in capfd.readouterr().out


def test_redact_keeps_structure_and_program_positions():
    text = (
        "Exception: model rejected x = [12345.7,-1.5e+06,nan,-inf,.25] (in 'm.stan', line 24, "
        "column 4 to column 37) Informational: 100 attempts"
    )
    assert pstan.redact(text) == (
        "Exception: model rejected x = [<num>,<num>,<num>,<num>,<num>] (in 'm.stan', line 24, "
        "column 4 to column 37) Informational: <num> attempts"
    )
    assert len(pstan.redact("1 " * 5000)) <= 2000
    # file paths keep their digits (PIDs, hashes); numbers around them, or after a slash
    # inside a word or with no letter, do not
    path = "/tmp/pystanprivacy-fit-5bce98f7-12577-1882946-ab_c/data.json"
    assert pstan.redact(f"cannot read '{path}': x = 12345.7, ratio/2.5 and /3.25 (~/cache/m-1.2/x)") == (
        f"cannot read '{path}': x = <num>, ratio/<num> and /<num> (~/cache/m-1.2/x)"
    )


def test_backend_logger_records_are_redacted(caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    for name in pstan.BACKEND_LOGGERS:
        logging.getLogger(name).warning("Chain 1 console: x = %s", [73519.3, 2.5])
    assert "73519" not in caplog.text and "2.5" not in caplog.text
    assert caplog.text.count("x = [<num>, <num>]") == len(pstan.BACKEND_LOGGERS)


class _RejectingCmdStanModel:
    """Stand-in for cmdstanpy.CmdStanModel whose run fails the way cmdstanpy reports a Stan
    rejection: console messages (with data values) in the exception and the log."""

    def sample(self, **kwargs):
        import logging

        x = __import__("json").loads(Path(kwargs["data"]).read_text())["x"]
        console = f"Exception: model rejected x = [{x[0]},{x[1]}] (in 'model.stan', line 27, column 4 to column 37)"
        (Path(kwargs["output_dir"]) / "model-stdout.txt").write_text(console)
        logging.getLogger("cmdstanpy").debug("Chain 1 console:\n%s", console)
        logging.getLogger("cmdstanpy").warning("Non-fatal error during sampling:\n%s", console)
        raise RuntimeError(f"Error during sampling:\n{console}\nCommand and output files:\n...")


def test_cmdstanpy_failure_is_redacted_and_leaves_nothing(caplog, tmp_path, monkeypatch):
    """The cmdstanpy backend code path (CmdStan is not installed here: its model object is a
    stand-in that fails like cmdstanpy does, after the backend wrote data.json)."""
    import logging

    from pystanprivacy.sampling.backends.cmdstanpy_backend import CmdStanPyBackend

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    model = object.__new__(pstan.StanModel)
    model.name, model.backend, model._handle = str(HOSTILE), CmdStanPyBackend(), _RejectingCmdStanModel()
    marker = _marker()
    caplog.set_level(logging.DEBUG)
    with pytest.raises(pstan.StanRunError, match=r"\(RuntimeError\): Error during sampling") as info:
        model.sample(_hostile_data(marker, 2), chains=1, warmup=10, draws=10, seed=1)
    assert repr(marker) not in str(info.value) and info.value.__context__ is None
    assert "line 27" in str(info.value)
    assert "cmdstanpy" in caplog.text and repr(marker) not in caplog.text
    assert list(tmp_path.iterdir()) == [], "data.json and the console file are removed"


def test_malformed_data_never_reaches_stan(hostile_model, monkeypatch):
    """Malformed data never reaches Stan (whose messages could print it)."""

    def never(*args, **kwargs):
        raise AssertionError("the backend was called")

    monkeypatch.setattr(type(hostile_model.backend), "run", never)
    bad = [
        ({"mode": 0, "N": 2, "x": [np.nan, 12345.6]}, ValueError, "NaN or infinite"),
        ({"mode": 0, "N": 2, "x": [np.inf, 1.0]}, ValueError, "NaN or infinite"),
        ({"mode": 0, "N": 2, "x": ["12345.6", "1"]}, TypeError, "must be numeric"),
        ({"mode": 0.5, "N": 2, "x": [1.0, 2.0]}, TypeError, "must hold integers"),
        ({"mode": 0, "N": 2, "x": [[1.0, 12345.6]]}, ValueError, "dimension"),
        ({"mode": 0, "N": 2}, ValueError, "missing x"),
        ({"mode": 0, "N": 2, "x": [[1.0], [12345.6, 2.0]]}, TypeError, "ragged"),
        ({"mode": 0, "N": 2.0**40, "x": [1.0, 12345.6]}, ValueError, "32-bit int range"),
        ({"mode": 0, "N": np.uint64(2**64 - 1), "x": [1.0, 12345.6]}, ValueError, "32-bit int range"),
        ({"mode": 1e300, "N": 2, "x": [1.0, 12345.6]}, ValueError, "32-bit int range"),
    ]
    for data, exc, match in bad:
        with pytest.raises(exc, match=match) as info:
            hostile_model.sample(data, chains=1, warmup=1, draws=1, seed=1)
        assert "12345" not in str(info.value)


# --------------------------------------------------------------------------- leftovers
_CHILD = r"""
import json, os, signal, sys
from pathlib import Path

# Ctrl-C in a terminal: Python's own SIGINT handler. A process started in the background by a
# non-interactive shell (``pytest ... &``) inherits SIGINT ignored, and Python keeps it ignored
# (as pystanprivacy does: it hooks SIGINT only where Python's handler is set).
signal.signal(signal.SIGINT, signal.default_int_handler)
from pystanprivacy.sampling.backends.pystan_backend import PystanBackend
from pystanprivacy.sampling.stan import StanModel

marker = float(sys.argv[1])
draws = int(sys.argv[3])
original = PystanBackend.run


def run(self, handle, data, settings, workdir):
    # the data in the private directory, as the cmdstanpy backend keeps it (data.json)
    (Path(workdir) / "data.json").write_text(json.dumps(dict(data)))
    print("workdir", workdir, flush=True)
    return original(self, handle, data, settings, workdir)


PystanBackend.run = run
model = StanModel.get(sys.argv[2])
model.sample({"mode": 0, "N": 2, "x": [marker, 1.5]}, chains=1, warmup=100, draws=draws, seed=1)
print("finished", flush=True)
"""


def _start_child(tmp_path, marker, draws, cache: Path | None = None):
    import subprocess
    import sys

    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), ENV_VAR: "pystan"}
    if cache is not None:
        env[pstan.CACHE_ENV_VAR] = str(cache)
    # its own process group, like a job in a terminal: httpstan samples in a forked worker
    # process, which a signal to the group reaches too
    proc = subprocess.Popen(
        [sys.executable, str(script), repr(marker), str(HOSTILE), str(draws)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    line = proc.stdout.readline()
    assert line.startswith("workdir "), proc.stderr.read()[-2000:]
    workdir = Path(line.split()[1])
    import time

    time.sleep(1.0)  # sampling is under way
    assert (workdir / "data.json").exists() and repr(marker).encode() in (workdir / "data.json").read_bytes()
    return proc, workdir


def test_interrupted_fit_leaves_nothing(hostile_model, monkeypatch):
    """KeyboardInterrupt in the middle of a real fit (raised inside the pystan backend once it
    has read every chain's messages: the draws and Stan's messages, with printed data values,
    exist by then): the interrupt reaches the caller and the private directory is gone.

    (A real Ctrl-C is tested with a child process in test_chain_processes_die_with_the_python_process.)"""
    from pystanprivacy.sampling.backends import pystan_backend as pb

    if hostile_model.backend.name != "pystan":
        pytest.skip("the interrupt is raised from inside the pystan backend")
    original = pb._gather_messages
    seen = {}
    marker = _marker()

    def interrupting(futures, listeners):
        messages = original(futures, listeners)
        folder = Path(listeners[0].getsockname()).parent
        seen["workdir"], seen["existed"] = folder, folder.is_dir()
        seen["printed"] = any(repr(marker).encode() in blob for chain in messages for blob in chain)
        raise KeyboardInterrupt

    monkeypatch.setattr(pb, "_gather_messages", interrupting)
    with pytest.raises(KeyboardInterrupt):
        hostile_model.sample(_hostile_data(marker, 3), chains=1, warmup=50, draws=50, seed=4)
    assert seen["existed"], "the chain's socket was in the private directory"
    assert seen["printed"], "Stan's messages, with the printed data value, had been read"
    assert seen["workdir"].name.startswith(pstan.WORKDIR_PREFIX) and not seen["workdir"].exists()
    assert _leftovers([repr(marker).encode()]) == []


def test_killed_fit_leftovers_are_removed_by_the_next_fit(hostile_model, tmp_path):
    """SIGKILL cannot be caught: the killed process's private directory (with the data)
    stays until the next fit of this user on this host removes it."""
    import signal

    marker = _marker()
    proc, workdir = _start_child(tmp_path, marker, 10**6)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert workdir.exists(), "the killed process could not clean up"
    assert _files_containing(workdir, repr(marker).encode()) != [], "the scan sees the leftover"
    hostile_model.sample(_hostile_data(1.0, 0), chains=1, warmup=10, draws=10, seed=3)
    assert not workdir.exists()
    assert _leftovers([repr(marker).encode()]) == []


def test_stale_workdir_removal_spares_live_and_foreign_directories(tmp_path):
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    prefix = pstan._workdir_prefix()
    host, pid, start = prefix[len(pstan.WORKDIR_PREFIX) :].split("-")[:3]
    mine = tmp_path / f"{prefix}abc"
    gone = tmp_path / f"{pstan.WORKDIR_PREFIX}{host}-{dead.pid}-{start}-abc"
    reused = tmp_path / f"{pstan.WORKDIR_PREFIX}{host}-{pid}-{int(start) + 1}-abc"  # PID reused
    other_host = tmp_path / f"{pstan.WORKDIR_PREFIX}00000000-{dead.pid}-{start}-abc"
    old_style = tmp_path / f"{pstan.WORKDIR_PREFIX}x1y2z3"
    for d in (mine, gone, reused, other_host, old_style):
        d.mkdir()
        (d / "data.json").write_text("{}")
    removed = pstan.remove_stale_workdirs(tmp_path)
    assert sorted(removed) == sorted([gone, reused] if start != "0" else [gone])
    assert mine.exists() and other_host.exists() and old_style.exists()


def test_a_build_removes_the_staging_folders_of_killed_builds(tmp_path):
    """A model build or a precompiled-header build (up to 1 GB) killed with SIGKILL leaves its
    staging folder in the model cache; the next build in that folder removes it, and only it."""
    import subprocess
    import sys

    from pystanprivacy.sampling.backends.workdirs import STAGING_PREFIX, staging_folder, workdir_prefix

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host, _, start = workdir_prefix(STAGING_PREFIX)[len(STAGING_PREFIX) :].split("-")[:3]
    live = tmp_path / f"{workdir_prefix(STAGING_PREFIX)}live0000"  # a build of this process
    gone = tmp_path / f"{STAGING_PREFIX}{host}-{dead.pid}-{start}-gone0000"
    other_host = tmp_path / f"{STAGING_PREFIX}00000000-{dead.pid}-{start}-host0000"
    fit_folder = tmp_path / f"{pstan.WORKDIR_PREFIX}{host}-{dead.pid}-{start}-fit00000"  # not a build's
    for d in (live, gone, other_host, fit_folder):
        (d / "models").mkdir(parents=True)
        (d / "models" / "stan_services.so").write_bytes(b"\0" * 64)
    new = staging_folder(tmp_path)
    assert not gone.exists()
    assert live.exists() and other_host.exists() and fit_folder.exists()
    assert new.parent == tmp_path and new.name.startswith(workdir_prefix(STAGING_PREFIX))
    assert stat.S_IMODE(new.stat().st_mode) == 0o700 and list(new.iterdir()) == []


# --------------------------------------------------------------------------- side channels
# Issue 17: no listener another local user can reach during a fit, no process or file that
# outlives a killed or terminated fit.
def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _tcp_listeners(pid: int) -> set[int]:
    """Ports of the TCP sockets in LISTEN state that process ``pid`` holds (``/proc``)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            link = os.readlink(fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                f = line.split()
                if f[3] == "0A" and f[9] in inodes:  # 0A: TCP_LISTEN
                    ports.add(int(f[1].rsplit(":", 1)[1], 16))
    return ports


def _cache_snapshot(root: Path | None = None) -> dict[str, tuple[int, int]]:
    root = pstan.cache_dir() if root is None else root
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file() and "locks" not in p.parts
    }


_CONNECT_AS_NOBODY = r"""
import os, socket, sys
os.setgid(65534); os.setuid(65534)
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except PermissionError:
    print("refused")
else:
    print("connected")
"""


@pytest.fixture
def pystan_only(hostile_model):
    if hostile_model.backend.name != "pystan":
        pytest.skip("pystan's HTTP server and chain pool")
    if not Path("/proc/self/task").is_dir():
        pytest.skip("needs Linux /proc")
    return hostile_model


def test_fit_opens_no_tcp_port_and_its_chain_socket_is_private(pystan_only, tmp_path):
    """While a fit samples, no TCP port of the fitting process accepts connections (pystan
    served httpstan's API on 127.0.0.1 to every local user; a fit now serves no API); the chain
    sends its draws to a Unix socket in the 0700 fit directory, which another user cannot
    connect to; the model cache is untouched by the fit (a private cache holding a copy of the
    compiled model, which no other test process compiles into)."""
    import shutil
    import subprocess
    import sys
    import time

    from pystanprivacy.sampling.backends.pystan_backend import model_name

    backend, model_id = pystan_only.backend, model_name(pystan_only.program).split("/")[1]
    cache = tmp_path / "cache"
    shutil.copytree(backend._root(pstan.cache_dir()) / "models" / model_id, backend._root(cache) / "models" / model_id)
    cache_before = _cache_snapshot(cache)
    assert cache_before, "the private cache holds the compiled model"
    proc, workdir = _start_child(tmp_path, _marker(), 10**6, cache=cache)
    try:
        api, ports, first_api, deadline = None, set(), None, time.monotonic() + 30
        while time.monotonic() < deadline:  # probe for 3 s of sampling after the socket is up
            ports |= _tcp_listeners(proc.pid)
            if first_api is None:
                api = next(workdir.glob("httpstan_*.sock"), None)
                first_api = time.monotonic() if api is not None else None
            if first_api is not None and time.monotonic() - first_api > 3:
                break
            time.sleep(0.05)
        ports |= _tcp_listeners(proc.pid)
        assert ports == set(), f"the fitting process listens on TCP port(s) {sorted(ports)}"
        assert not (workdir / "api.sock").exists(), "a fit serves no API"
        assert first_api is not None and stat.S_ISSOCK(api.stat().st_mode), "the chain's socket is private"
        assert stat.S_IMODE(workdir.stat().st_mode) == 0o700
        assert stat.S_IMODE(api.stat().st_mode) & 0o077 == 0
        assert _running(proc.pid), "the fit was still sampling while it was probed"
        if os.geteuid() == 0:  # a real second user: `nobody`
            out = subprocess.run(
                [sys.executable, "-c", _CONNECT_AS_NOBODY, str(api)], capture_output=True, text=True, timeout=60
            )
            assert out.stdout.strip() == "refused", out.stderr[-2000:]
    finally:
        os.killpg(proc.pid, 9)
        proc.wait(timeout=60)
    assert _cache_snapshot(cache) == cache_before
    pstan.remove_stale_workdirs()


@pytest.mark.parametrize("signame", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_chain_processes_die_with_the_python_process(pystan_only, tmp_path, signame):
    """Only the Python process is signalled (not its group): its chain processes, which hold
    the data, end within seconds instead of sampling on until their run ends. SIGTERM and
    Ctrl-C stop the fit at once (not when the chain ends) and remove its private directory;
    the process then ends by that signal, as it would have."""
    import signal
    import subprocess
    import time

    marker = _marker()
    proc, workdir = _start_child(tmp_path, marker, 10**7)
    try:
        chains = _children(proc.pid)
        assert chains and all(_running(c) for c in chains), "the chains sample in child processes"
        os.kill(proc.pid, getattr(signal, signame))
        try:
            rc = proc.wait(timeout=10)  # a chain of 10**7 draws runs for minutes
        except subprocess.TimeoutExpired:
            status = Path(f"/proc/{proc.pid}/status").read_text() if Path(f"/proc/{proc.pid}").exists() else ""
            signals = [line for line in status.splitlines() if line.startswith(("State", "Sig", "Shd", "Threads"))]
            running = [c for c in chains if _running(c)]
            pytest.fail(
                f"the process did not end within 10 s of {signame}: {signals}; "
                f"{len(running)} of {len(chains)} chain processes still run"
            )
        deadline = time.monotonic() + 10
        while any(_running(c) for c in chains) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_running(c) for c in chains), "a chain process outlived its parent"
        assert rc == -getattr(signal, signame), proc.stderr.read()[-2000:]
        if signame != "SIGKILL":
            assert not workdir.exists(), "the private directory is removed before the process ends"
            assert _leftovers([repr(marker).encode()]) == []
            assert "never retrieved" not in proc.stderr.read()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        proc.wait(timeout=60)
    pstan.remove_stale_workdirs()
    assert not workdir.exists()


def test_killed_process_leaves_no_temporary_folder_behind(tmp_path):
    """cmdstanpy makes a temporary folder when it is imported (to find out whether CmdStan is
    installed) and removes it only at a normal exit: it now lives in a per-process private
    folder, which a later fit removes once the process is gone."""
    import subprocess
    import sys

    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    code = (
        "import os, tempfile; from pystanprivacy.sampling.backends import select_backend; select_backend('auto'); "
        "import cmdstanpy; print(cmdstanpy._TMPDIR, flush=True); os.kill(os.getpid(), 9)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert out.returncode == -9 and out.stdout.strip(), out.stderr[-2000:]
    assert Path(out.stdout.strip()).parent.parent == tmp_path, "cmdstanpy's folder is inside a private one"
    assert left and all(name.startswith(pstan.WORKDIR_PREFIX) for name in left), left
    assert stat.S_IMODE((tmp_path / left[0]).stat().st_mode) == 0o700
    pstan.remove_stale_workdirs(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_api_server_is_refused_outside_a_fit():
    from pystanprivacy.sampling.backends import pystan_backend as pb

    with pytest.raises(RuntimeError, match="outside a pystanprivacy fit"):
        pb._server_socket_path()


def test_log_density_matches_the_closed_form_and_leaves_no_file(beta_bernoulli_model, monkeypatch):
    """p ~ Beta(a, b) on the logit scale: lp(u) = a log p + b log(1 - p) + const (the
    Jacobian p (1 - p) included), gradient a - (a + b) p, exactly (no Monte Carlo)."""
    backend = beta_bernoulli_model.backend
    original = type(backend).log_density
    seen = {}

    def spy(self, handle, data, params, workdir, **kwargs):
        seen["mode"] = stat.S_IMODE(os.stat(workdir).st_mode)
        seen["workdir"] = workdir
        return original(self, handle, data, params, workdir, **kwargs)

    monkeypatch.setattr(type(backend), "log_density", spy)
    data = _data([3.0, 10.5], [7.0, 2.0])
    a = np.array([3.0, 10.5]) + 1.0
    b = np.array([7.0, 2.0]) + 1.0
    points = [np.array([0.3, 0.8]), np.array([0.05, 0.5]), np.array([0.9, 0.999])]
    lp, grad = beta_bernoulli_model.log_density(data, [{"p": p} for p in points])
    assert lp.shape == (3,) and grad.shape == (3, 2)
    exact = [np.sum(a * np.log(p) + b * np.log1p(-p)) for p in points]
    np.testing.assert_allclose(lp - lp[0], np.subtract(exact, exact[0]), rtol=1e-10, atol=1e-10)
    for g, p in zip(grad, points):
        np.testing.assert_allclose(g, a - (a + b) * p, rtol=1e-10, atol=1e-12)
    assert seen["mode"] == 0o700 and not Path(seen["workdir"]).exists()
    one_lp, _one_grad = beta_bernoulli_model.log_density(data, {"p": points[0]})
    assert one_lp.shape == (1,) and one_lp[0] == pytest.approx(lp[0], abs=1e-12)
    # the same points given on the unconstrained (logit) scale
    u_lp, u_grad = beta_bernoulli_model.log_density(data, unconstrained=[np.log(p / (1 - p)) for p in points])
    np.testing.assert_allclose(u_lp, lp, rtol=1e-12)
    np.testing.assert_allclose(u_grad, grad, rtol=1e-9, atol=1e-12)
    assert _leftovers([repr(float(lp[1])).encode()]) == []


def test_log_density_rejects_bad_points(beta_bernoulli_model):
    data = _data([1.0], [1.0])
    with pytest.raises(TypeError, match="params must be a mapping"):
        beta_bernoulli_model.log_density(data, [0.5])
    with pytest.raises(TypeError, match="exactly one of params"):
        beta_bernoulli_model.log_density(data)
    with pytest.raises(TypeError, match="exactly one of params"):
        beta_bernoulli_model.log_density(data, {"p": [0.5]}, unconstrained=[0.0])
    with pytest.raises(ValueError, match=r"unconstrained must be a finite, non-empty array .* shape \(1, 1, 1\)"):
        beta_bernoulli_model.log_density(data, unconstrained=[[[0.0]]])
    with pytest.raises(pstan.StanRunError, match="evaluating model"):
        beta_bernoulli_model.log_density(data, unconstrained=[0.0, 1.0])  # two values for one parameter
    with pytest.raises(TypeError, match=r"params\['p'\] must be numbers"):
        beta_bernoulli_model.log_density(data, {"p": ["half"]})
    with pytest.raises(ValueError, match=r"params\['p'\] must be finite"):
        beta_bernoulli_model.log_density(data, {"p": [float("nan")]})
    with pytest.raises(pstan.StanRunError, match="evaluating model"):
        beta_bernoulli_model.log_density(data, {"p": [1.5]})  # outside (0, 1): Stan refuses
