"""Tight privacy accounting (issue 52): the composition rules of :class:`PrivacyAccountant`.

Each tight rule is checked against what it must never undercut, computed independently:
the exact (ε, δ) curve of k composed Gaussian mechanisms (Dong, Roth & Su 2022: μ-GDP with
μ = √k Δ/σ), the exact privacy region of k composed ε-DP mechanisms (Kairouz, Oh &
Viswanath 2017, Thm 3.3), the Rényi divergences by numerical integration or enumeration,
and ``dp_accounting``'s own accountants on a grid of k, σ and δ. No test here compiles Stan,
and none is statistical (no false-rejection rate to state).
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib
from scipy import integrate
from scipy.optimize import brentq
from scipy.special import comb
from scipy.stats import norm

from pystanprivacy.privacy.accounting import (
    RDP_ORDERS,
    Curve,
    TightComposition,
    _Parts,
    curve_from_record,
    gaussian_curve,
    laplace_rdp,
    oue_rdp,
    pure_curve,
    pure_rdp,
    zcdp_epsilon,
)
from pystanprivacy.privacy.mechanisms import AnalyticGaussian, Laplace, OptimalUnaryEncoding, RandomizedResponse
from pystanprivacy.privacy.records import BudgetExceededError, PrivacyAccountant, PrivacyRecord, Release

ORDERS = np.asarray(RDP_ORDERS)
TIGHT = ("zcdp", "rdp", "pld")


def gaussian_record(sigma: float, sensitivity: float = 1.0, epsilon: float = 0.5, delta: float = 1e-8):
    """A record of the (ideal) Gaussian mechanism: no randomness stated, taken at its word."""
    return PrivacyRecord(
        mechanism="gaussian", epsilon=epsilon, delta=delta, sensitivity=sensitivity, sensitivity_norm="l2", scale=sigma
    )


def exact_gaussian_epsilon(mu: float, delta: float) -> float:
    """The exact ε at δ of μ-GDP (Dong, Roth & Su 2022, Cor. 2.13):
    δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2), solved for ε."""

    def gap(eps: float) -> float:
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps + norm.logcdf(-eps / mu - mu / 2)) - delta

    if gap(0.0) <= 0:
        return 0.0
    hi = 1.0
    while gap(hi) > 0:
        hi *= 2
    return brentq(gap, 0.0, hi, xtol=1e-12)


def grid_zcdp_epsilon(rho: float, delta: float) -> float:
    """CKS 2020 Prop. 12 for ρ-zCDP evaluated on a dense grid of orders (an independent
    evaluation of the conversion :func:`zcdp_epsilon` minimises)."""
    alpha = 1.0 + np.logspace(-6, 6, 400_001)
    eps = alpha * rho + (np.log(1 / delta) + (alpha - 1) * np.log1p(-1 / alpha) - np.log(alpha)) / (alpha - 1)
    return float(eps.min())


def old_basic_spend(state, epsilon, delta=0.0, label=None):
    """Reference: the basic accountant as it was before issue 52 (state: total, spent, ledger)."""
    eps, dlt = Fraction(repr(float(epsilon))), Fraction(repr(float(delta)))
    total, spent, ledger = state
    if not (spent[0] + eps <= total[0] and spent[1] + dlt <= total[1]):
        raise BudgetExceededError(
            f"requested (epsilon={float(eps)!r}, delta={float(dlt)!r}) exceeds the remaining budget "
            f"(epsilon={float(total[0] - spent[0])!r}, delta={float(total[1] - spent[1])!r})"
        )
    ledger.append((label, float(epsilon), float(delta)))
    return total, (spent[0] + eps, spent[1] + dlt), ledger


# --------------------------------------------------------------------------- basic stays as it was
@pytest.mark.parametrize("with_record", [False, True])
def test_basic_is_the_default_and_bit_for_bit_the_old_accountant(with_record):
    rng = np.random.default_rng(52)
    acc = PrivacyAccountant(3.7, 2e-6)
    assert acc.composition == "basic"
    state = (Fraction("3.7"), Fraction("2e-6")), (Fraction(0), Fraction(0)), []
    for i in range(200):
        eps = float(rng.integers(1, 400)) / 1000
        dlt = float(rng.choice([0.0, 1e-8, 3e-7]))
        rec = (
            gaussian_record(3.0, epsilon=eps, delta=dlt)
            if with_record and dlt
            else (PrivacyRecord(mechanism="laplace", epsilon=eps) if with_record and not dlt else None)
        )
        try:
            state = old_basic_spend(state, eps, dlt, f"s{i}")
            ok = True
        except BudgetExceededError as err:
            want, ok = str(err), False
        if ok:
            acc.spend(eps, dlt, label=f"s{i}", record=rec)
        else:
            with pytest.raises(BudgetExceededError) as got:
                acc.spend(eps, dlt, label=f"s{i}", record=rec)
            assert str(got.value) == want
        spent = (float(state[1][0]), float(state[1][1]))
        assert acc.spent == spent
        assert acc.remaining == (float(state[0][0] - state[1][0]), float(state[0][1] - state[1][1]))
        assert acc.ledger == state[2]
        assert acc.check(0.01) == (state[1][0] + Fraction("0.01") <= state[0][0])
    assert repr(acc).startswith("PrivacyAccountant(epsilon=3.7, delta=2e-06, spent=(")
    assert [(e.label, e.epsilon, e.delta) for e in acc.entries] == acc.ledger


# --------------------------------------------------------------------------- conversions
@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.3, 2.0, 40.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_zcdp_conversion_against_a_dense_grid_and_bun_steinke(rho, delta):
    eps = zcdp_epsilon(rho, delta)
    assert eps <= grid_zcdp_epsilon(rho, delta) * (1 + 1e-9) + 1e-12  # the minimum, or better
    assert eps >= grid_zcdp_epsilon(rho, delta) * (1 - 1e-6) - 1e-9  # ... not below it
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta))  # Bun & Steinke Prop. 1.3
    # the Gaussian with ρ = 1/(2 z²) is exactly μ-GDP with μ = 1/z: never below its exact ε
    assert eps >= exact_gaussian_epsilon(math.sqrt(2 * rho), delta) - 1e-9


def test_zcdp_conversion_edges():
    assert zcdp_epsilon(0.0, 1e-6) == 0.0
    assert zcdp_epsilon(0.5, 0.0) == math.inf


@pytest.mark.parametrize("s", [0.05, 0.5, 1.0, 3.0])
def test_laplace_rdp_by_integration_dp_accounting_and_l1_splits(s):
    """Mironov's closed form equals the numerically integrated divergence and
    dp_accounting's; any split of the L1 shift over two coordinates has no larger divergence."""
    lib = rdp_lib.RdpAccountant(orders=list(RDP_ORDERS))
    lib.compose(dp_accounting.LaplaceDpEvent(noise_multiplier=1.0 / s))
    assert np.allclose(laplace_rdp(s, ORDERS), lib._rdp, rtol=1e-9, atol=1e-12)
    for alpha in (1.5, 2.0, 8.0):
        f = lambda x, alpha=alpha: 0.5 * math.exp(-alpha * abs(x) - (1 - alpha) * abs(x - s))
        val = sum(integrate.quad(f, a, b, epsabs=0, epsrel=1e-12)[0] for a, b in ((-np.inf, 0), (0, s), (s, np.inf)))
        assert laplace_rdp(s, np.array([alpha]))[0] == pytest.approx(math.log(val) / (alpha - 1), rel=1e-8)
    for share in (0.1, 0.3, 0.5):
        split = laplace_rdp(share * s, ORDERS) + laplace_rdp((1 - share) * s, ORDERS)
        assert np.all(split <= laplace_rdp(s, ORDERS) * (1 + 1e-12))


@pytest.mark.parametrize("eps", [0.01, 0.3, 1.0, 4.0])
def test_pure_rdp_is_randomised_response_and_below_bun_steinke(eps):
    lib = rdp_lib.RdpAccountant(
        orders=list(RDP_ORDERS), neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
    )
    lib.compose(dp_accounting.RandomizedResponseDpEvent(noise_parameter=2 / (1 + math.exp(eps)), num_buckets=2))
    assert np.allclose(pure_rdp(eps, ORDERS), lib._rdp, rtol=1e-9, atol=1e-13)
    assert np.all(pure_rdp(eps, ORDERS) <= np.minimum(eps, ORDERS * eps**2 / 2) * (1 + 1e-12))


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_oue_curves_by_enumerating_three_bit_reports(eps):
    """OUE with d = 3, value 0 vs value 1: every report of 3 bits, enumerated."""
    q = 1 / (math.exp(eps) + 1)

    def pmf(v: int) -> dict[tuple[int, ...], float]:
        probs = [0.5 if j == v else q for j in range(3)]
        return {bits: math.prod(p if b else 1 - p for p, b in zip(probs, bits)) for bits in np.ndindex(2, 2, 2)}

    p0, p1 = pmf(0), pmf(1)
    for alpha in (1.5, 3.0, 20.0):
        want = math.log(sum(p0[k] ** alpha * p1[k] ** (1 - alpha) for k in p0)) / (alpha - 1)
        assert oue_rdp(eps, np.array([alpha]))[0] == pytest.approx(want, rel=1e-10)
    pld = Curve("oue", (eps,)).pld()
    for e in (0.0, 0.5 * eps, 0.9 * eps):
        exact = sum(max(0.0, p0[k] - math.exp(e) * p1[k]) for k in p0)
        assert pld.get_delta_for_epsilon(e) >= exact - 1e-12  # pessimistic: never below
        assert pld.get_delta_for_epsilon(e) <= exact + 1e-3
    assert eps - 1e-9 <= pld.get_epsilon_for_delta(0.0) <= eps + 2e-4  # exactly eps-DP, tight


# --------------------------------------------------------------------------- never under-counting
def composed_epsilon(rule: str, curve: Curve, k: int, delta: float) -> float:
    tc = TightComposition(rule)
    return tc.epsilon(_Parts({curve: k}), delta)


@pytest.mark.parametrize("k", [1, 10, 300])
@pytest.mark.parametrize("z", [1.5, 4.0, 25.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_k_gaussians_never_below_the_exact_curve_and_match_dp_accounting(k, z, delta):
    exact = exact_gaussian_epsilon(math.sqrt(k) / z, delta)
    curve = gaussian_curve(sigma=z * 2.0, sensitivity=2.0)
    got = {rule: composed_epsilon(rule, curve, k, delta) for rule in TIGHT}
    for rule, eps in got.items():
        assert eps >= exact - 1e-9, rule
    assert got["pld"] <= exact * 1.002 + 2e-3  # PLD is tight up to its discretisation
    assert got["zcdp"] == pytest.approx(grid_zcdp_epsilon(k / (2 * z * z), delta), rel=1e-6)
    lib = rdp_lib.RdpAccountant(orders=list(RDP_ORDERS))
    lib.compose(dp_accounting.GaussianDpEvent(noise_multiplier=z), k)
    assert got["rdp"] == pytest.approx(lib.get_epsilon(delta), rel=1e-9)
    assert got["zcdp"] <= lib.get_epsilon(delta) * (1 + 1e-9)  # continuous order: never worse
    lib_pld = dp_accounting.pld.PLDAccountant()
    lib_pld.compose(dp_accounting.GaussianDpEvent(noise_multiplier=z), k)
    assert got["pld"] == pytest.approx(lib_pld.get_epsilon(delta), rel=1e-3, abs=1e-3)


@pytest.mark.parametrize("k,eps", [(10, 0.1), (10, 0.5), (25, 0.2)])
def test_pure_composition_never_below_the_optimal_composition_theorem(k, eps):
    """Kairouz, Oh & Viswanath (2017), Thm 3.3: k-fold ε-DP is exactly
    ((k - 2i)ε, δ_i)-DP, δ_i = Σ_{l<i} C(k, l)(e^{(k-l)ε} - e^{(k-2i+l)ε}) / (1 + e^ε)^k."""
    curve = pure_curve(epsilon=eps)
    for i in range(1, k // 2):
        d_i = (
            sum(comb(k, l, exact=True) * (math.exp((k - l) * eps) - math.exp((k - 2 * i + l) * eps)) for l in range(i))
            / (1 + math.exp(eps)) ** k
        )
        if d_i < 1e-12:
            continue
        want = (k - 2 * i) * eps
        for rule in TIGHT:
            assert composed_epsilon(rule, curve, k, d_i * (1 - 1e-9)) >= want - 1e-9, rule
        assert composed_epsilon("pld", curve, k, d_i) <= want + 2e-3


# --------------------------------------------------------------------------- the accountant
@pytest.mark.parametrize("rule", TIGHT)
def test_accountant_composes_gaussian_records_and_refuses_over_budget(rule):
    sigma, k, delta = 8.0, 12, 1e-6
    budget = exact_gaussian_epsilon(math.sqrt(k) / sigma, delta) * (1.05 if rule == "pld" else 1.3)
    acc = PrivacyAccountant(budget, delta, composition=rule)
    rec = gaussian_record(sigma, epsilon=0.6, delta=1e-8)  # stated (0.6, 1e-8): basic would stop at 4 or so
    for i in range(k):
        acc.spend(0.6, 1e-8, label=f"g{i}", record=rec)
    eps, dlt = acc.spent
    assert dlt == delta and eps <= budget
    assert eps >= exact_gaussian_epsilon(math.sqrt(k) / sigma, delta) - 1e-9
    entries = acc.entries
    assert [e.composed_epsilon for e in entries] == sorted(e.composed_epsilon for e in entries)
    assert all("Gaussian" in e.counted_as[0] for e in entries) and entries[-1].composed_epsilon == eps
    before = (acc.spent, acc.ledger, acc.entries, acc.remaining)
    n_more = 0
    while acc.check(0.6, 1e-8, record=rec):
        acc.spend(0.6, 1e-8, record=rec)
        n_more += 1
        before = (acc.spent, acc.ledger, acc.entries, acc.remaining)
    with pytest.raises(BudgetExceededError, match=f"{rule} composition"):
        acc.spend(0.6, 1e-8, record=rec)
    assert (acc.spent, acc.ledger, acc.entries, acc.remaining) == before  # nothing changed
    # the refused release would really have exceeded the budget (exact curve, Dong et al.)
    assert exact_gaussian_epsilon(math.sqrt(k + n_more + 1) / sigma, delta) > budget * 0.95
    assert acc.remaining == pytest.approx((budget - acc.spent[0], 0.0))


@pytest.mark.parametrize("rule", TIGHT)
def test_concurrent_spends_are_never_over_budget(rule):
    """Eight threads race for a budget that fits exactly n_max identical Gaussian releases
    (found sequentially): exactly n_max succeed and the composed ε stays within budget."""
    rec, delta = gaussian_record(6.0, epsilon=0.5, delta=1e-9), 1e-6
    probe = PrivacyAccountant(2.0, delta, composition=rule)
    n_max = 0
    while probe.check(0.5, 1e-9, record=rec):
        probe.spend(0.5, 1e-9, record=rec)
        n_max += 1
    assert n_max > 4  # basic composition would allow 4
    acc = PrivacyAccountant(2.0, delta, composition=rule)
    ok, barrier = [], threading.Barrier(8)

    def spender():
        barrier.wait()
        for _ in range(n_max):
            try:
                acc.spend(0.5, 1e-9, record=rec)
                ok.append(1)
            except BudgetExceededError:
                pass

    threads = [threading.Thread(target=spender) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ok) == n_max == len(acc.ledger)
    assert acc.spent == probe.spent and acc.spent[0] <= 2.0


@pytest.mark.parametrize("rule", TIGHT)
def test_fallbacks_compose_basically_on_top_and_are_stated(rule):
    """A seeded Laplace release, a record of an unknown mechanism and a spend without a
    record: their (ε, δ) add to the tight part's ε, computed at what they leave of δ."""
    acc = PrivacyAccountant(50.0, 1e-5, composition=rule)
    seeded = Laplace(epsilon=0.3, sensitivity=1.0, seed=1).release(np.array([1.0, 2.0]), accountant=acc)
    assert "basic composition" in acc.entries[-1].counted_as[0]
    acc.spend(0.2, 2e-6, record=PrivacyRecord(mechanism="made-up", epsilon=0.2, delta=2e-6), label="x")
    assert "no privacy curve for mechanism 'made-up'" in acc.entries[-1].counted_as[0]
    acc.spend(0.1, 1e-6)
    assert "no record given" in acc.entries[-1].counted_as[0]
    for _ in range(20):
        acc.spend(0.4, 1e-9, record=gaussian_record(5.0, epsilon=0.4, delta=1e-9))
    assert seeded.record.details["seeded"] is True
    rho = 20 / (2 * 25.0)
    left = 1e-5 - 3e-6
    tight = {"zcdp": grid_zcdp_epsilon(rho, left), "pld": exact_gaussian_epsilon(math.sqrt(20) / 5.0, left)}
    want = tight.get(rule, grid_zcdp_epsilon(rho, left)) + 0.6
    eps, dlt = acc.spent
    assert dlt == 1e-5 and eps >= want - 1e-6
    assert eps <= want + (0.01 if rule == "pld" else want * 1e-5 if rule == "zcdp" else 0.2)
    # a fallback δ above the budget's δ cannot be covered by any rule
    with pytest.raises(BudgetExceededError):
        acc.spend(0.01, 8e-6)


def test_secure_releases_feed_their_discrete_noise_into_the_curve():
    """Real releases pass their records: the discrete Gaussian's grid σ and sensitivity, the
    discrete Laplace of one changed coordinate, OUE and randomised response."""
    acc = PrivacyAccountant(100.0, 1e-5, composition="pld")
    rel = AnalyticGaussian(epsilon=1.0, delta=1e-7, sensitivity=1.0).release(np.array([0.5]), accountant=acc)
    assert "discrete Gaussian" in acc.entries[-1].counted_as[0] and "one coordinate" in acc.entries[-1].counted_as[0]
    curve, _ = curve_from_record(rel.record)
    d = rel.record.details
    assert curve == Curve("discrete_gaussian", (d["sigma_grid_units"], d["integer_sensitivity"], True))
    # the curve's σ is at least the continuous calibration's, in units of the sensitivity
    assert d["sigma_grid_units"] / d["integer_sensitivity"] >= AnalyticGaussian(
        epsilon=1.0, delta=1e-7, sensitivity=1.0
    ).scale * (1 - 1e-12)
    AnalyticGaussian(epsilon=1.0, delta=1e-7, sensitivity=1.0).release(np.ones(3), accountant=acc)
    assert "several coordinates" in acc.entries[-1].counted_as[0]
    Laplace(epsilon=0.5, sensitivity=1.0).release(np.array([3]), accountant=acc)
    assert "discrete Laplace" in acc.entries[-1].counted_as[0]
    Laplace(epsilon=0.5, sensitivity=1.0).release(np.array([3, 4]), accountant=acc)
    assert "pure eps-DP, eps = 0.5" in acc.entries[-1].counted_as[0]
    OptimalUnaryEncoding(epsilon=1.0, d=4).release(np.array([0, 3]), accountant=acc)
    assert "OUE" in acc.entries[-1].counted_as[0]
    RandomizedResponse(epsilon=1.0).release(np.array([0, 1]), accountant=acc)
    assert "pure eps-DP, eps = 1" in acc.entries[-1].counted_as[0]
    assert acc.spent[0] <= sum(e.epsilon for e in acc.entries)  # a few releases: basic is as good


def test_hmm_per_feature_records_are_charged_atomically():
    """The naive-Bayes HMM charges one secure Laplace record per feature in one spend."""
    records = [Laplace(epsilon=0.1, sensitivity=2.0).record() for _ in range(10)]
    acc = PrivacyAccountant(1.0, 1e-6, composition="pld")
    acc.spend(1.0, record=records)
    assert len(acc.entries[-1].counted_as) == 10 and acc.spent[0] <= 1.0
    # the exact privacy profile of ten 0.1-DP releases (KOV 2017): the privacy loss of ten
    # randomised responses, (10 - 2l) 0.1 with probability C(10, l) p^(10-l) (1-p)^l
    p = math.exp(0.1) / (1 + math.exp(0.1))

    def profile(e: float) -> float:
        return (
            sum(
                comb(10, l, exact=True) * p ** (10 - l) * (1 - p) ** l * max(0.0, 1 - math.exp(e - (10 - 2 * l) * 0.1))
                for l in range(11)
            )
            - 1e-6
        )

    exact = brentq(profile, 0.0, 1.0, xtol=1e-12)
    assert exact - 1e-9 <= acc.spent[0] <= exact + 2e-3 and exact < 0.9995  # a little below basic's 1.0


def test_bad_records_are_refused_before_anything_is_charged():
    acc = PrivacyAccountant(5.0, 1e-6, composition="zcdp")
    with pytest.raises(TypeError, match="record must be a PrivacyRecord"):
        acc.spend(0.5, record={"mechanism": "gaussian"})
    with pytest.raises(TypeError, match="record must be a PrivacyRecord.*empty"):
        acc.spend(0.5, record=[])
    with pytest.raises(TypeError, match="only PrivacyRecord objects, got str"):
        acc.spend(0.5, record=[PrivacyRecord(mechanism="ops", epsilon=0.5), "x"])
    with pytest.raises(ValueError, match="epsilon = 0.7 in all, but the spend charges epsilon=0.5"):
        acc.spend(0.5, record=PrivacyRecord(mechanism="ops", epsilon=0.7))
    with pytest.raises(ValueError, match="delta"):
        acc.spend(0.5, 1e-7, record=PrivacyRecord(mechanism="ops", epsilon=0.5))
    with pytest.raises(ValueError, match="composition must be one of"):
        PrivacyAccountant(1.0, composition="advanced")
    assert acc.spent == (0.0, 0.0) and acc.ledger == [] and acc.entries == []


def test_release_from_dict_names_values_that_are_not_numbers():
    record = PrivacyRecord(mechanism="laplace", epsilon=1.0).to_dict()
    with pytest.raises(TypeError, match=r"d\['values'\] is None"):
        Release.from_dict({"values": None, "record": record, "shape": [2]})
    with pytest.raises(TypeError, match=r"d\['values'\] must be an array of numbers, got dtype <U1"):
        Release.from_dict({"values": ["a", "b"], "record": record, "shape": [2]})


def test_model_releases_charge_their_records():
    """Releases made by the models pass records whose (ε, δ) add up to the spend: the HMM's
    per-feature Laplace records, the Kulkarni input releases' two parts, an OPS attempt and
    LDP-SGD (float noise: stated as a fallback)."""
    from pystanprivacy.experiments.kulkarni2022.ldp_sgd import ldp_sgd
    from pystanprivacy.models._ops import charge_attempt
    from pystanprivacy.models.foulds2016_hmm import NaiveBayesHMM
    from pystanprivacy.models.foulds2016_hmm.example import FEATURE_SIZES, simulate_counts
    from pystanprivacy.models.kulkarni2022_regression import LinearRegressionInputs, LogisticRegressionInputs

    acc = PrivacyAccountant(100.0, 1e-3, composition="zcdp")
    counts, _ = simulate_counts(200, n_states=2, seed=0)
    NaiveBayesHMM.release(counts, epsilon=0.9, feature_sizes=list(FEATURE_SIZES), accountant=acc)
    assert len(acc.entries[-1].counted_as) == len(FEATURE_SIZES)
    assert all("pure eps-DP, eps = 0.3" in said for said in acc.entries[-1].counted_as)
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-0.5, 0.5, (30, 2)), rng.uniform(-1, 1, 30)
    LinearRegressionInputs.release(x, y, epsilon=1.0, delta=1e-5, c=0.3, accountant=acc)
    assert [s.split(":")[0] for s in acc.entries[-1].counted_as] == ["analytic_gaussian"] * 2
    LogisticRegressionInputs.release(x, (y > 0).astype(int), epsilon=1.0, delta=1e-5, accountant=acc)
    assert [s.split(":")[0] for s in acc.entries[-1].counted_as] == ["analytic_gaussian", "randomized_response"]
    charge_attempt(acc, 0.7, "an OPS model")
    assert acc.entries[-1].counted_as == ("ops: pure eps-DP, eps = 0.7",)
    ldp_sgd(x, y, loss="squared", epsilon=1.0, delta=1e-5, accountant=acc, seed=0)
    assert "by basic composition: seeded / floating-point Gaussian noise" in acc.entries[-1].counted_as[0]
    assert acc.spent[0] <= sum(e.epsilon for e in acc.entries)  # a few releases: basic is as good
