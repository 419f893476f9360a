"""The public structure of the war-log count vectors (Foulds et al. 2016, Eq. 50-51): the
layout of a count array (R regions, T timesteps, J values of D features), its checks, the
reference values of the programs' coordinates and the Stan data."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..._validation import check_array, check_int

__all__ = ["COUNT_SENSITIVITY", "CountLayout", "CountsLike", "reference_values"]

#: L1 sensitivity of one feature's count array n_{., ., d, :} under replace-one (E.1): the
#: replaced entry leaves one cell's vector (-1) and enters one (+1)
COUNT_SENSITIVITY = 2.0


@runtime_checkable
class CountsLike(Protocol):
    """What :meth:`CountLayout.from_counts` reads from a counts object (duck typing), e.g. a
    :class:`~pystanprivacy.experiments.foulds2016.warlogs.WarLogCounts`: the exact counts
    (R, T, J), the feature sizes K_d summing to J, and the labels of features, regions and
    months. ``structure_from_data`` (whether that grid was chosen by looking at the data) is
    read when present and taken as ``True`` otherwise (the cautious reading)."""

    counts: Any
    feature_sizes: tuple[int, ...]
    features: Sequence[str]
    regions: Sequence[str]
    months: Sequence[str]


def _feature_sizes(feature_sizes: Sequence[int]) -> np.ndarray:
    """The feature sizes K_d as int64: a non-empty sequence of ints >= 2 (public)."""
    if isinstance(feature_sizes, (str, bytes)) or not isinstance(feature_sizes, (Sequence, np.ndarray)):
        raise TypeError(f"feature_sizes must be a sequence of ints >= 2, got {type(feature_sizes).__name__}")
    sizes = np.array(
        [check_int(s, f"feature_sizes[{d}]", minimum=2) for d, s in enumerate(feature_sizes)], dtype=np.int64
    )
    if sizes.size == 0:
        raise ValueError("feature_sizes must hold at least one feature")
    return sizes


@dataclasses.dataclass(frozen=True)
class CountLayout:
    """The public structure of a count array (R, T, J): feature sizes and labels.

    Built by :meth:`from_counts` from a counts object (:class:`CountsLike`, e.g. a
    :class:`~pystanprivacy.experiments.foulds2016.warlogs.WarLogCounts`) or from an array plus
    ``feature_sizes``.
    """

    feature_sizes: tuple[int, ...]
    features: tuple[str, ...]
    regions: tuple[str, ...]
    months: tuple[str, ...]
    structure_from_data: bool = False

    def __post_init__(self) -> None:
        # ints >= 2, never coerced (int("22"), int(2.5) would pass silently)
        sizes = tuple(int(s) for s in _feature_sizes(self.feature_sizes))
        object.__setattr__(self, "feature_sizes", sizes)
        if len(self.features) != len(sizes):
            raise ValueError(f"features must name the {len(sizes)} features, got {len(self.features)} names")

    @property
    def J(self) -> int:
        return sum(self.feature_sizes)

    @property
    def R(self) -> int:
        return len(self.regions)

    @property
    def T(self) -> int:
        return len(self.months)

    @property
    def slices(self) -> list[slice]:
        out, pos = [], 0
        for s in self.feature_sizes:
            out.append(slice(pos, pos + s))
            pos += s
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "feature_sizes": list(self.feature_sizes),
            "features": list(self.features),
            "regions": list(self.regions),
            "months": list(self.months),
            "structure_from_data": self.structure_from_data,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CountLayout:
        return cls(
            feature_sizes=tuple(d["feature_sizes"]),
            features=tuple(d["features"]),
            regions=tuple(d["regions"]),
            months=tuple(d["months"]),
            structure_from_data=bool(d.get("structure_from_data", False)),
        )

    @classmethod
    def for_array(
        cls, shape: Sequence[int], feature_sizes: Sequence[int], *, structure_from_data: bool = False
    ) -> CountLayout:
        """The layout of an array of shape (R, T, J) with generic labels (``feature1``,
        ``region1``, ``t1``, ...)."""
        sizes = tuple(int(s) for s in _feature_sizes(feature_sizes))  # check_int per entry
        return cls(
            sizes,
            tuple(f"feature{d + 1}" for d in range(len(sizes))),
            tuple(f"region{r + 1}" for r in range(shape[0])),
            tuple(f"t{t + 1}" for t in range(shape[1])),
            structure_from_data,
        )

    @classmethod
    def from_counts(cls, counts: Any, feature_sizes: Sequence[int] | None = None) -> tuple[CountLayout, np.ndarray]:
        """Layout and validated exact counts (int64, shape (R, T, J)) of ``counts``.

        ``counts`` is a counts object (:class:`CountsLike`: ``counts``, ``feature_sizes``,
        ``features``, ``regions``, ``months``, e.g. a
        :class:`~pystanprivacy.experiments.foulds2016.warlogs.WarLogCounts`) or an array of
        non-negative integer counts of shape (R, T, J) with ``feature_sizes`` summing to J.
        Every cell's per-feature blocks must add up to the same number of entries.
        """
        if isinstance(counts, CountsLike):
            if feature_sizes is not None and tuple(_feature_sizes(feature_sizes).tolist()) != tuple(
                counts.feature_sizes
            ):
                raise ValueError(f"feature_sizes disagrees with the {type(counts).__name__} given; leave it out")
            layout = cls(
                tuple(counts.feature_sizes),
                tuple(counts.features),
                tuple(counts.regions),
                tuple(counts.months),
                bool(getattr(counts, "structure_from_data", True)),
            )
            arr = np.asarray(counts.counts)
        else:
            if feature_sizes is None:
                raise ValueError("feature_sizes is required when counts is an array (R, T, J)")
            # the raw argument: check_array refuses a ragged or non-numeric one naming counts
            arr = check_array(counts, "counts", ndim=3, kinds="iuf", integer=True)
            layout = cls.for_array(arr.shape, feature_sizes)
        arr = check_array(arr, "counts", ndim=3, kinds="iuf", integer=True)
        if arr.shape[2] != layout.J:
            raise ValueError(f"counts has {arr.shape[2]} columns, feature_sizes sum to {layout.J}")
        if arr.shape[0] < 1 or arr.shape[1] < 1:
            raise ValueError(f"counts must have at least one region and one timestep, got shape {arr.shape}")
        n_neg = int((arr < 0).sum())
        if n_neg:
            raise ValueError(f"counts contains {n_neg} negative value(s); counts must be >= 0")
        totals = np.stack([arr[:, :, s].sum(axis=2) for s in layout.slices])
        n_bad = int((totals != totals[0]).any(axis=0).sum())
        if n_bad:
            raise ValueError(
                f"counts of {n_bad} cell(s) disagree between features: every feature of a cell must "
                "count the same log entries"
            )
        return layout, arr


def _check_heldout(heldout: Any, layout: CountLayout) -> np.ndarray:
    if heldout is None:
        return np.zeros((layout.R, layout.T), dtype=bool)
    arr = check_array(heldout, "heldout", shape=(layout.R, layout.T), kinds="biu", bounds=(0, 1), integer=True)
    if arr.all(axis=1).any():
        raise ValueError("heldout leaves a region without any cell in the likelihood; hold out fewer cells")
    return arr.astype(bool)


def reference_values(counts: np.ndarray, layout: CountLayout) -> list[int]:
    """Per feature, the (0-based) value with the largest total count: the reference of the
    additive-logistic coordinates of the Stan programs. The model is the same for any
    reference; the most frequent value leaves the coordinates nearly uncorrelated, which
    roughly halves NUTS's leapfrog steps. Taken from whatever counts the fit sees (the
    release for a Laplace fit: post-processing)."""
    totals = np.asarray(counts, dtype=float).sum(axis=(0, 1))
    return [int(np.argmax(totals[sl])) for sl in layout.slices]


def _check_reference(reference: Sequence[int] | None, counts: np.ndarray, layout: CountLayout) -> list[int]:
    """The 0-based reference value per feature: ``reference`` checked against the feature
    sizes, or :func:`reference_values` of ``counts`` when ``None``."""
    if reference is None:
        return reference_values(counts, layout)
    if (
        isinstance(reference, (str, bytes))
        or not isinstance(reference, (Sequence, np.ndarray))
        or len(reference) != len(layout.feature_sizes)
    ):
        raise ValueError(
            f"reference must hold one 0-based value per feature ({len(layout.feature_sizes)}), got {reference!r}"
        )
    out = []
    for d, (r, size) in enumerate(zip(reference, layout.feature_sizes)):
        r = check_int(r, f"reference[{d}]", minimum=0)
        if r >= size:
            raise ValueError(f"reference[{d}] must be in 0..{size - 1} (feature {layout.features[d]!r}), got {r}")
        out.append(r)
    return out


def _stan_data(
    counts: np.ndarray,
    layout: CountLayout,
    heldout: np.ndarray,
    n_states: int,
    alpha: float,
    beta: float,
    reference: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Stan data in the programs' timestep-major cell layout: row (t - 1) * R + r;
    ``reference`` (0-based, per feature) defaults to :func:`reference_values`."""
    R, T, J = counts.shape
    return {
        "R": R,
        "T": T,
        "K": n_states,
        "D": len(layout.feature_sizes),
        "feature_size": list(layout.feature_sizes),
        "reference": [r + 1 for r in _check_reference(reference, counts, layout)],
        "counts": np.asarray(counts, dtype=float).transpose(1, 0, 2).reshape(T * R, J),
        "heldout": heldout.T.reshape(-1).astype(int),
        "alpha": alpha,
        "beta": beta,
    }
