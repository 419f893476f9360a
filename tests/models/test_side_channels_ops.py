"""Side channels of one-posterior sampling and of the command line (issue 17).

* An OPS attempt is charged before its Stan run; a refusal keeps the charge, says so, and
  shows no statistic of the run (only the public thresholds and what the user can change).
* OPS records carry ``secure`` / ``randomness`` like the mechanisms' records; a seeded draw
  warns once; an unseeded draw picks its (chain, draw) with ``secrets``.
* ``pystanprivacy audit --help`` prints its text as written.

Stan runs are tiny (2 chains, few draws) and seeded, so every test here is deterministic.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
import warnings

import numpy as np
import pytest

from pystanprivacy import cli
from pystanprivacy.experiments.jewson2023.baselines import MinamiGibbsLogistic
from pystanprivacy.models.base import OPSResult
from pystanprivacy.models.foulds2016 import BetaBernoulliOPS
from pystanprivacy.models.foulds2016_hmm import NaiveBayesHMMOPS, align_states
from pystanprivacy.models.jewson2023 import LinearRegressionBetaD, LogisticRegressionBetaD
from pystanprivacy.privacy.records import (
    SEEDED_RANDOMNESS,
    BudgetExceededError,
    PrivacyAccountant,
    ReproducibleNotSecureWarning,
    reset_reproducible_warning,
)
from pystanprivacy.sampling.posterior import ConvergenceError, Thresholds
from pystanprivacy.sampling.stan import StanModel


@pytest.fixture(scope="module")
def logistic_model():
    return StanModel.get("jewson2023/logistic")


def test_help_text_prints_percent_signs_as_written(capsys):
    texts = {}
    for command in ("models", "reproduce", "audit"):
        with pytest.raises(SystemExit) as exit_:
            cli.main([command, "--help"])
        assert exit_.value.code == 0
        texts[command] = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "Clopper-Pearson lower bound on epsilon (95 % confidence) next to the claimed epsilon" in texts["audit"]
    assert [c for c, text in texts.items() if "%%" in text] == []


# ------------------------------------------------------------------ OPS: charge and refusal
# No run can pass these thresholds (R-hat <= 1 + 1e-7 and ESS >= 10^9 per chain), so every
# attempt is refused whatever the data: the refusal is forced with public knobs only.
IMPOSSIBLE = Thresholds(max_rhat=1.0000001, min_ess_per_chain=1e9)
SHORT = dict(chains=2, warmup=20, draws=20)
BITS = np.array([1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0])
HMM_SIZES = [2, 2]
HMM_COUNTS = np.array([[[3, 1, 2, 2], [0, 4, 1, 3], [2, 2, 4, 0]]])  # (R=1, T=3, J=4), 4 entries a cell
LOGISTIC_X = np.column_stack([np.ones(20), np.linspace(0.0, 1.0, 20)])
LOGISTIC_Y = (np.arange(20) % 3 == 0).astype(int)
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?")


class _StanCalls:
    """Counts StanModel.sample calls (to show that a refused budget runs nothing)."""

    def __init__(self, monkeypatch):
        self.n = 0
        real = StanModel.sample

        def counted(model, *args, **kwargs):
            self.n += 1
            return real(model, *args, **kwargs)

        monkeypatch.setattr(StanModel, "sample", counted)


def _check_refusals(
    attempt, datasets, *, label, epsilon, thresholds, checked, settings, monkeypatch, delta=0.0, suffix=""
):
    """Attempt an OPS draw on each private data set with a budget for exactly those attempts
    plus a half: each refusal is charged once (``(epsilon, delta)``), before sampling, and its
    message is the fixed template of public values (the same for every data set, so it carries
    no statistic of the run; ``suffix``: what the model adds, public too); then an attempt the
    rest of the budget cannot cover runs nothing."""
    acct = PrivacyAccountant(epsilon * (len(datasets) + 0.5), delta * (len(datasets) + 0.5))
    messages = []
    for data in datasets:
        with pytest.raises(ConvergenceError) as err:
            attempt(data, acct)
        messages.append(str(err.value))
    entry = (f"{label} (attempt, charged before sampling)", epsilon, delta)
    assert acct.ledger == [entry] * len(datasets)
    expected = (
        str(
            ConvergenceError.refused(
                label, epsilon=epsilon, thresholds=thresholds, checked=checked, settings=settings, charged=True
            )
        )
        + suffix
    )
    assert messages == [expected] * len(datasets)
    assert "was charged for this attempt and stays charged" in expected
    # every number in the message is a public input (threshold, setting, epsilon or delta)
    public = {repr(v) for v in (*dataclasses.astuple(thresholds), *settings.values(), epsilon, delta)}
    assert set(NUMBER.findall(expected)) <= public, set(NUMBER.findall(expected)) - public
    calls = _StanCalls(monkeypatch)
    with pytest.raises(BudgetExceededError):
        attempt(datasets[0], acct)
    assert calls.n == 0 and acct.ledger == [entry] * len(datasets)


def test_beta_bernoulli_ops_charges_every_attempt_and_refuses_without_statistics(beta_bernoulli_ops_model, monkeypatch):
    ops = BetaBernoulliOPS(a0=0.2)
    settings = dict(warmup=20, draws=20, chains=2, adapt_delta=0.8, max_treedepth=10)
    _check_refusals(
        lambda x, acct: ops.sample_one(x, epsilon=1.0, accountant=acct, seed=3, thresholds=IMPOSSIBLE, **SHORT),
        [BITS, 1 - BITS],
        label="OPS beta-Bernoulli",
        epsilon=1.0,
        thresholds=IMPOSSIBLE,
        checked=["p"],
        settings=settings,
        monkeypatch=monkeypatch,
    )
    # a released draw is charged once too, and the override is stated
    acct = PrivacyAccountant(1.0)
    rel = ops.sample_one(
        BITS, epsilon=1.0, accountant=acct, seed=3, thresholds=IMPOSSIBLE, allow_unconverged=True, **SHORT
    )
    assert rel.record.details["convergence_override"] is True
    assert acct.ledger == [("OPS beta-Bernoulli (attempt, charged before sampling)", 1.0, 0.0)]
    # without an accountant the message says what the attempt used
    with pytest.raises(ConvergenceError, match=r"no accountant was given, but this attempt used epsilon=1\.0"):
        ops.sample_one(BITS, epsilon=1.0, seed=3, thresholds=IMPOSSIBLE, **SHORT)


def test_hmm_ops_charges_every_attempt_and_refuses_without_statistics(nb_hmm_ops_model, monkeypatch):
    ops = NaiveBayesHMMOPS(1, multiplier=10.0)
    settings = dict(warmup=20, draws=20, chains=2, adapt_delta=0.8, max_treedepth=7)
    _check_refusals(
        lambda c, acct: ops.sample_one(
            c, epsilon=2.0, feature_sizes=HMM_SIZES, accountant=acct, seed=4, thresholds=IMPOSSIBLE, **SHORT
        ),
        [HMM_COUNTS, HMM_COUNTS[:, ::-1]],
        label="OPS naive-Bayes HMM",
        epsilon=2.0,
        thresholds=IMPOSSIBLE,
        # the gate also checks the label-invariant sorted occupancy (the EM-started HMM, issue 15)
        checked=["label-aligned theta", "A", "log_lik", "sorted state occupancy"],
        settings=settings,
        monkeypatch=monkeypatch,
    )


def test_betad_ops_charges_every_attempt_and_refuses_without_statistics(logistic_model, monkeypatch):
    ops = LogisticRegressionBetaD()
    settings = dict(warmup=20, draws=20, chains=2, adapt_delta=0.8, max_treedepth=10)
    _check_refusals(
        lambda y, acct: ops.sample_one(
            LOGISTIC_X, y, epsilon=5.0, accountant=acct, seed=5, thresholds=IMPOSSIBLE, **SHORT
        ),
        [LOGISTIC_Y, 1 - LOGISTIC_Y],
        label="beta-D logistic regression",
        epsilon=5.0,
        thresholds=IMPOSSIBLE,
        checked=["theta"],
        settings=settings,
        monkeypatch=monkeypatch,
    )
    # the default gate is named too, and the error is still a RuntimeError for old callers
    with pytest.raises(RuntimeError, match=r"split R-hat <= 1\.05; bulk and tail ESS >= 25\.0 per chain"):
        ops.sample_one(LOGISTIC_X, LOGISTIC_Y, epsilon=5.0, seed=5, chains=2, warmup=3, draws=8)


def test_bad_sampler_settings_are_refused_before_any_charge():
    acct = PrivacyAccountant(10.0)
    with pytest.raises(TypeError, match="thresholds"):
        BetaBernoulliOPS().sample_one(BITS, epsilon=1.0, accountant=acct, thresholds={"max_rhat": 1.1})
    with pytest.raises(ValueError, match="adapt_delta"):
        NaiveBayesHMMOPS(1).sample_one(
            HMM_COUNTS, epsilon=1.0, feature_sizes=HMM_SIZES, accountant=acct, adapt_delta=1.5
        )
    with pytest.raises(ValueError, match="init"):
        NaiveBayesHMMOPS(1).sample_one(
            HMM_COUNTS, epsilon=1.0, feature_sizes=HMM_SIZES, accountant=acct, init=[{}], chains=2
        )
    with pytest.raises(TypeError, match="draws"):
        LogisticRegressionBetaD().sample_one(LOGISTIC_X, LOGISTIC_Y, epsilon=1.0, accountant=acct, draws=2.5)
    with pytest.raises(ValueError, match="not reachable"):
        LinearRegressionBetaD(s2=0.01).sample_one(LOGISTIC_X, LOGISTIC_Y.astype(float), epsilon=0.1, accountant=acct)
    assert acct.ledger == []


# ------------------------------------------------------------------ OPS: randomness of the draw
class _SecretsSpy:
    """Replaces secrets.randbelow: answers the ranges named in ``answers`` (Stan's seed range
    2**31 - 1, the number of chains, ...) with fixed values, others with real randomness, and
    records every range asked for."""

    def __init__(self, monkeypatch, answers):
        self.asked: list[int] = []
        real = secrets.randbelow

        def randbelow(n):
            self.asked.append(n)
            return answers[n] if n in answers else real(n)

        monkeypatch.setattr(secrets, "randbelow", randbelow)


STAN_SEED_RANGE = 2**31 - 1


def _assert_secure(record, chosen):
    assert record.details["seeded"] is False and record.details["secure"] is True
    assert record.details["randomness"] == (
        "Stan's MCMC: its own non-cryptographic generator seeded with 31 bits from secrets; "
        f"{chosen}: cryptographic (secrets)"
    )


def _assert_seeded(record, chosen):
    assert record.details["seeded"] is True and record.details["secure"] is False
    assert record.details["randomness"] == f"{SEEDED_RANDOMNESS} (Stan's seed and {chosen} both come from it)"


def _warnings_of(call):
    """(result, ReproducibleNotSecureWarnings issued) of ``call`` with the warning re-armed."""
    reset_reproducible_warning()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call()
    return out, [w for w in caught if issubclass(w.category, ReproducibleNotSecureWarning)]


def test_beta_bernoulli_ops_randomness_secure_without_seed_marked_with_one(beta_bernoulli_ops_model, monkeypatch):
    ops = BetaBernoulliOPS(a0=0.2)
    chosen = "the released draw's (chain, iteration) index"
    # seeded: not secure, warned once per process, and the same choice as before (Stan's seed,
    # then the chain and the iteration of each data set, all from the seed's PCG64)
    batch, warned = _warnings_of(
        lambda: ops.sample_batch(
            np.stack([BITS, 1 - BITS]), epsilon=1.0, seed=11, allow_unconverged=True, keep_posterior=True, **SHORT
        )
    )
    assert len(warned) == 1
    _assert_seeded(batch.record, chosen)
    rng = np.random.default_rng(11)
    assert batch.posterior.settings.seed == int(rng.integers(0, 2**31 - 1))
    chain, it = rng.integers(2, size=2), rng.integers(20, size=2)
    p = batch.posterior.draws("p", combine_chains=False)
    np.testing.assert_array_equal(batch.params["p"], p[chain, it, [0, 1]])
    _, again = _warnings_of(
        lambda: (
            ops.sample_one(BITS, epsilon=1.0, seed=12, allow_unconverged=True, **SHORT),
            ops.sample_one(BITS, epsilon=1.0, seed=13, allow_unconverged=True, **SHORT),
        )
    )
    assert len(again) == 1  # once per process
    # unseeded: Stan's seed, then each set's chain and iteration, from secrets
    spy = _SecretsSpy(monkeypatch, {STAN_SEED_RANGE: 12345, 2: 1, 20: 17})
    batch, warned = _warnings_of(
        lambda: ops.sample_batch(
            np.stack([BITS, 1 - BITS]), epsilon=1.0, allow_unconverged=True, keep_posterior=True, **SHORT
        )
    )
    assert warned == [] and batch.posterior.settings.seed == 12345
    assert spy.asked == [STAN_SEED_RANGE, 2, 2, 20, 20]
    np.testing.assert_array_equal(batch.params["p"], batch.posterior.draws("p", combine_chains=False)[1, 17, [0, 1]])
    _assert_secure(batch.record, chosen)
    _assert_secure(ops.sample_one(BITS, epsilon=1.0, allow_unconverged=True, **SHORT).record, chosen)


def test_hmm_ops_randomness_secure_without_seed_marked_with_one(nb_hmm_ops_model, monkeypatch):
    ops = NaiveBayesHMMOPS(2, multiplier=10.0)
    chosen = "the released iteration and the relabelling of its states"
    kw = dict(epsilon=2.0, feature_sizes=HMM_SIZES, allow_unconverged=True, keep_posterior=True, **SHORT)
    res, warned = _warnings_of(lambda: ops.sample(HMM_COUNTS, seed=21, **kw))
    assert len(warned) == 1
    _assert_seeded(res.release.record, chosen)
    # unseeded: Stan's seed, the iteration (of 2 x 20) and the Fisher-Yates swap from secrets
    spy = _SecretsSpy(monkeypatch, {STAN_SEED_RANGE: 999, 40: 33, 2: 0})
    res, warned = _warnings_of(lambda: ops.sample(HMM_COUNTS, **kw))
    assert warned == [] and res.posterior.settings.seed == 999
    assert spy.asked == [STAN_SEED_RANGE, 40, 2]
    aligned = align_states(res.posterior)
    np.testing.assert_array_equal(res.params["theta"], aligned.theta[33][[1, 0]])  # swap 1 <-> 0
    _assert_secure(res.release.record, chosen)


def _check_logistic_draw_randomness(ops, monkeypatch, *, epsilon, seed, stan_seed, chain):
    """A seeded ``try_sample_one`` warns once, is marked not secure and picks Stan's seed, the
    chain and the iteration from the seed's Generator as before; an unseeded one takes all
    three from ``secrets`` (spied) and is marked secure."""
    chosen = "the released draw's (chain, iteration) index"
    kw = dict(epsilon=epsilon, allow_unconverged=True, keep_posterior=True, **SHORT)
    out, warned = _warnings_of(lambda: ops.try_sample_one(LOGISTIC_X, LOGISTIC_Y, seed=seed, **kw))
    assert len(warned) == 1
    _assert_seeded(out.release.record, chosen)
    rng = np.random.default_rng(seed)  # the seeded choice is unchanged: Stan's seed, chain, iteration
    assert out.posterior.settings.seed == int(rng.integers(0, 2**31 - 1))
    c, it = int(rng.integers(2)), int(rng.integers(20))
    np.testing.assert_array_equal(out.release.values, out.posterior.draws("theta", combine_chains=False)[c, it])
    spy = _SecretsSpy(monkeypatch, {STAN_SEED_RANGE: stan_seed, 2: chain, 20: 9})
    out, warned = _warnings_of(lambda: ops.try_sample_one(LOGISTIC_X, LOGISTIC_Y, **kw))
    assert warned == [] and out.posterior.settings.seed == stan_seed and spy.asked == [STAN_SEED_RANGE, 2, 20]
    np.testing.assert_array_equal(out.release.values, out.posterior.draws("theta", combine_chains=False)[chain, 9])
    _assert_secure(out.release.record, chosen)
    return chosen


def test_betad_ops_randomness_secure_without_seed_marked_with_one(logistic_model, monkeypatch):
    _check_logistic_draw_randomness(
        LogisticRegressionBetaD(), monkeypatch, epsilon=5.0, seed=31, stan_seed=4242, chain=0
    )


# ------------------------------------------------------------------ Thresholds are validated
@pytest.mark.parametrize(
    "field, value, error",
    [
        ("max_rhat", float("nan"), ValueError),  # NaN: `rhat > nan` is False, the R-hat check is off
        ("max_rhat", float("inf"), ValueError),
        ("max_rhat", 0.5, ValueError),  # below 1 refuses every mixed run
        ("max_rhat", "1.05", TypeError),
        ("min_ess_per_chain", float("nan"), ValueError),  # `ess < nan` is False: the ESS check is off
        ("min_ess_per_chain", -5.0, ValueError),
        ("min_ess_per_chain", None, TypeError),
        ("max_divergences", float("nan"), TypeError),
        ("max_divergences", -1, ValueError),
        ("max_divergences", 0.5, TypeError),
        ("max_divergences", True, TypeError),
        ("max_treedepth_fraction", float("nan"), ValueError),
        ("max_treedepth_fraction", -0.1, ValueError),
        ("max_treedepth_fraction", 1.5, ValueError),
        ("max_treedepth_fraction", [0.1], TypeError),
    ],
)
def test_thresholds_refuse_values_that_would_disable_or_block_a_check(field, value, error):
    with pytest.raises(error, match=field):
        Thresholds(**{field: value})
    with pytest.raises(error, match=field):  # dataclasses.replace goes through the same check
        dataclasses.replace(Thresholds(), **{field: value})


def test_thresholds_keep_defaults_and_store_plain_numbers():
    assert dataclasses.astuple(Thresholds()) == (1.01, 100.0, 0, 0.0)
    t = Thresholds(
        max_rhat=np.float64(1.05),
        min_ess_per_chain=25,
        max_divergences=np.int64(2),
        max_treedepth_fraction=np.float32(0.5),
    )
    assert t == Thresholds(max_rhat=1.05, min_ess_per_chain=25.0, max_divergences=2, max_treedepth_fraction=0.5)
    assert [type(v) for v in dataclasses.astuple(t)] == [float, float, int, float]
    assert repr(t) == "Thresholds(max_rhat=1.05, min_ess_per_chain=25.0, max_divergences=2, max_treedepth_fraction=0.5)"
    # the edges are accepted: R-hat exactly 1, no ESS requirement, every iteration at the tree depth
    assert Thresholds(max_rhat=1, min_ess_per_chain=0, max_treedepth_fraction=1).max_rhat == 1.0


def test_a_nan_threshold_is_refused_before_an_ops_attempt_is_charged():
    acct = PrivacyAccountant(10.0)
    with pytest.raises(ValueError, match="min_ess_per_chain"):
        LogisticRegressionBetaD().sample_one(
            LOGISTIC_X,
            LOGISTIC_Y,
            epsilon=1.0,
            accountant=acct,
            thresholds=Thresholds(min_ess_per_chain=float("nan")),
            **SHORT,
        )
    assert acct.ledger == []


# ------------------------------------------------------------------ OPS: override records
# every check passes (finite R-hat <= 100; no ESS, divergence or tree-depth limit)
LENIENT = Thresholds(max_rhat=100.0, min_ess_per_chain=0.0, max_divergences=10**6, max_treedepth_fraction=1.0)


def _override_details(release):
    """A released record's details without the (public) thresholds it names."""
    details = release.record.to_dict()["details"]
    details["sampler"] = {k: v for k, v in details["sampler"].items() if k != "thresholds"}
    return details


def _check_override_records(attempt, datasets, problems_of):
    """``attempt(data, thresholds)`` releases with allow_unconverged=True. Its record is the
    same for every data set and whether or not the run passed the checks: the public fact that
    the override was used, no R-hat / ESS text or number of the run, no list of failed checks."""
    assert problems_of(datasets[0], IMPOSSIBLE) and problems_of(datasets[0], LENIENT) == []
    releases = [attempt(data, t) for data in datasets for t in (IMPOSSIBLE, LENIENT)]
    for rel in releases:
        details = rel.record.details
        assert "unmet_checks" not in details
        text = repr(rel.record.to_dict())
        assert "R-hat of" not in text and "ESS of" not in text and "divergent transitions" not in text
        assert details["convergence_override"] is True and details["override_requested"] is True
        assert details["convergence_gate"].startswith("not enforced (allow_unconverged=True)")
    first = _override_details(releases[0])
    assert [_override_details(rel) for rel in releases] == [first] * len(releases)


def test_betad_override_record_states_the_override_and_no_statistic_of_the_run(logistic_model):
    ops = LogisticRegressionBetaD()
    kw = dict(epsilon=5.0, seed=5, **SHORT)
    _check_override_records(
        lambda y, t: ops.sample_one(LOGISTIC_X, y, thresholds=t, allow_unconverged=True, **kw),
        [LOGISTIC_Y, 1 - LOGISTIC_Y],
        lambda y, t: ops.try_sample_one(LOGISTIC_X, y, thresholds=t, **kw).problems,
    )
    # without the override a released record says the gate was enforced
    rel = ops.sample_one(LOGISTIC_X, LOGISTIC_Y, thresholds=LENIENT, **kw)
    assert rel.record.details["convergence_override"] is False and "unmet_checks" not in rel.record.details
    assert rel.record.details["convergence_gate"].startswith("enforced")


# ------------------------------------------------------------------ Minami's Gibbs-posterior OPS baseline
MINAMI = "Minami Gibbs-posterior logistic regression"


def test_minami_charges_every_attempt_and_refuses_without_statistics(logistic_model, monkeypatch):
    ops = MinamiGibbsLogistic()
    settings = dict(warmup=20, draws=20, chains=2, adapt_delta=0.8, max_treedepth=10)
    _check_refusals(
        lambda y, acct: ops.sample_one(
            LOGISTIC_X, y, epsilon=2.0, accountant=acct, seed=6, thresholds=IMPOSSIBLE, **SHORT
        ),
        [LOGISTIC_Y, 1 - LOGISTIC_Y],
        label=MINAMI,
        epsilon=2.0,
        delta=1e-5,
        thresholds=IMPOSSIBLE,
        checked=["theta"],
        settings=settings,
        monkeypatch=monkeypatch,
        suffix=" This attempt's delta=1e-05 was charged with epsilon and stays charged.",
    )
    # a released draw is charged (epsilon, delta) once too
    acct = PrivacyAccountant(2.0, 1e-5)
    ops.sample_one(
        LOGISTIC_X,
        LOGISTIC_Y,
        epsilon=2.0,
        accountant=acct,
        seed=6,
        thresholds=IMPOSSIBLE,
        allow_unconverged=True,
        **SHORT,
    )
    assert acct.ledger == [(f"{MINAMI} (attempt, charged before sampling)", 2.0, 1e-5)]
    # the default gate (OPS_THRESHOLDS) is named; without an accountant the message says what was used
    with pytest.raises(
        ConvergenceError,
        match=r"split R-hat <= 1\.05; bulk and tail ESS >= 25\.0 per chain.*"
        r"no accountant was given, but this attempt used epsilon=2\.0.*"
        r"delta=1e-05 was used with epsilon\.$",
    ):
        ops.sample_one(LOGISTIC_X, LOGISTIC_Y, epsilon=2.0, seed=6, chains=2, warmup=3, draws=8)


def test_minami_bad_input_is_refused_before_any_charge():
    acct = PrivacyAccountant(10.0, 0.5)
    ops = MinamiGibbsLogistic()
    call = dict(epsilon=1.0, accountant=acct, **SHORT)
    with pytest.raises(TypeError, match="thresholds"):
        ops.sample_one(LOGISTIC_X, LOGISTIC_Y, thresholds={"max_rhat": 1.1}, **call)
    with pytest.raises(ValueError, match="adapt_delta"):
        ops.sample_one(LOGISTIC_X, LOGISTIC_Y, adapt_delta=1.5, **call)
    with pytest.raises(TypeError, match="max_treedepth"):
        ops.sample_one(LOGISTIC_X, LOGISTIC_Y, max_treedepth=2.5, **call)
    with pytest.raises(ValueError, match="chains"):  # one chain: split R-hat cannot be judged, always refused
        ops.sample_one(LOGISTIC_X, LOGISTIC_Y, **{**call, "chains": 1})
    with pytest.raises(TypeError, match="allow_unconverged"):
        ops.sample_one(LOGISTIC_X, LOGISTIC_Y, allow_unconverged="yes", **call)
    with pytest.raises(TypeError, match="seed"):
        ops.sample_one(LOGISTIC_X, LOGISTIC_Y, seed=1.5, **call)
    with pytest.raises(TypeError, match="accountant"):
        ops.sample_one(LOGISTIC_X, LOGISTIC_Y, **{**call, "accountant": 10.0})
    with pytest.raises(ValueError, match=r"\|x_j\| > 1"):
        ops.sample_one(LOGISTIC_X * 2.0, LOGISTIC_Y, **call)
    with pytest.raises(ValueError, match="d must be an int >= 1"):
        ops.sample_one(np.empty((20, 0)), LOGISTIC_Y, **call)
    assert acct.ledger == []


def test_minami_randomness_secure_without_seed_marked_with_one(logistic_model, monkeypatch):
    ops = MinamiGibbsLogistic()
    chosen = _check_logistic_draw_randomness(ops, monkeypatch, epsilon=2.0, seed=41, stan_seed=4243, chain=1)
    rel = ops.sample_one(LOGISTIC_X, LOGISTIC_Y, epsilon=2.0, allow_unconverged=True, **SHORT)
    _assert_secure(rel.record, chosen)
    assert isinstance(rel, OPSResult) and rel.details == {"w": ops.weight(2.0, 2)}  # Gibbs weight, public
    assert rel.record.delta == 1e-5 and rel.record.details["sampler"]["thresholds"] == dataclasses.asdict(
        Thresholds(max_rhat=1.05, min_ess_per_chain=25.0)
    )


def test_minami_override_record_states_the_override_and_no_statistic_of_the_run(logistic_model):
    ops = MinamiGibbsLogistic()
    kw = dict(epsilon=2.0, seed=7, **SHORT)
    _check_override_records(
        lambda y, t: ops.sample_one(LOGISTIC_X, y, thresholds=t, allow_unconverged=True, **kw),
        [LOGISTIC_Y, 1 - LOGISTIC_Y],
        lambda y, t: ops.try_sample_one(LOGISTIC_X, y, thresholds=t, **kw).problems,
    )
