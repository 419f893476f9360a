"""The pystan backend's chain runner (issue 54 item 1): the backend calls httpstan's compiled
services wrappers in its own chain pool and reads their messages itself, instead of going
through pystan's ``stan.build(...).sample(...)`` and httpstan's HTTP API. Its draws must be
the same doubles as stock pystan's for the same seed and settings, sampler columns included,
and Stan's failures must come back with pystan's messages.

Each reference run here is stock pystan itself (``stan.build`` + ``sample``/``fixed_param``,
the backend's former path) on the same compiled module, inside the backend's private request
context (model cache, private API socket); the comparison undoes nothing of the new code: it
takes pystan's ``Fit[name]`` arrays, shape ``(*dims, draws * chains)`` with index
``draw * chains + chain``, and lays the backend's ``(chains, draws, *dims)`` arrays out the same
way by a transpose and a reshape."""

from __future__ import annotations

import json
import math
import os
import socket
import stat
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from pystanprivacy.sampling import stan as pstan
from pystanprivacy.sampling.backends import pystan_backend as pb
from pystanprivacy.sampling.backends.base import SAMPLER_COLUMNS, SamplerSettings

STAN_DIR = Path(__file__).parents[1] / "stan"
BB_DATA = {"R": 1, "successes": [6.0], "failures": [14.0], "prior_alpha": 1.0, "prior_beta": 1.0}


@pytest.fixture(scope="module", autouse=True)
def _pystan_only():
    from pystanprivacy.sampling.backends import select_backend

    if select_backend().name != "pystan":
        pytest.skip("the pystan backend's chain runner")


def _nb_hmm_data() -> dict:
    """A tiny naive-Bayes HMM data set (2 regions x 4 steps, features of 3 and 2 values)."""
    from pystanprivacy.models.foulds2016_hmm import CountLayout, NaiveBayesHMM

    rng = np.random.default_rng(11)
    n = rng.integers(0, 4, size=(2, 4))
    blocks = [
        np.stack([[rng.multinomial(n[r, t], np.full(s, 1 / s)) for t in range(4)] for r in range(2)]) for s in (3, 2)
    ]
    layout, exact = CountLayout.from_counts(np.concatenate(blocks, axis=2), (3, 2))
    return NaiveBayesHMM(3).data(exact, layout, None)


def _functions_data() -> dict:
    """bernstein2018_functions.stan with no normal-Laplace and no truncated-exponential points:
    generated quantities of zero length next to a non-empty one."""
    return json.loads((STAN_DIR / "bernstein2018_functions_empty.json").read_text())


def _stock_pystan(model, data: dict, settings: SamplerSettings, workdir: Path):
    """The same fit through stock pystan (``stan.build`` and ``sample`` / ``fixed_param``)."""
    import stan

    program, root = model._handle
    kwargs = {"num_chains": settings.chains, "num_samples": settings.draws, "num_thin": settings.thin}
    if not settings.fixed_param:
        kwargs.update(num_warmup=settings.warmup, delta=settings.adapt_delta, max_depth=settings.max_treedepth)
    if settings.init is not None:
        kwargs["init"] = [dict(i) for i in settings.init]
    with pb._RUN_LOCK:
        pb._ensure_chain_pool(2)
        with pb._private_request(root, workdir):
            posterior = stan.build(program, data=dict(data), random_seed=int(settings.seed))
            run = posterior.fixed_param if settings.fixed_param else posterior.sample
            return run(**kwargs)


def _in_pystan_layout(arr: np.ndarray) -> np.ndarray:
    """``(chains, draws, *dims)`` -> ``(*dims, draws * chains)`` with index ``draw * chains + chain``."""
    chains, draws = arr.shape[:2]
    moved = np.moveaxis(arr, [0, 1], [-1, -2])  # (*dims, draws, chains)
    return moved.reshape(*arr.shape[2:], draws * chains)


def _large_functions_data() -> dict:
    """bernstein2018_functions.stan at 3000 normal-Laplace points: draws of about 60 kB each, so
    a run streams megabytes through the chain's socket (many reads, lines split between them)."""
    rng = np.random.default_rng(3)
    n = 3000
    return {
        **_functions_data(),
        "N_nl": n,
        "nl_y": rng.normal(size=n) * 10,
        "nl_mu": rng.normal(size=n),
        "nl_sigma": rng.uniform(0.1, 5, size=n),
        "nl_b": rng.uniform(0.1, 5, size=n),
    }


CASES = {
    "NUTS, 3 chains": (
        "foulds2016/beta_bernoulli",
        lambda: BB_DATA,
        SamplerSettings(chains=3, warmup=100, draws=50, seed=11),
    ),
    "NUTS, inits given, thin 3": (
        "foulds2016/beta_bernoulli",
        lambda: BB_DATA,
        SamplerSettings(chains=2, warmup=50, draws=20, thin=3, seed=12, init=({"p": [0.2]}, {"p": [0.9]})),
    ),
    "NUTS, matrices, arrays and integer outputs": (
        "foulds2016/nb_hmm",
        _nb_hmm_data,
        SamplerSettings(chains=2, warmup=30, draws=10, seed=13, adapt_delta=0.9, max_treedepth=6),
    ),
    "fixed_param, integer outputs": (
        "foulds2016/nb_hmm",
        _nb_hmm_data,
        SamplerSettings(chains=1, warmup=0, draws=3, seed=14, fixed_param=True),
    ),
    "fixed_param, zero-length outputs": (
        str(STAN_DIR / "bernstein2018_functions.stan"),
        _functions_data,
        SamplerSettings(chains=1, warmup=0, draws=3, seed=15, fixed_param=True),
    ),
    "fixed_param, megabytes of draws": (
        str(STAN_DIR / "bernstein2018_functions.stan"),
        _large_functions_data,
        SamplerSettings(chains=1, warmup=0, draws=40, seed=16, fixed_param=True),
    ),
}


@pytest.fixture(scope="module")
def models():
    return {name: pstan.StanModel.get(name) for name in dict.fromkeys(c[0] for c in CASES.values())}


@pytest.mark.parametrize("case", list(CASES))
def test_draws_are_stock_pystans_bit_for_bit(models, case, tmp_path):
    name, make_data, settings = CASES[case]
    model = models[name]
    data = pstan._check_data(model.name, make_data())
    (tmp_path / "new").mkdir(mode=0o700)
    (tmp_path / "stock").mkdir(mode=0o700)
    raw = model.backend.run(model._handle, data, settings, tmp_path / "new")
    fit = _stock_pystan(model, data, settings, tmp_path / "stock")

    assert list(raw.variables) == list(fit.param_names)
    for var, dims in zip(fit.param_names, fit.dims):
        expected = np.asarray(fit[var])
        got = raw.variables[var]
        kept = -(-settings.draws // settings.thin)
        assert got.shape == (settings.chains, kept, *dims), var
        assert np.array_equal(_in_pystan_layout(got), expected.reshape(*dims, kept * settings.chains)), var
    stock_sampler = [c for c in fit.sample_and_sampler_param_names]
    assert set(stock_sampler) <= set(SAMPLER_COLUMNS)  # every column pystan has is compared below
    assert list(raw.sampler) == stock_sampler
    for col in stock_sampler:
        assert np.array_equal(_in_pystan_layout(raw.sampler[col]), np.asarray(fit[col]).reshape(-1)), col
    if not settings.fixed_param:
        assert len(stock_sampler) == 7 and np.unique(raw.sampler["stepsize__"]).size == settings.chains


def test_the_same_seed_gives_the_same_draws_and_another_seed_others(models, tmp_path):
    model = models["foulds2016/beta_bernoulli"]
    runs = [model.sample(BB_DATA, chains=2, warmup=50, draws=30, seed=s).draws("p") for s in (5, 5, 6)]
    assert np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_a_model_keeps_its_own_code_after_pystan_reloads_another(models, monkeypatch):
    """CPython keeps one single-phase extension module per (file, name), and all of httpstan's
    services modules are named ``stan_services``: importing a file again that this process has
    loaded before refills whatever module ``sys.modules["stan_services"]`` holds with that file's
    functions. ``log_density`` goes through pystan, whose loader imports the module anew on every
    call; the fits that follow must still run their own model's code, with the same draws."""
    bb, functions = models["foulds2016/beta_bernoulli"], models[str(STAN_DIR / "bernstein2018_functions.stan")]
    monkeypatch.setattr(pb, "_MODULES", {})  # this test's loads are first loads, whatever ran before

    def fit_functions():
        return functions.fixed_param(_functions_data(), draws=3, seed=15).draws("mn_lpdf")

    first_bb = bb.sample(BB_DATA, chains=2, warmup=20, draws=10, seed=5).draws("p")
    first = fit_functions()  # its module is loaded last: before the fix, sys.modules held it
    lp, _ = bb.log_density(BB_DATA, [{"p": [0.3]}, {"p": [0.6]}])  # pystan imports beta_bernoulli's module again
    # Beta(7, 15) on the unconstrained scale (log Jacobian log p(1 - p)), up to a constant
    log_kernel = [6 * math.log(p) + 14 * math.log1p(-p) + math.log(p * (1 - p)) for p in (0.3, 0.6)]
    assert lp[0] - lp[1] == pytest.approx(log_kernel[0] - log_kernel[1], rel=1e-12)
    np.testing.assert_array_equal(fit_functions(), first)
    np.testing.assert_array_equal(bb.sample(BB_DATA, chains=2, warmup=20, draws=10, seed=5).draws("p"), first_bb)
    held = sys.modules.get("stan_services")
    assert held is None or all(vars(held) is not vars(m) for m in pb._MODULES.values())


HOSTILE = STAN_DIR / "hostile_reject.stan"


@pytest.mark.parametrize(
    "mode, settings",
    [
        (1, SamplerSettings(chains=2, warmup=10, draws=10, seed=1)),  # transformed data rejects
        (2, SamplerSettings(chains=2, warmup=10, draws=10, seed=1)),  # every initial value rejected
        (2, SamplerSettings(chains=1, warmup=0, draws=2, seed=1, fixed_param=True)),
    ],
)
def test_stan_failures_come_back_with_pystans_message(mode, settings, tmp_path):
    """A rejection comes back as the ``RuntimeError`` pystan raised, with its message (without the
    traceback of httpstan's own frames that pystan appended)."""
    model = pstan.StanModel.get(str(HOSTILE))
    data = {"mode": mode, "N": 2, "x": [3.25, 1.5]}
    (tmp_path / "new").mkdir(mode=0o700)
    (tmp_path / "stock").mkdir(mode=0o700)
    with pytest.raises(RuntimeError) as new:
        model.backend.run(model._handle, data, settings, tmp_path / "new")
    with pytest.raises(RuntimeError) as stock:
        _stock_pystan(model, data, settings, tmp_path / "stock")
    assert type(new.value) is type(stock.value) is RuntimeError
    assert str(new.value).startswith(("Error calling get_param_names", "Exception during call to services function"))
    assert str(stock.value).startswith(str(new.value)), (str(new.value), str(stock.value))
    assert "rejected x = [3.25,1.5]" in str(new.value)  # Stan's own message (redacted later by StanModel)


def test_a_fit_binds_only_private_unix_sockets_and_leaves_nothing(models, tmp_path, monkeypatch):
    """Every socket a fit binds is a Unix socket in a 0700 folder made for the fit, no TCP or UDP
    socket is bound or connected, and nothing of the fit is left in the temporary directory."""
    binds, inet = [], []
    original_bind, original_connect = socket.socket.bind, socket.socket.connect

    def recording_bind(self, address):
        if self.family == socket.AF_UNIX:
            folder = Path(address).parent
            binds.append((address, stat.S_IMODE(folder.stat().st_mode), folder))
        else:
            inet.append(address)
        return original_bind(self, address)

    def recording_connect(self, address):
        if self.family != socket.AF_UNIX:
            inet.append(address)
        return original_connect(self, address)

    monkeypatch.setattr(socket.socket, "bind", recording_bind)
    monkeypatch.setattr(socket.socket, "connect", recording_connect)
    short = Path(tempfile.mkdtemp(dir="/tmp"))  # short enough for the sockets: they go in the fit's folder
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    try:
        post = models["foulds2016/beta_bernoulli"].sample(BB_DATA, chains=3, warmup=50, draws=20, seed=3)
        left = list(short.iterdir())
    finally:
        import shutil

        shutil.rmtree(short)
    assert post.draws("p").shape == (60, 1)
    assert inet == []
    assert len(binds) == 3  # one listener per chain
    for address, mode, folder in binds:
        assert mode == 0o700 and folder.parent == short, (address, mode)
        assert folder.name.startswith(pstan._workdir_prefix())
        assert Path(address).name.startswith(pb.HTTPSTAN_SOCKET_PREFIX)
    assert left == []
    assert os.getpid() == pb._CHAIN_POOL["pid"]  # the pool of this process ran the chains, and stays


def test_draw_lines_are_picked_out_of_the_sample_writers_messages():
    """The sample writer's stream: adaptation messages, the draws, timing messages; a message
    among the draws (never seen from Stan, but not assumed away) is left out too."""
    adapt = b'{"version":1,"topic":"sample","values":["Adaptation terminated"]}'
    draw = [b'{"version":1,"topic":"sample","values":{"lp__":-%d.5,"theta":0.%d}}' % (i, i) for i in (1, 2, 3)]
    note = b'{"version":1,"topic":"sample","values":["a note"]}'
    timing = b'{"version":1,"topic":"sample","values":[" Elapsed Time: 0.031 seconds (Warm-up)"]}'
    block = b"\n".join([adapt, *draw, timing]) + b"\n"
    assert pb._draw_lines(block) == b",".join(draw)
    mixed = b"\n".join([adapt, draw[0], note, draw[1], draw[2], timing]) + b"\n"
    assert pb._draw_lines(mixed) == b",".join(draw)
    assert pb._draw_lines(b"\n".join([adapt, timing]) + b"\n") == b""
    header, rows = pb._draw_matrix([b"", mixed, b'{"version":1,"topic":"logger","values":["info:x"]}\n'])
    assert header == ["lp__", "theta"]
    assert np.array_equal(rows, [[-1.5, 0.1], [-2.5, 0.2], [-3.5, 0.3]])
    nonfinite = draw[0].replace(b"-1.5", b"NaN") + b"\n" + draw[1].replace(b"0.2", b"-Infinity") + b"\n"
    _, rows = pb._draw_matrix([nonfinite])  # JSON's NaN/Infinity, which simdjson refuses
    assert np.isnan(rows[0, 0]) and rows[1, 1] == -np.inf and rows[0, 1] == 0.1
