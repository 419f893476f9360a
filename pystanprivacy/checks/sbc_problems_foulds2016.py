"""SBC checks of Foulds et al.'s (2016) naive-Bayes HMM (:mod:`pystanprivacy.models.foulds2016_hmm`).

Both checks draw a tiny HMM from the model's prior (:class:`HMMSimulation`): K = 2 states,
``regions`` chains of ``months`` cells, ``entries`` log entries per cell, features of sizes
(2, 3); transition rows A[k] ~ Dirichlet(α = 1) (row 1: the initial state), emissions
θ^(k,d) ~ Dirichlet(β = 1); state paths from A; every entry's features from its cell's state.

Label switching. The posterior is symmetric in the state labels, so a label-dependent quantity
(θ[1, 1] of "state 1") is not identified and its rank means nothing. The checks rank
label-invariant functions of the parameters, for which SBC holds as for any function of θ
(Talts et al. 2018; Modrák et al. 2023 on test quantities): the smaller and the larger of the two
states' probabilities of value 1 of feature 1 (``theta_min``, ``theta_max``), and the sum of the
two states' probabilities of staying (``A_stay``).

``foulds2016/nb_hmm`` (Laplace, E.1) fits the released counts proj_{≥0}(n + Laplace(2/ε_d)) as
if they were exact counts (nb_hmm.stan: "real (noisy) counts work unchanged"): the paper's
plug-in posterior, which does not model the noise. It is a naive variant: SBC is expected to fail
it where the noise is large against the counts' multinomial spread.

``foulds2016/nb_hmm_ops`` (OPS) releases one draw of the tempered joint with truncated
Dirichlets (:meth:`NaiveBayesHMMOPS.sample <pystanprivacy.models.foulds2016_hmm.NaiveBayesHMMOPS.sample>`,
``allow_unconverged=True``, its random relabelling included). The tempered target has no closed
form: the reference is an independent run of the same program on the same exact counts (its
own seed and EM start), thinned to L draws. This checks the release path (gate, one-draw
choice, relabelling) against a long run of the target, not the program's target itself.

References
----------
.. [1] J. Foulds, J. Geumlek, M. Welling and K. Chaudhuri (2016), "On the theory and practice of
   privacy-preserving Bayesian data analysis", UAI. Eq. 6-10, Sec. 4-5, supplement E.
.. [2] M. Modrák et al. (2023), "Simulation-based calibration checking for Bayesian computation:
   the choice of test quantities shapes sensitivity", Bayesian Analysis.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np

from .._validation import check_epsilon, check_int
from .sbc import Replicates, Sampler, SBCProblem, _Seeded

__all__ = ["HMMSimulation", "NaiveBayesHMMSBC", "NaiveBayesHMMOPSSBC"]

K = 2
FEATURE_SIZES = (2, 3)
#: the release run of the OPS check: chains and post-warm-up draws per chain
RELEASE_CHAINS = 2
RELEASE_DRAWS = 200


class HMMSimulation(SBCProblem):
    """Prior draw and counts of the tiny HMM shared by the two checks.

    Parameters
    ----------
    regions, months : int
        Chains and timesteps per chain (the grid of cells).
    entries : int
        Log entries per cell.
    epsilon : float
        Total ε of the release (split equally over the two features).
    """

    batched: ClassVar[bool] = False
    default_epsilon: ClassVar[float] = 5.0

    def __init__(self, *, regions: int = 2, months: int = 8, entries: int = 20, epsilon: float | None = None) -> None:
        self.regions = check_int(regions, "regions", minimum=1)
        self.months = check_int(months, "months", minimum=1)
        self.entries = check_int(entries, "entries", minimum=1)
        self.epsilon = check_epsilon(self.default_epsilon if epsilon is None else epsilon)
        self.model = self._model()

    def _model(self) -> Any:
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        return {
            "regions": self.regions,
            "months": self.months,
            "entries": self.entries,
            "epsilon": self.epsilon,
            "states": K,
            "feature_sizes": list(FEATURE_SIZES),
            "model": self.model.model_name,
            "alpha": self.model.alpha,
            "beta": self.model.beta,
        }

    def parameter_names(self) -> list[str]:
        return ["theta_min", "theta_max", "A_stay"]

    def simulate(self, rng: np.random.Generator) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """(truth {"theta": (K, J), "A": (K + 1, K)}, counts (regions, months, J)) from the prior."""
        m = self.model
        A = rng.dirichlet(np.full(K, m.alpha), size=K + 1)
        theta = np.concatenate([rng.dirichlet(np.full(s, m.beta), size=K) for s in FEATURE_SIZES], axis=1)
        z = np.empty((self.regions, self.months), dtype=np.int64)
        for r in range(self.regions):
            z[r, 0] = rng.choice(K, p=A[0])
            for t in range(1, self.months):
                z[r, t] = rng.choice(K, p=A[z[r, t - 1] + 1])
        offsets = np.cumsum((0, *FEATURE_SIZES))
        counts = np.concatenate(
            [
                rng.multinomial(self.entries, theta[z][..., offsets[d] : offsets[d + 1]])
                for d in range(len(FEATURE_SIZES))
            ],
            axis=-1,
        )
        return {"theta": theta, "A": A}, counts

    @staticmethod
    def quantities(theta: np.ndarray, A: np.ndarray) -> np.ndarray:
        """Label-invariant quantities of draws theta (..., K, J) and A (..., K + 1, K): (..., 3)."""
        t = theta[..., :, 0]
        stay = A[..., 1, 0] + A[..., 2, 1]
        return np.stack([t.min(axis=-1), t.max(axis=-1), stay], axis=-1)


class NaiveBayesHMMSBC(HMMSimulation):
    """foulds2016/nb_hmm: the Laplace release of the counts, the plug-in fit (a naive variant)."""

    name = "foulds2016/nb_hmm"
    description = (
        "K = 2 HMM from its prior (A rows, emissions ~ Dirichlet(1)), features of sizes (2, 3), entries per "
        "cell; counts + Laplace(2/epsilon_d), projected; the paper's posterior, which treats the noisy "
        "counts as exact (plug-in)"
    )

    def _model(self) -> Any:
        from ..models.foulds2016_hmm import NaiveBayesHMM

        return NaiveBayesHMM(K)

    def replicate(self, count: int, *, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        refs, draws, divergences = [], [], 0
        for _ in range(count):
            truth, counts = self.simulate(rng)
            with _Seeded():
                release = type(self.model).release(
                    counts, epsilon=self.epsilon, feature_sizes=FEATURE_SIZES, accountant=None, seed=rng
                )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                post = self.model.fit(release, seed=rng, **sampler.kwargs())
            divergences += int(post.num_divergences)
            refs.append(self.quantities(truth["theta"], truth["A"]))
            draws.append(
                self.quantities(
                    np.asarray(post.draws("theta", combine_chains=False), dtype=float),
                    np.asarray(post.draws("A", combine_chains=False), dtype=float),
                )
            )
        return Replicates(np.stack(refs), np.stack(draws), notes={"divergences": divergences})


class NaiveBayesHMMOPSSBC(HMMSimulation):
    """foulds2016/nb_hmm_ops: the released OPS draw ranked among an independent run of its target."""

    name = "foulds2016/nb_hmm_ops"
    kind = "ops"
    description = (
        "K = 2 HMM data as for foulds2016/nb_hmm; one OPS draw (truncated Dirichlets, temperature T(epsilon), "
        "random relabelling) ranked, by label-invariant quantities, among an independent run of the same "
        "tempered target"
    )

    def _model(self) -> Any:
        from ..models.foulds2016_hmm import NaiveBayesHMMOPS

        return NaiveBayesHMMOPS(K)

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "temperature": self.model.temperature(self.epsilon, FEATURE_SIZES),
            "release_run": {"chains": RELEASE_CHAINS, "draws": RELEASE_DRAWS, "allow_unconverged": True},
        }

    def replicate(self, count: int, *, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        refs, draws, refused, divergences = [], [], 0, 0
        for _ in range(count):
            _, counts = self.simulate(rng)
            with _Seeded(), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                out = self.model.sample(
                    counts,
                    epsilon=self.epsilon,
                    feature_sizes=FEATURE_SIZES,
                    seed=rng,
                    chains=RELEASE_CHAINS,
                    warmup=sampler.warmup,
                    draws=RELEASE_DRAWS,
                    allow_unconverged=True,
                )
                ref = self.model.sample(
                    counts,
                    epsilon=self.epsilon,
                    feature_sizes=FEATURE_SIZES,
                    seed=rng,
                    allow_unconverged=True,
                    keep_posterior=True,
                    **sampler.kwargs(),
                )
            refused += int(bool(out.problems))
            post = ref.posterior
            divergences += int(post.num_divergences)
            refs.append(self.quantities(out.params["theta"], out.params["A"]))
            draws.append(
                self.quantities(
                    np.asarray(post.draws("theta", combine_chains=False), dtype=float),
                    np.asarray(post.draws("A", combine_chains=False), dtype=float),
                )
            )
        return Replicates(np.stack(refs), np.stack(draws), notes={"divergences": divergences, "gate_problems": refused})
