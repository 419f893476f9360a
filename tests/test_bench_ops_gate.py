"""benchmarks/ops_gate_false_refusal.py at a tiny size: a gate that judges fewer draws than the
run judges exactly the run that the same seed with that many draws gives, and the summary
counts the attempts' verdicts. No rate is asserted (tests/models/test_ops_gate.py tests the
default gate on fixed seeds)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("ops_gate_false_refusal")


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded runs warn "reproducible, not secure"
        yield


@pytest.mark.parametrize("target", ["beta1d", "logistic", "gauss10"])
def test_first_draws_is_the_shorter_run(bench, target):
    long_run, variable, _ = bench.runner(target, draws=30, warmup=60)
    short_run, _, _ = bench.runner(target, draws=12, warmup=60)
    cut, short = bench.first_draws(long_run(7), 12), short_run(7)
    assert cut.num_draws == short.num_draws == 12 and cut.settings.draws == 12
    np.testing.assert_array_equal(
        cut.draws(variable, combine_chains=False), short.draws(variable, combine_chains=False)
    )
    np.testing.assert_array_equal(cut.sample_stat("tree_depth"), short.sample_stat("tree_depth"))
    assert cut.num_divergences == short.num_divergences
    np.testing.assert_array_equal(cut.rhat()[variable], short.rhat()[variable])


def test_measure_counts_every_verdict(bench):
    res = bench.measure("beta1d", attempts=2, seed=5)
    assert [r["seed"] for r in res["rows"]] == [5, 6]
    assert set(res["gates"]) == {"former 4x1000", "current 4x1000"}
    for name, g in res["gates"].items():
        assert g["attempts"] == 2 and g["refused"] == sum(r[f"refused {name}"] for r in res["rows"])
        if g["refused"] == 0:  # one-sided Clopper-Pearson with no event: 1 - alpha^(1/n)
            assert g["upper95"] == pytest.approx(1 - 0.05**0.5, rel=1e-9)
    assert "| beta1d | former | 1000 | 1.01 | 100 | " in bench.table([res])
    with pytest.raises(ValueError, match="target must be one of"):
        bench.gates("funnel")


def test_chi2_estimate_of_the_rhat_rate_matches_simulated_chains(bench):
    # AR(1) chains with autocorrelation time 8 (phi = 7/9), 4 x 1000 draws: split R-hat > 1.01
    # with probability ~0.21 (chi^2 estimate). 600 replicates: sd ~0.017; the 5-sd band has a
    # false-rejection rate below 1e-6 (and the seed is fixed).
    draws = bench.simulate_ar1(7 / 9, 600, seed=1)
    observed = float(np.mean(draws["rhat"] > 1.01))
    expected = bench.chi2_rhat_rate(1.01, 1000, 8.0)
    assert 0.15 < expected < 0.27
    assert abs(observed - expected) < 5 * np.sqrt(expected * (1 - expected) / 600)
    # and the estimate is not a constant: at tau = 1 it is negligible, at 1.05 too
    assert bench.chi2_rhat_rate(1.01, 1000, 1.0) < 1e-10 and bench.chi2_rhat_rate(1.05, 1000, 8.0) < 1e-6
