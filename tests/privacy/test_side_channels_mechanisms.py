"""Issue 17, "close the side channels": the mechanisms, the noise grid and the LDP reports.

1. No data-dependent refusal: a finite value is never refused (a refusal of one neighbour
   and a release of the other tells them apart without any noise), and the record says the
   same thing for both neighbours. (Issue 17 clamped values beyond 2^52 grid steps; issue 53
   removed that clamp: every finite value now has an exact grid index.)
2. No failure after the charge: parameters whose noise could overflow the output are
   refused from public inputs alone, before anything is charged; what remains cannot raise.
3. No silent acceptance: empty inputs, rows beyond the declared sensitivity, non-finite
   release values, incomplete release dicts, and an LDP-SGD record without ``secure``.

Every test here fails on the code before the change (see the comment on each)."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from _hostile import SENTINEL, SETTINGS, assert_no_sentinel
from hypothesis import given
from hypothesis import strategies as st

from pystanprivacy.experiments.kulkarni2022.ldp_sgd import ldp_sgd
from pystanprivacy.models.foulds2016 import COUNT_SENSITIVITY, BetaBernoulli
from pystanprivacy.privacy import ldp, noise
from pystanprivacy.privacy.mechanisms import (
    AnalyticGaussian,
    Gaussian,
    Laplace,
    OptimalUnaryEncoding,
    RandomizedResponse,
)
from pystanprivacy.privacy.records import PrivacyAccountant, PrivacyRecord, Release

EDGE = 2.0**18  # 2^52 grid steps of 2^-34: the exact range of a 16384-coordinate Laplace(1, 1)
FLOAT_MAX = noise.FLOAT_MAX


@pytest.fixture(autouse=True)
def _quiet_seeded_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _records_equal(a: Release, b: Release) -> bool:
    return a.record.to_dict() == b.record.to_dict()


# =============================================================== 1. no data-dependent refusal
def test_neighbouring_histograms_at_the_range_edge_both_release_and_charge_once():
    """The attack of the issue: 16384 float bins (grid 2^-34), one bin at 2^18 (released)
    or 2^18 + 1 (formerly refused with ValueError, nothing charged)."""
    x = np.zeros(16384)
    x[0] = EDGE
    y = x.copy()
    y[0] = EDGE + 1.0
    acc_x, acc_y = PrivacyAccountant(5.0), PrivacyAccountant(5.0)
    rx = Laplace(epsilon=1.0, sensitivity=1.0).release(x, accountant=acc_x)
    ry = Laplace(epsilon=1.0, sensitivity=1.0).release(y, accountant=acc_y)  # old code: ValueError
    assert acc_x.ledger == acc_y.ledger == [(None, 1.0, 0.0)]
    assert rx.record.details["grid_exponent"] == -34
    assert rx.record.details["exact_range"] == (-EDGE, EDGE)
    assert rx.record.details["representable_range"] == (-FLOAT_MAX, FLOAT_MAX)
    assert _records_equal(rx, ry)  # nothing in the record depends on the data


def test_values_beyond_the_exact_range_move_with_the_value_and_are_not_clamped():
    """With the same noise draws, a value one beyond the exact range releases one more than
    the edge (issue 53: formerly the same as the edge, a silent clamp), 1e308 releases the
    float64 nearest 1e308 plus the noise, and the other coordinate is untouched."""

    def release(v):
        mech = Laplace(epsilon=1.0, sensitivity=1.0)
        mech._source = noise.SeededRandom(7)
        return mech.release(np.array([v, 0.25]), changed=16384)

    at_edge, beyond, far = release(EDGE), release(EDGE + 1.0), release(1e308)  # issue 17: ValueError
    assert beyond.values[0] == at_edge.values[0] + 1.0 and beyond.values[1] == at_edge.values[1]
    noise_steps = Fraction(float(at_edge.values[0])) / Fraction(2) ** -34 - 2**52  # the draw, in grid steps
    assert far.values[0] == float(Fraction(1e308) + noise_steps * Fraction(2) ** -34)
    assert far.values[1] == at_edge.values[1]
    inside = release(EDGE - 1.0)
    assert inside.values[0] == at_edge.values[0] - 1.0 and inside.values[1] == at_edge.values[1]


def test_seeded_path_releases_values_beyond_2_1000_instead_of_refusing_or_clamping():
    acc = PrivacyAccountant(5.0)
    huge = Laplace(epsilon=1.0, sensitivity=1.0, seed=3).release(np.array([1e308, -1e305]), accountant=acc)
    zero = Laplace(epsilon=1.0, sensitivity=1.0, seed=3).release(np.array([0.0, 0.0]))
    # the same draws added to the values (issue 17: ValueError; then clamped to 2^1000)
    assert np.array_equal(huge.values, np.array([1e308, -1e305]) + zero.values) and acc.spent == (1.0, 0.0)
    assert huge.record.details["representable_range"] == (-FLOAT_MAX, FLOAT_MAX)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Gaussian(epsilon=0.5, delta=1e-6, sensitivity=1.0),
        lambda: AnalyticGaussian(epsilon=2.0, delta=1e-6, sensitivity=1.0),
    ],
)
def test_gaussian_mechanisms_release_beyond_the_exact_range_too(make):
    mech = make()
    rel_in = mech.release(np.array([0.5, 0.0]))
    hi = math.ldexp(1.0, 52 + rel_in.record.details["grid_exponent"])  # 2^52 grid steps
    acc = PrivacyAccountant(5.0, 0.5)
    rel_out = mech.release(np.array([hi * 4, 0.0]), accountant=acc)  # issue 17: ValueError
    assert acc.spent == (mech.epsilon, mech.delta) and _records_equal(rel_in, rel_out)
    assert rel_out.record.details["exact_range"] == (-hi, hi)
    # near 4 hi, not clamped to hi (issue 53); the noise passes 60 sigma with probability < e^-1800
    assert abs(rel_out.values[0] - 4 * hi) < 60 * rel_out.record.scale


def test_to_grid_keeps_finite_values_exact_and_refuses_only_nan_and_inf_without_showing_them():
    got = list(noise.to_grid(np.array([SENTINEL, -SENTINEL, 1e308]), -40))
    assert got == [round(Fraction(v) * 2**40) for v in (SENTINEL, -SENTINEL, 1e308)]
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match="non-finite") as info:
            noise.to_grid(np.array([SENTINEL, bad]), -40)
        assert_no_sentinel(str(info.value))


def test_clipped_laplace_reports_release_bounds_far_from_zero():
    """Clipped values lie in [a, b]; bounds far from 0 against b - a were refused (issue 17,
    a refusal on the public bounds) since the grid could not represent them; every finite
    value is represented now (issue 53). Noise beyond 50 scales: probability e^-50."""
    acc = PrivacyAccountant(5.0)
    rel = ldp.clipped_laplace_reports([1e12 + 0.5], epsilon=1.0, bounds=(1e12, 1e12 + 1.0), accountant=acc)
    assert acc.spent == (1.0, 0.0) and abs(rel.values[0] - (1e12 + 0.5)) < 50 * rel.record.scale


# =============================================================== 2. no failure after the charge
def test_derived_noise_limits_meet_2_to_the_minus_64():
    n = noise.MAX_INPUT_STEPS
    t = noise.MAX_LAPLACE_SCALE_UNITS
    # exact discrete Laplace tail P(|K| > n) = 2 q^(n+1) / (1 + q), q = exp(-1/t)
    exact = 2.0 * math.exp(-(n + 1) / t) / (1.0 + math.exp(-1.0 / t))
    assert exact <= noise.laplace_tail_bound(t, n) <= noise.OVERFLOW_PROBABILITY
    assert noise.laplace_tail_bound(t * 1.001, n) > noise.OVERFLOW_PROBABILITY  # the limit is tight
    s = noise.MAX_GAUSSIAN_SIGMA_UNITS
    assert noise.gaussian_tail_bound(s, n) <= noise.OVERFLOW_PROBABILITY
    assert noise.gaussian_tail_bound(s * 1.001, n) > noise.OVERFLOW_PROBABILITY
    # the rigorous numeric tail of the discrete Gaussian (noise._log_tail_bounds) agrees
    _, upper = noise._log_tail_bounds(n + 1, s)
    assert 2.0 * upper <= noise.gaussian_tail_bound(s, n)


@pytest.mark.parametrize("x", [np.array([0.5]), np.array([3]), np.zeros(100)])
def test_tiny_epsilon_is_refused_by_name_before_the_charge(x):
    """Old code: Laplace at epsilon 1e-30 charged the accountant, then raised OverflowError."""
    acc = PrivacyAccountant(1.0)
    with pytest.raises(ValueError, match="epsilon=1e-30 is too small"):
        Laplace(epsilon=1e-30, sensitivity=1.0).release(x, accountant=acc)
    acc2 = PrivacyAccountant(1.0, 0.5)
    with pytest.raises(ValueError, match="epsilon=1e-30 is too small"):
        Gaussian(epsilon=1e-30, delta=1e-5, sensitivity=1.0).release(x, accountant=acc2)
    assert acc.ledger == acc2.ledger == []


def test_small_epsilon_releases_never_fail_after_the_charge():
    """Old code: at epsilon 1e-10 about 132 of 300 Laplace releases raised after charging."""
    acc = PrivacyAccountant(1.0, 0.9)
    lap = Laplace(epsilon=1e-10, sensitivity=1.0)
    gau = Gaussian(epsilon=1e-10, delta=1e-5, sensitivity=1.0)
    for _ in range(300):
        for mech in (lap, gau):
            rel = mech.release(np.array([0.5]), accountant=acc)
            assert np.all(np.isfinite(rel.values))
    assert len(acc.ledger) == 600
    det = lap.release(np.array([0.5])).record.details
    # the noise fits: a coarser grid than the precision grid 2^-20, scale within the limit
    assert det["grid_exponent"] > -20 and det["scale_grid_units"] <= noise.MAX_LAPLACE_SCALE_UNITS
    assert gau.release(np.array([0.5])).record.details["sigma_grid_units"] <= noise.MAX_GAUSSIAN_SIGMA_UNITS


def test_small_epsilon_clipped_laplace_reports_refuse_before_the_charge():
    acc = PrivacyAccountant(1.0)
    with pytest.raises(ValueError, match="epsilon"):
        ldp.clipped_laplace_reports([0.2, 0.7], epsilon=1e-30, bounds=(0.0, 1.0), accountant=acc)
    assert acc.spent == (0.0, 0.0)


@pytest.mark.parametrize(
    "make",
    [lambda: Laplace(epsilon=1.0, sensitivity=1.0), lambda: AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)],
)
def test_an_extreme_draw_is_post_processed_not_raised(make):
    """The event of probability <= 2^-64: a draw of 2^70 grid steps (forced here). Issue 17's
    code raised OverflowError after the charge (int64 or 2^53); then it was clamped to 2^53
    steps. Now the value is the float64 nearest (m + 2^70) g, and 2^2000 steps saturate."""
    for draw in (2**70, 2**2000):
        mech = make()
        mech._draw = lambda param, draw=draw: lambda: draw
        acc = PrivacyAccountant(5.0, 0.5)
        rel = mech.release(np.array([0.5, -0.5]), accountant=acc)
        assert acc.spent == (1.0, mech.delta)
        k = rel.record.details["grid_exponent"]
        exact = [Fraction(m + draw) * Fraction(2) ** k for m in noise.to_grid(np.array([0.5, -0.5]), k)]
        want = [float(v) if v <= FLOAT_MAX else FLOAT_MAX for v in exact]  # float() rounds correctly
        assert list(rel.values) == want


# =============================================================== 3. no silent acceptance
EMPTY_RELEASES = {
    "laplace": lambda seed: Laplace(epsilon=1.0, sensitivity=1.0, seed=seed),
    "gaussian": lambda seed: Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0, seed=seed),
    "analytic_gaussian": lambda seed: AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0, seed=seed),
    "randomized_response": lambda seed: RandomizedResponse(epsilon=1.0, seed=seed),
    "oue": lambda seed: OptimalUnaryEncoding(epsilon=1.0, d=3, seed=seed),
}


@pytest.mark.parametrize("name", sorted(EMPTY_RELEASES))
@pytest.mark.parametrize("seed", [None, 0])
@pytest.mark.parametrize("empty", [[], np.zeros((0, 3), dtype=int)])
def test_empty_release_is_refused_before_the_charge(name, seed, empty):
    acc = PrivacyAccountant(5.0, 0.5)
    with pytest.raises(ValueError, match="at least one element.*shape"):
        EMPTY_RELEASES[name](seed).release(empty, accountant=acc)  # old: an empty Release, charged
    assert acc.ledger == []


@pytest.mark.parametrize(
    "call",
    [
        lambda acc: ldp.clipped_laplace_reports(np.zeros((0, 4)), epsilon=1.0, bounds=(0.0, 1.0), accountant=acc),
        lambda acc: ldp.oue_reports(np.zeros((0, 4), dtype=int), epsilon=1.0, d=3, accountant=acc),
    ],
)
def test_empty_ldp_reports_are_refused_before_the_charge(call):
    acc = PrivacyAccountant(5.0)
    with pytest.raises(ValueError, match="x must hold at least one user"):
        call(acc)  # old: an empty Release, epsilon charged
    assert acc.ledger == []


def test_gaussian_reports_enforce_the_declared_sensitivity_by_clipping():
    """Old code accepted a row of norm 1e6 with sensitivity 2 (and max_norm=None) and
    charged for it: that row's report was essentially noise-free."""
    acc = PrivacyAccountant(5.0, 0.5)
    x = np.array([[0.6, 0.0], [1e6, 0.0]])
    rel = ldp.gaussian_reports(x, epsilon=1.0, delta=1e-5, sensitivity=2.0, accountant=acc, seed=4)
    z = np.random.default_rng(4).standard_normal(x.shape) * rel.record.scale  # the seeded noise
    assert np.array_equal(rel.values[0], x[0] + z[0])  # within the bound: bit-identical
    assert np.allclose(rel.values[1] - z[1], [1.0, 0.0], rtol=0, atol=1e-12)  # clipped to radius 1
    clip = rel.record.details["clipping"]
    assert clip["radius"] == 1.0 and clip["of"] == "values" and acc.spent == (1.0, 1e-5)


def test_gaussian_reports_with_scale_ratios_bound_any_row_by_the_sensitivity():
    x = np.array([[0.2, 0.1], [1e6, 1e6]])
    rel = ldp.gaussian_reports(x, epsilon=1.0, delta=1e-5, sensitivity=2.0, scale_ratios=[1.0, 2.0], seed=5)
    z = np.random.default_rng(5).standard_normal(x.shape) * rel.record.scale * np.array([1.0, 2.0])
    assert np.array_equal(rel.values[0], x[0] + z[0])
    f = (rel.values[1] - z[1]) / np.array([1.0, 2.0])  # the rescaled statistic of the big row
    assert np.linalg.norm(f) == pytest.approx(2.0, rel=1e-12)
    assert rel.record.details["clipping"]["of"] == "values / scale_ratios"


def test_gaussian_reports_secure_path_clips_too():
    x = np.array([[1e6, 0.0]])
    rel = ldp.gaussian_reports(x, epsilon=1.0, delta=1e-5, sensitivity=2.0)
    assert abs(rel.values[0, 0] - 1.0) < 60 * rel.record.scale  # old: ~1e6


def test_release_refuses_non_finite_values_so_a_forged_release_cannot_reach_a_model():
    rec = PrivacyRecord(
        mechanism="laplace",
        epsilon=1.0,
        sensitivity=COUNT_SENSITIVITY,
        sensitivity_norm="l1",
        scale=2.0,
        details={"projection": "nonnegative", "datasets": 1},
    )
    for bad in ([math.nan, 3.0], [math.inf, 1.0], [[1.0, 2.0], [-math.inf, 0.0]]):
        with pytest.raises(ValueError, match="non-finite"):  # old: constructed; fit() used it
            BetaBernoulli._check_release(Release(values=np.array(bad), record=rec))
    assert np.array_equal(BetaBernoulli._check_release(Release(values=[4.0, 3.0], record=rec)), [4.0, 3.0])
    # a forged negative count (a real release is projected onto [0, inf)) is refused too
    with pytest.raises(ValueError, match="finite and >= 0"):
        BetaBernoulli._check_release(Release(values=[-1.0, 3.0], record=rec))


def test_release_from_dict_names_missing_keys():
    good = Laplace(epsilon=1.0, sensitivity=1.0, seed=0).release(np.array([0.5])).to_dict()
    assert Release.from_dict(good).to_dict() == good
    for drop in (("record",), ("values",), ("values", "record")):
        d = {k: v for k, v in good.items() if k not in drop}
        with pytest.raises(ValueError, match="missing the key") as info:  # old: a bare KeyError
            Release.from_dict(d)
        assert all(repr(k) in str(info.value) for k in drop)
    with pytest.raises(ValueError, match="does not match"):
        Release.from_dict({**good, "shape": [3]})


@pytest.mark.parametrize("seed, randomness", [(0, "seeded numpy generator"), (None, "fresh OS entropy")])
def test_ldp_sgd_record_says_it_is_not_secure(seed, randomness):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(60, 2)) / 3
    res = ldp_sgd(x, x @ np.array([0.5, -0.2]), loss="squared", epsilon=1.0, group_size=10, seed=seed)
    det = res.record.details
    assert det["secure"] is False and randomness in det["randomness"]  # old: no such keys
    assert det["noise"] == "continuous float64 Gaussian (numpy)"


# =============================================================== property checks: neighbours
@SETTINGS
@given(v=st.floats(-1e308, 1e308, allow_nan=False), w=st.floats(-1e308, 1e308, allow_nan=False), seeded=st.booleans())
def test_any_two_finite_neighbours_both_release_with_the_same_record_and_one_charge(v, w, seeded):
    """Property: x = [v, 0.25] and its neighbour [w, 0.25] (one coordinate changed) on the
    fine grid of 16384 changed coordinates both release, charge once and get equal records."""
    out = []
    for value in (v, w):
        acc = PrivacyAccountant(5.0)
        mech = Laplace(epsilon=1.0, sensitivity=1.0, seed=11 if seeded else None)
        rel = mech.release(np.array([value, 0.25]), accountant=acc, changed=16384)
        assert np.all(np.isfinite(rel.values)) and acc.ledger == [(None, 1.0, 0.0)]
        out.append(rel)
    assert _records_equal(*out)


@SETTINGS
@given(norm=st.floats(1e-3, 1e300), seeded=st.booleans())
def test_a_normal_row_and_a_huge_row_both_release_with_the_same_record_and_one_charge(norm, seeded):
    out = []
    for row in ([0.3, 0.4], [norm, -norm]):
        acc = PrivacyAccountant(5.0, 0.5)
        rel = ldp.gaussian_reports(
            np.array([[0.1, 0.1], row]),
            epsilon=1.0,
            delta=1e-5,
            sensitivity=2.0,
            accountant=acc,
            seed=2 if seeded else None,
        )
        assert np.all(np.isfinite(rel.values)) and acc.ledger == [(None, 1.0, 1e-5)]
        out.append(rel)
    assert _records_equal(*out)
