"""The shipped Afghan War Diary (data/afg_war_diary.csv.gz): the loader reads a gzip-compressed
war-logs file exactly as the plain file, the supplement E.2 preprocessing counts on the real diary
(checked against a computation of their own with pandas, and against Foulds et al.'s numbers),
and which logs each item of the case study runs on (:mod:`pystanprivacy.experiments.foulds2016.logs`).

No Stan program is compiled here; the diary is read a few times (about 2 s each).
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pystanprivacy._fingerprint import fingerprint
from pystanprivacy.experiments.foulds2016 import hmm, logs
from pystanprivacy.experiments.foulds2016 import warlogs as ds
from pystanprivacy.run.runner import root_sequence

ROOT = Path(__file__).resolve().parents[2]
DIARY = ROOT / "data" / "afg_war_diary.csv.gz"
SMALL = Path(__file__).parents[1] / "data" / "warlogs_iraq_small.csv"
CASUALTIES = [
    "FriendlyWIA", "FriendlyKIA", "HostNationWIA", "HostNationKIA", "CivilianWIA", "CivilianKIA",
    "EnemyWIA", "EnemyKIA", "EnemyDetained",
]  # fmt: skip


@pytest.fixture(scope="module")
def plain_diary(tmp_path_factory) -> Path:
    """The diary decompressed by the standard library (not by the loader)."""
    out = tmp_path_factory.mktemp("diary") / "afg_war_diary.csv"
    with gzip.open(DIARY, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


@pytest.fixture(scope="module")
def independent() -> pd.DataFrame:
    """The diary read by pandas alone (gzip inferred from the name), every cell a string."""
    return pd.read_csv(DIARY, dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return ds.preprocessing_counts(DIARY).set_index("quantity")


# ----------------------------------------------------------------------------- gzip
def test_the_shipped_diary_is_the_provenance_file():
    """data/README.md gives the file's sha256; a changed file must change the README too."""
    digest = hashlib.sha256(DIARY.read_bytes()).hexdigest()
    assert digest == "b36466975b091b066da4b30711167c0b6f127101ad2b7ea49b93e045e24f2757"
    assert digest in (ROOT / "data" / "README.md").read_text()
    assert logs.file_sha256(DIARY) == digest


def test_gzip_diary_reads_as_the_same_frame_as_its_csv(plain_diary):
    gz, rep_gz = ds.read_war_logs(DIARY)
    csv, rep_csv = ds.read_war_logs(plain_diary)
    pd.testing.assert_frame_equal(gz, csv)
    assert rep_gz == rep_csv
    assert len(gz) == 76_209
    # and a gzip whose name does not say so: recognised by its content
    renamed = plain_diary.with_name("diary_gzip_named.csv")
    shutil.copyfile(DIARY, renamed)
    pd.testing.assert_frame_equal(ds.read_war_logs(renamed)[0], csv)


def test_gzip_small_file_preprocesses_as_the_csv(tmp_path):
    """The whole pipeline (load_war_logs) gives the same counts, labels and report."""
    gz = tmp_path / "small.csv.gz"
    with open(SMALL, "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    a, b = ds.load_war_logs(SMALL), ds.load_war_logs(gz)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert (a.regions, a.months, a.vocabularies) == (b.regions, b.months, b.vocabularies)
    pd.testing.assert_frame_equal(a.report, b.report)


def test_damaged_gzip_is_a_clear_error(tmp_path):
    truncated = tmp_path / "truncated.csv.gz"
    truncated.write_bytes(DIARY.read_bytes()[:50_000])  # the header row decompresses, the rest cannot
    with pytest.raises(ValueError, match="not a readable CSV file"):
        ds.read_war_logs(truncated)
    garbage = tmp_path / "garbage.csv.gz"
    garbage.write_bytes(b"\x1f\x8b" + bytes(range(256)) * 4)
    with pytest.raises(ValueError, match="starts like a gzip file but cannot be decompressed"):
        ds.read_war_logs(garbage)


# ------------------------------------------------------------------ preprocessing counts
def test_preprocessing_counts_of_the_diary_against_pandas(table, independent):
    """Every exact count of the table, recomputed here with pandas from the raw cells by the
    paper's rules (supplement E.2; near-empty: fewer than 1 % of the reports)."""
    df = independent
    value = table["value"]
    assert value["reports in the file"] == len(df) == 76_209
    months = pd.to_datetime(df["DateOccurred"], format="%Y-%m-%d %H:%M:%S").dt.to_period("M")
    assert value["reports removed: DateOccurred does not parse"] == 0
    grid = pd.period_range(months.min(), months.max(), freq="M")
    assert value["months from the first to the last report"] == len(grid) == 72
    empty = df[CASUALTIES].apply(lambda c: c.str.strip().eq(""))
    assert value["empty casualty cells"] == empty.to_numpy().sum() == 2_539  # data/README.md
    assert value["reports with an empty casualty cell"] == empty.any(axis=1).sum() == 485
    assert value["reports with all nine casualty cells empty"] == empty.all(axis=1).sum()
    numbers = df[CASUALTIES].replace("", "0").astype(int)
    assert value["reports removed: a malformed casualty cell"] == 0
    for faction, cols in {"Friendly": CASUALTIES[:2], "HostNation": CASUALTIES[2:4], "Civilian": CASUALTIES[4:6],
                          "Enemy": CASUALTIES[6:]}.items():  # fmt: skip
        article = "an" if faction == "Enemy" else "a"
        key = f"reports with {article} {faction} casualty (wounded, killed or detained)"
        assert value[key] == (numbers[cols] > 0).any(axis=1).sum(), faction
    assert value["reports with a Friendly or HostNation casualty"] == (numbers[CASUALTIES[:4]] > 0).any(axis=1).sum()

    sizes = df["Region"].value_counts()
    kept = sizes[sizes >= 0.01 * len(df)]
    assert value["region codes in the file"] == len(sizes) == 7
    assert value["region codes removed as near-empty"] == len(sizes) - len(kept) == 2
    assert value["reports removed with the near-empty region codes"] == sizes.sum() - kept.sum()
    assert value["region codes kept"] == len(kept) == 5
    assert value["reports after preprocessing"] == kept.sum()
    inside = df["Region"].isin(kept.index)
    cells = pd.crosstab(df.loc[inside, "Region"], months[inside]).reindex(columns=grid, fill_value=0)
    assert value["empty months removed"] == (cells.sum(axis=0) == 0).sum() == 0
    assert value["months kept"] == cells.shape[1]
    assert value["region/month cells"] == cells.size == 360
    assert value["region/month cells without reports"] == (cells.to_numpy() == 0).sum()
    assert value["median reports per region/month"] == np.median(cells.to_numpy())
    for year in range(2004, 2010):
        block = cells.loc[:, [m.year == year for m in cells.columns]].to_numpy()
        assert value[f"median reports per region/month in {year}"] == np.median(block), year

    def sizes_of(col: str) -> int:
        return df.loc[inside, col].str.strip().replace("", "(blank)").nunique()

    assert value["feature size: type"] == sizes_of("Type")
    assert value["feature size: category"] == sizes_of("Category")
    for name in ("friendly_host_casualty", "civilian_casualty", "enemy_casualty"):
        assert value[f"feature size: {name}"] == 2
    assert value["empty Type cells"] == df["Type"].str.strip().eq("").sum()
    assert value["empty Category cells"] == df["Category"].str.strip().eq("").sum()
    # "Counter Insurgency" and "Counter-Insurgency" are the Type values spelt two ways
    assert value["Type values that differ from another only in case, hyphens or spaces"] == 2


def test_preprocessing_counts_agree_with_the_paper(table):
    """Foulds et al. (2016), Sec. 5: ~75,000 entries from January 2004 to December 2009 and,
    after removing empty timesteps and near-empty region codes, a median of 58 log entries per
    region/month for Afghanistan."""
    value, paper = table["value"], table["paper"]
    assert paper["median reports per region/month"] == 58
    assert value["median reports per region/month"] == 58
    assert value["months from the first to the last report"] == paper["months from the first to the last report"]
    assert abs(value["reports in the file"] / paper["reports in the file"] - 1) < 0.02  # "~75,000"
    assert table["paper"].isna().sum() == len(table) - 3  # the paper gives only these three numbers


def test_preprocessing_counts_match_the_counts_the_model_sees(table):
    counts = logs.load_diary(DIARY)
    assert counts.dataset == "afghanistan"
    assert table.loc["reports after preprocessing", "value"] == counts.n_records
    assert table.loc["median reports per region/month", "value"] == np.median(counts.cell_totals)
    assert list(table.loc[[f"feature size: {f}" for f in counts.features], "value"]) == list(counts.feature_sizes)


def test_committed_preprocessing_table_is_what_the_code_writes(table):
    committed = ROOT / "results" / "foulds2016" / "foulds2016_warlogs_afghanistan_preprocessing.csv"
    saved = pd.read_csv(committed).set_index("quantity")
    assert list(saved.index) == list(table.index)
    np.testing.assert_array_equal(saved["value"].to_numpy(float), table["value"].to_numpy(float))


# ----------------------------------------------------------------------- which logs
def test_full_study_runs_afghanistan_on_the_diary_and_iraq_on_the_same_synthetic_logs():
    real = logs.study_logs(hmm.FULL, 0, real=True)
    assert list(real) == ["synthetic iraq", "afghanistan"]  # the order of the synthetic study's data sets
    counts, truth = real["afghanistan"]
    assert truth is None and counts.n_records == 75_907
    rng = np.random.default_rng(root_sequence(0, f"{hmm.NAME}/data/iraq"))
    iraq, iraq_truth = hmm.synthetic_dataset("iraq", seed=rng)
    assert fingerprint(real["synthetic iraq"][0]) == fingerprint(iraq)
    np.testing.assert_array_equal(real["synthetic iraq"][1], iraq_truth)
    held = logs.study_logs(hmm.FULL, 0, real=True, heldout=True, reuse=real)
    assert list(held) == ["afghanistan", "synthetic iraq"]
    assert held["synthetic iraq"] is real["synthetic iraq"] and held["afghanistan"][0] is counts


def test_quick_study_stays_synthetic():
    quick = logs.study_logs(hmm.QUICK, 0, real=False)
    assert list(quick) == ["synthetic iraq", "synthetic afghanistan"]
    assert all(truth is not None for _, truth in quick.values())
    held = logs.study_logs(hmm.QUICK, 0, real=False, heldout=True, reuse=quick)
    assert held["synthetic afghanistan"][0].counts.shape[1] <= hmm.QUICK["heldout_months"]


def test_provenance_says_real_or_synthetic():
    out = logs.provenance(["afghanistan", "synthetic iraq"], seed=0)
    assert out["afghanistan"] == {
        "data": "real",
        "file": "afg_war_diary.csv.gz",
        "sha256": hashlib.sha256(DIARY.read_bytes()).hexdigest(),
    }
    assert out["synthetic iraq"]["data"] == "synthetic"
    assert "no public copy" in out["synthetic iraq"]["why"]


def test_missing_diary_names_the_file_and_the_places(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match=r"afg_war_diary\.csv\.gz"):
        logs.diary_path(tmp_path)
