"""Foulds et al. 2016: the Laplace mechanism on the counts vs one-posterior sampling (OPS).

Both release the same 200 private binary records at epsilon = 0.5 each, from one budget of
epsilon = 1. Seeds make the page reproducible; a real release passes no seed.
"""

import numpy as np

from pystanprivacy.models.foulds2016 import BetaBernoulli, BetaBernoulliOPS
from pystanprivacy.privacy.records import PrivacyAccountant

x = np.random.default_rng(1).binomial(1, 0.3, size=200)  # private binary data, true p = 0.3
budget = PrivacyAccountant(epsilon=1.0)

# noise-aware: Laplace(2/epsilon) on (n+, n-), then the Beta posterior of the noisy counts
release = BetaBernoulli.release(x, epsilon=0.5, accountant=budget, seed=11)
record = release.record.to_dict()
print("released counts:", np.round(release.values, 2))
print("record:", {k: record[k] for k in ("mechanism", "epsilon", "sensitivity", "scale", "n")})

model = BetaBernoulli(prior_alpha=1, prior_beta=1)
posterior = model.fit(release, seed=2, draws=500)
print(posterior.summary().round(3).to_string())
print("diagnostics failed:", posterior.check())

# one-posterior sampling: one draw from the posterior truncated to [a0, 1 - a0] at temperature T
ops = BetaBernoulliOPS(a0=0.2)
draw = ops.sample_one(x, epsilon=0.5, accountant=budget, seed=3)
print("OPS temperature T =", round(draw.details["temperature"], 3))
print("OPS released p =", np.round(draw.release.values, 3))
print("budget remaining:", budget.remaining)
