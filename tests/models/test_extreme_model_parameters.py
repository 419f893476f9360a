"""Documented-valid extreme public parameters of the Bernstein (2018) ``published`` forms and
the Kulkarni (2022) regression releases (issue 53, items 3 and 8; the hostile census's valid
extremes): a value that cannot be served is refused with a ``ValueError`` that names the
argument the user passed, before anything is charged (never an ``OverflowError``, never a
message about a derived quantity only); values just inside the range are still served.

No Stan: only releases and records. Every expectation is computed here independently of the
library (exact decimal arithmetic for the sensitivities).
"""

from __future__ import annotations

import re
from decimal import Decimal, getcontext

import numpy as np
import pytest

from pystanprivacy.models import bernstein2018 as B
from pystanprivacy.models import kulkarni2022_regression as KR
from pystanprivacy.privacy.records import PrivacyAccountant

FLOAT_MAX = float(np.finfo(np.float64).max)
X = np.array([[0.3, 0.3], [-0.2, 0.5], [0.1, -0.6]])
Y = np.array([0.1, 0.2, -0.3])
LABELS = np.array([0, 1, 1])


def _names(message: str, name: str) -> bool:
    """``name`` appears in ``message`` as a whole identifier (``R`` is not found in ``R_y``)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) is not None


def _refused(call, name: str, accountant: PrivacyAccountant | None = None) -> str:
    """Run ``call``; assert a ValueError naming ``name`` and no charge; return the message."""
    before = None if accountant is None else (accountant.spent, len(accountant.ledger))
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert _names(message, name), message
    if accountant is not None:
        assert (accountant.spent, len(accountant.ledger)) == before
    return message


# ------------------------------------------------------------------ bernstein2018.published
PUBLISHED = [
    (B.BinomialBeta(), np.array([1.7])),
    (B.MultinomialDirichlet(), np.array([1.2, 0.8, 1.1])),
    (B.ExponentialGamma(bounds=(0.0, 5.0)), np.array([4.2])),
]


@pytest.mark.parametrize("epsilon", [5e-324, 1e-310])
@pytest.mark.parametrize("model,y", PUBLISHED, ids=lambda v: type(v).__name__)
def test_published_tiny_epsilon_names_epsilon(model, y, epsilon):
    # sensitivity / epsilon overflows to inf: no Laplace scale exists for this epsilon
    message = _refused(lambda: model.published(y, n=3, epsilon=epsilon), "epsilon")
    assert repr(epsilon) in message


@pytest.mark.parametrize("model,y", PUBLISHED, ids=lambda v: type(v).__name__)
def test_published_small_but_servable_epsilon_is_recorded(model, y):
    # 1e-290: the scale sensitivity / 1e-290 is finite and below 2**1000, so it is served
    rec = model.published(y, n=3, epsilon=1e-290).record
    assert rec.scale == pytest.approx(model.sensitivity / 1e-290, rel=1e-15)


# ------------------------------------------------- kulkarni2022_regression: sensitivities
def _linreg_exact(R: float, R_y: float, r2: float, r3: float) -> float:
    getcontext().prec = 50
    R, R_y, r2, r3 = map(Decimal, (R, R_y, r2, r3))
    value = R_y**4 / (2 * r2**4) + 2 * R**4 + 2 * R_y**2 * R**2 / r2**2 + R_y**4 / r3**2
    return float(value.sqrt())


def _logreg_exact(R: float, r: float) -> float:
    getcontext().prec = 50
    R, r = Decimal(R), Decimal(r)
    return float((r**2 / 2 + 2 * R**2 + 2 * R**4 / r**2).sqrt())


@pytest.mark.parametrize(
    "R,R_y,r2,r3",
    [
        (1.0, 1.0, 1.0, 1.0),
        (1e100, 2.0, 1.0, 1.0),
        (3.0, 1e150, 1e-3, 1e3),
        (1e153, 1e153, 1.0, 1.0),
        (0.5, 0.25, 7.0, 0.01),
    ],
)
def test_linreg_sensitivity_matches_exact_arithmetic(R, R_y, r2, r3):
    # R**4 = 1e400 overflowed the float power (OverflowError) although the root is finite
    assert KR.linreg_sensitivity(R, R_y, r2, r3) == pytest.approx(_linreg_exact(R, R_y, r2, r3), rel=1e-14)


@pytest.mark.parametrize("R,r", [(1.0, 1.0), (1e100, 1.0), (1e150, 1e-3), (2.0, 1e3)])
def test_logreg_sensitivity_matches_exact_arithmetic(R, r):
    assert KR.logreg_sensitivity(R, r) == pytest.approx(_logreg_exact(R, r), rel=1e-14)


@pytest.mark.parametrize("R,R_y", [(1e300, 1.0), (FLOAT_MAX, 1.0), (1.0, 1e300), (1.0, FLOAT_MAX)])
def test_linreg_sensitivity_beyond_float64_names_the_bounds(R, R_y):
    message = _refused(lambda: KR.linreg_sensitivity(R, R_y), "R")
    assert _names(message, "R_y")


@pytest.mark.parametrize("R", [1e300, FLOAT_MAX])
def test_logreg_and_input_sensitivity_beyond_float64_name_R(R):
    _refused(lambda: KR.logreg_sensitivity(R), "R")
    if R == FLOAT_MAX:  # 2 * R overflows; 2 * 1e300 does not
        _refused(lambda: KR.input_sensitivity(R), "R")


# ------------------------------------------------------- kulkarni2022_regression.release
def _acct() -> PrivacyAccountant:
    return PrivacyAccountant(10.0, 1e-3)


SS_BOUNDS = [
    (KR.LinearRegressionSS, Y, "R", 1e300),
    (KR.LinearRegressionSS, Y, "R", FLOAT_MAX),
    (KR.LinearRegressionSS, Y, "R_y", 1e300),
    (KR.LinearRegressionSS, Y, "R_y", FLOAT_MAX),
    (KR.LinearRegressionInputs, Y, "R", 1e300),
    (KR.LinearRegressionInputs, Y, "R", FLOAT_MAX),
    (KR.LinearRegressionInputs, Y, "R_y", 1e300),
    (KR.LinearRegressionInputs, Y, "R_y", FLOAT_MAX),
    (KR.LogisticRegressionSS, LABELS, "R", 1e300),
    (KR.LogisticRegressionSS, LABELS, "R", FLOAT_MAX),
    (KR.LogisticRegressionInputs, LABELS, "R", 1e300),
    (KR.LogisticRegressionInputs, LABELS, "R", FLOAT_MAX),
]


@pytest.mark.parametrize("cls,y,name,value", SS_BOUNDS, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_huge_bound_is_refused_naming_it_before_the_charge(cls, y, name, value):
    acct = _acct()
    message = _refused(lambda: cls.release(X, y, epsilon=1.0, accountant=acct, seed=1, **{name: value}), name, acct)
    assert repr(value) in message
    # the secure (unseeded) path is refused the same way
    _refused(lambda: cls.release(X, y, epsilon=1.0, accountant=acct, **{name: value}), name, acct)


@pytest.mark.parametrize("seed", [None, 1])
def test_tiny_bounds_of_linear_ss_are_refused_naming_them(seed):
    # R = R_y = 1e-160: every term of Lemma 3.1 is about 1e-320, a subnormal sensitivity that
    # gaussian_reports cannot use as its clipping radius (it named only "sensitivity")
    acct = _acct()
    message = _refused(
        lambda: KR.LinearRegressionSS.release(X, Y, epsilon=1.0, R=1e-160, R_y=1e-160, seed=seed, accountant=acct),
        "R",
        acct,
    )
    assert _names(message, "R_y")


@pytest.mark.parametrize("cls,y", [(KR.LinearRegressionInputs, Y), (KR.LogisticRegressionInputs, LABELS)])
def test_largest_servable_R_of_the_inputs_models_is_served(cls, y):
    # the largest R the message allows is served (sigma = 2R * unit <= 2**1000)
    acct = _acct()
    with pytest.raises(ValueError) as info:
        cls.release(X, y, epsilon=1.0, R=1e300, accountant=acct)
    allowed = float(re.search(r"R <= ([0-9.e+\-]+)", str(info.value)).group(1))
    assert 1e299 < allowed < 1e300
    # seeded (continuous noise): sigma_x is the analytic sigma, within 2**1000 and tight to it
    seeded = cls.release(X, y, epsilon=1.0, R=allowed * (1 - 1e-9), accountant=acct, seed=3)
    assert 2.0**1000 * (1 - 1e-6) <= seeded.record.details["sigma_x"] <= 2.0**1000
    assert np.all(np.isfinite(seeded.values))
    # secure path (a coarser grid may add a little to sigma: the mechanisms allow 2**1010)
    secure = cls.release(X, y, epsilon=1.0, R=allowed * (1 - 1e-9), accountant=acct)
    assert np.all(np.isfinite(secure.values)) and secure.record.details["sigma_x"] <= 2.0**1010
    assert acct.spent[0] == pytest.approx(2.0)


@pytest.mark.parametrize("c,seeds", [(5e-324, (None, 1)), (1e-310, (None, 1)), (1 - 2.0**-53, (None,))])
def test_extreme_budget_split_is_refused_naming_c(c, seeds):
    # c * delta underflows to 0 (5e-324), the label's (1e-310 epsilon, 1e-315 delta) have no
    # analytic sigma, and (1 - c) * epsilon = 1.1e-16 is below what the secure discrete
    # Gaussian of the features supports (with a seed that part is served: continuous noise)
    acct = _acct()
    for seed in seeds:
        message = _refused(
            lambda seed=seed: KR.LinearRegressionInputs.release(X, Y, epsilon=1.0, c=c, accountant=acct, seed=seed),
            "c",
            acct,
        )
        assert repr(c) in message


@pytest.mark.parametrize("cls,y", [(KR.LinearRegressionInputs, Y), (KR.LogisticRegressionInputs, LABELS)])
def test_moderate_budget_split_is_served(cls, y):
    acct = _acct()
    rel = cls.release(X, y, epsilon=1.0, c=0.01, accountant=acct)
    assert rel.record.details["budget_split"]["epsilon_label"] == pytest.approx(0.01)
    assert acct.spent[0] == pytest.approx(1.0)
