"""A model's ``fit`` checks the release against its record before any Stan model is compiled
(issue 53, item 7), and ``sample_one`` on a model that is not one-posterior sampling is a
clear ``NotImplementedError`` (issue 53, item 8).

No test here compiles or samples: ``StanModel.get`` (the one way a model reaches its compiled
program, :attr:`pystanprivacy.models.base.Model.stan_model`) is replaced by a stand-in that
records the call and raises :class:`ReachedStan`. A refused release must raise its
``ValueError`` without that call; a valid release must reach it (so the check refuses
only what does not belong together).
"""

from __future__ import annotations

import numpy as np
import pytest

from pystanprivacy.models.base import Model, OPSModel, check_release_matches_record
from pystanprivacy.models.bernstein2018 import BinomialBeta, BinomialBetaExact
from pystanprivacy.models.foulds2016 import BetaBernoulli
from pystanprivacy.models.kulkarni2022 import ExponentialLDP, GaussianLDP, HistogramOUE
from pystanprivacy.models.registry import model_class, model_names
from pystanprivacy.privacy.records import PrivacyRecord, Release
from pystanprivacy.sampling.stan import StanModel


class ReachedStan(Exception):
    """Raised by the stand-in for ``StanModel.get``: the fit got past its checks."""


@pytest.fixture
def stan_calls(monkeypatch):
    """The list of model names ``StanModel.get`` was asked for; every call raises ReachedStan."""
    calls: list[str] = []

    def fake_get(cls, name, *args, **kwargs):
        calls.append(name)
        raise ReachedStan(name)

    monkeypatch.setattr(StanModel, "get", classmethod(fake_get))
    return calls


def _release_examples():
    """(model name, Example) of every registry model whose data path is release -> fit."""
    out = []
    for name in model_names():
        cls = model_class(name)
        if issubclass(cls, OPSModel) or not getattr(cls, "private", True):
            continue
        out.append(name)
    return out


RELEASE_MODELS = _release_examples()


def _example(name: str):
    cls = model_class(name)
    return cls.example() if name == "foulds2016/nb_hmm" else cls.example(n=40)


def test_every_release_model_is_covered():
    # the twelve noise-aware models of the registry (a model added later joins the tests below)
    assert len(RELEASE_MODELS) >= 12, RELEASE_MODELS


@pytest.mark.parametrize("name", RELEASE_MODELS)
def test_a_release_with_one_value_more_than_its_record_is_refused_before_compiling(name, stan_calls):
    """The issue's attack on every axis: ``Release(values=<values with one slice repeated>,
    record=<the record they were made with>)`` must not reach Stan."""
    ex = _example(name)
    rel = ex.release(seed=0)
    v = rel.values
    for axis in range(v.ndim):
        forged = Release(values=np.concatenate([v, np.take(v, [0], axis=axis)], axis=axis), record=rel.record)
        with pytest.raises(ValueError, match="release") as info:
            ex.model.fit(forged)
        assert stan_calls == [], f"{name}: axis {axis} reached StanModel.get before the refusal"
        assert str(forged.values.shape) in str(info.value) or str(forged.values.shape[axis]) in str(info.value)
    # the release as made reaches Stan: the check refuses only a mismatch
    with pytest.raises(ReachedStan):
        ex.model.fit(rel)
    assert stan_calls == [ex.model.model_name]


@pytest.mark.parametrize(
    "cls, release",
    [
        (GaussianLDP, lambda x: GaussianLDP.release(x, epsilon=1.0, seed=1)),
        (ExponentialLDP, lambda x: ExponentialLDP.release(np.abs(x), epsilon=1.0, seed=1)),
    ],
)
def test_issue_example_one_report_more_than_n(cls, release, stan_calls):
    """``cls().fit(Release(values=np.r_[v, v[:1]], record=rel.record))``, verbatim from the issue:
    the message names ``release``, the record's n (30) and the 31 reports it got."""
    x = np.random.default_rng(0).normal(size=30)
    rel = release(x)
    v = rel.values
    with pytest.raises(ValueError, match=r"release does not match its record.*n = 30 records.*31 report"):
        cls().fit(Release(values=np.r_[v, v[:1]], record=rel.record))
    assert stan_calls == []


def test_several_data_sets_more_than_the_record_states_are_refused(stan_calls):
    """Two-data-set releases (R = 2) with a third row appended: the record states
    ``datasets = 2`` (BetaBernoulli, BinomialBeta, BinomialBetaExact)."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(2, 25))
    for model, rel in [
        (BetaBernoulli(), BetaBernoulli.release(x, epsilon=1.0, seed=2)),
        (BinomialBeta(), BinomialBeta.release(x, epsilon=1.0, seed=2)),
        (BinomialBetaExact(), BinomialBetaExact.release(x, epsilon=1.0, seed=2)),
    ]:
        v = np.atleast_2d(rel.values)
        forged = Release(values=np.concatenate([v, v[:1]]), record=rel.record)
        with pytest.raises(ValueError, match=r"record states datasets = 2 .* hold 3"):
            model.fit(forged)
        fewer = Release(values=v[:1], record=rel.record)
        with pytest.raises(ValueError, match=r"record states datasets = 2 .* hold 1"):
            model.fit(fewer)
    assert stan_calls == []


def test_a_release_of_another_mechanism_is_refused_before_compiling(stan_calls):
    """Before the fix GaussianLDP/ExponentialLDP/HistogramOUE/BetaBernoulli compiled their Stan
    model first (``self.stan_model.sample(self.data(release))``) and only then checked."""
    x = np.random.default_rng(0).integers(0, 3, size=30)
    oue = HistogramOUE.release(x, epsilon=1.0, d=3, seed=3)
    laplace = GaussianLDP.release(x.astype(float), epsilon=1.0, seed=3)
    for model, rel in [
        (GaussianLDP(), oue),
        (ExponentialLDP(), oue),
        (HistogramOUE(), laplace),
        (BetaBernoulli(), oue),
    ]:
        with pytest.raises(ValueError, match="release"):
            model.fit(rel)
    assert stan_calls == []


def test_check_release_matches_record_directly():
    """The shared check itself: exact lengths pass; one more or one fewer, a missing n, a
    missing or non-integer ``datasets`` are refused."""
    rec = PrivacyRecord(mechanism="laplace", epsilon=1.0, n=5, details={"datasets": 2})
    ok = Release(values=np.zeros((2, 5)), record=rec)
    check_release_matches_record(ok, ok.values, model="M", records_axis=1, datasets_axis=0)
    for shape in [(2, 4), (2, 6)]:
        with pytest.raises(ValueError, match=rf"n = 5 records, but release.values hold {shape[1]} report"):
            check_release_matches_record(
                Release(values=np.zeros(shape), record=rec), np.zeros(shape), model="M", records_axis=1
            )
    with pytest.raises(ValueError, match=r"datasets = 2 data set\(s\), but release.values hold 3"):
        check_release_matches_record(
            Release(values=np.zeros((3, 5)), record=rec), np.zeros((3, 5)), model="M", datasets_axis=0
        )
    no_n = PrivacyRecord(mechanism="laplace", epsilon=1.0, details={"datasets": True})
    bad = Release(values=np.zeros((1, 5)), record=no_n)
    with pytest.raises(ValueError, match="n = None"):
        check_release_matches_record(bad, bad.values, model="M", records_axis=1)
    with pytest.raises(ValueError, match="datasets = True"):  # a bool is not a count of data sets
        check_release_matches_record(bad, bad.values, model="M", datasets_axis=0)


# ------------------------------------------------------------------------ item 8: sample_one
NON_OPS = [name for name in model_names() if not issubclass(model_class(name), OPSModel)]


@pytest.mark.parametrize("name", NON_OPS)
def test_sample_one_on_a_model_that_is_not_ops_says_what_to_use(name, stan_calls):
    cls = model_class(name)
    model = cls.example(n=40).model if name != "foulds2016/nb_hmm" else cls(2)
    what = "use release, then fit" if getattr(cls, "private", True) else "use fit_nonprivate"
    with pytest.raises(NotImplementedError, match=rf"^{cls.__name__} has no sample_one: .*\({what}\)"):
        model.sample_one(np.zeros(3), epsilon=1.0)
    assert stan_calls == []
    assert issubclass(cls, Model)
