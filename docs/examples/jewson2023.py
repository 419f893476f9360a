"""Jewson et al. 2023: one draw of the beta-divergence posterior of a logistic regression is
(epsilon, 0)-DP with beta = 1 + 2/epsilon, whatever the features. The draw is released only
when the sampler's convergence checks pass; the attempt is charged before it runs.
"""

import numpy as np

from pystanprivacy.models.jewson2023 import LogisticRegressionBetaD
from pystanprivacy.privacy.records import PrivacyAccountant

rng = np.random.default_rng(10)
X = np.column_stack([np.ones(200), rng.normal(size=200)])  # intercept + one feature
y = rng.binomial(1, 1 / (1 + np.exp(-(X @ np.array([-0.5, 1.0])))))  # true theta = (-0.5, 1)

model = LogisticRegressionBetaD()
budget = PrivacyAccountant(epsilon=2.0)
result = model.sample_one(X, y, epsilon=2.0, accountant=budget, seed=11)
print("beta =", round(model.beta(2.0), 3), "| problems:", result.problems)
print("released theta =", np.round(result.params["theta"], 3))
record = result.release.record.to_dict()
print("record:", {k: record[k] for k in ("mechanism", "epsilon", "delta")})
print("budget remaining:", budget.remaining)

baseline = model.fit_nonprivate(X, y, seed=12, draws=400)  # the named non-private baseline
print(baseline.summary(var_names=["theta"]).round(3).to_string())
