"""Where the depth of Kulkarni et al.'s Figure 5 inputs fits comes from (issue 67, item 2).

The fit (``kulkarni2022/logistic_regression_inputs``, Adult 10K, d = 5) takes 24-31 leapfrog steps
per iteration against 7 on the prior alone. This script fits one release (one chain, the study's
1000 + 1000 iterations) with four programs made from the committed one, each written to a private
temporary folder and compiled:

* ``both``: the committed log density;
* ``features``: the features' term alone (the labels' term dropped);
* ``labels``: the labels' term alone;
* ``w``: the committed posterior in other coordinates: w = (Sigma + sigma_x^2 I)^{-1} Sigma theta,
  the only function of theta and Sigma that the labels' term sees, sampled instead of theta
  (theta = (I + sigma_x^2 Sigma^{-1}) w, Jacobian det(Sigma + sigma_x^2 I) / det(Sigma)).

It prints the seconds, mean leapfrog steps per iteration, step size and divergences of each, and
for ``both`` the condition number of the posterior correlation of (theta, tau, atanh of Omega's
off-diagonal): near 1, a dense metric (or any fixed linear preconditioner) cannot shorten the
trajectories. The variants other than ``w`` are different posteriors: they only locate the depth.

Run::

    python benchmarks/bench_fig5_geometry.py [--epsilon 2] [--seed 3] [--variants both,features,labels,w]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("PYSTANPRIVACY_PARALLEL_CHAINS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

PROGRAM = ROOT / "stan" / "kulkarni2022" / "logistic_regression_inputs.stan"
LIKELIHOOD = "  zy ~ ldp_logreg_inputs_scatter(zx, Sx, Sigma, theta, sigma_x, p_keep, cheb);  // Eq. 42-44\n"
TERMS = """  {
    matrix[d, d] Lz = cholesky_decompose(add_diag(Sigma, square(sigma_x)));
    vector[d] c = Sigma * theta;
    vector[n] m = zx * mdivide_right_tri_low(mdivide_left_tri_low(Lz, c)', Lz)';
    real v = fmax(dot_product(theta, c) - dot_self(mdivide_left_tri_low(Lz, c)), 0);
    vector[n] q = fmin(fmax(cheb[1] + cheb[2] * m + cheb[3] * (square(m) + v), 0), 1);
    %s
  }
"""
FEATURES = "target += ldp_features_scatter_lpdf(Sx | n, Lz);"
LABELS = "target += bernoulli_lpmf(zy | (1 - p_keep) + (2 * p_keep - 1) * q);"
W_MODEL = """model {
  matrix[d, d] LS = diag_pre_multiply(tau, L_Omega);   // Sigma = LS LS'
  matrix[d, d] Sigma = multiply_lower_tri_self_transpose(LS);
  matrix[d, d] Lz = cholesky_decompose(add_diag(Sigma, square(sigma_x)));
  vector[d] theta = w + square(sigma_x) * mdivide_right_tri_low(mdivide_left_tri_low(LS, w)', LS)';
  target += 2 * sum(log(diagonal(Lz))) - 2 * sum(log(abs(diagonal(LS))));   // log |d theta / d w|
  theta ~ normal(0, prior_theta_sd);
  tau ~ normal(0, prior_tau_sd);
  L_Omega ~ lkj_corr_cholesky(lkj_eta);
  zy ~ ldp_logreg_inputs_scatter(zx, Sx, Sigma, theta, sigma_x, p_keep, cheb);
}
generated quantities {
  matrix[d, d] Sigma = multiply_lower_tri_self_transpose(diag_pre_multiply(tau, L_Omega));
}
"""


def variant(text: str, name: str) -> str:
    """The committed program's text changed into variant ``name``."""
    if LIKELIHOOD not in text or "  vector[d] theta;\n" not in text:
        raise RuntimeError(f"{PROGRAM.name} changed: update the variants of {Path(__file__).name}")
    if name == "both":
        return text
    if name in ("features", "labels"):
        return text.replace(LIKELIHOOD, TERMS % (FEATURES if name == "features" else LABELS))
    if name == "w":
        text = text.replace("  vector[d] theta;\n", "  vector[d] w;\n")
        return text[: text.index("model {")] + W_MODEL
    raise ValueError(f"variant {name!r}; allowed: both, features, labels, w")


def correlation_condition(post) -> float:
    """Condition number of the posterior correlation of (theta, tau, atanh of Omega's off-diagonal)."""
    L = post.draws("L_Omega")
    omega = np.einsum("sij,skj->sik", L, L)
    iu = np.triu_indices(L.shape[1], 1)
    x = np.column_stack([post.draws("theta"), post.draws("tau"), np.arctanh(omega[:, iu[0], iu[1]])])
    ev = np.linalg.eigvalsh(np.corrcoef(x.T))
    return float(ev.max() / ev.min())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--variants", default="both,features,labels,w")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # seeded releases: "reproducible, not secure"
    from bench_kulkarni2022_full import logistic_cases

    from pystanprivacy.sampling.stan import StanModel

    ((_, data, sampler),) = logistic_cases([args.epsilon])
    text = PROGRAM.read_text()
    with tempfile.TemporaryDirectory(prefix="bench-fig5-") as tmp:
        os.chmod(tmp, 0o700)
        for name in args.variants.split(","):
            path = Path(tmp) / f"logistic_regression_inputs_{name}.stan"
            path.write_text(variant(text, name))
            model = StanModel.get(str(path))
            t = time.perf_counter()
            post = model.sample(data, chains=1, warmup=sampler["warmup"], draws=sampler["draws"], seed=args.seed)
            extra = f", correlation condition number {correlation_condition(post):.2f}" if name != "w" else ""
            print(
                f"{name}: {time.perf_counter() - t:.1f} s, {post.sample_stat('n_steps').mean():.1f} leapfrog steps "
                f"per iteration, step size {post.sample_stat('step_size').mean():.3f}, "
                f"{post.num_divergences} divergences{extra}, load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
