"""The cmdstanpy backend's outputs without CmdStan: reading a program's declared outputs and
their sizes (CmdStan writes no CSV column for an output with no elements, so cmdstanpy drops
it; pystan returns it empty), splitting cmdstanpy's draws per chain, the arguments handed to
``CmdStanModel.sample`` and the 18 significant digits of its CSV. Each is checked against
something computed independently: ``stanc --info`` (httpstan's stanc), a pystan fit, values
written by hand."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from pystanprivacy.sampling import stan as pstan
from pystanprivacy.sampling.backends import base
from pystanprivacy.sampling.backends import cmdstanpy_backend as cb
from pystanprivacy.sampling.backends.base import SamplerSettings, set_parallel_chains

TESTS_STAN = Path(__file__).resolve().parents[1] / "stan"
PROGRAMS = pstan.available_models() + [str(p) for p in sorted(TESTS_STAN.glob("*.stan"))]


def _stanc_outputs(program_path: str) -> list[tuple[str, int]]:
    info = pstan.model_info(program_path)
    return [(name, v["dimensions"]) for block in cb.OUTPUT_BLOCKS for name, v in info.get(block, {}).items()]


@pytest.mark.parametrize("name", PROGRAMS, ids=lambda n: Path(n).stem)
def test_declared_outputs_are_those_stanc_lists_for_every_program(name):
    """Every library model and test program, flattened as the backend gets it and (where it has
    no #include) as written, with its comments: the same outputs, in the same order and with the
    same numbers of dimensions as ``stanc --info``."""
    want = _stanc_outputs(name)
    texts = [pstan.flatten(name)]
    raw = (Path(name) if name.endswith(".stan") else pstan.model_file(name)).read_text()
    if "#include" not in raw:
        texts.append(raw)
    for text in texts:
        got = cb.program_outputs(text)
        assert [(n, len(sizes)) for n, (_, sizes) in got.items()] == want


TRICKY = """
functions {
  real f(real x) { real theta = x; return theta; }   // a function's local is no output
}
data {
  int<lower=0> N;
  array[N] real y;
  matrix[N, 3] X;
}
transformed data {
  int M = N + 1;
}
parameters {
  real<lower=min(y), upper=max(y) + 1> mu;
  vector<lower=-1, upper=X[1, 1] + 2>[N] v, w;
  array[2, N] cov_matrix[3] S;
}
transformed parameters {
  cholesky_factor_cov[N, 2] L = rep_matrix(0, N, 2);
  cholesky_factor_cov[3] L3 = rep_matrix(0, 3, 3);
}
model {
  y ~ normal(mu, 1);
}
generated quantities {
  /* vector[7] commented_out; */
  // matrix[2, 2] also_commented;
  array[N %/% 2, M] int<lower=0> counts;
  for (i in 1:N) {
    vector[3] local = rep_vector(0, 3);
  }
  print("a // string ; real fake;");
  { real also_local = 1; }
  row_vector[(N * (N - 1)) / 2] pairs;
  array[3] simplex[N] theta;
  corr_matrix[size(y)] R = diag_matrix(rep_vector(1, size(y)));
  real last = 0;
}
"""


def test_declaration_forms(tmp_path):
    """Bounds with brackets and calls, several declarators, matrix types with one or two sizes,
    declarations after statements; comments, strings and local variables are not outputs."""
    path = tmp_path / "tricky.stan"
    path.write_text(TRICKY)
    got = cb.program_outputs(TRICKY)
    assert got == {
        "mu": ("real", []),
        "v": ("vector", ["N"]),
        "w": ("vector", ["N"]),
        "S": ("cov_matrix", ["2", "N", "3", "3"]),
        "L": ("cholesky_factor_cov", ["N", "2"]),
        "L3": ("cholesky_factor_cov", ["3", "3"]),
        "counts": ("int", ["N %/% 2", "M"]),
        "pairs": ("row_vector", ["( N * ( N - 1 ) ) / 2"]),
        "theta": ("simplex", ["3", "N"]),
        "R": ("corr_matrix", ["size ( y )", "size ( y )"]),
        "last": ("real", []),
    }
    assert [(n, len(s)) for n, (_, s) in got.items()] == _stanc_outputs(str(path))  # stanc agrees


@pytest.mark.parametrize(
    "expression, value",
    [
        ("N", 5),
        ("2", 2),
        ("N * (N - 1) / 2", 10),
        ("N %/% 2", 2),
        ("-7 / 2", -3),  # C++ truncation, not -4
        ("-7 %/% 2", -3),
        ("-7 % 3", -1),
        ("7 % -3", 1),
        ("size(y)", 4),
        ("num_elements(X)", 6),
        ("max(N, 9) - min(2, N)", 7),
        ("+N - -1", 6),
    ],
)
def test_sizes_evaluate_as_stan_does(expression, value):
    data = {"N": 5, "y": [1.0, 2.0, 3.0, 4.0], "X": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "r": 2.0}
    assert cb.evaluate_size(expression, data) == value


@pytest.mark.parametrize(
    "expression",
    [
        "M",  # transformed data
        "r",  # a real: not a size
        "N / 0",
        "N ? 1 : 2",
        "N ^ 2",
        "N ** 2",
        "size(X)",  # 2-d: the array's length or the matrix's elements
        "rows(X)",
        "__import__('os').getpid()",
        "N.bit_length()",
    ],
)
def test_sizes_that_the_data_cannot_tell_are_unknown(expression):
    assert cb.evaluate_size(expression, {"N": 5, "X": [[1.0, 2.0]], "r": 2.0}) is None


def test_shape_of_an_empty_output():
    data = {"N": 0, "K": 3, "P": 73519}
    assert cb.zero_size_shape("a", "vector", ["N"], data) == (0,)
    assert cb.zero_size_shape("b", "vector", ["N", "2"], data) == (0, 2)
    assert cb.zero_size_shape("c", "matrix", ["K", "N"], data) == (3, 0)
    # a size from transformed data, beside positive ones: it is the zero one
    assert cb.zero_size_shape("d", "real", ["K", "T"], data) == (3, 0)
    with pytest.raises(RuntimeError, match=r"shape of the zero-length output 'e' \(declared real\[N, T\]\).*T cannot"):
        cb.zero_size_shape("e", "real", ["N", "T"], data)  # T could be anything
    with pytest.raises(RuntimeError, match=r"cannot tell.*'f'.*T, U"):
        cb.zero_size_shape("f", "real", ["T", "U"], data)
    with pytest.raises(RuntimeError, match=r"no column for output 'g' \(declared vector\[P\]\)") as info:
        cb.zero_size_shape("g", "vector", ["P"], data)
    assert "73519" not in str(info.value)  # the declaration's text, never a data value
    with pytest.raises(RuntimeError, match="'h'.*complex_vector.*pystan"):
        cb.zero_size_shape("h", "complex_vector", ["N"], data)
    with pytest.raises(RuntimeError, match="negative size"):
        cb.zero_size_shape("i", "vector", ["N - 1"], data)


def test_zero_length_shapes_match_a_pystan_fit():
    """pystan returns every output, empty ones included, with the shape Stan declares: the
    shapes read from the program and the data are the same."""
    program = TESTS_STAN / "bernstein2018_functions.stan"
    # no normal-Laplace and no truncated-exponential points: empty outputs next to a non-empty one
    data = json.loads((TESTS_STAN / "bernstein2018_functions_empty.json").read_text())
    fit = pstan.StanModel.get(str(program), backend="pystan").fixed_param(data, draws=2, seed=1)
    outputs = cb.program_outputs(pstan.flatten(str(program)))
    empty = 0
    for name, (base_type, sizes) in outputs.items():
        want = fit.draws(name).shape[1:]
        if 0 in want:
            empty += 1
            assert cb.zero_size_shape(name, base_type, sizes, data) == want
        else:
            assert tuple(cb.evaluate_size(s, data) for s in sizes) == want
    assert empty == 3


def test_draws_are_split_per_chain_and_empty_outputs_filled_in():
    chains, draws = 3, 4
    # cmdstanpy's stan_variable: the chains one after the other, row k = chain k // draws
    flat = np.array(
        [[100 * (k // draws) + k % draws, -(100 * (k // draws) + k % draws)] for k in range(chains * draws)],
        dtype=float,
    )
    out = cb.assemble_outputs(
        ["a", "empty", "b"], {"b": flat, "a": flat[:, 0]}, {"empty": (0, 2)}, chains=chains, draws=draws
    )
    assert list(out) == ["a", "empty", "b"]
    assert out["b"].shape == (3, 4, 2) and out["b"][2, 1, 0] == 201.0 and out["b"][1, 3, 1] == -103.0
    assert out["a"][2, 3] == 203.0 and out["a"].flags.c_contiguous
    assert out["empty"].shape == (3, 4, 0, 2)
    with pytest.raises(RuntimeError, match="'a' has 12 draws, expected 2 x 4"):
        cb.assemble_outputs(["a"], {"a": flat[:, 0]}, {}, chains=2, draws=4)
    with pytest.raises(ValueError, match="'c' is missing and its shape"):
        cb.assemble_outputs(["c"], {}, {"c": (2,)}, chains=1, draws=1)


@pytest.fixture
def cap(monkeypatch):
    monkeypatch.delenv(base.PARALLEL_CHAINS_ENV, raising=False)
    yield set_parallel_chains
    set_parallel_chains(None)


def test_sample_arguments(cap):
    settings = SamplerSettings(chains=4, warmup=50, draws=70, seed=9, adapt_delta=0.95, max_treedepth=12, thin=2)
    cap(2)
    kw = cb.sample_arguments(settings, data_file="/d/data.json", output_dir="/d/output", inits=None)
    assert kw == dict(
        data="/d/data.json",
        chains=4,
        parallel_chains=2,
        iter_sampling=70,
        thin=2,
        seed=9,
        inits=None,
        output_dir="/d/output",
        show_progress=False,
        show_console=False,
        sig_figs=18,
        iter_warmup=50,
        adapt_delta=0.95,
        max_treedepth=12,
    )
    cap(8)  # never more processes than chains
    assert cb.sample_arguments(settings, data_file="x", output_dir="y", inits=None)["parallel_chains"] == 4
    fixed = cb.sample_arguments(
        SamplerSettings(chains=1, draws=3, fixed_param=True), data_file="x", output_dir="y", inits=["i.json"]
    )
    assert fixed["fixed_param"] is True and fixed["inits"] == ["i.json"] and fixed["parallel_chains"] == 1
    assert not {"iter_warmup", "adapt_delta", "max_treedepth"} & set(fixed)


def _bits(a: np.ndarray) -> list[bytes]:
    return [struct.pack("<d", x) for x in a.ravel()]


def test_18_significant_digits_read_back_as_the_same_doubles():
    """What CmdStan writes with ``sig_figs=18`` (C++ ``std::setprecision(18)``, the ``%.18g``
    format) is read back by cmdstanpy's CSV reader as the very doubles Stan made; with 15 digits
    (the former setting) most are not."""
    cb._cmdstanpy()  # imported privately (workdirs.import_cmdstanpy)
    stancsv = pytest.importorskip("cmdstanpy.utils.stancsv")
    rng = np.random.default_rng(7)
    values = np.concatenate(
        [
            rng.normal(size=399) * 10.0 ** rng.integers(-300, 300, size=399),
            [np.sqrt(2.0), 1 / 3, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -0.0, 0.1],
        ]
    ).reshape(-1, 7)

    def read(fmt: str) -> np.ndarray:
        rows = [(",".join(fmt % x for x in row) + "\n").encode() for row in values]
        return stancsv.csv_bytes_list_to_numpy(rows)

    assert _bits(read("%.18g")) == _bits(values)
    assert sum(a != b for a, b in zip(_bits(read("%.15g")), _bits(values))) > values.size // 2


def test_an_old_cmdstan_makes_the_backend_unavailable(monkeypatch, tmp_path):
    """``sig_figs`` needs CmdStan 2.25 and ``stanc --info`` 2.27: an older installation is not
    used (``auto`` then picks pystan)."""
    for version, usable in (("2.26.1", False), ("2.27.0", True), ("2.36.0", True)):
        home = tmp_path / version
        home.mkdir()
        (home / "makefile").write_text(f"CMDSTAN_VERSION := {version}\n")
        monkeypatch.setenv("CMDSTAN", str(home))
        why = cb.CmdStanPyBackend.availability()
        assert (why is None) == usable, why
        if not usable:
            assert why == "CmdStan 2.26 is older than 2.27, the oldest this backend runs on"


ZERO_PROGRAM = """
data {
  int<lower=0> N;
  int<lower=1> K;
}
parameters {
  real mu;
}
model {
  mu ~ normal(0, 1);
}
generated quantities {
  vector[N] empty;
  array[N] vector[K] empty_rows;
  real twice = 2 * mu;
}
"""

CSV_HEADER = """# stan_version_major = 2
# stan_version_minor = 35
# stan_version_patch = 0
# model = zero_model
# start_datetime = 2024-06-01 00:00:00 UTC
# method = sample (Default)
#   sample
#     num_samples = {draws}
#     num_warmup = 10
#     save_warmup = false (Default)
#     thin = 1 (Default)
#     adapt
#       engaged = true (Default)
#       gamma = 0.05 (Default)
#       delta = 0.8 (Default)
#       kappa = 0.75 (Default)
#       t0 = 10 (Default)
#       init_buffer = 75 (Default)
#       term_buffer = 50 (Default)
#       window = 25 (Default)
#       save_metric = false (Default)
#     algorithm = hmc (Default)
#       hmc
#         engine = nuts (Default)
#           nuts
#             max_depth = 10 (Default)
#         metric = diag_e (Default)
#         metric_file =  (Default)
#         stepsize = 1 (Default)
#         stepsize_jitter = 0 (Default)
#     num_chains = 1 (Default)
# id = {chain}
# data
#   file = data.json
# init = 2 (Default)
# random
#   seed = 1
# output
#   file = zero_model-{chain}.csv
#   diagnostic_file =  (Default)
#   refresh = 100 (Default)
#   sig_figs = 18
#   profile_file = profile.csv (Default)
#   save_cmdstan_config = false (Default)
# num_threads = 1 (Default)
# stanc_version = stanc3 v2.35.0
# stancflags = 
lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,mu,twice
# Adaptation terminated
# Step size = 0.9
# Diagonal elements of inverse mass matrix:
# 1
"""


CSV_TRAILER = """# 
#  Elapsed Time: 0 seconds (Warm-up)
#                0 seconds (Sampling)
#                0 seconds (Total)
# 
"""


class _ZeroModel:
    """Stand-in for a ``CmdStanModel`` of :data:`ZERO_PROGRAM`: ``src_info`` and ``code`` read the
    program (with httpstan's stanc, the same ``--info``), and ``sample`` writes what CmdStan
    writes for it with N = 0 (Stan CSV: no column for ``empty`` or ``empty_rows``) and returns
    cmdstanpy's own fit object read from those files (``cmdstanpy.from_csv``)."""

    def __init__(self, path: Path):
        self.stan_file = str(path)
        self.calls: list[dict] = []

    def src_info(self) -> dict:
        return pstan.model_info(self.stan_file)

    def code(self) -> str:
        return Path(self.stan_file).read_text()

    def sample(self, **kwargs):
        self.calls.append(kwargs)
        out = Path(kwargs["output_dir"])
        for chain in range(1, kwargs["chains"] + 1):
            rows = [
                f"-1,0.9,0.9,1,1,0,1.5,{chain + 0.25 / 2**d!r},{2 * chain + 0.5 / 2**d!r}"
                for d in range(kwargs["iter_sampling"])
            ]
            (out / f"zero_model-{chain}.csv").write_text(
                CSV_HEADER.format(draws=kwargs["iter_sampling"], chain=chain) + "\n".join(rows) + "\n" + CSV_TRAILER
            )
        return cb._cmdstanpy().from_csv(sorted(str(f) for f in out.glob("*.csv")), method="sample")  # chain order


def test_a_fit_returns_its_empty_outputs_in_declaration_order(tmp_path):
    """The backend's ``run`` on cmdstanpy's fit object for a program whose generated quantities
    have no element on this data: every declared output comes back, the empty ones with their
    declared shape (formerly they were missing: ``KeyError`` where pystan gives an empty
    array), the others split per chain as written."""
    program = tmp_path / "zero_model.stan"
    program.write_text(ZERO_PROGRAM)
    handle = _ZeroModel(program)
    workdir = tmp_path / "fit"
    workdir.mkdir()
    raw = cb.CmdStanPyBackend().run(
        handle, {"N": 0, "K": 3}, SamplerSettings(chains=2, warmup=10, draws=3, seed=1), workdir
    )
    assert handle.calls[0]["sig_figs"] == 18
    assert list(raw.variables) == ["mu", "empty", "empty_rows", "twice"]
    np.testing.assert_array_equal(raw.variables["mu"], [[1.25, 1.125, 1.0625], [2.25, 2.125, 2.0625]])
    np.testing.assert_array_equal(raw.variables["twice"], [[2.5, 2.25, 2.125], [4.5, 4.25, 4.125]])
    assert raw.variables["empty"].shape == (2, 3, 0)
    assert raw.variables["empty_rows"].shape == (2, 3, 0, 3)
    assert raw.sampler["lp__"].shape == (2, 3) and set(raw.sampler) == set(base.SAMPLER_COLUMNS)
    assert not (workdir / "output").exists()
