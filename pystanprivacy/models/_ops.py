"""What the one-posterior-sampling (OPS) releases share: the checks made before an attempt is
charged, the charge itself, the cryptographic choice of the released draw, and what a record
says about the randomness and the convergence gate (issue 17). Used by the Foulds beta-Bernoulli
and naive-Bayes HMM models, the Jewson βD models and the Minami baseline.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from .._validation import SeedLike, check_epsilon, check_int, check_random_state
from ..privacy.noise import SecureRandom
from ..privacy.records import SEEDED_RANDOMNESS, PrivacyAccountant, PrivacyRecord
from ..sampling.backends import preflight as backend_preflight
from ..sampling.posterior import Thresholds

#: the operating system's CSPRNG: picks the released draw of an unseeded OPS run
_SECURE_SOURCE = SecureRandom()

#: The convergence gate of every OPS release when a call gives no ``thresholds`` (issue 53,
#: item 12): split R-hat <= 1.05, bulk and tail ESS >= 25 per chain, no divergent transition,
#: no iteration at the maximum tree depth. Every refusal costs its epsilon, so the gate must
#: not refuse runs that sampled well: R-hat's own noise grows as the draws per chain shrink and
#: their autocorrelation grows (split R-hat^2 - 1 is about (tau F - 1) / n for n draws per
#: split chain, autocorrelation time tau and F ~ chi^2_7 / 7 with 4 chains), and with the
#: models' default draws (Foulds: 4 x 1000; beta-D: 4 x 400, :data:`jewson2023.OPS_SAMPLER`)
#: this gate refused no run of a 1-D Beta, the beta-D logistic example and a 10-D Gaussian
#: (benchmarks/README.md, "OPS gate"), where the former 1.01 / 100 per chain refused 4 in 600
#: of the 1-D runs. R-hat^2 - 1 is also about the variance of the chains' means over the
#: within-chain variance, so 1.05 still refuses chains whose means disagree by more than about
#: a third of a posterior sd, e.g. chains in different modes (R-hat ~1.5).
OPS_GATE = Thresholds(max_rhat=1.05, min_ess_per_chain=25.0, max_divergences=0, max_treedepth_fraction=0.0)


def ops_temperature_of(epsilon: float, sensitivity: float) -> float:
    """Temperature T = max(1, 2Δ/ε) that makes one draw of the tempered posterior ε-DP, for
    the log-likelihood sensitivity Δ = ``sensitivity`` (a public value of the model).

    Raises ``ValueError`` naming epsilon and the smallest allowed epsilon when 2Δ/ε overflows
    float64 (ε below about 2Δ / 1.8e308): T would be infinite, which the Stan program cannot
    take. An OPS model calls this before its attempt is charged.

    References
    ----------
    .. [1] Foulds, Geumlek, Welling and Chaudhuri (2016), "On the theory and practice of
       privacy-preserving Bayesian data analysis", UAI, Eq. 10 (OPS at temperature T).
    """
    epsilon = check_epsilon(epsilon)
    temperature = max(1.0, 2.0 * sensitivity / epsilon)
    if not math.isfinite(temperature):
        smallest = 2.0 * sensitivity / sys.float_info.max
        while not math.isfinite(2.0 * sensitivity / smallest):
            smallest = math.nextafter(smallest, math.inf)
        raise ValueError(
            f"epsilon={epsilon!r} is too small: the OPS temperature T = 2 Delta / epsilon (Delta = "
            f"{sensitivity:.6g}) overflows float64; epsilon must be >= {smallest!r} for this model"
        )
    return temperature


def secure_index(n: int) -> int:
    """Uniform index in 0..n-1 from ``secrets``."""
    return _SECURE_SOURCE.randbelow(int(n))


def ops_randomness(seeded: bool, chosen: str = "the released draw's (chain, iteration) index") -> dict[str, Any]:
    """``seeded``, ``secure`` and ``randomness`` of an OPS record, as the mechanisms state theirs:
    what ran Stan's MCMC and what chose ``chosen``."""
    if seeded:
        return {
            "seeded": True,
            "secure": False,
            "randomness": f"{SEEDED_RANDOMNESS} (Stan's seed and {chosen} both come from it)",
        }
    return {
        "seeded": False,
        "secure": True,
        "randomness": (
            "Stan's MCMC: its own non-cryptographic generator seeded with 31 bits from secrets; "
            f"{chosen}: cryptographic (secrets)"
        ),
    }


def convergence_gate(allow_unconverged: bool, checks: str) -> dict[str, Any]:
    """What the privacy record of an OPS draw says about its convergence gate: only the public
    fact whether ``allow_unconverged`` was used (``convergence_override``, that bool, and
    ``convergence_gate`` in words; ``checks`` names the checks). Whether the run passed the
    checks, which one failed and its R-hat / ESS / divergence / tree-depth numbers are
    statistics of the private run and are never recorded (as
    :func:`pystanprivacy.models.jewson2023.convergence_gate_details`)."""
    override = bool(allow_unconverged)
    gate = (
        "not enforced (allow_unconverged=True): the draw was released whether or not the run passed the "
        "convergence checks; whether it did, and which check failed, are statistics of the private run and "
        "are not recorded; the guarantee is not established"
        if override
        else f"enforced: a draw is released only when the run passed every convergence check ({checks})"
    )
    return {"convergence_override": override, "convergence_gate": gate}


def check_allow_unconverged(allow_unconverged: Any) -> bool:
    if not isinstance(allow_unconverged, bool):
        raise TypeError(f"allow_unconverged must be a bool, got {allow_unconverged!r}")
    return allow_unconverged


def check_ops_call(
    accountant: Any, seed: SeedLike, thresholds: Any, allow_unconverged: Any, settings: dict[str, Any]
) -> np.random.Generator | None:
    """Validate what an OPS attempt needs before it is charged; the seed's Generator (``None``
    without a seed). ``settings`` holds chains, warmup, draws, adapt_delta, max_treedepth."""
    if accountant is not None and not isinstance(accountant, PrivacyAccountant):
        raise TypeError(f"accountant must be a PrivacyAccountant or None, got {type(accountant).__name__}")
    if thresholds is not None and not isinstance(thresholds, Thresholds):
        raise TypeError(f"thresholds must be a Thresholds or None, got {type(thresholds).__name__}")
    check_allow_unconverged(allow_unconverged)
    check_int(settings["chains"], "chains", minimum=1)
    check_int(settings["warmup"], "warmup", minimum=0)
    check_int(settings["draws"], "draws", minimum=1)
    check_int(settings["max_treedepth"], "max_treedepth", minimum=1)
    ad = settings["adapt_delta"]
    if isinstance(ad, bool) or not isinstance(ad, (float, int)) or not 0 < ad < 1:
        raise ValueError(f"adapt_delta must be a number in (0, 1), got {ad!r}")
    backend_preflight()  # e.g. TMPDIR too long a path for pystan's sockets: refused before the charge
    return None if seed is None else check_random_state(seed)


def charge_attempt(accountant: PrivacyAccountant | None, epsilon: float, label: str, delta: float = 0.0) -> None:
    """Charge one OPS attempt (``epsilon``, ``delta``) before its Stan run: whether the gate
    refuses depends on the data, so the refusal is an output too. ``BudgetExceededError``
    (nothing charged, nothing run) when the budget cannot cover it."""
    if accountant is not None:
        accountant.spend(
            epsilon,
            delta,
            label=f"{label} (attempt, charged before sampling)",
            record=PrivacyRecord(mechanism="ops", epsilon=epsilon, delta=delta),
        )


def secure_permutation(k: int) -> np.ndarray:
    """Uniform permutation of 0..k-1 from ``secrets`` (Fisher-Yates)."""
    perm = np.arange(k)
    for i in range(k - 1, 0, -1):
        j = secure_index(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm
