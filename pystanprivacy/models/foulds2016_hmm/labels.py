"""State labels of HMM draws: the posterior is invariant to relabelling the states, so the
chains' labels are aligned (:func:`align_states`) before per-state summaries and convergence
checks (:func:`convergence_problems`), and estimated states are matched to known ones
(:func:`match_states`, :func:`state_agreement`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from ...sampling.posterior import Posterior, Thresholds

__all__ = [
    "HMMDraws",
    "align_states",
    "convergence_problems",
    "label_invariant_draws",
    "match_states",
    "state_agreement",
]


@dataclasses.dataclass
class HMMDraws:
    """Draws of an HMM fit with state labels aligned across chains.

    Arrays have a leading draw axis S = chains * draws (chain-major); ``chain`` gives each
    draw's chain. ``A[:, 0]`` is the dummy initial state's row, ``A[:, k + 1]`` state k's.
    ``state_prob`` is ``None`` for OPS fits (which output only z).
    """

    theta: np.ndarray  # (S, K, J)
    A: np.ndarray  # (S, K + 1, K)
    log_lik: np.ndarray  # (S,)
    state_prob: np.ndarray | None  # (S, R, T, K)
    z: np.ndarray | None  # (S, R, T), 0-based states
    chain: np.ndarray  # (S,)
    permutations: np.ndarray  # (chains, K): aligned label k = chain's label perm[k]

    @property
    def n_states(self) -> int:
        return self.theta.shape[1]

    def modal_states(self) -> np.ndarray:
        """Most frequent state of every cell over the draws (the paper's summary after
        burn-in): shape (R, T), 0-based. Needs ``z``."""
        if self.z is None:
            raise ValueError("the fit has no state draws")
        counts = np.stack([(self.z == k).sum(axis=0) for k in range(self.n_states)], axis=-1)
        return counts.argmax(axis=-1)

    def mean_state_prob(self) -> np.ndarray:
        """Posterior probability of every state per cell: (R, T, K)."""
        if self.state_prob is None:
            raise ValueError("the fit has no state probabilities (OPS fits output only z)")
        return self.state_prob.mean(axis=0)

    def mean_theta(self) -> np.ndarray:
        """Posterior mean emission probabilities: (K, J)."""
        return self.theta.mean(axis=0)

    def occupancy(self) -> np.ndarray:
        """Share of cells in each state, averaged over draws: (K,)."""
        if self.z is None:
            raise ValueError("the fit has no state draws")
        return np.array([(self.z == k).mean() for k in range(self.n_states)])

    def relabel(self, perm: Sequence[int]) -> HMMDraws:
        """New labels: new state k is old state ``perm[k]``."""
        return _permute(self, np.asarray(perm, dtype=int))


def _permute_arrays(
    theta: np.ndarray, A: np.ndarray, state_prob: np.ndarray | None, z: np.ndarray | None, perm: np.ndarray
) -> tuple:
    """Relabel draws (leading draw axis): new state k is old state ``perm[k]``; z 0-based."""
    inv = np.argsort(perm)
    A = np.concatenate([A[:, :1, perm], A[:, 1:][:, perm][:, :, perm]], axis=1)
    return (theta[:, perm], A, None if state_prob is None else state_prob[..., perm], None if z is None else inv[z])


def _permute(d: HMMDraws, perm: np.ndarray) -> HMMDraws:
    K = d.n_states
    if sorted(perm.tolist()) != list(range(K)):
        raise ValueError(f"perm must be a permutation of 0..{K - 1}, got {perm.tolist()}")
    theta, A, sp, z = _permute_arrays(d.theta, d.A, d.state_prob, d.z, perm)
    return HMMDraws(
        theta=theta, A=A, log_lik=d.log_lik, state_prob=sp, z=z, chain=d.chain, permutations=d.permutations[:, perm]
    )


def align_states(posterior: Posterior) -> HMMDraws:
    """Draws of an HMM fit with the state labels of every chain matched to one reference
    chain (the one with the highest mean log density), by the Hungarian algorithm on the
    L1 distance between the chains' mean emission probabilities.

    The posterior is invariant to relabelling the states, so chains settle in different
    labelings; aligning them makes per-state summaries and diagnostics meaningful.
    (Label switching *within* a chain is not undone; it shows up as poor R-hat/ESS.)
    """
    if not isinstance(posterior, Posterior):
        raise TypeError(f"posterior must be a Posterior of an HMM fit, got {type(posterior).__name__}")
    theta = posterior.draws("theta", combine_chains=False)
    A = posterior.draws("A", combine_chains=False)
    log_lik = posterior.draws("log_lik", combine_chains=False)
    sp = posterior.draws("state_prob", combine_chains=False) if "state_prob" in posterior.variables else None
    z = posterior.draws("z", combine_chains=False) if "z" in posterior.variables else None
    if sp is not None and sp.size == 0:
        sp = None
    if z is not None and z.size == 0:
        z = None
    n_chains, _, _K, _ = theta.shape
    try:
        lp = posterior.sample_stat("lp")
        ref = int(np.argmax(lp.mean(axis=1)))
    except KeyError:
        ref = 0
    ref_mean = theta[ref].mean(axis=0)
    out_t, out_a, out_sp, out_z, perms = [], [], [], [], []
    for c in range(n_chains):
        cost = np.abs(ref_mean[:, None, :] - theta[c].mean(axis=0)[None, :, :]).sum(axis=2)
        _, perm = linear_sum_assignment(cost)
        t_c, a_c, sp_c, z_c = _permute_arrays(
            theta[c],
            A[c],
            None if sp is None else sp[c],
            None if z is None else (z[c].astype(np.int64) - 1),
            perm,
        )
        out_t.append(t_c), out_a.append(a_c), out_sp.append(sp_c), out_z.append(z_c), perms.append(perm)
    n_draws = theta.shape[1]
    return HMMDraws(
        theta=np.concatenate(out_t),
        A=np.concatenate(out_a),
        log_lik=log_lik.reshape(-1),
        state_prob=None if sp is None else np.concatenate(out_sp),
        z=None if z is None else np.concatenate(out_z),
        chain=np.repeat(np.arange(n_chains), n_draws),
        permutations=np.array(perms),
    )


def match_states(estimated: np.ndarray, truth: np.ndarray, n_states: int | None = None) -> np.ndarray:
    """The relabelling of ``estimated`` states (0-based, any shape) that agrees best with
    ``truth`` (Hungarian algorithm on the confusion matrix): returns ``perm`` with
    ``perm[estimated]`` the matched labels."""
    est = np.asarray(estimated, dtype=int).ravel()
    tru = np.asarray(truth, dtype=int).ravel()
    if est.shape != tru.shape:
        raise ValueError(
            f"estimated and truth must have the same shape, got {np.shape(estimated)} and {np.shape(truth)}"
        )
    k = max(int(est.max(initial=0)), int(tru.max(initial=0))) + 1
    k = max(k, n_states or 0)
    confusion = np.zeros((k, k))
    np.add.at(confusion, (est, tru), 1)
    rows, cols = linear_sum_assignment(-confusion)
    perm = np.empty(k, dtype=int)
    perm[rows] = cols
    return perm


def state_agreement(estimated: np.ndarray, truth: np.ndarray) -> float:
    """Share of cells whose estimated state equals the true one after the best relabelling
    (:func:`match_states`)."""
    perm = match_states(estimated, truth)
    return float(np.mean(perm[np.asarray(estimated, dtype=int)] == np.asarray(truth, dtype=int)))


def label_invariant_draws(draws: HMMDraws) -> dict[str, np.ndarray]:
    """Quantities that do not change when the states are relabelled, per draw (leading
    draw axis S): ``log_lik`` and ``occupancy``, the share of cells in each state sorted
    in decreasing order (from the state probabilities, or from z for OPS fits).

    Their R-hat and ESS judge the chains without any label alignment: chains in different
    modes differ in them, label switching does not."""
    if draws.state_prob is not None:
        occ = draws.state_prob.mean(axis=(1, 2))  # (S, K)
    elif draws.z is not None:
        occ = np.stack([(draws.z == k).mean(axis=(1, 2)) for k in range(draws.n_states)], axis=-1)
    else:
        raise ValueError("the fit has neither state probabilities nor state draws")
    return {"log_lik": draws.log_lik, "occupancy": -np.sort(-occ, axis=1)}


def convergence_problems(
    posterior: Posterior,
    aligned: HMMDraws | None = None,
    thresholds: Thresholds | None = None,
    *,
    quantities: str = "aligned",
) -> list[str]:
    """:meth:`Posterior.check` of an HMM fit, plus the sampler's divergences and tree-depth
    hits.

    ``quantities="aligned"`` (default; the OPS gate): label-aligned theta and A, log_lik
    and the sorted state occupancy (:func:`label_invariant_draws`). ``"invariant"``: only
    the label-invariant log_lik and sorted occupancy -- whether the chains found the same
    mode, which is what a summary that is itself label-invariant (or aligned afterwards)
    needs; per-state theta may still mix slowly inside that mode.
    """
    if quantities not in ("aligned", "invariant"):
        raise ValueError(f"quantities must be 'aligned' or 'invariant', got {quantities!r}")
    aligned = aligned if aligned is not None else align_states(posterior)
    chains, n = posterior.num_chains, posterior.num_draws
    variables = {k: v.reshape(chains, n, *v.shape[1:]) for k, v in label_invariant_draws(aligned).items()}
    if quantities == "aligned":
        variables["theta"] = aligned.theta.reshape(chains, n, *aligned.theta.shape[1:])
        variables["A"] = aligned.A.reshape(chains, n, *aligned.A.shape[1:])
    view = posterior.with_draws(variables)
    return view.check(thresholds)
