"""SBC checks of Kulkarni et al.'s (2022) LDP regressions (:mod:`pystanprivacy.models.kulkarni2022_regression`).

Each replicate follows the fitted model's own generative story (Stan programs in
``stan/kulkarni2022/``), at ``d = 2`` features:

* θ ~ N(0, s_θ² I), τ_j ~ N⁺(0, s_τ²), Ω ~ LKJ(η) (for d = 2 the correlation is 2 B − 1 with
  B ~ Beta(η, η)), Σ = diag(τ) Ω diag(τ); linear models also σ ~ N⁺(0, s_σ²);
* n users' x_i ~ N(0, Σ); linear: y_i = x_i'θ + N(0, σ²); logistic: y_i ~ Bernoulli(logit⁻¹(x_i'θ));
* the model's own ``release`` (analytic Gaussian / randomised response), which clips x to
  ‖x‖ ≤ R and y to [−R_y, R_y];
* the model's ``fit`` (one Stan run per replicate: the programs take one data set).

The named non-private baselines (``*_nonprivate``, :class:`NonPrivateRegressionSBC`) draw the
same θ, σ and x, release nothing (the identity: the baseline sees the raw records, no accountant
is charged) and fit their own programs, which condition on x: θ (and σ) are checked, not Σ.

Clipping. The programs model x as Gaussian and y as unclipped, while the release clips. The
check's priors (``prior_tau_sd``, ``prior_sigma_sd``: the model is built with the same values,
so the simulation's prior and the fitted prior are one) are small against the bounds R = R_y = 1,
so that clipping is rare; the share of clipped users is recorded per chunk
(``notes["clipped_x"]``, ``notes["clipped_y"]``) so a failure caused by clipping can be told
apart from a miscalibrated noise model. Beside clipping, the programs make the approximations
they state: the CLT normal for the summed statistics (``*_ss``) and, for
``logistic_regression_inputs``, the degree-2 Chebyshev expectation of the sigmoid (Eq. 44).

References
----------
.. [1] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela (2022), "Locally Differentially Private
   Bayesian Inference", arXiv:2110.14426. Eq. 3, 10-11, 34-45; supplement Sec. 8 (priors).
.. [2] D. Lewandowski, D. Kurowicka and H. Joe (2009), "Generating random correlation matrices
   based on vines and extended onion method", J. Multivariate Analysis 100 (LKJ; d = 2 marginal).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit

from .._validation import check_epsilon, check_int, check_positive
from .sbc import Replicates, Sampler, SBCProblem, _Seeded

__all__ = [
    "KulkarniRegressionSBC",
    "LinearRegressionSSSBC",
    "LinearRegressionInputsSBC",
    "LogisticRegressionSSSBC",
    "LogisticRegressionInputsSBC",
    "NonPrivateRegressionSBC",
    "LinearRegressionNonPrivateSBC",
    "LogisticRegressionNonPrivateSBC",
]

#: features of every regression check (the LKJ draw below is exact for d = 2)
D = 2


class KulkarniRegressionSBC(SBCProblem):
    """A Kulkarni et al. regression: prior draw, users' data, the model's release and fit.

    Parameters
    ----------
    n : int
        Users per data set.
    epsilon : float
        Per-user ε of the release (δ: the model's default).
    prior_theta_sd, prior_tau_sd, prior_sigma_sd : float
        Prior scales of the coefficients θ, the feature sds τ and (linear) the residual sd σ,
        used by both the simulation and the fitted model (small against R = R_y = 1: rare
        clipping).
    """

    batched: ClassVar[bool] = False
    linear: ClassVar[bool] = True
    #: the model's class name in :mod:`pystanprivacy.models.kulkarni2022_regression`
    model_class: ClassVar[str] = ""

    #: users per data set by default
    default_n: ClassVar[int] = 20_000

    def __init__(
        self,
        *,
        n: int | None = None,
        epsilon: float = 4.0,
        prior_theta_sd: float = 1.0,
        prior_tau_sd: float = 0.15,
        prior_sigma_sd: float = 0.15,
    ) -> None:
        from ..models import kulkarni2022_regression as kr

        self.n = check_int(self.default_n if n is None else n, "n", minimum=2)
        self.epsilon = check_epsilon(epsilon)
        self.prior_tau_sd = check_positive(prior_tau_sd, "prior_tau_sd")
        self.prior_sigma_sd = check_positive(prior_sigma_sd, "prior_sigma_sd")
        cls = getattr(kr, self.model_class)
        kwargs: dict[str, Any] = {
            "prior_theta_sd": check_positive(prior_theta_sd, "prior_theta_sd"),
            "prior_tau_sd": self.prior_tau_sd,
        }
        if self.linear:
            kwargs["prior_sigma_sd"] = self.prior_sigma_sd
        self.model = cls(**kwargs)
        self.lkj_eta = self.model.lkj_eta

    def settings(self) -> dict[str, Any]:
        m = self.model
        out = {
            "n": self.n,
            "epsilon": self.epsilon,
            "d": D,
            "R": 1.0,
            "model": m.model_name,
            "prior_theta_sd": m.prior_theta_sd,
            "prior_tau_sd": m.prior_tau_sd,
            "lkj_eta": m.lkj_eta,
        }
        if self.linear:
            out.update(R_y=1.0, prior_sigma_sd=self.prior_sigma_sd)
        return out

    def parameter_names(self) -> list[str]:
        names = ["theta[1]", "theta[2]", "Sigma[1,1]", "Sigma[2,2]"]
        return [*names, "sigma"] if self.linear else names

    def prior(self, rng: np.random.Generator) -> dict[str, Any]:
        """One draw of the model's prior (Stan programs' ``model`` blocks)."""
        theta = rng.normal(0.0, self.model.prior_theta_sd, size=D)
        tau = np.abs(rng.normal(0.0, self.prior_tau_sd, size=D))
        r = 2.0 * rng.beta(self.lkj_eta, self.lkj_eta) - 1.0  # LKJ(eta) for d = 2
        Sigma = np.outer(tau, tau) * np.array([[1.0, r], [r, 1.0]])
        out = {"theta": theta, "Sigma": Sigma}
        if self.linear:
            out["sigma"] = abs(rng.normal(0.0, self.prior_sigma_sd))
        return out

    def truth_vector(self, truth: dict[str, Any]) -> np.ndarray:
        values = [*truth["theta"], truth["Sigma"][0, 0], truth["Sigma"][1, 1]]
        return np.asarray([*values, truth["sigma"]] if self.linear else values)

    def records(self, truth: dict[str, Any], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n users' (x, y) from the model (before the release's clipping)."""
        x = rng.multivariate_normal(np.zeros(D), truth["Sigma"], size=self.n, method="cholesky")
        eta = x @ truth["theta"]
        if self.linear:
            return x, eta + rng.normal(0.0, truth["sigma"], size=self.n)
        return x, (rng.random(self.n) < expit(eta)).astype(np.int64)

    def release_kwargs(self) -> dict[str, Any]:
        return {"R": 1.0, "R_y": 1.0} if self.linear else {"R": 1.0}

    def replicate(self, count: int, *, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        refs, draws = [], []
        divergences, clipped_x, clipped_y = 0, 0, 0
        for _ in range(count):
            truth = self.prior(rng)
            x, y = self.records(truth, rng)
            clipped_x += int(np.sum(np.linalg.norm(x, axis=1) > 1.0))
            if self.linear:
                clipped_y += int(np.sum(np.abs(y) > 1.0))
            with _Seeded():
                release = type(self.model).release(
                    x, y, epsilon=self.epsilon, accountant=None, seed=rng, **self.release_kwargs()
                )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                post = self.model.fit(release, seed=rng, **sampler.kwargs())
            divergences += int(post.num_divergences)
            theta = np.asarray(post.draws("theta", combine_chains=False), dtype=float)  # (C, S, 2)
            Sigma = np.asarray(post.draws("Sigma", combine_chains=False), dtype=float)  # (C, S, 2, 2)
            cols = [theta[..., 0], theta[..., 1], Sigma[..., 0, 0], Sigma[..., 1, 1]]
            if self.linear:
                cols.append(np.asarray(post.draws("sigma", combine_chains=False), dtype=float).reshape(theta.shape[:2]))
            refs.append(self.truth_vector(truth))
            draws.append(np.stack(cols, axis=-1))
        users = count * self.n
        return Replicates(
            np.stack(refs),
            np.stack(draws),
            notes={"divergences": divergences, "clipped_x": clipped_x / users, "clipped_y": clipped_y / users},
        )


class LinearRegressionSSSBC(KulkarniRegressionSBC):
    """kulkarni2022/linear_regression_ss: perturbed sufficient statistics [t2(x), y x, y²]."""

    name = "kulkarni2022/linear_regression_ss"
    model_class = "LinearRegressionSS"
    description = (
        "theta ~ N(0, s_theta^2 I), tau ~ N+(0, s_tau^2), Omega ~ LKJ(2), sigma ~ N+(0, s_sigma^2); x ~ N(0, Sigma), "
        "y = x theta + N(0, sigma^2), d = 2; per user [t2(x), y x, y^2] (clipped to R = R_y = 1) + "
        "analytic Gaussian noise; CLT noise-aware fit"
    )


class LinearRegressionInputsSBC(KulkarniRegressionSBC):
    """kulkarni2022/linear_regression_inputs: perturbed x and y."""

    name = "kulkarni2022/linear_regression_inputs"
    model_class = "LinearRegressionInputs"
    description = (
        "the prior and data of linear_regression_ss; per user x + N(0, s_x^2 I) and y + N(0, s_y^2) "
        "(clipped to R = R_y = 1); exact marginal noise-aware fit"
    )


class LogisticRegressionSSSBC(KulkarniRegressionSBC):
    """kulkarni2022/logistic_regression_ss: perturbed statistics [y x, t2(x)]."""

    name = "kulkarni2022/logistic_regression_ss"
    model_class = "LogisticRegressionSS"
    linear = False
    description = (
        "theta ~ N(0, s_theta^2 I), tau ~ N+(0, s_tau^2), Omega ~ LKJ(2); x ~ N(0, Sigma), y ~ Bernoulli("
        "logit^-1(x theta)), d = 2; per user [y x, t2(x)] (x clipped to R = 1) + analytic Gaussian noise; "
        "CLT fit with the exact moments"
    )


class LogisticRegressionInputsSBC(KulkarniRegressionSBC):
    """kulkarni2022/logistic_regression_inputs: perturbed x and randomised-response y."""

    name = "kulkarni2022/logistic_regression_inputs"
    model_class = "LogisticRegressionInputs"
    linear = False
    default_n = 500  # its label term is a per-user sum: a gradient costs O(n)
    description = (
        "the prior and data of logistic_regression_ss; per user x + N(0, s_x^2 I) (clipped to R = 1) and "
        "randomised response of y; fit with the Chebyshev sigmoid expectation (Eq. 44)"
    )


class NonPrivateRegressionSBC(KulkarniRegressionSBC):
    """A named NON-PRIVATE baseline of Kulkarni et al.: the regressions' prior draw and users'
    data, the identity release, the baseline's own fit.

    The named non-private baseline is allowed to see the raw records: its "release" is the
    identity, so each replicate fits :meth:`fit_nonprivate` on the simulated ``(x, y)`` as drawn
    (no clipping, no noise) and no accountant is charged (nothing is released; the data are
    synthetic). The check asks whether the baseline's Stan program is calibrated for the data it
    is meant for.

    What is checked. The program is a regression conditional on x: its parameters are θ (and, for
    the linear model, σ), with the priors of the private models, θ ~ N(0, s_θ² I) and
    σ ~ N⁺(0, s_σ²), which :meth:`prior` draws (the model is built with the same scales). The
    features are drawn as in the private checks, x ~ N(0, Σ) with Σ from the τ / LKJ prior;
    the program does not model x, and Σ is drawn independently of θ and σ, so any law of x
    leaves the SBC of θ and σ exact. Σ is therefore not a checked parameter here.

    Parameters
    ----------
    n : int
        Users per data set.
    prior_theta_sd, prior_sigma_sd : float
        Prior scales of θ and (linear) σ, used by both the simulation and the fitted model.
    prior_tau_sd : float
        Scale of the feature sds τ of the simulated x (not a prior of the program).

    References
    ----------
    .. [1] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela (2022), "Locally Differentially
       Private Bayesian Inference", arXiv:2110.14426. Sec. 4.6, Figures 4-5 (the baselines).
    .. [2] S. Talts, M. Betancourt, D. Simpson, A. Vehtari and A. Gelman (2018), "Validating
       Bayesian inference algorithms with simulation-based calibration", arXiv:1804.06788.
    """

    def __init__(
        self,
        *,
        n: int | None = None,
        prior_theta_sd: float = 1.0,
        prior_tau_sd: float = 0.15,
        prior_sigma_sd: float = 0.15,
    ) -> None:
        from ..models import kulkarni2022_regression as kr

        self.n = check_int(self.default_n if n is None else n, "n", minimum=2)
        self.prior_tau_sd = check_positive(prior_tau_sd, "prior_tau_sd")
        self.prior_sigma_sd = check_positive(prior_sigma_sd, "prior_sigma_sd")
        self.lkj_eta = kr.DEFAULT_LKJ_ETA  # the private models' LKJ prior of the features' correlation
        cls = getattr(kr, self.model_class)
        kwargs: dict[str, Any] = {"prior_theta_sd": check_positive(prior_theta_sd, "prior_theta_sd")}
        if self.linear:
            kwargs["prior_sigma_sd"] = self.prior_sigma_sd
        self.model = cls(**kwargs)

    def settings(self) -> dict[str, Any]:
        out = {
            "n": self.n,
            "d": D,
            "model": self.model.model_name,
            "release": "identity: the named non-private baseline sees the raw records",
            "prior_theta_sd": self.model.prior_theta_sd,
            "features": {"prior_tau_sd": self.prior_tau_sd, "lkj_eta": self.lkj_eta},
        }
        if self.linear:
            out["prior_sigma_sd"] = self.model.prior_sigma_sd
        return out

    def parameter_names(self) -> list[str]:
        return ["theta[1]", "theta[2]", "sigma"] if self.linear else ["theta[1]", "theta[2]"]

    def truth_vector(self, truth: dict[str, Any]) -> np.ndarray:
        values = list(truth["theta"])
        return np.asarray([*values, truth["sigma"]] if self.linear else values)

    def replicate(self, count: int, *, rng: np.random.Generator, sampler: Sampler) -> Replicates:
        refs, draws = [], []
        divergences = 0
        for _ in range(count):
            truth = self.prior(rng)
            x, y = self.records(truth, rng)  # the identity release: the baseline sees these
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                post = self.model.fit_nonprivate(x, y, seed=rng, **sampler.kwargs())
            divergences += int(post.num_divergences)
            theta = np.asarray(post.draws("theta", combine_chains=False), dtype=float)  # (C, S, 2)
            cols = [theta[..., 0], theta[..., 1]]
            if self.linear:
                cols.append(np.asarray(post.draws("sigma", combine_chains=False), dtype=float).reshape(theta.shape[:2]))
            refs.append(self.truth_vector(truth))
            draws.append(np.stack(cols, axis=-1))
        return Replicates(np.stack(refs), np.stack(draws), notes={"divergences": divergences})


class LinearRegressionNonPrivateSBC(NonPrivateRegressionSBC):
    """kulkarni2022/linear_regression_nonprivate: the raw (x, y), Bayesian linear regression."""

    name = "kulkarni2022/linear_regression_nonprivate"
    model_class = "NonPrivateLinearRegression"
    description = (
        "theta ~ N(0, s_theta^2 I), sigma ~ N+(0, s_sigma^2); x ~ N(0, Sigma) (tau ~ N+(0, s_tau^2), Omega ~ "
        "LKJ(2): the features of the private checks, not modelled), y = x theta + N(0, sigma^2), d = 2; "
        "identity release (named non-private baseline: raw records); fit_nonprivate"
    )


class LogisticRegressionNonPrivateSBC(NonPrivateRegressionSBC):
    """kulkarni2022/logistic_regression_nonprivate: the raw (x, y), Bayesian logistic regression."""

    name = "kulkarni2022/logistic_regression_nonprivate"
    model_class = "NonPrivateLogisticRegression"
    linear = False
    description = (
        "theta ~ N(0, s_theta^2 I); x ~ N(0, Sigma) (the features of the private checks, not modelled), "
        "y ~ Bernoulli(logit^-1(x theta)), d = 2; identity release (named non-private baseline: raw records); "
        "fit_nonprivate"
    )
