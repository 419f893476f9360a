"""Issue 66 part 2: the public noise facts of a release as data names (``dp_grid``,
``dp_p_keep``), releases simulated the way real ones are made
(:func:`pystanprivacy.privacy.noise.simulated_randomness`), SBC of a user's program with them
(secure by default, ``--seeded`` as an option), and when ``normal_lpdf(dp_y | x, dp_scale)`` is
the exact likelihood of a secure Gaussian release up to a constant.

Nothing here compiles or runs Stan (``stanc --info`` reads a program's data block); the Stan
runs are in ``tests/checks/test_sbc_secure.py`` and ``tests/models/test_custom_gallery.py``.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pystanprivacy import cli
from pystanprivacy.checks import sbc
from pystanprivacy.models.custom import DP_FIELDS, StanProgram, release_data
from pystanprivacy.privacy import ldp
from pystanprivacy.privacy.mechanisms import AnalyticGaussian, Laplace
from pystanprivacy.privacy.noise import SeededRandom, simulated_randomness

warnings.filterwarnings("ignore", message="a seed was given")
CHECKS = Path(__file__).resolve().parents[1] / "checks"
GRID_PROGRAM = CHECKS / "poisson_grid.stan"
GRID_SIM = CHECKS / "poisson_grid_sim.py"
COUNTS = np.array([3, 7, 10, 0, 25], dtype=np.int64)

_GRID_CODE = """
data { int<lower=1> dp_size; vector[dp_size] dp_y; real<lower=0> dp_scale; real<lower=0> dp_grid; }
parameters { vector[dp_size] mu; }
model { dp_y ~ normal(mu, dp_scale); }
"""


def _gaussian(seed=None):
    return AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0, seed=seed)


# ------------------------------------------------------------------------------ dp_grid, dp_p_keep
def test_dp_grid_is_the_grid_the_secure_release_lies_on(tmp_path):
    release = _gaussian().release(COUNTS, neighbouring="add-remove")
    grid = release_data(release)["dp_grid"]
    # a power of two at most 1 (every integer count is on it) ...
    mantissa, _ = math.frexp(grid)
    assert mantissa == 0.5 and 0 < grid <= 1
    # ... and every released value is count + an integer number of grid steps, read from the values
    steps = (release.values - COUNTS) / grid
    np.testing.assert_array_equal(steps, np.round(steps))
    # the grid is sigma / 2^j with sigma at least 128 grid steps (noise.py): far finer than the noise
    assert release.record.scale / grid >= 128
    path = tmp_path / "p.stan"
    path.write_text(_GRID_CODE)
    data = StanProgram(path).data_for(release)
    assert data["dp_grid"] == grid and set(data) == {"dp_size", "dp_y", "dp_scale", "dp_grid"}
    # the Laplace mechanism's secure noise on integer counts is on the integers
    lap = Laplace(epsilon=0.5, sensitivity=1.0).release(COUNTS)
    assert release_data(lap)["dp_grid"] == 1.0
    np.testing.assert_array_equal(lap.values, np.round(lap.values))


def test_dp_grid_of_a_seeded_release_is_refused_naming_it(tmp_path):
    path = tmp_path / "p.stan"
    path.write_text(_GRID_CODE)
    seeded = _gaussian(seed=1).release(COUNTS)
    assert "dp_grid" not in release_data(seeded)
    with pytest.raises(ValueError, match=r"declares dp_grid, but the release's record has no details\['grid'\]"):
        StanProgram(path).data_for(seeded)
    with pytest.raises(ValueError, match="a seeded release's noise is continuous"):
        StanProgram(path).data_for(seeded)
    # never from data=: dp_* names come from the record
    with pytest.raises(ValueError, match="data has dp_grid: dp_\\* names come from the release"):
        StanProgram(path).data_for(_gaussian().release(COUNTS), {"dp_grid": 0.5})


def test_dp_p_keep_is_randomised_responses_keep_probability():
    bits = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    for epsilon in (0.3, 1.0, 2.5):
        got = release_data(ldp.randomized_response_reports(bits, epsilon=epsilon))["dp_p_keep"]
        assert got == pytest.approx(math.exp(epsilon) / (1.0 + math.exp(epsilon)), rel=1e-15)
    assert {"dp_grid", "dp_p_keep"} <= set(DP_FIELDS)


# ------------------------------------------------------------------------------ simulated releases
def test_simulated_releases_take_the_secure_path_with_a_reproducible_source():
    with simulated_randomness(5):
        a = _gaussian().release(COUNTS)
    with simulated_randomness(5):
        b = _gaussian().release(COUNTS)
    with simulated_randomness(6):
        c = _gaussian().release(COUNTS)
    real = _gaussian().release(COUNTS)  # outside the block: the CSPRNG again
    np.testing.assert_array_equal(a.values, b.values)
    assert not np.array_equal(a.values, c.values)
    # the plan of a real release: the same grid, scale and calibration; only the randomness differs
    for key in ("grid", "grid_exponent", "sigma_grid_units", "noise"):
        assert a.record.details[key] == real.record.details[key], key
    assert a.record.scale == real.record.scale
    assert (a.record.details["secure"], a.record.details["simulated"]) == (False, True)
    assert real.record.details["secure"] is True and "simulated" not in real.record.details
    # a generator is used as is (its stream continues), so a replicate's generator drives it
    rng = np.random.default_rng(3)
    with simulated_randomness(rng) as source:
        assert isinstance(source, SeededRandom) and source.generator is rng


def test_simulated_noise_is_the_discrete_gaussian_of_the_record():
    # 6000 draws of the noise in grid steps, K = (y - x) / grid, against the exact pmf of N_Z(0, s^2)
    # (s = sigma_grid_units) computed here by direct summation, in 12 bins of equal probability;
    # Pearson chi-square, 11 degrees of freedom: false rejection 1e-3 at this seed
    x = np.zeros(6000, dtype=np.int64)
    with simulated_randomness(11):
        release = AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0).release(x, changed=1)
    s, grid = release.record.details["sigma_grid_units"], release.record.details["grid"]
    k = (release.values / grid).astype(np.int64)
    np.testing.assert_array_equal(k * grid, release.values)  # on the grid
    support = np.arange(-int(12 * s), int(12 * s) + 1)
    pmf = np.exp(-(support.astype(float) ** 2) / (2 * s * s))
    pmf /= pmf.sum()
    cdf = np.cumsum(pmf)
    edges = np.searchsorted(cdf, np.arange(1, 12) / 12.0)  # bin j: support indices up to edges[j]
    observed = np.bincount(np.searchsorted(support[edges], k, side="left"), minlength=12)
    expected = np.diff(np.concatenate([[0.0], cdf[edges], [1.0]])) * k.size
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    # continuous noise would not be on the grid: the seeded form is off it almost surely
    seeded = AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0, seed=1).release(x[:100], changed=1)
    assert np.mean(seeded.values / grid != np.round(seeded.values / grid)) > 0.95


# ------------------------------------------------------------------------------ normal_lpdf on the grid
def _discrete_gaussian_logpmf(y, x, sigma, grid):
    """log P(y | x) of y = x + grid K, K ~ N_Z(0, (sigma/grid)^2), x on the grid: the normaliser
    summed over the lattice directly (|k| <= 40 s)."""
    s = sigma / grid
    k = np.arange(-int(40 * s), int(40 * s) + 1)
    log_z = np.log(np.sum(np.exp(-(k.astype(float) ** 2) / (2 * s * s))))
    return -((y - x) ** 2) / (2 * sigma**2) - log_z


def test_normal_lpdf_is_exact_up_to_a_constant_for_latent_values_on_the_grid():
    # a secure Gaussian release of a count: y = x + grid K. For every integer x (on the grid, so
    # not rounded) log P(y | x) - normal_lpdf(y | x, scale) is one constant: the posterior over x
    # (or over anything x depends on) is exact
    release = _gaussian().release(np.array([12], dtype=np.int64))
    y, sigma, grid = float(release.values[0]), release.record.scale, release.record.details["grid"]
    xs = np.arange(0, 40)
    diff = _discrete_gaussian_logpmf(y, xs, sigma, grid) - stats.norm.logpdf(y, loc=xs, scale=sigma)
    assert np.ptp(diff) < 1e-9
    # the exact posterior over x under a Poisson(9) prior equals the one with the normal density
    exact = stats.poisson.logpmf(xs, 9) + _discrete_gaussian_logpmf(y, xs, sigma, grid)
    normal = stats.poisson.logpmf(xs, 9) + stats.norm.logpdf(y, loc=xs, scale=sigma)
    np.testing.assert_allclose(
        np.exp(exact - np.logaddexp.reduce(exact)), np.exp(normal - np.logaddexp.reduce(normal)), rtol=1e-9
    )


def test_normal_lpdf_for_a_real_latent_value_is_off_by_the_rounding_only():
    # a real x is rounded to the grid first (y = r(x) + grid K), so the exact likelihood is a step
    # function of x: log P(y | x) - normal_lpdf(y | x, sigma) is not constant, but within the bound
    # (grid |y - x| + grid^2 / 4) / (2 sigma^2) of noise.py around a constant
    sigma, grid = 4.0, 2.0**-5
    rng = np.random.default_rng(0)
    y = 3.0 + grid * 37
    x = 3.0 + rng.uniform(-8, 8, 400)
    r = grid * np.rint(x / grid)
    exact = _discrete_gaussian_logpmf(y, r, sigma, grid)
    diff = exact - stats.norm.logpdf(y, loc=x, scale=sigma)
    const = _discrete_gaussian_logpmf(y, y, sigma, grid) - stats.norm.logpdf(y, loc=y, scale=sigma)
    bound = (grid * np.abs(y - x) + grid**2 / 4) / (2 * sigma**2)
    assert np.all(np.abs(diff - const) <= bound * (1 + 1e-9))
    assert np.ptp(diff) > 1e-4  # and it does vary: exactness needs x on the grid


# ------------------------------------------------------------------------------ SBC's releases
def test_sbc_releases_are_made_as_real_ones_unless_seeded():
    secure = sbc.make_problem("program", program=str(GRID_PROGRAM), simulator=str(GRID_SIM), epsilon=0.5)
    seeded = sbc.make_problem("program", program=str(GRID_PROGRAM), simulator=str(GRID_SIM), epsilon=0.5, seeded=True)
    counts = np.array([4, 9, 13], dtype=np.int64)
    a = secure._release(counts, np.random.default_rng(1))
    b = secure._release(counts, np.random.default_rng(1))
    np.testing.assert_array_equal(a.values, b.values)  # reproducible from the replicate's generator
    assert a.record.details["simulated"] is True and a.record.details["grid"] < 1
    steps = (a.values - counts) / a.record.details["grid"]
    np.testing.assert_array_equal(steps, np.round(steps))
    c = seeded._release(counts, np.random.default_rng(1))
    assert "grid" not in c.record.details and c.record.details["secure"] is False
    assert "secure path" in secure.settings()["releases"] and "seeded" in seeded.settings()["releases"]
    # the program declares dp_grid: its data are there for releases made as real ones, and a seeded
    # release is refused before anything is compiled, naming dp_grid
    secure.preflight()
    with pytest.raises(ValueError, match="declares dp_grid"):
        seeded.preflight()
    with pytest.raises(TypeError, match="seeded must be True or False"):
        sbc.make_problem("program", program=str(GRID_PROGRAM), simulator=str(GRID_SIM), seeded="yes")


def test_a_simulator_whose_mechanism_escapes_the_simulation_is_refused(tmp_path):
    # a mechanism made at import takes the CSPRNG: its releases would not be reproducible
    sim = tmp_path / "sim.py"
    sim.write_text(
        "import numpy as np\n"
        "from pystanprivacy.privacy.mechanisms import AnalyticGaussian\n"
        "MECH = AnalyticGaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0)\n"
        "def simulate(rng):\n"
        "    return {'parameters': {'lambda': [1.0, 2.0, 3.0]}, 'private': np.array([1, 2, 3]),\n"
        "            'data': {'max_count': 80, 'noise_aware': 1}}\n"
        "def release(private, *, epsilon, seed, accountant):\n"
        "    return MECH.release(np.asarray(private, dtype=np.int64))\n"
    )
    problem = sbc.make_problem("program", program=str(GRID_PROGRAM), simulator=str(sim), epsilon=0.5)
    with pytest.raises(ValueError, match="made a release with cryptographic randomness"):
        problem.preflight()


def test_cli_seeded_goes_with_a_program_only(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["sbc", "foulds2016/beta_bernoulli", "--seeded", "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    assert "--seeded goes with a MODEL.stan file" in capsys.readouterr().err
    # with a program: the seeded releases reach the program's checks before anything runs
    with pytest.raises(SystemExit) as exc:
        cli.main(["sbc", str(GRID_PROGRAM), "--seeded", "--epsilon", "0.5", "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    assert "declares dp_grid" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
