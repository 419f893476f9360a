"""``pystanprivacy audit --workflow`` (issue 52): the composed guarantee of several Gaussian
releases under each composition rule, next to the empirical lower bound on the composed
mechanism. The lower bound is a Clopper-Pearson bound valid with probability >= 95 %: a
correct accountant fails this check with probability <= 5 % for a random seed, and never for
the fixed seeds used here (deterministic)."""

from __future__ import annotations

import math

import pytest

from pystanprivacy import cli
from pystanprivacy.privacy import accounting
from pystanprivacy.privacy.audit import audit_gaussian_composition


def test_every_composed_guarantee_is_at_least_the_empirical_lower_bound():
    result = audit_gaussian_composition(releases=5, n_draws=100_000, seed=3)
    lb = result.lower_bound.epsilon_lb
    assert lb > 0.5  # the audit sees a real privacy loss ...
    assert set(result.composed) == {"basic", "zcdp", "rdp", "pld"}
    assert all(eps >= lb for eps in result.composed.values()) and result.passed
    assert result.composed["basic"] == pytest.approx(5 * result.epsilon)
    assert result.composed_delta == pytest.approx(5e-6)
    # the tight rules are below basic and never below the exact curve of the composed Gaussians
    for rule in ("zcdp", "rdp", "pld"):
        assert result.exact_epsilon - 1e-9 <= result.composed[rule] < result.composed["basic"]
    assert result.exact_epsilon >= lb


def test_the_workflow_audit_catches_an_accountant_that_undercounts(monkeypatch):
    """A zCDP conversion that reports a quarter of the true ε is caught (exit code 1)."""
    real = accounting.zcdp_epsilon
    monkeypatch.setattr(accounting, "zcdp_epsilon", lambda rho, delta: real(rho, delta) / 4)
    result = audit_gaussian_composition(releases=5, n_draws=100_000, seed=3)
    assert result.composed["zcdp"] < result.lower_bound.epsilon_lb and not result.passed
    assert "NO (a composed guarantee is too small)" in result.table()
    assert cli.main(["audit", "--workflow", "--quick"]) == 1


def test_cli_prints_the_composed_guarantees_next_to_the_lower_bound(capsys):
    assert cli.main(["audit", "--workflow", "--quick", "--releases", "4"]) == 0
    out = capsys.readouterr().out
    for rule in ("basic", "zcdp", "rdp", "pld", "exact"):
        assert f"  {rule:5}  epsilon = " in out
    assert "empirical lower bound: epsilon_lb = " in out and "workflow: 4 analytic Gaussian releases" in out
    basic = float(out.split("  basic  epsilon = ")[1].split()[0])
    assert math.isclose(basic, 4.0)


def test_cli_workflow_refuses_options_that_do_not_apply(capsys):
    for extra in (["--out", "x"], ["--broken"], ["--releases", "0"]):
        with pytest.raises(SystemExit):
            cli.main(["audit", "--workflow", *extra])
    with pytest.raises(SystemExit):
        cli.main(["audit", "--workflow", "--mechanism", "laplace"])
    assert "--workflow" in capsys.readouterr().err
