"""Every public check of a release happens before the accountant is charged (issue 53, item 3).

The cases of the issue, made on the code as it was: ``NaiveBayesHMM.release`` charged the
total epsilon and then refused a feature's noise plan (epsilon = 1e-300, or
``epsilon_per_feature=[1e-15]``); ``BetaBernoulliOPS.sample_one`` at epsilon = 5e-324 charged
and then failed on ``data['temperature']`` (T = 2Δ/ε overflows to inf). The same held for the
naive-Bayes HMM OPS model, and for the beta-D models whose beta is not a finite number > 1
(epsilon = 5e-324: beta = inf; epsilon = 1e300: beta rounds to 1). Each test asserts the
error, that nothing was charged (``spent`` and ``ledger`` unchanged), and, for the OPS
models, that nothing reached Stan (StanModel.get is a trap here: nothing is compiled or run).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from pystanprivacy.models import jewson2023 as J
from pystanprivacy.models.foulds2016 import BetaBernoulliOPS, log_likelihood_sensitivity
from pystanprivacy.models.foulds2016_hmm import NaiveBayesHMM, NaiveBayesHMMOPS
from pystanprivacy.privacy.records import PrivacyAccountant
from pystanprivacy.sampling.stan import StanModel

COUNTS = np.array([[[3, 1], [0, 4]]])  # (R=1, T=2, J=2): one feature of two values
BITS = np.array([0, 1, 1, 0, 1])
X = np.column_stack([np.ones(6), np.linspace(0.0, 1.0, 6)])
LABELS = np.array([0, 1, 0, 1, 1, 0])
TARGETS = np.linspace(-1.0, 1.0, 6)


class _ReachedStan(BaseException):
    """Not an Exception, so that no error wrapping can catch it."""


def _trap(cls, name, *args, **kwargs):
    raise _ReachedStan(f"{name} was asked for: the attempt reached Stan")


@pytest.fixture(autouse=True)
def no_stan(monkeypatch):
    monkeypatch.setattr(StanModel, "get", classmethod(_trap))


def _refused_uncharged(call, *words):
    """``call(accountant)`` raises ValueError naming ``words``, charges nothing."""
    accountant = PrivacyAccountant(epsilon=1e300)
    with pytest.raises(ValueError) as err:
        call(accountant)
    for word in words:
        assert word in str(err.value)
    assert accountant.spent == (0.0, 0.0)
    assert accountant.ledger == []
    return str(err.value)


# ------------------------------------------------------------------ Laplace count release (HMM)
@pytest.mark.parametrize(
    "kwargs", [{"epsilon": 1e-300}, {"epsilon_per_feature": [1e-15]}], ids=["epsilon", "epsilon_per_feature"]
)
def test_hmm_release_checks_every_noise_plan_before_the_charge(kwargs):
    # unseeded: the secure discrete noise, whose plan refuses noise wider than 2^52 grid steps
    _refused_uncharged(
        lambda acc: NaiveBayesHMM.release(COUNTS, feature_sizes=[2], accountant=acc, **kwargs), "epsilon", "too small"
    )


def test_hmm_release_charges_once_when_every_plan_passes():
    accountant = PrivacyAccountant(epsilon=2.0)
    rel = NaiveBayesHMM.release(COUNTS, epsilon_per_feature=[0.5], feature_sizes=[2], accountant=accountant)
    assert accountant.spent == (0.5, 0.0)
    assert len(accountant.ledger) == 1
    assert rel.values.shape == COUNTS.shape and np.all(rel.values >= 0)
    assert rel.record.epsilon == 0.5


# ------------------------------------------------------------------ OPS temperature
def _smallest_epsilon(delta: float) -> float:
    """The smallest epsilon whose temperature 2Δ/ε is a finite float64 (independent search)."""
    eps = 2.0 * delta / sys.float_info.max
    while not np.isfinite(2.0 * delta / eps):
        eps = np.nextafter(eps, np.inf)
    return float(eps)


def test_beta_bernoulli_ops_refuses_an_unrepresentable_temperature_before_the_charge():
    message = _refused_uncharged(
        lambda acc: BetaBernoulliOPS().sample_one(BITS, epsilon=5e-324, accountant=acc), "epsilon=5e-324", "temperature"
    )
    smallest = _smallest_epsilon(log_likelihood_sensitivity(0.2))
    assert repr(smallest) in message  # the allowed range, exactly
    # the bound is right: the smallest allowed epsilon gives a finite temperature, the next smaller does not
    assert np.isfinite(BetaBernoulliOPS().temperature(smallest))
    with pytest.raises(ValueError, match="epsilon"):
        BetaBernoulliOPS().temperature(float(np.nextafter(smallest, 0.0)))


def test_hmm_ops_refuses_an_unrepresentable_temperature_before_the_charge():
    _refused_uncharged(
        lambda acc: NaiveBayesHMMOPS(1).sample_one(COUNTS, feature_sizes=[2], epsilon=5e-324, accountant=acc),
        "epsilon=5e-324",
        "temperature",
    )


# ------------------------------------------------------------------ beta-D OPS
@pytest.mark.parametrize("epsilon", [5e-324, 1e300], ids=["beta-inf", "beta-one"])
@pytest.mark.parametrize(
    "cls, y", [(J.LogisticRegressionBetaD, LABELS), (J.NNClassifierBetaD, LABELS)], ids=["logistic", "nn_classifier"]
)
def test_beta_d_checks_its_loss_before_the_charge(cls, y, epsilon):
    _refused_uncharged(lambda acc: cls().sample_one(X, y, epsilon=epsilon, accountant=acc))


@pytest.mark.parametrize("cls", [J.LinearRegressionBetaD, J.NNRegressionBetaD], ids=["linear", "nn_regression"])
def test_gaussian_beta_d_checks_its_loss_before_the_charge(cls):
    _refused_uncharged(lambda acc: cls().sample_one(X, TARGETS, epsilon=1e300, accountant=acc))
