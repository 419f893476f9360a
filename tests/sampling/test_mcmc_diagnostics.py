"""The vectorised R-hat / bulk ESS / tail ESS of ``pystanprivacy.sampling.diagnostics``.

They replace ArviZ's element-by-element loop, so they must give ArviZ's numbers: each is
compared with ``arviz.rhat(method="rank")`` / ``arviz.ess(method="bulk"|"tail")`` on AR(1)
chains that exercise every branch (anti-correlated, independent, slowly mixing, ties, a
constant element, a NaN draw, chains that disagree, odd and minimal chain lengths, one
chain). The comparisons are deterministic: same arithmetic, so the tolerance is rounding
(1e-10 relative), not Monte-Carlo error.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from pystanprivacy.sampling import diagnostics as md
from pystanprivacy.sampling.backends.base import RawFit, SamplerSettings
from pystanprivacy.sampling.posterior import Posterior, Thresholds


def _arviz():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import arviz

    return arviz


def _ar1(rng: np.random.Generator, chains: int, draws: int, elements: int, phi: float) -> np.ndarray:
    e = rng.standard_normal((chains, draws, elements))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0]
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


def _hard_elements(rng: np.random.Generator, chains: int, draws: int, phi: float) -> np.ndarray:
    """(chains, draws, 6): plain AR(1), ties, a constant, disagreeing chains, a NaN, a
    heavy-tailed element."""
    x = _ar1(rng, chains, draws, 6, phi)
    x[..., 1] = np.round(x[..., 1])
    x[..., 2] = 3.0
    x[..., 3] += np.arange(chains)[:, None]
    x[0, 0, 4] = np.nan
    x[..., 5] = np.sinh(2 * x[..., 5])
    return x


def _reference(x: np.ndarray) -> dict[str, np.ndarray]:
    az = _arviz()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = az.convert_to_dataset({"x": x})
        return {
            "rhat": az.rhat(ds, method="rank")["x"].values,
            "ess_bulk": az.ess(ds, method="bulk")["x"].values,
            "ess_tail": az.ess(ds, method="tail")["x"].values,
        }


def _assert_same(got: np.ndarray, ref: np.ndarray) -> None:
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=0, equal_nan=True)


@pytest.mark.parametrize("chains", [1, 2, 4])
@pytest.mark.parametrize("draws", [4, 7, 100, 501])
@pytest.mark.parametrize("phi", [-0.5, 0.0, 0.9, 0.999])
def test_matches_arviz(chains, draws, phi):
    rng = np.random.default_rng([chains, draws, int(1000 * phi) % 2**16])
    x = _hard_elements(rng, chains, draws, phi)
    ref = _reference(x)
    _assert_same(md.split_rhat(x), ref["rhat"])
    _assert_same(md.ess_bulk(x), ref["ess_bulk"])
    _assert_same(md.ess_tail(x), ref["ess_tail"])


def test_shape_of_result_follows_the_variable():
    x = np.random.default_rng(1).standard_normal((2, 50, 3, 4))
    for fn in (md.split_rhat, md.ess_bulk, md.ess_tail):
        assert fn(x).shape == (3, 4)
    assert md.split_rhat(x[..., 0, 0]).shape == ()  # a scalar variable gives a 0-d array


def test_edge_cases_follow_arviz_conventions():
    rng = np.random.default_rng(2)
    one_chain = rng.standard_normal((1, 100, 2))
    assert np.all(np.isnan(md.split_rhat(one_chain)))  # R-hat needs 2 chains
    assert np.all(np.isfinite(md.ess_bulk(one_chain)))  # ESS splits the one chain
    short = rng.standard_normal((4, 3, 2))
    for fn in (md.split_rhat, md.ess_bulk, md.ess_tail):
        assert np.all(np.isnan(fn(short)))  # fewer than 4 draws
    const = np.full((4, 100, 1), 2.5)
    assert md.ess_bulk(const)[0] == 400 and md.ess_tail(const)[0] == 400  # every split draw counts


def test_independent_and_ar1_draws_give_the_theoretical_ess():
    """iid draws: ESS ≈ S; AR(1) with φ = 0.8: ESS ≈ S (1 − φ)/(1 + φ) = S/9. With S = 40 000
    the estimator's sd is a few per cent; the 20 % band is > 5 sd wide (seeded, so the
    false-rejection rate is that of one draw from that distribution: < 1e-6)."""
    rng = np.random.default_rng(3)
    iid = rng.standard_normal((4, 10_000, 1))
    ar = _ar1(rng, 4, 10_000, 1, 0.8)
    assert md.ess_bulk(iid)[0] == pytest.approx(40_000, rel=0.2)
    assert md.ess_bulk(ar)[0] == pytest.approx(40_000 / 9, rel=0.2)
    assert md.split_rhat(iid)[0] == pytest.approx(1.0, abs=0.005)
    shifted = iid + np.array([0, 0, 0, 1.0])[:, None, None]  # one chain off by 1 sd
    assert md.split_rhat(shifted)[0] > 1.05


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match=r"draws must have shape \(chains, draws, \.\.\.\), got shape \(5,\)"):
        md.ess_bulk(np.zeros(5))


def test_posterior_uses_them_and_caches_a_copy():
    rng = np.random.default_rng(4)
    theta = _ar1(rng, 2, 200, 3, 0.5)
    sigma = np.exp(_ar1(rng, 2, 200, 1, 0.2)[..., 0])
    post = Posterior(
        RawFit(variables={"theta": theta, "sigma": sigma}, sampler={}),
        model="t",
        backend="none",
        settings=SamplerSettings(chains=2, warmup=0, draws=200),
        elapsed=0.0,
    )
    for name, arr in (("theta", theta), ("sigma", sigma[..., None])):
        ref = _reference(arr)
        _assert_same(np.atleast_1d(post.rhat()[name]), ref["rhat"])
        _assert_same(np.atleast_1d(post.ess_bulk()[name]), ref["ess_bulk"])
        _assert_same(np.atleast_1d(post.ess_tail()[name]), ref["ess_tail"])
    first = post.rhat()["theta"]
    first[:] = -1.0  # the caller's copy, not the cache
    np.testing.assert_array_equal(post.rhat()["theta"], _reference(theta)["rhat"])


def test_check_messages_never_round_onto_the_threshold():
    """A failed check prints its value rounded away from the threshold: an ESS just below it
    must not read "ESS 100 (< 100)", an R-hat just above it not "1.050 (> 1.05)". The
    thresholds are set from the draws' own diagnostics, so this holds for any seed."""
    rng = np.random.default_rng(5)
    theta = _ar1(rng, 2, 100, 1, 0.5) + np.array([0.0, 0.4])[:, None, None]
    post = Posterior(
        RawFit(variables={"theta": theta}, sampler={}),
        model="t",
        backend="none",
        settings=SamplerSettings(chains=2, warmup=0, draws=100),
        elapsed=0.0,
    )
    ess = min(float(post.ess_bulk()["theta"][0]), float(post.ess_tail()["theta"][0]))
    rhat = float(post.rhat()["theta"][0])
    assert rhat > 1.0
    # thresholds a hair past the values: the old "{:.0f}" / "{:.3f}" messages printed them equal
    thresholds = Thresholds(max_rhat=rhat - 4e-4, min_ess_per_chain=(ess + 0.01) / 2)
    problems = post.check(thresholds)
    ess_msgs = [p for p in problems if "ESS of theta" in p]
    rhat_msgs = [p for p in problems if "R-hat of theta" in p]
    assert ess_msgs and len(rhat_msgs) == 1
    for msg in ess_msgs:
        shown, limit = (float(x) for x in re.fullmatch(r".*ESS of theta is ([\d.]+) \(< ([\d.]+)\).*", msg).groups())
        assert shown < limit
    shown, limit = (
        float(x) for x in re.fullmatch(r"R-hat of theta is ([\d.]+) \(> ([\d.]+)\).*", rhat_msgs[0]).groups()
    )
    assert shown > limit
