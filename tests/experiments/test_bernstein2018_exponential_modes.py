"""Part ``exponential_modes`` of ``reproduce bernstein2018``
(:mod:`pystanprivacy.experiments.bernstein2018.exponential_modes`): the grid posterior of the
truncated-exponential model (Bernstein & Sheldon 2018, Sec. 3.3) against computations written
independently of it, and the mode split on densities whose modes and masses are known
(deterministic, no sampling, no Stan: every tolerance is a numerical one, far below what a wrong
formula would give); then a miniature run of the part (the compiled exponential program of the
test cache, a few draws) for its table, sidecar, figure and saved tasks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

PRIOR = (8.0, 2.0)


@pytest.fixture(scope="module")
def modes():
    from pystanprivacy.experiments.bernstein2018 import exponential_modes

    return exponential_modes


def _posterior_by_scipy(y, n, bounds, scale):
    """Unnormalised p(θ | y) written from the paper with scipy's distributions: Exp(θ)
    truncated to [a, b] is ``truncexpon``, Prop. 1 gives m = nqμ̂, V = nqΣ̂ + nq(1 − q)μ̂², and
    the Laplace noise is convolved with ``quad`` over ŝ (the integrand spelled out)."""
    a, b = bounds
    log_norm = math.log(2 * scale)

    def density(theta):
        mu, var = stats.truncexpon.stats(b=(b - a) * theta, loc=a, scale=1 / theta, moments="mv")
        q = math.exp(-theta * a) - math.exp(-theta * b)
        m, v = n * q * mu, n * q * var + n * q * (1 - q) * mu * mu
        sd = math.sqrt(v)

        def integrand(s):
            return math.exp(-0.5 * ((s - m) / sd) ** 2 - abs(y - s) / scale - log_norm) / (sd * math.sqrt(2 * math.pi))

        lik, _ = integrate.quad(
            integrand, m - 12 * sd, m + 12 * sd, points=[y] if abs(y - m) < 12 * sd else None, limit=200, epsrel=1e-10
        )
        return stats.gamma.pdf(theta, PRIOR[0], scale=1 / PRIOR[1]) * lik

    return density


def test_record_moments_match_quadrature(modes):
    a, b = 0.0037, 0.54
    for theta in (0.3, 1.6, 4.0, 12.0):
        m1, var = modes.truncated_record_moments(np.array([theta]), a, b)
        e1 = integrate.quad(lambda x, t=theta: x * t * math.exp(-t * x), a, b, epsrel=1e-12)[0]
        e2 = integrate.quad(lambda x, t=theta: x * x * t * math.exp(-t * x), a, b, epsrel=1e-12)[0]
        assert m1[0] == pytest.approx(e1, rel=1e-9)
        assert var[0] == pytest.approx(e2 - e1 * e1, rel=1e-8)


def test_bimodal_grid_posterior_matches_an_independent_computation(modes):
    # the authors' driver, seed 0: bounds from Exp(6.83)'s 2.5 % and 97.5 % quantiles, n = 1000,
    # scale (b - a)/0.1; the posterior has a second mode near θ = 1.6 holding about a quarter
    data = modes.authors_driver_data(0)
    y, bounds, scale = data["y"], data["bounds"], data["scale"]
    theta, dens, _ = modes.grid_posterior(y=y, n=1000, bounds=bounds, scale=scale)
    summary = modes.density_modes(theta, dens)
    assert summary["modes"] == 2 and summary["minor_side"] == -1
    assert 1.2 < summary["mode_minor"] < 2.2 < summary["split"] < 4.5 < summary["mode_major"]
    density = _posterior_by_scipy(y, 1000, bounds, scale)
    split = summary["split"]
    moments = [
        integrate.quad_vec(lambda t: np.array([1.0, t, t * t]) * density(t), u, v, epsrel=1e-9)[0]
        for u, v in ((theta[0], split), (split, theta[-1]))
    ]
    total = moments[0][0] + moments[1][0]
    mean = (moments[0][1] + moments[1][1]) / total
    sd = math.sqrt((moments[0][2] + moments[1][2]) / total - mean**2)
    assert summary["minor_mass"] == pytest.approx(moments[0][0] / total, abs=1e-6)
    assert summary["mean"] == pytest.approx(mean, rel=1e-6)
    assert summary["sd"] == pytest.approx(sd, rel=1e-5)
    # the shape pointwise: density ratios to the major mode
    ts = np.array([1.4, 1.62, 3.0, 5.0, 7.5])
    ours = modes.grid_log_posterior(np.append(ts, 6.36), y=y, n=1000, bounds=bounds, scale=scale)
    expected = np.log([density(t) / density(6.36) for t in ts])
    np.testing.assert_allclose(ours[:-1] - ours[-1], expected, atol=1e-7)


def test_grid_agrees_with_the_library_closed_form(modes):
    from pystanprivacy.models.bernstein2018 import ExponentialGamma

    data = modes.authors_driver_data(1)
    a, b = data["bounds"]
    theta = np.linspace(0.5, 12.0, 60)
    ours = modes.grid_log_posterior(theta, y=data["y"], n=1000, bounds=(a, b), scale=data["scale"])
    model = ExponentialGamma(bounds=(a, b))
    release = model.published(np.array([data["y"]]), n=1000, epsilon=0.1 * b / (b - a))
    assert model.check_release(release)[2] == pytest.approx(data["scale"], rel=1e-12)
    theirs = model.log_posterior(theta, release)[0]
    diff = (ours - ours.max()) - (theirs - theirs.max())
    assert np.max(np.abs(diff)) < 1e-7


def test_conjugate_limit_without_truncation_or_noise(modes):
    # bounds that keep every record and a Laplace scale of 1 against an sd of ŝ of 250 (adds
    # 3e-5 to its variance): the likelihood is the CLT normal N(y; n/θ, n/θ²), whose posterior
    # approaches Gamma(α + n, β + y) as n grows (a variance off by a factor 2 would move the sd
    # by 40 %)
    n, rate = 1_000_000, 4.0
    y = n / rate
    theta, dens, _ = modes.grid_posterior(y=y, n=n, bounds=(0.0, 60.0), scale=1.0)
    s = modes.density_modes(theta, dens)
    exact = stats.gamma(PRIOR[0] + n, scale=1 / (PRIOR[1] + y))
    assert s["modes"] == 1 and s["minor_mass"] == 0.0
    assert abs(s["mean"] - exact.mean()) < 0.01 * exact.std()
    assert s["sd"] == pytest.approx(exact.std(), rel=0.01)


def test_mode_split_on_a_known_mixture(modes):
    # 0.3 N(-3, 1) + 0.7 N(3, 1): modes near -3 and 3, split at the density minimum between
    def pdf(x):
        return 0.3 * stats.norm.pdf(x, -3, 1) + 0.7 * stats.norm.pdf(x, 3, 1)

    x = np.linspace(-10, 10, 20001)
    s = modes.density_modes(x, pdf(x))
    split = optimize.minimize_scalar(pdf, bounds=(-2, 2), method="bounded", options={"xatol": 1e-10}).x
    assert s["modes"] == 2 and s["minor_side"] == -1
    assert abs(s["mode_major"] - 3) < 2e-3 and abs(s["mode_minor"] + 3) < 2e-3
    assert abs(s["split"] - split) < 2e-3
    left = 0.3 * stats.norm.cdf(split, -3, 1) + 0.7 * stats.norm.cdf(split, 3, 1)
    assert s["minor_mass"] == pytest.approx(left, abs=1e-5)
    assert s["mean"] == pytest.approx(0.3 * -3 + 0.7 * 3, abs=1e-6)
    assert s["sd"] == pytest.approx(math.sqrt(1 + 0.21 * 36), rel=1e-6)


def test_mode_split_ignores_shoulders_and_shallow_bumps(modes):
    x = np.linspace(-10, 10, 20001)
    # equal normals 1.5 sd apart: one mode (a shoulder)
    shoulder = 0.5 * stats.norm.pdf(x, 0, 1) + 0.5 * stats.norm.pdf(x, 1.5, 1)
    s = modes.density_modes(x, shoulder)
    assert s["modes"] == 1 and math.isnan(s["split"]) and s["minor_mass"] == 0.0
    # a bump 2.2 sd away that rises less than one e-fold above its valley: not a mode
    shallow = 0.8 * stats.norm.pdf(x, 0, 1) + 0.2 * stats.norm.pdf(x, 2.2, 0.5)
    inner = shallow[1:-1]
    assert np.count_nonzero((inner > shallow[:-2]) & (inner >= shallow[2:])) == 2  # two local maxima
    assert modes.density_modes(x, shallow)["modes"] == 1


def test_ks_and_w1_against_scipy(modes):
    rng = np.random.default_rng(3)
    draws = rng.normal(0.2, 1.1, size=4000)
    x = np.linspace(-12, 12, 48001)
    cdf = stats.norm.cdf(x)
    ks, w1 = modes.ks_w1(draws, x, cdf)
    assert ks == pytest.approx(stats.kstest(draws, "norm").statistic, abs=1e-6)
    # W1 to N(0, 1) by the quantile form: ∫ |F_n^-1(u) - Φ^-1(u)| du over the draws' steps
    u = (np.arange(draws.size) + 0.5) / draws.size
    approx = np.mean(np.abs(np.sort(draws) - stats.norm.ppf(u)))
    assert w1 == pytest.approx(approx, rel=0.01)


#: the miniature run: one driver problem, 6 calibration trials, one Figure 1a setting, short chains
TINY = {
    "driver_seeds": (0,),
    "calibration_trials": 6,
    "ns": (10000,),
    "epsilons": (0.1,),
    "datasets": 1,
    "pool": 20,
    "stan": {"chains": 2, "warmup": 60, "draws": 60},
    "gibbs": {"chains": 2, "burnin": 20, "iterations": 60},
    "gridsize": 201,
}


def test_the_part_writes_its_table_sidecar_and_figure_and_resumes_from_its_tasks(modes, tmp_path, monkeypatch):
    """``reproduce(parts=("exponential_modes",))`` (here at a miniature size) writes the table the
    B1a claim reads, with a sidecar that records the calibration check and says that the authors'
    code did not run; its tasks are saved in ``OUT/exponential_modes/.tasks`` and a read-back under
    ``saved_only`` rebuilds the same table without running anything."""
    import json

    import pandas as pd

    from pystanprivacy.experiments.bernstein2018 import reproduce
    from pystanprivacy.run.runner import run_context

    for key, value in TINY.items():
        monkeypatch.setitem(modes.QUICK, key, value)
    out = tmp_path / "out"
    with run_context(resume_dir=out / ".tasks"):
        tables = reproduce(out, quick=True, seed=0, progress=False, parts=("exponential_modes",))
    table = tables["exponential_modes"]
    assert list(table.columns) == modes.COLUMNS
    written = pd.read_csv(out / "bernstein2018_exponential_modes.csv")
    assert list(written.columns) == modes.COLUMNS and len(written) == len(table)
    assert not (out / "bernstein2018_calibration.csv").exists()  # part calibration did not run
    driver = written[written.problem == "driver"]
    # driver seed 0 is bimodal (its grid: a quarter of the mass in a second mode), so the Gibbs run
    # from the minor mode is there too; the authors' code is not shipped, so no rows of it
    assert sorted(driver.method) == sorted(["grid", "Stan", "library Gibbs", "library Gibbs from minor mode"])
    grid = driver[driver.method == "grid"].iloc[0]
    assert grid.modes == 2 and 0.15 < grid.minor_mass < 0.35
    assert grid.theta_true == pytest.approx(modes.authors_driver_data(0)["theta"], rel=1e-6)
    assert set(written.problem) == {"driver", "figure1a"}
    assert set(written[written.problem == "figure1a"].n) == {10000}
    side = json.loads((out / "bernstein2018_exponential_modes.json").read_text())
    fixed = side["extra"]["calibration_fixed_bounds"]
    assert fixed["trials"] == 6 and fixed["n"] == 1000 and fixed["epsilon"] == 0.1
    assert fixed["ks_critical_1pct"] == pytest.approx(stats.kstwo.isf(0.01, 6), rel=1e-6)
    for method in ("grid", "Stan", "library Gibbs"):
        assert 0 <= fixed[method]["ks"] <= 1 and 0 <= fixed[method]["pvalue"] <= 1
    assert "not run" in side["extra"]["authors"]
    assert side["extra"]["figure1a_pools"][0]["pool"] == 20
    assert (out / "bernstein2018_exponential_modes.png").stat().st_size > 10_000
    saved = sorted((out / "exponential_modes" / ".tasks").glob("*.json"))
    assert len(saved) == 3  # driver, calibration, one Figure 1a setting
    assert not (out / ".tasks").exists() or not list((out / ".tasks").glob("*.json"))
    # a read-back of the saved tasks: nothing runs, the same table
    again = tmp_path / "again"
    with run_context(resume_dir=out / ".tasks", saved_only=True) as ctx:
        back = reproduce(again, quick=True, seed=0, progress=False, parts=("exponential_modes",))
        assert not ctx.part_folders["exponential_modes"].missing
    pd.testing.assert_frame_equal(back["exponential_modes"], table)


def test_the_part_refuses_a_size_without_every_setting(modes, tmp_path):
    size = {k: v for k, v in TINY.items() if k != "gridsize"}
    with pytest.raises(ValueError, match=r"size: missing the keys \['gridsize'\]"):
        modes.reproduce_exponential_modes(tmp_path, size=size, progress=False)
