"""Naive-Bayes HMM (Foulds et al. 2016, Sec. 4-5, E): Laplace release of the count vectors,
the OPS sensitivity and temperature, label alignment and the held-out likelihood -- the
parts that need no Stan run."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from pystanprivacy.models.foulds2016_hmm import (
    COUNT_SENSITIVITY,
    CountLayout,
    NaiveBayesHMM,
    NaiveBayesHMMOPS,
    align_states,
    heldout_log_likelihood,
    kmeans_initial_values,
    match_states,
    neighbour_state_log_weights,
    ops_log_likelihood_sensitivity,
    ops_temperature,
    ops_truncation,
    reference_values,
    state_agreement,
)
from pystanprivacy.privacy.records import BudgetExceededError, PrivacyAccountant, Release
from pystanprivacy.sampling.backends.base import RawFit, SamplerSettings
from pystanprivacy.sampling.posterior import Posterior

SIZES = (3, 4, 2)


def _counts(rng, R=3, T=5, n=50, sizes=SIZES):
    """Consistent counts: every cell's features count the same n entries."""
    blocks = [rng.multinomial(n, np.full(s, 1 / s), size=(R, T)) for s in sizes]
    return np.concatenate(blocks, axis=2)


# ------------------------------------------------------------------ Laplace release
def test_release_record_and_projection():
    rng = np.random.default_rng(0)
    counts = _counts(rng)
    rel = NaiveBayesHMM.release(counts, epsilon=3.0, feature_sizes=SIZES, seed=1)
    rec = rel.record
    assert (rec.mechanism, rec.epsilon, rec.delta, rec.sensitivity, rec.sensitivity_norm) == (
        "laplace",
        3.0,
        0.0,
        2.0,
        "l1",
    )
    assert rec.neighbouring == "replace-one" and rec.n == 3 * 5 * 50
    assert [f["epsilon"] for f in rec.details["per_feature"]] == [1.0, 1.0, 1.0]
    assert rec.scale == pytest.approx(2.0) and rec.details["projection"] == "nonnegative"
    assert "sequentially" in rec.details["composition"] and rec.details["seeded"] is True
    assert rel.values.shape == counts.shape and np.all(rel.values >= 0)
    assert not np.array_equal(rel.values, counts)
    assert CountLayout.from_dict(rec.details["layout"]).feature_sizes == SIZES


def test_release_noise_is_laplace_with_scale_two_over_epsilon_d():
    # counts of 10^4 per value: the projection never binds, so value - count is the noise.
    # KS per feature at alpha = 1e-3 each (false rejection <= 3e-3 overall; fixed seed).
    sizes = (2, 3, 5)
    counts = np.full((20, 50, sum(sizes)), 10_000)
    counts[:, :, :2] = 15_000  # 30000 entries per cell in every feature
    counts[:, :, 2:5] = 10_000
    counts[:, :, 5:] = 6_000
    eps = (0.5, 1.0, 4.0)
    rel = NaiveBayesHMM.release(counts, epsilon_per_feature=list(eps), feature_sizes=sizes, seed=7)
    noise = rel.values - counts
    pos = 0
    for s, e in zip(sizes, eps):
        block = noise[:, :, pos : pos + s].ravel()
        assert stats.kstest(block, stats.laplace(scale=2.0 / e).cdf).pvalue > 1e-3
        pos += s
    assert rel.record.epsilon == pytest.approx(5.5) and rel.record.scale is None
    assert [f["scale"] for f in rel.record.details["per_feature"]] == [4.0, 2.0, 0.5]


def test_release_charges_the_accountant_once_and_refuses_overspend():
    counts = _counts(np.random.default_rng(1))
    acct = PrivacyAccountant(5.0)
    NaiveBayesHMM.release(counts, epsilon=3.0, feature_sizes=SIZES, accountant=acct, seed=2)
    assert acct.spent == pytest.approx((3.0, 0.0)) and len(acct.ledger) == 1
    with pytest.raises(BudgetExceededError):
        NaiveBayesHMM.release(counts, epsilon=3.0, feature_sizes=SIZES, accountant=acct, seed=3)
    assert acct.spent[0] == pytest.approx(3.0)


def test_release_rejects_bad_input_without_printing_data():
    counts = _counts(np.random.default_rng(2))
    with pytest.raises(ValueError, match="exactly one of epsilon"):
        NaiveBayesHMM.release(counts, feature_sizes=SIZES)
    with pytest.raises(ValueError, match="exactly one of epsilon"):
        NaiveBayesHMM.release(counts, epsilon=1.0, epsilon_per_feature=[1, 1, 1], feature_sizes=SIZES)
    with pytest.raises(ValueError, match=r"one entry per feature \(3\)"):
        NaiveBayesHMM.release(counts, epsilon_per_feature=[1, 1], feature_sizes=SIZES)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        NaiveBayesHMM.release(counts, epsilon=0.0, feature_sizes=SIZES)
    with pytest.raises(ValueError, match="feature_sizes is required"):
        NaiveBayesHMM.release(counts, epsilon=1.0)
    with pytest.raises(ValueError, match="feature_sizes sum to 8"):
        NaiveBayesHMM.release(counts, epsilon=1.0, feature_sizes=(3, 3, 2))
    bad = counts.copy()
    bad[0, 0, 0] = -7
    with pytest.raises(ValueError, match="negative") as err:
        NaiveBayesHMM.release(bad, epsilon=1.0, feature_sizes=SIZES)
    assert "-7" not in str(err.value)
    bad = counts.copy()
    bad[1, 2, 0] += 1  # feature 1 of one cell counts one more entry than the others
    with pytest.raises(ValueError, match=r"counts of 1 cell\(s\) disagree between features"):
        NaiveBayesHMM.release(bad, epsilon=1.0, feature_sizes=SIZES)
    with pytest.raises(ValueError, match="non-integer"):
        NaiveBayesHMM.release(counts + 0.5, epsilon=1.0, feature_sizes=SIZES)


def test_fit_rejects_a_foreign_release():
    model = NaiveBayesHMM(2)
    with pytest.raises(TypeError, match="release must be a Release"):
        model.fit(np.zeros((3, 5, 9)))
    rel = NaiveBayesHMM.release(_counts(np.random.default_rng(3)), epsilon=1.0, feature_sizes=SIZES, seed=1)
    forged = Release(values=rel.values, record=rel.record.__class__(mechanism="gaussian", epsilon=1.0, delta=0.1))
    with pytest.raises(ValueError, match="must come from NaiveBayesHMM.release"):
        model.fit(forged)
    with pytest.raises(ValueError, match="without any cell"):
        model.data(rel.values, CountLayout.from_dict(rel.record.details["layout"]), heldout=np.ones((3, 5), dtype=bool))


# ------------------------------------------------------------- OPS sensitivity
def test_sensitivity_formula_for_the_papers_truncation():
    sizes = (8, 65, 2, 2, 2)
    for m in (10.0, 100.0):
        a0 = ops_truncation(sizes, m)
        np.testing.assert_allclose(a0, 1 / (m * np.array(sizes)))
        expected = sum(math.log((m - 1) * k + 1) for k in sizes)
        assert ops_log_likelihood_sensitivity(sizes, a0) == pytest.approx(expected)
        assert ops_temperature(5.0, sizes, a0) == pytest.approx(2 * expected / 5.0)
    assert ops_temperature(1e6, sizes, ops_truncation(sizes, 10.0)) == 1.0  # never below 1
    with pytest.raises(ValueError, match="multiplier M must be a finite number > 1"):
        ops_truncation(sizes, 1.0)
    with pytest.raises(ValueError, match="0 < a0_d < 1/K_d"):
        ops_log_likelihood_sensitivity((2, 3), [0.5, 0.1])


def test_sensitivity_bounds_every_replacement_and_is_attained():
    """Δ bounds |log p(x | theta) - log p(x' | theta')| over entries x, x' and truncated
    emission distributions theta, theta' (two states: the entry may move to a cell in
    another state), and a vertex of the truncated simplex attains it."""
    sizes = (2, 3, 4)
    a0 = np.array([0.05, 0.02, 0.1])
    delta = ops_log_likelihood_sensitivity(sizes, a0)
    rng = np.random.default_rng(4)

    def truncated(k, a):  # random points and all vertices of {theta >= a}
        pts = a + (1 - k * a) * rng.dirichlet(np.ones(k), size=200)
        return np.vstack([pts, a + (1 - k * a) * np.eye(k)])

    log_max = sum(np.log(truncated(k, a)).max() for k, a in zip(sizes, a0))
    log_min = sum(np.log(truncated(k, a)).min() for k, a in zip(sizes, a0))
    # sup over x, theta of sum_d log theta_{x_d} minus inf over x', theta' (features separate)
    assert log_max - log_min == pytest.approx(delta, rel=1e-12)
    worst = 0.0
    for _ in range(2000):
        thetas = [truncated(k, a)[rng.integers(200)] for k, a in zip(sizes, a0)]
        others = [truncated(k, a)[rng.integers(200)] for k, a in zip(sizes, a0)]
        x = [rng.integers(k) for k in sizes]
        y = [rng.integers(k) for k in sizes]
        diff = sum(math.log(t[i]) - math.log(o[j]) for t, o, i, j in zip(thetas, others, x, y))
        worst = max(worst, abs(diff))
    assert worst <= delta


def test_ops_record_and_input_checks():
    ops = NaiveBayesHMMOPS(3, multiplier=10.0)
    layout = CountLayout((2, 4), ("a", "b"), ("r1", "r2"), ("t1", "t2", "t3"))
    rec = ops.record(2.0, layout, n=100)
    delta = math.log(9 * 2 + 1) + math.log(9 * 4 + 1)
    assert rec.mechanism == "ops" and rec.epsilon == 2.0 and rec.sensitivity == pytest.approx(delta)
    assert rec.details["temperature"] == pytest.approx(delta)  # 2 Δ / ε with ε = 2
    assert rec.details["a0"] == pytest.approx([1 / 20, 1 / 40])
    assert rec.details["convergence_override"] is False
    with pytest.raises(ValueError, match="n_states must be an int >= 1"):
        NaiveBayesHMMOPS(0)
    with pytest.raises(ValueError, match="multiplier M must be"):
        NaiveBayesHMMOPS(2, multiplier=0.5)
    with pytest.raises(TypeError, match="must be a Release made by NaiveBayesHMMOPS"):
        NaiveBayesHMMOPS.unpack(Release(values=np.zeros(3), record=rec.__class__(mechanism="laplace", epsilon=1.0)))


# ------------------------------------------------------------------ labels & held-out
def _posterior(theta, A, z, lp=None):
    chains, draws = theta.shape[:2]
    variables = {"theta": theta, "A": A, "log_lik": np.zeros((chains, draws)), "z": z.astype(float)}
    sampler = {} if lp is None else {"lp__": lp}
    return Posterior(
        RawFit(variables=variables, sampler=sampler),
        model="test",
        backend="none",
        settings=SamplerSettings(chains=chains, draws=draws),
        elapsed=0.0,
    )


def test_align_states_undoes_a_per_chain_relabelling():
    rng = np.random.default_rng(5)
    K, J, draws = 3, 6, 40
    base = rng.dirichlet(np.ones(J), size=K)
    theta0 = base[None] + 0.001 * rng.normal(size=(draws, K, J))
    A0 = rng.dirichlet(np.ones(K), size=(draws, K + 1))
    z0 = rng.integers(1, K + 1, size=(draws, 2, 4))
    perm = np.array([2, 0, 1])  # chain 1's label k is chain 0's label perm[k]
    theta1 = theta0[:, perm]
    A1 = np.concatenate([A0[:, :1, perm], A0[:, 1:][:, perm][:, :, perm]], axis=1)
    z1 = np.argsort(perm)[z0 - 1] + 1
    post = _posterior(
        np.stack([theta0, theta1]),
        np.stack([A0, A1]),
        np.stack([z0, z1]),
        lp=np.stack([np.zeros(draws), np.ones(draws)]),
    )  # chain 1 is the reference
    aligned = align_states(post)
    np.testing.assert_allclose(aligned.theta[:draws], aligned.theta[draws:])
    np.testing.assert_allclose(aligned.A[:draws], aligned.A[draws:])
    np.testing.assert_array_equal(aligned.z[:draws], aligned.z[draws:])
    assert aligned.permutations[1].tolist() == [0, 1, 2]
    assert sorted(aligned.permutations[0].tolist()) == [0, 1, 2] and aligned.permutations[0].tolist() != [0, 1, 2]
    modal = aligned.modal_states()
    assert modal.shape == (2, 4) and modal.min() >= 0 and modal.max() < K


def test_match_states_and_agreement():
    truth = np.array([[0, 0, 1, 1], [1, 1, 2, 2]])
    est = np.array([[2, 2, 0, 0], [0, 0, 1, 1]])
    perm = match_states(est, truth)
    np.testing.assert_array_equal(perm[est], truth)
    assert state_agreement(est, truth) == 1.0
    est[0, 0] = 0
    assert state_agreement(est, truth) == pytest.approx(7 / 8)


def test_heldout_likelihood_by_hand():
    theta = np.array([[0.2, 0.8, 0.5, 0.25, 0.25], [0.6, 0.4, 0.1, 0.1, 0.8]])  # sizes (2, 3)
    counts = np.zeros((1, 3, 5))
    counts[0, 1] = [3, 1, 0, 2, 2]
    held = np.array([[False, True, False]])
    w = np.log(np.array([0.3, 0.7]))
    weights = np.tile(w, (1, 3, 1))
    e = [
        3 * math.log(0.2) + math.log(0.8) + 2 * math.log(0.25) + 2 * math.log(0.25),
        3 * math.log(0.6) + math.log(0.4) + 2 * math.log(0.1) + 2 * math.log(0.8),
    ]
    expected = logsumexp(w + np.array(e))
    assert heldout_log_likelihood(theta, weights, counts, held) == pytest.approx(expected)
    batch = heldout_log_likelihood(np.stack([theta, theta]), np.stack([weights, weights]), counts, held)
    np.testing.assert_allclose(batch, [expected, expected])


def test_neighbour_weights():
    A = np.array([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]])  # dummy row, state 0, state 1
    z = np.array([[0, 1, 1, 0]])
    held = np.array([[True, True, False, True]])
    w = np.exp(neighbour_state_log_weights(A, z, held))
    # t = 0: dummy row x A[., z_1 = 1] = (0.5 * 0.1, 0.5 * 0.8)
    np.testing.assert_allclose(w[0, 0], np.array([0.05, 0.4]) / 0.45)
    # t = 1: A[z_0 = 0] x A[., z_2 = 1] = (0.9 * 0.1, 0.1 * 0.8)
    np.testing.assert_allclose(w[0, 1], np.array([0.09, 0.08]) / 0.17)
    # last timestep: only the left factor A[z_2 = 1]
    np.testing.assert_allclose(w[0, 3], [0.2, 0.8])


def test_kmeans_initial_values_find_separated_clusters():
    rng = np.random.default_rng(6)
    sizes = (3, 4)
    truth = [np.array([0.8, 0.1, 0.1, 0.7, 0.1, 0.1, 0.1]), np.array([0.1, 0.1, 0.8, 0.1, 0.1, 0.1, 0.7])]
    z = rng.integers(2, size=(4, 10))
    counts = np.zeros((4, 10, 7))
    for r, t in itertools.product(range(4), range(10)):
        counts[r, t, :3] = rng.multinomial(200, truth[z[r, t]][:3])
        counts[r, t, 3:] = rng.multinomial(200, truth[z[r, t]][3:])
    layout, exact = CountLayout.from_counts(counts, sizes)
    inits = kmeans_initial_values(exact, layout, 2, chains=3, seed=1)
    assert len(inits) == 3
    for init in inits:
        A = np.array(init["A"])
        assert A.shape == (3, 2) and np.allclose(A.sum(axis=1), 1)
        eta = np.array(init["eta"])
        assert eta.shape == (7 - 2, 2)
        refs = reference_values(exact, layout)
        theta = []
        for k in range(2):
            b1 = np.exp(np.insert(eta[:2, k], refs[0], 0.0))
            b2 = np.exp(np.insert(eta[2:, k], refs[1], 0.0))
            theta.append(np.concatenate([b1 / b1.sum(), b2 / b2.sum()]))
        theta = np.array(theta)
        err = min(np.abs(theta - np.array(truth)).max(), np.abs(theta[::-1] - np.array(truth)).max())
        assert err < 0.05


def test_count_sensitivity_by_replacing_entries():
    """Replacing one log entry (possibly by one in another cell) changes each feature's
    count array by at most 2 in L1 -- the sensitivity the release is calibrated to."""
    rng = np.random.default_rng(8)
    R, T = 2, 3

    def count(entries):
        out = np.zeros((R, T, sum(SIZES)))
        for r, t, *values in entries:
            pos = 0
            for v, s in zip(values, SIZES):
                out[r, t, pos + v] += 1
                pos += s
        return out

    entries = [(rng.integers(R), rng.integers(T), *(rng.integers(s) for s in SIZES)) for _ in range(30)]
    base = count(entries)
    worst = np.zeros(len(SIZES))
    for _ in range(300):
        other = list(entries)
        other[rng.integers(len(other))] = (rng.integers(R), rng.integers(T), *(rng.integers(s) for s in SIZES))
        diff = np.abs(count(other) - base)
        pos = 0
        for d, s in enumerate(SIZES):
            worst[d] = max(worst[d], diff[:, :, pos : pos + s].sum())
            pos += s
    np.testing.assert_array_equal(worst, [COUNT_SENSITIVITY] * len(SIZES))


def test_aggregated_release_for_naive_bayes():
    rng = np.random.default_rng(9)
    counts = _counts(rng, n=100)
    train = np.ones((3, 5), dtype=bool)
    train[0, :2] = False
    big = counts.copy()
    rel = NaiveBayesHMM.release(big, epsilon=300.0, feature_sizes=SIZES, aggregate=True, cells=train, seed=1)
    assert rel.values.shape == (1, 1, sum(SIZES)) and rel.record.details["aggregated"] is True
    # scale 2 / 100 per value: the release is the training cells' total within a few tenths
    np.testing.assert_allclose(rel.values[0, 0], counts[train].sum(axis=0), atol=0.5)
    with pytest.raises(ValueError, match="fit it with n_states=1"):
        NaiveBayesHMM(2).fit(rel)
    with pytest.raises(ValueError, match="needs aggregate=True"):
        NaiveBayesHMM.release(counts, epsilon=1.0, feature_sizes=SIZES, cells=train)
    with pytest.raises(ValueError, match="at least one cell"):
        NaiveBayesHMM.release(counts, epsilon=1.0, feature_sizes=SIZES, aggregate=True, cells=np.zeros((3, 5), bool))


# ------------------------------------------------------------------ counts objects, layering
def test_count_layout_reads_any_object_with_the_count_attributes():
    """Duck typing: any object with counts, feature_sizes, features, regions and months (as
    WarLogCounts has) is read like one; without structure_from_data the grid is taken as
    chosen from the data (the cautious reading)."""
    from types import SimpleNamespace

    counts = _counts(np.random.default_rng(8), R=2, T=3)
    obj = SimpleNamespace(
        counts=counts, feature_sizes=SIZES, features=("a", "b", "c"), regions=("r1", "r2"), months=("m1", "m2", "m3")
    )
    layout, exact = CountLayout.from_counts(obj)
    assert (layout.features, layout.regions, layout.months) == (("a", "b", "c"), ("r1", "r2"), ("m1", "m2", "m3"))
    assert layout.feature_sizes == SIZES and layout.structure_from_data is True
    np.testing.assert_array_equal(exact, counts)
    obj.structure_from_data = False
    assert CountLayout.from_counts(obj)[0].structure_from_data is False
    with pytest.raises(ValueError, match="feature_sizes disagrees with the SimpleNamespace given"):
        CountLayout.from_counts(obj, (3, 3, 3))
    rel = NaiveBayesHMM.release(obj, epsilon=3.0, seed=1)
    assert CountLayout.from_dict(rel.record.details["layout"]) == CountLayout.from_counts(obj)[0]
    # an array needs feature_sizes and gets generic labels
    assert CountLayout.from_counts(counts, SIZES)[0] == CountLayout.for_array(counts.shape, SIZES)
    assert CountLayout.for_array(counts.shape, SIZES).regions == ("region1", "region2")


def test_the_hmm_models_import_no_experiment():
    """Layering: models never import an experiment (the counts class is read by duck typing)."""
    import subprocess
    import sys

    code = (
        "import sys, pystanprivacy.models.foulds2016_hmm, pystanprivacy.models.foulds2016; "
        "print(sorted(m for m in sys.modules if m.startswith('pystanprivacy.experiments')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------ EM starts (issue 15)
def _two_state_counts(rng, R=4, T=10, n=200):
    sizes = (3, 4)
    truth = [np.array([0.8, 0.1, 0.1, 0.7, 0.1, 0.1, 0.1]), np.array([0.1, 0.1, 0.8, 0.1, 0.1, 0.1, 0.7])]
    z = np.zeros((R, T), dtype=int)
    z[:, T // 2 :] = 1  # one switch per region: sticky transitions
    counts = np.zeros((R, T, 7))
    for r, t in itertools.product(range(R), range(T)):
        counts[r, t, :3] = rng.multinomial(n, truth[z[r, t]][:3])
        counts[r, t, 3:] = rng.multinomial(n, truth[z[r, t]][3:])
    return counts, sizes, np.array(truth), z


def test_em_solution_recovers_separated_states_and_their_transitions():
    from pystanprivacy.models.foulds2016_hmm import em_solution

    counts, sizes, truth, _z = _two_state_counts(np.random.default_rng(6))
    layout, exact = CountLayout.from_counts(counts, sizes)
    theta, A, ll = em_solution(exact, layout, 2, seed=1)
    perm = match_states(np.argmin(np.abs(theta[:, None, :] - truth[None]).sum(axis=2), axis=1), np.arange(2))
    order = np.argsort(perm)
    np.testing.assert_allclose(theta[order], truth, atol=0.05)  # 2000 entries per state and feature
    # per region state 0 for 5 months then state 1: from state 0, 16 stays and 4 switches, from
    # state 1, 16 stays (the M-step adds 1/2 to every expected count; the states are certain)
    assert A[1:][order][:, order].diagonal() == pytest.approx([16.5 / 21, 16.5 / 17], abs=1e-6)
    assert np.isfinite(ll) and ll < 0


def test_balanced_reference_is_common_in_every_state():
    from pystanprivacy.models.foulds2016_hmm import balanced_reference_values

    layout = CountLayout.for_array((1, 1), (3, 2))
    theta = np.array([[0.90, 0.02, 0.08, 0.5, 0.5], [0.01, 0.60, 0.39, 0.9, 0.1]])
    # value 0 is the most frequent overall but rare in state 1; value 2 is common in both
    assert balanced_reference_values(theta, layout) == [2, 0]


def test_laplace_start_is_a_function_of_the_release_only(monkeypatch):
    """fit(release) with init="em" (the default) hands Stan inits and data computed from the
    released values and the seed alone: two data sets whose releases hold the same values
    give the same start, equal to em_initial_values of the release (the raw counts never
    reach it: the model only ever receives the Release)."""
    from pystanprivacy.models.foulds2016_hmm import em_initial_values

    seen = []

    class Capture:
        def sample(self, data, *, init, **kwargs):
            seen.append((data, init))
            return Posterior.__new__(Posterior)

    monkeypatch.setattr(NaiveBayesHMM, "stan_model", property(lambda self: Capture()))
    monkeypatch.setattr("pystanprivacy.models.foulds2016_hmm.with_record", lambda post, record: post)
    rng = np.random.default_rng(6)
    a, sizes, _, _ = _two_state_counts(rng)
    b = a[::-1].copy()  # other raw data, same public layout
    rel = NaiveBayesHMM.release(a, epsilon=2.0, feature_sizes=sizes, seed=1)
    for raw in (a, b):
        pub = NaiveBayesHMM.published(rel.values, n=rel.record.n, epsilon=2.0, feature_sizes=sizes)
        NaiveBayesHMM(2).fit(pub, chains=2, warmup=10, draws=10, seed=3)
    NaiveBayesHMM(2).fit(rel, chains=2, warmup=10, draws=10, seed=3)
    (d0, i0), (d1, i1), (d2, i2) = seen
    assert i0 == i1 == i2
    for key in ("counts", "reference"):
        np.testing.assert_array_equal(d0[key], d1[key]) and np.testing.assert_array_equal(d0[key], d2[key])
    layout = CountLayout.from_dict(rel.record.details["layout"])
    inits, refs = em_initial_values(rel.values, layout, 2, 2, np.random.default_rng(3))
    assert i0 == inits and list(d0["reference"]) == [r + 1 for r in refs]
    assert not np.array_equal(i0[0]["eta"], i0[1]["eta"])  # jittered per chain
