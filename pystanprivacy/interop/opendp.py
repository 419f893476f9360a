"""OpenDP 0.16 releases as :class:`~pystanprivacy.Release`\\ s, and records in OpenDP's names.

A data owner who publishes with OpenDP (https://opendp.org) gives the analyst the measurement
(or the Polars query) and its output. :func:`import_polars_query` and :func:`import_measurement`
turn them into releases whose :class:`~pystanprivacy.PrivacyRecord` states, **read from the
measurement** (its summary, its privacy map, its domains; the user never restates them):

* the mechanism (``"laplace"``/``"gaussian"``) and OpenDP's distribution name;
* the noise's support: integer or float, discrete, and its lattice (the integers, or
  ``2^k Z`` for OpenDP's float samplers, ``details["support"]``; ``details["grid"]`` where the
  lattice is one a Stan program can use);
* the scale; the sensitivity and its norm; the neighbouring relation (from the input metric);
* ε (``MaxDivergence``) or ρ (``ZeroConcentratedDivergence``, ``details["zcdp_rho"]``) from the
  privacy map at the privacy unit ``d_in``; a zCDP record's ``epsilon`` is ρ stated at the
  ``delta`` the caller chooses (Canonne, Kamath & Steinke 2020, Prop. 12);
* the query (column, aggregate, group keys) and whether the output is clamped at zero
  (``details["clamped"]``: OpenDP 0.16's ``dp.len()`` / ``dp.count()`` default ``signed=False``
  casts the noisy count to an unsigned integer, saturating at 0).

:func:`likelihood` selects the noise model a record implies: the Stan function (from
``stan/functions/dp_noise.stanfunctions`` or Stan's own) and the same law in Python. What is
exact and what is not:

* **Integer Laplace / Integer Gaussian** (integer inputs): OpenDP adds exact discrete Laplace /
  discrete Gaussian noise on the integers (Canonne, Kamath & Steinke 2020, Sec. 5 samplers).
  ``dp_discrete_laplace_lpmf`` / ``dp_discrete_gaussian_lpmf`` are this law **exactly**; a
  count clamped at 0 is ``max(0, x + K)``, whose law ``dp_discrete_*_censored_lpmf`` states
  **exactly** (the point mass at 0 is ``P(K <= -x)``). Only an output beyond the integer type's
  range (saturation at ±2^63 for sums, 2^32 - 1 for counts) departs from it.
* **Float Laplace / Float Gaussian** at OpenDP's default granularity (``k = -1074``, the
  smallest subnormal: every float64 input is on the lattice, so no input rounding): the noise
  is exactly discrete on ``2^-1074 Z``, and the output is the float64 nearest the noisy lattice
  point. ``double_exponential_lpdf`` / ``normal_lpdf`` are an **approximation**: the output's
  CDF differs from the continuous law's by at most the mass of one float64 rounding interval,
  ``ulp(y) / (2 b)`` (Laplace) or ``ulp(y) / (σ √(2π))`` (Gaussian), about ``1e-16`` relative.
* **Float at a coarser granularity** ``k`` (``make_laplace(..., k=k)``; read from the privacy
  map, which charges the input's rounding to ``2^k``): the input is rounded to the lattice and
  exact discrete noise added, ``dp_discrete_laplace_grid_lpdf`` / ``dp_discrete_gaussian_grid_lpdf``
  with ``mu = 2^k round(x / 2^k)`` are the law **exactly** (within the float64 range where
  lattice points are exact).

Refused (:class:`OpenDPMappingError`, a ``ValueError`` naming what was refused): a measure
other than ``MaxDivergence`` / ``ZeroConcentratedDivergence`` (approximate DP: OpenDP's
thresholded group keys, a ``threshold`` column in the summary), a distribution other than
Laplace or Gaussian (exponential mechanism, noisy max, quantiles, randomised response), an
aggregate other than a count or a sum (a mean is a ratio of two noisy releases, not released
separately), an unsigned output that is not a count (clamping the record cannot state), float32,
and any case where the sensitivities read from the query do not reproduce OpenDP's privacy map
of the whole measurement. Nothing is guessed.

What OpenDP's public interface does not show: a plain measurement's constructor. A
:func:`make_user_measurement <opendp.measurements.make_user_measurement>` or a post-processed
``make_laplace`` with the same domain, metric, measure and privacy map cannot be told apart
from ``make_laplace`` itself; :func:`import_measurement` is for measurements built by
``make_laplace`` / ``make_gaussian`` (``then_laplace`` / ``then_gaussian``), and says so.

References
----------
.. [1] The OpenDP Library 0.16.0, https://docs.opendp.org/en/v0.16.0/ (``make_laplace``,
   ``make_gaussian``: "the noise granularity in terms of 2^k"; the Polars API and
   ``summarize_polars_measurement``).
.. [2] C. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential Privacy",
   NeurIPS 2020: the discrete Laplace and Gaussian laws and samplers; Thm 4 and 14 (zCDP);
   Prop. 12 (zCDP to (ε, δ)).
.. [3] M. Bun and T. Steinke, "Concentrated Differential Privacy", TCC 2016 (ρ-zCDP).
"""

from __future__ import annotations

import importlib.metadata
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import check_choice, check_delta
from ..privacy.records import NEIGHBOURING_RELATIONS, PrivacyAccountant, PrivacyRecord, Release

__all__ = [
    "OPENDP_VERSION",
    "OpenDPMappingError",
    "OpenDPRelease",
    "NoiseLikelihood",
    "import_polars_query",
    "import_measurement",
    "likelihood",
    "to_opendp",
    "to_opendp_measurement",
]

#: the OpenDP version whose samplers, summaries and maps this module states
OPENDP_VERSION = "0.16.0"
#: OpenDP's default float granularity: 2^-1074, the smallest positive float64
DEFAULT_FLOAT_K = -1074
#: the relative agreement required between the per-column guarantees and OpenDP's map
_MAP_RTOL = 1e-9

_DISTRIBUTIONS = {
    "Integer Laplace": ("laplace", "integer"),
    "Float Laplace": ("laplace", "float"),
    "Integer Gaussian": ("gaussian", "integer"),
    "Float Gaussian": ("gaussian", "float"),
}
_AGGREGATES = ("Frame Length", "Count", "Sum")
_METRIC_RELATION = {"SymmetricDistance": "add-remove", "ChangeOneDistance": "replace-one"}
_MEASURES = ("MaxDivergence", "ZeroConcentratedDivergence")
_INTEGER_TYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "isize", "usize")


class OpenDPMappingError(ValueError):
    """An OpenDP measurement, release or record that cannot be mapped faithfully (the message
    names what was refused and why). Nothing is guessed in its place."""


# --------------------------------------------------------------------------- OpenDP itself
def _opendp() -> Any:
    """``opendp.prelude`` at the version this module states, or a clear error."""
    try:
        import opendp.prelude as dp
    except ImportError:
        raise ImportError(
            "OpenDP is not installed: pip install 'pystanprivacy[opendp]' (opendp==0.16.0, polars==1.36.1)"
        ) from None
    version = importlib.metadata.version("opendp")
    if version != OPENDP_VERSION:
        raise OpenDPMappingError(
            f"OpenDP {version} is installed; this mapping states the samplers, summaries and privacy "
            f"maps of OpenDP {OPENDP_VERSION} only (pip install 'pystanprivacy[opendp]')"
        )
    return dp


def _measure_name(measure: Any) -> str:
    return str(measure).strip()


# --------------------------------------------------------------------------- the import result
@dataclass(frozen=True)
class OpenDPRelease:
    """The releases of one OpenDP Polars query: one :class:`~pystanprivacy.Release` per output
    column (in the summary's order) and the public group keys (one tuple per key column, in the
    release's row order; empty without ``group_by``).

    ``epsilon`` and ``delta`` are the query's guarantee as the records state it (the sums over
    the columns: OpenDP's ε, or each column's ρ at ``delta / columns``); ``rho`` is OpenDP's ρ
    (zCDP) or ``None``. :meth:`spend` charges all columns to an accountant at once.
    """

    releases: Mapping[str, Release]
    keys: Mapping[str, tuple[Any, ...]]
    epsilon: float
    delta: float
    rho: float | None = None
    summary: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)

    @property
    def records(self) -> list[PrivacyRecord]:
        """The columns' records, in order."""
        return [r.record for r in self.releases.values()]

    def __getitem__(self, column: str) -> Release:
        if column not in self.releases:
            raise KeyError(f"no released column {column!r}; the query released {list(self.releases)}")
        return self.releases[column]

    def spend(self, accountant: PrivacyAccountant, *, label: str | None = None) -> None:
        """Charge the whole query to ``accountant`` (its records, so a tight rule composes each
        column's curve: ρ under ``composition="zcdp"``)."""
        if not isinstance(accountant, PrivacyAccountant):
            raise TypeError(f"accountant must be a PrivacyAccountant, got {type(accountant).__name__}")
        recs = self.records
        accountant.spend(math.fsum(r.epsilon for r in recs), math.fsum(r.delta for r in recs), label=label, record=recs)


# --------------------------------------------------------------------------- records
def _details(
    *,
    mechanism: str,
    kind: str,
    distribution: str,
    scale: float,
    sensitivity: float,
    k: int | None,
    clamped: bool,
    measure: str,
    metric: str,
    d_in: Any,
    privacy: Mapping[str, Any],
    query: Mapping[str, Any] | None,
    one_coordinate: bool,
    simulated: bool,
) -> dict[str, Any]:
    noise = {"laplace": "discrete Laplace", "gaussian": "discrete Gaussian"}[mechanism]
    if kind == "integer":
        support = {"type": "integer", "discrete": True, "lattice": "Z", "grid": 1.0, "output": "integer"}
        text = f"{noise} on the integers (OpenDP {distribution!r})"
    else:
        kk = DEFAULT_FLOAT_K if k is None else k
        support = {
            "type": "float",
            "discrete": True,
            "lattice": f"2^{kk} Z",
            "grid_exponent": kk,
            "output": "float64 nearest the noisy lattice point",
        }
        text = f"{noise} on the lattice 2^{kk} Z, output rounded to float64 (OpenDP {distribution!r})"
        if kk != DEFAULT_FLOAT_K:
            support["grid"] = math.ldexp(1.0, kk)
            support["input_rounding"] = f"the input is rounded to the nearest multiple of 2^{kk} first"
    out: dict[str, Any] = {
        "source": "opendp",
        "opendp_version": OPENDP_VERSION,
        "secure": not simulated,
        "seeded": False,
        "randomness": (
            "OpenDP's own sampler (not seedable) on simulated data"
            if simulated
            else "OpenDP's cryptographic randomness, exact discrete samplers"
        ),
        "noise": text,
        "opendp_distribution": distribution,
        "support": support,
        "clamped": (
            {
                "lower": 0,
                "how": "OpenDP 0.16 dp.len()/dp.count() with signed=False (the default): the noisy count is "
                "cast to an unsigned integer, saturating at 0; the released value is max(0, x + noise)",
            }
            if clamped
            else False
        ),
        "input_metric": metric,
        "output_measure": measure,
        "d_in": d_in,
        "privacy_map": dict(privacy),
    }
    if "grid" in support:
        out["grid"] = support["grid"]  # the StanProgram data name dp_grid
    if simulated:
        out["simulated"] = True
    if query is not None:
        out["query"] = dict(query)
    if mechanism == "gaussian":
        out["zcdp_rho"] = privacy["rho"]
    # the accountant's discrete curves (PLD of the discrete law): one changed coordinate, an
    # integer sensitivity on the integer lattice
    if kind == "integer" and one_coordinate and float(sensitivity).is_integer():
        out["changed_coordinates"] = 1
        out["integer_sensitivity"] = int(sensitivity)
        out["scale_grid_units" if mechanism == "laplace" else "sigma_grid_units"] = float(scale)
    out["likelihood"] = _selection(mechanism, kind, k, clamped)[0]
    return out


def _record(
    *,
    mechanism: str,
    kind: str,
    distribution: str,
    scale: float,
    sensitivity: float,
    guarantee: float,
    delta: float | None,
    neighbouring: str,
    clamped: bool,
    k: int | None,
    measure: str,
    metric: str,
    d_in: Any,
    query: Mapping[str, Any] | None,
    one_coordinate: bool,
    simulated: bool,
) -> PrivacyRecord:
    if mechanism == "laplace":
        epsilon, rec_delta = guarantee, 0.0
        privacy: dict[str, Any] = {"measure": measure, "epsilon": guarantee}
    else:
        from ..privacy.accounting import zcdp_epsilon

        epsilon, rec_delta = zcdp_epsilon(guarantee, delta), float(delta)
        privacy = {
            "measure": measure,
            "rho": guarantee,
            "epsilon_at_delta": "rho-zCDP stated as (epsilon, delta): Canonne, Kamath & Steinke 2020, Prop. 12",
        }
    return PrivacyRecord(
        mechanism=mechanism,
        epsilon=epsilon,
        delta=rec_delta,
        sensitivity=float(sensitivity),
        sensitivity_norm="l1" if mechanism == "laplace" else "l2",
        scale=float(scale),
        neighbouring=neighbouring,
        details=_details(
            mechanism=mechanism,
            kind=kind,
            distribution=distribution,
            scale=scale,
            sensitivity=sensitivity,
            k=k,
            clamped=clamped,
            measure=measure,
            metric=metric,
            d_in=d_in,
            privacy=privacy,
            query=query,
            one_coordinate=one_coordinate,
            simulated=simulated,
        ),
    )


def _check_delta_for(measure: str, delta: Any, columns: int) -> float | None:
    if measure == "MaxDivergence":
        if delta is not None:
            raise ValueError(f"delta={delta!r} given for a pure ε-DP measurement (MaxDivergence); leave it out")
        return None
    if delta is None:
        raise ValueError(
            "delta is required for a zCDP measurement (ZeroConcentratedDivergence): OpenDP's map gives ρ, "
            "and each record states it as (ε, δ) at the δ you choose (split evenly over "
            f"{columns} column(s)); the accountant's composition='zcdp' composes ρ itself"
        )
    return check_delta(delta, positive=True) / columns


# --------------------------------------------------------------------------- Polars queries
def import_polars_query(
    query: Any,
    released: Any,
    *,
    delta: float | None = None,
    simulated: bool = False,
    measurement: Any = None,
) -> OpenDPRelease:
    """The releases of an OpenDP Polars query, one per output column, with complete records.

    Supported aggregates: ``dp.len()``, ``pl.col(x).dp.count()`` and ``pl.col(x).dp.sum(bounds)``,
    under Laplace (``loss_of(epsilon=...)``) or Gaussian (``loss_of(rho=...)``) noise, with or
    without ``group_by`` on public keys (a margin with ``invariant="keys"``). Each column's
    sensitivity is the one OpenDP calibrates its noise to (the summary of the same plan at unit
    global scale), and the columns' guarantees must add up to OpenDP's privacy map of the whole
    query (``OpenDPMappingError`` otherwise).

    Parameters
    ----------
    query : opendp.extras.polars.LazyFrameQuery
        The query the data owner released (``context.query().group_by(...).agg(...)``): its
        measurement (``query.resolve()``), privacy unit ``d_in`` and plan are read; nothing
        is released again.
    released : polars.DataFrame or polars.LazyFrame
        Its output (``query.release().collect()``): the group-key columns and one column per
        aggregate.
    delta : float, optional
        For a zCDP query only: the δ at which the records state ρ as (ε, δ), split evenly over
        the columns. Required for zCDP, refused for pure DP.
    simulated : bool, default False
        ``True`` for a release of simulated data (``pystanprivacy sbc``): the records say
        ``secure: False, simulated: True`` (OpenDP cannot be seeded).
    measurement : opendp.mod.Measurement, optional
        ``query.resolve()``, when it is at hand: resolving searches for the noise scale
        (seconds), so a simulation that releases one query many times resolves it once. It
        must be this query's: the same input domain, metric and measure, the same columns,
        aggregates and distributions as the query's plan, and a privacy map at ``d_in`` within
        the query's budget (``OpenDPMappingError`` otherwise).

    Returns
    -------
    OpenDPRelease

    Raises
    ------
    OpenDPMappingError
        For every query whose noise or release the records cannot state (see the module docstring).
    """
    dp = _opendp()
    import polars as pl
    from opendp.extras.polars import LazyFrameQuery

    if not isinstance(query, LazyFrameQuery):
        raise TypeError(
            f"query must be an OpenDP LazyFrameQuery (context.query()...), got {type(query).__name__}; "
            "for make_laplace / make_gaussian use import_measurement"
        )
    if not isinstance(simulated, bool):
        raise TypeError(f"simulated must be True or False, got {type(simulated).__name__}")
    if isinstance(released, pl.LazyFrame):
        released = released.collect()
    if not isinstance(released, pl.DataFrame):
        raise TypeError(f"released must be the query's output, a polars DataFrame, got {type(released).__name__}")
    inner = object.__getattribute__(query, "_query")
    plan = object.__getattribute__(query, "polars_plan")
    d_in = inner._d_in
    # the measure first (known before the slow search for the noise scale, resolve())
    measure = _measure_name(inner._output_measure)
    if measure not in _MEASURES:
        raise OpenDPMappingError(
            f"output measure {measure!r} is refused: only MaxDivergence (Laplace) and ZeroConcentratedDivergence "
            "(Gaussian) map to a record; approximate DP here means thresholded (non-public) group keys or a "
            "delta the record cannot attribute to a noise law"
        )
    meas = query.resolve() if measurement is None else _check_measurement(dp, measurement, inner)
    measure = _measure_name(meas.output_measure)
    if measure not in _MEASURES:
        raise OpenDPMappingError(
            f"output measure {measure!r} is refused: only MaxDivergence (Laplace) and ZeroConcentratedDivergence "
            "(Gaussian) map to a record; approximate DP here means thresholded (non-public) group keys or a "
            "delta the record cannot attribute to a noise law"
        )
    metric = meas.input_metric.type
    relation = _METRIC_RELATION.get(str(metric).split("<")[0])
    if relation is None:
        raise OpenDPMappingError(
            f"input metric {str(meas.input_metric)!r} is refused: its neighbouring relation is not one of "
            f"{list(_METRIC_RELATION)} (add-remove / replace-one of rows)"
        )
    if isinstance(d_in, bool) or not isinstance(d_in, int) or d_in < 1:
        raise OpenDPMappingError(
            f"privacy unit d_in={d_in!r} is refused: only a row-count unit (dp.unit_of(contributions=n) or "
            "changes=n, an int >= 1) maps to a neighbouring relation; per-group contribution bounds do not"
        )
    summary = dp.summarize_polars_measurement(meas)
    if "threshold" in summary.columns:
        raise OpenDPMappingError(
            "the query's group keys are thresholded (the summary has a 'threshold' column): which groups "
            "appear is itself private, and no record here states it; release with public keys (a margin "
            "with invariant='keys')"
        )
    rows = summary.to_dicts()
    names = [r["column"] for r in rows]
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise OpenDPMappingError(
            f"the summary lists column(s) {repeated} more than once: a mean (dp.mean: a noisy sum over a noisy "
            "length, released as their ratio only) or another composite aggregate is refused; release the sum "
            "and the count as columns of their own"
        )
    for r in rows:
        if r["aggregate"] not in _AGGREGATES:
            raise OpenDPMappingError(
                f"column {r['column']!r}: aggregate {r['aggregate']!r} is refused; allowed: {list(_AGGREGATES)}"
            )
        if r["distribution"] not in _DISTRIBUTIONS:
            raise OpenDPMappingError(
                f"column {r['column']!r}: distribution {r['distribution']!r} is refused: only additive Laplace or "
                f"Gaussian noise maps to a likelihood ({list(_DISTRIBUTIONS)}); not the exponential mechanism, "
                "noisy max or a quantile"
            )
    # each column's sensitivity: OpenDP's scale for it at unit global scale (its calibration)
    unit_summary = dp.summarize_polars_measurement(
        dp.m.make_private_lazyframe(meas.input_domain, meas.input_metric, meas.output_measure, plan, global_scale=1.0)
    )
    same = ["column", "aggregate", "distribution"]
    if unit_summary.select(same).to_dicts() != summary.select(same).to_dicts():
        raise OpenDPMappingError(
            "measurement is not this query's: its columns, aggregates and distributions differ from the plan's"
        )
    unit = [float(x) for x in unit_summary["scale"].to_list()]
    mechanisms = {_DISTRIBUTIONS[r["distribution"]][0] for r in rows}
    if len(mechanisms) != 1 or mechanisms != {"laplace" if measure == "MaxDivergence" else "gaussian"}:
        raise OpenDPMappingError(f"distributions {sorted(r['distribution'] for r in rows)} under {measure} are refused")
    mechanism = mechanisms.pop()
    scales = [float(r["scale"]) for r in rows]
    # one unit of the measurement's row distance: d_in rows added or removed, or d_in rows
    # changed (each a removal and an addition: symmetric distance 2 d_in)
    rows_moved = d_in if relation == "add-remove" else 2 * d_in
    sens = [u * rows_moved for u in unit]
    parts = [s / b if mechanism == "laplace" else 0.5 * (s / b) ** 2 for s, b in zip(sens, scales, strict=True)]
    total = float(meas.map(d_in))
    if not math.isclose(math.fsum(parts), total, rel_tol=_MAP_RTOL):
        raise OpenDPMappingError(
            f"the columns' sensitivities {sens} (OpenDP's calibration at unit global scale, times the {rows_moved} "
            f"row(s) added or removed that d_in={d_in} allows) and "
            f"scales {scales} give {'epsilon' if mechanism == 'laplace' else 'rho'} = {math.fsum(parts)!r} in all, "
            f"but the measurement's privacy map gives {total!r}: the per-column guarantee cannot be stated "
            "(an explicit per-column scale, or a unit whose sensitivity is not linear in d_in)"
        )
    # the release: group keys (public: invariant keys) and one column per aggregate
    missing = [n for n in names if n not in released.columns]
    if missing:
        raise ValueError(f"released has no column(s) {missing}; the query releases {names}")
    key_cols = [c for c in released.columns if c not in names]
    keys = {c: tuple(released[c].to_list()) for c in key_cols}
    deltas = _check_delta_for(measure, delta, len(rows))
    out: dict[str, Release] = {}
    for r, s, b, g in zip(rows, sens, scales, parts, strict=True):
        col = released[r["column"]]
        kind = _DISTRIBUTIONS[r["distribution"]][1]
        dtype = col.dtype
        if col.null_count():
            raise ValueError(f"released column {r['column']!r} has missing values; an OpenDP release has none")
        clamped = dtype.is_unsigned_integer()
        if clamped and r["aggregate"] not in ("Frame Length", "Count"):
            raise OpenDPMappingError(
                f"column {r['column']!r} ({r['aggregate']}) is released as {dtype}: an unsigned sum is clamped "
                "in a way the record cannot state"
            )
        if (kind == "integer") != dtype.is_integer():
            raise ValueError(
                f"released column {r['column']!r} has dtype {dtype}, but the summary states {r['distribution']!r}"
            )
        query_info = {
            "column": r["column"],
            "aggregate": r["aggregate"],
            "group_by": key_cols,
            "keys_public": "the margin's invariant keys: the group keys are public, not released by a mechanism",
            "keys": {c: list(v) for c, v in keys.items()},
        }
        rec = _record(
            mechanism=mechanism,
            kind=kind,
            distribution=r["distribution"],
            scale=b,
            sensitivity=s,
            guarantee=g,
            delta=deltas,
            neighbouring=relation,
            clamped=clamped,
            k=None,
            measure=measure,
            metric=str(meas.input_metric),
            d_in=d_in,
            query=query_info,
            one_coordinate=relation == "add-remove" and d_in == 1,
            simulated=simulated,
        )
        values = col.to_numpy()
        values = values.astype(np.int64) if kind == "integer" else values.astype(np.float64)
        out[r["column"]] = Release(values=values, record=rec)
    recs = [rel.record for rel in out.values()]
    return OpenDPRelease(
        releases=out,
        keys=keys,
        epsilon=math.fsum(x.epsilon for x in recs),
        delta=math.fsum(x.delta for x in recs),
        rho=total if mechanism == "gaussian" else None,
        summary=tuple(rows),
    )


def _check_measurement(dp: Any, measurement: Any, inner: Any) -> Any:
    """``measurement`` if it can be ``inner``'s resolved measurement (domain, metric, measure and
    a privacy map within the query's budget); the plan's columns are compared by the caller."""
    if not isinstance(measurement, dp.Measurement):
        raise TypeError(
            f"measurement must be an OpenDP Measurement (query.resolve()), got {type(measurement).__name__}"
        )
    domain, metric = inner._chain
    if (str(measurement.input_domain), str(measurement.input_metric), _measure_name(measurement.output_measure)) != (
        str(domain),
        str(metric),
        _measure_name(inner._output_measure),
    ):
        raise OpenDPMappingError(
            "measurement is not this query's: its input domain, input metric or output measure differ from the query's"
        )
    d_out = inner._d_out
    if isinstance(d_out, (int, float)) and not (float(measurement.map(inner._d_in)) <= float(d_out) * (1 + _MAP_RTOL)):
        raise OpenDPMappingError(
            f"measurement is not this query's: its privacy map at d_in={inner._d_in!r} exceeds the query's budget {d_out!r}"
        )
    return measurement


# --------------------------------------------------------------------------- plain measurements
def _domain_info(measurement: Any) -> tuple[str, int | None, bool]:
    """(element type, vector size or None, is a vector) of make_laplace/make_gaussian's domain."""
    text = str(measurement.input_domain.type)
    if text.startswith("VectorDomain<AtomDomain<") and text.endswith(">>"):
        return text[len("VectorDomain<AtomDomain<") : -2], measurement.input_domain.size, True
    if text.startswith("AtomDomain<") and text.endswith(">"):
        return text[len("AtomDomain<") : -1], 1, False
    raise OpenDPMappingError(
        f"input domain {str(measurement.input_domain)!r} is refused: make_laplace / make_gaussian take an "
        "atom_domain or a vector_domain of atoms (a dataset-level measurement's noise is not visible; use a "
        "Polars query)"
    )


def _derive(dp: Any, measurement: Any, mechanism: str, d_in: Any, n: int, integer: bool) -> tuple[float, int | None]:
    """(scale, k) of a make_laplace/make_gaussian measurement, read from its privacy map and
    confirmed by rebuilding it with OpenDP: the maps must agree exactly at d_in, 2 d_in, 3 d_in.

    Laplace: ε(d) = (d + r) / b; Gaussian: sqrt(2 ρ(d)) = (d + r) / σ; r = n 2^k (Laplace) or
    √n 2^k (Gaussian) is the input's rounding to the lattice 2^k, 0 when every input is on it
    (integers; floats at k = -1074)."""
    make = dp.m.make_laplace if mechanism == "laplace" else dp.m.make_gaussian

    def lin(d: Any) -> float:
        v = float(measurement.map(d))
        return v if mechanism == "laplace" else math.sqrt(2.0 * v)

    d = float(d_in)
    e1, e2 = lin(d_in), lin(2 * d_in)
    if not (e2 > e1 > 0):
        raise OpenDPMappingError("the measurement's privacy map is not that of make_laplace / make_gaussian")
    b0 = d / (e2 - e1)
    r = b0 * e1 - d
    ks: list[int | None] = [None]
    if not integer and r > 1e-9 * d:
        per = r / (n if mechanism == "laplace" else math.sqrt(n))
        k0 = round(math.log2(per))
        ks = [k0, k0 - 1, k0 + 1]
    candidates = [float(f"{b0:.{p}g}") for p in range(4, 18)]
    x = b0
    for _ in range(4):
        x = float(np.nextafter(x, math.inf))
        candidates.append(x)
    x = b0
    for _ in range(4):
        x = float(np.nextafter(x, 0.0))
        candidates.append(x)
    want = [measurement.map(m * d_in) for m in (1, 2, 3)]
    for k in ks:
        for b in dict.fromkeys(candidates):
            try:
                rebuilt = make(measurement.input_domain, measurement.input_metric, scale=b, k=k)
                got = [rebuilt.map(m * d_in) for m in (1, 2, 3)]
            except Exception:  # noqa: BLE001, S112 - an OpenDP refusal of this candidate: try the next
                continue
            if got == want:
                return b, k
    raise OpenDPMappingError(
        f"the measurement's privacy map is not that of {make.__name__} at any scale and granularity k near "
        f"scale {b0!r}: its noise cannot be stated"
    )


def import_measurement(
    measurement: Any,
    released: Any,
    *,
    d_in: Any,
    neighbouring: str,
    delta: float | None = None,
    simulated: bool = False,
) -> Release:
    """The release of an OpenDP ``make_laplace`` / ``make_gaussian`` measurement, with its record.

    Parameters
    ----------
    measurement : opendp.mod.Measurement
        Built by ``dp.m.make_laplace`` (``MaxDivergence``) or ``dp.m.make_gaussian``
        (``ZeroConcentratedDivergence``) on an ``atom_domain`` or ``vector_domain`` of
        integers or float64. Its scale and granularity ``k`` are read from its privacy map
        and confirmed by rebuilding it (the maps must agree exactly).
    released : scalar or sequence
        Its output.
    d_in : int or float
        The input distance the data owner bounds (OpenDP's privacy unit for this measurement:
        the L1 / L2 sensitivity of the vector); the record's ε / ρ is ``measurement.map(d_in)``.
    neighbouring : {"replace-one", "add-remove"}
        The dataset relation under which the vector moves by at most ``d_in``: a plain
        measurement's input metric is a distance between vectors, so it does not say (a
        Polars query's does; :func:`import_polars_query` reads it).
    delta : float, optional
        zCDP (Gaussian) only: the δ at which the record states ρ as (ε, δ).
    simulated : bool, default False
        As for :func:`import_polars_query`.

    Returns
    -------
    Release

    Raises
    ------
    OpenDPMappingError
        A domain, metric or measure that is not make_laplace's or make_gaussian's, float32, or
        a privacy map that no rebuilt make_laplace / make_gaussian reproduces.
    """
    dp = _opendp()
    if not isinstance(measurement, dp.Measurement):
        raise TypeError(f"measurement must be an OpenDP Measurement, got {type(measurement).__name__}")
    check_choice(neighbouring, "neighbouring", NEIGHBOURING_RELATIONS)
    if not isinstance(simulated, bool):
        raise TypeError(f"simulated must be True or False, got {type(simulated).__name__}")
    elem, size, vector = _domain_info(measurement)
    measure = _measure_name(measurement.output_measure)
    metric = str(measurement.input_metric.type)
    metric_name = metric.split("<")[0]
    if measure == "MaxDivergence" and metric_name in ("L1Distance", "AbsoluteDistance"):
        mechanism = "laplace"
    elif measure == "ZeroConcentratedDivergence" and metric_name in ("L2Distance", "AbsoluteDistance"):
        mechanism = "gaussian"
    else:
        raise OpenDPMappingError(
            f"a measurement with input metric {metric!r} and output measure {measure!r} is refused: only "
            "make_laplace (L1Distance/AbsoluteDistance, MaxDivergence) and make_gaussian (L2Distance/"
            "AbsoluteDistance, ZeroConcentratedDivergence) add noise whose law a record states; not the "
            "exponential mechanism, noisy max, randomised response or thresholded counts"
        )
    if elem in _INTEGER_TYPES:
        integer = True
    elif elem == "f64":
        integer = False
    else:
        raise OpenDPMappingError(f"element type {elem!r} is refused: integers and f64 only (f32 rounds differently)")
    if isinstance(d_in, bool) or not isinstance(d_in, (int, float)) or not (d_in > 0) or not math.isfinite(d_in):
        raise ValueError(f"d_in must be a finite number > 0 (the input distance bound), got {d_in!r}")
    if integer and not isinstance(d_in, int):
        raise ValueError(f"d_in must be an int for the integer metric {metric!r}, got {d_in!r}")
    if not integer:
        d_in = float(d_in)
    n = size if size is not None else 1
    scale, k = _derive(dp, measurement, mechanism, d_in, n, integer)
    # the output
    values = np.asarray(released)
    if vector != (values.ndim == 1) or (not vector and values.ndim != 0):
        raise ValueError(
            f"released has shape {values.shape}; the measurement's domain {str(measurement.input_domain)!r} "
            f"outputs {'a vector' if vector else 'a scalar'}"
        )
    if vector and size is not None and values.size != size:
        raise ValueError(f"released holds {values.size} values; the domain's size is {size}")
    if integer and values.dtype.kind not in "iu":
        raise ValueError(f"released must hold integers for the integer domain {elem!r}, got dtype {values.dtype}")
    if values.dtype.kind not in "iuf":
        raise TypeError(f"released must be numbers, got dtype {values.dtype}")
    values = values.astype(np.int64 if integer else np.float64)
    guarantee = float(measurement.map(d_in))
    # the sensitivity OpenDP's map charges: d_in, plus the input's rounding to the lattice 2^k
    lin = guarantee if mechanism == "laplace" else math.sqrt(2.0 * guarantee)
    sensitivity = float(d_in) if k is None else lin * scale
    deltas = _check_delta_for(measure, delta, 1)
    rec = _record(
        mechanism=mechanism,
        kind="integer" if integer else "float",
        distribution=f"{'Integer' if integer else 'Float'} {'Laplace' if mechanism == 'laplace' else 'Gaussian'}",
        scale=scale,
        sensitivity=sensitivity,
        guarantee=guarantee,
        delta=deltas,
        neighbouring=neighbouring,
        clamped=False,
        k=k,
        measure=measure,
        metric=str(measurement.input_metric),
        d_in=d_in,
        query={"constructor": "make_laplace" if mechanism == "laplace" else "make_gaussian", "size": size},
        one_coordinate=not vector,
        simulated=simulated,
    )
    return Release(values=values, record=rec)


# --------------------------------------------------------------------------- likelihood
def _selection(mechanism: str, kind: str, k: int | None, clamped: bool) -> tuple[dict[str, Any], str]:
    """The Stan function a record selects (with how to call it) and what is exact."""
    lap = mechanism == "laplace"
    if kind == "integer":
        name = f"dp_discrete_{'laplace' if lap else 'gaussian'}{'_censored' if clamped else ''}_lpmf"
        call = f"{name}(dp_y[i] | x[i], dp_scale)"
        how = (
            "exact: OpenDP's noise on the integers is this discrete law"
            + (", and the clamp at 0 is the point mass P(K <= -x)" if clamped else "")
            + " (outputs within the integer type's range)"
        )
        return {"stan": name, "call": call, "exact": True, "statement": how}, name
    if k is None or k == DEFAULT_FLOAT_K:
        name = "double_exponential_lpdf" if lap else "normal_lpdf"
        how = (
            "approximation: OpenDP's noise is discrete on 2^-1074 Z and the output the nearest float64; the "
            "continuous density's CDF differs from the output's by at most ulp(y) times the density's maximum"
        )
        return {"stan": name, "call": f"{name}(dp_y[i] | x[i], dp_scale)", "exact": False, "statement": how}, name
    name = f"dp_discrete_{'laplace' if lap else 'gaussian'}_grid_lpdf"
    how = "exact on the lattice 2^k Z (the input rounded to it first: mu = dp_grid * round(x / dp_grid))"
    return {
        "stan": name,
        "call": f"{name}(dp_y[i] | dp_grid * round(x[i] / dp_grid), dp_scale, dp_grid)",
        "exact": True,
        "statement": how,
    }, name


def _dg_log_norm(u: float) -> float:
    """log Σ_k exp(-k² / (2u²)) by direct summation over |k| <= 40u + 40 (the rest < e^-800)."""
    from scipy.special import logsumexp

    L = math.ceil(40 * u) + 40
    k = np.arange(-L, L + 1, dtype=float)
    return float(logsumexp(-(k**2) / (2 * u * u)))


def _dg_log_tail(m: np.ndarray, u: float) -> np.ndarray:
    """log P(K >= m) of the discrete Gaussian with parameter u, by direct summation."""
    from scipy.special import logsumexp

    L = math.ceil(40 * u) + 40
    log_z = _dg_log_norm(u)
    out = np.empty(m.shape, dtype=float)
    for i, mi in np.ndenumerate(m):
        lo = max(int(mi), -L)
        k = np.arange(lo, max(lo, L) + L + 1, dtype=float)
        out[i] = float(logsumexp(-(k**2) / (2 * u * u))) - log_z
    return out


@dataclass(frozen=True)
class NoiseLikelihood:
    """The noise model a record selects (:func:`likelihood`): the Stan function, its call with
    the release's data names, whether it is exact, and the same law in Python (SciPy).

    ``logp(y, x)`` is the log mass (discrete) or log density (continuous) of the released
    ``y`` given the true value ``x`` (a count or sum; broadcast).
    """

    stan: str
    call: str
    exact: bool
    statement: str
    mechanism: str
    discrete: bool
    scale: float
    grid: float | None
    clamped_at_zero: bool

    def logp(self, y: Any, x: Any) -> np.ndarray:
        from scipy import stats

        y, x = np.broadcast_arrays(np.asarray(y, dtype=float), np.asarray(x, dtype=float))
        b = self.scale
        if not self.discrete:
            dist = stats.laplace if self.mechanism == "laplace" else stats.norm
            return dist.logpdf(y, loc=x, scale=b)
        g = 1.0 if self.grid is None else self.grid
        mu = x if self.grid is None else g * np.round(x / g)
        steps = (y - mu) / g
        if np.any(steps != np.round(steps)):
            raise ValueError("y - x is not on the noise lattice for some value")
        u = b / g
        if self.mechanism == "laplace":
            out = stats.dlaplace.logpmf(steps, 1.0 / u)
        else:
            out = -(steps**2) / (2 * u * u) - _dg_log_norm(u)
        if self.clamped_at_zero:
            out = np.where(y < 0, -np.inf, out)
            at0 = y == 0
            if np.any(at0):
                # P(max(0, x + K) = 0) = P(K <= -x) = P(K >= x)
                xs = x[at0]
                if self.mechanism == "laplace":
                    tail = stats.dlaplace.logsf(xs - 1, 1.0 / u)
                else:
                    tail = _dg_log_tail(xs, u)
                out = np.array(out, dtype=float)
                out[at0] = tail
        return np.asarray(out, dtype=float)


def likelihood(record: PrivacyRecord) -> NoiseLikelihood:
    """The noise model of an imported OpenDP record: the Stan function that is its likelihood
    (and how to call it), whether it is exact (module docstring), and the law in Python.

    Raises
    ------
    OpenDPMappingError
        ``record`` is not one :func:`import_polars_query` / :func:`import_measurement` wrote.
    """
    if not isinstance(record, PrivacyRecord):
        raise TypeError(f"record must be a PrivacyRecord, got {type(record).__name__}")
    d = record.details
    if d.get("source") != "opendp" or record.mechanism not in ("laplace", "gaussian"):
        raise OpenDPMappingError(
            f"record of mechanism {record.mechanism!r} (source {d.get('source')!r}) is not an imported OpenDP "
            "record; its likelihood is in docs/guide/stan-functions.md"
        )
    support = d.get("support")
    if not isinstance(support, Mapping) or support.get("type") not in ("integer", "float"):
        raise OpenDPMappingError("record details['support'] must state the noise's support (integer or float)")
    kind = support["type"]
    k = support.get("grid_exponent") if kind == "float" else None
    clamped = bool(d.get("clamped"))
    sel, _ = _selection(record.mechanism, kind, k, clamped)
    grid = 1.0 if kind == "integer" else support.get("grid")
    discrete = kind == "integer" or grid is not None
    return NoiseLikelihood(
        stan=sel["stan"],
        call=sel["call"],
        exact=sel["exact"],
        statement=sel["statement"],
        mechanism=record.mechanism,
        discrete=discrete,
        scale=float(record.scale),
        grid=None if kind == "integer" else grid,
        clamped_at_zero=clamped,
    )


# --------------------------------------------------------------------------- export
def _opendp_type(record: PrivacyRecord) -> str:
    d = record.details
    if d.get("source") == "opendp":
        return "i64" if d["support"]["type"] == "integer" else "f64"
    return "i64" if "(integer input)" in str(d.get("noise", "")) else "f64"


def to_opendp(record: PrivacyRecord) -> dict[str, Any]:
    """``record`` in OpenDP 0.16's vocabulary: the measurement constructor and its arguments
    (``input_domain``, ``input_metric``, ``output_measure``, ``scale``, ``k``), the privacy unit
    ``d_in`` and the guarantee ``d_out``, as OpenDP names them.

    The mapping exists for additive noise: ``"laplace"`` -> ``make_laplace`` (``MaxDivergence``),
    ``"gaussian"`` / ``"analytic_gaussian"`` -> ``make_gaussian`` (``ZeroConcentratedDivergence``,
    ρ = Δ² / (2σ²), OpenDP's map of it); ``"randomized_response"`` ->
    ``make_randomized_response_bool``. ``exact`` says whether OpenDP's constructor adds the
    same noise: a secure release of this library (exact discrete noise on ``2^k``) is exactly
    ``make_laplace(..., k=k)`` / ``make_gaussian(..., k=k)``; a seeded release's continuous
    float noise is approximately OpenDP's default-granularity float noise.

    Raises
    ------
    OpenDPMappingError
        For a mechanism OpenDP has no constructor for here (OUE, OPS, composite records).
    """
    if not isinstance(record, PrivacyRecord):
        raise TypeError(f"record must be a PrivacyRecord, got {type(record).__name__}")
    d = record.details
    mech = record.mechanism
    if mech == "randomized_response":
        return {
            "constructor": "make_randomized_response_bool",
            "arguments": {"prob": d.get("p_keep")},
            "input_domain": "atom_domain(T=bool)",
            "input_metric": "discrete_distance()",
            "output_measure": "max_divergence()",
            "d_in": 1,
            "d_out": record.epsilon,
            "exact": True,
        }
    if mech not in ("laplace", "gaussian", "analytic_gaussian") or "per_feature" in d or "budget_split" in d:
        raise OpenDPMappingError(
            f"record of mechanism {mech!r} has no OpenDP constructor here; mapped: laplace, gaussian, "
            "analytic_gaussian (single releases), randomized_response"
        )
    if record.scale is None or record.sensitivity is None:
        raise OpenDPMappingError(f"record of mechanism {mech!r} states no scale or sensitivity")
    T = _opendp_type(record)
    lap = mech == "laplace"
    if d.get("source") == "opendp":
        k = d["support"].get("grid_exponent")
        k = None if k in (None, DEFAULT_FLOAT_K) else k
        exact = True
    elif d.get("secure") is True and "grid_exponent" in d:
        k = None if T.startswith("i") else int(d["grid_exponent"])
        exact = True
    else:
        k, exact = None, False
    domain = f"vector_domain(atom_domain(T={T!r}))"
    d_in: Any = record.sensitivity
    if d.get("source") == "opendp":  # the privacy unit OpenDP's map was read at
        d_in = d["d_in"] if isinstance(d.get("d_in"), (int, float)) else record.sensitivity
    elif T.startswith("i"):
        d_in = int(d.get("integer_sensitivity", math.ceil(record.sensitivity)))
    if d.get("source") == "opendp" and isinstance(d.get("privacy_map"), Mapping):
        d_out = {key: d["privacy_map"][key] for key in ("epsilon", "rho") if key in d["privacy_map"]}
    elif lap:
        d_out = {"epsilon": record.epsilon}
    else:
        d_out = {"rho": 0.5 * (float(d_in) / record.scale) ** 2}
    return {
        "constructor": "make_laplace" if lap else "make_gaussian",
        "arguments": {"scale": float(record.scale), "k": k},
        "input_domain": domain,
        "input_metric": f"{'l1' if lap else 'l2'}_distance(T={T!r})",
        "output_measure": "max_divergence()" if lap else "zero_concentrated_divergence()",
        "d_in": d_in,
        "d_out": d_out,
        "exact": exact,
        "noise": (
            "the same law as the record's"
            if exact
            else "OpenDP's float noise (discrete on 2^-1074 Z) approximates the record's continuous noise"
        ),
    }


def to_opendp_measurement(record: PrivacyRecord, *, size: int | None = None) -> Any:
    """The OpenDP measurement :func:`to_opendp` describes, built with OpenDP (``contrib`` must be
    enabled): ``make_laplace`` / ``make_gaussian`` on a ``vector_domain`` (of ``size`` elements
    when given; a float granularity ``k`` other than the default needs it) with the record's
    scale and granularity."""
    dp = _opendp()
    spec = to_opendp(record)
    if spec["constructor"] not in ("make_laplace", "make_gaussian"):
        raise OpenDPMappingError(f"{spec['constructor']} is described by to_opendp, not built here")
    T = "i64" if "i64" in spec["input_metric"] else "f64"
    atom = dp.atom_domain(T=T) if T == "i64" else dp.atom_domain(T=T, nan=False)
    domain = dp.vector_domain(atom, size=size)
    if spec["constructor"] == "make_laplace":
        metric = dp.l1_distance(T=T)
        return dp.m.make_laplace(domain, metric, scale=spec["arguments"]["scale"], k=spec["arguments"]["k"])
    metric = dp.l2_distance(T=T)
    return dp.m.make_gaussian(domain, metric, scale=spec["arguments"]["scale"], k=spec["arguments"]["k"])
