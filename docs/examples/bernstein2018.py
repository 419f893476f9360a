"""Bernstein & Sheldon 2018: a noise-aware posterior from a Laplace-noised count.

One count of n = 500 binary records is released at epsilon = 0.1 (noise scale 10). The
noise-aware model integrates the noise out; the naive conjugate update treats the noisy count
as exact and is over-confident.
"""

import numpy as np

from pystanprivacy.models.bernstein2018 import BinomialBeta

x = np.random.default_rng(4).binomial(1, 0.2, size=500)  # private records, true theta = 0.2
release = BinomialBeta.release(x, epsilon=0.1, seed=5)
print(
    "noisy count y =", np.round(release.values, 2), "of n =", release.record.n, "| Laplace scale", release.record.scale
)

model = BinomialBeta(prior_alpha=1, prior_beta=1)
posterior = model.fit(release, seed=6, draws=500)
print(posterior.summary().round(3).to_string())
print("diagnostics failed:", posterior.check())

# the naive posterior: Beta(1 + y, 1 + n - y) as if y were the exact count
y = float(np.clip(release.values[0], 0, 500))
naive = model.conjugate_posterior([y], 500, label="naive").marginal(0)
print(f"naive posterior: mean {naive.mean()[0]:.3f}, sd {naive.std()[0]:.3f}")
nonprivate = model.fit_nonprivate(x).marginal(0)
print(f"non-private posterior: mean {nonprivate.mean()[0]:.3f}, sd {nonprivate.std()[0]:.3f}")
