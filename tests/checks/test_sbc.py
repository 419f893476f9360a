"""Simulation-based calibration (issue 51 item 3): pystanprivacy.checks.sbc and ``pystanprivacy sbc``.

Statistical tests use fixed seeds; each states its false-rejection rate. The Stan fits reuse the
registry's compiled models (bernstein2018/binomial_beta_exact, foulds2016/beta_bernoulli and
beta_bernoulli_ops): 1 chain, a few hundred draws, the replicates of a chunk in one Stan run.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from arviz.stats.ecdf_utils import ecdf_confidence_band
from scipy import stats

from pystanprivacy import cli
from pystanprivacy.checks import sbc

warnings.filterwarnings("ignore", message="a seed was given")

FAST = sbc.Sampler(chains=1, warmup=300, draws=300)


# ------------------------------------------------------------------------------ ranks and thinning
def test_ranks_count_the_draws_below_the_true_value_as_a_sorted_search_does():
    rng = np.random.default_rng(1)
    reference = rng.normal(size=(40, 3))
    draws = rng.normal(size=(40, 25, 3))
    ranks = sbc.rank_statistics(reference, draws)
    # independent: position of the true value in the sorted draws
    expected = np.array(
        [[np.searchsorted(np.sort(draws[i, :, p]), reference[i, p]) for p in range(3)] for i in range(40)]
    )
    assert np.array_equal(ranks, expected)
    # a hand example: draws 0.1, 0.5, 0.9 and truths below, between and above them
    assert sbc.rank_statistics([[0.0], [0.6], [1.0]], [[[0.1], [0.5], [0.9]]] * 3).ravel().tolist() == [0, 2, 3]
    with pytest.raises(ValueError, match="draws must have shape"):
        sbc.rank_statistics(reference, draws[:, :, :2])


def test_thinning_keeps_draws_evenly_spaced_over_the_pooled_chains():
    idx = sbc.thin_indices(1000, 99)
    assert idx.size == 99 and idx[0] >= 0 and idx[-1] <= 999
    gaps = np.diff(idx)
    assert gaps.min() >= math.floor(1000 / 99) and gaps.max() <= math.ceil(1000 / 99)
    assert sbc.thin_indices(99, 99).tolist() == list(range(99))
    with pytest.raises(ValueError, match="cannot keep 100 draws out of 99"):
        sbc.thin_indices(99, 100)


# ------------------------------------------------------------------------------ the uniformity test
def _statistic_by_hand(ranks: np.ndarray, L: int) -> float:
    """min over z_j of 2 min(P[X <= K_j], P[X >= K_j]), X ~ Bin(N, z_j), by exact sums of math.comb."""
    n = ranks.size
    out = 1.0
    for j in range(L):
        z = (j + 1) / (L + 1)
        k = int(np.sum(ranks <= j))
        pmf = [math.comb(n, i) * z**i * (1 - z) ** (n - i) for i in range(n + 1)]
        out = min(out, 2 * sum(pmf[: k + 1]), 2 * sum(pmf[k:]))
    return min(out, 1.0)


def test_ecdf_statistic_matches_the_binomial_tails_summed_by_hand():
    rng = np.random.default_rng(2)
    uniform = rng.integers(0, 10, size=30)
    piled = np.concatenate([np.zeros(12, int), np.full(12, 9), rng.integers(0, 10, 6)])  # too narrow a posterior
    got = sbc.ecdf_statistic(np.column_stack([uniform, piled]), 9)
    assert got[0] == pytest.approx(_statistic_by_hand(uniform, 9), rel=1e-9)
    assert got[1] == pytest.approx(_statistic_by_hand(piled, 9), rel=1e-9)
    assert got[1] < 1e-3 < got[0]


@pytest.mark.parametrize(("n", "L", "level"), [(100, 99, 0.95), (100, 99, 0.99), (200, 49, 0.95), (50, 19, 0.99)])
def test_simultaneous_band_agrees_with_arviz_optimized_band(n, L, level):
    # ArviZ's "optimized" band (Säilynoja et al. 2022) is computed without simulation; ours by a
    # simulated null (10 000 sets, fixed seed). They agree to one count at every point; the pointwise
    # band of the same level (what a band without the simultaneity adjustment gives) does not
    z, lo, hi = sbc.ecdf_band(n, L, level)
    alo, ahi = ecdf_confidence_band(n, z, z, prob=level, method="optimized")
    assert np.abs(lo - alo).max() * n <= 1 + 1e-9
    assert np.abs(hi - ahi).max() * n <= 1 + 1e-9
    plo, phi = ecdf_confidence_band(n, z, z, prob=level, method="pointwise")
    assert max(np.abs(lo - plo).max(), np.abs(hi - phi).max()) * n >= 2


def test_band_is_the_set_of_ecdfs_the_test_accepts():
    rng = np.random.default_rng(3)
    n, L, level = 100, 19, 0.95
    _, lo, hi = sbc.ecdf_band(n, L, level)
    ranks = rng.integers(0, L + 1, size=(n, 400))
    ranks[:, 200:] = np.minimum(L, (ranks[:, 200:] * 1.15).astype(int))  # some shifted, so both verdicts occur
    ecdf = np.stack([np.cumsum(np.bincount(ranks[:, p], minlength=L + 1))[:L] / n for p in range(400)])
    inside = np.all((ecdf >= lo - 1e-12) & (ecdf <= hi + 1e-12), axis=1)
    accepted = sbc.ecdf_pvalue(ranks, L) > 1 - level
    assert 0 < inside.sum() < 400
    assert np.array_equal(inside, accepted)


def test_false_rejection_rate_of_the_uniformity_test_on_uniform_ranks():
    # 4000 sets of N = 100 uniform ranks (seed 4, independent of the test's reference seed): the
    # per-parameter test at level 0.05 rejects 0.05 of them up to Monte-Carlo error (binomial sd
    # 0.0034; the bounds are 3.5 sd: a correct test fails this with probability < 1e-3). Measured: 0.051
    rng = np.random.default_rng(4)
    ranks = rng.integers(0, 100, size=(100, 4000))
    rate = float(np.mean(sbc.ecdf_pvalue(ranks, 99) <= 0.05))
    assert 0.038 <= rate <= 0.062
    # the chi-square beside it: the same level, up to its own approximation
    _, chi_p, bins = sbc.chisquare_uniformity(ranks, 99)
    assert bins == 20 and 0.035 <= float(np.mean(chi_p <= 0.05)) <= 0.065


def test_family_wise_false_rejection_rate_of_the_verdict_is_at_most_alpha():
    # 3000 models with P = 3 calibrated parameters each (independent uniform ranks), alpha = 0.01 split
    # by Bonferroni: a model fails with probability 1 - (1 - 0.01/3)^3 = 0.00997 here. Observed rate
    # within [0.003, 0.018] (binomial sd 0.0018 over 3000: a correct test fails this with
    # probability < 2e-4); measured 0.0107. A test at level alpha per parameter, without the split,
    # fails 1 - 0.99^3 = 0.0297 of them (measured on these ranks: 0.0287), above the upper bound
    rng = np.random.default_rng(5)
    ranks = rng.integers(0, 100, size=(100, 3000, 3))
    p = sbc.ecdf_pvalue(ranks.reshape(100, -1), 99).reshape(3000, 3)
    failed = np.any(p <= sbc.ALPHA / 3, axis=1)
    assert 0.003 <= float(np.mean(failed)) <= 0.018
    table = sbc.uniformity_table(ranks[:, 0, :], ["a", "b", "c"], 99)
    assert table["level"].tolist() == [sbc.ALPHA / 3] * 3
    assert table["passed"].tolist() == list(p[0] > sbc.ALPHA / 3)


def test_uniformity_table_refuses_ranks_outside_0_to_L():
    with pytest.raises(ValueError, match="ranks must lie in 0..rank_draws = 0..9"):
        sbc.uniformity_table(np.array([[0], [10]]), ["a"], 9)
    with pytest.raises(ValueError, match="names must name the 1 columns"):
        sbc.uniformity_table(np.array([[0], [1]]), ["a", "b"], 9)
    with pytest.raises(ValueError, match="alpha must be in"):
        sbc.uniformity_table(np.array([[0], [1]]), ["a"], 9, alpha=1.0)


# ------------------------------------------------------------------------------ naive fails, noise-aware passes
def test_naive_model_fails_and_noise_aware_model_passes():
    # Bernstein & Sheldon's binomial-beta: theta ~ Beta(10, 10), n = 100 records, y = s + Laplace(1/0.1).
    # The noise-aware exact model passes (a calibrated model fails with probability <= alpha = 0.01);
    # the naive conjugate update (noise ignored) fails: its posterior is too narrow, so the true theta
    # falls outside its draws and the ranks pile up at 0 and L. Power: it failed at each of the 20 seeds
    # 1000..1019 tried at R = 100 (ECDF p-value at the simulation floor 1e-4 every time), and here.
    aware = sbc.run_sbc("bernstein2018/binomial_beta_exact", replicates=100, chunk=100, sampler=FAST, seed=11)
    naive = sbc.run_sbc("naive/bernstein2018/binomial_beta", replicates=100, chunk=100, sampler=FAST, seed=11)
    assert aware.passed and not naive.passed
    # the same simulated data: the same true thetas, replicate by replicate
    ref = aware.ranks.sort_values("replicate")["reference"].to_numpy()
    assert np.allclose(ref, naive.ranks.sort_values("replicate")["reference"].to_numpy())
    ends = naive.ranks["rank"].isin([0, 99]).mean()
    assert ends > 0.25  # U-shaped: a calibrated model puts 2/100 of its ranks there
    assert aware.summary.loc[0, "low_ess"] <= 5


def test_the_registrys_plug_in_posterior_fails_where_the_noise_matters():
    # foulds2016/beta_bernoulli is Foulds et al.'s Laplace posterior Beta(1 + y+, 1 + y-): the noisy counts
    # plugged in as if exact (a naive variant in the registry). At epsilon = 0.1 and n = 100 (noise sd 28
    # counts against a binomial sd <= 5) SBC fails it: at each of the 10 seeds 2000..2009 tried at
    # R = 100 (p-value 1e-4 every time), and here
    result = sbc.run_sbc(
        "foulds2016/beta_bernoulli", replicates=100, chunk=100, sampler=FAST, seed=2000, options={"epsilon": 0.1}
    )
    assert not result.passed and result.summary.loc[0, "ecdf_pvalue"] < 1e-3


@pytest.mark.parametrize("seed", range(5))
def test_naive_model_fails_at_every_seed(seed):
    # closed-form draws, no Stan: the power of the check at R = 100 shown over seeds
    assert not sbc.run_sbc("naive/bernstein2018/binomial_beta", replicates=100, sampler=FAST, seed=100 + seed).passed


def test_ops_check_passes_the_released_draws_and_fails_a_wrong_target():
    # foulds2016/beta_bernoulli_ops: the released draw ranked among exact draws of its tempered target
    # passes (false rejection <= 0.01). Ranked among draws of the untempered posterior (T = 1, which is
    # narrower by about sqrt(T) = 1.7 here) the same released draws fail: the check sees the temperature
    problem = sbc.make_problem("foulds2016/beta_bernoulli_ops", n=100, epsilon=1.0)
    rep = problem.replicate(80, rng=np.random.default_rng(6), sampler=FAST)
    ranks, _ = sbc._ranks_of(rep, 99)
    assert sbc.uniformity_table(ranks, ["p"], 99)["passed"].all()

    class Untempered(sbc.BetaBernoulliOPSSBC):
        def target_draws(self, x, size, rng):
            saved = self.model.temperature
            self.model.temperature = lambda epsilon: 1.0
            try:
                return super().target_draws(x, size, rng)
            finally:
                self.model.temperature = saved

    wrong = Untempered(n=100, epsilon=1.0).replicate(80, rng=np.random.default_rng(6), sampler=FAST)
    wrong_ranks, _ = sbc._ranks_of(wrong, 99)
    assert not sbc.uniformity_table(wrong_ranks, ["p"], 99)["passed"].all()
    # and the exact target draws have the truncated beta's distribution (KS, level 1e-3)
    x = np.array([[1] * 30 + [0] * 70])
    draws = problem.target_draws(x, 4000, np.random.default_rng(7))[0]
    T = problem.model.temperature(1.0)
    a, b, a0 = 1 + 30 / T, 1 + 70 / T, problem.model.a0
    lo, hi = stats.beta.cdf([a0, 1 - a0], a, b)
    assert stats.kstest(draws, lambda q: (stats.beta.cdf(np.clip(q, a0, 1 - a0), a, b) - lo) / (hi - lo)).pvalue > 1e-3


# ------------------------------------------------------------------------------ checks and options
def test_make_problem_refuses_unknown_models_and_options():
    # every registry model has a check (the non-private baselines too): a name outside the registry has none
    with pytest.raises(ValueError, match="no SBC check for model 'kulkarni2022/no_such_model'"):
        sbc.make_problem("kulkarni2022/no_such_model")
    with pytest.raises(TypeError, match="option.s. d do not apply to the check of 'foulds2016/beta_bernoulli'"):
        sbc.make_problem("foulds2016/beta_bernoulli", d=3)
    with pytest.raises(ValueError, match="epsilon"):
        sbc.make_problem("kulkarni2022/gaussian", epsilon=-1.0)
    assert sbc.make_problem("kulkarni2022/histogram_oue", d=4).parameter_names() == [
        f"theta[{k}]" for k in (1, 2, 3, 4)
    ]
    with pytest.raises(ValueError, match="chains . draws = 10 must be at least rank_draws = 99"):
        sbc.run_sbc("naive/bernstein2018/binomial_beta", replicates=10, sampler=sbc.Sampler(draws=10))


# ------------------------------------------------------------------------------ the command line
def test_cli_sbc_writes_table_plot_sidecar_and_resumes(tmp_path, capsys):
    out = tmp_path / "sbc"
    argv = [
        "sbc",
        "foulds2016/beta_bernoulli",
        "--replicates",
        "20",
        "--chunk",
        "10",
        "--warmup",
        "200",
        "--draws",
        "200",
        "--seed",
        "3",
        "--no-progress",
        "--out",
        str(out),
    ]
    code = cli.main(argv)
    summary = pd.read_csv(out / "sbc_summary.csv")
    side = json.loads((out / "sbc_summary.json").read_text())
    assert code == (0 if side["extra"]["passed"] else 1)
    assert summary["parameter"].tolist() == ["p"] and summary.loc[0, "replicates"] == 20
    assert side["extra"]["accountant"].startswith("none") and side["extra"]["sampler"] == {
        "chains": 1,
        "warmup": 200,
        "draws": 200,
    }
    assert (out / "sbc.png").stat().st_size > 10_000
    ranks = pd.read_csv(out / "sbc_ranks.csv")
    assert sorted(ranks["replicate"]) == list(range(20)) and ranks["rank"].between(0, 99).all()
    # the same command again reads the two saved chunks instead of fitting
    capsys.readouterr()
    assert cli.main(argv) == code
    assert "resuming: 2 saved task result(s)" in capsys.readouterr().out
    assert pd.read_csv(out / "sbc_ranks.csv").equals(ranks)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sbc", "nope/model"], "no SBC check for 'nope/model'"),
        (["sbc", "foulds2016/beta_bernoulli", "--d", "3"], "d do not apply"),
        (["sbc", "foulds2016/beta_bernoulli", "--rank-draws", "5000"], "--rank-draws must be >= 1 and at most"),
        (["sbc", "foulds2016/beta_bernoulli", "--replicates", "1"], "--replicates must be >= 2"),
        (["sbc", "foulds2016/beta_bernoulli", "--simulator", "x.py"], "--simulator goes with a MODEL.stan"),
        (["sbc", "missing.stan"], "MODEL 'missing.stan': not a file"),
    ],
)
def test_cli_sbc_usage_errors_before_any_work(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([*argv, "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------ a user's own program
PROGRAM = Path(__file__).with_name("binomial_laplace.stan")  # its simulator: binomial_laplace_sim.py beside it


def test_cli_sbc_of_a_users_program_with_its_simulator(tmp_path):
    # a program of the user's own (the function library's exact dp_binomial_laplace likelihood), its
    # simulator found beside it (MODEL_sim.py): one Stan run per replicate; a calibrated model fails
    # with probability <= 0.01
    out = tmp_path / "sbc"
    code = cli.main(
        [
            "sbc",
            str(PROGRAM),
            "--replicates",
            "30",
            "--warmup",
            "300",
            "--draws",
            "300",
            "--epsilon",
            "0.5",
            "--seed",
            "2",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    summary = pd.read_csv(out / "sbc_summary.csv")
    side = json.loads((out / "sbc_summary.json").read_text())
    assert code == 0 and summary["parameter"].tolist() == ["theta"] and bool(summary.loc[0, "passed"])
    assert side["extra"]["simulator"].endswith("binomial_laplace_sim.py") and side["extra"]["chunk"] == 1
    ranks = pd.read_csv(out / "sbc_ranks.csv")
    # the true theta of each replicate came from the simulator's Beta(2, 2) prior
    assert ranks["reference"].between(0, 1).all() and ranks["reference"].nunique() == 30


def test_a_simulator_without_release_is_a_usage_error(tmp_path, capsys):
    sim = tmp_path / "sim.py"
    sim.write_text("def simulate(rng):\n    return {'parameters': {'theta': 0.5}, 'private': 1}\n")
    with pytest.raises(SystemExit) as exc:
        cli.main(["sbc", str(PROGRAM), "--simulator", str(sim), "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    assert "must define a function release(...)" in capsys.readouterr().err
    with pytest.raises(ValueError, match="'parameters' must be a non-empty dict"):
        sbc._flatten_parameters({}, "simulate")
    names, values = sbc._flatten_parameters({"mu": 1.5, "beta": [[1, 2], [3, 4]]}, "simulate")
    assert names == ["mu", "beta[1,1]", "beta[1,2]", "beta[2,1]", "beta[2,2]"] and values.tolist() == [1.5, 1, 2, 3, 4]


def test_a_program_that_does_not_fit_its_simulators_release_is_refused_before_stan(tmp_path, capsys):
    # the simulator's release has no bounds and a Gaussian record; the program calls a Laplace-only
    # function: refused by StanProgram's checks on one simulated replicate, before any compile or task
    sim = tmp_path / "sim.py"
    sim.write_text(
        "from pystanprivacy.privacy.mechanisms import Gaussian\n"
        "def simulate(rng):\n    return {'parameters': {'theta': 0.5}, 'private': 3}\n"
        "def release(private, *, epsilon, seed, accountant):\n"
        "    return Gaussian(epsilon=epsilon, delta=1e-5, sensitivity=1.0, seed=seed).release(private, n=40)\n"
    )
    with pytest.raises(SystemExit) as exc:
        cli.main(["sbc", str(PROGRAM), "--simulator", str(sim), "--epsilon", "0.5", "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "dp_binomial_laplace_lpdf" in err and "gaussian" in err
    assert not (tmp_path / "out").exists()
    broken = tmp_path / "broken.py"
    broken.write_text(
        "def simulate(rng):\n    return 1/0\ndef release(private, *, epsilon, seed, accountant):\n    return None\n"
    )
    with pytest.raises(ValueError, match="ZeroDivisionError"):
        sbc.make_problem("program", program=str(PROGRAM), simulator=str(broken)).preflight()
