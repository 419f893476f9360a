"""War-logs loader, the supplement E.2 preprocessing steps and the synthetic generator.

The hand-made file tests/data/warlogs_iraq_small.csv has 18 records (R01-R18) built so that
every step removes a known set of records; the expected numbers below were worked out by
hand from that file (see the comments per step).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.experiments.foulds2016 import warlogs as ds

SMALL = Path(__file__).parents[1] / "data" / "warlogs_iraq_small.csv"


@pytest.fixture(scope="module")
def raw():
    df, rep = ds.read_war_logs(SMALL)
    return df, rep


def test_read_keeps_only_the_schema_columns_as_strings(raw):
    df, rep = raw
    assert list(df.columns) == list(ds.WARLOG_COLUMNS)  # ReportKey, Title, Summary ignored
    assert len(df) == 18 and rep.records_after == 18
    assert (df["FriendlyWIA"] == "").sum() == 1  # R04's empty cell stays an empty string
    assert df.loc[2, "Category"] == "Cache Found/Cleared"


def test_missing_columns_are_named():
    text = SMALL.read_text().replace("EnemyDetained", "Detained")
    with pytest.raises(ValueError, match=r"lacks the required column\(s\) \['EnemyDetained'\]"):
        ds.read_war_logs(io.StringIO(text))
    with pytest.raises(ValueError, match="not found"):
        ds.read_war_logs(SMALL.with_name("no_such_file.csv"))


def test_headerless_file_of_the_public_releases(tmp_path, raw):
    df, _ = raw
    full = pd.DataFrame({c: "" for c in ds.WARLOG_HEADERLESS_COLUMNS}, index=df.index)
    for c in ds.WARLOG_COLUMNS:
        full[c] = df[c]
    path = tmp_path / "headerless.csv"
    full.to_csv(path, index=False, header=False)
    again, rep = ds.read_war_logs(path)
    assert "header-less" in rep.note
    pd.testing.assert_frame_equal(again, df)


def test_parse_timesteps_removes_unparseable_dates(raw):
    out, rep = ds.parse_timesteps(raw[0])
    assert rep.records_removed == 1  # R16 "not a date"
    assert next(iter(out["month"].cat.categories)) == "2004-01"
    assert len(out["month"].cat.categories) == 13  # 2004-01 ... 2005-01
    assert (
        out.loc[out["Type"] == "Friendly Action", "month"].astype(str).tolist().count("2004-06") == 1
    )  # R17, HH:MM:SS


def test_empty_and_malformed_casualty_cells_follow_the_rule(raw):
    timed, _ = ds.parse_timesteps(raw[0])
    _dropped, rep = ds.clean_casualty_cells(timed)  # default: malformed -> record removed
    assert rep.records_removed == 2  # R10 ("abc"), R11 ("-1")
    assert "10 empty cell(s) read as 0" in rep.note  # R04: 9 cells, R12: one " " cell
    assert "2 malformed" in rep.note and "abc" not in rep.note
    zero, rep0 = ds.clean_casualty_cells(timed, malformed="zero")
    assert rep0.records_removed == 0 and zero["FriendlyWIA"].max() == 1
    with pytest.raises(ValueError, match=r"2 malformed casualty cell\(s\).*FriendlyWIA.*CivilianKIA") as err:
        ds.clean_casualty_cells(timed, malformed="raise")
    assert "abc" not in str(err.value) and "-1" not in str(err.value)
    with pytest.raises(ValueError, match="malformed must be one of"):
        ds.clean_casualty_cells(timed, malformed="ignore")


def test_binarise_and_merge_steps(raw):
    df, _ = ds.parse_timesteps(raw[0])
    df, _ = ds.clean_casualty_cells(df)
    b, rep = ds.binarise_casualties(df)
    assert rep.records_removed == 0
    assert b["CivilianWIA"].dtype == bool and int(b["EnemyDetained"].sum()) == 2  # R03 (3 -> True), R17
    m, _ = ds.merge_casualty_outcomes(b)
    assert set(ds.FACTION_CASUALTY_COLUMNS) <= set(m.columns)
    assert not set(ds.CASUALTY_COLUMNS) & set(m.columns)
    # Enemy = WIA | KIA | detained: R03, R05, R12, R15, R17 (after R10/R11/R16 left), R13/R14 have none
    assert int(m["Enemy"].sum()) == 5
    # Civilian: R02 (2 WIA, 1 KIA -> one indicator), R13, R18
    assert int(m["Civilian"].sum()) == 3
    f, _ = ds.merge_friendly_hostnation(m)
    assert "Friendly" not in f.columns and "HostNation" not in f.columns
    assert int(f["FriendlyHostNation"].sum()) == 3  # R01 (friendly), R05 (host), R09 (friendly)


def test_iraq_steps_and_full_report(raw):
    counts = ds.preprocess_war_logs(raw[0], read_report=raw[1])
    assert counts.dataset == "iraq"
    rep = counts.report.set_index("step")
    expected_removed = {
        "read": 0,
        "parse_timesteps": 1,
        "clean_casualty_cells": 2,
        "binarise_casualties": 0,
        "merge_casualty_outcomes": 0,
        "merge_friendly_hostnation": 0,
        "drop_month": 1,  # R06 in 2004-05, the 5th month
        "drop_final_year": 1,  # R07 in 2005
        "drop_regions": 2,  # R13 (MND-S), R14 (MND-NE)
        "drop_near_empty_regions": 0,
        "drop_empty_timesteps": 0,
        "count_features": 0,
    }
    assert rep["records_removed"].to_dict() == expected_removed
    assert rep.loc["drop_regions", "regions_removed"] == 2
    # months left after the Iraq steps: 2004-01..04, 06..12; empty ones: 03 (only MND-NE), 07-12
    assert rep.loc["drop_empty_timesteps", "timesteps_removed"] == 7
    assert rep.loc["count_features", "records_after"] == 11
    assert counts.regions == ("MND-BAGHDAD", "MND-N", "MND-SE", "MNF-W")
    assert counts.months == ("2004-01", "2004-02", "2004-04", "2004-06")
    assert counts.vocabularies[0] == ("Enemy Action", "Explosive Hazard", "Friendly Action", "Non-Combat Event")
    assert counts.vocabularies[1] == (
        "Accident",
        "Cache Found/Cleared",
        "Detain",
        "Direct Fire",
        "IED Explosion",
        "IED Found/Cleared",
        "Indirect Fire",
    )
    assert counts.feature_sizes == (4, 7, 2, 2, 2)
    np.testing.assert_array_equal(counts.cell_totals, [[2, 2, 1, 0], [1, 1, 1, 0], [0, 1, 0, 0], [1, 0, 0, 1]])
    sl = counts.feature_slices
    # Baghdad, 2004-02: R03 (Friendly Action / Cache, enemy detained), R04 (Friendly Action / Detain, all empty)
    np.testing.assert_array_equal(counts.counts[0, 1, sl["type"]], [0, 0, 2, 0])
    np.testing.assert_array_equal(counts.counts[0, 1, sl["category"]], [0, 1, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(counts.counts[0, 1, sl["enemy_casualty"]], [1, 1])
    np.testing.assert_array_equal(counts.counts[0, 1, sl["friendly_host_casualty"]], [2, 0])
    # Baghdad, 2004-04: R05 host WIA + enemy KIA
    np.testing.assert_array_equal(counts.counts[0, 2, sl["friendly_host_casualty"]], [0, 1])
    # MND-N, 2004-04: R12 (its blank CivilianKIA read as 0; EnemyKIA 1)
    np.testing.assert_array_equal(counts.counts[1, 2, sl["civilian_casualty"]], [1, 0])
    np.testing.assert_array_equal(counts.counts[1, 2, sl["enemy_casualty"]], [0, 1])
    # totals per feature agree in every cell
    for s in sl.values():
        np.testing.assert_array_equal(counts.counts[:, :, s].sum(axis=2), counts.cell_totals)
    assert counts.n_records == 11


def test_near_empty_threshold_is_a_parameter(raw):
    counts = ds.preprocess_war_logs(raw[0], min_region_share=0.1)  # MND-SE: 1 of 11 records < 10 %
    assert counts.regions == ("MND-BAGHDAD", "MND-N", "MNF-W")
    rep = counts.report.set_index("step")
    assert rep.loc["drop_near_empty_regions", "records_removed"] == 1
    assert rep.loc["drop_near_empty_regions", "regions_removed"] == 1
    with pytest.raises(ValueError, match=r"min_share must be in \[0, 1\)"):
        ds.preprocess_war_logs(raw[0], min_region_share=1.5)


def test_generic_dataset_skips_the_iraq_steps(raw):
    counts = ds.preprocess_war_logs(raw[0], dataset="generic", min_region_share=0.0)
    steps = counts.report["step"].tolist()
    assert "drop_month" not in steps and "drop_regions" not in steps
    assert "MND-S" in counts.regions and "2005-01" in counts.months


def test_declared_vocabulary_counts_unknown_values_as_other(raw):
    counts = ds.preprocess_war_logs(raw[0], vocabularies={"type": ["Enemy Action", "Friendly Action"]})
    assert counts.vocabularies[0] == ("Enemy Action", "Friendly Action", "OTHER")
    # Explosive Hazard x3 (R02, R08, R12) and Non-Combat Event (R18) become OTHER
    assert counts.counts[:, :, counts.feature_slices["type"]].sum(axis=(0, 1)).tolist() == [4, 3, 4]
    assert "4 value(s) outside the declared vocabularies" in counts.report["note"].iloc[-1]


def test_drop_month_arguments(raw):
    df, _ = ds.parse_timesteps(raw[0])
    _out, rep = ds.drop_month(df, "2004-02")
    assert rep.records_removed == (df["month"] == "2004-02").sum() and rep.timesteps_removed == 1
    with pytest.raises(ValueError, match="position in 1..13"):
        ds.drop_month(df, 14)
    with pytest.raises(ValueError, match="month of the grid"):
        ds.drop_month(df, "2003-01")


@pytest.mark.parametrize("kind", ["iraq", "afghanistan"])
def test_synthetic_generator_through_the_whole_pipeline(tmp_path, kind):
    syn = ds.synthetic_war_logs(kind, seed=11, median_records=40, malformed_casualty_rate=0.002)
    path = syn.to_csv(tmp_path / f"{kind}.csv")
    counts = ds.load_war_logs(path)
    assert counts.dataset == kind
    rep = counts.report.set_index("step")
    assert rep.loc["clean_casualty_cells", "records_removed"] > 0  # malformed cells dropped
    assert "empty cell(s) read as 0" in rep.loc["clean_casualty_cells", "note"]
    # the generator's near-empty codes are the ones removed; every main region stays
    main = (ds.IRAQ_REGIONS if kind == "iraq" else ds.AFGHANISTAN_REGIONS)[:5]
    assert sorted(counts.regions) == sorted(main)
    if kind == "iraq":
        assert len(counts.months) == 72 - 1 - 12 and "2004-05" not in counts.months
        assert not any(m.startswith("2009") for m in counts.months)
    else:
        assert len(counts.months) == 72
    assert counts.feature_sizes[0] == 8 and counts.feature_sizes[1] > 50 and counts.feature_sizes[2:] == (2, 2, 2)
    totals = counts.cell_totals
    # skewed counts: the median cell is near the requested median, the largest far above it
    assert 20 < np.median(totals) < 80 and totals.max() > 3 * np.median(totals)
    truth = syn.state_matrix(counts.regions, counts.months)
    assert truth.shape == totals.shape and len(np.unique(truth)) == (2 if kind == "iraq" else 3)
    # every region switches regime at least once
    assert all(len(np.unique(row)) >= 2 for row in truth)


def test_synthetic_generator_is_reproducible_and_validates():
    a = ds.synthetic_war_logs("afghanistan", seed=5, median_records=5)
    b = ds.synthetic_war_logs("afghanistan", seed=5, median_records=5)
    pd.testing.assert_frame_equal(a.records, b.records)
    with pytest.raises(ValueError, match="kind must be one of"):
        ds.synthetic_war_logs("syria")
    with pytest.raises(ValueError, match="median_records must be > 0"):
        ds.synthetic_war_logs("iraq", median_records=0)


def test_realistic_afghanistan_logs_are_as_hard_as_the_real_ones():
    """The default Afghanistan profile: ~76k records over 5 regions x 72 months, region sizes
    strongly skewed, a strong upward trend, bursts and empty region/months (issue 15)."""
    syn = ds.synthetic_war_logs("afghanistan", seed=1)
    counts = ds.preprocess_war_logs(syn.records)
    totals = counts.cell_totals
    assert len(counts.regions) == 5 and len(counts.months) == 72
    assert 60_000 < counts.n_records < 95_000
    shares = np.sort(totals.sum(axis=1))[::-1] / totals.sum()
    assert shares[0] > 0.3 and shares[:2].sum() > 0.6 and shares[-1] < 0.1  # skewed regions
    assert totals[:, -12:].sum() > 5 * totals[:, :12].sum()  # upward trend
    assert (totals == 0).sum() >= 10  # empty cells
    ratio = totals[:, 1:-1] / np.maximum((totals[:, :-2] + totals[:, 2:]) / 2, 1)
    assert (ratio > 3).sum() >= 3  # bursts
    plain = ds.synthetic_war_logs("afghanistan", seed=1, profile="plain", median_records=40)
    assert ds.preprocess_war_logs(plain.records).n_records < 0.5 * counts.n_records
    with pytest.raises(ValueError, match="profile must be one of"):
        ds.synthetic_war_logs("afghanistan", profile="hard")
    with pytest.raises(ValueError, match="total_records must be > 0"):
        ds.synthetic_war_logs("afghanistan", total_records=0)
