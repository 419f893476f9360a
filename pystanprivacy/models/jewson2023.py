"""beta-D-Bayes one-posterior sampling (OPS) of Jewson, Ghalebikesabi & Holmes (2023).

One draw from the beta-divergence generalised posterior (Eq. 3-4)

    pi(theta | D) ∝ pi(theta) exp{ -sum_i l^(beta)(D_i, f(.; theta)) },
    l^(beta)(D, f) = -f(D)^(beta-1) / (beta-1) + (1/beta) ∫ f(z)^beta dz,

is (2 M^(beta-1) / (beta-1), 0)-DP under replace-one neighbours whenever the model
density is bounded, f <= M (Condition 1, Lemma 1, Theorem 1). Classifiers have M = 1
(Example 1); a Gaussian model with sigma2 >= s2 > 0 has M = (2 pi s2)^(-1/2) (Example 2).
No bounds on features or responses are needed.

Models (one class per Stan program in ``stan/jewson2023/``):

* :class:`LogisticRegressionBetaD` -- logistic regression, prior N(0, 9) (Appendix B);
* :class:`NNClassifierBetaD` -- one-hidden-layer (10 tanh units) classifier, N(0, 1) priors;
* :class:`LinearRegressionBetaD` -- Gaussian linear regression, sigma2 >= s2 (0.01) declared
  in Stan, sigma2 ~ IG(1, 1), theta ~ N(0, 9 sigma2);
* :class:`NNRegressionBetaD` -- the Gaussian model with a one-hidden-layer mean;
* :class:`NNRegressionFastBetaD`, :class:`NNClassifierFastBetaD` -- the networks' targets in
  symmetry-free coordinates (the same posterior of the outputs, far fewer leapfrog steps).

Each class is an :class:`~pystanprivacy.models.base.OPSModel`: :meth:`~GatedOPS.sample_one`
releases one draw of the beta-D posterior (the private release; an
:class:`~pystanprivacy.models.base.OPSResult`). Through the same Stan program it samples the
standard posterior, :meth:`~_BetaDModel.fit_nonprivate` (the non-private baseline), and for
experiments every draw of the beta-D posterior or of the Gibbs posterior with any weight w
(Eq. 2), :meth:`~_BetaDModel.generalised_posterior` (not private either).

Release and convergence
-----------------------
Theorem 1 holds for an exact draw. Like the paper we run NUTS with 1000 warm-up iterations
and release one draw chosen uniformly; unlike the paper (100 draws per chain,
:data:`DEFAULT_SAMPLER`, which the experiments keep) a release runs 4 chains of 400 draws
(:data:`OPS_SAMPLER`) and releases only when the run passes split R-hat, bulk/tail ESS,
divergence and tree-depth checks (:data:`OPS_THRESHOLDS`, the gate of every OPS model). With
100 draws per chain that gate refused 6 in 400 runs of the logistic example, which
samples well; with 400 it refused none of 400 (benchmarks/README.md, "OPS gate"). Whether the
checks pass depends on the data, so the refusal is an output too:
:meth:`~GatedOPS.sample_one` charges epsilon for every attempt before sampling, and a
failed check raises :class:`ConvergenceError` (epsilon stays
charged) whose message names only the public thresholds and settings, never a statistic of
the run. ``allow_unconverged=True`` releases anyway and the privacy record says so
(``convergence_override``); it does not say whether, or which, checks failed: that is a
statistic of the private run (:func:`convergence_gate_details`).

For the neural networks the posterior is invariant under permutations of the hidden
units and sign flips of a tanh unit (with its outgoing weight), so chains started from
Stan's exchangeable random initial values settle in different but equivalent modes and
the raw weights' R-hat fails although every chain samples the same distribution of
networks. Because the initial distribution and the target are both invariant under these
symmetries, the law of a chain's state is too; the released draw is a draw from the
target once each chain has converged *within* its mode. The gate therefore checks what is
invariant: the network outputs ``f_ref`` at fixed public reference inputs (and sigma2 for
regression), plus divergences and tree depth. A genuinely multimodal posterior (modes that
are not symmetric copies) still shows up as disagreeing ``f_ref`` between chains.

Calibration
-----------
:func:`beta_from_epsilon` inverts epsilon = 2 M^(beta-1)/(beta-1). For M <= 1 there is one
solution (M = 1: beta = 1 + 2/epsilon). For M > 1 (the Gaussian models whenever
s2 < 1/(2 pi)) epsilon(beta) has a minimum 2 e ln M at beta = 1 + 1/ln M, so smaller
epsilon is unreachable for that s2 (an error says which s2 would reach it); above it we take
the solution with beta - 1 <= 1/ln M, the one closer to the standard posterior. The
Gaussian classes calibrate with exactly the ``s2`` they pass to the Stan parameter
declaration (the authors' public code calibrated with the prior variance instead).

References
----------
.. [1] J. Jewson, S. Ghalebikesabi and C. Holmes (2023), "Differentially private statistical
   inference through beta-divergence one posterior sampling", NeurIPS. Eq. 2-4, Condition 1,
   Lemma 1, Theorem 1, Examples 1-2, Appendix B.
.. [2] A. Basu, I. R. Harris, N. L. Hjort and M. C. Jones (1998), "Robust and efficient
   estimation by minimising a density power divergence", Biometrika 85(3).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import optimize

from .._validation import (
    SeedLike,
    check_array,
    check_epsilon,
    check_int,
    check_positive,
    check_random_state,
    check_real,
)
from ..privacy.records import (
    PrivacyAccountant,
    PrivacyRecord,
    Release,
    warn_reproducible_not_secure,
)
from ..sampling.posterior import ConvergenceError, Posterior, Thresholds
from ._ops import (
    OPS_GATE,
    charge_attempt,
    check_allow_unconverged,
    check_ops_call,
    convergence_gate,
    ops_randomness,
    secure_index,
)
from .base import NONPRIVATE, Example, OPSModel, OPSResult, with_record

REFERENCE = "Jewson, Ghalebikesabi & Holmes 2023, Eq. 3-4, Lemma 1, Theorem 1"

#: the paper's sampler settings (Appendix B: 1000 warm-up, 100 draws) with 4 chains so
#: that split R-hat can be judged
DEFAULT_SAMPLER: dict[str, int] = {"chains": 4, "warmup": 1000, "draws": 100}

#: sampler settings of an OPS release (:meth:`GatedOPS.sample_one`, :meth:`GatedOPS.try_sample_one`):
#: 4 chains x (1000 warm-up + 400 draws). With the paper's 100 draws per chain the gate
#: refused 6 in 400 runs of the logistic example, which samples well (4 on tail ESS below 25
#: per chain, 2 on split R-hat 1.053 and 1.059); with 4 x 400 it refused none of 400 (issue 53,
#: item 12; benchmarks/README.md, "OPS gate"). The experiments keep the paper's :data:`DEFAULT_SAMPLER`.
OPS_SAMPLER: dict[str, int] = {"chains": 4, "warmup": 1000, "draws": 400}

#: convergence gate of an OPS release: :data:`pystanprivacy.models._ops.OPS_GATE` (split R-hat
#: <= 1.05, bulk/tail ESS >= 25 per chain, no divergences or tree-depth hits), the gate of every
#: OPS model; the 1.01 of Vehtari et al. (2021) is meant for estimates from >= 400 ESS and
#: refuses healthy short runs.
OPS_THRESHOLDS = OPS_GATE

ASSUMPTION = (
    "the released draw comes from the converged target (Theorem 1 is for an exact draw; "
    "an MCMC draw within total variation gamma of the target is (epsilon, (1 + e^epsilon) gamma)-DP, "
    "Proposition 2)"
)

#: the worst-case neighbouring data sets of Remark 1 (Sec. 4, Appendix A.5) as (X, y): rows
#: (feature, label), one coefficient, no intercept. theta -> -theta swaps them, so the two
#: normalisers are equal and the privacy loss approaches the loss sensitivity. Used by the
#: membership-inference attack of the experiments and the model audit.
ATTACK_D = (np.array([[1.0], [0.0]]), np.array([1, 0]))
ATTACK_D_PRIME = (np.array([[-1.0], [0.0]]), np.array([1, 0]))


# ----------------------------------------------------------------------------- calibration
def gaussian_density_bound(s2: float) -> float:
    """M = (2 pi s2)^(-1/2): the bound of a Gaussian density with variance >= s2 (Example 2)."""
    s2 = check_positive(s2, "s2")
    return 1.0 / math.sqrt(2.0 * math.pi * s2)


def _check_m(M: Any) -> float:
    return check_positive(M, "M")


def _check_beta(beta: Any) -> float:
    b = check_real(beta, "beta")
    if not (math.isfinite(b) and b > 1.0):
        raise ValueError(f"beta must be a finite number > 1, got {beta!r}")
    return b


def loss_sensitivity(beta: float, M: float) -> float:
    """M^(beta-1)/(beta-1): the sensitivity of the beta-D loss (Lemma 1)."""
    b = _check_beta(beta) - 1.0
    return math.exp(b * math.log(_check_m(M)) - math.log(b))


def epsilon_from_beta(beta: float, M: float) -> float:
    """epsilon = 2 M^(beta-1)/(beta-1) of one beta-D-Bayes draw (Theorem 1), in log space."""
    b = _check_beta(beta) - 1.0
    log_eps = math.log(2.0) + b * math.log(_check_m(M)) - math.log(b)
    if log_eps > 709.0:
        return math.inf
    return math.exp(log_eps)


def min_epsilon(M: float) -> float:
    """Smallest epsilon reachable for density bound M: 0 for M <= 1, else 2 e ln M (at
    beta = 1 + 1/ln M)."""
    M = _check_m(M)
    return 0.0 if M <= 1.0 else 2.0 * math.e * math.log(M)


def min_variance_bound(epsilon: float) -> float:
    """Smallest s2 for which the Gaussian models reach ``epsilon``:
    2 e ln M <= epsilon  <=>  s2 >= exp(-epsilon / e) / (2 pi)."""
    epsilon = check_epsilon(epsilon)
    return math.exp(-epsilon / math.e) / (2.0 * math.pi)


def require_reachable(epsilon: float, M: float, bound: str) -> None:
    """Raise ``ValueError`` when no beta gives ``epsilon`` for density bound ``M`` (epsilon <
    2 e ln M); the message names ``bound`` (what fixes M), the smallest reachable epsilon and
    the variance lower bound s2 that would reach ``epsilon`` (:func:`min_variance_bound`)."""
    eps_min = min_epsilon(M)
    if epsilon < eps_min * (1.0 - 1e-12):
        raise ValueError(
            f"epsilon={epsilon!r} is not reachable with {bound}: the smallest reachable epsilon is "
            f"2 e ln M = {eps_min:.6g}. Use epsilon >= {eps_min:.6g}, or a larger variance lower bound "
            f"s2 >= exp(-epsilon/e)/(2 pi) = {min_variance_bound(epsilon):.6g} "
            f"(s2 >= 1/(2 pi) = {1.0 / (2.0 * math.pi):.6g} reaches every epsilon; "
            f"2 M^(beta-1)/(beta-1) >= 2 e ln M for every beta > 1)"
        )


def beta_from_epsilon(epsilon: float, M: float = 1.0) -> float:
    """The beta for which one beta-D-Bayes draw is (epsilon, 0)-DP: the solution of
    2 M^(beta-1)/(beta-1) = epsilon (Theorem 1), solved numerically in log space.

    * M = 1 (classifiers): beta = 1 + 2/epsilon exactly.
    * M < 1: log epsilon(b) = log 2 + b ln M - log b decreases in b = beta - 1; one root.
    * M > 1: epsilon(b) is minimal, 2 e ln M, at b = 1/ln M; epsilon below that raises
      ``ValueError`` (with the s2 that would reach it, :func:`min_variance_bound`); above it
      the root with b <= 1/ln M is returned (closer to the standard posterior; the other
      root gives the same guarantee).
    """
    epsilon = check_epsilon(epsilon)
    M = _check_m(M)
    if M == 1.0:
        return _representable_beta(1.0 + 2.0 / epsilon, epsilon, M)
    log_m = math.log(M)
    log_eps = math.log(epsilon)

    def h(log_b: float) -> float:  # log epsilon(b) - log epsilon, decreasing on the branch
        b = math.exp(log_b)
        return math.log(2.0) + b * log_m - log_b - log_eps

    if M > 1.0:
        eps_min = min_epsilon(M)
        b_star = 1.0 / log_m
        require_reachable(epsilon, M, f"density bound M={M:.6g}")
        if epsilon <= eps_min:
            return 1.0 + b_star
        hi = math.log(b_star)
        lo = math.log(min(2.0 / epsilon, b_star))  # epsilon(b) >= 2/b there, so h >= 0
    else:
        # epsilon(b) <= 2/b, so h <= 0 at log(2/epsilon) (taken in log space: 2/epsilon may
        # overflow); capped at 709 so that exp(log_b) stays finite
        hi = min(math.log(2.0) - log_eps, 709.0)
        if h(hi) > 0.0:  # the root lies beyond e^709 (M within rounding of 1): beta overflows
            return _representable_beta(math.inf, epsilon, M)
        lo = hi
        while h(lo) < 0.0:
            lo -= 10.0
    if h(lo) == 0.0:
        return _representable_beta(1.0 + math.exp(lo), epsilon, M)
    if h(hi) == 0.0 or lo == hi:
        return _representable_beta(1.0 + math.exp(hi), epsilon, M)
    log_b = optimize.brentq(h, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    return _representable_beta(1.0 + math.exp(log_b), epsilon, M)


def _representable_beta(beta: float, epsilon: float, M: float) -> float:
    """``beta`` when it is a finite float64 > 1; else ``ValueError`` naming ``epsilon``: beyond
    about 2^54 M^(2^-52) the loss's beta - 1 = b rounds away (beta = 1.0), below about
    2 M^b / b at the largest float b it overflows (beta = inf). Checked before any charge."""
    if math.isfinite(beta) and beta > 1.0:
        return beta
    hi = epsilon_from_beta(1.0 + 2.0**-52, M)
    lo = 2.0 / np.finfo(float).max if M >= 1.0 else 0.0
    raise ValueError(
        f"epsilon={epsilon!r} is outside the range of the beta-D loss for density bound M={M:.6g}: "
        f"beta - 1 = b solving 2 M^b / b = epsilon is {'below float64 precision' if beta <= 1.0 else 'too large'} "
        f"(beta = {beta!r}); use epsilon in ({lo:.6g}, {hi:.6g}]"
    )


# ----------------------------------------------------------------------------- losses (numpy)
def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -z)


def betad_loss_bernoulli(y: Any, eta: Any, beta: float) -> np.ndarray:
    """l^(beta)(y, f) for y ~ Bernoulli(inv_logit(eta)) (Eq. 4), elementwise, including
    every constant: -f(y)^(beta-1)/(beta-1) + (f(1)^beta + f(0)^beta)/beta."""
    beta = _check_beta(beta)
    b = beta - 1.0
    y = np.asarray(y)
    eta = np.asarray(eta, dtype=float)
    lp1, lp0 = _log_sigmoid(eta), _log_sigmoid(-eta)
    logf = np.where(y == 1, lp1, lp0)
    integral = np.exp(np.logaddexp(beta * lp1, beta * lp0))
    return -np.exp(b * logf) / b + integral / beta


def betad_loss_normal(y: Any, mu: Any, sigma2: Any, beta: float) -> np.ndarray:
    """l^(beta)(y, f) for y ~ N(mu, sigma2) (Eq. 4, Example 2), elementwise:
    -N(y; mu, sigma2)^(beta-1)/(beta-1) + (2 pi sigma2)^(-(beta-1)/2) beta^(-1/2) / beta."""
    beta = _check_beta(beta)
    b = beta - 1.0
    sigma2 = np.asarray(sigma2, dtype=float)
    log_norm = -0.5 * np.log(2.0 * np.pi * sigma2)
    logf = log_norm - 0.5 * (np.asarray(y, dtype=float) - np.asarray(mu, dtype=float)) ** 2 / sigma2
    integral = np.exp(b * log_norm - 0.5 * math.log(beta))
    return -np.exp(b * logf) / b + integral / beta


def gibbs_loss_bernoulli(y: Any, eta: Any, w: float) -> np.ndarray:
    """-w log f(y; eta) of the Gibbs posterior (Eq. 2), elementwise."""
    y = np.asarray(y)
    eta = np.asarray(eta, dtype=float)
    return -w * np.where(y == 1, _log_sigmoid(eta), _log_sigmoid(-eta))


# ----------------------------------------------------------------------------- helpers
def reference_inputs(n_features: int, k: int = 20) -> np.ndarray:
    """K public reference inputs in [0, 1]^P (an unscrambled Halton sequence, not data)
    at which the networks' outputs are used to judge convergence."""
    from scipy.stats import qmc

    n_features = check_int(n_features, "n_features", minimum=1)
    k = check_int(k, "k", minimum=1)
    return qmc.Halton(d=n_features, scramble=False).random(k + 1)[1:]


def nn_forward(X: np.ndarray, W: np.ndarray, b_in: np.ndarray, w_out: np.ndarray, b_out: Any) -> np.ndarray:
    """tanh(X W + b_in) w_out + b_out, as in ``stan/functions/betad.stanfunctions``.
    Works on a batch of draws too (leading axis of the parameters)."""
    W = np.asarray(W, dtype=float)
    if W.ndim == 2:
        return np.tanh(X @ W + b_in) @ w_out + b_out
    hidden = np.tanh(np.einsum("np,dph->dnh", X, W) + np.asarray(b_in)[:, None, :])
    return np.einsum("dnh,dh->dn", hidden, w_out) + np.asarray(b_out)[:, None]


def clip_scale(z: np.ndarray, lo: float = -4.0, hi: float = 4.0) -> np.ndarray:
    """Clip to [lo, hi] and map linearly onto [0, 1] (the paper's scaling of N(0, 1) features)."""
    return (np.clip(z, lo, hi) - lo) / (hi - lo)


def unit_features(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """``d`` features N(0, 1) clipped to [-4, 4] and scaled to [0, 1] (the paper's simulations)."""
    return clip_scale(rng.standard_normal((n, d)))


def simulate_logistic_truth(rng: np.random.Generator, d: int, coef_sd: float = 3.0) -> np.ndarray:
    """Coefficients of the Sec. 5 logistic simulation: N(0, coef_sd^2), then the intercept set
    to -0.5 sum_j theta_j (E[x_j] = 1/2), so that the linear predictor is centred and both
    classes occur (no data used)."""
    theta = rng.normal(0.0, coef_sd, size=d)
    if d > 1:
        theta[0] = -0.5 * theta[1:].sum()
    return theta


def simulate_logistic_records(rng: np.random.Generator, theta: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``m`` records of the logistic simulation: an intercept column, ``len(theta) - 1``
    :func:`unit_features`, labels Bernoulli(inv_logit(X theta))."""
    X = np.column_stack([np.ones(m), unit_features(rng, m, len(theta) - 1)])
    return X, (rng.random(m) < 1.0 / (1.0 + np.exp(-(X @ theta)))).astype(np.int64)


def simulate_nn_truth(rng: np.random.Generator, d: int, hidden: int, weight_sd: float, task: str) -> dict[str, Any]:
    """Weights of the Sec. 5 network simulation: every weight and bias N(0, weight_sd^2);
    classification centres the output bias on 10,000 fresh feature draws (no data), so that
    both classes occur; regression adds the noise variance exp(N(0, 1))."""
    truth = {
        "W": weight_sd * rng.standard_normal((d, hidden)),
        "b_in": weight_sd * rng.standard_normal(hidden),
        "w_out": weight_sd * rng.standard_normal(hidden),
        "b_out": np.array(weight_sd * rng.standard_normal()),
    }
    if task == "classification":
        pop = unit_features(rng, 10_000, d)
        truth["b_out"] = np.array(-np.mean(nn_forward(pop, truth["W"], truth["b_in"], truth["w_out"], 0.0)))
    if task == "regression":
        truth["sigma2"] = np.array(np.exp(rng.standard_normal()))
    return truth


def simulate_nn_records(
    rng: np.random.Generator, truth: dict[str, Any], m: int, task: str
) -> tuple[np.ndarray, np.ndarray]:
    """``m`` records of the network simulation: :func:`unit_features` and the network's mean
    plus N(0, sigma2) noise (regression) or Bernoulli(inv_logit(mean)) labels."""
    X = unit_features(rng, m, truth["W"].shape[0])
    mean = nn_forward(X, truth["W"], truth["b_in"], truth["w_out"], truth["b_out"])
    if task == "regression":
        return X, mean + rng.standard_normal(m) * np.sqrt(truth["sigma2"])
    return X, (rng.random(m) < 1.0 / (1.0 + np.exp(-mean))).astype(np.int64)


def _simulate_example(model_name: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """``(X, y, truth)``: ``n`` simulated records (d = 2) for the beta-D model ``model_name``:
    the training draws of ``experiments.jewson2023.data.simulate_*`` (the same generators) for
    the logistic and network models, and for linear regression an intercept and a U(0, 1)
    feature with y = 1 - 2 x + N(0, 0.7^2). Seeds seed + 1, + 2, + 3 for the linear,
    NN-regression and NN-classification data, as the benchmarks always used.
    """
    kind = model_name.partition("/")[2]
    rng = np.random.default_rng(
        seed
        + {
            "logistic": 0,
            "linear_regression": 1,
            "nn_regression": 2,
            "nn_regression_fast": 2,
            "nn_classifier": 3,
            "nn_classifier_fast": 3,
        }[kind]
    )
    if kind == "logistic":
        theta = simulate_logistic_truth(rng, 2)
        return (*simulate_logistic_records(rng, theta, n), {"theta": theta})
    if kind == "linear_regression":
        X = np.column_stack([np.ones(n), rng.random(n)])
        theta = np.array([1.0, -2.0])
        return X, X @ theta + rng.normal(0, 0.7, n), {"theta": theta, "sigma2": 0.49}
    task = "classification" if kind.startswith("nn_classifier") else "regression"
    truth = simulate_nn_truth(rng, 2, 10, 1.0, task)
    return (*simulate_nn_records(rng, truth, n, task), truth)


#: the examples' model settings and privacy levels (those of the benchmarks)
_EXAMPLE_SETTINGS: dict[str, tuple[dict[str, Any], float]] = {
    "jewson2023/logistic": ({}, 1.0),
    "jewson2023/linear_regression": ({"s2": 0.01}, 10.0),
    "jewson2023/nn_classifier": ({}, 5.0),
    "jewson2023/nn_classifier_fast": ({}, 5.0),
    "jewson2023/nn_regression": ({"s2": 1 / (2 * math.pi)}, 5.0),
    "jewson2023/nn_regression_fast": ({"s2": 1 / (2 * math.pi)}, 5.0),
}


def convergence_gate_details(allow_unconverged: bool) -> dict[str, Any]:
    """What the privacy record of an OPS draw says about the convergence gate: only the
    public fact whether ``allow_unconverged`` was used (``convergence_override`` and
    ``override_requested``, both that bool, and ``convergence_gate`` in words, as
    :func:`~pystanprivacy.models._ops.convergence_gate`). Whether the run passed the
    checks, which one failed and its R-hat / ESS / divergence / tree-depth numbers are
    statistics of the private run and are never recorded; the thresholds that were applied
    are public (the records put them in ``sampler['thresholds']``)."""
    return {
        **convergence_gate(allow_unconverged, "thresholds in sampler['thresholds']"),
        "override_requested": bool(allow_unconverged),
    }


def released_draw(post: Posterior, rng: np.random.Generator | None, names: Sequence[str]) -> dict[str, np.ndarray]:
    """The draw of ``names`` an OPS release publishes, at a uniformly chosen (chain, iteration):
    from ``rng`` when seeded (:meth:`Posterior.one_draw`: chain then iteration; reproducible,
    not secure: warned once), from ``secrets`` when ``rng`` is ``None``."""
    if rng is not None:
        warn_reproducible_not_secure()
        chosen = post.one_draw(rng)
        return {name: np.asarray(chosen[name]) for name in names}
    chain, it = secure_index(post.num_chains), secure_index(post.num_draws)
    return {name: np.asarray(post.draws(name, combine_chains=False)[chain, it]) for name in names}


def convergence_problems(post: Posterior, thresholds: Thresholds, variables: Sequence[str]) -> list[str]:
    """Failed convergence checks of ``post`` on ``variables`` (split R-hat, bulk/tail ESS),
    divergences and tree depth, in words (empty: all passed)."""
    return post.check(thresholds, variables=list(variables))


# ----------------------------------------------------------------------------- the gated OPS attempt
class GatedOPS:
    """One-posterior sampling with the convergence gate, through a Stan program of this module:
    what the beta-D classes and the Minami Gibbs baseline
    (:class:`pystanprivacy.experiments.jewson2023.baselines.MinamiGibbsLogistic`) share.

    A subclass says which program samples (:meth:`_program`: a beta-D class; its loss is
    chosen by the data it is given), how an attempt is validated and calibrated before
    anything is charged (:meth:`_calibrate`), and what the release's record says
    (:meth:`_attempt_record`). :meth:`sample_one` is the private release;
    :meth:`try_sample_one` the uncharged attempt of simulations.
    """

    label: str = ""
    diagnostic_variables: tuple[str, ...] = ()
    #: delta of one draw (0 for beta-D; Minami's draw is (epsilon, delta)-DP)
    delta: float = 0.0

    # ---- what a subclass says ------------------------------------------------------
    def _program(self) -> _BetaDModel:
        """The beta-D class whose Stan program, data layout and parameter layout are used."""
        raise NotImplementedError

    def _calibrate(self, X: Any, y: Any, epsilon: Any) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
        """Validated ``X``, ``y`` and the loss of ``epsilon`` (``{"beta": ...}`` or
        ``{"w": ...}``: the keyword of :meth:`_BetaDModel.stan_data`, also the public
        :attr:`~pystanprivacy.models.base.OPSResult.details` of the attempt). Raises before
        anything is charged or run."""
        raise NotImplementedError

    def _attempt_record(
        self,
        epsilon: float,
        X: np.ndarray,
        loss: dict[str, float],
        *,
        sampler: dict[str, Any],
        override: bool,
        seeded: bool,
    ) -> PrivacyRecord:
        """The privacy record of a released draw (public values only)."""
        raise NotImplementedError

    # ---- the attempt -----------------------------------------------------------------
    def try_sample_one(
        self,
        X: Any,
        y: Any,
        *,
        epsilon: float,
        seed: SeedLike = None,
        chains: int = OPS_SAMPLER["chains"],
        warmup: int = OPS_SAMPLER["warmup"],
        draws: int = OPS_SAMPLER["draws"],
        thresholds: Thresholds | None = None,
        allow_unconverged: bool = False,
        adapt_delta: float = 0.8,
        max_treedepth: int = 10,
        keep_posterior: bool = False,
    ) -> OPSResult:
        """Like :meth:`sample_one` but a failed check gives a result with ``release=None``
        and the failed checks instead of raising (for experiments that count refusals).

        Charges no accountant, and ``problems`` states statistics of the run: for
        simulations; :meth:`sample_one` is the private release. With a seed, Stan's seed and
        the released (chain, iteration) come from its Generator (reproducible, not secure:
        warned once); without one, Stan gets 31 bits from ``secrets`` and the draw is chosen
        with ``secrets``. ``details`` holds the loss (``beta`` or ``w``); ``posterior``
        (with ``keep_posterior=True``) every draw of the run, marked non-private."""
        X, y, loss = self._calibrate(X, y, epsilon)
        epsilon = check_epsilon(epsilon)
        chains = check_int(chains, "chains", minimum=2)
        check_allow_unconverged(allow_unconverged)
        rng = None if seed is None else check_random_state(seed)
        program = self._program()
        post = program.stan_model.sample(
            program.stan_data(X, y, **loss),
            chains=chains,
            warmup=warmup,
            draws=draws,
            seed=rng,
            adapt_delta=adapt_delta,
            max_treedepth=max_treedepth,
        )
        gate = thresholds or OPS_THRESHOLDS
        problems = convergence_problems(post, gate, self.diagnostic_variables)
        kept = with_record(post, NONPRIVATE) if keep_posterior else None
        if problems and not allow_unconverged:
            return OPSResult(release=None, problems=problems, details=dict(loss), posterior=kept)
        params = released_draw(post, rng, [name for name, _ in program.layout(X.shape[1])])
        sampler = {
            "chains": chains,
            "warmup": warmup,
            "draws": draws,
            "adapt_delta": adapt_delta,
            "max_treedepth": max_treedepth,
            "thresholds": dataclasses.asdict(gate),
        }
        record = self._attempt_record(
            epsilon, X, loss, sampler=sampler, override=allow_unconverged, seeded=rng is not None
        )
        return OPSResult(
            release=Release(values=program._flatten(params, X.shape[1]), record=record),
            problems=problems,
            params=params,
            details=dict(loss),
            posterior=kept,
        )

    def sample_one(
        self,
        X: Any,
        y: Any,
        *,
        epsilon: float,
        seed: SeedLike = None,
        accountant: PrivacyAccountant | None = None,
        chains: int = OPS_SAMPLER["chains"],
        warmup: int = OPS_SAMPLER["warmup"],
        draws: int = OPS_SAMPLER["draws"],
        thresholds: Thresholds | None = None,
        allow_unconverged: bool = False,
        adapt_delta: float = 0.8,
        max_treedepth: int = 10,
        keep_posterior: bool = False,
    ) -> OPSResult:
        """Release one posterior draw, (epsilon, delta)-DP for a draw from the converged target
        (beta-D: delta = 0, Theorem 1).

        Parameters
        ----------
        X, y : array_like
            Features (N, P) and responses (N,) (what the model asks of them:
            :meth:`_BetaDModel.check_data`; beta-D needs no feature bounds).
        epsilon : float
            Privacy level; it fixes the loss (beta-D: beta = ``beta(epsilon)``).
        seed : int, Generator or None
            Stan's seed and the choice of the released draw. Reproducibility, not security
            (the record says ``secure: False``; warned once): use ``None`` for a real release
            (Stan seeded with 31 bits from ``secrets``, the draw chosen with ``secrets``).
        accountant : PrivacyAccountant, optional
            Charged (epsilon, delta) for every attempt, before sampling, whether or not a draw
            is then released (the refusal depends on the data, so it is an output too).
        chains, warmup, draws : int
            NUTS settings (default :data:`OPS_SAMPLER`: 4 chains x (1000 warm-up + 400 draws)); the draw is
            chosen uniformly over all chains and iterations.
        adapt_delta, max_treedepth
            NUTS step-size adaptation target and tree-depth limit.
        thresholds : Thresholds, optional
            Convergence gate (default :data:`OPS_THRESHOLDS`).
        allow_unconverged : bool
            Release even if a check failed; the record then has
            ``convergence_override=True`` (whether or not a check failed: which one did is a
            statistic of the private run and is not recorded).
        keep_posterior : bool
            Also return every draw of the run (``posterior``, marked non-private). For
            diagnostics only: it is not part of the release, never publish it.

        Returns
        -------
        OPSResult
            ``release``: the draw flattened in the order of
            ``record.details['parameter_layout']`` with its privacy record; ``params``: the
            same draw as named arrays; ``details``: the loss (``beta`` or ``w``; public);
            ``problems``: empty, or with ``allow_unconverged=True`` the checks that failed
            (a statistic of the private run: for the data holder, not for publication).

        Raises
        ------
        BudgetExceededError
            The budget cannot cover the attempt: nothing is charged or run.
        ConvergenceError
            A check failed: nothing is released and (epsilon, delta) stays charged. The
            message names the public thresholds and settings only, no statistic of the run.
        """
        X, y, loss = self._calibrate(X, y, epsilon)  # epsilon must be valid and reachable
        epsilon = check_epsilon(epsilon)
        check_int(chains, "chains", minimum=2)
        settings = {
            "warmup": warmup,
            "draws": draws,
            "chains": chains,
            "adapt_delta": adapt_delta,
            "max_treedepth": max_treedepth,
        }
        rng = check_ops_call(accountant, seed, thresholds, allow_unconverged, settings)
        self._program().stan_data(X, y, **loss)  # the loss (beta > 1 or w > 0, finite): checked before the charge
        charge_attempt(accountant, epsilon, self.label, self.delta)
        out = self.try_sample_one(
            X,
            y,
            epsilon=epsilon,
            seed=rng,
            thresholds=thresholds,
            allow_unconverged=allow_unconverged,
            keep_posterior=keep_posterior,
            **settings,
        )
        if out.release is None:
            refused = ConvergenceError.refused(
                self.label,
                epsilon=epsilon,
                thresholds=thresholds or OPS_THRESHOLDS,
                checked=list(self.diagnostic_variables),
                settings=settings,
                charged=accountant is not None,
            )
            if not self.delta:
                raise refused
            delta_note = (
                "was charged with epsilon and stays charged" if accountant is not None else "was used with epsilon"
            )
            raise ConvergenceError(f"{refused} This attempt's delta={self.delta!r} {delta_note}.")
        return out


# ----------------------------------------------------------------------------- models
class _BetaDModel(GatedOPS, OPSModel):
    """Shared machinery; subclasses set the Stan program, layout and data."""

    model_name = ""
    label = ""
    classification = True
    diagnostic_variables: tuple[str, ...] = ()

    def __init__(self, *, backend: str | None = None) -> None:
        self.backend = backend

    @classmethod
    def example(cls, n: int = 100, *, seed: int = 0) -> Example:
        """``n`` simulated records (:func:`_simulate_example`) and the privacy level of the
        benchmarks; the whole run is :meth:`try_sample_one` (:class:`~pystanprivacy.models.base.Example`)."""
        settings, epsilon = _EXAMPLE_SETTINGS[cls.model_name]
        X, y, truth = _simulate_example(cls.model_name, check_int(n, "n", minimum=1), seed)
        return Example(
            cls(**settings), {"X": X, "y": y}, {"epsilon": epsilon}, "X", truth=truth, ops_run="try_sample_one"
        )

    # ---- model specifics -------------------------------------------------------
    @property
    def density_bound(self) -> float:
        """M of Condition 1."""
        return 1.0

    def layout(self, n_features: int) -> list[tuple[str, tuple[int, ...]]]:
        raise NotImplementedError

    def _extra_data(self, n_features: int) -> dict[str, Any]:
        raise NotImplementedError

    def _extra_details(self) -> dict[str, Any]:
        return {}

    def predict(self, params: dict[str, np.ndarray], X: Any) -> np.ndarray:
        """Mean function m(X, theta) (classifiers: the logit; regression: the mean)."""
        raise NotImplementedError

    # ---- calibration -----------------------------------------------------------
    def beta(self, epsilon: float) -> float:
        """beta with 2 M^(beta-1)/(beta-1) = epsilon for this model's M (Theorem 1)."""
        return beta_from_epsilon(epsilon, self.density_bound)

    def epsilon(self, beta: float) -> float:
        """epsilon = 2 M^(beta-1)/(beta-1) of one draw at ``beta``."""
        return epsilon_from_beta(beta, self.density_bound)

    # ---- data ------------------------------------------------------------------
    def check_data(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        """Validate features (N, P), finite, and responses (N,): labels in {0, 1} for
        classifiers, finite reals for regression. Messages never show data values."""
        X = check_array(X, "X", ndim=2)
        if X.shape[0] < 1 or X.shape[1] < 1:
            raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
        if self.classification:
            y_arr = check_array(y, "y", ndim=1, kinds="biuf")
            bad = int(np.count_nonzero((y_arr != 0) & (y_arr != 1)))
            if bad:
                raise ValueError(f"y must hold labels in {{0, 1}}; {bad} value(s) are not")
            y_arr = y_arr.astype(np.int64)
        else:
            y_arr = check_array(y, "y", ndim=1)
        if y_arr.shape[0] != X.shape[0]:
            raise ValueError(f"X and y must have the same number of rows, got X {X.shape} and y {y_arr.shape}")
        return X, y_arr

    def stan_data(
        self, X: np.ndarray, y: np.ndarray, *, beta: float | None = None, w: float | None = None
    ) -> dict[str, Any]:
        """The Stan data dict: the beta-D loss at ``beta`` or the Gibbs loss at weight ``w``."""
        if (beta is None) == (w is None):
            raise ValueError("give exactly one of beta (beta-D loss) and w (Gibbs weight)")
        data = {
            "N": X.shape[0],
            "P": X.shape[1],
            "X": X,
            "y": y,
            "betad": int(beta is not None),
            "beta": _check_beta(beta) if beta is not None else 1.0,
            "w": check_positive(w, "w") if w is not None else 1.0,
        }
        data.update(self._extra_data(X.shape[1]))
        data.update(self._design_data(X))
        return data

    def _design_data(self, X: np.ndarray) -> dict[str, Any]:
        return {}

    # ---- the gated OPS attempt (GatedOPS) -------------------------------------------
    def _program(self) -> _BetaDModel:
        return self

    def _calibrate(self, X: Any, y: Any, epsilon: Any) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
        X, y = self.check_data(X, y)
        return X, y, {"beta": self.beta(check_epsilon(epsilon))}

    def _attempt_record(
        self,
        epsilon: float,
        X: np.ndarray,
        loss: dict[str, float],
        *,
        sampler: dict[str, Any],
        override: bool,
        seeded: bool,
    ) -> PrivacyRecord:
        return self.record(
            epsilon, loss["beta"], X.shape[0], X.shape[1], sampler=sampler, override=override, seeded=seeded
        )

    # ---- every draw: baselines and experiments (not private) ------------------------
    def fit_nonprivate(self, X: Any, y: Any, **sample_kwargs: Any) -> Posterior:
        """The non-private baseline: every draw of the standard posterior (the Gibbs posterior
        with w = 1, Eq. 2) of the same Stan program, marked non-private
        (``posterior.privacy == "non-private"``).

        ``sample_kwargs``: ``seed``, ``chains``, ``warmup``, ``draws``, ``adapt_delta``,
        ``max_treedepth``, ``thin``, as for :meth:`generalised_posterior`.
        """
        loss = sorted({"epsilon", "beta", "w"} & set(sample_kwargs))
        if loss:
            raise TypeError(
                f"fit_nonprivate takes no {', '.join(loss)}: it is the standard posterior (w = 1); "
                "use generalised_posterior for another loss"
            )
        return self.generalised_posterior(X, y, w=1.0, **sample_kwargs)

    def generalised_posterior(
        self,
        X: Any,
        y: Any,
        *,
        epsilon: float | None = None,
        beta: float | None = None,
        w: float | None = None,
        seed: SeedLike = None,
        chains: int = DEFAULT_SAMPLER["chains"],
        warmup: int = DEFAULT_SAMPLER["warmup"],
        draws: int = DEFAULT_SAMPLER["draws"],
        adapt_delta: float = 0.8,
        max_treedepth: int = 10,
        thin: int = 1,
    ) -> Posterior:
        """Every draw of the beta-D posterior (give ``epsilon`` or ``beta``) or of the Gibbs
        posterior with weight ``w`` (Eq. 2; ``w=1``: the standard posterior, as
        :meth:`fit_nonprivate`), for experiments: the attack audit, Minami's weights.

        It holds every draw of a run on the raw data, so it is NOT a private release whatever
        the loss (marked non-private); :meth:`sample_one` releases one draw.
        """
        if sum(v is not None for v in (epsilon, beta, w)) != 1:
            raise ValueError("give exactly one of epsilon, beta (beta-D loss) and w (Gibbs weight)")
        X, y = self.check_data(X, y)
        if epsilon is not None:
            beta = self.beta(epsilon)
        post = self.stan_model.sample(
            self.stan_data(X, y, beta=beta, w=w),
            chains=chains,
            warmup=warmup,
            draws=draws,
            seed=seed,
            adapt_delta=adapt_delta,
            max_treedepth=max_treedepth,
            thin=thin,
        )
        return with_record(post, NONPRIVATE)

    def posterior(self, X: Any, y: Any, **kwargs: Any) -> Posterior:
        """Deprecated spelling: :meth:`fit_nonprivate` for ``w=1``, else
        :meth:`generalised_posterior` (removed in 0.3)."""
        warnings.warn(
            f"{type(self).__name__}.posterior is deprecated and will be removed in 0.3: use "
            "fit_nonprivate(X, y) for the standard posterior (w=1), generalised_posterior(X, y, "
            "epsilon=|beta=|w=) for other losses",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.generalised_posterior(X, y, **kwargs)

    # ---- releases ---------------------------------------------------------------
    def unpack(self, values: Any, n_features: int) -> dict[str, np.ndarray]:
        """Named parameters from a released flat vector (layout of :meth:`layout`)."""
        values = np.asarray(values, dtype=float).ravel()
        layout = self.layout(n_features)
        total = sum(int(np.prod(shape)) for _, shape in layout)
        if total != values.size:
            raise ValueError(f"values must have {total} entries for {n_features} features, got {values.size}")
        out, pos = {}, 0
        for name, shape in layout:
            size = int(np.prod(shape))
            out[name] = values[pos : pos + size].reshape(shape)
            pos += size
        return out

    def _flatten(self, params: dict[str, np.ndarray], n_features: int) -> np.ndarray:
        return np.concatenate([np.asarray(params[name], dtype=float).ravel() for name, _ in self.layout(n_features)])

    def record(
        self,
        epsilon: float,
        beta: float,
        n: int,
        n_features: int,
        *,
        sampler: dict[str, Any],
        override: bool = False,
        seeded: bool = False,
    ) -> PrivacyRecord:
        """The privacy record of one beta-D-Bayes draw (``override``: ``allow_unconverged`` was
        used; ``seeded``: made with a seed, not secure). It holds public values only: no
        statistic of the run (:func:`convergence_gate_details`)."""
        M = self.density_bound
        details = {
            "model": self.model_name,
            "loss": "beta-divergence (Eq. 4)",
            "beta": beta,
            "M": M,
            "epsilon_formula": "2 M^(beta-1)/(beta-1) (Theorem 1)",
            "sensitivity_is": "beta-D loss sensitivity M^(beta-1)/(beta-1) (Lemma 1)",
            "assumption": ASSUMPTION,
            "convergence_checked_on": list(self.diagnostic_variables) + ["divergences", "tree depth"],
            **convergence_gate_details(override),
            "sampler": dict(sampler),
            "parameter_layout": [[name, list(shape)] for name, shape in self.layout(n_features)],
            "feature_bounds": "none needed (the density bound M does not depend on the data)",
            **ops_randomness(bool(seeded)),
            "reference": REFERENCE,
        }
        details.update(self._extra_details())
        return PrivacyRecord(
            mechanism="ops",
            epsilon=epsilon,
            delta=0.0,
            sensitivity=loss_sensitivity(beta, M),
            n=n,
            neighbouring="replace-one",
            details=details,
        )


def _qr_flag(X: np.ndarray) -> dict[str, int]:
    """``use_qr`` = 1 when X has full column rank (the Stan programs then sample in the
    QR-rotated coordinates; the target is the same)."""
    return {"use_qr": int(X.shape[0] >= X.shape[1] and np.linalg.matrix_rank(X) == X.shape[1])}


class LogisticRegressionBetaD(_BetaDModel):
    """beta-D-Bayes logistic regression (Example 1): M = 1, beta = 1 + 2/epsilon.

    Parameters
    ----------
    prior_sd : float, default 3.0
        Prior sd of every coefficient (Appendix B: variance 9). Add an intercept column to X
        yourself if you want one.
    backend : str, optional
    """

    model_name = "jewson2023/logistic"
    label = "beta-D logistic regression"
    classification = True
    diagnostic_variables = ("theta",)

    def __init__(self, *, prior_sd: float = 3.0, backend: str | None = None) -> None:
        super().__init__(backend=backend)
        self.prior_sd = check_positive(prior_sd, "prior_sd")

    def layout(self, n_features: int) -> list[tuple[str, tuple[int, ...]]]:
        return [("theta", (n_features,))]

    def _extra_data(self, n_features: int) -> dict[str, Any]:
        return {"prior_sd": self.prior_sd}

    def _extra_details(self) -> dict[str, Any]:
        return {"prior": f"theta ~ N(0, {self.prior_sd**2:g})"}

    def _design_data(self, X: np.ndarray) -> dict[str, Any]:
        return _qr_flag(X)

    def predict(self, params: dict[str, np.ndarray], X: Any) -> np.ndarray:
        return np.asarray(X, dtype=float) @ np.asarray(params["theta"], dtype=float).T


class NNClassifierBetaD(_BetaDModel):
    """beta-D-Bayes one-hidden-layer neural-network classifier (Example 1): M = 1.

    Parameters
    ----------
    hidden : int, default 10
    prior_sd : float, default 1.0
        N(0, prior_sd^2) on every weight and bias (Appendix B).
    n_reference : int, default 20
        Public reference inputs (:func:`reference_inputs`) whose outputs gate convergence.
    backend : str, optional
    """

    model_name = "jewson2023/nn_classifier"
    label = "beta-D neural-network classifier"
    classification = True
    diagnostic_variables = ("f_ref",)

    def __init__(
        self, *, hidden: int = 10, prior_sd: float = 1.0, n_reference: int = 20, backend: str | None = None
    ) -> None:
        super().__init__(backend=backend)
        self.hidden = check_int(hidden, "hidden", minimum=1)
        self.prior_sd = check_positive(prior_sd, "prior_sd")
        self.n_reference = check_int(n_reference, "n_reference", minimum=1)

    def layout(self, n_features: int) -> list[tuple[str, tuple[int, ...]]]:
        h = self.hidden
        return [("W", (n_features, h)), ("b_in", (h,)), ("w_out", (h,)), ("b_out", ())]

    def _extra_data(self, n_features: int) -> dict[str, Any]:
        return {
            "H": self.hidden,
            "prior_sd": self.prior_sd,
            "K": self.n_reference,
            "X_ref": reference_inputs(n_features, self.n_reference),
        }

    def _extra_details(self) -> dict[str, Any]:
        return {
            "hidden_units": self.hidden,
            "activation": "tanh",
            "prior": f"N(0, {self.prior_sd**2:g}) on every weight and bias",
            "convergence_note": "judged on network outputs at public reference inputs (invariant to label switching)",
        }

    def predict(self, params: dict[str, np.ndarray], X: Any) -> np.ndarray:
        return nn_forward(np.asarray(X, dtype=float), params["W"], params["b_in"], params["w_out"], params["b_out"])


class _GaussianMixin:
    """What the two Gaussian models share: the variance bound s2, its inverse-gamma prior and
    the calibration with M = (2 pi s2)^(-1/2) (Example 2)."""

    s2: float
    prior_a: float
    prior_b: float

    def _set_variance(self, s2: float, prior_a: float, prior_b: float) -> None:
        self.s2 = check_positive(s2, "s2")
        self.prior_a = check_positive(prior_a, "prior_a")
        self.prior_b = check_positive(prior_b, "prior_b")

    def _variance_data(self) -> dict[str, Any]:
        return {"s2": self.s2, "prior_a": self.prior_a, "prior_b": self.prior_b}

    def _variance_details(self) -> dict[str, Any]:
        return {"s2": self.s2, "M_from": "M = (2 pi s2)^(-1/2) with the s2 of the Stan declaration sigma2 >= s2"}

    @property
    def density_bound(self) -> float:
        """M = (2 pi s2)^(-1/2), with the same s2 as the Stan declaration sigma2 >= s2."""
        return gaussian_density_bound(self.s2)

    def beta(self, epsilon: float) -> float:
        """beta for ``epsilon`` with this model's M = (2 pi s2)^(-1/2) (Example 2).

        Raises
        ------
        ValueError
            When ``epsilon`` is below the smallest reachable 2 e ln M for this ``s2``; the
            message names epsilon, s2, that smallest epsilon and the s2 that would reach
            ``epsilon`` (:func:`min_variance_bound`).
        """
        epsilon = check_epsilon(epsilon)
        M = self.density_bound
        require_reachable(epsilon, M, f"the variance lower bound s2={self.s2!r} (M = (2 pi s2)^(-1/2) = {M:.6g})")
        return beta_from_epsilon(epsilon, M)


class LinearRegressionBetaD(_GaussianMixin, _BetaDModel):
    """beta-D-Bayes Gaussian linear regression (Example 2), sigma2 >= s2 declared in Stan.

    Parameters
    ----------
    s2 : float, default 0.01
        Strictly positive lower bound of sigma2; the density bound M = (2 pi s2)^(-1/2) and
        hence beta use this same value. With s2 < 1/(2 pi) epsilon below 2 e ln M is
        unreachable (see :func:`beta_from_epsilon`).
    prior_a, prior_b : float, default 1.0
        Inverse-gamma prior of sigma2 (truncated to [s2, inf)).
    prior_var_scale : float, default 9.0
        theta | sigma2 ~ N(0, prior_var_scale sigma2).
    backend : str, optional
    """

    model_name = "jewson2023/linear_regression"
    label = "beta-D Gaussian linear regression"
    classification = False
    diagnostic_variables = ("theta", "sigma2")

    def __init__(
        self,
        *,
        s2: float = 0.01,
        prior_a: float = 1.0,
        prior_b: float = 1.0,
        prior_var_scale: float = 9.0,
        backend: str | None = None,
    ) -> None:
        super().__init__(backend=backend)
        self._set_variance(s2, prior_a, prior_b)
        self.prior_var_scale = check_positive(prior_var_scale, "prior_var_scale")

    def layout(self, n_features: int) -> list[tuple[str, tuple[int, ...]]]:
        return [("theta", (n_features,)), ("sigma2", ())]

    def _extra_data(self, n_features: int) -> dict[str, Any]:
        return {**self._variance_data(), "prior_var_scale": self.prior_var_scale}

    def _design_data(self, X: np.ndarray) -> dict[str, Any]:
        return _qr_flag(X)

    def _extra_details(self) -> dict[str, Any]:
        return {
            **self._variance_details(),
            "prior": f"sigma2 ~ IG({self.prior_a:g}, {self.prior_b:g}) on [s2, inf), theta ~ N(0, {self.prior_var_scale:g} sigma2)",
        }

    def predict(self, params: dict[str, np.ndarray], X: Any) -> np.ndarray:
        return np.asarray(X, dtype=float) @ np.asarray(params["theta"], dtype=float).T


class NNRegressionBetaD(_GaussianMixin, _BetaDModel):
    """beta-D-Bayes neural-network Gaussian regression (Example 2), sigma2 >= s2 in Stan.

    Parameters
    ----------
    hidden : int, default 10
    prior_sd : float, default 1.0
    s2 : float, default 0.01
        As for :class:`LinearRegressionBetaD`: calibration and Stan use the same value.
    prior_a, prior_b : float, default 1.0
    n_reference : int, default 20
    backend : str, optional
    """

    model_name = "jewson2023/nn_regression"
    label = "beta-D neural-network regression"
    classification = False
    diagnostic_variables = ("f_ref", "sigma2")

    def __init__(
        self,
        *,
        hidden: int = 10,
        prior_sd: float = 1.0,
        s2: float = 0.01,
        prior_a: float = 1.0,
        prior_b: float = 1.0,
        n_reference: int = 20,
        backend: str | None = None,
    ) -> None:
        super().__init__(backend=backend)
        self.hidden = check_int(hidden, "hidden", minimum=1)
        self.prior_sd = check_positive(prior_sd, "prior_sd")
        self._set_variance(s2, prior_a, prior_b)
        self.n_reference = check_int(n_reference, "n_reference", minimum=1)

    def layout(self, n_features: int) -> list[tuple[str, tuple[int, ...]]]:
        h = self.hidden
        return [("W", (n_features, h)), ("b_in", (h,)), ("w_out", (h,)), ("b_out", ()), ("sigma2", ())]

    def _extra_data(self, n_features: int) -> dict[str, Any]:
        return {
            "H": self.hidden,
            "prior_sd": self.prior_sd,
            **self._variance_data(),
            "K": self.n_reference,
            "X_ref": reference_inputs(n_features, self.n_reference),
        }

    def _extra_details(self) -> dict[str, Any]:
        return {
            **self._variance_details(),
            "hidden_units": self.hidden,
            "activation": "tanh",
            "convergence_note": "judged on sigma2 and network outputs at public reference inputs (invariant to label switching)",
        }

    def predict(self, params: dict[str, np.ndarray], X: Any) -> np.ndarray:
        return nn_forward(np.asarray(X, dtype=float), params["W"], params["b_in"], params["w_out"], params["b_out"])


def canonical_network(params: dict[str, Any]) -> dict[str, np.ndarray]:
    """The symmetric image of a network that :class:`NNRegressionFastBetaD` samples: every unit
    with a negative output weight has its signs flipped, (w_j, b_j, v_j) -> (-w_j, -b_j, -v_j)
    (tanh is odd), and the units are sorted by their output weight, increasing. The outputs
    :func:`nn_forward` are unchanged; other entries of ``params`` are passed on. Works on one
    network or a batch (leading axis of draws)."""
    W = np.asarray(params["W"], dtype=float)
    b_in = np.asarray(params["b_in"], dtype=float)
    w_out = np.asarray(params["w_out"], dtype=float)
    sign = np.where(w_out < 0, -1.0, 1.0)
    order = np.argsort(np.abs(w_out), axis=-1, kind="stable")
    W = np.take_along_axis(W * sign[..., None, :], order[..., None, :], axis=-1)
    return {
        **params,
        "W": W,
        "b_in": np.take_along_axis(b_in * sign, order, axis=-1),
        "w_out": np.take_along_axis(np.abs(w_out), order, axis=-1),
    }


class _FastNetwork:
    """What the two networks in symmetry-free coordinates share (``stan/jewson2023/nn_*_fast.stan``):
    the public ``centre`` at which the output is sampled, its data and record entries, and the
    example's truth in canonical form."""

    centre: float

    def _set_centre(self, centre: Any) -> None:
        self.centre = check_real(centre, "centre")
        if not math.isfinite(self.centre):
            raise ValueError(f"centre must be a finite real number (a public point of the features), got {centre!r}")

    @classmethod
    def example(cls, n: int = 100, *, seed: int = 0) -> Example:
        """The standard program's example (the same records), its truth in canonical form."""
        ex = super().example(n, seed=seed)  # type: ignore[misc]
        return dataclasses.replace(ex, truth=canonical_network(ex.truth))

    def _extra_data(self, n_features: int) -> dict[str, Any]:
        return {**super()._extra_data(n_features), "x_centre": np.full(n_features, self.centre)}  # type: ignore[misc]

    def _extra_details(self) -> dict[str, Any]:
        return {
            **super()._extra_details(),  # type: ignore[misc]
            "coordinates": (
                "hidden units in canonical form (output weights positive, increasing); output bias "
                f"sampled as the output at every feature = {self.centre:g} (the same target)"
            ),
        }


class NNRegressionFastBetaD(_FastNetwork, NNRegressionBetaD):
    """:class:`NNRegressionBetaD`'s target in other coordinates (``stan/jewson2023/nn_regression_fast.stan``):
    the same posterior of the outputs and sigma2, in fewer leapfrog steps.

    Two exact changes (tests/models/test_jewson2023_fast.py): the hidden units' symmetry is
    removed by positive, increasing output weights (the 2^H H! permutations and sign flips of
    the units leave the likelihood and the iid priors unchanged, so the target restricted to one
    image is the same up to its normaliser), and the output bias is sampled as the output at
    the public point ``centre`` (a shift with unit Jacobian; the prior stays on b_out). The
    released draw is the canonical image (:func:`canonical_network`) of a draw of the standard
    program's target, a function of it, so the guarantee is the same; its predictions have the
    same distribution. Far fewer leapfrog steps per NUTS iteration where b_out was the slow
    direction (simulated d = 2 networks: 5-8x fewer at n = 1000), but not on every data set
    (Wine, d = 11, at epsilon = 1: more steps, and divergences in 2 of 10 releases with 400
    draws per chain); benchmarks/README.md, "Networks in symmetry-free coordinates".

    Parameters
    ----------
    centre : float, default 0.5
        The public point (every feature at this value) at which the output is sampled; any
        value gives the same posterior, one near the features' middle the fewest steps. 0.5 is
        the middle of the [0, 1] scaling of the paper's experiments. Never computed from data.
    hidden, prior_sd, s2, prior_a, prior_b, n_reference, backend
        As for :class:`NNRegressionBetaD`.
    """

    model_name = "jewson2023/nn_regression_fast"
    label = "beta-D neural-network regression (symmetry-free coordinates)"

    def __init__(
        self,
        *,
        hidden: int = 10,
        prior_sd: float = 1.0,
        s2: float = 0.01,
        prior_a: float = 1.0,
        prior_b: float = 1.0,
        n_reference: int = 20,
        centre: float = 0.5,
        backend: str | None = None,
    ) -> None:
        super().__init__(
            hidden=hidden,
            prior_sd=prior_sd,
            s2=s2,
            prior_a=prior_a,
            prior_b=prior_b,
            n_reference=n_reference,
            backend=backend,
        )
        self._set_centre(centre)


class NNClassifierFastBetaD(_FastNetwork, NNClassifierBetaD):
    """:class:`NNClassifierBetaD`'s target in other coordinates (``stan/jewson2023/nn_classifier_fast.stan``):
    the same posterior of the outputs, in fewer leapfrog steps.

    The same two exact changes of coordinates as :class:`NNRegressionFastBetaD` (its docstring
    gives them, the guarantee and where they are faster; tests/models/test_jewson2023_fast.py).

    Parameters
    ----------
    centre : float, default 0.5
        The public point (every feature at this value) at which the output is sampled; any
        value gives the same posterior, one near the features' middle the fewest steps. 0.5 is
        the middle of the [0, 1] scaling of the paper's experiments. Never computed from data.
    hidden, prior_sd, n_reference, backend
        As for :class:`NNClassifierBetaD`.
    """

    model_name = "jewson2023/nn_classifier_fast"
    label = "beta-D neural-network classifier (symmetry-free coordinates)"

    def __init__(
        self,
        *,
        hidden: int = 10,
        prior_sd: float = 1.0,
        n_reference: int = 20,
        centre: float = 0.5,
        backend: str | None = None,
    ) -> None:
        super().__init__(hidden=hidden, prior_sd=prior_sd, n_reference=n_reference, backend=backend)
        self._set_centre(centre)


MODELS: dict[str, type[_BetaDModel]] = {
    "logistic": LogisticRegressionBetaD,
    "nn_classifier": NNClassifierBetaD,
    "linear_regression": LinearRegressionBetaD,
    "nn_regression": NNRegressionBetaD,
    "nn_regression_fast": NNRegressionFastBetaD,
    "nn_classifier_fast": NNClassifierFastBetaD,
}

__all__ = [
    "clip_scale",
    "simulate_logistic_truth",
    "simulate_logistic_records",
    "simulate_nn_truth",
    "simulate_nn_records",
    "unit_features",
    "ASSUMPTION",
    "ATTACK_D",
    "ATTACK_D_PRIME",
    "DEFAULT_SAMPLER",
    "MODELS",
    "OPS_SAMPLER",
    "OPS_THRESHOLDS",
    "ConvergenceError",
    "GatedOPS",
    "LinearRegressionBetaD",
    "LogisticRegressionBetaD",
    "NNClassifierBetaD",
    "NNClassifierFastBetaD",
    "NNRegressionBetaD",
    "NNRegressionFastBetaD",
    "beta_from_epsilon",
    "canonical_network",
    "betad_loss_bernoulli",
    "betad_loss_normal",
    "convergence_gate_details",
    "convergence_problems",
    "epsilon_from_beta",
    "gaussian_density_bound",
    "gibbs_loss_bernoulli",
    "loss_sensitivity",
    "min_epsilon",
    "min_variance_bound",
    "nn_forward",
    "reference_inputs",
    "released_draw",
]
