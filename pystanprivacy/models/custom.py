"""Fit any Stan program on a :class:`~pystanprivacy.privacy.records.Release`.

A user writes the model; the library supplies the noise model (the function library in
``stan/functions/``, :mod:`pystanprivacy.stanfunctions`), the release's values and its
record's public fields under documented data names, the checks before Stan runs, and a
:class:`~pystanprivacy.sampling.posterior.Posterior` that carries the record::

    release = Release.load("release.json")            # published by the data owner
    program = StanProgram("poisson_rate.stan")         # #include dp_noise.stanfunctions
    posterior = program.fit(release, data={"G": 4}, seed=1)
    posterior.privacy                                  # the release's record

The data names (:data:`DP_FIELDS`); only those the program's ``data`` block declares are
passed:

==================  =====================================================================
``dp_y``            the release's values: a scalar as ``real``/``int``, 1-D as a vector or
                    array, n-D as is; integer values stay integers
``dp_size``         the number of released values (``int``), e.g. ``vector[dp_size] dp_y``
``dp_epsilon``      ``record.epsilon``
``dp_delta``        ``record.delta``
``dp_scale``        ``record.scale`` (Laplace ``b``, Gaussian ``sigma``)
``dp_sensitivity``  ``record.sensitivity``
``dp_n``            ``record.n`` (``int``)
``dp_lower``        ``record.bounds[0]``
``dp_upper``        ``record.bounds[1]``
``dp_grid``         ``record.details["grid"]`` (``real``): the grid ``2^k`` of a secure
                    additive release's discrete noise (1 for counts under Laplace, ``2^k <= 1``
                    under the Gaussians); absent from a seeded release (continuous noise)
``dp_p_keep``       ``record.details["p_keep"]`` (``real``): randomised response's probability
                    ``e^ε / (1 + e^ε)`` of reporting the true bit
==================  =====================================================================

Every value comes from the release's record (public, written by the mechanism), never from
the data or from ``data=``.

Refused before Stan runs (``ValueError``/``TypeError``), each naming what is wrong: a
declared ``dp_*`` name that is not one of these, or whose record field the release lacks
(both named); a catalogue function the program calls whose mechanisms do not include the
release's (both named); a key of ``data=`` that is a ``dp_*`` name, or that the program does
not declare; a declared data variable that neither the release nor ``data=`` supplies; a
release whose values do not have the shape its record states.

References
----------
.. [1] Stan Development Team, "Stan Reference Manual" 2.35, "Includes" and "Program
   blocks" (the data block a program declares).
.. [2] Bernstein & Sheldon (2018), "Differentially Private Bayesian Inference for
   Exponential Families", NeurIPS: a noise-aware posterior conditions on the release
   through the mechanism's noise model, whose scale comes from the release's record.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from ..privacy.records import PrivacyRecord, Release
from ..sampling.backends import Backend
from ..sampling.posterior import Posterior
from ..sampling.stan import StanModel, cache_dir, model_info
from .base import check_release_matches_record, with_record

__all__ = ["StanProgram", "DP_FIELDS", "release_data"]

#: the data names a program may declare to receive the release, and the record field each
#: comes from (:func:`release_data`)
DP_FIELDS: Mapping[str, str] = MappingProxyType(
    {
        "dp_y": "values",
        "dp_size": "values (their number)",
        "dp_epsilon": "epsilon",
        "dp_delta": "delta",
        "dp_scale": "scale",
        "dp_sensitivity": "sensitivity",
        "dp_n": "n",
        "dp_lower": "bounds",
        "dp_upper": "bounds",
        "dp_grid": "details['grid']",
        "dp_p_keep": "details['p_keep']",
    }
)

#: the DP_FIELDS read from ``record.details`` (name -> key), each a real number
_DETAIL_FIELDS: Mapping[str, str] = MappingProxyType({"dp_grid": "grid", "dp_p_keep": "p_keep"})

#: the folder (under the compile cache) holding programs given as code, by content hash
_PROGRAMS_DIR = "programs"


def release_data(release: Release) -> dict[str, Any]:
    """The :data:`DP_FIELDS` that ``release`` supplies (a field its record lacks is absent).

    ``dp_y`` keeps the values' type: an integer array gives integers, a 0-d array a scalar.
    """
    if not isinstance(release, Release):
        raise TypeError(f"release must be a Release, got {type(release).__name__}")
    rec = release.record
    values = release.values
    out: dict[str, Any] = {
        "dp_y": values.item() if values.ndim == 0 else values,
        "dp_size": int(values.size),
        "dp_epsilon": rec.epsilon,
        "dp_delta": rec.delta,
    }
    for name, value in (("dp_scale", rec.scale), ("dp_sensitivity", rec.sensitivity), ("dp_n", rec.n)):
        if value is not None:
            out[name] = value
    if rec.bounds is not None:
        out["dp_lower"], out["dp_upper"] = rec.bounds
    for name, key in _DETAIL_FIELDS.items():
        value = rec.details.get(key)
        if value is not None:
            out[name] = float(value)
    return out


def _program_file(path_or_code: str | os.PathLike) -> tuple[Path, str]:
    """The ``.stan`` file to compile and the program's own text: a path as given (resolved,
    a regular file), or code written once to the compile cache under its content hash (so
    the same code is the same file, and the cache key stays the same)."""
    if isinstance(path_or_code, os.PathLike) or (
        isinstance(path_or_code, str) and "\n" not in path_or_code and path_or_code.strip().endswith(".stan")
    ):
        path = Path(path_or_code).expanduser()
        if path.suffix != ".stan":
            raise ValueError(f"path_or_code {str(path)!r}: a Stan program's file name must end in .stan")
        if not path.is_file():
            raise FileNotFoundError(f"path_or_code {str(path)!r}: no Stan program file there")
        path = path.resolve()
        return path, path.read_text(encoding="utf-8")
    if not isinstance(path_or_code, str):
        raise TypeError(
            f"path_or_code must be a path to a .stan file or the program's code (str), got "
            f"{type(path_or_code).__name__}"
        )
    if not path_or_code.strip():
        raise ValueError("path_or_code is empty; give a .stan file or the program's code")
    digest = hashlib.sha256(path_or_code.encode()).hexdigest()[:20]
    folder = cache_dir() / _PROGRAMS_DIR
    folder.mkdir(exist_ok=True, mode=0o700)
    path = folder / f"program-{digest}.stan"
    if not path.is_file() or path.read_text(encoding="utf-8") != path_or_code:
        tmp = folder / f".program-{digest}-{os.getpid()}.tmp"
        tmp.write_text(path_or_code, encoding="utf-8")
        os.replace(tmp, path)
    return path, path_or_code


class StanProgram:
    """A user's Stan program, compiled with the function library on its include path and
    fitted on a :class:`~pystanprivacy.privacy.records.Release`.

    Parameters
    ----------
    path_or_code : str or os.PathLike
        A ``.stan`` file (a ``Path``, or a one-line str ending in ``.stan``), or the program's
        code. ``#include`` resolves against ``stan/functions/`` (the function library, e.g.
        ``#include dp_noise.stanfunctions``) and the program's own folder.
    backend : str or Backend, optional
        ``"cmdstanpy"``, ``"pystan"``, ``"auto"`` or ``None`` (``$PYSTANPRIVACY_BACKEND``), as
        for the registry's models; the compiled program goes to the same cache (keyed by the
        flattened program, the backend and its versions), compiled once.

    The program is parsed at once (``stanc --info``, no C++ compiler): a syntax error or an
    unknown include is a ``ValueError`` here. It is compiled on the first :meth:`fit`.

    References
    ----------
    .. [1] Stan Development Team, "Stan Reference Manual" 2.35, "Includes".
    """

    def __init__(self, path_or_code: str | os.PathLike, *, backend: str | Backend | None = None) -> None:
        self.path, self.code = _program_file(path_or_code)
        self.backend = backend
        info = model_info(str(self.path))  # stanc --info: a syntax error is a ValueError here
        #: the program's data block: name -> {"type": ..., "dimensions": ...}
        self.inputs: dict[str, dict[str, Any]] = dict(info.get("inputs", {}))
        unknown = sorted(n for n in self.inputs if n.startswith("dp_") and n not in DP_FIELDS)
        if unknown:
            raise ValueError(
                f"the program declares data {', '.join(unknown)}: a dp_* name that is not one of the "
                f"release's data names {list(DP_FIELDS)}"
            )
        self._model: StanModel | None = None

    def __repr__(self) -> str:
        return f"StanProgram({str(self.path)!r})"

    @property
    def functions(self) -> dict[str, frozenset[str]]:
        """The catalogue functions the program calls (its own text, comments aside), each with
        the ``PrivacyRecord.mechanism`` values it models."""
        from .. import stanfunctions

        called = stanfunctions.functions_called(self.code)
        return {
            name: stanfunctions.CATALOGUE[name].mechanisms for name in sorted(called) if name in stanfunctions.CATALOGUE
        }

    @property
    def stan_model(self) -> StanModel:
        """The compiled program (compiled on first use; cached on disk like the registry's)."""
        if self._model is None:
            self._model = StanModel(str(self.path), backend=self.backend)
        return self._model

    def data_for(self, release: Release, data: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The program's data: the declared :data:`DP_FIELDS` from ``release`` and the
        user's ``data``; every check of :meth:`fit` that runs before Stan (see the module
        docstring)."""
        if not isinstance(release, Release):
            raise TypeError(f"release must be a Release, got {type(release).__name__}")
        data = {} if data is None else data
        if not isinstance(data, Mapping) or not all(isinstance(k, str) for k in data):
            raise TypeError(
                f"data must be a mapping of the program's data names (str) to values, got {type(data).__name__}"
            )
        self._check_mechanism(release.record)
        _check_structure(release)
        clash = sorted(k for k in data if k in DP_FIELDS)
        if clash:
            raise ValueError(
                f"data has {', '.join(clash)}: dp_* names come from the release and its record, not from data="
            )
        undeclared = sorted(set(data) - set(self.inputs))
        if undeclared:
            raise ValueError(
                f"data has {', '.join(undeclared)}, which the program's data block does not declare "
                f"(it declares: {', '.join(self.inputs) or 'nothing'})"
            )
        supplied = release_data(release)
        out: dict[str, Any] = {}
        for name, decl in self.inputs.items():
            if name in DP_FIELDS:
                if name not in supplied:
                    raise ValueError(_missing_field(name, release.record))
                out[name] = supplied[name]
                if name == "dp_y":
                    _check_y_type(decl, release.values)
            elif name in data:
                out[name] = data[name]
            else:
                raise ValueError(
                    f"the program declares data {name}, which neither the release ({', '.join(DP_FIELDS)}) "
                    "nor data= supplies"
                )
        return out

    def _check_mechanism(self, record: PrivacyRecord) -> None:
        for name, mechanisms in self.functions.items():
            if record.mechanism not in mechanisms:
                raise ValueError(
                    f"the program calls {name}, which models releases of mechanism "
                    f"{' or '.join(repr(m) for m in sorted(mechanisms))}, but the release's record "
                    f"states mechanism {record.mechanism!r}"
                )

    def fit(
        self,
        release: Release,
        *,
        data: Mapping[str, Any] | None = None,
        chains: int = 4,
        warmup: int = 1000,
        draws: int = 1000,
        seed: int | np.random.Generator | None = None,
        public_data: bool = False,
        **sampler: Any,
    ) -> Posterior:
        """The posterior of the program given ``release`` (NUTS); it carries the release's record.

        Parameters
        ----------
        release : Release
            The privatised values and their record (e.g. :meth:`Release.load` of a published file).
        data : mapping, optional
            The program's other data (sizes, prior hyperparameters, public covariates); never a
            ``dp_*`` name.
        chains, warmup, draws, seed, **sampler
            As for :meth:`StanModel.sample <pystanprivacy.sampling.stan.StanModel.sample>`
            (``adapt_delta``, ``max_treedepth``, ``thin``, ``init``).
        public_data : bool, optional
            ``True`` only when the release is of simulated or public data (simulation-based
            calibration, a worked example): a failed Stan run's error then shows Stan's numbers.
            Default ``False``: they are ``<num>`` (Stan's messages can quote the release and
            the data).

        Returns
        -------
        Posterior
            With ``posterior.privacy`` the release's record (``record.to_dict()``).

        Raises
        ------
        TypeError, ValueError
            For every check listed in the module docstring, before anything is compiled or sampled.
        """
        clean = self.data_for(release, data)
        posterior = self.stan_model.sample(
            clean, chains=chains, warmup=warmup, draws=draws, seed=seed, public_data=public_data, **sampler
        )
        return with_record(posterior, release.record)


def _missing_field(name: str, record: PrivacyRecord) -> str:
    """The error for a declared data name whose record field the release lacks."""
    if name in _DETAIL_FIELDS:
        key = _DETAIL_FIELDS[name]
        why = {
            "grid": (
                "a grid is recorded by a secure (seed=None) Laplace or Gaussian release; a seeded "
                "release's noise is continuous, on no grid"
            ),
            "p_keep": "p_keep is recorded by randomised response",
        }[key]
        return (
            f"the program declares {name}, but the release's record has no details[{key!r}] "
            f"(mechanism {record.mechanism!r}, secure={record.details.get('secure')!r}): {why}"
        )
    return (
        f"the program declares {name}, but the release's record has no {DP_FIELDS[name]} "
        f"(record.{DP_FIELDS[name].split(' ')[0]} is None, mechanism {record.mechanism!r})"
    )


def _check_structure(release: Release) -> None:
    """The release's values have the shape its record states: one entry per data set along
    the first axis where the record states ``details["datasets"]``, one report per record along
    the first axis of a local (per-user) release."""
    details = release.record.details
    if "datasets" in details:
        check_release_matches_record(release, np.atleast_2d(release.values), model="StanProgram", datasets_axis=0)
    if details.get("per_user") or details.get("local"):  # (R, n, ...) with datasets, else (n, ...)
        axis = 1 if "datasets" in details else 0
        check_release_matches_record(
            release,
            np.atleast_2d(release.values) if axis else np.atleast_1d(release.values),
            model="StanProgram",
            records_axis=axis,
        )


def _check_y_type(decl: Mapping[str, Any], values: np.ndarray) -> None:
    """A program that declares ``dp_y`` as ``int`` gets integer values only (a secure release
    on the integer grid holds integral floats: those pass); counted, never shown."""
    if str(decl.get("type", "")).startswith("int") and values.dtype.kind == "f":
        n_bad = int(np.count_nonzero(values != np.round(values)))
        if n_bad:
            raise TypeError(
                f"the program declares dp_y as {decl.get('type')}, but {n_bad} of the release's values "
                "are not integers; declare dp_y real (a vector or array of real)"
            )
