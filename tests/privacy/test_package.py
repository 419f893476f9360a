"""The privacy package's shape: the mechanisms package keeps its import path and public names
(one module per family behind it), ``pystanprivacy.privacy`` re-exports the records and a
curated set of mechanisms and LDP functions (loaded on first use), and the privacy core
imports no upper layer."""

from __future__ import annotations

import ast
import doctest
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pystanprivacy import privacy
from pystanprivacy.privacy import ldp, mechanisms, records
from pystanprivacy.privacy.mechanisms import _base

PRIVACY_DIR = Path(privacy.__file__).parent

#: the public names of pystanprivacy.privacy.mechanisms (its __all__ before the split, in order)
#: and the family module that defines each
MECHANISM_HOMES = {
    "Mechanism": "_base",
    "Laplace": "laplace",
    "Gaussian": "gaussian",
    "AnalyticGaussian": "gaussian",
    "analytic_gaussian_sigma": "gaussian",
    "RandomizedResponse": "randomized_response",
    "OptimalUnaryEncoding": "unary_encoding",
    "Clip": "clipping",
    "ClipL2": "clipping",
    "project_nonnegative": "clipping",
    "project_simplex": "clipping",
    "row_norms": "clipping",
}

CURATED = {
    "Laplace": mechanisms,
    "Gaussian": mechanisms,
    "AnalyticGaussian": mechanisms,
    "RandomizedResponse": mechanisms,
    "OptimalUnaryEncoding": mechanisms,
    "clipped_laplace_reports": ldp,
    "gaussian_reports": ldp,
    "randomized_response_reports": ldp,
    "oue_reports": ldp,
    "split_budget": ldp,
}

UPPER_LAYERS = (
    "pystanprivacy.sampling",
    "pystanprivacy.models",
    "pystanprivacy.experiments",
    "pystanprivacy.run",
    "pystanprivacy.datasets",
    "pystanprivacy.cli",
)


def test_mechanisms_keeps_its_public_names_each_defined_in_its_family_module():
    assert mechanisms.__all__ == list(MECHANISM_HOMES)
    for name, home in MECHANISM_HOMES.items():
        obj = getattr(mechanisms, name)
        assert obj.__module__ == f"pystanprivacy.privacy.mechanisms.{home}", name
        family = sys.modules[obj.__module__]
        assert getattr(family, name) is obj
        assert name in family.__all__ or home == "_base" and name == "Mechanism"


def test_every_family_subclasses_the_one_base():
    for name in ("Laplace", "Gaussian", "AnalyticGaussian", "RandomizedResponse", "OptimalUnaryEncoding"):
        assert issubclass(getattr(mechanisms, name), _base.Mechanism)


def test_ldp_clamps_with_the_mechanisms_own_helpers():
    # one clamp for central and local releases: ldp must not carry a copy of its own
    assert ldp._clamp_magnitude is _base._clamp_magnitude
    assert ldp._MAX_MAGNITUDE is _base._MAX_MAGNITUDE == 2.0**1000


def test_privacy_reexports_the_records_and_the_curated_names():
    assert set(privacy.__all__) == set(records.__all__) | set(CURATED)
    assert len(privacy.__all__) == len(set(privacy.__all__))
    for name in records.__all__:
        assert getattr(privacy, name) is getattr(records, name), name
    for name, module in CURATED.items():
        assert getattr(privacy, name) is getattr(module, name), name
        assert name in dir(privacy)
    for name in privacy.__all__:  # the docstring lists what is available here
        assert name in privacy.__doc__, name
    assert all(hasattr(privacy, name) for name in privacy.__all__)  # so `import *` works
    with pytest.raises(AttributeError, match="no attribute 'Clip'"):
        privacy.Clip  # noqa: B018 - curated: clipping is imported from mechanisms


def test_privacy_docstring_example_runs():
    result = doctest.testmod(privacy, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3 and result.failed == 0


def test_privacy_core_imports_no_upper_layer_in_its_source():
    for path in sorted(PRIVACY_DIR.rglob("*.py")):
        package = ".".join(("pystanprivacy", *path.relative_to(PRIVACY_DIR.parent).parent.parts))
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                names = [".".join([*base, node.module] if node.module else base)]
                names += [f"{names[0]}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            bad = [
                n for n in names if n.startswith(UPPER_LAYERS) or n.split(".")[0] in ("stan", "cmdstanpy", "httpstan")
            ]
            assert not bad, f"{path.name}:{node.lineno} imports {bad}"


def test_importing_the_package_stays_light_and_the_core_loads_no_upper_layer():
    code = """if True:
        import json, sys
        import pystanprivacy
        light = sorted(m for m in sys.modules if m.split(".")[0] == "scipy"
                       or m.startswith(("pystanprivacy.privacy.mechanisms", "pystanprivacy.privacy.ldp")))
        import pystanprivacy.privacy as p
        p.Laplace, p.gaussian_reports
        import pystanprivacy.privacy.audit, pystanprivacy.privacy.noise
        loaded = sorted(m for m in sys.modules if m.startswith("pystanprivacy."))
        print(json.dumps({"light": light, "loaded": loaded}))
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout)
    assert seen["light"] == [], "import pystanprivacy should not load SciPy, the mechanisms or ldp"
    assert {"pystanprivacy.privacy.mechanisms.laplace", "pystanprivacy.privacy.ldp"} <= set(seen["loaded"])
    assert not [m for m in seen["loaded"] if m.startswith(UPPER_LAYERS)]
