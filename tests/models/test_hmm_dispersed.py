"""``init="dispersed"`` of the naive-Bayes HMM fits (issue 49, item 1): every chain from its own
start (the best EM solution, an EM run of its own, a k-means clustering, a prior draw), computed
from the release only; and the default start, with its draws, unchanged.

The default-unchanged test rebuilds the former code path by hand (EM start from the seed's
Generator, then Stan seeded from the same Generator) and compares the draws exactly; the fit
is on 4 regions x 10 months (a second)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from pystanprivacy.experiments.foulds2016.warlogs import preprocess_war_logs, synthetic_war_logs
from pystanprivacy.models.foulds2016_hmm import (
    DEFAULT_MAX_TREEDEPTH,
    DISPERSED_KINDS,
    CountLayout,
    NaiveBayesHMM,
    NaiveBayesHMMOPS,
    dispersed_initial_values,
    dispersed_kinds,
    em_initial_values,
    em_solution,
)
from pystanprivacy.models.foulds2016_hmm.init import _eta_to_log_weights, _normalise_features
from pystanprivacy.privacy.records import PrivacyAccountant
from pystanprivacy.sampling.posterior import Posterior


def _two_state_counts(rng, R=4, T=10, n=200):
    """Counts of two well-separated states (every region switches once, half-way)."""
    truth = [np.array([0.8, 0.1, 0.1, 0.7, 0.1, 0.1, 0.1]), np.array([0.1, 0.1, 0.8, 0.1, 0.1, 0.1, 0.7])]
    counts = np.zeros((R, T, 7))
    for r, t in itertools.product(range(R), range(T)):
        p = truth[int(t >= T // 2)]
        counts[r, t, :3] = rng.multinomial(n, p[:3])
        counts[r, t, 3:] = rng.multinomial(n, p[3:])
    return counts, (3, 4)


@pytest.fixture(scope="module")
def iraq():
    """Synthetic Iraq-style logs (3 states, 30 months): layout and exact counts."""
    syn = synthetic_war_logs("iraq", seed=21, n_months=30, median_records=300, separation=3.0)
    return CountLayout.from_counts(preprocess_war_logs(syn.records))


def _theta(start, layout, refs):
    """theta (K, J) of a start's eta coordinates."""
    return np.exp(_normalise_features(np.exp(_eta_to_log_weights(np.asarray(start["eta"]), layout, refs)), layout))


def _label_free_distance(a, b):
    """Mean L1 distance between the states of two theta (K, J) after the best matching."""
    cost = np.abs(a[:, None, :] - b[None, :, :]).sum(axis=2)
    rows, cols = linear_sum_assignment(cost)
    return cost[rows, cols].mean()


def test_dispersed_kinds_follow_the_documented_mix():
    assert dispersed_kinds(1) == ["em"]
    assert dispersed_kinds(8) == ["em", "em-own", "kmeans", "prior", "em-own", "kmeans", "prior", "em-own"]
    assert DISPERSED_KINDS == ("em-own", "kmeans", "prior")
    with pytest.raises(ValueError, match="chains must be an int >= 1"):
        dispersed_kinds(0)


def test_every_chain_starts_from_a_different_point(iraq):
    """4 chains on 3-state logs: chain 0 is the best EM solution (em_solution run with the
    same seed, before the jitter), and no two chains start at one point even after the
    best relabelling of their states: EM runs that end at one optimum still differ by the
    jitter (mean L1 distance per state > 0.1: jitter 0.05 on 45 coordinates), and the
    prior draw lies far from every fit of the data (> 1)."""
    layout, exact = iraq
    inits, refs = dispersed_initial_values(exact, layout, 3, 4, seed=0)
    assert len(inits) == 4 and all(set(i) == {"A", "eta"} for i in inits)
    thetas = [_theta(i, layout, refs) for i in inits]
    # without jitter chain 0 is exactly the best EM solution (the first draws of the same seed)
    best, _, _ = em_solution(exact, layout, 3, np.random.default_rng(0))
    plain, plain_refs = dispersed_initial_values(exact, layout, 3, 4, seed=0, jitter=0.0)
    np.testing.assert_allclose(_theta(plain[0], layout, plain_refs), best, rtol=1e-9)
    for a, b in itertools.combinations(range(4), 2):
        assert _label_free_distance(thetas[a], thetas[b]) > 0.1, (a, b)
    assert min(_label_free_distance(thetas[3], thetas[c]) for c in range(3)) > 1.0
    for i in inits:  # finite coordinates, transitions on the simplex
        assert np.all(np.isfinite(i["eta"])) and np.allclose(np.sum(i["A"], axis=1), 1.0)
    # reproducible from the seed, different for another
    again, _ = dispersed_initial_values(exact, layout, 3, 4, seed=0)
    assert again == inits
    other, _ = dispersed_initial_values(exact, layout, 3, 4, seed=1)
    assert other != inits


def test_dispersed_start_is_a_function_of_the_release_only(monkeypatch):
    """fit(release, init="dispersed") hands Stan the starts of dispersed_initial_values of
    the RELEASED values (with the model's prior), one per chain, all different: two data
    sets whose releases hold the same values get the same starts."""
    seen = []

    class Capture:
        def sample(self, data, *, init, **kwargs):
            seen.append((data, init))
            return Posterior.__new__(Posterior)

    monkeypatch.setattr(NaiveBayesHMM, "stan_model", property(lambda self: Capture()))
    monkeypatch.setattr("pystanprivacy.models.foulds2016_hmm.with_record", lambda post, record: post)
    a, sizes = _two_state_counts(np.random.default_rng(6))
    b = a[::-1].copy()  # other raw data, same public layout
    rel = NaiveBayesHMM.release(a, epsilon=2.0, feature_sizes=sizes, seed=1)
    for _raw in (a, b):
        pub = NaiveBayesHMM.published(rel.values, n=rel.record.n, epsilon=2.0, feature_sizes=sizes)
        NaiveBayesHMM(2, alpha=2.0, beta=0.5).fit(pub, init="dispersed", chains=4, warmup=10, draws=10, seed=3)
    (d0, i0), (d1, i1) = seen
    assert i0 == i1 and np.array_equal(d0["counts"], d1["counts"])
    layout = CountLayout.from_dict(rel.record.details["layout"])
    inits, refs = dispersed_initial_values(rel.values, layout, 2, 4, np.random.default_rng(3), alpha=2.0, beta=0.5)
    assert i0 == inits and list(d0["reference"]) == [r + 1 for r in refs]
    assert all(i0[p]["eta"] != i0[q]["eta"] for p, q in itertools.combinations(range(4), 2))


def test_dispersed_is_checked_before_an_ops_charge():
    acct = PrivacyAccountant(10.0)
    with pytest.raises(ValueError, match="init must be 'em', 'kmeans', 'random', 'dispersed' or one mapping"):
        NaiveBayesHMMOPS(2).sample_one(
            np.zeros((2, 3, 7)), epsilon=1.0, feature_sizes=(3, 4), init="dispersd", accountant=acct
        )
    assert acct.spent == (0.0, 0.0)
    with pytest.raises(ValueError, match="jitter must be a finite number >= 0"):
        dispersed_initial_values(np.ones((2, 3, 7)), CountLayout.for_array((2, 3), (3, 4)), 2, 2, 0, jitter=-1.0)


def test_the_default_start_and_its_draws_are_unchanged(nb_hmm_model):
    """fit_nonprivate with the default init="em" gives exactly the draws of the former code
    path, rebuilt here: em_initial_values from the seed's Generator, the Stan data with its
    reference values, Stan seeded from the same Generator, max_treedepth 7."""
    counts, sizes = _two_state_counts(np.random.default_rng(6))
    layout, exact = CountLayout.from_counts(counts, sizes)
    model = NaiveBayesHMM(2)
    post = model.fit_nonprivate(counts, feature_sizes=sizes, chains=2, warmup=60, draws=40, seed=5)

    rng = np.random.default_rng(5)
    inits, refs = em_initial_values(exact, layout, 2, 2, rng)
    former = nb_hmm_model.sample(
        model.data(exact, layout, None, refs),
        init=inits,
        seed=rng,
        chains=2,
        warmup=60,
        draws=40,
        max_treedepth=DEFAULT_MAX_TREEDEPTH,
    )
    for name in ("theta", "A", "log_lik"):
        np.testing.assert_array_equal(post.draws(name), former.draws(name))
    # and "dispersed" is another start: other draws
    other = model.fit_nonprivate(counts, feature_sizes=sizes, chains=2, warmup=60, draws=40, seed=5, init="dispersed")
    assert not np.array_equal(other.draws("log_lik"), post.draws("log_lik"))
