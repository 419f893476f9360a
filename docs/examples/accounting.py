"""Privacy accounting: 100 analytic-Gaussian releases of one count under each composition rule."""

import numpy as np

from pystanprivacy import AnalyticGaussian, PrivacyAccountant

count = np.array([412])  # a private count: one person changes it by at most 1
mechanism = AnalyticGaussian(epsilon=0.5, delta=1e-8, sensitivity=1.0)
for rule in ("basic", "zcdp", "rdp", "pld"):
    accountant = PrivacyAccountant(epsilon=60.0, delta=1e-6, composition=rule)
    for _ in range(100):
        mechanism.release(count, accountant=accountant)
    epsilon, delta = accountant.spent
    print(f"{rule:5}  epsilon = {epsilon:5.2f} at delta = {delta:.0e}")
