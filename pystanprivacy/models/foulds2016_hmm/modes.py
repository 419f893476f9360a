"""The modes of a naive-Bayes HMM fit and their posterior masses (issue 64).

Chains from dispersed starts settle in different modes of the HMM posterior (Foulds et al.
2016's war-logs case). :func:`hmm_mode_masses` groups them into modes by their mean
log-likelihood (label-invariant, :func:`~pystanprivacy.sampling.stacking.chain_modes`), aligns
the state labels of the chains within each mode to one labelling (so each mode's draws lie in
one of its K! label copies, which all have the same mass and are counted once), and estimates
each mode's mass by bridge sampling (:func:`pystanprivacy.sampling.modes.mode_masses`) on Stan's
unconstrained scale. The weights then estimate the posterior probability of each mode found.

The log density is evaluated by :class:`HMMLogDensity`, a vectorised numpy version of the
programs' ``model`` block (nb_hmm.stan and the tempered nb_hmm_ops.stan) on Stan's
unconstrained parameters, thousands of points per second where
:meth:`~pystanprivacy.sampling.stan.StanModel.log_density` evaluates one point per request
(~15 ms). Before it is used, :meth:`HMMLogDensity.check` compares it with
``StanModel.log_density`` at draws of the fit: the two must differ by one constant (the
normalising terms that Stan's ``~`` drops), to 1e-6 in every point; otherwise ``RuntimeError``.

References
----------
.. [1] Foulds, Geumlek, Welling & Chaudhuri (2016), UAI, Sec. 5 and supplement E.
.. [2] Meng & Wong (1996), Statistica Sinica 6 (bridge sampling).
.. [3] Frühwirth-Schnatter (2004), Econometrics Journal 7, Sec. 4 (mixtures and Markov
   switching models: one label copy per mode).
.. [4] Stan Reference Manual 2.35, "Unit simplex" (the stick-breaking transform and its
   Jacobian).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.special import expit, log_expit, logsumexp

from ..._validation import SeedLike, check_int, check_positive
from ...sampling.modes import ModeMasses, mode_masses
from ...sampling.posterior import Posterior
from ...sampling.stacking import ChainModes, chain_modes
from ...sampling.stan import StanModel
from .labels import _permute_arrays

__all__ = [
    "DEFAULT_MIN_LOG_GAP",
    "HMMLogDensity",
    "HMMModes",
    "fit_reference",
    "hmm_mode_masses",
    "laplace_mode_masses",
    "mode_tolerance",
    "nonprivate_mode_masses",
    "ops_mode_masses",
    "select_chains",
    "stick_breaking_free",
]

#: largest difference allowed between HMMLogDensity and Stan's log density, after removing
#: their constant offset, relative to max(1, |log density|)
_MATCH_TOL = 1e-6


def stick_breaking_free(x: np.ndarray) -> np.ndarray:
    """Stan's unconstrained coordinates of simplexes (last axis, K >= 1 values): the
    stick-breaking transform of Stan 2.35, ``y_k = logit(x_k / sum_{i >= k} x_i) + log(K - 1 - k)``
    for k = 0..K-2 (Stan Reference Manual, "Unit simplex")."""
    x = np.asarray(x, dtype=float)
    K = x.shape[-1]
    rest = np.cumsum(x[..., ::-1], axis=-1)[..., ::-1]  # sum_{i >= k} x_i
    z = x[..., : K - 1] / rest[..., : K - 1]
    return np.log(z) - np.log1p(-z) + np.log(K - 1 - np.arange(K - 1))


def _stick_breaking(y: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray]:
    """Simplexes (..., K) from Stan's coordinates (..., K - 1) and the log Jacobian per simplex."""
    out = np.empty((*y.shape[:-1], K))
    log_jac = np.zeros(y.shape[:-1])
    stick = np.ones(y.shape[:-1])
    for k in range(K - 1):
        adj = y[..., k] - math.log(K - 1 - k)
        out[..., k] = stick * expit(adj)
        log_jac += np.log(stick) + log_expit(adj) + log_expit(-adj)
        stick = stick - out[..., k]
    out[..., K - 1] = stick
    return out, log_jac


class HMMLogDensity:
    """The log density of nb_hmm.stan (or, with ``a0`` and ``temperature`` in the data,
    nb_hmm_ops.stan) on Stan's unconstrained scale, Jacobian included, vectorised over points.

    Parameters
    ----------
    data : mapping
        The Stan data of the fit (``NaiveBayesHMM.data`` / ``NaiveBayesHMMOPS.data``).

    Notes
    -----
    A point is ``(A, eta)`` in Stan's order: the K + 1 transition rows' stick-breaking
    coordinates (K - 1 each), then ``eta`` column by column. The value omits the constants of
    the Dirichlet priors (as Stan's ``~`` does); differences between points are exact.
    """

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.R, self.T, self.K = int(data["R"]), int(data["T"]), int(data["K"])
        self.sizes = [int(s) for s in data["feature_size"]]
        self.reference = [int(r) - 1 for r in data["reference"]]
        J = sum(self.sizes)
        counts = np.asarray(data["counts"], dtype=float).reshape(self.T * self.R, J)
        observed = 1.0 - np.asarray(data["heldout"], dtype=float).reshape(-1)
        self.counts = counts * observed[:, None]  # held-out cells contribute nothing
        self.alpha, self.beta = float(data["alpha"]), float(data["beta"])
        self.tempered = "temperature" in data
        self.temperature = float(data.get("temperature", 1.0))
        self.a0 = np.asarray(data["a0"], dtype=float) if self.tempered else None
        self.n_a = (self.K + 1) * (self.K - 1)
        self.dim = self.n_a + (J - len(self.sizes)) * self.K

    def unconstrained(self, A: np.ndarray, eta: np.ndarray) -> np.ndarray:
        """Stan's unconstrained vector of draws: ``A`` (S, K + 1, K), ``eta`` (S, J - D, K)."""
        S = A.shape[0]
        return np.concatenate(
            [stick_breaking_free(A).reshape(S, -1), np.asarray(eta, float).transpose(0, 2, 1).reshape(S, -1)], axis=1
        )

    def _log_simplexes(self, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log phi (M, J, K) from eta (M, J - D, K) (``alr_log_simplexes``) and log theta (the
        truncated map of nb_hmm_ops.stan, or phi itself)."""
        M = eta.shape[0]
        parts, pos = [], 0
        for d, n in enumerate(self.sizes):
            block = eta[:, pos : pos + n - 1]
            y = np.insert(block, self.reference[d], 0.0, axis=1) if n > 1 else np.zeros((M, 1, self.K))
            parts.append(y - logsumexp(y, axis=1, keepdims=True))
            pos += n - 1
        log_phi = np.concatenate(parts, axis=1)
        if not self.tempered:
            return log_phi, log_phi
        out, pos = np.empty_like(log_phi), 0
        for d, n in enumerate(self.sizes):
            a = self.a0[d]
            out[:, pos : pos + n] = np.log(a + (1 - n * a) * np.exp(log_phi[:, pos : pos + n]))
            pos += n
        return log_phi, out

    def _forward(self, E: np.ndarray, log_rho: np.ndarray, log_gamma: np.ndarray) -> np.ndarray:
        """``hmm_forward_total`` per point: E (M, T, R, K), log_rho (M, K), log_gamma (M, K, K)."""
        la = log_rho[:, None, :] + E[:, 0]
        gamma = np.exp(log_gamma)
        for t in range(1, self.T):
            m = la.max(axis=2, keepdims=True)
            la = np.log(np.einsum("mrk,mkj->mrj", np.exp(la - m), gamma)) + m + E[:, t]
        return logsumexp(la, axis=2).sum(axis=1)

    def _batch(self, u: np.ndarray) -> np.ndarray:
        M, K = u.shape[0], self.K
        A, log_jac = _stick_breaking(u[:, : self.n_a].reshape(M, K + 1, K - 1), K)
        eta = u[:, self.n_a :].reshape(M, K, -1).transpose(0, 2, 1)
        log_phi, log_theta = self._log_simplexes(eta)
        with np.errstate(divide="ignore"):
            log_a = np.log(A)
        E = np.einsum("cj,mjk->mck", self.counts, log_theta).reshape(M, self.T, self.R, K)
        dirichlet = (self.alpha - 1) * log_a.sum(axis=(1, 2))
        tt = self.temperature
        if not self.tempered:
            prior = dirichlet + self.beta * log_theta.sum(axis=(1, 2))
            return log_jac.sum(axis=1) + prior + self._forward(E, log_a[:, 0], log_a[:, 1:])
        log_prior = (self.beta - 1) * log_theta.sum(axis=(1, 2)) + dirichlet
        return (
            log_jac.sum(axis=1)
            + log_phi.sum(axis=(1, 2))
            + log_prior / tt
            + self._forward(E / tt, log_a[:, 0] / tt, log_a[:, 1:] / tt)
        )

    def __call__(self, u: np.ndarray, *, batch: int = 256) -> np.ndarray:
        """The log density at points ``u`` (M, P)."""
        u = np.atleast_2d(np.asarray(u, dtype=float))
        if u.shape[1] != self.dim:
            raise ValueError(f"points must have {self.dim} unconstrained coordinates, got shape {u.shape}")
        return np.concatenate([self._batch(u[i : i + batch]) for i in range(0, u.shape[0], batch)])

    def check(self, stan_model: StanModel, data: Mapping[str, Any], points: np.ndarray) -> float:
        """Compare with ``stan_model.log_density`` at ``points`` (a few unconstrained points):
        the difference must be one constant (to 1e-6 relative); returns it. ``RuntimeError``
        otherwise (e.g. a Stan version whose simplex transform differs)."""
        mine = self(points)
        stan, _ = stan_model.log_density(data, unconstrained=points)
        diff = stan - mine
        scale = np.maximum(1.0, np.abs(stan))
        if not np.all(np.isfinite(diff)) or np.max(np.abs(diff - diff[0]) / scale) > _MATCH_TOL:
            raise RuntimeError(
                f"the numpy log density of {stan_model.name} does not match Stan's at the checked points "
                "(their difference is not one constant): the backend's unconstrained coordinates differ"
            )
        return float(diff[0])


@dataclasses.dataclass(frozen=True)
class HMMModes:
    """The modes of an HMM fit and their estimated posterior masses (:func:`hmm_mode_masses`).

    Attributes
    ----------
    modes : ChainModes
        Chains grouped into modes by mean log-likelihood (mode 0: highest).
    masses : ModeMasses
        Per mode: log mass, its error, the weight (``masses.estimate`` says what it estimates).
    permutations : ndarray (chains, K)
        The relabelling of every chain onto its mode's labelling (new state k = old perm[k]).
    seconds : float
        Wall time of the estimate (alignment, log densities, bridge sampling).
    """

    modes: ChainModes
    masses: ModeMasses
    permutations: np.ndarray
    seconds: float

    def chain_weights(self) -> np.ndarray:
        """Per-chain weights (mode weight split over its chains) for
        :func:`~pystanprivacy.sampling.stacking.stacked_predictive`: a posterior (mode-mass
        weighted) estimate."""
        return self.masses.chain_weights(self.modes.labels)


def _align_within(theta: np.ndarray, members: np.ndarray, ref: int) -> dict[int, np.ndarray]:
    """Per chain of a mode, the permutation of its states onto chain ``ref``'s (Hungarian on the
    L1 distance of the chains' mean emission probabilities, as :func:`align_states`)."""
    ref_mean = theta[ref].mean(axis=0)
    out = {}
    for c in members:
        cost = np.abs(ref_mean[:, None, :] - theta[c].mean(axis=0)[None, :, :]).sum(axis=2)
        out[int(c)] = linear_sum_assignment(cost)[1]
    return out


def _check_data_matches_fit(
    posterior: Posterior, density: HMMLogDensity, flat: np.ndarray, pick: np.ndarray, found: ChainModes, thin: int
) -> None:
    """The log density of ``data`` at draws of the fit must be the sampler's own ``lp__`` of
    those draws up to one constant (relabelling the states changes neither): data other than the
    fit's (another reference value, held-out mask or temperature) reads the same unconstrained
    draws as other parameters, and the masses would be of another density. ``RuntimeError``
    otherwise; skipped when the fit kept no ``lp__``."""
    try:
        lp = np.asarray(posterior.sample_stat("lp"), dtype=float)[:, ::thin]
    except KeyError:
        return
    lp_flat = np.concatenate([lp[found.members(m)].reshape(-1) for m in range(found.n_modes)])
    diff = density(flat[pick]) - lp_flat[pick]
    scale = np.maximum(1.0, np.abs(lp_flat[pick]))
    if not np.all(np.isfinite(diff)) or np.max(np.abs(diff - diff[0]) / scale) > _MATCH_TOL:
        raise RuntimeError(
            "the data given do not match the fit: the log density at its draws is not the sampler's lp__ up to "
            "one constant (another reference value, held-out mask or temperature than the fit's?)"
        )


def hmm_mode_masses(
    posterior: Posterior,
    *,
    data: Mapping[str, Any],
    stan_model: StanModel,
    tol: float,
    seed: SeedLike = None,
    thin: int = 1,
    n_check: int = 3,
) -> HMMModes:
    """Group the chains of an HMM fit into modes and estimate each mode's posterior mass.

    Parameters
    ----------
    posterior : Posterior
        A fit of nb_hmm.stan or nb_hmm_ops.stan (draws of A, eta, theta, log_lik), best from
        dispersed starts.
    data : mapping
        The Stan data of that fit (with the reference values the fit used).
    stan_model : StanModel
        The compiled program of the fit (its log density checks :class:`HMMLogDensity`).
    tol : float
        Chains whose mean log-likelihoods differ by at most ``tol`` are one mode
        (:func:`~pystanprivacy.sampling.stacking.chain_modes`).
    seed : int, Generator or None
        Seed of the bridge sampler's proposal draws.
    thin : int, default 1
        Use every ``thin``-th draw of each chain.
    n_check : int, default 3
        Draws at which the numpy log density is compared with Stan's.

    Returns
    -------
    HMMModes

    Notes
    -----
    Assumptions as in :mod:`pystanprivacy.sampling.modes`: every mode's chains explored it (no
    label switching within a chain), the modes are far apart, and each mode has the K! label
    copies of a mode without symmetry (its states distinct).
    """
    if not isinstance(posterior, Posterior):
        raise TypeError(f"posterior must be a Posterior of an HMM fit, got {type(posterior).__name__}")
    if not isinstance(stan_model, StanModel):
        raise TypeError(f"stan_model must be a StanModel, got {type(stan_model).__name__}")
    tol = check_positive(tol, "tol")
    thin = check_int(thin, "thin", minimum=1)
    n_check = check_int(n_check, "n_check", minimum=1)
    start = time.perf_counter()
    density = HMMLogDensity(data)
    theta = posterior.draws("theta", combine_chains=False)  # (C, N, K, J)
    A = posterior.draws("A", combine_chains=False)[:, ::thin]
    eta = posterior.draws("eta", combine_chains=False)[:, ::thin]
    log_lik = posterior.draws("log_lik", combine_chains=False)
    C = A.shape[0]
    found = chain_modes(log_lik.mean(axis=1), tol=tol)
    perms = np.tile(np.arange(density.K), (C, 1))
    groups = []
    for m in range(found.n_modes):
        members = found.members(m)
        ref = int(members[np.argmax(log_lik[members].mean(axis=1))])
        for c, perm in _align_within(theta, members, ref).items():
            perms[c] = perm
        u = []
        for c in members:
            eta_c, a_c, _, _ = _permute_arrays(eta[c].transpose(0, 2, 1), A[c], None, None, perms[c])
            u.append(density.unconstrained(a_c, eta_c.transpose(0, 2, 1)))
        groups.append(np.stack(u))  # (chains in mode, N, P)
    flat = np.concatenate([g.reshape(-1, density.dim) for g in groups])
    pick = np.linspace(0, flat.shape[0] - 1, min(n_check, flat.shape[0])).astype(int)
    density.check(stan_model, data, flat[pick])
    _check_data_matches_fit(posterior, density, flat, pick, found, thin)
    masses = mode_masses(groups, density, seed=seed)
    return HMMModes(modes=found, masses=masses, permutations=perms, seconds=time.perf_counter() - start)


#: smallest log mass gap between the top mode and the next one that the OPS HMM's default
#: rule (``select="top-mode"``) accepts, after subtracting 3 standard errors of the estimated
#: gap: every other mode found then holds less than e^-20 (2e-9) of the top mode's tempered mass
DEFAULT_MIN_LOG_GAP = 20.0

#: chains whose mean log-likelihoods differ by at most this many standard errors of their
#: difference are one mode (the rule's grouping, :func:`mode_tolerance`)
MODE_TOL_SE = 5.0


def mode_tolerance(log_lik: np.ndarray) -> float:
    """The grouping tolerance of the OPS rule: ``MODE_TOL_SE`` times sqrt(2) times the largest
    Monte Carlo standard error of a chain's mean log-likelihood (its sd over the square root of
    its bulk ESS). Two chains of one mode differ by about sqrt(2) such errors; far-apart modes by
    many. Too small a tolerance splits a mode (the pieces then have close masses and the rule
    refuses); too large merges modes (the gate on the merged chains then refuses)."""
    from ...sampling.posterior import _arviz

    az = _arviz()
    se = []
    for chain in np.asarray(log_lik, dtype=float):
        sd = float(chain.std())
        ess = float(az.ess(chain[None, :], method="bulk")) if sd > 0 else float(chain.size)
        se.append(sd / math.sqrt(max(ess, 1.0)))
    return max(MODE_TOL_SE * math.sqrt(2.0) * max(se), 1e-8)


def select_chains(posterior: Posterior, chains: np.ndarray) -> Posterior:
    """A Posterior of only the given chains (same settings, ``chains`` fewer), for judging one
    mode's chains with the convergence checks."""
    from ...sampling.backends.base import RawFit
    from ...sampling.posterior import _STAT_NAMES

    idx = np.asarray(chains, dtype=int)
    raw_name = {v: k for k, v in _STAT_NAMES.items()}
    sampler = {}
    for nice, raw in raw_name.items():
        try:
            sampler[raw] = np.asarray(posterior.sample_stat(nice), dtype=float)[idx]
        except KeyError:
            continue
    variables = {name: posterior.draws(name, combine_chains=False)[idx] for name in posterior.variables}
    out = Posterior(
        RawFit(variables=variables, sampler=sampler),
        model=posterior.model,
        backend=posterior.backend,
        settings=dataclasses.replace(posterior.settings, chains=int(idx.size), init=None),
        elapsed=posterior.elapsed,
    )
    out.privacy = posterior.privacy
    return out


def fit_reference(posterior: Posterior, feature_sizes: Any, *, a0: Any = None) -> list[int]:
    """The 0-based reference value per feature of the ``eta`` coordinates a fit used, read off
    its first draw: the value r with ``eta = log theta_j - log theta_r`` (j != r) for a Laplace
    or non-private fit (nb_hmm.stan); with ``a0`` (the truncation points per feature of an OPS
    fit, nb_hmm_ops.stan), of ``phi = (theta - a0_d) / (1 - K_d a0_d)`` instead, whose
    coordinates the OPS program's eta are. ``ValueError`` when no value fits (e.g. an OPS fit
    read without its ``a0``)."""
    theta = posterior.draws("theta")[0]  # (K, J)
    eta = posterior.draws("eta")[0]  # (J - D, K)
    sizes = [int(s) for s in feature_sizes]
    a0 = None if a0 is None else np.asarray(a0, dtype=float).reshape(-1)
    if a0 is not None and a0.shape != (len(sizes),):
        raise ValueError(f"a0 must hold one truncation point per feature ({len(sizes)}), got shape {a0.shape}")
    # theta - a0 loses digits where phi is tiny: an OPS fit's match is checked to 1e-4
    # (hmm_mode_masses then checks the data against the fit's lp__, which a wrong reference fails)
    rel = 1e-6 if a0 is None else 1e-4
    out, pos, pos_eta = [], 0, 0
    for d, n in enumerate(sizes):
        x = theta[:, pos : pos + n]
        if a0 is not None:
            x = (x - a0[d]) / (1.0 - n * a0[d])
        with np.errstate(divide="ignore", invalid="ignore"):
            log_t = np.log(x)
        block = eta[pos_eta : pos_eta + n - 1].T  # (K, n - 1)
        errors = [np.max(np.abs(np.delete(log_t, r, axis=1) - log_t[:, [r]] - block)) for r in range(n)]
        errors = [e if np.isfinite(e) else np.inf for e in errors]
        best = int(np.argmin(errors))
        if errors[best] > rel * max(1.0, float(np.max(np.abs(block)))):
            program = "nb_hmm.stan" if a0 is None else "nb_hmm_ops.stan with these a0"
            raise ValueError(f"no reference value of feature {d} matches the fit's eta: not a fit of {program}")
        out.append(best)
        pos += n
        pos_eta += n - 1
    return out


def laplace_mode_masses(
    model: Any,
    posterior: Posterior,
    release: Any,
    *,
    heldout: Any = None,
    tol: float,
    seed: SeedLike = None,
    thin: int = 1,
) -> HMMModes:
    """:func:`hmm_mode_masses` of a :meth:`NaiveBayesHMM.fit` (post-processing of the
    release): the Stan data rebuilt from the release, ``heldout`` and the fit's reference
    values (:func:`fit_reference`).

    Parameters
    ----------
    model : NaiveBayesHMM
        The model that made the fit.
    posterior : Posterior
        ``model.fit(release, heldout=heldout, ...)``, best with ``init="dispersed"``.
    release : Release
        The released counts the fit saw.
    heldout : array (R, T) of bool, optional
        The fit's held-out cells.
    tol, seed, thin
        As in :func:`hmm_mode_masses`.
    """
    values, layout = model._check_release(release)
    data = model.data(values, layout, heldout, fit_reference(posterior, layout.feature_sizes))
    return hmm_mode_masses(posterior, data=data, stan_model=model.stan_model, tol=tol, seed=seed, thin=thin)


def nonprivate_mode_masses(
    model: Any,
    posterior: Posterior,
    counts: Any,
    *,
    feature_sizes: Any = None,
    heldout: Any = None,
    tol: float,
    seed: SeedLike = None,
    thin: int = 1,
) -> HMMModes:
    """:func:`hmm_mode_masses` of a :meth:`NaiveBayesHMM.fit_nonprivate` fit of ``counts``
    (the named non-private baseline): the Stan data rebuilt from the exact counts, ``heldout``
    and the fit's reference values (:func:`fit_reference`). Arguments as in
    :func:`laplace_mode_masses`."""
    from .counts import CountLayout

    layout, exact = CountLayout.from_counts(counts, feature_sizes)
    data = model.data(exact, layout, heldout, fit_reference(posterior, layout.feature_sizes))
    return hmm_mode_masses(posterior, data=data, stan_model=model.stan_model, tol=tol, seed=seed, thin=thin)


def ops_mode_masses(
    model: Any,
    posterior: Posterior,
    counts: Any,
    *,
    epsilon: float,
    feature_sizes: Any = None,
    heldout: Any = None,
    tol: float,
    seed: SeedLike = None,
    thin: int = 1,
) -> HMMModes:
    """:func:`hmm_mode_masses` of a :meth:`NaiveBayesHMMOPS.sample` run kept with
    ``keep_posterior=True``: the masses of the TEMPERED posterior (the OPS target), from the
    program's data rebuilt from the exact counts, ``epsilon`` (its temperature), ``heldout`` and
    the run's reference values (:func:`fit_reference` with the model's ``a0``). A study of the
    non-private run (as ``select="top-mode"`` computes inside the mechanism), never a release.

    Parameters
    ----------
    model : NaiveBayesHMMOPS
        The model that ran the sampler.
    posterior : Posterior
        ``result.posterior`` of that run (all its chains).
    counts : array (R, T, J) or WarLogCounts
        The exact counts the run saw.
    epsilon : float
        The run's ε.
    feature_sizes, heldout
        As given to :meth:`NaiveBayesHMMOPS.sample`.
    tol, seed, thin
        As in :func:`hmm_mode_masses`.
    """
    from .counts import CountLayout

    layout, exact = CountLayout.from_counts(counts, feature_sizes)
    reference = fit_reference(posterior, layout.feature_sizes, a0=model.a0(layout.feature_sizes))
    data = model.data(exact, layout, heldout, epsilon, reference)
    return hmm_mode_masses(posterior, data=data, stan_model=model.stan_model, tol=tol, seed=seed, thin=thin)
