"""The catalogue of the Stan noise-model function library (``stan/functions/``).

Every function that models the noise of one of the library's mechanisms, and that a user's
program may call, is listed in :data:`CATALOGUE` with its signature, the
:attr:`PrivacyRecord.mechanism <pystanprivacy.privacy.records.PrivacyRecord.mechanism>`
values it models, its density in one line, its domain and which record fields to pass.
Every other function of those files (helpers of the papers' models, data preparation) is
listed in :data:`HELPERS`; the two together are every function the files define
(``tests/models/test_noise_functions.py`` checks it, in both directions).

A program includes a file from the include path ``stan_root() / "functions"``
(:func:`functions_dir`), e.g.::

    functions {
    #include dp_noise.stanfunctions
    }

``dp_noise.stanfunctions`` includes ``log_phi.stanfunctions``, ``normal_laplace.stanfunctions``
and ``ldp.stanfunctions`` itself (Stan refuses a function defined twice, so a program that
includes ``dp_noise`` must not include those three again; :attr:`NoiseFunction.requires` says
what a function of another file needs before it).

:func:`functions_called` reads which catalogue functions a program calls (comments and string
literals do not count; ``y ~ f(...)``, ``f_lupdf(...)`` and ``f_lpdf(...)`` are calls of
``f_lpdf``; the bodies of the library's own functions, which a flattened program contains, do
not count), so a caller can check a release's mechanism against what the program models
before Stan runs.

References
----------
.. [1] Stan Development Team, "Stan Functions Reference", version 2.35 (the style of the
   entries: density, arguments, domain), and "Stan Reference Manual", Sec. "Includes" and
   "User-defined functions" (``_lpdf`` / ``_lpmf`` suffixes, ``~`` statements).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

__all__ = [
    "NoiseFunction",
    "CATALOGUE",
    "HELPERS",
    "functions_called",
    "functions_dir",
    "defined_functions",
    "strip_comments_and_strings",
]

#: PrivacyRecord.mechanism values of the additive mechanisms (Laplace, Gaussian)
_LAPLACE = frozenset({"laplace"})
_GAUSSIAN = frozenset({"gaussian", "analytic_gaussian"})
_ADDITIVE = _LAPLACE | _GAUSSIAN


@dataclass(frozen=True)
class NoiseFunction:
    """One function of the Stan noise-model library.

    Parameters
    ----------
    name : str
        The Stan name, e.g. ``"normal_laplace_lpdf"`` (called as ``y ~ normal_laplace(...)``).
    file : str
        The include file that defines it, relative to :func:`functions_dir`.
    signature : str
        Its Stan signature, e.g. ``"real normal_laplace_lpdf(real y | real mu, real sigma, real b)"``.
    mechanisms : frozenset of str
        The ``PrivacyRecord.mechanism`` values of the releases whose noise it models.
    density : str
        Its density (or value) in one line of maths.
    domain : str
        The arguments it is defined for.
    doc : str
        Arguments, and which record fields to pass for which argument.
    requires : tuple of str
        Include files that must come before ``file`` (those ``file`` does not include itself).
    """

    name: str
    file: str
    signature: str
    mechanisms: frozenset[str]
    density: str
    domain: str
    doc: str
    requires: tuple[str, ...] = ()


def _entries(*items: NoiseFunction) -> Mapping[str, NoiseFunction]:
    out: dict[str, NoiseFunction] = {}
    for item in items:
        if item.name in out:
            raise RuntimeError(f"catalogue entry {item.name!r} is listed twice")
        out[item.name] = item
    return MappingProxyType(out)


_LOG_PHI = ("log_phi.stanfunctions",)
_DP = "dp_noise.stanfunctions"

#: name -> :class:`NoiseFunction`, every noise-model function of ``stan/functions/``
CATALOGUE: Mapping[str, NoiseFunction] = _entries(
    # ------------------------------------------------------------ existing (the papers' models)
    NoiseFunction(
        name="normal_laplace_lpdf",
        file="normal_laplace.stanfunctions",
        signature="real normal_laplace_lpdf(real y | real mu, real sigma, real b)",
        mechanisms=_LAPLACE,
        density="log ∫ N(s | mu, sigma) Laplace(y | s, b) ds = -log(2b) + r²/2 + log[e^(-zr) Φ(z-r) + e^(zr) Φ(-z-r)],"
        " z = (y-mu)/sigma, r = sigma/b",
        domain="y, mu real; sigma >= 0 (sigma = 0: the Laplace density); b > 0",
        doc="Laplace noise of scale b on an (approximately) normal statistic s ~ N(mu, sigma): "
        "y = release value, b = record.scale. Bernstein & Sheldon (2018) Sec. 3.",
        requires=_LOG_PHI,
    ),
    NoiseFunction(
        name="truncated_exponential_moments",
        file="expfam_clt.stanfunctions",
        signature="vector truncated_exponential_moments(real theta, real v, real w)",
        mechanisms=_ADDITIVE,
        density="[E x, Var x]' for x ~ Exponential(theta) truncated to [v, w]: "
        "[v + d h(theta d), d² g(theta d)]', d = w - v, h(x) = 1/x - 1/expm1(x), g(x) = 1/x² - 1/(4 sinh²(x/2))",
        domain="theta > 0; 0 <= v < w <= +inf",
        doc="Moments of the truncated exponential (Bernstein & Sheldon 2018, Lemma 1); v, w = record.bounds.",
    ),
    NoiseFunction(
        name="rs_clt_truncated_exponential",
        file="expfam_clt.stanfunctions",
        signature="vector rs_clt_truncated_exponential(real theta, real n, real v, real w)",
        mechanisms=_ADDITIVE,
        density="[m, V]' of the random-sum CLT: m = n q mu, V = n q Sigma + n q (1-q) mu², "
        "q = e^(-theta v) - e^(-theta w), (mu, Sigma) = truncated_exponential_moments",
        domain="theta > 0; n > 0; 0 <= v < w <= +inf",
        doc="Normal approximation N(m, V) of the sum of the n records of Exponential(theta) that fall in "
        "[v, w] (Bernstein & Sheldon 2018, Proposition 1, Algorithm 3): n = record.n, (v, w) = "
        "record.bounds; pair it with normal_laplace_lpdf (Laplace) or normal_lpdf with "
        "sqrt(V + scale²) (Gaussian).",
    ),
    NoiseFunction(
        name="multinomial_clt_noisy_lpdf",
        file="expfam_clt.stanfunctions",
        signature="real multinomial_clt_noisy_lpdf(vector y | vector theta, real n, vector noise_var)",
        mechanisms=_ADDITIVE,
        density="log N(y | n theta, n (diag(theta) - theta theta') + diag(noise_var))",
        domain="y real K-vector; theta a K-simplex; n > 0; noise_var > 0 elementwise",
        doc="Noisy multinomial counts under the CLT with Gaussian noise of variances noise_var "
        "(scale² per coordinate for Gaussian noise; Laplace(b) noise as the scale mixture "
        "noise_var ~ Exponential(1 / (2 b²)), b = record.scale); n = record.n.",
    ),
    NoiseFunction(
        name="ldp_gauss_laplace_loglik",
        file="ldp.stanfunctions",
        signature="real ldp_gauss_laplace_loglik(vector z_mid, int n_lo, real sum_lo, int n_hi, real sum_hi, "
        "real mu, real sigma, real a, real b, real beta)",
        mechanisms=_LAPLACE,
        density="Σ_i log ∫ N(x | mu, sigma) Laplace(z_i | clip(x, a, b), beta) dx",
        domain="sigma > 0; a < b; beta > 0; z_mid in (a, b), n_lo/sum_lo of the reports <= a, n_hi/sum_hi of those >= b",
        doc="Clipped-Laplace local reports of normal data (Kulkarni et al. 2022, Eq. 6, 22-28): "
        "(a, b) = record.bounds, beta = record.scale; the reports split by "
        "ldp_group_count / ldp_group_sum / ldp_mid_values.",
        requires=_LOG_PHI,
    ),
    NoiseFunction(
        name="ldp_exp_laplace_loglik",
        file="ldp.stanfunctions",
        signature="real ldp_exp_laplace_loglik(vector z_mid, int n_lo, real sum_lo, int n_hi, real sum_hi, "
        "real theta, real b, real beta)",
        mechanisms=_LAPLACE,
        density="Σ_i log ∫ Exponential(x | theta) Laplace(z_i | clip(x, 0, b), beta) dx",
        domain="theta > 0; b > 0; beta > 0; z_mid in (0, b), n_lo/sum_lo of the reports <= 0, n_hi/sum_hi of those >= b",
        doc="Clipped-Laplace local reports of exponential data (Kulkarni et al. 2022, Eq. 29-30): "
        "(0, b) = record.bounds, beta = record.scale.",
        requires=_LOG_PHI,
    ),
    NoiseFunction(
        name="ldp_oue_loglik",
        file="ldp.stanfunctions",
        signature="real ldp_oue_loglik(matrix Z, matrix Zc, vector w, vector theta, real eps)",
        mechanisms=frozenset({"oue"}),
        density="Σ_i w_i log((1 - z_i·theta) + e^eps z_i·theta)  (the OUE likelihood up to a constant)",
        domain="Z rows in {0,1}^d, neither all 0 nor all 1; Zc = 1 - Z; w >= 0; theta a d-simplex; eps > 0",
        doc="Histogram from optimal-unary-encoding reports (Kulkarni et al. 2022, Eq. 31-33), distinct "
        "reports Z weighted by their counts w; eps = record.epsilon.",
        requires=_LOG_PHI,
    ),
    NoiseFunction(
        name="ldp_ss_normal_lpdf",
        file="ldp_regression.stanfunctions",
        signature="real ldp_ss_normal_lpdf(vector z_sum | int n, vector mu, matrix S, vector noise_var)",
        mechanisms=_GAUSSIAN,
        density="log N(z_sum | n mu, n (S + diag(noise_var)))",
        domain="n >= 1; S symmetric positive semi-definite with S + diag(noise_var) positive definite; noise_var > 0",
        doc="Sum of n per-user Gaussian-perturbed statistics under the CLT (Kulkarni et al. 2022, "
        "Eq. 3): n = record.n, noise_var = (per-coordinate noise sd)², e.g. "
        "record.details['noise_sd']².",
    ),
    NoiseFunction(
        name="ldp_features_lpdf",
        file="ldp_regression.stanfunctions",
        signature="real ldp_features_lpdf(matrix zx | matrix Lz)",
        mechanisms=_GAUSSIAN,
        density="Σ_i log N(zx_i | 0, Lz Lz')",
        domain="Lz lower-triangular Cholesky factor of Sigma + sigma_x² I",
        doc="Gaussian-perturbed features zx = x + N(0, sigma_x² I), x ~ N(0, Sigma) (Kulkarni et al. 2022, Eq. 35-36).",
    ),
    NoiseFunction(
        name="ldp_features_scatter_lpdf",
        file="ldp_regression.stanfunctions",
        signature="real ldp_features_scatter_lpdf(matrix Sx | int n, matrix Lz)",
        mechanisms=_GAUSSIAN,
        density="-n d/2 log(2π) - n log|Lz| - tr((Lz Lz')^-1 Sx)/2",
        domain="Sx = Σ_i zx_i zx_i'; n >= 1; Lz lower-triangular Cholesky factor",
        doc="ldp_features_lpdf through the scatter matrix (O(d³) whatever n).",
    ),
    NoiseFunction(
        name="ldp_linreg_inputs_lpdf",
        file="ldp_regression.stanfunctions",
        signature="real ldp_linreg_inputs_lpdf(vector zy | matrix zx, matrix Sigma, vector theta, real sigma, "
        "real sigma_x, real sigma_y)",
        mechanisms=_GAUSSIAN,
        density="Σ_i log N(zx_i | 0, Sigma + sigma_x² I) N(zy_i | theta'h_i, theta'A theta + sigma² + sigma_y²)",
        domain="Sigma positive definite; sigma, sigma_x, sigma_y > 0",
        doc="Linear regression from Gaussian-perturbed inputs and targets (Kulkarni et al. 2022, "
        "Eq. 34-41): sigma_x, sigma_y the noise sds of the features' and targets' releases.",
    ),
    NoiseFunction(
        name="ldp_linreg_inputs_scatter_lpdf",
        file="ldp_regression.stanfunctions",
        signature="real ldp_linreg_inputs_scatter_lpdf(matrix S | int n, matrix Sigma, vector theta, real sigma, "
        "real sigma_x, real sigma_y)",
        mechanisms=_GAUSSIAN,
        density="Σ_i log N(u_i | 0, C), u_i = (zx_i, zy_i), through S = Σ_i u_i u_i'",
        domain="as ldp_linreg_inputs_lpdf; n >= 1",
        doc="ldp_linreg_inputs_lpdf through the scatter matrix of (zx, zy) (O(d³) whatever n).",
    ),
    NoiseFunction(
        name="ldp_logreg_inputs_lpmf",
        file="ldp_regression.stanfunctions",
        signature="real ldp_logreg_inputs_lpmf(array[] int zy | matrix zx, matrix Sigma, vector theta, "
        "real sigma_x, real p_keep, vector b)",
        mechanisms=frozenset({"analytic_gaussian+randomized_response"}),
        density="ldp_features_lpdf(zx) + Σ_i log Bernoulli(zy_i | (1 - p_keep) + (2 p_keep - 1) q_i), "
        "q_i the Chebyshev approximation of P(y_i = 1 | zx_i)",
        domain="zy in {0, 1}; Sigma positive definite; sigma_x > 0; p_keep in (1/2, 1)",
        doc="Logistic regression from Gaussian-perturbed features and randomised-response labels "
        "(Kulkarni et al. 2022, Eq. 42-44): p_keep = e^eps / (1 + e^eps) of the labels' epsilon.",
    ),
    NoiseFunction(
        name="ldp_logreg_inputs_scatter_lpmf",
        file="ldp_regression.stanfunctions",
        signature="real ldp_logreg_inputs_scatter_lpmf(array[] int zy | matrix zx, matrix Sx, matrix Sigma, "
        "vector theta, real sigma_x, real p_keep, vector b)",
        mechanisms=frozenset({"analytic_gaussian+randomized_response"}),
        density="as ldp_logreg_inputs_lpmf, the features' term through Sx = zx' zx",
        domain="as ldp_logreg_inputs_lpmf",
        doc="ldp_logreg_inputs_lpmf with the features' term in O(d³).",
    ),
    # ------------------------------------------------------------ dp_noise.stanfunctions (issue 51)
    NoiseFunction(
        name="dp_laplace_clt_lpdf",
        file=_DP,
        signature="real dp_laplace_clt_lpdf(real y | real mu, real sigma, real scale)",
        mechanisms=_LAPLACE,
        density="log ∫ N(s | mu, sigma) Laplace(y | s, scale) ds",
        domain="y, mu real; sigma >= 0 (0: the Laplace density); scale > 0",
        doc="Laplace noise on a sum s that is normal under a CLT (mu = n E[x], sigma = sqrt(n Var[x]), "
        "n = dp_n, or the [m, V] of rs_clt_truncated_exponential): y = dp_y, scale = dp_scale. "
        "Seeded (continuous-noise) Laplace releases; a secure release's discrete noise on a grid "
        "much finer than scale is close to it.",
    ),
    NoiseFunction(
        name="dp_gaussian_clt_lpdf",
        file=_DP,
        signature="real dp_gaussian_clt_lpdf(real y | real mu, real sigma, real scale)",
        mechanisms=_GAUSSIAN,
        density="log N(y | mu, sqrt(sigma² + scale²))",
        domain="y, mu real; sigma >= 0; scale > 0",
        doc="Gaussian noise on a sum that is normal under a CLT: y = dp_y, scale = dp_scale (the noise sd).",
    ),
    NoiseFunction(
        name="dp_discrete_laplace_lpmf",
        file=_DP,
        signature="real dp_discrete_laplace_lpmf(int y | int x, real scale)",
        mechanisms=_LAPLACE,
        density="log[tanh(1 / (2 scale)) exp(-|y - x| / scale)],  y in Z",
        domain="y, x integers; scale > 0",
        doc="Secure Laplace release of an integer count (integer input: grid 1, scale = floor(sensitivity) / "
        "epsilon): y = dp_y (an int), x the true count, scale = dp_scale.",
    ),
    NoiseFunction(
        name="dp_discrete_gaussian_lpmf",
        file=_DP,
        signature="real dp_discrete_gaussian_lpmf(int y | int x, real scale)",
        mechanisms=_GAUSSIAN,
        density="-(y - x)² / (2 scale²) - log Σ_{k in Z} exp(-k² / (2 scale²)),  y in Z",
        domain="y, x integers; scale > 0",
        doc="Discrete Gaussian noise on an integer count on grid 1 (a secure Gaussian release of integer "
        "input whose record.details['grid'] is 1): scale = dp_scale.",
    ),
    NoiseFunction(
        name="dp_discrete_laplace_censored_lpmf",
        file=_DP,
        signature="real dp_discrete_laplace_censored_lpmf(int y | int x, real scale)",
        mechanisms=_LAPLACE,
        density="y >= 1: log[tanh(1 / (2 scale)) exp(-|y - x| / scale)];  y = 0: log P(K <= -x), K ~ DLap(scale)",
        domain="y >= 0 and x integers; scale > 0",
        doc="A count released clamped at zero, y = max(0, x + K) (OpenDP 0.16's dp.len() with signed=False; "
        "record.details['clamped']): y = dp_y (an int), x the true count, scale = dp_scale.",
    ),
    NoiseFunction(
        name="dp_discrete_gaussian_censored_lpmf",
        file=_DP,
        signature="real dp_discrete_gaussian_censored_lpmf(int y | int x, real scale)",
        mechanisms=_GAUSSIAN,
        density="y >= 1: -(y - x)² / (2 scale²) - log Σ_k exp(-k² / (2 scale²));  y = 0: log P(K <= -x)",
        domain="y >= 0 and x integers; scale > 0",
        doc="A count released clamped at zero under discrete Gaussian noise, y = max(0, x + K) (OpenDP's "
        "dp.len() under zCDP): y = dp_y (an int), x the true count, scale = dp_scale.",
    ),
    NoiseFunction(
        name="dp_discrete_laplace_grid_lpdf",
        file=_DP,
        signature="real dp_discrete_laplace_grid_lpdf(real y | real mu, real scale, real grid)",
        mechanisms=_LAPLACE,
        density="log[tanh(grid / (2 scale)) exp(-|y - mu| / scale)],  (y - mu) / grid in Z  (a mass, not a density)",
        domain="scale > 0; grid > 0; (y - mu) / grid an integer",
        doc="Secure Laplace release on any grid: y = dp_y, mu the true value on the grid, scale = dp_scale, "
        "grid = record.details['grid'].",
    ),
    NoiseFunction(
        name="dp_discrete_gaussian_grid_lpdf",
        file=_DP,
        signature="real dp_discrete_gaussian_grid_lpdf(real y | real mu, real scale, real grid)",
        mechanisms=_GAUSSIAN,
        density="-(y - mu)² / (2 scale²) - log Σ_{k in Z} exp(-k² grid² / (2 scale²)),  (y - mu) / grid in Z",
        domain="scale > 0; grid > 0; (y - mu) / grid an integer",
        doc="Secure Gaussian release on any grid: scale = dp_scale (the sigma), grid = record.details['grid'].",
    ),
    NoiseFunction(
        name="dp_poisson_laplace_lpdf",
        file=_DP,
        signature="real dp_poisson_laplace_lpdf(real y | real lambda, real scale, int max_count)",
        mechanisms=_LAPLACE,
        density="log Σ_{x=0}^{max_count} Poisson(x | lambda) Laplace(y | x, scale)",
        domain="lambda > 0; scale > 0; max_count >= 0 (a public bound; the sum omits P(x > max_count))",
        doc="Laplace-noised count of a Poisson count (seeded release): y = dp_y, scale = dp_scale.",
    ),
    NoiseFunction(
        name="dp_poisson_gaussian_lpdf",
        file=_DP,
        signature="real dp_poisson_gaussian_lpdf(real y | real lambda, real scale, int max_count)",
        mechanisms=_GAUSSIAN,
        density="log Σ_{x=0}^{max_count} Poisson(x | lambda) N(y | x, scale)",
        domain="lambda > 0; scale > 0; max_count >= 0",
        doc="Gaussian-noised count of a Poisson count (seeded release): scale = dp_scale.",
    ),
    NoiseFunction(
        name="dp_poisson_discrete_laplace_lpdf",
        file=_DP,
        signature="real dp_poisson_discrete_laplace_lpdf(real y | real lambda, real scale, real grid, int max_count)",
        mechanisms=_LAPLACE,
        density="log Σ_{x=0}^{max_count} Poisson(x | lambda) tanh(grid / (2 scale)) exp(-|y - x| / scale)",
        domain="lambda > 0; scale > 0; grid = 2^-j (j >= 0); y on the grid; max_count >= 0",
        doc="Secure Laplace release of a Poisson count (integer input): scale = dp_scale, "
        "grid = record.details['grid'] (1).",
    ),
    NoiseFunction(
        name="dp_poisson_discrete_gaussian_lpdf",
        file=_DP,
        signature="real dp_poisson_discrete_gaussian_lpdf(real y | real lambda, real scale, real grid, int max_count)",
        mechanisms=_GAUSSIAN,
        density="log Σ_{x=0}^{max_count} Poisson(x | lambda) N_{grid Z}(y - x | scale)",
        domain="lambda > 0; scale > 0; grid = 2^-j (j >= 0); y on the grid; max_count >= 0",
        doc="Secure Gaussian release of a Poisson count (integer input): scale = dp_scale, "
        "grid = record.details['grid'].",
    ),
    NoiseFunction(
        name="dp_binomial_laplace_lpdf",
        file=_DP,
        signature="real dp_binomial_laplace_lpdf(real y | int n, real theta, real scale)",
        mechanisms=_LAPLACE,
        density="log Σ_{x=0}^{n} Binomial(x | n, theta) Laplace(y | x, scale)",
        domain="n >= 0; 0 < theta < 1; scale > 0",
        doc="Laplace-noised count of a binomial count (seeded release): n = dp_n, scale = dp_scale.",
    ),
    NoiseFunction(
        name="dp_binomial_gaussian_lpdf",
        file=_DP,
        signature="real dp_binomial_gaussian_lpdf(real y | int n, real theta, real scale)",
        mechanisms=_GAUSSIAN,
        density="log Σ_{x=0}^{n} Binomial(x | n, theta) N(y | x, scale)",
        domain="n >= 0; 0 < theta < 1; scale > 0",
        doc="Gaussian-noised count of a binomial count (seeded release): n = dp_n, scale = dp_scale.",
    ),
    NoiseFunction(
        name="dp_binomial_discrete_laplace_lpdf",
        file=_DP,
        signature="real dp_binomial_discrete_laplace_lpdf(real y | int n, real theta, real scale, real grid)",
        mechanisms=_LAPLACE,
        density="log Σ_{x=0}^{n} Binomial(x | n, theta) tanh(grid / (2 scale)) exp(-|y - x| / scale)",
        domain="n >= 0; 0 < theta < 1; scale > 0; grid = 2^-j (j >= 0); y on the grid",
        doc="Secure Laplace release of a binomial count (integer input): n = dp_n, scale = dp_scale, "
        "grid = record.details['grid'].",
    ),
    NoiseFunction(
        name="dp_binomial_discrete_gaussian_lpdf",
        file=_DP,
        signature="real dp_binomial_discrete_gaussian_lpdf(real y | int n, real theta, real scale, real grid)",
        mechanisms=_GAUSSIAN,
        density="log Σ_{x=0}^{n} Binomial(x | n, theta) N_{grid Z}(y - x | scale)",
        domain="n >= 0; 0 < theta < 1; scale > 0; grid = 2^-j (j >= 0); y on the grid",
        doc="Secure Gaussian release of a binomial count (integer input): n = dp_n, scale = dp_scale, "
        "grid = record.details['grid'].",
    ),
    NoiseFunction(
        name="dp_binomial_laplace_weights",
        file=_DP,
        signature="vector dp_binomial_laplace_weights(real y, int n, real scale)",
        mechanisms=_LAPLACE,
        density="log w_{s+1} = log C(n, s) + log Laplace(y | s, scale),  s = 0..n",
        domain="n >= 0; scale > 0",
        doc="The theta-free terms of dp_binomial_laplace_lpdf, computed once in transformed data "
        "(seeded Laplace release of a binomial count): y = dp_y, n = dp_n, scale = dp_scale; "
        "pass the result to dp_binomial_from_weights.",
    ),
    NoiseFunction(
        name="dp_binomial_from_weights",
        file=_DP,
        signature="real dp_binomial_from_weights(vector log_w, int n, real theta)",
        mechanisms=_ADDITIVE,
        density="log Σ_{s=0}^{n} w_{s+1} theta^s (1 - theta)^(n-s) = n log(1 - theta) + "
        "log Σ_s exp(log_w_{s+1} + s logit(theta))",
        domain="n >= 0; log_w has n + 1 elements; 0 < theta < 1",
        doc="A binomial count summed out against precomputed log weights log C(n, s) + log p(y | s) "
        "(e.g. dp_binomial_laplace_weights): no log-gamma per evaluation; n = dp_n. The mechanism is "
        "the one the weights model.",
    ),
    NoiseFunction(
        name="dp_randomized_response_lpmf",
        file=_DP,
        signature="real dp_randomized_response_lpmf(array[] int z | real p, real epsilon)",
        mechanisms=frozenset({"randomized_response"}),
        density="Σ_i log Bernoulli(z_i | (1 - k) + (2k - 1) p),  k = e^epsilon / (1 + e^epsilon)",
        domain="z_i in {0, 1}; 0 <= p <= 1; epsilon > 0",
        doc="Randomised-response reports of bits x_i ~ Bernoulli(p): z = dp_y, epsilon = dp_epsilon.",
    ),
    NoiseFunction(
        name="dp_oue_lpmf",
        file=_DP,
        signature="real dp_oue_lpmf(array[,] int Z | vector theta, real epsilon)",
        mechanisms=frozenset({"oue"}),
        density="Σ_i log Σ_k theta_k (1/2) Π_{j != k} q^{Z_ij} (1 - q)^{1 - Z_ij},  q = 1 / (1 + e^epsilon)",
        domain="Z an N x d array of bits; theta a d-simplex; epsilon > 0",
        doc="Optimal-unary-encoding reports of categories c_i ~ Categorical(theta): Z = dp_y, epsilon = dp_epsilon.",
    ),
    NoiseFunction(
        name="dp_clipped_laplace_normal_lpdf",
        file=_DP,
        signature="real dp_clipped_laplace_normal_lpdf(vector z | real mu, real sigma, real lo, real hi, real scale)",
        mechanisms=_LAPLACE,
        density="Σ_i log ∫ N(x | mu, sigma) Laplace(z_i | clip(x, lo, hi), scale) dx",
        domain="sigma > 0; lo < hi; scale > 0",
        doc="Clipped-Laplace local reports (clipped_laplace_reports) of normal data: z = dp_y, "
        "(lo, hi) = (dp_lower, dp_upper), scale = dp_scale.",
    ),
    NoiseFunction(
        name="dp_clipped_laplace_exponential_lpdf",
        file=_DP,
        signature="real dp_clipped_laplace_exponential_lpdf(vector z | real theta, real lo, real hi, real scale)",
        mechanisms=_LAPLACE,
        density="Σ_i log ∫ Exponential(x | theta) Laplace(z_i | clip(x, 0, hi), scale) dx",
        domain="theta > 0; lo = 0 < hi; scale > 0",
        doc="Clipped-Laplace local reports of exponential data: z = dp_y, (lo, hi) = (dp_lower, dp_upper), "
        "scale = dp_scale.",
    ),
    NoiseFunction(
        name="dp_clipped_gaussian_normal_lpdf",
        file=_DP,
        signature="real dp_clipped_gaussian_normal_lpdf(vector z | real mu, real sigma, real lo, real hi, real scale)",
        mechanisms=_GAUSSIAN,
        density="Σ_i log ∫ N(x | mu, sigma) N(z_i | clip(x, lo, hi), scale) dx",
        domain="sigma > 0; lo < hi; scale > 0",
        doc="Clipped-Gaussian local reports (gaussian_reports of one coordinate, clipped to [-radius, radius], "
        "radius = record.details['clipping']['radius']) of normal data: z = dp_y, scale = dp_scale.",
    ),
)

#: every other function of ``stan/functions/`` (not a noise model of its own): name -> why
HELPERS: Mapping[str, str] = MappingProxyType(
    {
        # log_phi.stanfunctions
        "logPhi": "log Φ(x), accurate in value and derivative (used by the noise models)",
        # betad.stanfunctions (Jewson et al. 2023: the OPS target, not a noise model)
        "betad_positions": "Jewson et al. 2023 βD loss (OPS target)",
        "betad_bernoulli_logit": "Jewson et al. 2023 βD loss (OPS target)",
        "betad_normal": "Jewson et al. 2023 βD loss (OPS target)",
        "nn_forward": "Jewson et al. 2023 network output",
        # hmm.stanfunctions (Foulds et al. 2016 HMM)
        **{
            name: "Foulds et al. 2016 naive-Bayes HMM"
            for name in (
                "log_matprod_exp",
                "alr_log_simplexes",
                "emission_loglik",
                "log_transition",
                "hmm_forward_total",
                "hmm_forward_all",
                "hmm_log_state_prob",
                "hmm_ffbs_rng",
                "truncated_log_simplexes",
            )
        },
        # ldp.stanfunctions internals and data preparation
        **{
            name: "ldp.stanfunctions internal"
            for name in ("ldp_log_Phi_diff", "ldp_log_add_exp", "ldp_gauss_laplace_mid", "ldp_exp_laplace_mid")
        },
        **{
            name: "ldp.stanfunctions data preparation (transformed data)"
            for name in ("ldp_group_count", "ldp_group_sum", "ldp_mid_values", "ldp_segment_starts")
        },
        # dp_noise.stanfunctions internals (dpi_: not part of the stable interface)
        **{
            name: "dp_noise.stanfunctions internal"
            for name in (
                "dpi_bad_scale",
                "dpi_bad_count_grid",
                "dpi_off_grid",
                "dpi_discrete_gaussian_log_norm",
                "dpi_discrete_gaussian_log_tail",
                "dpi_poisson_log_pmf",
                "dpi_binomial_log_pmf",
                "dpi_counts",
                "dpi_noise_log",
            )
        },
        # ldp_regression.stanfunctions: moments of the regression statistics (not noise)
        **{
            name: "Kulkarni et al. 2022 regression statistics' layout and moments"
            for name in (
                "ldp_pair_count",
                "ldp_pair_index",
                "ldp_pair_weight",
                "ldp_linreg_joint_cov",
                "ldp_quadratic_mean",
                "ldp_quadratic_cov",
                "ldp_logit_stein",
                "ldp_logreg_ss_mean",
                "ldp_logreg_ss_cov",
            )
        },
    }
)


def functions_dir() -> Path:
    """The include path of the function library: ``stan_root() / "functions"``."""
    from .sampling.stan import stan_root  # the models' folder (installed package or checkout)

    return stan_root() / "functions"


_TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"', re.DOTALL)


def strip_comments_and_strings(program_code: str) -> str:
    """``program_code`` with every ``//`` and ``/* */`` comment blanked (newlines kept) and
    every string literal emptied (``""``), read left to right so that a comment marker inside
    a string, or a quote inside a comment, is not taken for one."""
    if not isinstance(program_code, str):
        raise TypeError(f"program_code must be a str, got {type(program_code).__name__}")

    def blank(match: re.Match[str]) -> str:
        text = match.group(0)
        if text.startswith('"'):
            return '""'
        return " " + "\n" * text.count("\n")

    return _TOKENS.sub(blank, program_code)


#: return types that can precede a function's name in its definition or declaration
_TYPE_WORDS = frozenset(
    {
        "real",
        "int",
        "vector",
        "row_vector",
        "matrix",
        "void",
        "complex",
        "complex_vector",
        "complex_row_vector",
        "complex_matrix",
    }
)
_CALL = re.compile(r"(~\s*)?\b([A-Za-z][A-Za-z0-9_]*)\s*\(")
_PREVIOUS = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|\S)\s*$")


def _is_definition(code: str, start: int) -> bool:
    # a return type (a type word, or ")" closing tuple(...)) right before the name
    previous = _PREVIOUS.search(code, 0, start)
    return previous is not None and (previous.group(1) in _TYPE_WORDS or previous.group(1) == ")")


def _is_library_function(name: str) -> bool:
    return name in CATALOGUE or name in HELPERS


def _end_of_body(code: str, start: int) -> int:
    """Index just past the body ``{...}`` of the definition whose parameter list opens at
    ``start - 1`` (or past the ``;`` of a forward declaration)."""
    depth, i = 1, start
    while i < len(code) and depth:  # the parameter list (may hold tuple(...) types)
        depth += {"(": 1, ")": -1}.get(code[i], 0)
        i += 1
    while i < len(code) and code[i] not in "{;":
        i += 1
    if i >= len(code) or code[i] == ";":
        return i + 1
    depth, i = 1, i + 1
    while i < len(code) and depth:
        depth += {"{": 1, "}": -1}.get(code[i], 0)
        i += 1
    return i


def functions_called(program_code: str) -> set[str]:
    """The :data:`CATALOGUE` functions that a Stan program calls.

    Comments and string literals are removed first (:func:`strip_comments_and_strings`);
    a function's definition or forward declaration is not a call, nor is anything in the body
    of a library function's definition (:data:`CATALOGUE`, :data:`HELPERS`: a flattened
    program holds them). ``y ~ f(...)`` is a call of
    ``f_lpdf`` or ``f_lpmf``; ``f_lupdf(...)`` / ``f_lupmf(...)`` of ``f_lpdf`` / ``f_lpmf``.

    Parameters
    ----------
    program_code : str
        The text of a Stan program (its ``#include`` lines are not followed).

    Returns
    -------
    set of str
        Names of :data:`CATALOGUE` entries.
    """
    code = strip_comments_and_strings(program_code)
    found: set[str] = set()
    skip_to = 0
    for match in _CALL.finditer(code):
        if match.start() < skip_to:
            continue
        tilde, name = match.group(1), match.group(2)
        if tilde is None and _is_definition(code, match.start(2)):
            if _is_library_function(name):  # a flattened program: the library's own body is no call
                skip_to = _end_of_body(code, match.end())
            continue
        if tilde is not None:
            candidates = (f"{name}_lpdf", f"{name}_lpmf")
        elif name.endswith(("_lupdf", "_lupmf")):
            candidates = (name[:-6] + "_lp" + name[-2:],)
        else:
            candidates = (name,)
        found.update(c for c in candidates if c in CATALOGUE)
    return found


_TYPE_ALTERNATIVES = "|".join(sorted(_TYPE_WORDS))
_DEFINITION = re.compile(
    rf"^[ \t]*(?:(?:array\s*\[[ ,]*\]\s*)?(?:data\s+)?(?:{_TYPE_ALTERNATIVES})|tuple\s*\([^)]*\))\s+([A-Za-z][A-Za-z0-9_]*)\s*\(",
    re.MULTILINE,
)


def defined_functions(path: str | Path) -> set[str]:
    """Names of the functions a ``.stanfunctions`` file defines (its definitions at the start of
    a line; comments ignored)."""
    text = strip_comments_and_strings(Path(path).read_text(encoding="utf-8"))
    return set(_DEFINITION.findall(text))
