"""The audit registry (pystanprivacy.models.audits): every mechanism and OPS model passes its quick
audit, and every deliberately broken variant is caught.

False-rejection rate: each audit's epsilon lower bound holds with probability >= 1 - alpha
(alpha = 0.05, Clopper--Pearson with a Bonferroni correction over all 4m one-sided bounds
of its m threshold events), so a correct mechanism fails its audit with probability <= 0.05
per audit over seeds; the seeds here are fixed, so each test is deterministic. (For the OPS
models this rests on the draws kept after thinning being independent; the audit counts at
most the ESS of each run, see pystanprivacy.models.audits.) The broken variants' true epsilon is
2-4x the claim (OPS: >= 2x the claim at the boundary); their detection margins
(epsilon_lb - epsilon) at seeds 0-4 were >= 0.2 (the HMM's, the smallest) up to 6 (beta-D
regression).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pystanprivacy.models import audits
from pystanprivacy.models.audits import (
    AUDITS,
    Audit,
    audit_names,
    get_audit,
    markdown_table,
    register,
    run_audit,
)

MECHANISMS = audit_names("mechanism")
MODELS = audit_names("model")

REQUIRED_MECHANISMS = {
    "laplace",
    "gaussian",
    "analytic_gaussian",
    "randomized_response",
    "oue",
    "clipped_laplace_reports",
    "gaussian_reports",
    "kulkarni_linreg_ss",
    "kulkarni_linreg_inputs",
    "kulkarni_logreg_ss",
    "kulkarni_logreg_inputs",
    # the secure path (seed=None): exact discrete samplers, grid, exact flips
    "discrete_laplace",
    "laplace_grid",
    "discrete_gaussian",
    "randomized_response_secure",
}
REQUIRED_MODELS = {
    "foulds2016_beta_bernoulli_ops",
    "foulds2016_hmm_ops",
    "jewson2023_logistic",
    "jewson2023_linear_regression",
}

STAN_MODELS = (
    "foulds2016/beta_bernoulli_ops",
    "foulds2016/nb_hmm_ops",
    "jewson2023/logistic",
    "jewson2023/linear_regression",
)


@pytest.fixture(scope="module")
def ops_models():
    """Compile (or load) each Stan model the OPS audits use, once per session."""
    from pystanprivacy.sampling.stan import StanModel

    return [StanModel.get(name) for name in STAN_MODELS]


def test_registry_covers_every_mechanism_and_ops_model():
    assert REQUIRED_MECHANISMS <= set(MECHANISMS)
    assert REQUIRED_MODELS <= set(MODELS)
    for a in AUDITS.values():
        assert a.kind in ("mechanism", "model")
        assert a.epsilon > 0 and 0 <= a.delta < 1
        assert a.neighbours and a.statistic and a.broken and a.reference
        assert 10 <= a.quick <= a.full
        if a.kind == "model":  # OPS runs use events fixed in advance, no pilot run
            assert a.thresholds is not None


def test_unknown_and_duplicate_names():
    with pytest.raises(KeyError, match="unknown audit 'nope'; known: laplace"):
        get_audit("nope")
    with pytest.raises(ValueError, match="already registered"):
        register(AUDITS["laplace"])
    with pytest.raises(ValueError, match="kind"):
        register(Audit(**{**AUDITS["laplace"].__dict__, "name": "x", "kind": "other"}))


@pytest.mark.parametrize("name", MECHANISMS)
def test_mechanism_quick_audit_passes(name):
    row = run_audit(name, quick=True, seed=0)
    assert row["variant"] == "as claimed" and row["kind"] == "mechanism"
    assert row["samples"] == get_audit(name).quick and row["confidence"] == 0.95
    assert 0.0 <= row["epsilon_lb"] <= row["epsilon"], row
    assert row["passed"] and row["verdict"] == "pass"


@pytest.mark.parametrize("name", MECHANISMS)
def test_mechanism_broken_variant_is_caught(name):
    row = run_audit(name, quick=True, seed=0, broken=True)
    assert row["epsilon_lb"] > row["epsilon"], row
    assert not row["passed"] and row["verdict"] == "caught" and row["broken_variant"]


def test_tight_mechanisms_come_close_to_their_epsilon():
    # Laplace, RR and OUE have events whose probability ratio is exactly e^eps, so the audit
    # gets near the claim (a sharp check of the worst-case inputs and statistics).
    for name in (
        "laplace",
        "randomized_response",
        "oue",
        "clipped_laplace_reports",
        "laplace_grid",
        "randomized_response_secure",
    ):
        assert run_audit(name, quick=True, seed=0)["epsilon_lb"] > 0.9


def test_same_seed_same_result_and_streams_per_audit():
    a = run_audit("gaussian_reports", seed=3)
    b = run_audit("gaussian_reports", seed=3)
    c = run_audit("gaussian_reports", seed=4)
    assert a["epsilon_lb"] == b["epsilon_lb"] != c["epsilon_lb"]


def test_run_audit_checks_its_arguments():
    with pytest.raises(ValueError, match="seed"):
        run_audit("laplace", seed=-1)
    with pytest.raises(ValueError, match="n"):
        run_audit("laplace", n=3)


@pytest.mark.parametrize("name", sorted(REQUIRED_MODELS))
def test_ops_model_quick_audit_passes(name, ops_models):
    row = run_audit(name, quick=True, seed=0)
    assert row["kind"] == "model"
    assert 0.0 <= row["epsilon_lb"] <= row["epsilon"], row
    assert row["verdict"] == "pass"
    for side in ("D", "D'"):
        info = row["info"][side]
        # the Clopper-Pearson counts never exceed the effective sample size of the run
        assert info["used"] <= min(info["kept"], math.floor(info["min_ess"]))
        assert info["max_rhat"] <= 1.05 and info["divergences"] == 0
    assert row["samples"] >= 5_000


@pytest.mark.parametrize("name", sorted(REQUIRED_MODELS))
def test_ops_model_broken_variant_is_caught(name, ops_models):
    row = run_audit(name, quick=True, seed=0, broken=True)
    assert row["epsilon_lb"] > row["epsilon"], row
    assert row["verdict"] == "caught"


def test_markdown_table():
    rows = [run_audit("randomized_response", seed=0), run_audit("randomized_response", seed=0, broken=True)]
    lines = markdown_table(rows).splitlines()
    assert lines[0] == ("| name | kind | claimed ε | δ | empirical ε lower bound (95 %) | samples | verdict |")
    assert lines[2].startswith("| randomized_response | mechanism | 1 | 0 | 0.9")
    assert lines[2].endswith("| 100000 | pass |")
    assert lines[3].startswith("| randomized_response (broken) |") and lines[3].endswith("| caught |")


def test_ops_draws_thin_to_the_ess():
    # a strongly autocorrelated AR(1) chain: ESS far below the number kept, so the audit
    # keeps only about ESS evenly spaced draws (never more than ESS)
    from pystanprivacy.sampling.backends.base import RawFit, SamplerSettings
    from pystanprivacy.sampling.posterior import Posterior

    rng = np.random.default_rng(0)
    chains, n = 4, 2000
    x = np.zeros((chains, n))
    for t in range(1, n):
        x[:, t] = 0.95 * x[:, t - 1] + rng.normal(size=chains) * math.sqrt(1 - 0.95**2)
    post = Posterior(
        RawFit(variables={"theta": x[..., None]}, sampler={}),
        model="ar1",
        backend="none",
        settings=SamplerSettings(chains=chains, draws=n),
        elapsed=0.0,
    )
    draws, info = audits._ops_draws(post, {"theta": [0]}, rng, strict=False)
    assert info["kept"] == chains * n
    assert info["used"] <= math.floor(info["min_ess"]) < chains * n / 10
    assert draws["theta"].shape == (info["used"], 1)
