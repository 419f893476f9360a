"""Foulds 2016 model classes: releases, their records, refusal rules and the accountant."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from pystanprivacy.models.base import OPSResult
from pystanprivacy.models.foulds2016 import (
    BetaBernoulli,
    BetaBernoulliOPS,
    log_likelihood_sensitivity,
    ops_temperature,
    sufficient_statistics,
)
from pystanprivacy.privacy.records import BudgetExceededError, PrivacyAccountant, Release
from pystanprivacy.sampling.posterior import ConvergenceError, Posterior, Thresholds

X = np.array([1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0])


def test_temperature_for_the_papers_settings():
    assert ops_temperature(1.0, 0.2) == pytest.approx(2 * math.log(4))  # 2.77, the paper's "2.7"
    assert ops_temperature(0.1, 0.05) == pytest.approx(2 * math.log(19) / 0.1)
    assert ops_temperature(100.0, 0.2) == 1.0  # never below 1
    assert log_likelihood_sensitivity(0.1) == pytest.approx(math.log(9))
    with pytest.raises(ValueError, match=r"a0 must be in \(0, 0.5\), got 0.5"):
        ops_temperature(1.0, 0.5)


def test_sufficient_statistics_and_bad_data():
    np.testing.assert_array_equal(sufficient_statistics(X), [6, 14])
    np.testing.assert_array_equal(sufficient_statistics(np.stack([X, 1 - X])), [[6, 14], [14, 6]])
    with pytest.raises(ValueError, match="outside the declared bounds") as err:
        sufficient_statistics([0, 1, 2])
    assert "2" not in str(err.value).replace("[0, 1]", "")  # the offending value is not printed
    with pytest.raises(ValueError, match="NaN"):
        sufficient_statistics([0.0, float("nan")])
    with pytest.raises(ValueError, match="integ"):
        sufficient_statistics([0.5, 1])


def test_laplace_release_record_and_noise():
    rel = BetaBernoulli.release(X, epsilon=0.5, seed=3)
    rec = rel.record
    assert (rec.mechanism, rec.sensitivity, rec.scale, rec.n) == ("laplace", 2.0, 4.0, 20)
    assert rec.details["projection"] == "nonnegative" and rec.details["seeded"] is True
    assert np.all(rel.values >= 0)
    # The noise is Laplace(2/eps) before projection: use many data sets with large counts so
    # the projection never binds; KS at alpha = 1e-3 (deterministic under the fixed seed).
    big = np.ones((4000, 400), dtype=int)
    big[:, :200] = 0
    noisy = BetaBernoulli.release(big, epsilon=0.5, seed=4).values
    assert stats.kstest(noisy[:, 0] - 200, stats.laplace(scale=4.0).cdf).pvalue > 1e-3


def test_failed_release_spends_nothing():
    acct = PrivacyAccountant(1.0)
    with pytest.raises(ValueError):
        BetaBernoulli.release([0, 1, 3], epsilon=0.5, accountant=acct)
    assert acct.spent == (0.0, 0.0)
    BetaBernoulli.release(X, epsilon=0.6, accountant=acct)
    with pytest.raises(BudgetExceededError):
        BetaBernoulli.release(X, epsilon=0.6, accountant=acct)
    assert acct.spent[0] == pytest.approx(0.6)


def test_fit_rejects_a_foreign_release():
    model = BetaBernoulli()
    with pytest.raises(TypeError, match="release must be a Release"):
        model.fit(np.array([3.0, 4.0]))
    rel = BetaBernoulli.release(X, epsilon=1.0, seed=1)
    forged = Release(values=rel.values, record=rel.record.__class__(mechanism="gaussian", epsilon=1.0, delta=0.1))
    with pytest.raises(ValueError, match="must come from BetaBernoulli.release"):
        model.fit(forged)


def test_fit_matches_closed_form_beta_given_release(beta_bernoulli_model):
    model = BetaBernoulli(prior_alpha=2.0, prior_beta=3.0)
    rel = model.release(X, epsilon=1.0, seed=9)
    post = model.fit(rel, seed=10)
    a, b = model.beta_parameters(rel.values)
    d = post.draws("p")[:, 0]
    # mean within 4 Monte-Carlo standard errors (ESS-based): false-rejection rate ~6e-5
    mcse = stats.beta(a, b).std() / math.sqrt(post.ess_bulk()["p"][0])
    assert abs(d.mean() - stats.beta(a, b).mean()) < 4 * mcse


def test_ops_refuses_unconverged_draw_and_keeps_the_charge(beta_bernoulli_ops_model):
    ops = BetaBernoulliOPS(a0=0.2)
    acct = PrivacyAccountant(2.0)
    with pytest.raises(ConvergenceError, match="OPS draw refused.*ESS.*was charged"):
        ops.sample_one(X, epsilon=1.0, accountant=acct, seed=1, chains=2, warmup=5, draws=20)
    assert acct.spent == (1.0, 0.0)  # the refusal depends on the data: the attempt is charged
    forced = ops.sample_one(X, epsilon=1.0, seed=1, chains=2, warmup=5, draws=20, allow_unconverged=True)
    assert forced.record.details["convergence_override"] is True


def test_ops_release_record_and_support(beta_bernoulli_ops_model):
    ops = BetaBernoulliOPS(a0=0.2)
    acct = PrivacyAccountant(1.0)
    res = ops.sample_one(X, epsilon=1.0, accountant=acct, seed=5)
    assert isinstance(res, OPSResult) and res.released and res.released_mask is None and res.posterior is None
    assert res.release.values.shape == (1,) and 0.2 <= res.release.values[0] <= 0.8
    assert res.params["p"][0] == res.release.values[0] and res.problems == []
    assert res.details["temperature"] == pytest.approx(2 * math.log(4))
    rec = res.record
    assert rec is res.release.record
    assert rec.mechanism == "ops" and rec.epsilon == 1.0 and rec.delta == 0.0
    assert rec.details["temperature"] == pytest.approx(2 * math.log(4))
    assert rec.details["convergence_override"] is False
    assert acct.spent[0] == pytest.approx(1.0)
    with pytest.raises(BudgetExceededError):
        ops.sample_one(X, epsilon=1.0, accountant=acct, seed=6)
    with pytest.raises(ValueError, match="one data set"):
        ops.sample_one(np.stack([X, X]), epsilon=1.0)


# every check fails (R-hat is never <= 1.0000001 with ESS >= 1e9) / every check passes
IMPOSSIBLE = Thresholds(max_rhat=1.0000001, min_ess_per_chain=1e9)
LENIENT = Thresholds(max_rhat=100.0, min_ess_per_chain=0.0, max_divergences=10**6, max_treedepth_fraction=1.0)


def test_ops_override_record_states_the_override_not_the_runs_diagnostics(beta_bernoulli_ops_model):
    """With allow_unconverged=True the published record is the same whether or not the run
    passed the checks (it was convergence_override = 'override and a check failed': one bit of
    the private run's diagnostics); it states the public fact that the override was used."""
    ops = BetaBernoulliOPS(a0=0.2)
    short = dict(seed=3, chains=2, warmup=20, draws=20)
    # the gate's verdict differs between the two thresholds (sample_batch reports it, for simulations)
    assert ops.sample_batch(X[None, :], epsilon=1.0, thresholds=IMPOSSIBLE, **short).problems
    assert ops.sample_batch(X[None, :], epsilon=1.0, thresholds=LENIENT, **short).problems == []
    records = []
    for x in (X, 1 - X):
        for t in (IMPOSSIBLE, LENIENT):
            rel = ops.sample_one(x, epsilon=1.0, thresholds=t, allow_unconverged=True, **short)
            batch = ops.sample_batch(np.stack([x, 1 - x]), epsilon=1.0, thresholds=t, allow_unconverged=True, **short)
            records += [rel.record, batch.record]
            for rec in (rel.record, batch.record):
                assert rec.details["convergence_override"] is True
                assert rec.details["convergence_gate"].startswith("not enforced (allow_unconverged=True)")
                text = repr(rec.to_dict())
                assert "data sets failed" not in text and "divergent" not in text and "unmet" not in text
    assert all(r == records[0] for r in records[0::2]) and all(r == records[1] for r in records[1::2])
    # without the override a released draw passed the gate, and the record says it was enforced
    rec = ops.sample_one(X, epsilon=1.0, thresholds=LENIENT, **short).record
    assert rec.details["convergence_override"] is False and rec.details["convergence_gate"].startswith("enforced")


# ------------------------------------------------------------------ the one data path
SHORT = dict(chains=2, warmup=100, draws=100)


def test_fit_carries_the_release_record_and_the_baseline_is_marked_non_private(beta_bernoulli_model, tmp_path):
    model = BetaBernoulli()
    rel = BetaBernoulli.release(X, epsilon=0.7, seed=2)
    post = model.fit(rel, seed=3, **SHORT)
    assert post.privacy == rel.record.to_dict() and post.privacy["epsilon"] == 0.7
    assert Posterior.load(post.save(tmp_path / "post.nc")).privacy == rel.record.to_dict()
    assert model.fit_nonprivate(X, seed=3, **SHORT).privacy == "non-private"


def test_published_counts_give_the_posterior_of_the_same_release(beta_bernoulli_model):
    """Counts privatised elsewhere: the same record as BetaBernoulli.release (without the
    randomness claims, marked published_externally), nothing charged, the same posterior."""
    rel = BetaBernoulli.release(np.stack([X, 1 - X]), epsilon=0.5, seed=4)
    pub = BetaBernoulli.published(rel.values, n=20, epsilon=0.5)
    a, b = rel.record, pub.record
    same = ("mechanism", "epsilon", "delta", "sensitivity", "sensitivity_norm", "scale", "bounds", "n", "neighbouring")
    assert [getattr(b, f) for f in same] == [getattr(a, f) for f in same]
    assert b.details["published_externally"] is True and "seeded" not in b.details
    assert {k: b.details[k] for k in ("statistic", "projection", "datasets", "reference")} == {
        k: a.details[k] for k in ("statistic", "projection", "datasets", "reference")
    }
    model = BetaBernoulli()
    post_rel, post_pub = model.fit(rel, seed=5, **SHORT), model.fit(pub, seed=5, **SHORT)
    np.testing.assert_array_equal(post_pub.draws("p"), post_rel.draws("p"))
    assert post_pub.privacy == b.to_dict() != post_rel.privacy
    # noisy counts below 0 are projected as release projects them; bad input names its argument
    np.testing.assert_array_equal(BetaBernoulli.published([-1.5, 3.0], n=2, epsilon=1.0).values, [0.0, 3.0])
    with pytest.raises(ValueError, match=r"y must have shape \(2,\) or \(R, 2\)"):
        BetaBernoulli.published([1.0, 2.0, 3.0], n=3, epsilon=1.0)
    with pytest.raises(ValueError, match="n must be an int >= 1"):
        BetaBernoulli.published([1.0, 2.0], n=0, epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        BetaBernoulli.published([1.0, 2.0], n=3, epsilon=0.0)


def test_release_is_a_classmethod_and_the_ops_model_has_no_release():
    assert BetaBernoulli.release(X, epsilon=1.0, seed=1) == BetaBernoulli().release(X, epsilon=1.0, seed=1)
    with pytest.raises(NotImplementedError, match="BetaBernoulliOPS has no release.*use sample_one"):
        BetaBernoulliOPS.release(X, epsilon=1.0)
    with pytest.raises(NotImplementedError, match="BetaBernoulliOPS has no fit"):
        BetaBernoulliOPS().fit(BetaBernoulli.release(X, epsilon=1.0, seed=1))


def test_ops_batch_result_keeps_one_entry_per_data_set(beta_bernoulli_ops_model):
    """sample_batch gives an OPSResult: params NaN where a set's draw was refused, the release
    holds the released draws only (a Release is finite), the mask says which."""
    ops = BetaBernoulliOPS(a0=0.2)
    short = dict(seed=3, chains=2, warmup=20, draws=20)
    refused = ops.sample_batch(np.stack([X, 1 - X]), epsilon=1.0, thresholds=IMPOSSIBLE, **short)
    assert isinstance(refused, OPSResult) and refused.release is None and refused.record is None
    assert not refused.released and refused.released_mask.tolist() == [False, False]
    assert np.isnan(refused.params["p"]).all() and refused.problems
    kept = ops.sample_batch(np.stack([X, 1 - X]), epsilon=1.0, thresholds=LENIENT, keep_posterior=True, **short)
    assert kept.released_mask.tolist() == [True, True] and kept.record.epsilon == 1.0
    np.testing.assert_array_equal(kept.release.values, kept.params["p"])
    assert kept.details["temperature"] == pytest.approx(ops.temperature(1.0))
    assert kept.posterior.privacy == "non-private"  # every draw of the run: raw data, never publish
