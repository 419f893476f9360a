"""Kulkarni et al. 2022: local DP. Every user clips their value to [a, b] and adds
Laplace((b - a)/epsilon) on their own device; the aggregator fits (mu, sigma) from the reports.
"""

import numpy as np

from pystanprivacy.models.kulkarni2022 import GaussianLDP

x = np.random.default_rng(7).normal(1.0, 1.5, size=1000)  # each user's private value
reports = GaussianLDP.release(x, epsilon=2.0, bounds=(-5.0, 5.0), seed=8)
record = reports.record.to_dict()
print(
    "reports:",
    reports.values.shape,
    "| record:",
    {k: record[k] for k in ("mechanism", "epsilon", "scale", "bounds", "neighbouring")},
)

model = GaussianLDP()
posterior = model.fit(reports, seed=9, draws=500)
print(posterior.summary().round(3).to_string())
print("diagnostics failed:", posterior.check())
print(f"naive mean of the reports: {reports.values.mean():.3f} (unbiased for the clipped mean only)")
