"""Client-side local-DP mechanisms, budget split, OUE baselines, non-private baselines and
the Kosarak loader of the Kulkarni et al. (2022) study (no Stan needed).

Statistical checks use fixed seeds; each states its false-rejection rate."""

from __future__ import annotations

import gzip
import hashlib
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from pystanprivacy.experiments.kulkarni2022.kosarak import (
    KOSARAK_PREFIX_FILE,
    find_kosarak,
    histogram_records,
    load_kosarak,
    synthetic_clickstream,
    write_sessions,
)
from pystanprivacy.experiments.kulkarni2022.oue import (
    oue_frequency_estimate,
    oue_projected_estimate,
    solution_quality,
)
from pystanprivacy.models import kulkarni2022 as K
from pystanprivacy.models.kulkarni2022 import ExponentialLDP, GaussianLDP, HistogramOUE
from pystanprivacy.privacy import ldp
from pystanprivacy.privacy.mechanisms import OptimalUnaryEncoding, analytic_gaussian_sigma
from pystanprivacy.privacy.records import BudgetExceededError, PrivacyAccountant, PrivacyRecord, Release


# ------------------------------------------------------------------ budget split
def test_split_budget_default_and_custom():
    assert ldp.split_budget(1.0) == (0.5, 0.5)
    lab, feat = ldp.split_budget(2.0, c=0.3)
    assert lab == pytest.approx(0.6) and feat == pytest.approx(1.4) and lab + feat == pytest.approx(2.0)
    d = ldp.budget_split_details(2.0, 0.25)
    assert d["epsilon_label"] == pytest.approx(0.5) and d["epsilon_features"] == pytest.approx(1.5)


@pytest.mark.parametrize("c", [0.0, 1.0, -0.1, 1.5, float("nan"), float("inf")])
def test_split_budget_rejects_c_out_of_range(c):
    with pytest.raises(ValueError, match="c .*must be in \\(0, 1\\)"):
        ldp.split_budget(1.0, c)


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf")])
def test_split_budget_rejects_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        ldp.split_budget(eps)
    with pytest.raises(TypeError):
        ldp.split_budget(True)


# ------------------------------------------------------------------ clipped Laplace
def test_clipped_laplace_clips_then_adds_laplace_of_scale_width_over_epsilon():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 4, size=20_000)
    rel = ldp.clipped_laplace_reports(x, epsilon=0.7, bounds=(-5, 5), seed=1)
    rec = rel.record
    assert rec.mechanism == "laplace" and rec.sensitivity == 10.0 and rec.scale == pytest.approx(10 / 0.7)
    assert rec.bounds == (-5.0, 5.0) and rec.n == x.size and rec.details["local"] is True
    noise = rel.values - np.clip(x, -5, 5)
    # KS test of the noise against Laplace(0, 10/0.7): false rejection 0.1 %
    assert stats.kstest(noise, stats.laplace(scale=10 / 0.7).cdf).pvalue > 1e-3
    # with negligible noise the reports are the clipped values: users clip, never drop
    sharp = ldp.clipped_laplace_reports(x, epsilon=1e9, bounds=(-5, 5), seed=2).values
    assert sharp.shape == x.shape and np.allclose(sharp, np.clip(x, -5, 5), atol=1e-5)


def test_clipped_laplace_charges_once_and_nothing_on_bad_input():
    acc = PrivacyAccountant(1.0)
    ldp.clipped_laplace_reports(np.zeros((3, 5)), epsilon=0.4, bounds=(0, 1), accountant=acc, seed=0)
    assert acc.spent == (0.4, 0.0)
    with pytest.raises(ValueError, match="dimension"):
        ldp.clipped_laplace_reports(np.zeros((2, 2, 2)), epsilon=0.4, bounds=(0, 1), accountant=acc)
    with pytest.raises(ValueError, match="NaN"):
        ldp.clipped_laplace_reports([0.1, np.nan], epsilon=0.4, bounds=(0, 1), accountant=acc)
    with pytest.raises(ValueError, match="bounds"):
        ldp.clipped_laplace_reports([0.1], epsilon=0.4, bounds=(1, 0), accountant=acc)
    assert acc.spent == (0.4, 0.0)
    with pytest.raises(BudgetExceededError):
        ldp.clipped_laplace_reports([0.1], epsilon=0.7, bounds=(0, 1), accountant=acc)


# ------------------------------------------------------------------ Gaussian
def test_gaussian_reports_noise_matches_analytic_sigma_and_ratios():
    n = 40_000
    vals = np.zeros((n, 3))
    rel = ldp.gaussian_reports(
        vals,
        epsilon=1.0,
        delta=1e-5,
        sensitivity=2.0,
        scale_ratios=[1.0, 2.0, 0.5],
        seed=3,
        budget_split=ldp.budget_split_details(2.0),
    )
    sigma = analytic_gaussian_sigma(1.0, 1e-5, 2.0)
    assert rel.record.scale == pytest.approx(sigma)
    assert rel.record.details["budget_split"]["epsilon_features"] == 1.0
    # sample sd within 4 standard errors (sd of s/sigma ~ 1/sqrt(2n)): false rejection ~ 6e-5 per coordinate
    sd = rel.values.std(axis=0)
    assert np.allclose(sd, sigma * np.array([1.0, 2.0, 0.5]), rtol=4 / math.sqrt(2 * n))


def test_gaussian_reports_clips_rows_above_max_norm_and_refuses_bad_parameters_without_charging():
    acc = PrivacyAccountant(5.0, 1e-3)
    x = np.array([[0.6, 0.8], [0.9, 0.9]])
    # issue 17: the row above max_norm is clipped to it (formerly a data-dependent refusal)
    rel = ldp.gaussian_reports(x, epsilon=1, delta=1e-5, sensitivity=2, max_norm=1.0, seed=0)
    z = np.random.default_rng(0).standard_normal(x.shape) * rel.record.scale  # the seeded noise
    assert np.allclose(rel.values[0] - z[0], x[0], rtol=0, atol=1e-12)  # in bounds: unchanged
    assert np.allclose(rel.values[1] - z[1], x[1] / np.linalg.norm(x[1]), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="sensitivity=1.0 is below 2 \\* max_norm"):
        ldp.gaussian_reports(x, epsilon=1, delta=1e-5, sensitivity=1.0, max_norm=1.0, accountant=acc)
    with pytest.raises(ValueError, match="scale_ratios"):
        ldp.gaussian_reports(x, epsilon=1, delta=1e-5, sensitivity=2, scale_ratios=[1, 2, 3], accountant=acc)
    with pytest.raises(ValueError, match="delta"):
        ldp.gaussian_reports(x, epsilon=1, delta=0.0, sensitivity=2, accountant=acc)
    assert acc.spent == (0.0, 0.0)
    ldp.gaussian_reports(x / 2, epsilon=1, delta=1e-5, sensitivity=2, max_norm=1.0, accountant=acc, seed=0)
    assert acc.spent == (1.0, 1e-5)


def test_randomized_response_reports():
    rel = ldp.randomized_response_reports(np.ones(50_000, dtype=int), epsilon=1.0, seed=4)
    p = math.exp(1) / (1 + math.exp(1))
    # binomial proportion within 4.5 standard errors: false rejection < 1e-5
    assert abs(rel.values.mean() - p) < 4.5 * math.sqrt(p * (1 - p) / 50_000)
    with pytest.raises(ValueError, match="outside the declared bounds"):
        ldp.randomized_response_reports([0, 2], epsilon=1.0)


# ------------------------------------------------------------------ OUE (Eq. 31-33)
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_optimal_unary_encoding_matches_eq_31_exactly(eps):
    """mechanisms.OptimalUnaryEncoding: the one-hot bit is 1 w.p. 1/2 and every other bit
    is 1 w.p. 1/(e^eps + 1) (Eq. 31 with p = e^eps/(1 + e^eps) = Pr[other bit stays 0]),
    and the worst-case probability ratio of any report under two inputs is exactly e^eps."""
    d = 4
    mech = OptimalUnaryEncoding(epsilon=eps, d=d)
    p = math.exp(eps) / (1 + math.exp(eps))
    assert mech.p == 0.5 and mech.q == pytest.approx(1 - p)
    worst = 0.0
    for z in itertools.product([0, 1], repeat=d):
        z = np.array(z)
        lp = mech.log_prob(np.broadcast_to(z, (d, d)), np.arange(d))
        for k in range(d):
            eq31 = 0.5 * np.prod([p ** (1 - z[j]) * (1 - p) ** z[j] for j in range(d) if j != k])
            assert math.exp(lp[k]) == pytest.approx(eq31, rel=1e-12)
        worst = max(worst, float(lp.max() - lp.min()))
    assert worst == pytest.approx(eps, rel=1e-12)


def test_oue_reports_frequencies_and_aggregation():
    n, d = 30_000, 5
    rel = ldp.oue_reports(np.full(n, 2), epsilon=1.0, d=d, seed=5)
    assert rel.values.shape == (n, d) and rel.record.mechanism == "oue" and rel.record.details["local"]
    q = 1 / (math.e + 1)
    freq = rel.values.mean(axis=0)
    # binomial proportions within 4.5 standard errors: false rejection < 1e-4 overall
    assert abs(freq[2] - 0.5) < 4.5 * math.sqrt(0.25 / n)
    others = np.delete(freq, 2)
    assert np.all(np.abs(others - q) < 4.5 * math.sqrt(q * (1 - q) / n))
    pats, counts = ldp.aggregate_reports(rel.values)
    assert counts.sum() == n and len(np.unique(pats, axis=0)) == len(pats) and len(pats) <= 2**d
    with pytest.raises(ValueError, match="outside the declared bounds"):
        ldp.aggregate_reports([[0, 2, 1]])
    with pytest.raises(ValueError, match="outside the declared bounds"):
        ldp.oue_reports([0, 5], epsilon=1.0, d=5)


def test_histogram_model_data_aggregates_and_drops_uninformative_reports():
    rel = HistogramOUE.release(np.random.default_rng(0).integers(0, 3, size=(2, 500)), epsilon=1.0, d=3, seed=1)
    data = HistogramOUE().data(rel)
    assert data["R"] == 2 and data["d"] == 3 and len(data["M"]) == 2
    z = np.asarray(data["Z"])
    assert np.all((z.sum(axis=1) > 0) & (z.sum(axis=1) < 3))  # informative only
    for r in range(2):
        ones = rel.values[r].sum(axis=1)
        informative = int(((ones > 0) & (ones < 3)).sum())
        start = sum(data["M"][:r])
        assert data["w"][start : start + data["M"][r]].sum() == informative
    assert data["alpha"].tolist() == [1.0, 1.0, 1.0]


def test_models_reject_mismatched_or_malformed_releases():
    gauss = GaussianLDP.release(np.zeros(10), epsilon=1.0, seed=0)
    with pytest.raises(ValueError, match="local oue release"):
        HistogramOUE().data(gauss)
    with pytest.raises(TypeError, match="must be a Release"):
        GaussianLDP().data(np.zeros(10))
    bad_shape = Release(values=np.zeros((2, 2, 2)), record=gauss.record)
    with pytest.raises(ValueError, match="dimension"):
        GaussianLDP().data(bad_shape)
    not_local = Release(
        values=np.zeros(3),
        record=PrivacyRecord(mechanism="laplace", epsilon=1.0, sensitivity=10.0, scale=10.0, bounds=(-5, 5)),
    )
    with pytest.raises(ValueError, match="local"):
        GaussianLDP().data(not_local)
    oue = HistogramOUE.release([0, 1, 2], epsilon=1.0, d=3, seed=0)
    wrong = Release(values=np.array([[0, 1], [1, 0]]), record=oue.record)
    with pytest.raises(ValueError, match="shape"):
        HistogramOUE().data(wrong)
    not_binary = Release(values=np.array([[0, 1, 2], [1, 0, 0], [0, 0, 1]]), record=oue.record)
    with pytest.raises(ValueError, match="outside the declared bounds"):
        HistogramOUE().data(not_binary)
    with pytest.raises(ValueError, match="3 entries"):
        HistogramOUE(alpha=[1.0, 1.0, 1.0]).data(HistogramOUE.release([0, 1], epsilon=1.0, d=4, seed=0))
    with pytest.raises(ValueError, match="negative"):
        ExponentialLDP.release([1.0, -0.5], epsilon=1.0)
    with pytest.raises(ValueError, match="clipped to \\[0, b\\]"):
        ExponentialLDP().data(gauss)
    with pytest.raises(ValueError, match="epsilon"):
        GaussianLDP.release(np.zeros(3), epsilon=0.0)
    with pytest.raises(ValueError, match="mu_prior_sd"):
        GaussianLDP(mu_prior_sd=-1.0)


# ------------------------------------------------------------------ OUE point estimates
def test_oue_point_estimate_is_unbiased_and_projection_is_on_the_simplex():
    theta = np.array([0.7, 0.2, 0.1])
    rng = np.random.default_rng(6)
    x = rng.choice(3, size=(200, 2000), p=theta)
    rel = ldp.oue_reports(x, epsilon=0.5, d=3, seed=7)
    raw = oue_frequency_estimate(rel.values, 0.5)
    p, q = 0.5, 1 / (math.exp(0.5) + 1)
    # var of one estimate: q(1-q)/(N (p-q)^2) (Wang et al. 2017, Eq. 6) plus the category
    # term; the mean of 200 is within 4.5 of its standard errors: false rejection < 1e-4
    se = np.sqrt((q * (1 - q) + theta * (1 - p - q)) / (2000 * (p - q) ** 2) / 200)
    assert np.all(np.abs(raw.mean(axis=0) - theta) < 4.5 * se)
    proj = oue_projected_estimate(rel.values, 0.5)
    assert np.allclose(proj.sum(axis=1), 1.0) and np.all(proj >= 0)
    flags = solution_quality(np.array([[0.6, 0.3, 0.1], [0.6, 0.0, 0.4], [0.2, 0.7, 0.1]]), theta)
    assert flags["unusable"].tolist() == [False, True, False]
    assert flags["misordered"].tolist() == [False, True, True]
    with pytest.raises(ValueError, match="distinct"):
        solution_quality([0.5, 0.5], [0.5, 0.5])


def test_nonprivate_baselines_are_the_conjugate_posteriors():
    x = np.random.default_rng(8).choice(4, size=400, p=[0.4, 0.3, 0.2, 0.1])
    post = HistogramOUE().fit_nonprivate(x, d=4, draws=20_000, seed=1)
    dr = post.draws("theta")
    exact = (np.bincount(x, minlength=4) + 1) / (400 + 4)
    assert dr.shape == (20_000, 4) and np.allclose(dr.mean(axis=0), exact, atol=0.003)  # MC se ~ 3.5e-4: > 8 se
    e = np.random.default_rng(9).exponential(1 / 2.5, size=300)
    th = ExponentialLDP().fit_nonprivate(e, draws=20_000, seed=2).draws("theta")
    assert th.mean() == pytest.approx((2 + 300) / (2 + e.sum()), rel=0.01)
    g = np.random.default_rng(10).normal(1.0, 2.0, size=2000)
    gpost = GaussianLDP().fit_nonprivate(g, draws=20_000, seed=3)
    mu, sigma = gpost.draws("mu"), gpost.draws("sigma")
    # with 2000 points the posterior is close to (x̄, s) with sd s/sqrt(n) and s/sqrt(2n)
    assert mu.mean() == pytest.approx(g.mean(), abs=0.01)
    assert sigma.mean() == pytest.approx(g.std(ddof=1), rel=0.01)
    assert mu.std() == pytest.approx(g.std() / math.sqrt(2000), rel=0.05)
    assert sigma.std() == pytest.approx(g.std() / math.sqrt(2 * 2000), rel=0.05)
    # every baseline is a Posterior (one chain of exact draws) that says it is non-private
    for p in (post, gpost):
        assert p.privacy == "non-private" and p.num_chains == 1 and p.backend == "numpy-exact"
    # the model's prior is used: a Dirichlet(5) prior pulls towards uniform
    assert HistogramOUE(alpha=5.0).fit_nonprivate(x, d=4, draws=20_000, seed=1).draws("theta").mean(
        axis=0
    ) == pytest.approx((np.bincount(x, minlength=4) + 5) / (400 + 20), abs=0.003)
    with pytest.raises(ValueError, match="x contains 1 negative value"):
        ExponentialLDP().fit_nonprivate(np.array([1.0, -1.0]))


def test_former_nonprivate_draw_functions_warn_and_give_the_same_draws():
    x = np.random.default_rng(8).choice(3, size=100)
    e = np.random.default_rng(9).exponential(size=50)
    g = np.random.default_rng(10).normal(size=50)
    for old, new in (
        (
            lambda: K.histogram_nonprivate_draws(x, 3, alpha=2.0, draws=50, seed=1),
            lambda: HistogramOUE(alpha=2.0).fit_nonprivate(x, d=3, draws=50, seed=1).draws("theta"),
        ),
        (
            lambda: K.exponential_nonprivate_draws(e, shape=3.0, rate=1.0, draws=50, seed=2),
            lambda: (
                ExponentialLDP(theta_prior_shape=3.0, theta_prior_rate=1.0)
                .fit_nonprivate(e, draws=50, seed=2)
                .draws("theta")
            ),
        ),
        (
            lambda: K.gaussian_nonprivate_draws(g, mu_prior_sd=3.0, draws=50, seed=3),
            lambda: np.column_stack(
                [GaussianLDP(mu_prior_sd=3.0).fit_nonprivate(g, draws=50, seed=3).draws(v) for v in ("mu", "sigma")]
            ),
        ),
    ):
        with pytest.warns(DeprecationWarning, match="is deprecated and will be removed in 0.3; use"):
            a = old()
        np.testing.assert_array_equal(a, new())


# ------------------------------------------------------------------ Kosarak
def test_kosarak_loader_reads_the_format_and_histogram_records(tmp_path, monkeypatch):
    sessions = synthetic_clickstream(3000, 500, seed=0)
    assert all(s.size >= 1 and np.unique(s).size == s.size for s in sessions)
    path = write_sessions(sessions, tmp_path / "kosarak.dat")
    loaded = load_kosarak(path)
    assert len(loaded) == len(sessions) and all(np.array_equal(a, b) for a, b in zip(loaded, sessions))
    assert len(load_kosarak(tmp_path, max_sessions=10)) == 10  # a folder works too
    # gzip is recognised by content, whatever the name; without a path the prefix's name is looked
    # for in $PYSTANPRIVACY_DATA before the shipped data/
    packed = tmp_path / "env" / KOSARAK_PREFIX_FILE
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(path.read_bytes()))
    (tmp_path / "clicks.txt").write_bytes(packed.read_bytes())
    monkeypatch.setenv("PYSTANPRIVACY_DATA", str(packed.parent))
    assert find_kosarak() == packed
    for source in (None, tmp_path / "clicks.txt"):
        assert all(np.array_equal(a, b) for a, b in zip(load_kosarak(source), sessions, strict=True))
    cats, items = histogram_records(loaded, d=10, n_records=1000, top=50, seed=1)
    assert cats.min() >= 0 and cats.max() <= 9 and items.size == 10 and np.unique(items).size == 10
    assert cats.size == min(1000, sum(np.isin(s, items).any() for s in loaded))
    # every record's category is an item its session clicked: check on a fresh small case
    small = [np.array([1, 2]), np.array([3]), np.array([2, 3, 4])]
    c, it = histogram_records(small, d=2, n_records=10, top=4, seed=2)
    assert c.size == sum(np.isin(s, it).any() for s in small)


def test_kosarak_loader_errors(tmp_path, monkeypatch):
    monkeypatch.delenv("PYSTANPRIVACY_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match=f"{tmp_path}.*fimi.uantwerpen.be.*never downloaded"):
        load_kosarak(tmp_path)
    bad = tmp_path / "kosarak.dat"
    bad.write_text("1 2 3\n4 x 5\n")
    with pytest.raises(ValueError, match="line 2"):
        load_kosarak(bad)
    bad.write_bytes(gzip.compress(b"1 2 3\n4 5\n")[:-12])  # truncated gzip
    with pytest.raises(ValueError, match="starts like a gzip file but cannot be decompressed"):
        load_kosarak(bad)
    bad.write_bytes(gzip.compress(b"\n\n"))
    with pytest.raises(ValueError, match="holds no sessions"):
        load_kosarak(bad)


#: data/README.md's digest of the shipped Kosarak prefix
KOSARAK_PREFIX_SHA256 = "d3719086a1bbc7228dbe16bb0d4c0e45d6db7905c5096b858b8f25c04e9f1678"


def test_the_shipped_kosarak_prefix_is_read_whole(monkeypatch):
    """The shipped prefix is the file data/README.md describes (its sha256), and the loader reads
    all of it: 36,683 transactions and 294,022 item occurrences as the provenance note counts them,
    the first lines as an independent read (gzip + split) gives them."""
    monkeypatch.delenv("PYSTANPRIVACY_DATA", raising=False)
    file = find_kosarak()
    assert file.name == KOSARAK_PREFIX_FILE and file.parent.name == "data"
    assert hashlib.sha256(file.read_bytes()).hexdigest() == KOSARAK_PREFIX_SHA256
    sessions = load_kosarak()
    assert len(sessions) == 36_683 and sum(s.size for s in sessions) == 294_022
    with gzip.open(file, "rt") as fh:
        first = [[int(v) for v in next(fh).split()] for _ in range(3)]
    assert [s.tolist() for s in sessions[:3]] == first == [[1, 2, 3], [1], [4, 5, 6, 7]]
