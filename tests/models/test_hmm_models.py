"""Stan programs nb_hmm.stan / nb_hmm_ops.stan (Foulds et al. 2016, supplement E): the
forward algorithm against brute-force enumeration of every state path, masking, the
forward-filtering backward-sampling draws, truncation, and recovery of a known state
sequence by the non-private and the ε = 5 Laplace fits; OPS release and refusal.

Each model is compiled at most once per session (StanModel.get; on-disk cache)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from pystanprivacy.experiments.foulds2016.warlogs import preprocess_war_logs, synthetic_war_logs
from pystanprivacy.models.base import OPSResult
from pystanprivacy.models.foulds2016_hmm import (
    CountLayout,
    NaiveBayesHMM,
    NaiveBayesHMMOPS,
    align_states,
    heldout_log_likelihood,
    ops_temperature,
    ops_truncation,
    state_agreement,
)
from pystanprivacy.privacy.records import PrivacyAccountant
from pystanprivacy.sampling.posterior import ConvergenceError, Thresholds

SIZES = (3, 2)
R, T, K = 2, 4, 3


@pytest.fixture(scope="module")
def tiny_counts():
    rng = np.random.default_rng(11)
    n = rng.integers(0, 4, size=(R, T))
    blocks = [
        np.stack([[rng.multinomial(n[r, t], np.full(s, 1 / s)) for t in range(T)] for r in range(R)]) for s in SIZES
    ]
    return np.concatenate(blocks, axis=2)


def _stan_data(counts, heldout, **extra):
    layout, exact = CountLayout.from_counts(counts, SIZES)
    data = NaiveBayesHMM(K).data(exact, layout, heldout)
    data.update(extra)
    return data


def _path_log_weights(theta, A, counts, observed, temperature=1.0):
    """log weight of every state path of every region: array (R, K**T), paths in
    itertools.product order, and the paths."""
    log_theta, log_a = np.log(theta), np.log(A)
    emis = np.einsum("rtj,kj->rtk", counts, log_theta) * observed[..., None]
    paths = list(itertools.product(range(K), repeat=T))
    out = np.empty((counts.shape[0], len(paths)))
    for i, z in enumerate(paths):
        trans = log_a[0, z[0]] + sum(log_a[1 + z[t - 1], z[t]] for t in range(1, T))
        out[:, i] = (trans + sum(emis[:, t, z[t]] for t in range(T))) / temperature
    return out, paths


def _fixed(model, data, seed, draws=1):
    post = model.fixed_param(data, draws=draws, seed=seed)
    return {name: post.draws(name) for name in post.variables}


def test_forward_algorithm_equals_brute_force_and_masking(nb_hmm_model, tiny_counts):
    full = _fixed(nb_hmm_model, _stan_data(tiny_counts, None), seed=3)
    heldout = np.zeros((R, T), dtype=bool)
    heldout[1, 2] = True
    masked = _fixed(nb_hmm_model, _stan_data(tiny_counts, heldout), seed=3)
    # same seed -> same (random) parameter values in both fixed_param runs
    np.testing.assert_allclose(full["A"], masked["A"])
    theta, A = full["theta"][0], full["A"][0]
    for out, obs in ((full, np.ones((R, T))), (masked, 1.0 - heldout)):
        lw, paths = _path_log_weights(theta, A, tiny_counts, obs)
        assert out["log_lik"][0] == pytest.approx(logsumexp(lw, axis=1).sum(), rel=1e-10, abs=1e-9)
        # smoothed state probabilities = brute-force marginals
        post = np.exp(lw - logsumexp(lw, axis=1, keepdims=True))
        for r, t in itertools.product(range(R), range(T)):
            marg = [post[r, [i for i, z in enumerate(paths) if z[t] == k]].sum() for k in range(K)]
            np.testing.assert_allclose(out["state_prob"][0, r, t], marg, atol=1e-10)
    # masking removes exactly the cell's term: log p(all) - log p(rest) = log p(cell | rest)
    assert full["log_lik"][0] - masked["log_lik"][0] == pytest.approx(masked["log_lik_heldout"][0], rel=1e-10)
    assert full["log_lik_heldout"][0] == 0.0
    # the Python evaluator of the experiments gives Stan's held-out log-likelihood
    py = heldout_log_likelihood(theta, np.log(masked["state_prob"][0]), tiny_counts, heldout)
    assert py == pytest.approx(masked["log_lik_heldout"][0], rel=1e-10)


def test_ffbs_draws_follow_the_tempered_path_posterior(nb_hmm_ops_model, tiny_counts):
    """z drawn in generated quantities of the OPS program (temperature 2.5) against the
    exact tempered path probabilities of region 0: chi-square test at alpha = 1e-3 (fixed
    seed; paths with expected count < 5 pooled)."""
    a0 = np.array([0.05, 0.1])
    data = _stan_data(tiny_counts, None, a0=a0, temperature=2.5)
    out = _fixed(nb_hmm_ops_model, data, seed=5, draws=4000)
    theta, A = out["theta"][0], out["A"][0]
    assert np.all(out["theta"] >= np.repeat(a0, SIZES) - 1e-12)  # truncation holds
    np.testing.assert_allclose(theta[:, :3].sum(axis=1), 1) and np.testing.assert_allclose(theta[:, 3:].sum(axis=1), 1)
    lw, paths = _path_log_weights(theta, A, tiny_counts, np.ones((R, T)), temperature=2.5)
    p = np.exp(lw[0] - logsumexp(lw[0]))
    index = {z: i for i, z in enumerate(paths)}
    z = out["z"][:, 0, :].astype(int) - 1
    observed = np.bincount([index[tuple(row)] for row in z], minlength=len(paths))
    expected = p * len(z)
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp).pvalue > 1e-3
    # the untempered marginal log-likelihood in generated quantities
    lw1, _ = _path_log_weights(theta, A, tiny_counts, np.ones((R, T)))
    assert out["log_lik"][0] == pytest.approx(logsumexp(lw1, axis=1).sum(), rel=1e-10)


# --------------------------------------------------------------------- recovery
@pytest.fixture(scope="module")
def separated():
    syn = synthetic_war_logs("iraq", seed=21, n_months=30, median_records=300, separation=3.0)
    counts = preprocess_war_logs(syn.records)
    return counts, syn.state_matrix(counts.regions, counts.months)


SAMPLER = dict(chains=2, warmup=300, draws=150)


@pytest.mark.parametrize("method", ["non-private", "laplace"])
def test_recovers_the_true_state_sequence(nb_hmm_model, separated, method):
    """Well-separated states (separation 3, ~300 entries per cell, 5 regions x 23 months):
    the most frequent state of every cell agrees with the truth on >= 95 % of cells after
    label matching. Deterministic under the fixed seeds; with data seeds 0-9 of this
    setting (other sampler seeds) all 20 fits agreed on 100 % of the cells."""
    counts, truth = separated
    model = NaiveBayesHMM(2)
    if method == "non-private":
        post = model.fit_nonprivate(counts, seed=1, **SAMPLER)
    else:
        release = NaiveBayesHMM.release(counts, epsilon=5.0, seed=2)
        post = model.fit(release, seed=3, **SAMPLER)
    assert post.privacy == ("non-private" if method == "non-private" else release.record.to_dict())
    draws = align_states(post)
    assert state_agreement(draws.modal_states(), truth) >= 0.95
    assert post.num_divergences == 0


# ------------------------------------------------------------------------------ OPS
def test_ops_release_and_record(nb_hmm_ops_model, separated):
    counts, truth = separated
    ops = NaiveBayesHMMOPS(2, multiplier=100.0)
    acct = PrivacyAccountant(10.0)
    # 4 chains x 2000 draws: the checks passed for sampler seeds 1-20 (0 of 20 refused, measured
    # 2026-11-29). With 2 chains x 1000 draws 6 of seeds 1-10 were refused (max split R-hat over
    # the 2 x 78 theta entries 1.011-1.033 > 1.01), and which seeds pass depends on the machine's
    # floating point: CI on a fresh machine refused seed 4, which had passed elsewhere.
    res = ops.sample_one(
        counts, epsilon=5.0, accountant=acct, seed=4, chains=4, warmup=500, draws=2000, allow_unconverged=False
    )
    assert isinstance(res, OPSResult) and res.released and res.problems == [] and res.posterior is None
    draw = res.params
    for name, value in ops.unpack(res.release).items():
        np.testing.assert_array_equal(value, draw[name])
    a0 = ops_truncation(counts.feature_sizes, 100.0)
    assert draw["theta"].shape == (2, sum(counts.feature_sizes)) and draw["A"].shape == (3, 2)
    assert draw["z"].shape == truth.shape and set(np.unique(draw["z"])) <= {0, 1}
    assert np.all(draw["theta"] >= np.repeat(a0, counts.feature_sizes) - 1e-12)
    np.testing.assert_allclose(draw["A"].sum(axis=1), 1)
    rec = res.record
    assert rec.mechanism == "ops" and rec.epsilon == 5.0 and rec.details["convergence_override"] is False
    temperature = ops_temperature(5.0, counts.feature_sizes, a0)
    assert rec.details["temperature"] == pytest.approx(temperature) == res.details["temperature"]
    assert acct.spent[0] == pytest.approx(5.0)
    # one draw at T ~ 12.5 still separates the two regimes (agreement well above chance)
    assert state_agreement(draw["z"], truth) >= 0.8


def test_ops_refuses_an_unconverged_run_and_keeps_the_charge(nb_hmm_ops_model, separated):
    counts, _ = separated
    ops = NaiveBayesHMMOPS(2, multiplier=10.0)
    acct = PrivacyAccountant(10.0)
    with pytest.raises(ConvergenceError, match="OPS draw refused.*(R-hat|ESS).*was charged"):
        ops.sample_one(counts, epsilon=1.0, accountant=acct, seed=6, chains=2, warmup=5, draws=10)
    assert acct.spent == (1.0, 0.0)  # the refusal depends on the data: the attempt is charged
    forced = ops.sample_one(counts, epsilon=1.0, seed=6, chains=2, warmup=5, draws=10, allow_unconverged=True)
    assert forced.record.details["convergence_override"] is True


# every check fails / every check passes (finite R-hat <= 100; no ESS, divergence or depth limit)
IMPOSSIBLE = Thresholds(max_rhat=1.0000001, min_ess_per_chain=1e9)
LENIENT = Thresholds(max_rhat=100.0, min_ess_per_chain=0.0, max_divergences=10**6, max_treedepth_fraction=1.0)


def test_ops_override_record_states_the_override_not_the_runs_diagnostics(nb_hmm_ops_model, tiny_counts):
    """With allow_unconverged=True the published record is the same whether or not the run
    passed the checks (convergence_override was 'a check failed': one bit of the private
    run's diagnostics); it states the public fact that the override was used."""
    ops = NaiveBayesHMMOPS(2, multiplier=10.0)
    short = dict(feature_sizes=SIZES, seed=4, chains=2, warmup=30, draws=20)
    datasets = [tiny_counts, tiny_counts[::-1]]  # same public layout and number of entries
    assert ops.sample(datasets[0], epsilon=1.0, thresholds=IMPOSSIBLE, **short).problems
    assert ops.sample(datasets[0], epsilon=1.0, thresholds=LENIENT, **short).problems == []
    records = []
    for counts in datasets:
        for t in (IMPOSSIBLE, LENIENT):
            rec = ops.sample_one(counts, epsilon=1.0, thresholds=t, allow_unconverged=True, **short).record
            assert rec.details["convergence_override"] is True
            assert rec.details["convergence_gate"].startswith("not enforced (allow_unconverged=True)")
            text = repr(rec.to_dict())
            assert "R-hat of" not in text and "ESS of" not in text and "divergent" not in text
            records.append(rec)
    assert all(rec == records[0] for rec in records)
    rec = ops.sample_one(datasets[0], epsilon=1.0, thresholds=LENIENT, **short).record
    assert rec.details["convergence_override"] is False and rec.details["convergence_gate"].startswith("enforced")


# ------------------------------------------------------------------ the one data path
def test_fit_carries_the_record_and_published_counts_give_the_same_posterior(nb_hmm_model, tiny_counts):
    """fit(release) carries the release's record; the same noisy counts published by someone
    else (published: the same record without the randomness claims, nothing charged) give
    the same posterior; the non-private baseline is marked as such."""
    rel = NaiveBayesHMM.release(tiny_counts, epsilon=2.0, feature_sizes=SIZES, seed=1)
    model = NaiveBayesHMM(2)
    kw = dict(chains=2, warmup=40, draws=20, seed=3)
    post = model.fit(rel, **kw)
    assert post.privacy == rel.record.to_dict() and post.privacy["epsilon"] == 2.0
    for pub in (
        NaiveBayesHMM.published(rel.values, n=rel.record.n, epsilon=2.0, feature_sizes=SIZES),
        NaiveBayesHMM.published(
            rel.values,
            n=rel.record.n,
            epsilon_per_feature=[1.0, 1.0],
            layout=CountLayout.from_dict(rel.record.details["layout"]),
        ),
    ):
        a, b = rel.record, pub.record
        same = ("mechanism", "epsilon", "sensitivity", "sensitivity_norm", "scale", "n", "neighbouring")
        assert [getattr(b, f) for f in same] == [getattr(a, f) for f in same]
        for key in ("statistic", "per_feature", "composition", "projection", "aggregated", "layout", "reference"):
            assert b.details[key] == a.details[key], key
        assert b.details["published_externally"] is True and "seeded" not in b.details
        again = model.fit(pub, **kw)
        for name in ("theta", "A", "z"):
            np.testing.assert_array_equal(again.draws(name), post.draws(name))
        assert again.privacy == b.to_dict()
    assert model.fit_nonprivate(tiny_counts, feature_sizes=SIZES, **kw).privacy == "non-private"


def test_published_refuses_what_release_could_not_have_made():
    y = np.ones((R, T, sum(SIZES)))
    with pytest.raises(ValueError, match="exactly one of layout"):
        NaiveBayesHMM.published(y, n=5, epsilon=1.0)
    with pytest.raises(ValueError, match=r"y must have shape \(2, 3, 5\) for this layout"):
        NaiveBayesHMM.published(y, n=5, epsilon=1.0, layout=CountLayout.for_array((2, 3), SIZES))
    with pytest.raises(ValueError, match="exactly one of epsilon"):
        NaiveBayesHMM.published(y, n=5, feature_sizes=SIZES)
    with pytest.raises(ValueError, match=r"aggregated counts are one cell: y must have shape \(1, 1, J\)"):
        NaiveBayesHMM.published(y, n=5, epsilon=1.0, feature_sizes=SIZES, aggregated=True)
    with pytest.raises(ValueError, match="n must be an int >= 1"):
        NaiveBayesHMM.published(y, n=0, epsilon=1.0, feature_sizes=SIZES)
    with pytest.raises(ValueError, match="y contains NaN"):
        NaiveBayesHMM.published(np.full((R, T, 5), np.nan), n=5, epsilon=1.0, feature_sizes=SIZES)
    # noisy counts below 0 are projected as release projects them
    assert NaiveBayesHMM.published(-y, n=5, epsilon=1.0, feature_sizes=SIZES).values.min() == 0.0
    with pytest.raises(NotImplementedError, match="NaiveBayesHMMOPS has no release"):
        NaiveBayesHMMOPS.release(y, epsilon=1.0)


# --------------------------------------------------------- hard logs: where chains start
def test_em_start_puts_every_chain_in_one_mode_on_hard_logs(nb_hmm_model):
    """Realistic Afghanistan-style logs (skewed regions, bursts, empty cells, emissions that
    depend on the region and drift; 5 regions x 24 months, ~25k entries), 3 states: with the
    former start (each chain its own k-means clustering) the two chains settle in different
    modes (mean log density apart by ~270, R-hat of the label-invariant log_lik ~ 2); with
    the EM start both sample the same mode. Deterministic under the fixed seeds; over data
    seeds 0-4 of this setting the EM start put both chains in one mode 5 times out of 5,
    while k-means split them once (this seed) and left both in a worse mode once (seed 4)."""
    from pystanprivacy.models.foulds2016_hmm import label_invariant_draws

    counts = preprocess_war_logs(synthetic_war_logs("afghanistan", seed=1, n_months=24).records)
    sampler = dict(chains=2, warmup=300, draws=200, max_treedepth=6, seed=0)
    results = {}
    for init in ("kmeans", "em"):
        post = NaiveBayesHMM(3).fit_nonprivate(counts, init=init, **sampler)
        inv = label_invariant_draws(align_states(post))
        view = post.with_draws({k: v.reshape(2, 200, *v.shape[1:]) for k, v in inv.items()})
        lp = post.sample_stat("lp").mean(axis=1)
        results[init] = (
            float(abs(lp[0] - lp[1])),
            float(view.rhat()["log_lik"]),
            float(np.max(view.rhat()["occupancy"])),
        )
    gap, rhat_ll, _ = results["kmeans"]
    assert gap > 100 and rhat_ll > 1.5
    gap, rhat_ll, rhat_occ = results["em"]
    assert gap < 10 and rhat_ll < 1.05 and rhat_occ < 1.05
