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

``dp_noise.stanfunctions`` includes ``log_phi.stanfunctions`` and
``normal_laplace.stanfunctions`` itself (Stan refuses a function defined twice, so a program
that includes ``dp_noise`` must not include those two again; :attr:`NoiseFunction.requires`
says what each function needs).

:func:`functions_called` reads which catalogue functions a program calls (comments and string
literals do not count; ``y ~ f(...)``, ``f_lupdf(...)`` and ``f_lpdf(...)`` are calls of
``f_lpdf``), so a caller can check a release's mechanism against what the program models
before Stan runs.

References
----------
.. [1] Stan Development Team, "Stan Functions Reference", version 2.35 (the style of the
   entries: density, arguments, domain), and "Stan Reference Manual", Sec. "Includes" and
   "User-defined functions" (``_lpdf`` / ``_lpmf`` suffixes, ``~`` statements).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

__all__ = ["NoiseFunction", "CATALOGUE", "HELPERS", "functions_called", "functions_dir",
           "defined_functions", "strip_comments_and_strings"]

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

#: name -> :class:`NoiseFunction`, every noise-model function of ``stan/functions/``
CATALOGUE: Mapping[str, NoiseFunction] = _entries(
    # ------------------------------------------------------------ existing (the papers' models)
    NoiseFunction(
        name="normal_laplace_lpdf", file="normal_laplace.stanfunctions",
        signature="real normal_laplace_lpdf(real y | real mu, real sigma, real b)",
        mechanisms=_LAPLACE,
        density="log ∫ N(s | mu, sigma) Laplace(y | s, b) ds = -log(2b) + r²/2 + log[e^(-zr) Φ(z-r) + e^(zr) Φ(-z-r)],"
                " z = (y-mu)/sigma, r = sigma/b",
        domain="y, mu real; sigma >= 0 (sigma = 0: the Laplace density); b > 0",
        doc="Laplace noise of scale b on an (approximately) normal statistic s ~ N(mu, sigma): "
            "y = release value, b = record.scale. Bernstein & Sheldon (2018) Sec. 3.",
        requires=_LOG_PHI),
    NoiseFunction(
        name="truncated_exponential_moments", file="expfam_clt.stanfunctions",
        signature="vector truncated_exponential_moments(real theta, real v, real w)",
        mechanisms=_ADDITIVE,
        density="[E x, Var x]' for x ~ Exponential(theta) truncated to [v, w]: "
                "[v + d h(theta d), d² g(theta d)]', d = w - v, h(x) = 1/x - 1/expm1(x), g(x) = 1/x² - 1/(4 sinh²(x/2))",
        domain="theta > 0; 0 <= v < w <= +inf",
        doc="Moments of the truncated exponential (Bernstein & Sheldon 2018, Lemma 1); "
            "v, w = record.bounds."),
    NoiseFunction(
        name="rs_clt_truncated_exponential", file="expfam_clt.stanfunctions",
        signature="vector rs_clt_truncated_exponential(real theta, real n, real v, real w)",
        mechanisms=_ADDITIVE,
        density="[m, V]' of the random-sum CLT: m = n q mu, V = n q Sigma + n q (1-q) mu², "
                "q = e^(-theta v) - e^(-theta w), (mu, Sigma) = truncated_exponential_moments",
        domain="theta > 0; n > 0; 0 <= v < w <= +inf",
        doc="Normal approximation N(m, V) of the sum of the n records of Exponential(theta) that fall in "
            "[v, w] (Bernstein & Sheldon 2018, Proposition 1, Algorithm 3): n = record.n, (v, w) = "
            "record.bounds; pair it with normal_laplace_lpdf (Laplace) or normal_lpdf with "
            "sqrt(V + scale²) (Gaussian)."),
    NoiseFunction(
        name="multinomial_clt_noisy_lpdf", file="expfam_clt.stanfunctions",
        signature="real multinomial_clt_noisy_lpdf(vector y | vector theta, real n, vector noise_var)",
        mechanisms=_ADDITIVE,
        density="log N(y | n theta, n (diag(theta) - theta theta') + diag(noise_var))",
        domain="y real K-vector; theta a K-simplex; n > 0; noise_var > 0 elementwise",
        doc="Noisy multinomial counts under the CLT with Gaussian noise of variances noise_var "
            "(scale² per coordinate for Gaussian noise; Laplace(b) noise as the scale mixture "
            "noise_var ~ Exponential(1 / (2 b²)), b = record.scale); n = record.n."),
    NoiseFunction(
        name="ldp_gauss_laplace_loglik", file="ldp.stanfunctions",
        signature="real ldp_gauss_laplace_loglik(vector z_mid, int n_lo, real sum_lo, int n_hi, real sum_hi, "
                  "real mu, real sigma, real a, real b, real beta)",
        mechanisms=_LAPLACE,
        density="Σ_i log ∫ N(x | mu, sigma) Laplace(z_i | clip(x, a, b), beta) dx",
        domain="sigma > 0; a < b; beta > 0; z_mid in (a, b), n_lo/sum_lo of the reports <= a, n_hi/sum_hi of those >= b",
        doc="Clipped-Laplace local reports of normal data (Kulkarni et al. 2022, Eq. 6, 22-28): "
            "(a, b) = record.bounds, beta = record.scale; the reports split by "
            "ldp_group_count / ldp_group_sum / ldp_mid_values.",
        requires=_LOG_PHI),
    NoiseFunction(
        name="ldp_exp_laplace_loglik", file="ldp.stanfunctions",
        signature="real ldp_exp_laplace_loglik(vector z_mid, int n_lo, real sum_lo, int n_hi, real sum_hi, "
                  "real theta, real b, real beta)",
        mechanisms=_LAPLACE,
        density="Σ_i log ∫ Exponential(x | theta) Laplace(z_i | clip(x, 0, b), beta) dx",
        domain="theta > 0; b > 0; beta > 0; z_mid in (0, b), n_lo/sum_lo of the reports <= 0, n_hi/sum_hi of those >= b",
        doc="Clipped-Laplace local reports of exponential data (Kulkarni et al. 2022, Eq. 29-30): "
            "(0, b) = record.bounds, beta = record.scale.",
        requires=_LOG_PHI),
    NoiseFunction(
        name="ldp_oue_loglik", file="ldp.stanfunctions",
        signature="real ldp_oue_loglik(matrix Z, matrix Zc, vector w, vector theta, real eps)",
        mechanisms=frozenset({"oue"}),
        density="Σ_i w_i log((1 - z_i·theta) + e^eps z_i·theta)  (the OUE likelihood up to a constant)",
        domain="Z rows in {0,1}^d, neither all 0 nor all 1; Zc = 1 - Z; w >= 0; theta a d-simplex; eps > 0",
        doc="Histogram from optimal-unary-encoding reports (Kulkarni et al. 2022, Eq. 31-33), distinct "
            "reports Z weighted by their counts w; eps = record.epsilon.",
        requires=_LOG_PHI),
    NoiseFunction(
        name="ldp_ss_normal_lpdf", file="ldp_regression.stanfunctions",
        signature="real ldp_ss_normal_lpdf(vector z_sum | int n, vector mu, matrix S, vector noise_var)",
        mechanisms=_GAUSSIAN,
        density="log N(z_sum | n mu, n (S + diag(noise_var)))",
        domain="n >= 1; S symmetric positive semi-definite with S + diag(noise_var) positive definite; noise_var > 0",
        doc="Sum of n per-user Gaussian-perturbed statistics under the CLT (Kulkarni et al. 2022, "
            "Eq. 3): n = record.n, noise_var = (per-coordinate noise sd)², e.g. "
            "record.details['noise_sd']²."),
    NoiseFunction(
        name="ldp_features_lpdf", file="ldp_regression.stanfunctions",
        signature="real ldp_features_lpdf(matrix zx | matrix Lz)",
        mechanisms=_GAUSSIAN,
        density="Σ_i log N(zx_i | 0, Lz Lz')",
        domain="Lz lower-triangular Cholesky factor of Sigma + sigma_x² I",
        doc="Gaussian-perturbed features zx = x + N(0, sigma_x² I), x ~ N(0, Sigma) (Kulkarni et al. "
            "2022, Eq. 35-36)."),
    NoiseFunction(
        name="ldp_features_scatter_lpdf", file="ldp_regression.stanfunctions",
        signature="real ldp_features_scatter_lpdf(matrix Sx | int n, matrix Lz)",
        mechanisms=_GAUSSIAN,
        density="-n d/2 log(2π) - n log|Lz| - tr((Lz Lz')^-1 Sx)/2",
        domain="Sx = Σ_i zx_i zx_i'; n >= 1; Lz lower-triangular Cholesky factor",
        doc="ldp_features_lpdf through the scatter matrix (O(d³) whatever n)."),
    NoiseFunction(
        name="ldp_linreg_inputs_lpdf", file="ldp_regression.stanfunctions",
        signature="real ldp_linreg_inputs_lpdf(vector zy | matrix zx, matrix Sigma, vector theta, real sigma, "
                  "real sigma_x, real sigma_y)",
        mechanisms=_GAUSSIAN,
        density="Σ_i log N(zx_i | 0, Sigma + sigma_x² I) N(zy_i | theta'h_i, theta'A theta + sigma² + sigma_y²)",
        domain="Sigma positive definite; sigma, sigma_x, sigma_y > 0",
        doc="Linear regression from Gaussian-perturbed inputs and targets (Kulkarni et al. 2022, "
            "Eq. 34-41): sigma_x, sigma_y the noise sds of the features' and targets' releases."),
    NoiseFunction(
        name="ldp_linreg_inputs_scatter_lpdf", file="ldp_regression.stanfunctions",
        signature="real ldp_linreg_inputs_scatter_lpdf(matrix S | int n, matrix Sigma, vector theta, real sigma, "
                  "real sigma_x, real sigma_y)",
        mechanisms=_GAUSSIAN,
        density="Σ_i log N(u_i | 0, C), u_i = (zx_i, zy_i), through S = Σ_i u_i u_i'",
        domain="as ldp_linreg_inputs_lpdf; n >= 1",
        doc="ldp_linreg_inputs_lpdf through the scatter matrix of (zx, zy) (O(d³) whatever n)."),
    NoiseFunction(
        name="ldp_logreg_inputs_lpmf", file="ldp_regression.stanfunctions",
        signature="real ldp_logreg_inputs_lpmf(array[] int zy | matrix zx, matrix Sigma, vector theta, "
                  "real sigma_x, real p_keep, vector b)",
        mechanisms=frozenset({"analytic_gaussian+randomized_response"}),
        density="ldp_features_lpdf(zx) + Σ_i log Bernoulli(zy_i | (1 - p_keep) + (2 p_keep - 1) q_i), "
                "q_i the Chebyshev approximation of P(y_i = 1 | zx_i)",
        domain="zy in {0, 1}; Sigma positive definite; sigma_x > 0; p_keep in (1/2, 1)",
        doc="Logistic regression from Gaussian-perturbed features and randomised-response labels "
            "(Kulkarni et al. 2022, Eq. 42-44): p_keep = e^eps / (1 + e^eps) of the labels' epsilon."),
    NoiseFunction(
        name="ldp_logreg_inputs_scatter_lpmf", file="ldp_regression.stanfunctions",
        signature="real ldp_logreg_inputs_scatter_lpmf(array[] int zy | matrix zx, matrix Sx, matrix Sigma, "
                  "vector theta, real sigma_x, real p_keep, vector b)",
        mechanisms=frozenset({"analytic_gaussian+randomized_response"}),
        density="as ldp_logreg_inputs_lpmf, the features' term through Sx = zx' zx",
        domain="as ldp_logreg_inputs_lpmf",
        doc="ldp_logreg_inputs_lpmf with the features' term in O(d³)."),
)

#: every other function of ``stan/functions/`` (not a noise model of its own): name -> why
HELPERS: Mapping[str, str] = MappingProxyType({
    # log_phi.stanfunctions
    "logPhi": "log Φ(x), accurate in value and derivative (used by the noise models)",
    # betad.stanfunctions (Jewson et al. 2023: the OPS target, not a noise model)
    "betad_positions": "Jewson et al. 2023 βD loss (OPS target)",
    "betad_bernoulli_logit": "Jewson et al. 2023 βD loss (OPS target)",
    "betad_normal": "Jewson et al. 2023 βD loss (OPS target)",
    "nn_forward": "Jewson et al. 2023 network output",
    # hmm.stanfunctions (Foulds et al. 2016 HMM)
    **{name: "Foulds et al. 2016 naive-Bayes HMM" for name in (
        "log_matprod_exp", "alr_log_simplexes", "emission_loglik", "log_transition", "hmm_forward_total",
        "hmm_forward_all", "hmm_log_state_prob", "hmm_ffbs_rng", "truncated_log_simplexes")},
    # ldp.stanfunctions internals and data preparation
    **{name: "ldp.stanfunctions internal" for name in (
        "ldp_log_Phi_diff", "ldp_log_add_exp", "ldp_gauss_laplace_mid", "ldp_exp_laplace_mid")},
    **{name: "ldp.stanfunctions data preparation (transformed data)" for name in (
        "ldp_group_count", "ldp_group_sum", "ldp_mid_values", "ldp_segment_starts")},
    # ldp_regression.stanfunctions: moments of the regression statistics (not noise)
    **{name: "Kulkarni et al. 2022 regression statistics' layout and moments" for name in (
        "ldp_pair_count", "ldp_pair_index", "ldp_pair_weight", "ldp_linreg_joint_cov", "ldp_quadratic_mean",
        "ldp_quadratic_cov", "ldp_logit_stein", "ldp_logreg_ss_mean", "ldp_logreg_ss_cov")},
})


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
_TYPE_WORDS = frozenset({"real", "int", "vector", "row_vector", "matrix", "void", "complex", "complex_vector",
                         "complex_row_vector", "complex_matrix"})
_CALL = re.compile(r"(~\s*)?\b([A-Za-z][A-Za-z0-9_]*)\s*\(")
_PREVIOUS = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|\S)\s*$")


def _is_definition(code: str, start: int) -> bool:
    # a return type (a type word, or ")" closing tuple(...)) right before the name
    previous = _PREVIOUS.search(code, 0, start)
    return previous is not None and (previous.group(1) in _TYPE_WORDS or previous.group(1) == ")")


def functions_called(program_code: str) -> set[str]:
    """The :data:`CATALOGUE` functions that a Stan program calls.

    Comments and string literals are removed first (:func:`strip_comments_and_strings`);
    a function's definition or forward declaration is not a call. ``y ~ f(...)`` is a call of
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
    for match in _CALL.finditer(code):
        tilde, name = match.group(1), match.group(2)
        if tilde is None and _is_definition(code, match.start(2)):
            continue
        if tilde is not None:
            candidates = (f"{name}_lpdf", f"{name}_lpmf")
        elif name.endswith(("_lupdf", "_lupmf")):
            candidates = (name[:-6] + "_lp" + name[-2:],)
        else:
            candidates = (name,)
        found.update(c for c in candidates if c in CATALOGUE)
    return found


_DEFINITION = re.compile(
    r"^[ \t]*(?:(?:array\s*\[[ ,]*\]\s*)?(?:data\s+)?(?:%s)|tuple\s*\([^)]*\))\s+([A-Za-z][A-Za-z0-9_]*)\s*\("
    % "|".join(sorted(_TYPE_WORDS)), re.MULTILINE)


def defined_functions(path: str | Path) -> set[str]:
    """Names of the functions a ``.stanfunctions`` file defines (its definitions at the start of
    a line; comments ignored)."""
    text = strip_comments_and_strings(Path(path).read_text(encoding="utf-8"))
    return set(_DEFINITION.findall(text))
