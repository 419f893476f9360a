"""Data sets: loaders, preprocessing and synthetic generators, one section per data set.

Sections
--------
* **War logs** (Foulds, Geumlek, Welling & Chaudhuri 2016, Sec. 5 and supplement E.2): a
  loader for event logs in the schema of the public Afghanistan / Iraq war-logs CSV files,
  the preprocessing of E.2 as one named function per step, and a synthetic generator with
  the same schema and a known latent state sequence.

Loaders never print data values in errors or logs: messages name the column and count
the offending cells. Randomness follows the package convention: ``seed`` is an int, a
``numpy.random.Generator``, a ``SeedSequence`` or ``None``; seeds give reproducibility,
not security.
"""
from __future__ import annotations

import csv
import dataclasses
import gzip
import io
import os
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..._validation import SeedLike, check_choice, check_int, check_random_state, check_real

__all__ = [
    # war logs
    "WARLOG_COLUMNS",
    "CASUALTY_COLUMNS",
    "FACTION_CASUALTY_COLUMNS",
    "WARLOG_FEATURES",
    "WARLOG_HEADERLESS_COLUMNS",
    "IRAQ_REGIONS",
    "AFGHANISTAN_REGIONS",
    "StepReport",
    "WarLogCounts",
    "SyntheticWarLogs",
    "read_war_logs",
    "parse_timesteps",
    "clean_casualty_cells",
    "binarise_casualties",
    "merge_casualty_outcomes",
    "merge_friendly_hostnation",
    "drop_month",
    "drop_final_year",
    "drop_regions",
    "drop_near_empty_regions",
    "drop_empty_timesteps",
    "count_features",
    "detect_war_log_dataset",
    "preprocess_war_logs",
    "load_war_logs",
    "PAPER_COUNTS",
    "preprocessing_counts",
    "synthetic_war_logs",
    "NON_MIXING_STATES",
    "non_mixing_war_logs",
]


# =========================================================================================
# War logs (Foulds et al. 2016, Sec. 5 and supplement E.2)
# =========================================================================================

#: casualty columns of the war-logs schema, grouped by faction (wounded, killed, detained)
FACTION_CASUALTY_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "Friendly": ("FriendlyWIA", "FriendlyKIA"),
    "HostNation": ("HostNationWIA", "HostNationKIA"),
    "Civilian": ("CivilianWIA", "CivilianKIA"),
    "Enemy": ("EnemyWIA", "EnemyKIA", "EnemyDetained"),
}
CASUALTY_COLUMNS: tuple[str, ...] = tuple(c for cols in FACTION_CASUALTY_COLUMNS.values() for c in cols)
#: the columns the loader needs; any other column of a file is ignored
WARLOG_COLUMNS: tuple[str, ...] = ("DateOccurred", "Type", "Category", "Region", *CASUALTY_COLUMNS)

#: the five modelled features (Sec. 5): type, category and three binary casualty indicators
WARLOG_FEATURES: tuple[str, ...] = (
    "type",
    "category",
    "friendly_host_casualty",
    "civilian_casualty",
    "enemy_casualty",
)
_FEATURE_COLUMNS = {
    "type": "Type",
    "category": "Category",
    "friendly_host_casualty": "FriendlyHostNation",
    "civilian_casualty": "Civilian",
    "enemy_casualty": "Enemy",
}
_BINARY_VOCABULARY = ("no", "yes")  # index 0: no casualty, 1: at least one

#: column order of the header-less CSV files of the public releases (32 fields); used only
#: when a file has no header row and exactly this many fields
WARLOG_HEADERLESS_COLUMNS: tuple[str, ...] = (
    "ReportKey", "DateOccurred", "Type", "Category", "TrackingNumber", "Title", "Summary",
    "Region", "AttackOn", "ComplexAttack", "ReportingUnit", "UnitName", "TypeOfUnit",
    "FriendlyWIA", "FriendlyKIA", "HostNationWIA", "HostNationKIA", "CivilianWIA",
    "CivilianKIA", "EnemyWIA", "EnemyKIA", "EnemyDetained", "MGRS", "Latitude", "Longitude",
    "OriginatorGroup", "UpdatedByGroup", "CCIR", "Sigact", "Affiliation", "DColor",
    "Classification",
)

IRAQ_REGIONS: tuple[str, ...] = ("MND-BAGHDAD", "MND-N", "MND-C", "MNF-W", "MND-SE", "MND-S", "MND-NE")
AFGHANISTAN_REGIONS: tuple[str, ...] = (
    "RC EAST", "RC SOUTH", "RC WEST", "RC NORTH", "RC CAPITAL", "UNKNOWN", "NONE SELECTED",
)
#: region codes the paper removes from the Iraq data because they hold very little data (E.2)
IRAQ_DROPPED_REGIONS: tuple[str, ...] = ("MND-S", "MND-NE")
#: label given to an empty Region / Type / Category cell (a value of its own, never merged)
BLANK = "(blank)"

_DATE_FORMATS = ("%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d")


@dataclasses.dataclass(frozen=True)
class StepReport:
    """What one preprocessing step did: records before/after and what it removed.

    ``records_removed`` is always ``records_before - records_after``; ``timesteps_removed``
    and ``regions_removed`` count grid entries (months, region codes) the step removed;
    ``note`` says what was changed in words (counts only, never data values).
    """

    step: str
    records_before: int
    records_after: int
    timesteps_removed: int = 0
    regions_removed: int = 0
    note: str = ""

    @property
    def records_removed(self) -> int:
        return self.records_before - self.records_after

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["records_removed"] = self.records_removed
        return out


def _report_frame(reports: Sequence[StepReport]) -> pd.DataFrame:
    cols = ["step", "records_before", "records_removed", "records_after", "timesteps_removed",
            "regions_removed", "note"]
    return pd.DataFrame([r.as_dict() for r in reports], columns=cols)


# ----------------------------------------------------------------------------- loading
#: the first two bytes of a gzip file (RFC 1952): how a compressed war-logs file is recognised
_GZIP_MAGIC = b"\x1f\x8b"
#: what reading a damaged gzip file raises
_GZIP_ERRORS = (OSError, EOFError, zlib.error)


def _is_gzip(path: Path) -> bool:
    """Whether ``path`` holds gzip data (by its content, whatever its name)."""
    with open(path, "rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


def _read_header(path: Path, *, compressed: bool = False) -> list[str]:
    opener = gzip.open if compressed else open
    with opener(path, "rt", newline="", encoding="utf-8", errors="replace") as fh:
        return next(csv.reader(fh), [])


def read_war_logs(source: str | os.PathLike | io.TextIOBase, *, columns: Sequence[str] | None = None) -> tuple[pd.DataFrame, StepReport]:
    """Read a war-logs CSV file as strings, keeping only :data:`WARLOG_COLUMNS`.

    Parameters
    ----------
    source : path or text buffer
        A CSV file in the schema of the public war-logs files, or its gzip (e.g.
        ``afg_war_diary.csv.gz``; recognised by its content, not its name, and read exactly
        as the uncompressed file). Columns other than
        :data:`WARLOG_COLUMNS` may be present and are ignored (and never loaded). A file
        without a header row is read with the 32-field order of
        :data:`WARLOG_HEADERLESS_COLUMNS` (the column order of the public releases; the
        header of the shipped Afghanistan diary ``data/afg_war_diary.csv.gz`` has exactly
        these 32 names in this order) when it has exactly
        32 fields, and refused unless the assumed date column parses; pass ``columns``
        for any other layout.
    columns : sequence of str, optional
        Column names for a header-less file with another layout.

    Returns
    -------
    (DataFrame, StepReport)
        Every kept column as strings; empty cells are empty strings (never NaN), so the
        later steps decide what an empty cell means.

    Raises
    ------
    ValueError
        If required columns are missing (the message lists their names), or the file is not
        readable CSV (or gzip-compressed CSV).
    """
    compressed = False
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"source must be an existing war-logs CSV file, got {str(path)!r} (not found)")
        compressed = _is_gzip(path)
        try:
            header = _read_header(path, compressed=compressed)
        except _GZIP_ERRORS as exc:
            raise ValueError(
                f"source {str(path)!r} starts like a gzip file but cannot be decompressed ({type(exc).__name__})"
            ) from None
    elif hasattr(source, "read"):
        text = source.read()
        source = io.StringIO(text)
        header = next(csv.reader(io.StringIO(text)), [])
    else:
        raise TypeError(f"source must be a path or a text buffer, got {type(source).__name__}")
    header = [h.strip() for h in header]
    names: list[str] | None = None
    note = "header row"
    if columns is not None:
        names = [str(c) for c in columns]
        note = "header-less file, column names given by the caller"
    elif not set(WARLOG_COLUMNS) <= set(header) and len(header) == len(WARLOG_HEADERLESS_COLUMNS):
        names = list(WARLOG_HEADERLESS_COLUMNS)
        note = "header-less file with the 32 fields of the public releases"
    available = names if names is not None else header
    missing = [c for c in WARLOG_COLUMNS if c not in available]
    if missing:
        raise ValueError(
            f"the war-logs file lacks the required column(s) {missing}; required: "
            f"{list(WARLOG_COLUMNS)} (other columns are ignored)"
        )
    kwargs: dict[str, Any] = dict(
        dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8",
        encoding_errors="replace", usecols=list(WARLOG_COLUMNS), compression="gzip" if compressed else None,
    )
    if names is not None:
        kwargs.update(header=None, names=names)
    if isinstance(source, io.TextIOBase):
        kwargs.pop("encoding"), kwargs.pop("encoding_errors"), kwargs.pop("compression")
    try:
        df = pd.read_csv(source, **kwargs)
    except (pd.errors.ParserError, UnicodeDecodeError, *_GZIP_ERRORS) as exc:
        raise ValueError(f"the war-logs file is not a readable CSV file ({type(exc).__name__})") from None
    df = df[list(WARLOG_COLUMNS)].astype(str)
    if names is not None and columns is None:
        # sanity check of the assumed layout: the date column must mostly parse
        ok = _parse_dates(df["DateOccurred"]).notna().mean() if len(df) else 1.0
        if ok < 0.5:
            raise ValueError(
                "the file has no header row and its layout is not the public releases' (the "
                "2nd field is not a date); pass columns=[...] with the file's column names"
            )
    return df.reset_index(drop=True), StepReport("read", len(df), len(df), note=f"{note}; {len(df)} records")


def _parse_dates(values: pd.Series) -> pd.Series:
    s = values.astype(str).str.strip()
    out = pd.Series(pd.NaT, index=s.index, dtype="datetime64[ns]")
    todo = pd.Series(True, index=s.index)
    for fmt in _DATE_FORMATS:
        if not todo.any():
            break
        parsed = pd.to_datetime(s[todo], format=fmt, errors="coerce")
        out[parsed.index] = out[parsed.index].fillna(parsed)
        todo = out.isna()
    return out


def parse_timesteps(df: pd.DataFrame) -> tuple[pd.DataFrame, StepReport]:
    """One timestep per month (Sec. 5): ``month`` becomes a categorical over every calendar
    month from the first to the last record (months without records stay in the grid until
    :func:`drop_empty_timesteps`); ``region`` a categorical of the region codes.

    Rule: a record whose ``DateOccurred`` does not parse (formats ``YYYY-MM-DD HH:MM``,
    ``... HH:MM:SS`` or ``YYYY-MM-DD``) cannot be placed in time and is removed (counted).
    Empty ``Region``, ``Type`` or ``Category`` cells become the value ``"(blank)"``.
    """
    before = len(df)
    dates = _parse_dates(df["DateOccurred"])
    bad = int(dates.isna().sum())
    out = df.loc[dates.notna()].copy()
    months = dates[dates.notna()].dt.to_period("M")
    if len(out):
        grid = pd.period_range(months.min(), months.max(), freq="M").astype(str)
    else:
        grid = pd.Index([], dtype=str)
    out["month"] = pd.Categorical(months.astype(str), categories=list(grid))
    for col in ("Region", "Type", "Category"):
        vals = out[col].astype(str).str.strip()
        out[col] = vals.where(vals != "", BLANK)
    out["region"] = pd.Categorical(out["Region"], categories=sorted(out["Region"].unique()))
    note = f"{bad} record(s) with an unparseable DateOccurred removed; {len(grid)} months"
    return out.reset_index(drop=True), StepReport("parse_timesteps", before, len(out), note=note)


def clean_casualty_cells(
    df: pd.DataFrame, *, malformed: Literal["drop", "zero", "raise"] = "drop"
) -> tuple[pd.DataFrame, StepReport]:
    """Turn the nine casualty columns into numbers, by an explicit rule.

    Rule
    ----
    * An **empty** cell (or only spaces) means that no casualty was recorded: it becomes 0.
      (The binarised feature asks "was there at least one?"; an empty cell reports none.)
    * A **malformed** cell -- not a finite number >= 0, e.g. text or a negative count -- is
      handled by ``malformed``: ``"drop"`` (default) removes the record, ``"zero"`` reads
      the cell as 0, ``"raise"`` raises ``ValueError``. Counts go into the report; values
      never appear in messages.
    """
    check_choice(malformed, "malformed", ("drop", "zero", "raise"))
    before = len(df)
    out = df.copy()
    bad_rows = pd.Series(False, index=out.index)
    n_empty = 0
    n_bad = 0
    bad_cols: list[str] = []
    for col in CASUALTY_COLUMNS:
        text = out[col].astype(str).str.strip()
        empty = text == ""
        num = pd.to_numeric(text.where(~empty, "0"), errors="coerce")
        bad = num.isna() | ~np.isfinite(num.fillna(0)) | (num < 0)
        n_empty += int(empty.sum())
        if bad.any():
            n_bad += int(bad.sum())
            bad_cols.append(col)
        bad_rows |= bad
        out[col] = num.where(~bad, 0.0).astype(float)
    if n_bad and malformed == "raise":
        raise ValueError(
            f"{n_bad} malformed casualty cell(s) (not a number >= 0) in column(s) {bad_cols}; "
            "use malformed='drop' or 'zero'"
        )
    if malformed == "drop":
        out = out.loc[~bad_rows]
    note = f"{n_empty} empty cell(s) read as 0; {n_bad} malformed cell(s)"
    if n_bad:
        note += " -> " + ("their records removed" if malformed == "drop" else "read as 0")
    return out.reset_index(drop=True), StepReport("clean_casualty_cells", before, len(out), note=note)


def binarise_casualties(df: pd.DataFrame) -> tuple[pd.DataFrame, StepReport]:
    """Casualty counts become indicators: 0 versus > 0 (E.2)."""
    out = df.copy()
    for col in CASUALTY_COLUMNS:
        out[col] = out[col].astype(float) > 0
    n = int(out[list(CASUALTY_COLUMNS)].to_numpy().sum())
    return out, StepReport("binarise_casualties", len(df), len(out), note=f"{n} non-zero casualty cell(s)")


def merge_casualty_outcomes(df: pd.DataFrame) -> tuple[pd.DataFrame, StepReport]:
    """Wounded / killed / detained indicators merged by disjunction, one per faction (E.2):
    columns ``Friendly``, ``HostNation``, ``Civilian``, ``Enemy``."""
    out = df.drop(columns=list(CASUALTY_COLUMNS))
    for faction, cols in FACTION_CASUALTY_COLUMNS.items():
        out[faction] = df[list(cols)].astype(bool).any(axis=1)
    note = ", ".join(f"{f}: {int(out[f].sum())}" for f in FACTION_CASUALTY_COLUMNS)
    return out, StepReport("merge_casualty_outcomes", len(df), len(out), note=f"records with casualties -- {note}")


def merge_friendly_hostnation(df: pd.DataFrame) -> tuple[pd.DataFrame, StepReport]:
    """Friendly and HostNation indicators merged by disjunction into ``FriendlyHostNation``
    (E.2)."""
    out = df.drop(columns=["Friendly", "HostNation"])
    out["FriendlyHostNation"] = df["Friendly"] | df["HostNation"]
    n = int(out["FriendlyHostNation"].sum())
    return out, StepReport("merge_friendly_hostnation", len(df), len(out), note=f"{n} record(s) with friendly/host casualties")


def _drop_month_categories(df: pd.DataFrame, drop: Sequence[str], step: str, what: str) -> tuple[pd.DataFrame, StepReport]:
    months = list(df["month"].cat.categories)
    drop = [m for m in months if m in set(drop)]
    keep = ~df["month"].isin(drop)
    out = df.loc[keep].copy()
    out["month"] = out["month"].cat.remove_categories(drop)
    return out.reset_index(drop=True), StepReport(
        step, len(df), len(out), timesteps_removed=len(drop), note=f"{what}: {len(drop)} month(s) removed"
    )


def drop_month(df: pd.DataFrame, month: int | str = 5) -> tuple[pd.DataFrame, StepReport]:
    """Remove one timestep. For Iraq, the paper removes the 5th month, which has no data
    (E.2).

    ``month`` is a 1-based position in the monthly grid (5: the 5th month from the first
    month of the data) or a label ``"YYYY-MM"``.
    """
    months = list(df["month"].cat.categories)
    if isinstance(month, str):
        if month not in months:
            raise ValueError(f"month must be a month of the grid ('YYYY-MM'), got {month!r}")
        label = month
    else:
        pos = check_int(month, "month", minimum=1)
        if pos > len(months):
            raise ValueError(f"month must be a position in 1..{len(months)} of the monthly grid, got {month!r}")
        label = months[pos - 1]
    return _drop_month_categories(df, [label], "drop_month", f"timestep {label}")


def drop_final_year(df: pd.DataFrame) -> tuple[pd.DataFrame, StepReport]:
    """Remove every month of the last calendar year of the grid (Iraq: most regions have
    no data in the final year, E.2)."""
    months = list(df["month"].cat.categories)
    if not months:
        return df, StepReport("drop_final_year", len(df), len(df), note="no months")
    year = months[-1][:4]
    return _drop_month_categories(df, [m for m in months if m.startswith(year)], "drop_final_year", f"year {year}")


def drop_regions(df: pd.DataFrame, regions: Sequence[str]) -> tuple[pd.DataFrame, StepReport]:
    """Remove the named region codes (Iraq: ``MND-S`` and ``MND-NE``, E.2). Codes absent
    from the data are ignored (and counted in the note)."""
    if isinstance(regions, str):
        raise TypeError("regions must be a sequence of region codes, not one string")
    present = [r for r in df["region"].cat.categories if r in set(regions)]
    out = df.loc[~df["region"].isin(present)].copy()
    out["region"] = out["region"].cat.remove_categories(present)
    note = f"{len(present)} region code(s) removed"
    if len(present) < len(set(regions)):
        note += f", {len(set(regions)) - len(present)} named code(s) not in the data"
    return out.reset_index(drop=True), StepReport("drop_regions", len(df), len(out), regions_removed=len(present), note=note)


def drop_near_empty_regions(df: pd.DataFrame, *, min_share: float = 0.01) -> tuple[pd.DataFrame, StepReport]:
    """Remove region codes that hold fewer than ``min_share`` of all records.

    The paper removes "near-empty region codes" without giving a threshold (Sec. 5). The
    default 1 % is our reading of it: it removes codes that hold a negligible share of the
    records and keeps every code with a real share. On the shipped Afghan War Diary it removes
    ``UNKNOWN`` (286 of 76,209 reports, 0.4 %) and ``NONE SELECTED`` (16) and keeps the five
    ``RC`` commands (the smallest, ``RC NORTH``, holds 2,106, 2.8 %); the median of 58 reports
    per region/month that follows is the paper's (:func:`preprocessing_counts`). It has not
    been checked on the Iraq logs (not available here). ``min_share=0`` keeps every code that
    has at least one record.
    """
    share = check_real(min_share, "min_share")
    if not 0.0 <= share < 1.0:
        raise ValueError(f"min_share must be in [0, 1), got {min_share!r}")
    sizes = df["region"].value_counts()
    total = int(sizes.sum())
    drop = [r for r in df["region"].cat.categories if sizes.get(r, 0) == 0 or sizes.get(r, 0) < share * total]
    out = df.loc[~df["region"].isin(drop)].copy()
    out["region"] = out["region"].cat.remove_categories(drop)
    return out.reset_index(drop=True), StepReport(
        "drop_near_empty_regions", len(df), len(out), regions_removed=len(drop),
        note=f"{len(drop)} region code(s) with < {share:g} of the records removed",
    )


def drop_empty_timesteps(df: pd.DataFrame) -> tuple[pd.DataFrame, StepReport]:
    """Remove months without any record in any kept region (Sec. 5). (A region/month cell
    without records inside a kept month stays: the chain simply has no emissions there.)"""
    sizes = df["month"].value_counts()
    empty = [m for m in df["month"].cat.categories if sizes.get(m, 0) == 0]
    out = df.copy()
    out["month"] = out["month"].cat.remove_categories(empty)
    return out, StepReport("drop_empty_timesteps", len(df), len(out), timesteps_removed=len(empty),
                           note=f"{len(empty)} empty month(s) removed")


@dataclasses.dataclass(frozen=True)
class WarLogCounts:
    """Per-(region, month, feature) count vectors of preprocessed war logs (Eq. 50-51).

    Attributes
    ----------
    counts : ndarray, shape (R, T, J), int64
        ``counts[r, t, offset_d + j]`` = number of log entries of region r in month t whose
        feature d takes its j-th value; J = sum of the feature sizes.
    regions, months : tuple of str
        Row labels (region codes) and column labels (``"YYYY-MM"``) of the grid.
    features : tuple of str
        Feature names (:data:`WARLOG_FEATURES`).
    vocabularies : tuple of tuple of str
        The values of every feature, in column order.
    report : DataFrame
        One row per preprocessing step (:class:`StepReport`).
    dataset : str
        ``"iraq"``, ``"afghanistan"`` or ``"generic"``: which country-specific steps ran.
    structure_from_data : bool
        Whether the kept regions, months or feature values were chosen by looking at the
        data (thresholds, empty months, vocabularies not declared in advance). Differential
        privacy covers the counts *given* this structure, not the choice of the structure.
    """

    counts: np.ndarray
    regions: tuple[str, ...]
    months: tuple[str, ...]
    features: tuple[str, ...]
    vocabularies: tuple[tuple[str, ...], ...]
    report: pd.DataFrame
    dataset: str = "generic"
    structure_from_data: bool = True

    def __post_init__(self) -> None:
        counts = np.asarray(self.counts)
        if counts.ndim != 3 or counts.shape[:2] != (len(self.regions), len(self.months)):
            raise ValueError(
                f"counts must have shape (regions={len(self.regions)}, months={len(self.months)}, J), got {counts.shape}"
            )
        if counts.shape[2] != sum(self.feature_sizes):
            raise ValueError(f"counts has {counts.shape[2]} columns, the vocabularies have {sum(self.feature_sizes)} values")

    @property
    def feature_sizes(self) -> tuple[int, ...]:
        return tuple(len(v) for v in self.vocabularies)

    @property
    def feature_slices(self) -> dict[str, slice]:
        out, pos = {}, 0
        for name, size in zip(self.features, self.feature_sizes):
            out[name] = slice(pos, pos + size)
            pos += size
        return out

    @property
    def cell_totals(self) -> np.ndarray:
        """Number of log entries per (region, month): shape (R, T)."""
        first = self.feature_slices[self.features[0]]
        return self.counts[:, :, first].sum(axis=2)

    @property
    def n_records(self) -> int:
        return int(self.cell_totals.sum())

    def layout(self) -> dict[str, Any]:
        """The public structure (labels and sizes), JSON-serialisable."""
        return {
            "regions": list(self.regions),
            "months": list(self.months),
            "features": list(self.features),
            "feature_sizes": list(self.feature_sizes),
            "vocabularies": [list(v) for v in self.vocabularies],
            "dataset": self.dataset,
            "structure_from_data": self.structure_from_data,
        }

    def __repr__(self) -> str:
        return (f"WarLogCounts(dataset={self.dataset!r}, regions={len(self.regions)}, months={len(self.months)}, "
                f"feature_sizes={self.feature_sizes}, n_records={self.n_records})")


def count_features(
    df: pd.DataFrame, *, vocabularies: Mapping[str, Sequence[str]] | None = None
) -> tuple[np.ndarray, tuple[tuple[str, ...], ...], StepReport]:
    """Count vectors n_{r,t,d,:} for every region, month and feature (Eq. 50).

    ``vocabularies`` may declare the values of ``"type"`` and ``"category"`` in advance (a
    public choice, as differential privacy wants); a value of the data that is not declared
    is counted under ``"OTHER"`` (appended when missing; the number of such records is
    reported). Without a declaration the values come from the data, sorted.
    """
    regions = list(df["region"].cat.categories)
    months = list(df["month"].cat.categories)
    r_idx = df["region"].cat.codes.to_numpy()
    t_idx = df["month"].cat.codes.to_numpy()
    vocabularies = dict(vocabularies or {})
    unknown_features = sorted(set(vocabularies) - {"type", "category"})
    if unknown_features:
        raise ValueError(f"vocabularies may declare 'type' and 'category' only, got {unknown_features}")
    vocabs: list[tuple[str, ...]] = []
    blocks: list[np.ndarray] = []
    n_other = 0
    for feat in WARLOG_FEATURES:
        col = df[_FEATURE_COLUMNS[feat]]
        if feat in ("type", "category"):
            if feat in vocabularies:
                vocab = [str(v) for v in vocabularies[feat]]
                if len(set(vocab)) != len(vocab):
                    raise ValueError(f"vocabularies[{feat!r}] has repeated values")
                known = col.isin(vocab)
                if not known.all():
                    n_other += int((~known).sum())
                    if "OTHER" not in vocab:
                        vocab.append("OTHER")
                    col = col.where(known, "OTHER")
            else:
                vocab = sorted(col.unique())
            codes = pd.Categorical(col, categories=vocab).codes.astype(np.int64)
        else:
            vocab = list(_BINARY_VOCABULARY)
            codes = col.astype(bool).to_numpy().astype(np.int64)
        if len(vocab) < 2:
            vocab = vocab + [v for v in ("(none)", "(none 2)") if v not in vocab][: 2 - len(vocab)]
        block = np.zeros((len(regions), len(months), len(vocab)), dtype=np.int64)
        np.add.at(block, (r_idx, t_idx, codes), 1)
        vocabs.append(tuple(vocab))
        blocks.append(block)
    counts = np.concatenate(blocks, axis=2) if blocks else np.zeros((len(regions), len(months), 0), np.int64)
    note = f"{len(regions)} regions x {len(months)} months; feature sizes {[len(v) for v in vocabs]}"
    if vocabularies:
        note += f"; {n_other} value(s) outside the declared vocabularies counted as OTHER"
    return counts, tuple(vocabs), StepReport("count_features", len(df), len(df), note=note)


def detect_war_log_dataset(df: pd.DataFrame) -> str:
    """``"iraq"`` when the region codes are the Iraq commands (``MND-*``, ``MNF-*``),
    ``"afghanistan"`` when they are ``RC *`` codes, ``"generic"`` otherwise."""
    regions = pd.Series(df["Region"].astype(str).str.strip().unique())
    iraq = int(regions.str.match(r"^MN[DF]-").sum())
    afg = int(regions.str.match(r"^RC ").sum())
    if iraq > afg:
        return "iraq"
    if afg > iraq:
        return "afghanistan"
    return "generic"


def preprocess_war_logs(
    raw: pd.DataFrame,
    *,
    dataset: Literal["auto", "iraq", "afghanistan", "generic"] = "auto",
    malformed_casualties: Literal["drop", "zero", "raise"] = "drop",
    min_region_share: float = 0.01,
    iraq_missing_month: int | str = 5,
    vocabularies: Mapping[str, Sequence[str]] | None = None,
    read_report: StepReport | None = None,
) -> WarLogCounts:
    """Supplement E.2 preprocessing, step by step, from :func:`read_war_logs` output.

    Steps (each a function of this module, each reported):
    :func:`parse_timesteps` (one timestep per month, one chain per region) ->
    :func:`clean_casualty_cells` (empty = 0; malformed by ``malformed_casualties``) ->
    :func:`binarise_casualties` -> :func:`merge_casualty_outcomes` ->
    :func:`merge_friendly_hostnation` -> for Iraq: :func:`drop_month` (the 5th month),
    :func:`drop_final_year`, :func:`drop_regions` (``MND-S``, ``MND-NE``) ->
    :func:`drop_near_empty_regions` -> :func:`drop_empty_timesteps` -> :func:`count_features`.

    ``dataset="auto"`` picks the country from the region codes
    (:func:`detect_war_log_dataset`).
    """
    if not isinstance(raw, pd.DataFrame):
        raise TypeError(f"raw must be a pandas DataFrame from read_war_logs, got {type(raw).__name__}")
    missing = [c for c in WARLOG_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(f"raw lacks the required column(s) {missing}")
    check_choice(dataset, "dataset", ("auto", "iraq", "afghanistan", "generic"))
    kind = detect_war_log_dataset(raw) if dataset == "auto" else dataset
    reports = [read_report] if read_report is not None else []
    df, rep = parse_timesteps(raw[list(WARLOG_COLUMNS)])
    reports.append(rep)
    steps: list = [
        lambda x: clean_casualty_cells(x, malformed=malformed_casualties),
        binarise_casualties,
        merge_casualty_outcomes,
        merge_friendly_hostnation,
    ]
    if kind == "iraq":
        steps += [
            lambda x: drop_month(x, iraq_missing_month),
            drop_final_year,
            lambda x: drop_regions(x, IRAQ_DROPPED_REGIONS),
        ]
    steps += [lambda x: drop_near_empty_regions(x, min_share=min_region_share), drop_empty_timesteps]
    for step in steps:
        df, rep = step(df)
        reports.append(rep)
    if len(df) == 0 or len(df["region"].cat.categories) == 0 or len(df["month"].cat.categories) == 0:
        raise ValueError("no records are left after preprocessing; see the step report of a smaller threshold")
    counts, vocabs, rep = count_features(df, vocabularies=vocabularies)
    reports.append(rep)
    return WarLogCounts(
        counts=counts,
        regions=tuple(df["region"].cat.categories),
        months=tuple(df["month"].cat.categories),
        features=WARLOG_FEATURES,
        vocabularies=vocabs,
        report=_report_frame(reports),
        dataset=kind,
        structure_from_data=True,
    )


def load_war_logs(path: str | os.PathLike, **kwargs: Any) -> WarLogCounts:
    """:func:`read_war_logs` then :func:`preprocess_war_logs` (keyword arguments go there).

    Accepts the public Afghanistan and Iraq war-logs CSV files unchanged.
    """
    columns = kwargs.pop("columns", None)
    raw, rep = read_war_logs(path, columns=columns)
    return preprocess_war_logs(raw, read_report=rep, **kwargs)


#: what Foulds et al. (2016) state about each data set after (or before) preprocessing, as
#: (number, where and how they say it); Sec. 5 and supplement E.2
PAPER_COUNTS: Mapping[str, Mapping[str, tuple[float, str]]] = {
    "afghanistan": {
        "reports in the file": (75_000, "~75,000 entries from the war in Afghanistan (Sec. 5)"),
        "months from the first to the last report": (72, "January 2004 to December 2009 (Sec. 5)"),
        "median reports per region/month": (58, "58 for Afghanistan, after removing empty timesteps and "
                                                "near-empty region codes (Sec. 5)"),
    },
    "iraq": {
        "reports in the file": (390_000, "~390,000 entries from Iraq (Sec. 5)"),
        "months from the first to the last report": (72, "January 2004 to December 2009 (Sec. 5)"),
        "months kept": (59, "the 5th month and the final year removed (supplement E.2)"),
        "region codes removed by name": (2, "MND-S and MND-NE (supplement E.2)"),
        "median reports per region/month": (972, "972 for Iraq (Sec. 5)"),
    },
}

_CASE_FOLD = str.maketrans({"-": " ", "_": " "})


def _near_duplicates(values: pd.Series) -> int:
    """How many distinct values share their spelling with another value once case, hyphens
    and repeated spaces are ignored (e.g. ``Counter-Insurgency`` / ``Counter Insurgency``)."""
    distinct = pd.Series(values.unique())
    folded = distinct.str.translate(_CASE_FOLD).str.lower().str.split().str.join(" ")
    return int(folded.duplicated(keep=False).sum())


def preprocessing_counts(path: str | os.PathLike, **kwargs: Any) -> pd.DataFrame:
    """The counts of every preprocessing step on a war-logs file, beside the paper's numbers.

    Reads ``path`` (:func:`read_war_logs`, ``.csv`` or ``.csv.gz``), runs
    :func:`preprocess_war_logs` (keyword arguments go there) and counts what each step did:
    reports read and kept, empty and malformed casualty cells, reports with casualties per
    merged faction, region codes in the file, removed and kept, months, region/month cells, the
    median number of reports per region/month (overall and per calendar year: the paper's
    "increase in density over time"), the feature sizes, empty Type/Category cells and values
    that differ only in spelling (kept apart, as in the file: the paper merges no values).

    Every row is a count (names of region codes and months only in ``note``; never a
    report's content). Where Foulds et al. (2016) give the number (:data:`PAPER_COUNTS`, by
    the data set the region codes show), ``paper`` holds it and ``paper_says`` their words.

    Returns
    -------
    DataFrame
        Columns ``quantity``, ``value``, ``paper``, ``paper_says``, ``note``.
    """
    raw, read_rep = read_war_logs(path)
    counts = preprocess_war_logs(raw, read_report=read_rep, **kwargs)
    steps = counts.report.set_index("step")
    paper = PAPER_COUNTS.get(counts.dataset, {})
    rows: list[dict[str, Any]] = []

    def add(quantity: str, value: float, note: str = "") -> None:
        number, says = paper.get(quantity, (np.nan, ""))
        rows.append({"quantity": quantity, "value": value, "paper": number, "paper_says": says, "note": note})

    dates = _parse_dates(raw["DateOccurred"])
    months = dates.dropna().dt.to_period("M")
    first, last = (str(months.min()), str(months.max())) if len(months) else ("", "")
    cas = raw[list(CASUALTY_COLUMNS)].apply(lambda c: c.astype(str).str.strip() == "")
    add("reports in the file", len(raw))
    span = len(pd.period_range(months.min(), months.max(), freq="M")) if len(months) else 0
    add("months from the first to the last report", span, f"{first} to {last}")
    add("reports removed: DateOccurred does not parse", int(steps.loc["parse_timesteps", "records_removed"]))
    add("empty casualty cells", int(cas.to_numpy().sum()),
        "read as 0: an empty cell records no casualty, and the feature is 0 versus > 0 (supplement E.2)")
    add("reports with an empty casualty cell", int(cas.any(axis=1).sum()), "kept")
    add("reports with all nine casualty cells empty", int(cas.all(axis=1).sum()), "kept: no casualty recorded")
    add("reports removed: a malformed casualty cell", int(steps.loc["clean_casualty_cells", "records_removed"]))
    for faction in ("Friendly", "HostNation", "Civilian", "Enemy"):
        n = int(steps.loc["merge_casualty_outcomes", "note"].split(f"{faction}: ")[1].split(",")[0])
        article = "an" if faction[0] in "AEIOU" else "a"
        add(f"reports with {article} {faction} casualty (wounded, killed or detained)", n)
    n_fh = int(steps.loc["merge_friendly_hostnation", "note"].split()[0])
    add("reports with a Friendly or HostNation casualty", n_fh)
    blank_region = raw["Region"].astype(str).str.strip().eq("")
    region_sizes = raw.loc[dates.notna(), "Region"].astype(str).str.strip().replace("", BLANK).value_counts()
    add("region codes in the file", len(region_sizes))
    add("empty Region cells", int(blank_region.sum()), f"a code of their own, {BLANK!r}")
    if "drop_regions" in steps.index:
        add("region codes removed by name", int(steps.loc["drop_regions", "regions_removed"]),
            f"reports removed: {int(steps.loc['drop_regions', 'records_removed'])}")
    for step in ("drop_month", "drop_final_year"):
        if step in steps.index:
            add(f"months removed: {step}", int(steps.loc[step, "timesteps_removed"]),
                f"reports removed: {int(steps.loc[step, 'records_removed'])}")
    removed = [r for r in region_sizes.index if r not in counts.regions]
    named = set(IRAQ_DROPPED_REGIONS) if "drop_regions" in steps.index else set()
    near_empty = [r for r in removed if r not in named]
    add("region codes removed as near-empty", int(steps.loc["drop_near_empty_regions", "regions_removed"]),
        ", ".join(f"{r} ({int(region_sizes[r])} reports)" for r in near_empty)
        + f"; fewer than {kwargs.get('min_region_share', 0.01):g} of the reports")
    add("reports removed with the near-empty region codes", int(steps.loc["drop_near_empty_regions", "records_removed"]))
    add("region codes kept", len(counts.regions),
        ", ".join(f"{r} ({int(region_sizes[r])})" for r in counts.regions))
    add("empty months removed", int(steps.loc["drop_empty_timesteps", "timesteps_removed"]))
    add("months kept", len(counts.months), f"{counts.months[0]} to {counts.months[-1]}")
    add("reports after preprocessing", counts.n_records)
    totals = counts.cell_totals
    add("region/month cells", int(totals.size), f"{len(counts.regions)} regions x {len(counts.months)} months")
    add("region/month cells without reports", int((totals == 0).sum()))
    add("median reports per region/month", float(np.median(totals)),
        f"mean {totals.mean():.1f}, min {int(totals.min())}, max {int(totals.max())}")
    years = np.array([m[:4] for m in counts.months])
    for year in sorted(set(years)):
        cells = totals[:, years == year]
        add(f"median reports per region/month in {year}", float(np.median(cells)), f"{cells.size} cells")
    for name, size in zip(counts.features, counts.feature_sizes):
        add(f"feature size: {name}", size, "values in the data" if name in ("type", "category") else "no / yes")
    for col in ("Type", "Category"):
        kept = raw.loc[dates.notna(), col].astype(str).str.strip()
        add(f"empty {col} cells", int(kept.eq("").sum()), f"a value of their own, {BLANK!r} (kept)")
        add(f"{col} values that differ from another only in case, hyphens or spaces", _near_duplicates(kept),
            "kept as separate values, as in the file")
    table = pd.DataFrame(rows, columns=["quantity", "value", "paper", "paper_says", "note"])
    # counts as integers, medians as they are (a median of an even number of cells may end in .5)
    table["value"] = pd.Series([int(v) if float(v).is_integer() else float(v) for v in table["value"]], dtype=object)
    table["paper"] = table["paper"].astype("Int64")
    return table


# ----------------------------------------------------------------------- synthetic data
_TYPES_AND_CATEGORIES: dict[str, tuple[str, ...]] = {
    "Enemy Action": ("Direct Fire", "Indirect Fire", "Attack", "Ambush", "Sniper Ops", "Small Arms Fire",
                     "RPG Attack", "Assassination", "Mortar Attack", "Rocket Attack", "Kidnapping", "Raid"),
    "Explosive Hazard": ("IED Explosion", "IED Found/Cleared", "IED Hoax", "Mine Strike", "Mine Found/Cleared",
                         "UXO Found/Cleared", "VBIED Explosion", "Suicide Bombing", "Cache Found/Cleared",
                         "IED Suspected", "Premature IED Detonation"),
    "Friendly Action": ("Search and Attack", "Cordon/Search", "Detain", "Escalation of Force", "Patrol",
                        "Arrest", "Close Air Support", "Show of Force", "Cache Found/Cleared (FA)",
                        "Deliberate Attack", "Counter Mortar Patrol", "Security Operation"),
    "Criminal Event": ("Murder", "Theft", "Kidnapping (CE)", "Smuggling", "Extortion", "Looting",
                       "Carjacking", "Black Marketing"),
    "Non-Combat Event": ("Accident", "Natural Disaster", "Medevac (Local National)", "Medevac (Non-Combat)",
                         "Vehicle Accident", "Equipment Failure", "Demonstration", "Meeting"),
    "Suspicious Incident": ("Surveillance", "Suspicious Vehicle", "Suspicious Person", "Graffiti",
                            "Propaganda", "Recon"),
    "Threat Report": ("Threat of Attack", "IED Threat", "Planned Attack", "Intimidation"),
    "Other": ("Other", "Tribal Feud", "Detainee Transfer", "Facility Protection"),
}
_CATEGORY_TYPES = [(t, c) for t, cats in _TYPES_AND_CATEGORIES.items() for c in cats]
_FACTION_OF = {c: f for f, cols in FACTION_CASUALTY_COLUMNS.items() for c in cols}


@dataclasses.dataclass
class SyntheticWarLogs:
    """Synthetic war logs with a known latent state sequence.

    Attributes
    ----------
    records : DataFrame
        Log entries in the war-logs schema (all columns strings, like a CSV file), plus
        columns the loader ignores (``ReportKey``, ``Title``, ``Summary``).
    states : DataFrame
        The true state (0-based) of every region (rows) and month (columns, ``YYYY-MM``).
    category_prob : ndarray, shape (S, C)
        Per state, the probability of each of the C categories (:attr:`categories`).
    casualty_prob : ndarray, shape (S, 4)
        Per state, the base probability that a record has casualties of each faction
        (Friendly, HostNation, Civilian, Enemy).
    categories : list of (type, category)
    kind : str
    """

    records: pd.DataFrame
    states: pd.DataFrame
    category_prob: np.ndarray
    casualty_prob: np.ndarray
    categories: list[tuple[str, str]]
    kind: str

    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write :attr:`records` as a CSV file in the war-logs schema (header row)."""
        path = Path(path)
        self.records.to_csv(path, index=False)
        return path

    def state_matrix(self, regions: Sequence[str], months: Sequence[str]) -> np.ndarray:
        """The true states on a preprocessed grid: shape (len(regions), len(months))."""
        return self.states.loc[list(regions), list(months)].to_numpy(dtype=np.int64)


def _synthetic_state_paths(rng: np.random.Generator, n_regions: int, n_months: int, n_states: int,
                           switch_window: tuple[float, float]) -> np.ndarray:
    """Region-specific regime switches: every region starts in a state and switches 1-2
    times, at region-specific months (mostly inside ``switch_window``, given as fractions
    of the period), always to a different state."""
    paths = np.zeros((n_regions, n_months), dtype=np.int64)
    lo, hi = int(switch_window[0] * n_months), max(int(switch_window[1] * n_months), int(switch_window[0] * n_months) + 2)
    for r in range(n_regions):
        n_switch = 1 + int(rng.random() < 0.5) if n_states > 1 else 0
        points = np.sort(rng.choice(np.arange(max(lo, 3), min(hi, n_months - 3)), size=n_switch, replace=False)) if n_switch else []
        state = int(rng.integers(n_states)) if n_states > 2 else 0
        start = 0
        for p in list(points) + [n_months]:
            paths[r, start:p] = state
            start = p
            if n_states > 1:
                state = int(rng.choice([s for s in range(n_states) if s != state]))
    return paths


#: shares of the records held by the main regions of realistic logs, largest first (the public
#: Afghanistan file: RC EAST and RC SOUTH hold most of the records)
_TILT = 1.0
_REALISTIC_REGION_SHARES = (0.42, 0.34, 0.10, 0.08, 0.06)


def _check_total(total_records: float | None, n_months: int) -> float:
    total = check_real(total_records if total_records is not None else 76_000.0 * n_months / 72, "total_records")
    if not total > 0:
        raise ValueError(f"total_records must be > 0, got {total_records!r}")
    return total


def _realistic_cell_counts(rng: np.random.Generator, n_main: int, months: Sequence[str], *,
                           total: float | None, median: float | None) -> np.ndarray:
    """Record counts (n_main, T) of the main regions of realistic logs: skewed shares, a
    strong upward trend (region-specific slope) with a summer season, bursts and empty
    region/months; scaled to ``total`` expected records or to ``median`` expected records
    in the median main region/month."""
    T = len(months)
    shares = np.array(_REALISTIC_REGION_SHARES[:n_main] if n_main <= len(_REALISTIC_REGION_SHARES)
                      else [0.6 ** i for i in range(n_main)], dtype=float)
    shares = shares * np.exp(rng.normal(0.0, 0.15, n_main))
    shares /= shares.sum()
    x = np.linspace(0.0, 1.0, T)
    growth = np.log(10.0) * np.exp(rng.normal(0.0, 0.3, n_main))           # x10 over the period, per region
    month_of_year = np.array([int(m[5:7]) for m in months])
    season = 0.35 * np.cos(2 * np.pi * (month_of_year - 7.5) / 12)           # fighting season peaks in summer
    log_rate = np.log(shares)[:, None] + growth[:, None] * x[None, :] + season[None, :]
    log_rate += rng.normal(0.0, 0.3, (n_main, T))                           # over-dispersion
    burst = rng.random((n_main, T)) < 0.04
    log_rate += np.where(burst, np.log(rng.uniform(3.0, 8.0, (n_main, T))), 0.0)
    rate = np.exp(log_rate)
    # empty region/months: smaller regions start reporting late and miss a few months
    for i in range(1, n_main):
        if shares[i] < 0.15:
            rate[i, :int(rng.integers(0, max(T // 5, 1) + 1))] = 0.0
            rate[i, rng.random(T) < 0.03] = 0.0
    if median is not None:
        rate *= median / max(float(np.median(rate)), 1e-12)
    else:
        rate *= total / rate.sum()
    return rng.poisson(rate)


def _realistic_categories(rng: np.random.Generator, category_prob: np.ndarray, paths: np.ndarray,
                          n_cell: np.ndarray, separation: float) -> np.ndarray:
    """Category index of every record (in the generator's record order: region-major, then
    month) of realistic logs: the state's distribution tilted by a region effect and a slow
    drift over time (each as strong as the state effect)."""
    n_regions, T = n_cell.shape
    n_cat = category_prob.shape[1]
    region_tilt = rng.normal(0.0, _TILT * max(separation, 0.2), (n_regions, n_cat))
    drift = rng.normal(0.0, _TILT * max(separation, 0.2), n_cat)
    x = np.linspace(-0.5, 0.5, T)
    out = []
    for r in range(n_regions):
        for t in range(T):
            if n_cell[r, t] == 0:
                continue
            logit = np.log(category_prob[paths[r, t]]) + region_tilt[r] + drift * x[t]
            p = np.exp(logit - logit.max())
            out.append(np.repeat(np.arange(n_cat), rng.multinomial(n_cell[r, t], p / p.sum())))
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def synthetic_war_logs(
    kind: Literal["iraq", "afghanistan"] = "iraq",
    *,
    seed: SeedLike = None,
    n_months: int = 72,
    start: str = "2004-01",
    median_records: float | None = None,
    n_states: int | None = None,
    separation: float = 1.0,
    empty_casualty_rate: float = 0.01,
    malformed_casualty_rate: float = 0.0,
    main_regions: Sequence[str] | None = None,
    profile: Literal["plain", "realistic"] | None = None,
    total_records: float | None = None,
) -> SyntheticWarLogs:
    """Synthetic event logs with the schema and the structure of the war logs.

    Structure: the regions of ``kind`` (:data:`IRAQ_REGIONS` or
    :data:`AFGHANISTAN_REGIONS`) over ``n_months`` months; every region follows its own
    path of regime switches between ``n_states`` latent states (default 2 for Iraq, 3 for
    Afghanistan); every log entry draws its category (one of ~65, grouped under 8 types) and
    its casualties from its region/month state. Record counts per region/month are skewed
    (log-normal, with a strong upward trend for Afghanistan). The quirks the paper's
    preprocessing removes are present: for Iraq the 5th month is empty, only two regions
    report in the final calendar year, and ``MND-S`` / ``MND-NE`` hold very little data; for
    Afghanistan ``UNKNOWN`` and ``NONE SELECTED`` are near-empty codes. A fraction
    ``empty_casualty_rate`` of casualty cells is empty and ``malformed_casualty_rate`` holds
    text that is not a count.

    Parameters
    ----------
    median_records : float, optional
        Median records per region/month of the main regions (default: the paper's 972 for
        Iraq, 58 for Afghanistan).
    separation : float, default 1.0
        How different the states' emission distributions are (larger: easier to tell
        apart); 0 makes all states the same.
    main_regions : sequence of str, optional
        Codes of the regions with data (default: the first five codes of ``kind``); the
        near-empty codes of ``kind`` are added.
    profile : {"plain", "realistic"}, optional
        How hard the logs are (default ``"realistic"`` for Afghanistan, ``"plain"`` for
        Iraq). ``"plain"``: log-normal cell sizes around ``median_records`` with a smooth
        trend, and emissions that depend on the state only (the model is true).
        ``"realistic"``: logs as hard to fit as the public Afghanistan file (~76k records,
        5 regions x 72 months): region sizes strongly skewed (shares about 42/34/10/8/6 %),
        a strong upward trend (x10 over the period, steeper in some regions) with a summer
        fighting season, bursts (about 4 % of region/months hold 3-8 times their usual
        count), empty region/months (smaller regions start reporting late and miss a few
        months), and emissions that also depend on the region and drift slowly over time
        (the HMM is misspecified, as on real logs, so its posterior has several deep modes).
    total_records : float, optional
        ``"realistic"`` only: expected number of records of the main regions (default
        76,000 x ``n_months`` / 72); ``median_records``, when given, sets the scale instead
        (the median expected count of a main region/month).
    """
    check_choice(kind, "kind", ("iraq", "afghanistan"))
    profile = check_choice(profile if profile is not None else ("realistic" if kind == "afghanistan" else "plain"),
                           "profile", ("plain", "realistic"))
    rng = check_random_state(seed)
    n_months = check_int(n_months, "n_months", minimum=12)
    median = check_real(median_records if median_records is not None else (972.0 if kind == "iraq" else 58.0),
                        "median_records")
    if not median > 0:
        raise ValueError(f"median_records must be > 0, got {median_records!r}")
    sep = check_real(separation, "separation")
    if sep < 0:
        raise ValueError(f"separation must be >= 0, got {separation!r}")
    for name, rate in (("empty_casualty_rate", empty_casualty_rate), ("malformed_casualty_rate", malformed_casualty_rate)):
        rate = check_real(rate, name)
        if not 0 <= rate < 1:
            raise ValueError(f"{name} must be in [0, 1), got {rate!r}")
    n_states = check_int(n_states if n_states is not None else (2 if kind == "iraq" else 3), "n_states", minimum=1)
    try:
        months = pd.period_range(pd.Period(start, freq="M"), periods=n_months, freq="M").astype(str)
    except (ValueError, TypeError):
        raise ValueError(f"start must be a month 'YYYY-MM', got {start!r}") from None

    codes = list(IRAQ_REGIONS if kind == "iraq" else AFGHANISTAN_REGIONS)
    if main_regions is None:
        main = codes[:5]
    else:
        if isinstance(main_regions, str) or not all(isinstance(r, str) and r.strip() for r in main_regions):
            raise TypeError("main_regions must be a sequence of non-empty region codes")
        main = list(dict.fromkeys(main_regions))
        if not main:
            raise ValueError("main_regions must name at least one region")
    minor = [r for r in codes[5:] if r not in main]
    regions = main + minor
    paths = _synthetic_state_paths(rng, len(regions), n_months, n_states, (0.3, 0.75))

    # per-state emission distributions: a shared base plus state-specific boosts
    n_cat = len(_CATEGORY_TYPES)
    base = rng.gamma(0.7, size=n_cat) + 0.05
    category_prob = np.empty((n_states, n_cat))
    casualty_prob = np.empty((n_states, 4))
    for s in range(n_states):
        boost = np.exp(sep * rng.normal(0.0, 1.0, size=n_cat))
        p = base * boost
        category_prob[s] = p / p.sum()
        casualty_prob[s] = np.clip(rng.beta(1.5, 10, size=4) * (1 + sep * rng.random(4)), 0.01, 0.9)
    type_risk = {"Enemy Action": 1.5, "Explosive Hazard": 1.8, "Friendly Action": 1.0, "Criminal Event": 0.8,
                 "Non-Combat Event": 0.4, "Suspicious Incident": 0.2, "Threat Report": 0.1, "Other": 0.3}

    # skewed record counts per region/month
    n_cell = np.zeros((len(regions), n_months), dtype=np.int64)
    if profile == "realistic":
        total = _check_total(total_records, n_months) if median_records is None else None
        n_cell[:len(main)] = _realistic_cell_counts(rng, len(main), months, total=total,
                                                    median=None if median_records is None else median)
    else:
        scale = {r: np.exp(rng.normal(0, 0.5)) for r in main}
        trend = np.linspace(-1.0, 1.0, n_months) * (1.2 if kind == "afghanistan" else 0.3)
        for i, r in enumerate(main):
            mu = np.log(median) + np.log(scale[r]) + trend
            n_cell[i] = rng.poisson(np.exp(mu + rng.normal(0, 0.6, n_months)))
    for i in range(len(main), len(regions)):  # near-empty codes: a few records in a few months
        active = rng.random(n_months) < 0.3
        n_cell[i] = active * rng.poisson(2.0, n_months)
    if kind == "iraq":
        n_cell[:, 4] = 0                                   # the missing 5th month
        final_year = np.array([m[:4] == months[-1][:4] for m in months])
        n_cell[2:, final_year] = 0                         # only two regions report in the final year

    rows_region = np.repeat(np.arange(len(regions)), n_cell.sum(axis=1))
    rows_month = np.concatenate([np.repeat(np.arange(n_months), n_cell[i]) for i in range(len(regions))])
    state = paths[rows_region, rows_month]
    n = len(state)
    cat_idx = np.empty(n, dtype=np.int64)
    if profile == "realistic":
        cat_idx[:] = _realistic_categories(rng, category_prob, paths, n_cell, sep)
    else:
        for s in range(n_states):
            m = state == s
            cat_idx[m] = rng.choice(n_cat, size=int(m.sum()), p=category_prob[s])
    types = np.array([t for t, _ in _CATEGORY_TYPES], dtype=object)[cat_idx]
    cats = np.array([c for _, c in _CATEGORY_TYPES], dtype=object)[cat_idx]
    risk = np.array([type_risk[t] for t in types])
    cas: dict[str, np.ndarray] = {}
    for f_i, (faction, cols) in enumerate(FACTION_CASUALTY_COLUMNS.items()):
        p = np.clip(casualty_prob[state, f_i] * risk, 0, 0.95)
        has = rng.random(n) < p
        which = rng.integers(len(cols), size=n)
        amount = rng.geometric(0.6, size=n)                # at least one casualty
        for c_i, col in enumerate(cols):
            cas[col] = np.where(has & (which == c_i), amount, 0)
    minute = rng.integers(0, 60 * 24, size=n)
    day = (rng.random(n) * 28).astype(int) + 1
    month_start = pd.PeriodIndex(months, freq="M").to_timestamp()
    stamps = (month_start[rows_month] + pd.to_timedelta(day - 1, unit="D") + pd.to_timedelta(minute, unit="m"))
    records = pd.DataFrame({
        "ReportKey": [f"K{i:07d}" for i in range(n)],
        "DateOccurred": stamps.strftime("%Y-%m-%d %H:%M"),
        "Type": types,
        "Category": cats,
        "Title": "synthetic report",
        "Summary": "synthetic text, ignored by the loader",
        "Region": np.array(regions, dtype=object)[rows_region],
    })
    for col in CASUALTY_COLUMNS:
        text = cas[col].astype(str).astype(object)
        if empty_casualty_rate > 0:
            text[rng.random(n) < empty_casualty_rate] = ""
        if malformed_casualty_rate > 0:
            text[rng.random(n) < malformed_casualty_rate] = "n/a"
        records[col] = text
    order = rng.permutation(n)
    records = records.iloc[order].reset_index(drop=True)
    states = pd.DataFrame(paths, index=regions, columns=list(months))
    return SyntheticWarLogs(records=records, states=states, category_prob=category_prob,
                            casualty_prob=casualty_prob, categories=list(_CATEGORY_TYPES), kind=kind)


#: the number of states that the non-mixing case (:func:`non_mixing_war_logs`) is fitted with
NON_MIXING_STATES = 10


def non_mixing_war_logs(*, seed: SeedLike = 1) -> SyntheticWarLogs:
    """Realistic Afghanistan-style logs on which a 10-state HMM's chains do not mix (issue 49).

    The real Afghanistan war diary (75,907 records after preprocessing, 5 regions x 72
    months) gives 10-state posteriors whose chains settle in different modes and never cross
    (R-hat of the log-likelihood up to 2.4). These logs reproduce the case:
    :func:`synthetic_war_logs` with ``kind="afghanistan"``, the ``"realistic"`` profile
    (skewed regions, trend, season, bursts, empty cells, emissions that also depend on the
    region and drift: the HMM is misspecified), 72 months and 76,000 expected records
    (75,602 after preprocessing for ``seed=1``), 3 true states. Fitted with
    :data:`NON_MIXING_STATES` = 10 states from dispersed starts (``init="dispersed"``, 4
    chains x (200 + 200), ``max_treedepth=6``, seed 0), the chains from the best EM solution
    and from an EM run of their own share one mode, the chain from a k-means start sits in
    another, 160 log-likelihood units lower (7 within-chain sds), and the chain from a prior
    draw is still ~12,800 units below them; the rank-normalised split R-hat of the
    log-likelihood is 2.5 (``tests/models/test_hmm_nonmixing.py`` checks R-hat > 1.1 and
    >= 2 modes).

    Parameters
    ----------
    seed : int, Generator or None, default 1
        Seed of the generator (1: the case measured above).

    Returns
    -------
    SyntheticWarLogs

    References
    ----------
    .. [1] Y. Yao, A. Vehtari and A. Gelman (2022), "Stacking for non-mixing Bayesian
       computations: the curse and blessing of multimodal posteriors", JMLR 23(79).
    """
    return synthetic_war_logs("afghanistan", seed=seed, n_months=72, profile="realistic", total_records=76_000.0)
