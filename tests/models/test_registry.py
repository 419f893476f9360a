"""The model registry (pystanprivacy.models.registry): every stan/<paper>/<model>.json names a
class whose model_name is that model, and every model class of the package has exactly one
entry. Nothing is compiled."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path

import pytest

import pystanprivacy.models
from pystanprivacy.models import registry
from pystanprivacy.models.base import Model
from pystanprivacy.models.registry import (
    PYTHON_KEY,
    class_path,
    model_class,
    model_entry,
    model_metadata,
    model_names,
)
from pystanprivacy.sampling.stan import stan_root

NAMES = model_names()
REQUIRED_KEYS = ("paper", "title", "reference", "equations", "privacy", PYTHON_KEY)


def _model_classes() -> dict[type, str]:
    """Every class defined in a module of pystanprivacy.models that claims a Stan model: a
    subclass of models.base.Model with a non-empty model_name, or any class with a non-empty
    string model_name (the classes not yet converted to the base). Class -> module."""
    found: dict[type, str] = {}
    package = pystanprivacy.models
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if not inspect.isclass(obj) or obj.__module__ != module.__name__:
                continue  # re-exports are found in their own module
            name = getattr(obj, "model_name", None)
            if (issubclass(obj, Model) and name) or (isinstance(name, str) and name):
                found[obj] = module.__name__
    return found


def test_the_registry_is_every_stan_program_outside_the_shared_functions():
    root = stan_root()
    programs = sorted(p.relative_to(root).with_suffix("").as_posix() for p in root.glob("*/*.stan"))
    assert NAMES == [p for p in programs if not p.startswith("functions/")]
    assert len(NAMES) >= 20 and all(re.fullmatch(r"[a-z]+\d{4}/[a-z0-9_]+", n) for n in NAMES)
    # the test programs under tests/stan are not models of the collection
    test_programs = {p.stem for p in (Path(__file__).resolve().parents[1] / "stan").glob("*.stan")}
    assert test_programs and not test_programs & {n.split("/")[1] for n in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_every_entry_resolves_to_its_class(name):
    entry = model_entry(name)
    assert entry.name == name and entry.paper == name.split("/")[0]
    assert entry.cls is model_class(name) and entry.cls.model_name == name
    assert entry.stan_file == stan_root() / f"{name}.stan" and entry.stan_file.is_file()
    # the JSON spells the class "pystanprivacy.models.<module>:<Class>" and says where it is
    module, _, attribute = entry.class_path.partition(":")
    assert (
        re.fullmatch(r"pystanprivacy\.models(\.\w+)+", module)
        and getattr(importlib.import_module(module), attribute) is entry.cls
    )
    assert entry.class_path == class_path(name) == model_metadata(name)[PYTHON_KEY]
    # the metadata every model documents, and the paper matches the folder
    meta = entry.metadata
    missing = [k for k in REQUIRED_KEYS if not (isinstance(meta.get(k), str) and meta[k].strip())]
    assert not missing, f"{name}.json lacks {missing}"
    assert meta["paper"] == entry.paper and entry.title == meta["title"]
    with pytest.raises(TypeError):
        entry.metadata["title"] = "changed"  # read-only view


def test_every_model_class_has_exactly_one_entry():
    classes = _model_classes()
    assert len(classes) >= len(NAMES)
    registered = {name: model_class(name) for name in NAMES}
    unregistered = sorted(
        f"{module}.{cls.__name__} (model_name {cls.model_name!r})"
        for cls, module in classes.items()
        if registered.get(cls.model_name) is not cls
    )
    assert not unregistered, "model classes without a registry entry (or claiming another class's model): " + ", ".join(
        unregistered
    )
    # and no entry names a class living outside the models package's modules
    assert set(registered.values()) <= set(classes)


def test_unknown_or_ill_typed_names_are_refused_listing_the_models():
    with pytest.raises(ValueError, match=r"unknown model 'foulds2016/nope'; known models: .*foulds2016/beta_bernoulli"):
        model_class("foulds2016/nope")
    with pytest.raises(ValueError, match="known models: bernstein2018/binomial_beta, "):
        model_entry("tests/stan/hostile_reject")
    with pytest.raises(TypeError, match="model name must be a string"):
        model_class(3)


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    """A one-model registry in tmp_path: ``fakepaper/m.stan`` and the JSON the test writes."""
    stan = tmp_path / "fakepaper" / "m.stan"
    stan.parent.mkdir()
    stan.write_text("// placeholder\n")
    monkeypatch.setattr(registry, "available_models", lambda: ["fakepaper/m"])
    monkeypatch.setattr(registry, "model_file", lambda name: tmp_path / f"{name}.stan")

    def write(meta):
        stan.with_suffix(".json").write_text(meta if isinstance(meta, str) else json.dumps(meta))
        return "fakepaper/m"

    return write


@pytest.mark.parametrize(
    "python, message",
    [
        (None, r"'python' must name the model's class as 'pystanprivacy\.models\.<module>:<Class>', got None"),
        ("pystanprivacy.models.foulds2016.BetaBernoulli", r"got 'pystanprivacy\.models\.foulds2016\.BetaBernoulli'"),
        ("collections:OrderedDict", r"got 'collections:OrderedDict'"),
        (
            "pystanprivacy.models.foulds2016:NoSuchClass",
            r"pystanprivacy\.models\.foulds2016 has no class 'NoSuchClass'",
        ),
        (
            "pystanprivacy.models.foulds2016:BetaBernoulli",
            r"whose model_name is 'foulds2016/beta_bernoulli', not 'fakepaper/m'",
        ),
    ],
)
def test_a_json_that_does_not_name_the_models_class_is_refused(fake_model, python, message):
    meta = {"paper": "fakepaper", "title": "t"}
    if python is not None:
        meta[PYTHON_KEY] = python
    name = fake_model(meta)
    with pytest.raises(ValueError, match=message):
        model_class(name)
    with pytest.raises(ValueError, match=r"m\.json"):  # the message names the file to fix
        model_entry(name)


def test_a_missing_module_is_an_import_error(fake_model):
    name = fake_model({PYTHON_KEY: "pystanprivacy.models.no_such_module:X"})
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        model_class(name)


@pytest.mark.parametrize(
    "text, error, message",
    [
        ("[1, 2]", ValueError, "must hold a JSON object, got list"),
        ("{not json", ValueError, "is not valid JSON"),
        (None, FileNotFoundError, r"has no metadata file .*m\.json"),
    ],
)
def test_bad_metadata_files(fake_model, tmp_path, text, error, message):
    name = fake_model(text) if text is not None else "fakepaper/m"
    with pytest.raises(error, match=message):
        model_metadata(name)


# ------------------------------------------------------------------- README's model table
README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_model_table() -> list[list[str]]:
    """The cells of the README's model table (the table whose header has a "Stan file" and a
    "Python class" column), one list per row."""
    lines = README.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        header = [c.strip() for c in line.strip().strip("|").split("|")]
        if "Stan file" in header and "Python class" in header:
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|"))])
            return [dict(zip(header, r)) for r in rows]
    raise AssertionError("README.md has no model table (a table with 'Stan file' and 'Python class' columns)")


def test_readme_model_table_lists_exactly_the_registry():
    rows = _readme_model_table()
    listed = {}
    for row in rows:
        stan = re.fullmatch(r"`stan/([a-z0-9]+/[a-z0-9_]+)\.stan`", row["Stan file"])
        cls = re.match(r"`models\.([\w.]+)\.(\w+)`", row["Python class"])
        assert stan and cls, (
            f"a model-table row must name one stan/<paper>/<model>.stan and one `models.<module>.<Class>`: {row}"
        )
        name = stan.group(1)
        assert name not in listed, f"{name} has two rows in README's model table"
        listed[name] = f"pystanprivacy.models.{cls.group(1)}:{cls.group(2)}"
    assert sorted(listed) == NAMES, "README's model table and the registry list different models"
    wrong = {name: path for name, path in listed.items() if path != class_path(name)}
    assert not wrong, f"README's model table names other classes than the registry: {wrong}"
