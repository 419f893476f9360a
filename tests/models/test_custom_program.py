"""Issue 51 items 2 and 4: any Stan program fitted on a Release (StanProgram), published releases
(Release.save / Release.load), ``pystanprivacy fit`` and the worked example (examples/poisson_rate).

The checks that run before Stan (data names, mechanisms, records, files) need no compiled program:
``stanc --info`` reads a program's data block. Two programs are compiled in this module, the worked
example's noise-aware and naive programs (module fixtures), and every fit below reuses them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from pystanprivacy import cli
from pystanprivacy.models import model_class, model_names
from pystanprivacy.models.custom import DP_FIELDS, StanProgram, release_data
from pystanprivacy.privacy import ldp
from pystanprivacy.privacy.mechanisms import AnalyticGaussian, Gaussian, Laplace
from pystanprivacy.privacy.records import (
    MAX_RELEASE_FILE_BYTES,
    PrivacyRecord,
    Release,
    ReleaseFileError,
    check_record_consistent,
)

warnings.filterwarnings("ignore", message="a seed was given")
ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------ published releases
def _mechanism_releases() -> dict[str, Release]:
    """One release of every mechanism path: seeded (continuous noise) and secure (discrete noise on
    a grid; integer input on the integers), local reports, and every registry model's own release."""
    x = np.array([3.0, 4.0])
    out = {
        "laplace seeded": Laplace(epsilon=1, sensitivity=1, seed=1).release(x, n=10),
        "laplace secure integer": Laplace(epsilon=1, sensitivity=1).release(np.array([3, 4]), n=10),
        "laplace secure real": Laplace(epsilon=1, sensitivity=1.5).release(x, n=10),
        "gaussian secure": Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1).release(x, n=10),
        "gaussian seeded": Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1, seed=2).release(x, n=10),
        "analytic gaussian secure integer": AnalyticGaussian(epsilon=2, delta=1e-5, sensitivity=1).release(
            np.array([3, 4]), n=10
        ),
        "randomized response": ldp.randomized_response_reports(np.array([0, 1, 1, 0]), epsilon=1),
        "oue": ldp.oue_reports(np.array([0, 1, 2, 1]), epsilon=1, d=3),
        "clipped laplace reports": ldp.clipped_laplace_reports(np.array([0.1, 0.5, 0.7]), epsilon=1, bounds=(0, 1)),
        "gaussian reports, scale ratios": ldp.gaussian_reports(
            np.array([[0.1, 0.5], [0.7, 0.2]]), epsilon=1, delta=1e-5, sensitivity=4.0, scale_ratios=[1.0, 0.5]
        ),
    }
    for name in model_names():
        try:
            example = model_class(name).example(20, seed=1)
        except NotImplementedError:
            continue
        if example.kind == "release":
            out[f"{name} seeded"] = example.release(seed=1)
            out[f"{name} secure"] = example.release(seed=None)
    return out


RELEASES = _mechanism_releases()


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_every_mechanisms_release_round_trips_through_its_published_file(name, tmp_path):
    # no false refusal: every release the library makes loads back equal, its values' type kept
    release = RELEASES[name]
    path = release.save(tmp_path / "release.json")
    back = Release.load(path)
    assert back == release
    assert back.values.dtype.kind == release.values.dtype.kind and back.values.shape == release.values.shape
    assert json.loads(path.read_text())["version"] == 1


def _forged(release: Release, tmp_path: Path, **changes) -> Path:
    doc = json.loads(release.save(tmp_path / "release.json").read_text())
    for key, value in changes.items():
        target, _, field = key.rpartition("__")
        holder = doc
        for part in filter(None, target.split("__")):
            holder = holder[part]
        holder[field] = value
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    "name, changes, message",
    [
        # a Laplace record whose scale is not sensitivity / epsilon (the noise is 10x smaller than stated)
        ("laplace seeded", {"record__scale": 0.1}, "states scale = 0.1, but its calibration gives 1.0"),
        # a larger epsilon than the noise was calibrated for
        ("laplace seeded", {"record__epsilon": 10.0}, "its calibration gives 0.1"),
        ("laplace seeded", {"record__delta": 0.1}, "pure epsilon-DP"),
        ("laplace seeded", {"record__sensitivity_norm": "l2"}, "sensitivity is in 'l1'"),
        # a Gaussian whose sigma does not meet its (epsilon, delta) calibration (Dwork & Roth Thm A.1)
        ("gaussian seeded", {"record__scale": 1.0}, "the stated guarantee does not hold"),
        ("gaussian seeded", {"record__delta": 1e-3}, "the stated guarantee does not hold"),
        # the classical Gaussian's calibration does not hold for epsilon >= 1
        ("gaussian seeded", {"record__epsilon": 2.0}, "epsilon must be < 1"),
        # a secure (discrete) release: the scale of its discrete plan, its grid
        ("laplace secure real", {"record__scale": 1.5}, "its discrete noise plan gives"),
        ("laplace secure real", {"record__details__grid_exponent": -3}, "grid_exponent"),
        ("analytic gaussian secure integer", {"record__scale": 1.0}, "its discrete noise plan gives"),
        # values a grid mechanism cannot output: a non-integer on the integer grid
        ("laplace secure integer", {"values": [3.5, 4.0]}, "1 value(s) off the noise grid 2^0"),
        # randomised response / OUE: probabilities of another epsilon, values that are not bits
        ("randomized response", {"record__details__p_keep": 0.9}, "p_keep"),
        ("randomized response", {"values": [0, 1, 2, 0]}, "output"),
        ("oue", {"record__details__q": 0.1}, "details['q']"),
        ("oue", {"values": [[0, 1, 0], [1, 0, 0], [0.5, 0, 1], [0, 1, 0]]}, "output"),
        # a composition: the parts' epsilons must add up, and each part's noise meet its calibration
        ("foulds2016/nb_hmm seeded", {"record__epsilon": 50.0}, "its parts add up to"),
        (
            "kulkarni2022/linear_regression_inputs seeded",
            {"record__details__features__sigma": 0.5},
            "record part features states noise scale 0.5",
        ),
    ],
)
def test_a_forged_or_inconsistent_record_is_refused_on_load(name, changes, message, tmp_path):
    path = _forged(RELEASES[name], tmp_path, **changes)
    with pytest.raises(ReleaseFileError, match="not a release file written by Release.save") as info:
        Release.load(path)
    assert message in str(info.value)


def test_load_refusals_never_quote_a_value(tmp_path):
    release = Release(values=np.array([123456.789, 3.5]), record=RELEASES["laplace secure integer"].record)
    doc = {"format": "pystanprivacy.Release", "version": 1, **release.to_dict()}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ReleaseFileError) as info:
        Release.load(path)
    assert "123456" not in str(info.value) and "3.5" not in str(info.value)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "not UTF-8 JSON"),
        (b"\xff\xfe not json", "not UTF-8 JSON"),
        (b"[1, 2]", "must hold a JSON object"),
        (
            b'{"format": "pystanprivacy.Release", "version": 1, "values": [NaN], "shape": [1], "record": {}}',
            "not UTF-8 JSON",
        ),
        (b'{"version": 1, "version": 1}', "not UTF-8 JSON"),
        (b'{"format": "pystanprivacy.Release", "version": 1, "values": [1.0], "record": {}}', "missing ['shape']"),
        (b'{"format": "other", "version": 1, "values": [1.0], "shape": [1], "record": {}}', "'format' must be"),
        (
            b'{"format": "pystanprivacy.Release", "version": 2, "values": [1.0], "shape": [1], "record": {}}',
            "'version' must be 1",
        ),
        (
            b'{"format": "pystanprivacy.Release", "version": true, "values": [1.0], "shape": [1], "record": {}}',
            "'version' must be 1",
        ),
        (
            (
                b'{"format": "pystanprivacy.Release", "version": 1, "values": [1.0], "shape": [1], '
                b'"record": {"mechanism": "laplace", "epsilon": -1}}'
            ),
            "epsilon",
        ),
        (
            (
                b'{"format": "pystanprivacy.Release", "version": 1, "values": [], "shape": [0], '
                b'"record": {"mechanism": "ops", "epsilon": 1}}'
            ),
            "at least one value",
        ),
    ],
)
def test_load_refuses_files_that_are_not_releases(content, message, tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(ReleaseFileError) as info:
        Release.load(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_load_refuses_what_is_not_a_regular_file_and_what_is_too_large(tmp_path):
    with pytest.raises(ReleaseFileError, match="is a directory"):
        Release.load(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ReleaseFileError, match="is a FIFO"):  # judged from fstat: never blocks
        Release.load(fifo)
    with pytest.raises(ReleaseFileError, match="cannot open"):
        Release.load(tmp_path / "missing.json")
    with pytest.raises(ReleaseFileError, match="path is empty"):
        Release.load("")
    with pytest.raises(TypeError, match="path must be"):
        Release.load(3)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(MAX_RELEASE_FILE_BYTES + 1)
    with pytest.raises(ReleaseFileError, match="more than the"):
        Release.load(big)


def test_check_record_consistent_accepts_a_published_laplace_record():
    from pystanprivacy.models.base import published_laplace_record

    rec = published_laplace_record(epsilon=0.5, sensitivity=2.0, n=10)
    check_record_consistent(Release(values=np.array([1.25]), record=rec))
    with pytest.raises(ValueError, match="states scale = 1.0"):
        check_record_consistent(Release(values=np.array([1.25]), record=dataclasses.replace(rec, scale=1.0)))


# ------------------------------------------------------------------------------ checks before Stan
_NORMAL_LAPLACE = """
functions {
#include log_phi.stanfunctions
#include normal_laplace.stanfunctions
}
data {
  real dp_y;
  real<lower=0> dp_scale;
  real<lower=0> sigma;
}
parameters { real mu; }
model { mu ~ normal(0, 10); dp_y ~ normal_laplace(mu, sigma, dp_scale); }
"""


def _program(tmp_path: Path, code: str, name: str = "p.stan") -> StanProgram:
    path = tmp_path / name
    path.write_text(code)
    return StanProgram(path)


def _laplace_release(n: int | None = 100, **record) -> Release:
    rec = PrivacyRecord(
        mechanism="laplace", epsilon=1.0, sensitivity=1.0, sensitivity_norm="l1", scale=1.0, n=n, **record
    )
    return Release(values=np.array([2.5]), record=rec)


def test_data_for_passes_the_declared_dp_fields_and_the_users_data(tmp_path):
    program = _program(tmp_path, _NORMAL_LAPLACE)
    release = _laplace_release()
    assert program.data_for(release, {"sigma": 2.0}) == {"dp_y": release.values, "dp_scale": 1.0, "sigma": 2.0}
    assert program.functions == {"normal_laplace_lpdf": frozenset({"laplace"})}


def test_release_data_names_and_types():
    rec = PrivacyRecord(
        mechanism="laplace",
        epsilon=0.5,
        delta=0.0,
        sensitivity=2.0,
        sensitivity_norm="l1",
        scale=4.0,
        bounds=(0.0, 3.0),
        n=7,
    )
    ints = release_data(Release(values=np.array([1, 2, 3]), record=rec))
    # every name but the details' (dp_grid: a secure release's grid, dp_p_keep: randomised
    # response's), which this hand-made record does not state (tests/models/test_custom_secure.py)
    assert set(ints) == set(DP_FIELDS) - {"dp_grid", "dp_p_keep"}
    assert ints["dp_y"].dtype.kind == "i" and ints["dp_size"] == 3 and ints["dp_n"] == 7
    assert (ints["dp_epsilon"], ints["dp_delta"], ints["dp_scale"], ints["dp_sensitivity"]) == (0.5, 0.0, 4.0, 2.0)
    assert (ints["dp_lower"], ints["dp_upper"]) == (0.0, 3.0)
    scalar = release_data(Release(values=np.array(2.5), record=rec))["dp_y"]
    assert scalar == 2.5 and isinstance(scalar, float)
    assert "dp_scale" not in release_data(
        Release(values=np.array([1]), record=PrivacyRecord(mechanism="ops", epsilon=1.0))
    )


def test_a_declared_dp_field_the_record_lacks_is_refused_naming_both(tmp_path):
    program = _program(
        tmp_path,
        """
data { real dp_y; int<lower=1> dp_n; real dp_lower; }
parameters { real mu; }
model { mu ~ normal(dp_y, 1); }
""",
    )
    with pytest.raises(ValueError, match=r"declares dp_n, but the release's record has no n \(record.n is None"):
        program.data_for(_laplace_release(n=None))
    with pytest.raises(ValueError, match=r"declares dp_lower, but the release's record has no bounds"):
        program.data_for(_laplace_release())


def test_an_undocumented_dp_name_is_refused(tmp_path):
    with pytest.raises(ValueError, match="declares data dp_noise: a dp_\\* name that is not one of"):
        _program(tmp_path, "data { real dp_noise; } parameters { real mu; } model { mu ~ normal(dp_noise, 1); }")


def test_a_catalogue_function_with_a_release_of_another_mechanism_is_refused_naming_both(tmp_path):
    program = _program(tmp_path, _NORMAL_LAPLACE)
    rr = RELEASES["randomized response"]
    with pytest.raises(
        ValueError,
        match="calls normal_laplace_lpdf, which models releases of mechanism 'laplace', "
        "but the release's record states mechanism 'randomized_response'",
    ):
        program.data_for(rr, {"sigma": 1.0})
    gauss = Release(values=np.array([1.0]), record=RELEASES["gaussian seeded"].record)
    with pytest.raises(ValueError, match="states mechanism 'gaussian'"):
        program.data_for(gauss, {"sigma": 1.0})


def test_users_data_is_checked_against_the_data_block(tmp_path):
    program = _program(tmp_path, _NORMAL_LAPLACE)
    release = _laplace_release()
    with pytest.raises(ValueError, match="data has dp_scale: dp_\\* names come from the release"):
        program.data_for(release, {"sigma": 1.0, "dp_scale": 0.01})
    with pytest.raises(ValueError, match="data has tau, which the program's data block does not declare"):
        program.data_for(release, {"sigma": 1.0, "tau": 1.0})
    with pytest.raises(ValueError, match="declares data sigma, which neither the release"):
        program.data_for(release, {})
    with pytest.raises(TypeError, match="data must be a mapping"):
        program.data_for(release, [("sigma", 1.0)])
    with pytest.raises(TypeError, match="release must be a Release"):
        program.data_for({"values": [1.0]}, {"sigma": 1.0})


def test_integer_dp_y_takes_integral_values_only(tmp_path):
    program = _program(
        tmp_path,
        "data { int dp_size; array[dp_size] int dp_y; } parameters { real<lower=0> l; } model { dp_y ~ poisson(l); }",
    )
    integral = Release(values=np.array([3.0, 4.0]), record=RELEASES["laplace secure integer"].record)
    assert program.data_for(integral)["dp_y"].tolist() == [3.0, 4.0]
    real = Release(values=np.array([3.0, 4.25]), record=RELEASES["laplace seeded"].record)
    with pytest.raises(TypeError, match="declares dp_y as int, but 1 of the release's values are not integers"):
        program.data_for(real)


def test_a_release_whose_values_do_not_match_its_record_is_refused(tmp_path):
    program = _program(
        tmp_path,
        "data { int dp_size; array[dp_size] int dp_y; } parameters { real<lower=0,upper=1> p; } "
        "model { dp_y ~ bernoulli(p); }",
    )
    rr = RELEASES["randomized response"]  # n = 4 reports
    with pytest.raises(ValueError, match="release does not match its record"):
        program.data_for(Release(values=rr.values[:3], record=rr.record))


def test_program_errors_before_any_compile(tmp_path):
    with pytest.raises(ValueError, match="stanc rejected"):
        _program(tmp_path, "data { real dp_y; } parameters { real mu } model { }")
    with pytest.raises(FileNotFoundError, match="no Stan program file"):
        StanProgram(tmp_path / "missing.stan")
    with pytest.raises(ValueError, match="must end in .stan"):
        StanProgram(tmp_path / "model.txt")
    with pytest.raises(TypeError, match="path_or_code must be"):
        StanProgram(3)
    with pytest.raises(ValueError, match="path_or_code is empty"):
        StanProgram("  ")


def test_code_is_written_once_by_content(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSTANPRIVACY_CACHE", str(tmp_path / "cache"))
    a = StanProgram(_NORMAL_LAPLACE)
    b = StanProgram(_NORMAL_LAPLACE)
    assert a.path == b.path and a.path.read_text() == _NORMAL_LAPLACE
    assert oct(a.path.parent.stat().st_mode & 0o777) == "0o700"
    assert set(a.inputs) == {"dp_y", "dp_scale", "sigma"}


# ------------------------------------------------------------------------------ command line: errors
@pytest.mark.parametrize(
    "which, message",
    [
        ("program-missing", "MODEL.stan"),
        ("program-not-stan", "must be a regular file whose name ends in .stan"),
        ("release-bad", "RELEASE.json"),
        ("data-missing", "--data"),
        ("data-not-object", "must hold a JSON object"),
        ("data-nan", "NaN and Infinity are not allowed"),
        ("data-undeclared", "which the program's data block does not declare"),
        ("out-is-file", "--out"),
        ("chains-zero", "--chains must be >= 1, got 0"),
    ],
)
def test_fit_cli_refuses_bad_inputs_before_any_work(which, message, tmp_path, capsys):
    program = tmp_path / "p.stan"
    program.write_text(_NORMAL_LAPLACE)
    release = _laplace_release().save(tmp_path / "release.json")
    data = tmp_path / "data.json"
    data.write_text('{"sigma": 1.0}')
    out = tmp_path / "out"
    args = {"program": str(program), "release": str(release), "data": str(data), "out": str(out)}
    if which == "program-missing":
        args["program"] = str(tmp_path / "nope.stan")
    elif which == "program-not-stan":
        args["program"] = str(tmp_path)
    elif which == "release-bad":
        (tmp_path / "bad.json").write_text("{}")
        args["release"] = str(tmp_path / "bad.json")
    elif which == "data-missing":
        args["data"] = str(tmp_path / "nodata.json")
    elif which == "data-not-object":
        data.write_text("[1]")
    elif which == "data-nan":
        data.write_text('{"sigma": NaN}')
    elif which == "data-undeclared":
        data.write_text('{"sigma": 1.0, "tau": 2.0}')
    elif which == "out-is-file":
        out.write_text("")
    extra = ["--chains", "0"] if which == "chains-zero" else []
    with pytest.raises(SystemExit) as info:
        cli.main(["fit", args["program"], args["release"], "--data", args["data"], "--out", args["out"], *extra])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


# ------------------------------------------------------------------------------ the worked example
EXAMPLE = ROOT / "examples" / "poisson_rate"


def _import(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example_programs():
    """The example's two programs, compiled once (the only compiles of this module)."""
    aware = StanProgram(EXAMPLE / "poisson_rate.stan")
    naive = StanProgram(EXAMPLE / "poisson_rate_naive.stan")
    aware.stan_model, naive.stan_model  # noqa: B018 - compile (or load) now
    return aware, naive


def _importance_posterior(y: np.ndarray, scale: float, exposure: np.ndarray, *, draws: int, seed: int):
    """Posterior means of (mu, tau, lambda_g) and their Monte-Carlo standard errors by
    self-normalised importance sampling from the prior, with the noisy-count likelihood
    sum_x Poisson(x | E lambda) Laplace(y | x, scale) computed by SciPy over x = 0..400 (the
    program sums to max_count = 120; the rest is below 1e-6 of the prior mass)."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    mu = rng.normal(np.log(5.0), 0.3, draws)
    tau = np.abs(rng.normal(0.0, 0.2, draws))
    lam = np.exp(mu[:, None] + tau[:, None] * rng.normal(size=(draws, y.size)))
    x = np.arange(401)
    noise = stats.laplace.pdf(y[:, None], loc=x[None, :], scale=scale)  # (G, X)
    loglik = np.zeros(draws)
    for start in range(0, draws, 5000):
        rate = exposure[None, :, None] * lam[start : start + 5000, :, None]
        like = (stats.poisson.pmf(x[None, None, :], rate) * noise[None]).sum(axis=2)
        loglik[start : start + 5000] = np.log(like).sum(axis=1)
    w = np.exp(loglik - loglik.max())
    w /= w.sum()
    ess = 1.0 / np.sum(w**2)
    values = {"mu": mu, "tau": tau, **{f"lambda[{g}]": lam[:, g] for g in range(y.size)}}  # ArviZ names
    means = {k: float(np.sum(w * v)) for k, v in values.items()}
    ses = {k: float(np.sqrt(np.sum(w * (v - means[k]) ** 2) / ess)) for k, v in values.items()}
    return means, ses, ess


def test_noise_aware_posterior_matches_importance_sampling_with_an_independent_likelihood(example_programs):
    aware, _ = example_programs
    sim = _import(EXAMPLE / "poisson_rate_sim.py")
    truth = sim.simulate(np.random.default_rng(11))
    release = sim.release(truth["private"], epsilon=0.25, seed=12)  # continuous Laplace, scale 4
    post = aware.fit(release, data=sim.public_data(), chains=4, warmup=1000, draws=1500, seed=3)
    assert post.privacy == release.record.to_dict() and not post.check()
    means, ses, ess = _importance_posterior(
        np.asarray(release.values, float), release.record.scale, sim.EXPOSURE, draws=200_000, seed=4
    )
    assert ess > 5000  # the prior is a good enough proposal here (weak data): the reference is precise
    summary = post.summary(var_names=["mu", "tau", "lambda"])
    for name, mean in means.items():
        got, mcse = float(summary.loc[name, "mean"]), float(summary.loc[name, "mcse_mean"])
        # |difference| within 4.5 combined standard errors: a false rejection has probability
        # about 7e-6 per parameter (normal tails), 4e-5 for the six; a wrong noise scale or the
        # noise ignored moves the rates by several units (see the example's plot), tau and mu by
        # many standard errors
        assert abs(got - mean) < 4.5 * np.hypot(ses[name], mcse), (name, got, mean, ses[name], mcse)


def test_the_naive_program_differs_where_the_noise_matters(example_programs):
    # the same check fails for the naive program: the comparison above can tell the two apart
    _, naive = example_programs
    sim = _import(EXAMPLE / "poisson_rate_sim.py")
    truth = sim.simulate(np.random.default_rng(11))
    release = sim.release(truth["private"], epsilon=0.25, seed=12)
    post = naive.fit(release, data=sim.public_data(), chains=4, warmup=1000, draws=1500, seed=3)
    means, ses, _ = _importance_posterior(
        np.asarray(release.values, float), release.record.scale, sim.EXPOSURE, draws=200_000, seed=4
    )
    summary = post.summary(var_names=["mu", "tau", "lambda"])
    far = [
        name
        for name, mean in means.items()
        if abs(float(summary.loc[name, "mean"]) - mean)
        > 4.5 * np.hypot(ses[name], float(summary.loc[name, "mcse_mean"]))
    ]
    assert far  # at least one parameter's posterior mean is off by more than the tolerance above


def test_the_worked_example_runs_end_to_end(example_programs, tmp_path):
    from pystanprivacy import Posterior

    run = _import(EXAMPLE / "run.py")
    result = run.main(["--out", str(tmp_path), "--quick"])
    # fit succeeded for both; SBC (family-wise false rejection 1 %): the noise-aware program passes,
    # the naive one fails (at this fixed seed; its power at R = 40 is what the example shows)
    assert result["codes"] == {"fit": 0, "fit_naive": 0, "sbc": 0, "sbc_naive": 1}
    release = Release.load(tmp_path / "release.json")
    assert release.record.details["secure"] is True and release.record.mechanism == "laplace"
    for tag in ("fit", "fit_naive"):
        folder = tmp_path / tag
        assert json.loads((folder / "record.json").read_text()) == release.record.to_dict()
        post = Posterior.load(folder / "posterior.nc")
        assert post.privacy == release.record.to_dict() and post.draws("lambda").shape[1] == 4
        assert {"mu", "tau", "lambda[0]", "lambda[3]"} <= set(
            __import__("pandas").read_csv(folder / "summary.csv", index_col=0).index
        )
    for tag in ("sbc", "sbc_naive"):
        assert (tmp_path / tag / "sbc_summary.csv").is_file() and (tmp_path / tag / "sbc.png").is_file()
    assert result["figure"].is_file() and result["figure"].stat().st_size > 10_000
