"""The HMM's mode masses (:mod:`pystanprivacy.models.foulds2016_hmm.modes`): the numpy log
density against Stan's (both programs, random unconstrained points), and the K! label copies
counted once. Deterministic under fixed seeds."""

from __future__ import annotations

import numpy as np
import pytest

from pystanprivacy.models.foulds2016_hmm import NaiveBayesHMM, NaiveBayesHMMOPS
from pystanprivacy.models.foulds2016_hmm.counts import CountLayout
from pystanprivacy.models.foulds2016_hmm.modes import (
    HMMLogDensity,
    _stick_breaking,
    fit_reference,
    hmm_mode_masses,
    laplace_mode_masses,
    ops_mode_masses,
    select_chains,
    stick_breaking_free,
)

SIZES = (3, 4)


def _counts(seed: int = 0) -> np.ndarray:
    """3 regions x 8 months of counts over two features of 3 and 4 values (two regimes)."""
    rng = np.random.default_rng(seed)
    z = (np.arange(8)[None, :] + np.arange(3)[:, None]) % 4 < 2
    p1 = np.where(z[..., None], [0.7, 0.2, 0.1], [0.1, 0.3, 0.6])
    p2 = np.where(z[..., None], [0.5, 0.3, 0.1, 0.1], [0.1, 0.1, 0.2, 0.6])
    n = rng.poisson(40, size=z.shape)
    f1 = np.stack([rng.multinomial(k, p) for k, p in zip(n.ravel(), p1.reshape(-1, 3))]).reshape(3, 8, 3)
    f2 = np.stack([rng.multinomial(k, p) for k, p in zip(n.ravel(), p2.reshape(-1, 4))]).reshape(3, 8, 4)
    return np.concatenate([f1, f2], axis=2)


def test_stick_breaking_round_trip():
    rng = np.random.default_rng(1)
    x = rng.dirichlet(np.ones(5), size=(7, 2))
    back, _ = _stick_breaking(stick_breaking_free(x), 5)
    np.testing.assert_allclose(back, x, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("tempered", [False, True])
def test_numpy_log_density_equals_stans_up_to_one_constant(nb_hmm_model, nb_hmm_ops_model, tempered):
    """At 6 random unconstrained points (not draws: anywhere), HMMLogDensity and
    StanModel.log_density (the compiled program, Jacobian included) differ by one constant to
    1e-9 relative; a held-out cell is left out by both. The log densities vary by tens to thousands
    between the points, so a wrong term (prior, Jacobian, tempering) would show."""
    counts = _counts()
    layout, exact = CountLayout.from_counts(counts, SIZES)
    heldout = np.zeros((3, 8), dtype=bool)
    heldout[1, 3] = True
    if tempered:
        model = NaiveBayesHMMOPS(3, multiplier=10.0)
        data = model.data(exact, layout, heldout, 2.0)
    else:
        model = NaiveBayesHMM(3, alpha=1.5, beta=0.7)
        data = model.data(exact, layout, heldout)
    density = HMMLogDensity(data)
    u = np.random.default_rng(2).normal(0.0, 1.5, size=(6, density.dim))
    stan, _ = model.stan_model.log_density(data, unconstrained=u)
    mine = density(u)
    diff = stan - mine
    assert np.ptp(stan) > 30
    np.testing.assert_allclose(diff, diff[0], rtol=0, atol=1e-9 * np.abs(stan).max())
    assert density.check(model.stan_model, data, u[:3]) == pytest.approx(diff[0])
    # a density that is off by a term that varies between points is refused
    density.beta += 0.5
    with pytest.raises(RuntimeError, match="does not match Stan's"):
        density.check(model.stan_model, data, u[:3])


@pytest.fixture(scope="module")
def small_fit(nb_hmm_model):
    counts = _counts()
    release = NaiveBayesHMM.release(counts, epsilon=5.0, feature_sizes=SIZES, seed=3)
    model = NaiveBayesHMM(2)
    post = model.fit(release, init="em", chains=2, warmup=300, draws=300, seed=4)
    return model, release, post


def test_label_copies_are_counted_once(small_fit):
    """Relabelling one chain's states (a chain in another of the K! = 2 label copies of the same
    mode) leaves one mode with the same log mass (within 4 of its standard errors, which are
    below 0.5): the chains are aligned within the mode before the bridge."""
    model, release, post = small_fit
    before = laplace_mode_masses(model, post, release, tol=50.0, seed=5)
    assert before.modes.n_modes == 1 and before.masses.weights.tolist() == [1.0]
    perm = np.array([1, 0])
    A = post.draws("A", combine_chains=False).copy()
    eta = post.draws("eta", combine_chains=False).copy()
    theta = post.draws("theta", combine_chains=False).copy()
    A[1] = np.concatenate([A[1][:, :1, perm], A[1][:, 1:][:, perm][:, :, perm]], axis=1)
    eta[1], theta[1] = eta[1][..., perm], theta[1][:, perm]
    swapped = post.with_draws(
        {"A": A, "eta": eta, "theta": theta, "log_lik": post.draws("log_lik", combine_chains=False)}
    )
    after = laplace_mode_masses(model, swapped, release, tol=50.0, seed=5)
    assert after.modes.n_modes == 1 and after.permutations[1].tolist() == [1, 0]
    sd = float(np.hypot(before.masses.log_sd[0], after.masses.log_sd[0]))
    assert sd < 0.5
    assert abs(after.masses.log_mass[0] - before.masses.log_mass[0]) < 4 * sd


def test_select_chains_keeps_the_chosen_chains_and_their_sampler_statistics(small_fit):
    _, _, post = small_fit
    one = select_chains(post, np.array([1]))
    assert one.num_chains == 1
    np.testing.assert_array_equal(
        one.draws("theta", combine_chains=False)[0], post.draws("theta", combine_chains=False)[1]
    )
    np.testing.assert_array_equal(one.sample_stat("lp")[0], post.sample_stat("lp")[1])


def test_bad_input_is_refused(small_fit):
    model, release, post = small_fit
    with pytest.raises(TypeError, match="posterior"):
        hmm_mode_masses("x", data={}, stan_model=model.stan_model, tol=1.0)
    with pytest.raises(ValueError, match="tol"):
        laplace_mode_masses(model, post, release, tol=-1.0)


def test_an_ops_runs_reference_is_read_back_and_its_tempered_masses_estimated(nb_hmm_ops_model):
    """An OPS run's eta are coordinates of phi, not of theta: its reference values are read back
    with the model's a0 (without them no value fits), and the tempered program's data rebuilt
    with them give the sampler's own lp__ at its draws (a wrong reference is refused: its density
    differs from lp__ by tens of units that vary between draws), so the tempered masses are
    estimated: one weight per mode found, summing to 1."""
    counts = _counts()
    layout, exact = CountLayout.from_counts(counts, SIZES)
    model = NaiveBayesHMMOPS(2, multiplier=10.0)
    res = model.sample(
        counts, feature_sizes=SIZES, epsilon=2.0, chains=2, warmup=150, draws=100, seed=6,
        allow_unconverged=True, keep_posterior=True,
    )  # fmt: skip
    post = res.posterior
    a0 = model.a0(SIZES)
    reference = fit_reference(post, SIZES, a0=a0)
    with pytest.raises(ValueError, match="no reference value"):
        fit_reference(post, SIZES)
    found = ops_mode_masses(model, post, counts, feature_sizes=SIZES, epsilon=2.0, tol=50.0, seed=7)
    assert found.masses.weights.shape == (found.modes.n_modes,)
    assert found.masses.weights.sum() == pytest.approx(1.0)
    wrong = [(r + 1) % n for r, n in zip(reference, SIZES)]
    with pytest.raises(RuntimeError, match="do not match the fit"):
        hmm_mode_masses(
            post, data=model.data(exact, layout, None, 2.0, wrong), stan_model=model.stan_model, tol=50.0, seed=7
        )
