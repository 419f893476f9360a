"""Posterior draws of one Stan fit with their diagnostics.

A :class:`Posterior` wraps an ArviZ ``InferenceData`` holding the draws and Stan's sampler
statistics -- never the data the model saw -- and answers the questions a user asks of a
fit: the draws of a variable, a summary table, split R-hat, bulk/tail ESS, divergences,
tree-depth hits, and :meth:`Posterior.check`, which says in words what is wrong.

:meth:`Posterior.save` writes a netCDF file and :meth:`Posterior.load` reads one back; a file
that ``load`` cannot use (not a regular file, not written by ``save``, or carrying metadata or
a privacy record that does not validate) raises :class:`PosteriorFileError`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_int, check_real, open_regular_file
from .backends.base import RawFit, SamplerSettings

if TYPE_CHECKING:  # pandas is imported lazily (it costs ~0.25 s of start-up)
    import pandas as pd

__all__ = ["Posterior", "Thresholds", "ConvergenceError", "PosteriorFileError", "register_record_check"]

# Stan's sampler columns -> ArviZ's sample_stats names
_STAT_NAMES = {
    "lp__": "lp",
    "accept_stat__": "acceptance_rate",
    "stepsize__": "step_size",
    "treedepth__": "tree_depth",
    "n_leapfrog__": "n_steps",
    "divergent__": "diverging",
    "energy__": "energy",
}


def _arviz():
    """ArviZ, imported lazily without its import-time FutureWarning about a refactor."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


def _rounded(value: float, digits: int, *, up: bool) -> str:
    """``value`` with ``digits`` decimals, rounded away from the threshold it failed (R-hat
    up, ESS down), so a message never reads "ESS 100 (< 100)" for an ESS of 99.6."""
    if not math.isfinite(value):
        return str(value)
    scaled = value * 10**digits
    return f"{(math.ceil(scaled) if up else math.floor(scaled)) / 10**digits:.{digits}f}"


@dataclasses.dataclass(frozen=True)
class Thresholds:
    """What :meth:`Posterior.check` accepts (defaults follow Vehtari et al. 2021).

    Validated on construction: a NaN, infinite, negative or wrongly typed threshold would
    make its comparison always pass (silently disabling that check of the convergence gate)
    or always fail, so it raises ``TypeError`` / ``ValueError`` naming the field.

    Attributes
    ----------
    max_rhat : float
        Largest split R-hat accepted; finite and >= 1 (R-hat is about 1 for mixed chains).
    min_ess_per_chain : float
        Smallest bulk and tail ESS accepted, per chain; finite and >= 0.
    max_divergences : int
        Most divergent transitions accepted; an int >= 0.
    max_treedepth_fraction : float
        Largest fraction of iterations at the maximum tree depth accepted; in [0, 1].
    """

    max_rhat: float = 1.01
    min_ess_per_chain: float = 100.0
    max_divergences: int = 0
    max_treedepth_fraction: float = 0.0

    def __post_init__(self) -> None:
        rhat = check_real(self.max_rhat, "max_rhat")
        if not (math.isfinite(rhat) and rhat >= 1.0):
            raise ValueError(
                f"max_rhat must be a finite number >= 1 (split R-hat is about 1 for mixed chains), "
                f"got {self.max_rhat!r}"
            )
        ess = check_real(self.min_ess_per_chain, "min_ess_per_chain")
        if not (math.isfinite(ess) and ess >= 0.0):
            raise ValueError(f"min_ess_per_chain must be a finite number >= 0, got {self.min_ess_per_chain!r}")
        divergences = check_int(self.max_divergences, "max_divergences", minimum=0)
        fraction = check_real(self.max_treedepth_fraction, "max_treedepth_fraction")
        if not 0.0 <= fraction <= 1.0:  # False for NaN
            raise ValueError(f"max_treedepth_fraction must be a number in [0, 1], got {self.max_treedepth_fraction!r}")
        # plain Python numbers (a numpy scalar would show as np.float64(...) in messages and records)
        for name, value in (
            ("max_rhat", rhat),
            ("min_ess_per_chain", ess),
            ("max_divergences", divergences),
            ("max_treedepth_fraction", fraction),
        ):
            object.__setattr__(self, name, value)


class ConvergenceError(RuntimeError):
    """A one-posterior-sampling (OPS) draw was refused: the sampler did not pass the
    convergence checks, so no draw was released.

    Whether the checks pass depends on the private data, so a refusal is itself an output:
    the OPS models charge epsilon for every attempt before sampling and keep the charge
    when they refuse. Build the message with :meth:`refused`: it states only public values
    (the thresholds, the settings the user chose, epsilon), never a statistic of the run.
    """

    @classmethod
    def refused(
        cls,
        model: str,
        *,
        epsilon: float,
        thresholds: Thresholds,
        checked: Sequence[str],
        settings: Mapping[str, Any],
        charged: bool,
    ) -> ConvergenceError:
        """The error of a refused attempt of ``model``.

        Parameters
        ----------
        model : str
            Public name of the model (``"OPS beta-Bernoulli"``).
        epsilon : float
            The attempt's epsilon.
        thresholds : Thresholds
            The gate that was applied.
        checked : sequence of str
            What the gate looked at (variable names; public).
        settings : mapping
            The sampler settings the user can raise (``{"warmup": 1000, ...}``), with the
            values of this attempt.
        charged : bool
            Whether an accountant was charged epsilon for the attempt.
        """
        t = thresholds
        spent = (
            f"epsilon={epsilon!r} was charged for this attempt and stays charged"
            if charged
            else f"no accountant was given, but this attempt used epsilon={epsilon!r}"
        )
        knobs = ", ".join(f"{k} (now {v!r})" for k, v in settings.items())
        return cls(
            f"{model}: OPS draw refused: the sampler did not pass the convergence checks on "
            f"{', '.join(checked)} (thresholds: split R-hat <= {t.max_rhat!r}; bulk and tail ESS >= "
            f"{t.min_ess_per_chain!r} per chain; at most {t.max_divergences!r} divergent transitions; "
            f"at most a fraction {t.max_treedepth_fraction!r} of the iterations at the maximum tree depth). "
            f"{spent}: whether the checks pass depends on the data, so the refusal is itself an output. "
            "Which check failed and the run's diagnostics are not shown: they are statistics of the "
            f"private data. To pass, increase {knobs}; allow_unconverged=True releases anyway (the "
            "record then states convergence_override=True: the guarantee is not established)."
        )


class PosteriorFileError(ValueError):
    """A file that :meth:`Posterior.load` cannot use.

    Raised for a path that does not name a regular file (missing, a directory, a FIFO, a
    device: refused from ``fstat`` of the opened descriptor, never read), a file that is not
    the netCDF/HDF5 file :meth:`Posterior.save` writes (empty, truncated, random bytes, another
    HDF5 layout), and a file whose metadata (model, backend, chains, warm-up, draws, seed),
    draws or sampler statistics have the wrong names, types or shapes, or whose privacy record
    does not validate (``PrivacyRecord.from_dict``: unknown keys, epsilon <= 0, ...). The
    message names the path and what is wrong; it never quotes a value of the draws, and never
    the message of the underlying reader (which may quote bytes of the file).
    """


#: the check of a loaded privacy record: ``dict -> dict`` (the record's canonical ``to_dict``
#: form), raising ``TypeError``/``ValueError`` for an invalid one. The sampling layer never
#: imports the privacy layer, so the models layer, which joins the two, registers
#: ``PrivacyRecord.from_dict`` here (:mod:`pystanprivacy.models.base`).
_record_check: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None


def register_record_check(check: Callable[[Mapping[str, Any]], dict[str, Any]]) -> None:
    """Set how :meth:`Posterior.load` validates the privacy record a file carries.

    ``check`` takes the record as a dict and returns its canonical dict form, raising
    ``TypeError``/``ValueError`` for a record that does not validate. Registered by
    :mod:`pystanprivacy.models.base` (``PrivacyRecord.from_dict(d).to_dict()``); until then
    :meth:`Posterior.load` refuses every file that carries a record, rather than return one
    unchecked.
    """
    global _record_check
    if not callable(check):
        raise TypeError(f"check must be callable, got {type(check).__name__}")
    _record_check = check


#: the attributes of the root group that :meth:`Posterior.save` writes, and the one the netCDF
#: library adds (``_NCProperties``)
_ROOT_ATTRS = ("model", "backend", "chains", "warmup", "draws", "seed", "privacy")
_NETCDF_ATTRS = ("_NCProperties",)
#: the groups :meth:`Posterior.save` writes (``sample_stats`` only when there are statistics)
_GROUPS = ("posterior", "sample_stats")


def _refuse(path: Path, what: str) -> PosteriorFileError:
    return PosteriorFileError(f"{str(path)!r} is not a posterior file written by Posterior.save: {what}")


def _attr_str(path: Path, attrs: Mapping[str, Any], name: str) -> str:
    value = attrs[name]
    if not isinstance(value, str) or not value:
        raise _refuse(path, f"its attribute {name!r} must be a non-empty string, got {type(value).__name__}")
    return str(value)


def _attr_int(path: Path, attrs: Mapping[str, Any], name: str, minimum: int) -> int:
    value = np.asarray(attrs[name])
    if value.dtype.kind not in "iu" or value.size != 1 or value.ndim > 1:
        raise _refuse(
            path, f"its attribute {name!r} must be one integer, got dtype {value.dtype} and shape {value.shape}"
        )
    number = int(value.reshape(()))
    if number < minimum:
        raise _refuse(path, f"its attribute {name!r} must be an integer >= {minimum}, got {number}")
    return number


def _privacy(path: Path, attrs: Mapping[str, Any]) -> dict[str, Any] | str | None:
    """The ``privacy`` attribute: ``None``, ``"non-private"`` or a record that validates."""
    text = _attr_str(path, attrs, "privacy")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise _refuse(path, "its attribute 'privacy' is not valid JSON") from None
    if value is None or value == "non-private":
        return value
    if not isinstance(value, dict):
        raise _refuse(
            path,
            "its attribute 'privacy' must hold null, \"non-private\" or a privacy record (a JSON "
            f"object), got a JSON {type(value).__name__}",
        )
    if _record_check is None:
        raise PosteriorFileError(
            f"posterior file {str(path)!r} carries a privacy record, which Posterior.load checks with "
            "PrivacyRecord.from_dict; that check is registered when pystanprivacy.models is imported "
            "(import pystanprivacy.models first)"
        )
    try:
        return _record_check(value)
    except (TypeError, ValueError) as exc:  # the record is public metadata: its own message says what is wrong
        raise PosteriorFileError(f"posterior file {str(path)!r} carries an invalid privacy record: {exc}") from None
    except RecursionError:
        raise PosteriorFileError(
            f"posterior file {str(path)!r} carries an invalid privacy record: nested too deeply"
        ) from None


def _arrays(path: Path, group: Any, name: str) -> dict[str, np.ndarray]:
    """The variables of a netCDF group (its datasets other than dimension scales), read whole."""
    import h5py

    if not isinstance(group, h5py.Group):
        raise _refuse(path, f"{name!r} is not a group")
    out: dict[str, np.ndarray] = {}
    for key, item in group.items():
        if not isinstance(item, h5py.Dataset):
            raise _refuse(path, f"group {name!r} holds {key!r}, which is not a variable")
        if item.attrs.get("CLASS") == b"DIMENSION_SCALE":
            continue  # a coordinate (chain, draw, <var>_dim_k)
        if item.dtype.kind not in "biuf":
            raise _refuse(path, f"variable {key!r} of group {name!r} has dtype {item.dtype}; draws are numbers")
        out[key] = np.asarray(item[()])
    return out


def _check_shapes(
    path: Path, variables: Mapping[str, np.ndarray], group: str, chains: int, draws: int | None
) -> int | None:
    """Every variable shaped ``(chains, draws, ...)``; returns ``draws`` (from the first variable)."""
    for key, arr in variables.items():
        if arr.ndim < 2 or arr.shape[0] != chains or (draws is not None and arr.shape[1] != draws):
            want = f"({chains}, {'n' if draws is None else draws}, ...)"
            raise _refuse(
                path,
                f"variable {key!r} of group {group!r} has shape {arr.shape}; every variable must "
                f"have shape {want} (chains from the attribute 'chains')",
            )
        draws = arr.shape[1]
    return draws


class Posterior:
    """Draws and diagnostics of one Stan fit.

    Parameters
    ----------
    raw:
        Backend-independent draws (:class:`~pystanprivacy.sampling.backends.RawFit`).
    model, backend:
        Names recorded in the InferenceData attributes.
    settings:
        The sampler settings of the run.
    elapsed:
        Wall time of the run in seconds.

    Attributes
    ----------
    privacy:
        What privacy guarantee the draws carry: the ``to_dict()`` form of the
        :class:`~pystanprivacy.privacy.records.PrivacyRecord` of the release the model was
        fitted on, ``"non-private"`` for a named baseline fitted on raw data, or ``None``
        when nobody said (a bare :class:`~pystanprivacy.sampling.stan.StanModel` fit). Set by
        the models (:func:`pystanprivacy.models.base.with_record`); kept by
        :meth:`with_draws`, written by :meth:`save` and read back by :meth:`load`.
    """

    def __init__(
        self,
        raw: RawFit,
        *,
        model: str,
        backend: str,
        settings: SamplerSettings,
        elapsed: float,
    ) -> None:
        self.model = model
        self.backend = backend
        self.settings = settings
        self.elapsed = elapsed
        self._draws = raw.variables
        self._stats = {_STAT_NAMES[k]: v for k, v in raw.sampler.items() if k in _STAT_NAMES}
        if "diverging" in self._stats:
            self._stats["diverging"] = self._stats["diverging"].astype(bool)
        if "tree_depth" in self._stats:
            self._stats["tree_depth"] = self._stats["tree_depth"].astype(np.int64)
        self._idata = None
        self._diagnostic_cache: dict[str, dict[str, np.ndarray]] = {}
        self._privacy: dict[str, Any] | str | None = None

    @property
    def privacy(self) -> dict[str, Any] | str | None:
        """The privacy record the draws carry (see the class docstring)."""
        return self._privacy

    @privacy.setter
    def privacy(self, value: dict[str, Any] | str | None) -> None:
        self._privacy = value
        self._idata = None  # its attributes hold the record

    # ------------------------------------------------------------------ access
    @property
    def idata(self):
        """ArviZ ``InferenceData`` (``posterior`` and ``sample_stats`` groups; no data)."""
        if self._idata is None:
            az = _arviz()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._idata = az.from_dict(
                    posterior=self._draws,
                    sample_stats=self._stats or None,
                    attrs={
                        "model": self.model,
                        "backend": self.backend,
                        "chains": self.settings.chains,
                        "warmup": self.settings.warmup,
                        "draws": self.settings.draws,
                        "seed": self.settings.seed,
                        "privacy": json.dumps(self.privacy, sort_keys=True),
                    },
                )
        return self._idata

    @property
    def variables(self) -> list[str]:
        """Names of the variables with draws."""
        return list(self._draws)

    @property
    def num_chains(self) -> int:
        return self.settings.chains

    @property
    def num_draws(self) -> int:
        """Draws per chain."""
        first = next(iter(self._draws.values()), None)
        return 0 if first is None else first.shape[1]

    def draws(self, name: str, *, combine_chains: bool = True) -> np.ndarray:
        """Draws of ``name``: ``(chains*draws, *dims)`` or, with ``combine_chains=False``,
        ``(chains, draws, *dims)``."""
        if name not in self._draws:
            raise KeyError(f"no variable {name!r} in the fit of {self.model}; variables: {self.variables}")
        arr = self._draws[name]
        return arr.reshape(arr.shape[0] * arr.shape[1], *arr.shape[2:]) if combine_chains else arr

    def with_draws(self, variables: dict[str, np.ndarray]) -> Posterior:
        """A Posterior with the same run (settings, sampler statistics) but other draws,
        each shaped ``(chains, draws, *dims)`` -- e.g. draws after label alignment, so
        that :meth:`check` judges them instead of the raw, label-switched ones."""
        chains, n = self.num_chains, self.num_draws
        for name, arr in variables.items():
            if np.shape(arr)[:2] != (chains, n):
                raise ValueError(f"draws of {name!r} must have shape ({chains}, {n}, ...), got {np.shape(arr)}")
        inverse = {v: k for k, v in _STAT_NAMES.items()}
        sampler = {inverse[k]: v.astype(float) for k, v in self._stats.items()}
        out = Posterior(
            RawFit(variables={k: np.asarray(v, dtype=float) for k, v in variables.items()}, sampler=sampler),
            model=self.model,
            backend=self.backend,
            settings=self.settings,
            elapsed=self.elapsed,
        )
        out.privacy = self.privacy
        return out

    # ------------------------------------------------------------------ saving
    def save(self, path: str | os.PathLike) -> Path:
        """Write the draws, the sampler statistics, the run's settings and :attr:`privacy`
        (as JSON in the attributes) to a netCDF file readable by :meth:`load` and by
        ``arviz.from_netcdf``. Never the data the model saw."""
        path = Path(path)
        self.idata.to_netcdf(str(path))
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Posterior:
        """A :class:`Posterior` read back from :meth:`save`, with its :attr:`privacy`.

        Everything is checked: ``path`` must name a regular file (a directory, FIFO or device
        is refused from ``fstat`` of the opened descriptor, before anything is read, so a FIFO
        never blocks), holding the root attributes ``save`` writes (``model``, ``backend``:
        strings; ``chains`` >= 1, ``warmup`` >= 0, ``draws`` >= 0, ``seed`` >= -1: integers;
        ``privacy``: JSON) and nothing else, a ``posterior`` group and at most a
        ``sample_stats`` group whose variables are numeric and shaped ``(chains, draws, ...)``
        (statistics by their ArviZ names), and a privacy record that validates as
        ``PrivacyRecord.from_dict`` (unknown keys, epsilon <= 0 ... are refused), loaded in its
        canonical form; ``null`` and ``"non-private"`` are kept as they are.

        Raises
        ------
        TypeError
            ``path`` is not a str or path-like.
        PosteriorFileError
            (a ``ValueError``) for every file it cannot use; the message names ``path`` and
            what is wrong, never a value of the draws.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        if not os.fspath(path):  # Path("") is the working directory
            raise PosteriorFileError("path is empty; give the file written by Posterior.save")
        path = Path(path)
        fd, _ = open_regular_file(
            path, what="posterior file", reader="Posterior.load", writer="Posterior.save", error=PosteriorFileError
        )
        with os.fdopen(fd, "rb") as handle:
            return cls._read(path, handle)

    @classmethod
    def _read(cls, path: Path, handle: Any) -> Posterior:
        import h5py

        try:
            h5 = h5py.File(handle, "r")
        except (OSError, ValueError, RuntimeError):  # not HDF5: empty, truncated, random bytes, text
            raise _refuse(path, "it is not an HDF5/netCDF file (empty, truncated or another format)") from None
        try:
            with h5:
                return cls._from_h5(path, h5)
        except PosteriorFileError:
            raise
        except (OSError, ValueError, TypeError, KeyError, RuntimeError) as exc:  # a damaged HDF5 structure
            raise _refuse(path, f"its HDF5 structure cannot be read ({type(exc).__name__})") from None
        except MemoryError:  # a variable declared larger than memory (e.g. a decompression bomb)
            raise _refuse(path, "a variable is too large to read into memory") from None

    @classmethod
    def _from_h5(cls, path: Path, h5: Any) -> Posterior:
        attrs = dict(h5.attrs)
        missing = [k for k in _ROOT_ATTRS if k not in attrs]
        unknown = sorted(k for k in attrs if k not in _ROOT_ATTRS + _NETCDF_ATTRS)
        if missing or unknown:
            raise _refuse(
                path,
                (f"its root attributes lack {missing}" if missing else "")
                + ("; " if missing and unknown else "")
                + (f"it has unknown root attribute(s) {unknown}" if unknown else "")
                + f" (expected exactly {list(_ROOT_ATTRS)})",
            )
        model, backend = _attr_str(path, attrs, "model"), _attr_str(path, attrs, "backend")
        chains = _attr_int(path, attrs, "chains", 1)
        settings = SamplerSettings(
            chains=chains,
            warmup=_attr_int(path, attrs, "warmup", 0),
            draws=_attr_int(path, attrs, "draws", 0),
            seed=_attr_int(path, attrs, "seed", -1),
        )
        privacy = _privacy(path, attrs)
        groups = sorted(h5.keys())
        if "posterior" not in groups or any(g not in _GROUPS for g in groups):
            raise _refuse(path, f"it holds the group(s) {groups}; expected 'posterior' and at most 'sample_stats'")
        variables = _arrays(path, h5["posterior"], "posterior")
        draws = _check_shapes(path, variables, "posterior", chains, None)
        sampler: dict[str, np.ndarray] = {}
        if "sample_stats" in groups:
            inverse = {v: k for k, v in _STAT_NAMES.items()}
            stats = _arrays(path, h5["sample_stats"], "sample_stats")
            unknown = sorted(k for k in stats if k not in inverse)
            if unknown:
                raise _refuse(
                    path, f"group 'sample_stats' holds unknown statistic(s) {unknown}; known: {sorted(inverse)}"
                )
            _check_shapes(path, stats, "sample_stats", chains, draws)
            if any(arr.ndim != 2 for arr in stats.values()):
                raise _refuse(path, "every sampler statistic must have shape (chains, draws)")
            sampler = {inverse[k]: v.astype(float) for k, v in stats.items()}
        out = cls(
            RawFit(variables=variables, sampler=sampler),
            model=model,
            backend=backend,
            settings=settings,
            elapsed=float("nan"),
        )
        out.privacy = privacy
        return out

    def sample_stat(self, name: str) -> np.ndarray:
        """A sampler statistic (ArviZ name, e.g. ``'diverging'``) as ``(chains, draws)``."""
        return self._stats[name]

    def one_draw(self, seed: int | np.random.Generator | None = None) -> dict[str, np.ndarray]:
        """One draw chosen uniformly at random over all chains and iterations (the
        release of one-posterior sampling)."""
        from .._validation import check_random_state

        rng = check_random_state(seed)
        chain = int(rng.integers(self.num_chains))
        it = int(rng.integers(self.num_draws))
        return {k: np.array(v[chain, it]) for k, v in self._draws.items()}

    # ------------------------------------------------------------- diagnostics
    def summary(self, var_names: list[str] | None = None, **kwargs: Any) -> pd.DataFrame:
        """ArviZ summary table (mean, sd, HDI, MCSE, ESS, R-hat)."""
        az = _arviz()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return az.summary(self.idata, var_names=var_names, **kwargs)

    def _diagnostic(self, statistic: str) -> dict[str, np.ndarray]:
        """``statistic`` ("rhat", "ess_bulk" or "ess_tail") of every element of every
        variable, vectorised over the elements (:mod:`pystanprivacy.sampling.diagnostics`, the
        arithmetic of ArviZ's ``rhat(method="rank")`` / ``ess(method="bulk"|"tail")``).
        Computed once per fit and statistic."""
        from . import diagnostics as mcmc_diagnostics

        cache = self._diagnostic_cache
        if statistic not in cache:
            fn = {
                "rhat": mcmc_diagnostics.split_rhat,
                "ess_bulk": mcmc_diagnostics.ess_bulk,
                "ess_tail": mcmc_diagnostics.ess_tail,
            }[statistic]
            cache[statistic] = {name: fn(arr) for name, arr in self._draws.items() if arr.size}
        return {name: values.copy() for name, values in cache[statistic].items()}

    def rhat(self) -> dict[str, np.ndarray]:
        """Rank-normalised split R-hat of every element of every variable."""
        return self._diagnostic("rhat")

    def ess_bulk(self) -> dict[str, np.ndarray]:
        """Bulk effective sample size of every element of every variable."""
        return self._diagnostic("ess_bulk")

    def ess_tail(self) -> dict[str, np.ndarray]:
        """Tail effective sample size of every element of every variable."""
        return self._diagnostic("ess_tail")

    def diagnostics(self, var_names: list[str] | None = None) -> pd.DataFrame:
        """One row per element of each variable: ``variable``, ``index`` (tuple),
        ``rhat``, ``ess_bulk``, ``ess_tail``. For batched runs (one model over many
        independent data sets) judge each data set's elements, not the maximum over all:
        with hundreds of components the largest R-hat exceeds 1.01 by chance alone."""
        import pandas as pd

        names = var_names or self.variables
        diags = {"rhat": self.rhat(), "ess_bulk": self.ess_bulk(), "ess_tail": self.ess_tail()}
        rows = []
        for name in names:
            if name not in diags["rhat"]:
                continue
            for index in np.ndindex(*self._draws[name].shape[2:]):
                rows.append({"variable": name, "index": index, **{k: float(v[name][index]) for k, v in diags.items()}})
        return pd.DataFrame(rows, columns=["variable", "index", "rhat", "ess_bulk", "ess_tail"])

    @property
    def num_divergences(self) -> int:
        d = self._stats.get("diverging")
        return 0 if d is None else int(d.sum())

    @property
    def num_max_treedepth(self) -> int:
        """Post-warm-up iterations that hit ``max_treedepth``."""
        t = self._stats.get("tree_depth")
        return 0 if t is None else int((t >= self.settings.max_treedepth).sum())

    def check(self, thresholds: Thresholds | None = None, *, variables: list[str] | None = None) -> list[str]:
        """Problems with this fit, in words; an empty list means every check passed.

        Checks: split R-hat ≤ ``max_rhat`` and bulk/tail ESS ≥ ``min_ess_per_chain`` ×
        chains for every element (constant elements are ignored), no more than
        ``max_divergences`` divergent transitions, and no more than the allowed fraction
        of iterations at the maximum tree depth.
        """
        t = thresholds or Thresholds()
        problems: list[str] = []
        names = variables or [v for v in self.variables if self._draws[v].size]
        if self.settings.fixed_param:
            return problems
        if self.num_chains < 2:
            problems.append("only one chain: R-hat cannot be judged; run at least 2 chains")
        rhat = {k: v for k, v in self.rhat().items() if k in names}
        ess_b = {k: v for k, v in self.ess_bulk().items() if k in names}
        ess_t = {k: v for k, v in self.ess_tail().items() if k in names}
        min_ess = t.min_ess_per_chain * self.num_chains
        for name in names:
            varies = np.ptp(self.draws(name), axis=0) > 0
            r = np.where(varies, rhat[name], 1.0)
            if self.num_chains >= 2 and np.nanmax(r, initial=1.0) > t.max_rhat or np.any(np.isnan(r)):
                worst = float(np.max(r)) if np.all(np.isfinite(r)) else float("nan")
                problems.append(
                    f"R-hat of {name} is {_rounded(worst, 3, up=True)} (> {t.max_rhat:g}): chains have not mixed; "
                    "run longer warm-up/more draws or reparameterise"
                )
            for label, ess in (("bulk", ess_b[name]), ("tail", ess_t[name])):
                e = np.where(varies, ess, np.inf)
                if np.nanmin(e, initial=np.inf) < min_ess:
                    problems.append(
                        f"{label} ESS of {name} is {_rounded(float(np.nanmin(e)), 1, up=False)} (< {min_ess:g}): "
                        "draw more iterations"
                    )
        if self.num_divergences > t.max_divergences:
            problems.append(
                f"{self.num_divergences} divergent transitions (allowed {t.max_divergences}): "
                "increase adapt_delta or reparameterise"
            )
        total = self.num_chains * self.num_draws
        if total and self.num_max_treedepth > t.max_treedepth_fraction * total:
            problems.append(
                f"{self.num_max_treedepth} of {total} iterations hit max_treedepth="
                f"{self.settings.max_treedepth}: increase max_treedepth"
            )
        return problems

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}{list(v.shape[2:]) or ''}" for k, v in self._draws.items())
        return (
            f"Posterior({self.model}, backend={self.backend}, chains={self.num_chains}, "
            f"draws={self.num_draws}, variables=[{shapes}])"
        )
