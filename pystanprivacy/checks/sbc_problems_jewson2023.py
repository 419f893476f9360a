"""OPS checks of Jewson, Ghalebikesabi & Holmes' (2023) βD-Bayes models (:mod:`pystanprivacy.models.jewson2023`).

What is checked. A βD model releases ONE draw of the βD generalised posterior
π(θ | D) ∝ π(θ) exp{−Σ_i l^(β)(D_i, f(·; θ))} (Eq. 3-4), run as the library runs it
(:meth:`~pystanprivacy.models.jewson2023.GatedOPS.try_sample_one`: NUTS, the convergence gate,
one (chain, iteration) chosen uniformly; ``allow_unconverged=True`` so every data set gives a
draw and the check sees the sampler as it ran, the gate's refusals counted in the notes). The
target has no closed form, so the reference is an independent sampler of the same target: a
separate NUTS run of the same Stan program on the same data (:meth:`generalised_posterior
<pystanprivacy.models.jewson2023._BetaDModel.generalised_posterior>` at the same ε, so the same
β) with its own seed, thinned to L draws. If the released draw comes from the target, its rank
among those L draws is uniform.

So this checks the release path (the βD loss the release calibrates from ε, the short release
run, the gate, the one-draw choice) against a long run of the same target. It does not check the
βD target itself: both sides share the Stan program, so an error in the loss would be on both
sides. Nor is it a classical SBC of θ: the βD posterior is not the Bayesian posterior of the
simulation's prior and likelihood (it replaces the log-likelihood by the β-divergence loss, which
is why one draw is private), so the rank of a θ drawn from the prior among βD draws is not
uniform, and is not expected to be. Data are simulated from the model with θ from its prior
only to give realistic data sets.

Test quantities. Logistic and linear regression: the coefficients (and σ²). The networks are
invariant under permutations and sign flips of the hidden units, so the check ranks what does
not depend on the labels: the network's output at three public reference inputs
(:func:`~pystanprivacy.models.jewson2023.reference_inputs`; and σ² for regression).

References
----------
.. [1] J. Jewson, S. Ghalebikesabi and C. Holmes (2023), "Differentially private statistical
   inference through β-divergence one posterior sampling", NeurIPS. Eq. 2-4, Theorem 1, Sec. 5.
.. [2] S. Talts et al. (2018), arXiv:1804.06788 (rank statistics of a draw among L draws).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np

from .._validation import check_epsilon, check_int
from .sbc import Replicates, Sampler, SBCProblem, _Seeded

__all__ = [
    "BetaDOPSSBC",
    "LogisticBetaDSBC",
    "LinearRegressionBetaDSBC",
    "NNClassifierBetaDSBC",
    "NNRegressionBetaDSBC",
]

#: the release run of every check: chains and post-warm-up draws per chain (warm-up: the check's)
RELEASE_CHAINS = 2
RELEASE_DRAWS = 200
#: public reference inputs at which the networks' outputs are ranked
N_REFERENCE = 3


class BetaDOPSSBC(SBCProblem):
    """The released βD draw ranked among draws of an independent run of its target.

    Parameters
    ----------
    n : int
        Records per data set.
    epsilon : float
        ε of the release (it fixes β).
    """

    kind: ClassVar[str] = "ops"
    batched: ClassVar[bool] = False
    default_epsilon: ClassVar[float] = 1.0
    features: ClassVar[int] = 1

    def __init__(self, *, n: int = 100, epsilon: float | None = None) -> None:
        self.n = check_int(n, "n", minimum=2)
        self.epsilon = check_epsilon(self.default_epsilon if epsilon is None else epsilon)
        self.model = self._model()
        self.beta = self.model.beta(self.epsilon)  # refuses an unreachable epsilon here

    def _model(self) -> Any:
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "epsilon": self.epsilon,
            "beta": self.beta,
            "model": self.model.model_name,
            "release_run": {"chains": RELEASE_CHAINS, "draws": RELEASE_DRAWS, "allow_unconverged": True},
            "reference": "an independent NUTS run of the same program at the same data (generalised_posterior)",
        }

    def simulate(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """One data set (X, y)."""
        raise NotImplementedError

    def quantities(self, params: dict[str, np.ndarray]) -> np.ndarray:
        """The ranked quantities of draws ``params`` (each with a leading draw axis): (S, P)."""
        raise NotImplementedError

    def replicate(self, count: int, *, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        m = self.model
        names = [name for name, _ in m.layout(self.features)]
        refs, draws, refused, divergences = [], [], 0, 0
        for _ in range(count):
            X, y = self.simulate(rng)
            with _Seeded(), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                out = m.try_sample_one(
                    X,
                    y,
                    epsilon=self.epsilon,
                    seed=rng,
                    chains=RELEASE_CHAINS,
                    warmup=sampler.warmup,
                    draws=RELEASE_DRAWS,
                    allow_unconverged=True,
                )
                post = m.generalised_posterior(X, y, epsilon=self.epsilon, seed=rng, **sampler.kwargs())
            refused += int(bool(out.problems))
            divergences += int(post.num_divergences)
            released = {k: np.asarray(v, dtype=float)[None] for k, v in out.params.items()}
            refs.append(self.quantities(released)[0])
            by_chain = [
                self.quantities({k: np.asarray(post.draws(k, combine_chains=False), dtype=float)[c] for k in names})
                for c in range(post.num_chains)
            ]
            draws.append(np.stack(by_chain))
        return Replicates(np.stack(refs), np.stack(draws), notes={"divergences": divergences, "gate_problems": refused})


class LogisticBetaDSBC(BetaDOPSSBC):
    """jewson2023/logistic: an intercept and one feature; θ ~ N(0, 9 I), y ~ Bernoulli(logit⁻¹(Xθ))."""

    name = "jewson2023/logistic"
    features = 2
    description = (
        "theta ~ N(0, 9 I); X = [1, x], x ~ N(0, 1) clipped to [-4, 4] scaled to [0, 1]; y ~ Bernoulli("
        "logit^-1(X theta)); one released beta-D draw (OPS) ranked among an independent run of its target"
    )

    def _model(self) -> Any:
        from ..models.jewson2023 import LogisticRegressionBetaD

        return LogisticRegressionBetaD()

    def parameter_names(self) -> list[str]:
        return ["theta[1]", "theta[2]"]

    def simulate(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        from ..models.jewson2023 import simulate_logistic_records

        theta = rng.normal(0.0, self.model.prior_sd, size=2)
        return simulate_logistic_records(rng, theta, self.n)

    def quantities(self, params: dict[str, np.ndarray]) -> np.ndarray:
        return params["theta"].reshape(-1, 2)


class LinearRegressionBetaDSBC(BetaDOPSSBC):
    """jewson2023/linear_regression: σ² ~ IG(1, 1) on [s2, ∞), θ | σ² ~ N(0, 9σ² I), y = Xθ + N(0, σ²)."""

    name = "jewson2023/linear_regression"
    features = 2
    default_epsilon = 10.0  # s2 = 0.01 gives M = 3.99: epsilon >= 2 e ln M = 7.5 is reachable
    description = (
        "sigma2 ~ IG(1, 1) truncated to sigma2 >= s2 = 0.01, theta ~ N(0, 9 sigma2 I); X = [1, x], x as "
        "for the logistic check; y = X theta + N(0, sigma2); one released beta-D draw ranked among an "
        "independent run of its target"
    )

    def _model(self) -> Any:
        from ..models.jewson2023 import LinearRegressionBetaD

        return LinearRegressionBetaD()

    def parameter_names(self) -> list[str]:
        return ["theta[1]", "theta[2]", "sigma2"]

    def simulate(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        from ..models.jewson2023 import unit_features

        m = self.model
        sigma2 = 0.0
        while sigma2 < m.s2:  # the prior truncated as the Stan declaration sigma2 >= s2
            sigma2 = 1.0 / rng.gamma(m.prior_a, 1.0 / m.prior_b)
        theta = rng.normal(0.0, np.sqrt(m.prior_var_scale * sigma2), size=2)
        X = np.column_stack([np.ones(self.n), unit_features(rng, self.n, 1)])
        return X, X @ theta + rng.normal(0.0, np.sqrt(sigma2), size=self.n)

    def quantities(self, params: dict[str, np.ndarray]) -> np.ndarray:
        return np.column_stack([params["theta"].reshape(-1, 2), params["sigma2"].reshape(-1)])


class _NetworkBetaDSBC(BetaDOPSSBC):
    """A βD network: weights N(0, 1), ``hidden`` tanh units, 2 features in [0, 1]; the network's
    output at :data:`N_REFERENCE` public inputs is ranked (invariant to hidden-unit symmetries)."""

    features = 2
    task: ClassVar[str] = "classification"

    def __init__(self, *, n: int = 100, epsilon: float | None = None, hidden: int = 3) -> None:
        self.hidden = check_int(hidden, "hidden", minimum=1)
        super().__init__(n=n, epsilon=epsilon)

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "hidden": self.hidden}

    def parameter_names(self) -> list[str]:
        names = [f"f(x_ref[{k + 1}])" for k in range(N_REFERENCE)]
        return [*names, "sigma2"] if self.task == "regression" else names

    def simulate(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        from ..models.jewson2023 import simulate_nn_records, simulate_nn_truth

        truth = simulate_nn_truth(rng, self.features, self.hidden, self.model.prior_sd, self.task)
        return simulate_nn_records(rng, truth, self.n, self.task)

    def quantities(self, params: dict[str, np.ndarray]) -> np.ndarray:
        from ..models.jewson2023 import nn_forward, reference_inputs

        S = params["W"].shape[0]
        f = nn_forward(
            reference_inputs(self.features, N_REFERENCE),
            params["W"].reshape(S, self.features, -1),
            params["b_in"].reshape(S, -1),
            params["w_out"].reshape(S, -1),
            params["b_out"].reshape(S),
        )
        if self.task == "regression":
            return np.column_stack([f, params["sigma2"].reshape(S)])
        return f


class NNClassifierBetaDSBC(_NetworkBetaDSBC):
    """jewson2023/nn_classifier (``hidden`` units, default 3 for speed)."""

    name = "jewson2023/nn_classifier"
    default_epsilon = 5.0
    description = (
        "network weights N(0, 1), hidden tanh units, 2 features; y ~ Bernoulli(logit^-1(f(x))); one "
        "released beta-D draw ranked among an independent run, by f at 3 public reference inputs"
    )

    def _model(self) -> Any:
        from ..models.jewson2023 import NNClassifierBetaD

        return NNClassifierBetaD(hidden=self.hidden)


class NNRegressionBetaDSBC(_NetworkBetaDSBC):
    """jewson2023/nn_regression (``hidden`` units, default 3; s2 = 1/(2π), so M = 1)."""

    name = "jewson2023/nn_regression"
    task = "regression"
    default_epsilon = 5.0
    description = (
        "network weights N(0, 1), hidden tanh units, 2 features; y = f(x) + N(0, sigma2), sigma2 = "
        "exp(N(0, 1)); s2 = 1/(2 pi); one released beta-D draw ranked among an independent run, by f at 3 "
        "public reference inputs and sigma2"
    )

    def _model(self) -> Any:
        import math

        from ..models.jewson2023 import NNRegressionBetaD

        return NNRegressionBetaD(hidden=self.hidden, s2=1.0 / (2.0 * math.pi))
