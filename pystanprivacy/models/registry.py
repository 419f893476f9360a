"""The model registry: ``stan/<paper>/<model>.json`` names each model's Python class.

Every model of the collection is a Stan program ``stan/<paper>/<model>.stan`` with a JSON file
beside it. The JSON holds the model's metadata (``paper``, ``title``, ``reference``,
``equations``, ``privacy``) and, under ``"python"``, the class that runs it, spelled
``"pystanprivacy.models.<module>:<Class>"``; that class's ``model_name`` is
``"<paper>/<model>"``. Nothing else lists the models: ``pystanprivacy models``, the tests that
loop over models, the per-model benchmark and the README's model table are driven by (or
checked against) this registry.

Examples
--------
>>> from pystanprivacy.models.registry import model_class, model_names
>>> "foulds2016/beta_bernoulli" in model_names()
True
>>> model_class("foulds2016/beta_bernoulli").__name__
'BetaBernoulli'
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..sampling.stan import available_models, model_file

__all__ = ["PYTHON_KEY", "ModelEntry", "model_names", "model_metadata", "class_path", "model_class", "model_entry"]

#: the key of a model's JSON file that names its Python class
PYTHON_KEY = "python"

_PACKAGE = "pystanprivacy.models"
_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_CLASS_PATH = re.compile(rf"^{re.escape(_PACKAGE)}(?:\.{_IDENTIFIER})+:{_IDENTIFIER}$")


@dataclasses.dataclass(frozen=True)
class ModelEntry:
    """One model of the registry.

    Attributes
    ----------
    name:
        ``"<paper>/<model>"``: the Stan program ``stan/<paper>/<model>.stan``.
    paper:
        The paper's short name (the folder of the program).
    cls:
        The Python class that runs the model (its ``model_name`` is ``name``).
    class_path:
        Where the JSON says the class is: ``"pystanprivacy.models.<module>:<Class>"``.
    stan_file:
        Path of the ``.stan`` program.
    metadata:
        The whole JSON file (``title``, ``reference``, ``equations``, ``privacy``, ...).
    """

    name: str
    paper: str
    cls: type
    class_path: str
    stan_file: Path
    metadata: Mapping[str, Any]

    @property
    def title(self) -> str | None:
        """The model's one-line description (the JSON's ``title``), if it has one."""
        title = self.metadata.get("title")
        return None if title is None else str(title)


def model_names() -> list[str]:
    """Names of every model of the collection, sorted (``["bernstein2018/binomial_beta", ...]``).

    These are the Stan programs under ``stan/`` (shared function files excluded); the test
    programs under ``tests/stan`` are not models of the collection.
    """
    return available_models()


def _known(name: Any) -> str:
    """``name`` itself when it names a model; ``TypeError``/``ValueError`` listing the models otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"model name must be a string such as 'foulds2016/beta_bernoulli', got {name!r}")
    names = model_names()
    if name not in names:
        raise ValueError(f"unknown model {name!r}; known models: {', '.join(names)}")
    return name


def _json_file(name: str) -> Path:
    return model_file(_known(name)).with_suffix(".json")


def model_metadata(name: str) -> dict[str, Any]:
    """The JSON metadata of model ``name`` (``stan/<paper>/<model>.json``) as a dict.

    Raises
    ------
    TypeError, ValueError
        ``name`` is not a known model (the message lists the known ones).
    FileNotFoundError
        The model has no JSON file.
    ValueError
        The file is not valid JSON or does not hold a JSON object.
    """
    path = _json_file(name)
    if not path.is_file():
        raise FileNotFoundError(
            f"model {name!r} has no metadata file {path}: every stan/<paper>/<model>.stan needs "
            f"a JSON file beside it naming its class under {PYTHON_KEY!r}"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"metadata file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"metadata file {path} must hold a JSON object, got {type(data).__name__}")  # noqa: TRY004 - bad file content, not an argument
    return data


def _class_path(name: str, metadata: Mapping[str, Any]) -> str:
    value = metadata.get(PYTHON_KEY)
    if not isinstance(value, str) or not _CLASS_PATH.match(value):
        raise ValueError(
            f"{_json_file(name)}: {PYTHON_KEY!r} must name the model's class as "
            f"'{_PACKAGE}.<module>:<Class>', got {value!r}"
        )
    return value


def class_path(name: str) -> str:
    """Where the registry says model ``name``'s class is, ``"pystanprivacy.models.<module>:<Class>"``,
    read from its JSON file without importing anything.

    Raises
    ------
    ValueError
        The JSON has no ``"python"`` key or its value is not spelled as above (and the
        errors of :func:`model_metadata`).
    """
    return _class_path(name, model_metadata(name))


def _import_class(name: str, path: str) -> type:
    module_name, _, attribute = path.partition(":")
    module = importlib.import_module(module_name)
    cls = getattr(module, attribute, None)
    if not isinstance(cls, type):
        raise ValueError(  # noqa: TRY004 - bad metadata, not an argument
            f"{_json_file(name)}: {PYTHON_KEY!r} is {path!r}, but {module_name} has no class {attribute!r}"
        )
    if getattr(cls, "model_name", None) != name:
        raise ValueError(
            f"{_json_file(name)}: {PYTHON_KEY!r} names {path}, whose model_name is "
            f"{getattr(cls, 'model_name', None)!r}, not {name!r}"
        )
    return cls


def model_class(name: str) -> type:
    """The Python class of model ``name`` (imported from where its JSON says).

    Raises
    ------
    TypeError, ValueError
        ``name`` is not a known model (the message lists the known ones), or its JSON does
        not name a class whose ``model_name`` is ``name``.
    ImportError
        The module the JSON names cannot be imported.
    """
    return _import_class(name, class_path(name))


def model_entry(name: str) -> ModelEntry:
    """Model ``name``'s metadata and class together (errors as :func:`model_class`)."""
    metadata = model_metadata(name)
    path = _class_path(name, metadata)
    return ModelEntry(
        name=name,
        paper=name.split("/", 1)[0],
        cls=_import_class(name, path),
        class_path=path,
        stan_file=model_file(name),
        metadata=types.MappingProxyType(metadata),
    )
