"""The package's layout: dependencies point down (read from every module's import statements,
at any depth, relative ones resolved; docstrings and comments do not count), the top level
holds only the allowed modules, and every old import path of the 0.2 reshape still imports,
with a DeprecationWarning, as the same module object as its new path."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import pystanprivacy
from pystanprivacy._moved import MOVED

PACKAGE = Path(pystanprivacy.__file__).resolve().parent
NAME = "pystanprivacy"

#: the modules allowed at the top level of the package, besides the subpackages
TOP_LEVEL_MODULES = {"__init__", "__main__", "cli", "_validation", "_fingerprint", "_moved", "stanfunctions"}
#: the subpackages: one per layer
SUBPACKAGES = {"privacy", "sampling", "models", "experiments", "datasets", "run", "checks", "interop", "report"}

#: layer -> the layers it must never import (cli -> experiments -> models -> (privacy, sampling);
#: privacy and sampling never import each other; nothing but the command line imports an
#: experiment; _validation and _fingerprint are the shared bottom layer; checks (SBC) sits beside
#: experiments: it uses models, privacy and run, and only the command line imports it; interop
#: sits on privacy alone; report (the verdict rule, the Claim type) needs none of the layers: each
#: experiments/<paper>/claims.py imports it, and its all_claims() imports those claims modules by
#: name at call time, as the command line does)
FORBIDDEN = {
    "privacy": {"sampling", "models", "experiments", "datasets", "run", "cli", "checks", "interop"},
    # releases of other libraries (OpenDP) as the privacy layer's Releases: nothing above it
    "interop": {"sampling", "models", "experiments", "datasets", "run", "cli", "checks"},
    "sampling": {"privacy", "models", "experiments", "datasets", "run", "cli", "checks"},
    "models": {"experiments", "run", "cli", "checks"},
    "datasets": {"models", "experiments", "run", "cli", "checks"},
    "experiments": {"cli", "checks"},
    "checks": {"experiments", "cli"},
    "run": {"experiments", "cli", "checks"},
    "_validation": {"privacy", "sampling", "models", "experiments", "datasets", "run", "cli", "checks"},
    # the catalogue of the Stan noise-function library: read by models.custom; finds the library's
    # folder through sampling.stan
    "stanfunctions": {"privacy", "models", "experiments", "datasets", "run", "cli", "checks"},
    "_fingerprint": {"privacy", "sampling", "models", "experiments", "datasets", "run", "cli", "_validation", "checks"},
    "report": {"privacy", "sampling", "models", "experiments", "datasets", "run", "cli", "checks", "interop"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}


def imports_of(module: str, path: Path) -> set[str]:
    """Every module (or ``module.attribute``) that ``module`` imports anywhere in its body:
    ``import a.b`` gives ``a.b``; ``from a import b`` gives ``a.b`` (b may be a module);
    relative imports are resolved against the module's package."""
    is_package = path.name == "__init__.py"
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                assert len(base) == len(package) - (node.level - 1) and base, f"{module}: import beyond the package"
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.add(source)
            found.update(f"{source}.{alias.name}" for alias in node.names if alias.name != "*")
    return found


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == NAME and len(parts) > 1 else None


def upward_imports() -> dict[str, list[str]]:
    """Module -> the package modules it imports against :data:`FORBIDDEN`."""
    bad: dict[str, list[str]] = {}
    for module, path in _modules().items():
        forbidden = FORBIDDEN.get(_layer(module) or "", set())
        hits = sorted(t for t in imports_of(module, path) if _layer(t) in forbidden)
        # "from pystanprivacy.experiments import x" also lists "...experiments.x": report the module once
        hits = [t for t in hits if not any(t.startswith(f"{h}.") for h in hits)]
        if hits:
            bad[module] = hits
    return bad


def test_the_import_reader_resolves_relative_and_nested_imports(tmp_path, monkeypatch):
    pkg = tmp_path / NAME / "models"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .base import Model\n")
    src = pkg / "x.py"
    src.write_text(
        '"""Docstring: from ..experiments import nothing; import pystanprivacy.cli"""\n'
        "import numpy as np\n"
        "from . import base\n"
        "def f():\n"
        "    from ..experiments.jewson2023 import study\n"
        "    if True:\n"
        "        import pystanprivacy.run.runner as r\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / NAME)
    assert _module_name(src) == "pystanprivacy.models.x" and _module_name(pkg / "__init__.py") == "pystanprivacy.models"
    assert imports_of("pystanprivacy.models.x", src) == {
        "numpy",
        "pystanprivacy.models",
        "pystanprivacy.models.base",
        "pystanprivacy.experiments.jewson2023",
        "pystanprivacy.experiments.jewson2023.study",
        "pystanprivacy.run.runner",
    }
    assert imports_of("pystanprivacy.models", pkg / "__init__.py") == {
        "pystanprivacy.models.base",
        "pystanprivacy.models.base.Model",
    }
    assert upward_imports() == {
        "pystanprivacy.models.x": ["pystanprivacy.experiments.jewson2023", "pystanprivacy.run.runner"]
    }


def test_dependencies_point_down():
    bad = upward_imports()
    assert not bad, "imports against the layering (module: what it imports):\n" + "\n".join(
        f"  {module}: {', '.join(targets)}" for module, targets in sorted(bad.items())
    )


def test_the_top_level_holds_only_the_layers():
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    namespace = {
        p.name for p in PACKAGE.iterdir() if p.is_dir() and not (p / "__init__.py").exists() and any(p.rglob("*.py"))
    }
    assert modules <= TOP_LEVEL_MODULES, (
        f"modules at the top level beyond the allowed ones: {sorted(modules - TOP_LEVEL_MODULES)}"
    )
    assert packages == SUBPACKAGES and not namespace, (sorted(packages), sorted(namespace))
    assert len(modules) == 7 and len(modules | packages) == 16


# ------------------------------------------------------------------- old import paths
_CHILD = r"""
import importlib, json, sys, warnings
from pystanprivacy._moved import MOVED

report = {}
for old, new in MOVED.items():
    already = old in sys.modules
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning) and old in str(w.message)]
    same = module is importlib.import_module(new) and sys.modules[old] is sys.modules[new] if new else None
    report[old] = {"already": already, "warnings": messages, "same": same,
                   "path": list(getattr(module, "__path__", ["<not a package>"]))}
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def moved_report():
    """Import every old path, in order, in one fresh interpreter (so that no earlier import hides a warning)."""
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=300, cwd=PACKAGE.parent
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_old_import_path_warns_and_is_the_new_module(moved_report, old):
    row = moved_report[old]
    assert not row["already"], f"{old} was imported before anyone asked for it: the package still uses the old path"
    assert len(row["warnings"]) == 1, row["warnings"]
    new = MOVED[old]
    if new is None:  # a former package: an empty package that only serves its moved modules
        assert "is no longer a package" in row["warnings"][0] and row["path"] == []
        assert any(k.startswith(f"{old}.") for k in MOVED)
    else:
        assert f"{old} moved to {new}" in row["warnings"][0] and "0.3" in row["warnings"][0]
        assert row["same"] is True
