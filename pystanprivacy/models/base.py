"""The one interface every model of the collection follows.

Each model is one class bound to one Stan program, ``stan/<paper>/<model>.stan``, whose JSON
file beside it names the class (the registry, :mod:`pystanprivacy.models.registry`). The data
take one path (DESIGN.md, "The one path data take")::

    private data ──Model.release(..., epsilon=)──▶ Release ──model.fit(release)──▶ Posterior
    statistics published elsewhere ──Model.published(..., epsilon=)──▶ Release ──▶ (same)
    private data ──model.sample_one(data, epsilon=)──▶ OPSResult (one draw = the release)
    private data ──model.fit_nonprivate(data)──▶ Posterior marked non-private

* :class:`Model` -- a noise-aware (or non-private) model: ``release`` is a classmethod (it
  needs the model's declared bounds, not a fitted instance), ``fit(release)`` returns a
  :class:`~pystanprivacy.sampling.posterior.Posterior` that carries the release's
  :class:`~pystanprivacy.privacy.records.PrivacyRecord`.
* :class:`OPSModel` -- one-posterior sampling: the sampler is the mechanism, so raw data reach
  Stan; ``sample_one`` charges every attempt and returns one :class:`OPSResult`.

A model that has no such operation (e.g. a non-private baseline has no ``release``) raises
``NotImplementedError`` naming the class and the operation.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from .._validation import check_epsilon, check_int
from ..privacy.records import PrivacyAccountant, PrivacyRecord, Release
from ..sampling.backends.base import RawFit, SamplerSettings
from ..sampling.posterior import Posterior, register_record_check
from ..sampling.stan import StanModel

__all__ = [
    "Model",
    "OPSModel",
    "OPSResult",
    "Example",
    "NONPRIVATE",
    "with_record",
    "published_laplace_record",
    "posterior_from_draws",
    "check_release_matches_record",
]

#: what a non-private baseline's posterior carries instead of a privacy record
NONPRIVATE = "non-private"


def _checked_record(record: Any) -> dict[str, Any]:
    """A privacy record read from a file (``Posterior.load``), validated as
    :meth:`PrivacyRecord.from_dict` does (unknown keys, epsilon <= 0, ... raise), in its
    canonical ``to_dict`` form."""
    return PrivacyRecord.from_dict(record).to_dict()


# the sampling layer never imports the privacy layer: the models layer, which joins them, tells
# Posterior.load how to check the record a saved posterior carries
register_record_check(_checked_record)


def with_record(posterior: Posterior, record: PrivacyRecord | str) -> Posterior:
    """``posterior`` with the privacy record it carries: the record of the release it was
    fitted on, or :data:`NONPRIVATE` for a baseline fitted on raw data. Returned for chaining."""
    if not (isinstance(record, PrivacyRecord) or record == NONPRIVATE):
        raise TypeError(f"record must be a PrivacyRecord or {NONPRIVATE!r}; got {type(record).__name__}")
    posterior.privacy = record.to_dict() if isinstance(record, PrivacyRecord) else NONPRIVATE
    return posterior


def published_laplace_record(
    *,
    epsilon: float,
    sensitivity: float,
    n: int,
    bounds: tuple[float, float] | None = None,
    details: dict[str, Any] | None = None,
) -> PrivacyRecord:
    """The record of statistics that someone else released with the Laplace mechanism
    (noise scale ``sensitivity / epsilon``, L1 sensitivity, replace-one neighbours, ``n``
    records): what a model's own release would record, without the randomness claims (the
    noise was drawn elsewhere), and ``details["published_externally"] = True``. For the
    models' :meth:`Model.published`; nothing is charged."""
    n = check_int(n, "n", minimum=1)
    epsilon = check_epsilon(epsilon)
    return PrivacyRecord(
        mechanism="laplace",
        epsilon=epsilon,
        sensitivity=sensitivity,
        sensitivity_norm="l1",
        scale=sensitivity / epsilon,
        bounds=bounds,
        n=n,
        details={**(details or {}), "published_externally": True},
    )


def posterior_from_draws(
    variables: dict[str, np.ndarray],
    *,
    model: str,
    backend: str,
    seed: Any = None,
    warmup: int = 0,
    thin: int = 1,
    elapsed: float = 0.0,
) -> Posterior:
    """A :class:`Posterior` of draws made without Stan (exact draws of a conjugate posterior,
    a numpy Gibbs sampler): every variable shaped ``(chains, draws, *dims)``; ``backend`` names
    the sampler; an int ``seed`` is recorded (-1 for a Generator or ``None``). Sampler
    statistics are empty. The caller marks its privacy (:func:`with_record`)."""
    first = next(iter(variables.values()))
    seed_int = int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else -1
    settings = SamplerSettings(chains=first.shape[0], warmup=warmup, draws=first.shape[1], seed=seed_int, thin=thin)
    return Posterior(
        RawFit(variables=dict(variables), sampler={}), model=model, backend=backend, settings=settings, elapsed=elapsed
    )


def check_release_matches_record(
    release: Release,
    values: np.ndarray,
    *,
    model: str,
    records_axis: int | None = None,
    datasets_axis: int | None = None,
) -> None:
    """Refuse a release whose values do not have the shape its record states.

    A :class:`~pystanprivacy.privacy.records.Release` can be built from any values and any
    record (``Release(values=..., record=other.record)``, :meth:`Release.from_dict`), so a
    model's ``fit`` calls this before it compiles or samples anything: the record's guarantee
    is about the values it was made with, and a likelihood built from the record (its n, its
    number of data sets) must see exactly those values. Only public quantities are compared
    (shapes and the record's fields), so the check costs no privacy.

    Parameters
    ----------
    release : Release
        The release given to ``fit`` (its record already checked to be this model's mechanism).
    values : numpy.ndarray
        The release's values as the model reads them (e.g. ``(R, N)`` reports, ``(R, d)``
        statistics).
    model : str
        The model's public name, for the message.
    records_axis : int, optional
        The axis of ``values`` that holds one value per record: its length must be the
        record's ``n`` (one report per user of a local release).
    datasets_axis : int, optional
        The axis of ``values`` that holds one entry per data set: its length must be the
        record's ``details["datasets"]``.

    Raises
    ------
    ValueError
        Naming ``release``, what the record states and what the values hold.

    References
    ----------
    .. [1] Dwork & Roth (2014), Sec. 2.3: a guarantee is a statement about the mechanism's
       output on a database of ``n`` records; values of another shape are not that output.
    """
    rec = release.record
    shape = tuple(release.values.shape)
    if records_axis is not None:
        got = int(values.shape[records_axis])
        if rec.n is None or got != rec.n:
            raise ValueError(
                f"release does not match its record: {model} takes one report per record, and the record "
                f"states n = {rec.n!r} records, but release.values hold {got} report(s) per data set (shape "
                f"{shape}); a release is its values together with the record they were made with"
            )
    if datasets_axis is not None:
        stated = rec.details.get("datasets")
        got = int(values.shape[datasets_axis])
        if isinstance(stated, bool) or not isinstance(stated, int) or stated != got:
            raise ValueError(
                f"release does not match its record: the record states datasets = {stated!r} data set(s), but "
                f"release.values hold {got} for {model} (shape {shape}); a release is its values together with "
                "the record they were made with"
            )


class Model:
    """Base of every model class: one Stan program and the one data path.

    Subclasses set :attr:`model_name` (``"<paper>/<model>"``, the path of the ``.stan`` file
    under ``stan/`` without its suffix) and implement the operations they support.
    """

    #: ``"<paper>/<model>"``: ``stan/<paper>/<model>.stan`` and its JSON metadata
    model_name: ClassVar[str] = ""
    #: whether :meth:`fit` takes a privatised release (False for named non-private baselines)
    private: ClassVar[bool] = True

    backend: str | None = None

    @property
    def stan_model(self) -> StanModel:
        """The compiled Stan model (compiled once per process, cached on disk)."""
        return StanModel.get(self.model_name, backend=self.backend)

    # ---------------------------------------------------------------- the data path
    @classmethod
    def release(cls, *args: Any, **kwargs: Any) -> Release:
        """Privatise private data with this model's mechanism (charged to ``accountant``)."""
        raise NotImplementedError(f"{cls.__name__} has no release: {_why(cls, 'release')}")

    @classmethod
    def published(cls, *args: Any, **kwargs: Any) -> Release:
        """A :class:`Release` of statistics privatised by someone else with this model's
        mechanism (nothing is charged: the spend happened where they were made)."""
        raise NotImplementedError(f"{cls.__name__} has no published form: {_why(cls, 'published')}")

    def fit(self, release: Release, **sample_kwargs: Any) -> Posterior:
        """The posterior given a release; it carries the release's privacy record."""
        raise NotImplementedError(f"{type(self).__name__} has no fit: {_why(type(self), 'fit')}")

    def fit_nonprivate(self, *args: Any, **sample_kwargs: Any) -> Posterior:
        """The named non-private baseline: the posterior given the raw data, marked
        non-private (``posterior.privacy == "non-private"``)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no non-private baseline: {_why(type(self), 'fit_nonprivate')}"
        )

    def sample_one(self, *args: Any, **kwargs: Any) -> OPSResult:
        """One-posterior sampling; only :class:`OPSModel` subclasses have it. Here it raises
        ``NotImplementedError`` naming the class and the path this model takes instead
        (``release`` then ``fit``, or ``fit_nonprivate`` for a named baseline), before
        anything is charged or sampled."""
        raise NotImplementedError(f"{type(self).__name__} has no sample_one: {_why(type(self), 'sample_one')}")

    # ---------------------------------------------------------------- the example
    @classmethod
    def example(cls, n: int = 100, *, seed: int = 0) -> Example:
        """Simulated data of ``n`` records for this model and the public arguments of its
        call, as one :class:`Example` (the per-model benchmark and the hostile-input tests
        are driven by it). The same ``n`` and ``seed`` give the same arrays."""
        raise NotImplementedError(
            f"{cls.__name__} has no example: add a classmethod example(n, *, seed=0) returning models.base.Example"
        )


class OPSModel(Model):
    """Base of one-posterior-sampling models: the released value is one posterior draw.

    Raw data reach Stan (the sampler is the mechanism); every attempt of
    :meth:`sample_one` is charged to the accountant before anything data-dependent happens,
    and its result is an :class:`OPSResult`.
    """

    def sample_one(self, *args: Any, **kwargs: Any) -> OPSResult:
        """One charged OPS attempt: the released draw, or a refusal with its reasons."""
        raise NotImplementedError(f"{type(self).__name__} has no sample_one: {_why(type(self), 'sample_one')}")


@dataclasses.dataclass
class OPSResult:
    """Outcome of one-posterior sampling (one attempt, or one attempt per data set of a batch).

    Attributes
    ----------
    release:
        The released draw(s) with their privacy record; ``None`` when the attempt was refused.
        For a batch: the draws of the data sets that got one, in data-set order (a Release
        holds finite values only), ``None`` when none did; ``params`` keeps one entry per
        data set, NaN where its draw was refused, and ``released_mask`` says which.
    problems:
        The convergence checks that failed (empty when every check passed).
    params:
        The released draw as named arrays (``None`` when refused).
    details:
        Model-specific public quantities of the attempt (temperature, beta, ...).
    posterior:
        Every draw of the run, only when the caller asked for it. It is NOT private: use
        it for diagnostics, never publish it.
    released_mask:
        For a batch: which data sets got a draw; ``None`` for a single attempt.
    """

    release: Release | None
    problems: list[str]
    params: dict[str, np.ndarray] | None = None
    details: dict[str, Any] = dataclasses.field(default_factory=dict)
    posterior: Posterior | None = None
    released_mask: np.ndarray | None = None

    @property
    def released(self) -> bool:
        """Whether a draw was released (for a batch: at least one)."""
        if self.released_mask is not None:
            return bool(np.any(self.released_mask))
        return self.release is not None

    @property
    def converged(self) -> bool:
        """Whether every convergence check passed."""
        return not self.problems

    @property
    def record(self) -> PrivacyRecord | None:
        """The privacy record of the release (``None`` when refused)."""
        return None if self.release is None else self.release.record


@dataclasses.dataclass(frozen=True)
class Example:
    """Simulated data for one model, and the one call that takes them (:meth:`Model.example`).

    Attributes
    ----------
    model:
        An instance of the model.
    data:
        The private inputs by argument name (``{"x": array}``; for a named non-private
        baseline the raw data it is fitted on).
    kwargs:
        The public arguments of the call: ``epsilon``, ``delta``, declared bounds, feature
        sizes ...
    private_argument:
        The key of ``data`` that holds the private data (the one a hostile test corrupts).
    truth:
        The parameters that generated the data, by the model's parameter names (``None``
        when the generator has none).
    method:
        The classmethod that privatises ``data`` (default ``"release"``; e.g.
        ``"release_statistics"`` when the example holds exact sufficient statistics).
    ops_run:
        For a one-posterior-sampling model: its method that makes the whole uncharged run and
        takes ``allow_unconverged`` and ``keep_posterior`` (``sample_batch``, ``sample``,
        ``try_sample_one``), used by :meth:`fit`.
    n_records:
        The number of records the data hold (default: the ``n`` asked for).
    """

    model: Model
    data: dict[str, Any]
    kwargs: dict[str, Any]
    private_argument: str
    truth: dict[str, Any] | None = None
    method: str = "release"
    ops_run: str = "sample_one"
    n_records: int | None = None

    def __post_init__(self) -> None:
        if self.private_argument not in self.data:
            raise ValueError(
                f"private_argument must be a key of data {sorted(self.data)}; got {self.private_argument!r}"
            )

    @property
    def kind(self) -> str:
        """``"ops"`` (one-posterior sampling), ``"nonprivate"`` (a named non-private baseline)
        or ``"release"`` (a release, then ``fit``)."""
        if isinstance(self.model, OPSModel):
            return "ops"
        return "release" if getattr(self.model, "private", True) else "nonprivate"

    def _inputs(self, data: Any = None) -> dict[str, Any]:
        inputs = dict(self.data)
        if data is not None:
            inputs[self.private_argument] = data
        return inputs

    def release(self, *, seed: Any = None, accountant: PrivacyAccountant | None = None) -> Release:
        """``type(model).<method>(**data, **kwargs, seed=seed, accountant=accountant)``."""
        if self.kind != "release":
            raise NotImplementedError(
                f"{type(self.model).__name__} has no release: {_why(type(self.model), 'release')}"
            )
        return getattr(type(self.model), self.method)(**self.data, **self.kwargs, seed=seed, accountant=accountant)

    def fit(self, *, seed: Any = None, **sampler: Any) -> Posterior:
        """The posterior of the model's own path: release (seeded with ``seed``) and
        ``model.fit``; the whole OPS run (``ops_run`` with ``allow_unconverged`` and
        ``keep_posterior``: for benchmarks, not a release); or ``fit_nonprivate``."""
        if self.kind == "release":
            return self.model.fit(self.release(seed=seed), seed=seed, **sampler)
        if self.kind == "ops":
            out = getattr(self.model, self.ops_run)(
                **self.data, **self.kwargs, seed=seed, allow_unconverged=True, keep_posterior=True, **sampler
            )
            return out.posterior
        return self.model.fit_nonprivate(**self.data, **self.kwargs, seed=seed, **sampler)

    def call(self, data: Any, accountant: PrivacyAccountant | None, **overrides: Any) -> Any:
        """The charged entry point with ``data`` in place of the private argument (for the
        hostile-input tests): the release, or ``sample_one`` of an OPS model; ``overrides``
        replace public arguments (e.g. ``epsilon``)."""
        kwargs = {**self.kwargs, **overrides, "accountant": accountant}
        if self.kind == "ops":
            return self.model.sample_one(**self._inputs(data), **kwargs)
        if self.kind == "nonprivate":
            raise NotImplementedError(
                f"{type(self.model).__name__} has no charged call: {_why(type(self.model), 'release')}"
            )
        return getattr(type(self.model), self.method)(**self._inputs(data), **kwargs)


def _why(cls: type, operation: str) -> str:
    if operation in ("release", "published", "fit") and not getattr(cls, "private", True):
        return "it is a named non-private baseline (use fit_nonprivate)"
    if operation == "sample_one" and not getattr(cls, "private", True):
        return "it is not a one-posterior-sampling model but a named non-private baseline (use fit_nonprivate)"
    if operation == "sample_one" and not issubclass(cls, OPSModel):
        return "it is not a one-posterior-sampling model (use release, then fit)"
    if operation == "sample_one":
        return "it is not a one-posterior-sampling model"
    if operation in ("release", "published", "fit") and issubclass(cls, OPSModel):
        return "one-posterior sampling releases a draw (use sample_one)"
    return "the paper defines no such operation for this model"
