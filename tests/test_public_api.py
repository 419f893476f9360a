"""The curated import surface: ``import pystanprivacy as psp`` reaches every layer and the
names most users need, without importing Stan, SciPy or pandas until they are used."""

from __future__ import annotations

import subprocess
import sys

import pytest

import pystanprivacy as psp


def test_import_is_light():
    code = (
        "import sys, pystanprivacy as psp; "
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'stan', 'httpstan', 'arviz', "
        "'pandas', 'cmdstanpy', 'sklearn', 'matplotlib')); print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", psp._SUBPACKAGES)
def test_every_layer_is_an_attribute(name):
    import importlib

    assert getattr(psp, name) is importlib.import_module(f"pystanprivacy.{name}")


def test_curated_names_are_the_objects_of_their_modules():
    from pystanprivacy.models.base import Model, OPSModel, OPSResult
    from pystanprivacy.models.registry import model_class
    from pystanprivacy.privacy.mechanisms import Laplace
    from pystanprivacy.sampling.posterior import Posterior

    assert (psp.Laplace, psp.Model, psp.OPSModel, psp.OPSResult, psp.Posterior, psp.model_class) == (
        Laplace,
        Model,
        OPSModel,
        OPSResult,
        Posterior,
        model_class,
    )
    from pystanprivacy.models.custom import StanProgram

    assert psp.StanProgram is StanProgram and psp.models.custom.StanProgram is StanProgram
    assert set(psp.__all__) <= set(dir(psp))
    for name in psp.__all__:
        assert getattr(psp, name) is not None


def test_paper_model_modules_and_registry_through_psp_models():
    from pystanprivacy.models.foulds2016 import BetaBernoulli

    assert psp.models.foulds2016.BetaBernoulli is BetaBernoulli
    assert psp.models.model_class("foulds2016/beta_bernoulli") is BetaBernoulli
    for module in psp.models.PAPER_MODULES:
        assert getattr(psp.models, module).__name__ == f"pystanprivacy.models.{module}"


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        psp.nope  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        psp.models.nope  # noqa: B018


def test_all_lists_are_literal_and_complete():
    """``__all__`` is written out as literal strings (ruff PLE0604): it must still hold exactly the
    eager names, every lazily loaded name and every subpackage, and the models package every paper
    module."""
    from pystanprivacy import models

    eager = {"BudgetExceededError", "PrivacyAccountant", "PrivacyRecord", "Release", "__version__"}
    assert len(psp.__all__) == len(set(psp.__all__))
    assert set(psp.__all__) == eager | set(psp._LAZY) | set(psp._SUBPACKAGES)
    assert set(models.__all__) == {
        "ModelEntry",
        "model_class",
        "model_entry",
        "model_metadata",
        "model_names",
        "PAPER_MODULES",
        *models.PAPER_MODULES,
    }
