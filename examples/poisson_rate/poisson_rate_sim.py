"""The simulator of poisson_rate.stan for ``pystanprivacy sbc`` (simulation-based calibration).

``simulate(rng)`` draws one replicate from the program's prior and likelihood: the parameters
(by the program's names), the private counts, and the public data; ``release(...)`` privatises
the counts with the mechanism the data owner uses (Laplace on integer counts, L1 sensitivity 1
under add/remove-one neighbours: each resident is counted in one region at most once). The
same file serves the naive program (it declares the same data).
"""

from __future__ import annotations

import numpy as np

from pystanprivacy.privacy.mechanisms import Laplace

#: person-years (thousands) in each of the G = 4 regions: public
EXPOSURE = np.array([0.5, 1.0, 1.5, 2.0])
#: a public bound of every true count (the sum over the true count stops there); under the
#: prior below P(count > 120) is below 2e-6 in every region (a Monte-Carlo estimate: 1.5e-6 at the largest exposure)
MAX_COUNT = 120
#: one resident changes one count by at most 1 (add/remove-one neighbours)
SENSITIVITY = 1.0
PRIOR_MU = (np.log(5.0), 0.3)
PRIOR_TAU_SD = 0.2


def simulate(rng: np.random.Generator) -> dict:
    """One draw of (mu, tau, lambda) from the prior and of the private counts given them."""
    mu = rng.normal(*PRIOR_MU)
    tau = abs(rng.normal(0.0, PRIOR_TAU_SD))
    lam = np.exp(mu + tau * rng.normal(size=EXPOSURE.size))
    counts = rng.poisson(EXPOSURE * lam).astype(np.int64)
    return {"parameters": {"mu": mu, "tau": tau, "lambda": lam}, "private": counts, "data": public_data()}


def public_data() -> dict:
    """The programs' data besides the release (the ``--data`` file of ``pystanprivacy fit``)."""
    return {"exposure": EXPOSURE.tolist(), "max_count": MAX_COUNT}


def release(private, *, epsilon, seed=None, accountant=None):
    """The counts released with the Laplace mechanism (``seed=None``: the secure discrete
    Laplace on the integers; a seed: reproducible continuous noise, for simulations only)."""
    return Laplace(epsilon=epsilon, sensitivity=SENSITIVITY, seed=seed).release(
        np.asarray(private, dtype=np.int64), accountant=accountant, neighbouring="add-remove"
    )
