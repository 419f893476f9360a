"""Simulator of binomial_laplace.stan for ``pystanprivacy sbc`` (tests/checks/test_sbc.py).

``simulate(rng)`` draws theta from the program's prior and the private count of ones among N
records; ``release(private, ...)`` releases it with the library's Laplace mechanism (sensitivity 1:
one record changes the count by at most 1), so its record gives the program dp_n and dp_scale.
"""

from pystanprivacy.privacy.mechanisms import Laplace

N = 40


def simulate(rng):
    theta = rng.beta(2.0, 2.0)
    return {"parameters": {"theta": theta}, "private": int(rng.binomial(N, theta))}


def release(private, *, epsilon, seed, accountant):
    return Laplace(epsilon=epsilon, sensitivity=1.0, seed=seed).release(
        private, accountant=accountant, n=N, bounds=(0.0, 1.0)
    )
