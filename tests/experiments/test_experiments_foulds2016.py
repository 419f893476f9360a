"""Foulds et al. (2016) experiments: the Stan beta-Bernoulli models against their closed
forms, the temperatures of the paper's settings, Figure 1, Figure 2's qualitative result,
Theorems 4-5 and the adversarial experiment of Supplement A.

Statistical tests use fixed seeds (so they are deterministic); the stated false-rejection
rate is the probability, over seeds, that a correct implementation fails the assertion.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import stats
from scipy.integrate import trapezoid

from pystanprivacy.experiments.foulds2016 import beta_bernoulli as F
from pystanprivacy.models.foulds2016 import BetaBernoulli, BetaBernoulliOPS, ops_temperature

KS_ALPHA = 1e-3  # per KS test
Z_MAX = 4.0  # |z| < 4: false rejection 6e-5 per two-sided z test
STAN = dict(chains=2, warmup=500, draws=300)


# ------------------------------------------------------------------ temperatures
def test_temperature_for_the_papers_settings():
    # Figure 1: eps = 1, a0 = 0.2 -> T = 2 log(0.8/0.2) = 2 log 4 = 2.77 ("T = 2.7" in the paper)
    assert ops_temperature(1.0, 0.2) == pytest.approx(2 * math.log(4))
    assert round(ops_temperature(1.0, 0.2), 2) == 2.77
    # Figure 2: eps = 0.1, a0 = 0.05 -> T = 2 log(19) / 0.1
    assert ops_temperature(0.1, 0.05) == pytest.approx(2 * math.log(19) / 0.1)
    # plain posterior sampling once eps >= 2 Delta
    assert ops_temperature(2 * math.log(9), 0.1) == 1.0
    assert BetaBernoulliOPS(a0=0.05).temperature(0.1) == pytest.approx(58.8887796)


# ------------------------------------------------------------------ closed forms
@pytest.mark.parametrize(
    "a, b, lo, hi",
    [
        (3.0, 4.0, 0.2, 0.8),
        (1.0, 5001.0, 0.1, 0.9),
        (1.0, 20001.0, 0.1, 0.9),
        (20001.0, 1.0, 0.1, 0.9),
        (7.5, 3000.5, 0.05, 0.95),
    ],
)
def test_log_truncated_beta_mass_matches_mpmath(a, b, lo, hi):
    # includes masses far below float range (0.9^20001 ~ 1e-915): log space is essential
    mpmath.mp.dps = 50
    if a < b:  # mass below lo: integrate the mirrored Beta(b, a) over [1 - hi, 1 - lo] (no cancellation)
        a, b, lo, hi = b, a, 1 - hi, 1 - lo
        exact = mpmath.log(mpmath.betainc(a, b, lo, hi, regularized=True))
        a, b, lo, hi = b, a, 1 - hi, 1 - lo
    else:
        exact = mpmath.log(mpmath.betainc(a, b, lo, hi, regularized=True))
    assert F.log_truncated_beta_mass(a, b, lo, hi) == pytest.approx(float(exact), rel=1e-10, abs=1e-10)


def test_ops_closed_form_density_and_cdf_are_consistent():
    grid = np.linspace(0.0, 1.0, 20001)
    dens = np.exp(F.ops_log_density(grid, 5, 15, a0=0.2, temperature=2.77))
    assert np.all(dens[(grid < 0.2) | (grid > 0.8)] == 0)
    assert trapezoid(dens, grid) == pytest.approx(1.0, abs=2e-3)
    cdf = F.ops_cdf(grid, 5, 15, a0=0.2, temperature=2.77)
    assert cdf[0] == 0 and cdf[-1] == pytest.approx(1.0)
    mid = np.searchsorted(grid, 0.4)
    assert cdf[mid] == pytest.approx(trapezoid(dens[: mid + 1], grid[: mid + 1]), abs=2e-3)


# ------------------------------------------------------------------ Stan vs closed form
def _last_iteration(post) -> np.ndarray:
    """The state of every component at the last iteration of every chain: (chains, R).
    At stationarity the joint state is a draw from the product target, so these are
    independent draws (components of one iteration, and chains, are independent)."""
    return post.draws("p", combine_chains=False)[:, -1, :]


def _standardised_mean_z(post, mean: np.ndarray, sd: np.ndarray) -> float:
    """z of the average over components of (posterior mean of the draws − exact mean)/sd;
    its standard error comes from the spread across the R independent components."""
    d = (post.draws("p").mean(axis=0) - mean) / sd
    return float(d.mean() / (d.std(ddof=1) / math.sqrt(len(d))))


def test_stan_nonprivate_posterior_is_the_closed_form_beta(beta_bernoulli_model):
    model = BetaBernoulli(prior_alpha=1.0, prior_beta=2.0)
    x = F.bernoulli_data(11, 500, 20, 0.3)  # 500 data sets, different counts
    post = model.fit_nonprivate(x, seed=1, **STAN)
    ab = model.beta_parameters(np.stack([x.sum(1), 20 - x.sum(1)], axis=1))
    # PIT of independent draws under each component's own Beta must be uniform
    # (KS at alpha 1e-3: false rejection 1e-3); a mismatch of components and counts fails it
    u = stats.beta.cdf(_last_iteration(post), ab[:, 0], ab[:, 1]).ravel()
    assert stats.kstest(u, "uniform").pvalue > KS_ALPHA
    dist = stats.beta(ab[:, 0], ab[:, 1])
    assert abs(_standardised_mean_z(post, dist.mean(), dist.std())) < Z_MAX


def test_stan_nonprivate_draws_ks_against_scipy_beta(beta_bernoulli_model):
    x = np.tile(F.bernoulli_data(12, 1, 20, 0.3), (500, 1))  # one data set, 500 copies
    post = BetaBernoulli().fit_nonprivate(x, seed=2, **STAN)
    s = int(x[0].sum())
    draws = _last_iteration(post).ravel()  # 1000 independent draws
    assert stats.kstest(draws, stats.beta(s + 1, 20 - s + 1).cdf).pvalue > KS_ALPHA  # false rejection 1e-3
    # power: the same test rejects the posterior of a data set with two more successes
    assert stats.kstest(draws, stats.beta(s + 3, 20 - s + 1).cdf).pvalue < 1e-6


def test_stan_laplace_posterior_is_the_beta_of_the_released_counts(beta_bernoulli_model):
    model = BetaBernoulli()
    x = np.tile(F.bernoulli_data(13, 1, 50, 0.3), (500, 1))  # 500 noise draws on one data set
    release = model.release(x, epsilon=0.5, seed=3)
    counts = np.asarray(release.values)
    assert counts.shape == (500, 2) and np.all(counts >= 0)
    assert np.std(counts[:, 0]) > 3.0  # the noise is there (scale 2/eps = 4)
    post = model.fit(release, seed=4, **STAN)
    ab = model.beta_parameters(counts)
    u = stats.beta.cdf(_last_iteration(post), ab[:, 0], ab[:, 1]).ravel()
    assert stats.kstest(u, "uniform").pvalue > KS_ALPHA  # false rejection 1e-3
    dist = stats.beta(ab[:, 0], ab[:, 1])
    assert abs(_standardised_mean_z(post, dist.mean(), dist.std())) < Z_MAX
    # the posterior follows the released counts, not the true ones
    true = model.beta_parameters(np.array([x[0].sum(), 50 - x[0].sum()]))
    u_true = stats.beta.cdf(_last_iteration(post), *true).ravel()
    assert stats.kstest(u_true, "uniform").pvalue < 1e-6


def test_stan_ops_target_is_the_truncated_tempered_beta(beta_bernoulli_ops_model):
    ops = BetaBernoulliOPS(a0=0.2)
    x = F.bernoulli_data(14, 500, 20, 0.3)
    epsilon = 1.0
    temperature = ops.temperature(epsilon)
    batch = ops.sample_batch(x, epsilon=epsilon, seed=5, keep_posterior=True, **F.OPS_SAMPLER)
    # with the experiments' OPS settings refusals (R-hat/ESS) are rare
    assert batch.released_mask.mean() > 0.98 and np.all(np.isnan(batch.params["p"]) == ~batch.released_mask)
    last = _last_iteration(batch.posterior)
    assert np.all((last >= 0.2) & (last <= 0.8))
    s = x.sum(1)
    u = np.stack([F.ops_cdf(last[:, r], s[r], 20 - s[r], a0=0.2, temperature=temperature) for r in range(500)], 1)
    assert stats.kstest(u.ravel(), "uniform").pvalue > KS_ALPHA  # false rejection 1e-3
    # power: the untempered (T = 1) truncated posterior is rejected
    u1 = np.stack([F.ops_cdf(last[:, r], s[r], 20 - s[r], a0=0.2, temperature=1.0) for r in range(500)], 1)
    assert stats.kstest(u1.ravel(), "uniform").pvalue < 1e-6
    # means within Monte-Carlo error of the closed form (numerical integration)
    grid = np.linspace(0.2, 0.8, 4001)
    mean, sd = np.empty(500), np.empty(500)
    for r in range(500):
        dens = np.exp(F.ops_log_density(grid, s[r], 20 - s[r], a0=0.2, temperature=temperature))
        mean[r] = trapezoid(grid * dens, grid)
        sd[r] = math.sqrt(trapezoid((grid - mean[r]) ** 2 * dens, grid))
    assert abs(_standardised_mean_z(batch.posterior, mean, sd)) < Z_MAX


# ------------------------------------------------------------------ Figure 1
@pytest.fixture(scope="module")
def figure1_table(beta_bernoulli_model, beta_bernoulli_ops_model):
    return F.figure1(seed=0)


def test_figure1_table(figure1_table):
    t = figure1_table
    assert set(t["curve"]) == {"non-private", "ops", "laplace"}
    assert t.loc[t["curve"] == "laplace", "replicate"].nunique() == 30
    assert t.groupby(["curve", "replicate"]).size().eq(200).all()
    ops = t[t["curve"] == "ops"]
    assert ops["temperature"].iloc[0] == pytest.approx(2.7726, abs=1e-4)
    assert np.all(ops.loc[(ops["p"] < 0.2) | (ops["p"] > 0.8), ["density_stan", "density_exact"]] == 0)
    nonpriv = t[t["curve"] == "non-private"]
    assert nonpriv["successes"].iloc[0] + nonpriv["failures"].iloc[0] == 20
    lap = t[t["curve"] == "laplace"].groupby("replicate")["successes"].first()
    assert lap.nunique() == 30  # 30 different noise draws on the same data
    dp = 1 / 200
    for (curve, rep), g in t.groupby(["curve", "replicate"]):
        assert g["density_exact"].sum() * dp == pytest.approx(1.0, abs=0.03), (curve, rep)
        assert g["density_stan"].sum() * dp == pytest.approx(1.0, abs=0.03), (curve, rep)
        # the Stan-draws density estimate is close to the closed form (L1 distance; KDE bias
        # plus Monte-Carlo error of 10 000 draws is a few hundredths)
        l1 = (g["density_stan"] - g["density_exact"]).abs().sum() * dp
        assert l1 < 0.1, (curve, rep, l1)
        assert g["converged"].all()
    # non-private posterior mean from the Stan draws vs Beta(6, 16) mean (MC se ~ 0.001)
    s, f = nonpriv["successes"].iloc[0], nonpriv["failures"].iloc[0]
    assert nonpriv["draws_mean"].iloc[0] == pytest.approx((s + 1) / (s + f + 2), abs=0.01)


# ------------------------------------------------------------------ Figure 2
@pytest.fixture(scope="module")
def figure2_summary(beta_bernoulli_model, beta_bernoulli_ops_model):
    table = F.figure2(ns=(10, 10_000), repeats=200, seed=1, progress=False)
    assert len(table) == 2 * 3 * 200
    return F.summarise_figure2(table).set_index(["method", "n_obs"])


def test_figure2_laplace_beats_ops_at_large_n_and_approaches_nonprivate(figure2_summary):
    err = figure2_summary["mean_abs_error"]
    # each mean has a relative standard error of about 6 % (200 repeats); the margins below
    # are > 5 standard errors of the ratios (false rejection < 1e-6)
    assert err["laplace", 10_000] < 0.5 * err["ops", 10_000]  # T = 58.9: OPS stays ~sqrt((1+T)/2) wider
    assert err["laplace", 10_000] < 1.6 * err["non-private", 10_000]  # Laplace ~ non-private at large N
    ratio_small = err["laplace", 10] / err["non-private", 10]
    ratio_large = err["laplace", 10_000] / err["non-private", 10_000]
    assert ratio_large < 0.5 * ratio_small  # ...and approaches it as N grows
    # at the smallest N the two private methods are close (the paper: OPS slightly better
    # at N ~ 10); the big gap opens only with N
    assert err["ops", 10] < 1.5 * err["laplace", 10]
    assert err["ops", 10_000] / err["laplace", 10_000] > 2 * err["ops", 10] / err["laplace", 10]
    assert (err.xs(10_000, level="n_obs") < err.xs(10, level="n_obs")).all()


def test_figure2_reports_refusals(figure2_summary):
    s = figure2_summary
    assert {"n_released", "n_refused"} <= set(s.columns)
    assert (s["n_released"] + s["n_refused"] == 200).all()
    assert (s.xs("laplace", level="method")["n_refused"] == 0).all()  # only OPS is gated
    assert s["n_released"].min() >= 180  # 2 chains x 1000 draws: refusals are rare


# ------------------------------------------------------------------ Theorems 4-5
def test_theorems_4_and_5_asymptotic_variance(beta_bernoulli_model, beta_bernoulli_ops_model):
    table = F.theorems(repeats=200, seed=2, progress=False)
    s = F.summarise_theorems(table).set_index("method")
    temperature = 2 * math.log(19)
    assert s.loc["ops", "temperature"] == pytest.approx(temperature)
    assert s.loc["laplace", "theory"] == pytest.approx(2 * 0.3 * 0.7)
    assert s.loc["ops", "theory"] == pytest.approx((1 + temperature) * 0.3 * 0.7)
    # estimate within 4 Monte-Carlo standard errors of the theory (false rejection ~6e-5
    # each; the O(1/N) terms at N = 1e4 are < 1 % against a ~10 % MC error)
    assert (s["z"].abs() < Z_MAX).all(), s[["estimate", "mc_se", "theory", "z"]]
    assert s.loc["ops", "estimate"] > 2 * s.loc["laplace", "estimate"]  # (1+T)/2 = 3.4


# ------------------------------------------------------------------ Supplement A
def test_local_epsilon_matches_direct_numerical_integration():
    # independent check: normalising constants by mpmath quadrature, max over the grid
    a0 = 0.1
    mpmath.mp.dps = 30
    grid = np.linspace(a0, 1 - a0, 2001)

    def log_density(s, f):
        z = mpmath.quad(lambda p: p**s * (1 - p) ** f, [a0, 1 - a0])
        return s * np.log(grid) + f * np.log1p(-grid) - float(mpmath.log(z))

    for s, f in [(0, 5), (2, 7), (4, 4)]:
        expected = max(
            np.max(np.abs(log_density(s, f) - log_density(s2, f2)))
            for s2, f2 in [(s - 1, f + 1), (s + 1, f - 1)]
            if s2 >= 0 and f2 >= 0
        )
        assert F.local_epsilon(s, f, a0=a0, grid=grid) == pytest.approx(expected, rel=1e-9)


def test_adversarial_local_epsilon_rises_towards_but_never_exceeds_2_delta():
    table = F.adversarial(a0=0.1, n_max=400)
    worst = 2 * math.log(9)
    assert table["worst_case_epsilon"].iloc[0] == pytest.approx(worst)
    eps = table["local_epsilon"].to_numpy()
    assert np.all(eps <= worst + 1e-12)
    assert np.all(np.diff(eps) >= -1e-12)  # the greedy adversary never loses ground
    assert eps[0] < worst - 2.0  # far from the worst case with one point
    assert eps[-1] > worst - 0.05  # and close to it after 400
    assert table["local_epsilon"].equals(table[["epsilon_if_success", "epsilon_if_failure"]].max(axis=1))
    # a balanced data set of the same size is much cheaper than the adversary's
    assert F.local_epsilon(200, 200, a0=0.1) < eps[-1] - 1.5


def test_adversarial_with_temperature_respects_its_bound():
    table = F.adversarial(a0=0.1, temperature=2.0, n_max=200)
    bound = 2 * math.log(9) / 2.0
    assert table["worst_case_epsilon"].iloc[0] == pytest.approx(bound)
    assert table["local_epsilon"].max() <= bound + 1e-12


def test_one_draw_task_rejects_unknown_method():
    with pytest.raises(ValueError, match="method must be one of"):
        F.one_draw_task(
            method="gibbs",
            n_obs=10,
            repeats=2,
            p=0.1,
            a0=0.05,
            epsilon=0.1,
            data_seed=0,
            sampler=F.BATCH_SAMPLER,
            seed=0,
        )
    with pytest.raises(ValueError, match="chains"):
        F.figure2(ns=(10,), repeats=2, sampler={"chains": 1})
