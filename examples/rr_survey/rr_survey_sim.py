"""The simulator of rr_survey.stan for ``pystanprivacy sbc`` (simulation-based calibration).

``simulate(rng)`` draws one replicate from the program's prior: the regions' proportions (by the
program's parameter names), every respondent's private answer, and the public data;
``release(...)`` privatises the answers with randomised response, one report per respondent
(:func:`pystanprivacy.privacy.ldp.randomized_response_reports`, epsilon-local DP).
``rr_survey_naive_sim.py`` is the same simulator for the naive fit.
"""

from __future__ import annotations

import numpy as np

from pystanprivacy.privacy.ldp import randomized_response_reports

#: respondents in each of the G = 6 regions (public: the survey's design)
RESPONDENTS = np.array([120, 160, 200, 240, 280, 320])
#: each respondent's region, 1-based as in Stan (public)
REGION = np.repeat(np.arange(1, RESPONDENTS.size + 1), RESPONDENTS)
PRIOR_MU = (-1.4, 0.5)  # logit of about 0.2, the population's typical proportion
PRIOR_TAU_SD = 0.5


def public_data(*, noise_aware: int = 1) -> dict:
    """The program's data besides the release (the ``--data`` file of ``pystanprivacy fit``)."""
    return {"G": int(RESPONDENTS.size), "region": REGION.tolist(), "noise_aware": int(noise_aware)}


def simulate(rng: np.random.Generator, *, noise_aware: int = 1) -> dict:
    """One draw of (mu, tau, p) from the prior and of the private answers given them."""
    mu = rng.normal(*PRIOR_MU)
    tau = abs(rng.normal(0.0, PRIOR_TAU_SD))
    p = 1.0 / (1.0 + np.exp(-(mu + tau * rng.normal(size=RESPONDENTS.size))))
    answers = (rng.random(REGION.size) < p[REGION - 1]).astype(np.int64)
    return {
        "parameters": {"mu": mu, "tau": tau, "p": p},
        "private": answers,
        "data": public_data(noise_aware=noise_aware),
    }


def release(private, *, epsilon, seed=None, accountant=None):
    """Every respondent's answer through randomised response (``seed=None``: exact Bernoulli
    flips from the secure sampler; a seed: reproducible, for simulations only)."""
    return randomized_response_reports(
        np.asarray(private, dtype=np.int64), epsilon=epsilon, seed=seed, accountant=accountant
    )
