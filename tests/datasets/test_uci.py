"""UCI loaders: exact row counts and label rules on the shipped files, the search order
($PYSTANPRIVACY_DATA, then the shipped data/), clear errors otherwise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pystanprivacy.datasets import uci
from pystanprivacy.datasets.uci import (
    ADULT_NUMERIC,
    DATA_ENV,
    data_dirs,
    find_data_file,
    load_abalone,
    load_adult,
    load_banknote,
    load_wine,
    shipped_data_dir,
)

REPO_DATA = Path(__file__).resolve().parents[2] / "data"


def test_adult_train_and_test(shared_data_dir):
    train = load_adult(shared_data_dir)
    test = load_adult(shared_data_dir, split="test")
    both = load_adult(shared_data_dir, split="both")
    assert (len(train), len(test), len(both)) == (32561, 16281, 48842)
    assert set(train["income"].unique()) == {0, 1} and set(test["income"].unique()) == {0, 1}
    # published class balance: 7,841 of 32,561 training rows earn >50K
    assert int(train["income"].sum()) == 7841
    assert train["workclass"].isna().sum() == 1836  # '?' is missing, not a category
    for col in ADULT_NUMERIC:
        assert train[col].notna().all()
    assert train.loc[0, "age"] == 39 and train.loc[0, "workclass"] == "State-gov"


def test_adult_by_file_path(shared_data_dir):
    test = load_adult(shared_data_dir / "adult.test", split="test")
    assert len(test) == 16281
    with pytest.raises(ValueError, match="split='both' needs the folder"):
        load_adult(shared_data_dir / "adult.data", split="both")
    with pytest.raises(ValueError, match="split must be"):
        load_adult(shared_data_dir, split="validation")


def test_abalone_and_wine(shared_data_dir):
    abalone = load_abalone(shared_data_dir)
    assert abalone.shape == (4177, 9) and set(abalone["sex"]) == {"M", "F", "I"}
    assert int((abalone["rings"] > 10).sum()) == 1447
    wine = load_wine(shared_data_dir)
    assert wine.shape == (1599, 12) and wine.columns[0] == "fixed_acidity"
    assert wine["quality"].between(3, 8).all()


def test_wine_colours(shared_data_dir):
    white = load_wine(shared_data_dir, colour="white")
    assert white.shape == (4898, 12) and list(white.columns) == list(load_wine(shared_data_dir).columns)
    both = load_wine(shared_data_dir, colour="both")
    # Kulkarni et al.'s "roughly 6.5K samples with 12 features": red + white, 11 features + colour
    assert both.shape == (6497, 13) and int(both["red"].sum()) == 1599
    assert both["red"].iloc[0] == 1 and both["red"].iloc[-1] == 0
    with pytest.raises(ValueError, match="colour must be 'red', 'white' or 'both', got 'rose'"):
        load_wine(shared_data_dir, colour="rose")
    with pytest.raises(ValueError, match="colour='both' needs the folder"):
        load_wine(shared_data_dir / "winequality-red.csv", colour="both")


def test_shipped_files_are_found_without_the_environment_variable(monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    assert shipped_data_dir() == REPO_DATA  # a source checkout: the top-level data/ folder
    assert data_dirs() == [REPO_DATA]
    for name in (
        "adult.data",
        "adult.test",
        "abalone.data",
        "winequality-red.csv",
        "winequality-white.csv",
        "data_banknote_authentication.txt",
    ):
        assert find_data_file(name) == REPO_DATA / name
    assert len(load_adult()) == 32561 and len(load_abalone()) == 4177 and len(load_wine()) == 1599


def test_environment_variable_wins_then_shipped_folder(tmp_path, monkeypatch):
    # a user's own (here: shortened) copy of Adult in $PYSTANPRIVACY_DATA is read, not the shipped one
    mine = tmp_path / "mine"
    mine.mkdir()
    lines = (REPO_DATA / "adult.data").read_text().splitlines(keepends=True)
    (mine / "adult.data").write_text("".join(lines[:100]))
    monkeypatch.setenv(DATA_ENV, str(mine))
    assert data_dirs() == [mine, REPO_DATA]
    assert find_data_file("adult.data") == mine / "adult.data"
    assert len(load_adult()) == 100
    # a file the user's folder lacks comes from the shipped folder
    assert find_data_file("abalone.data") == REPO_DATA / "abalone.data"
    assert len(load_abalone()) == 4177
    # an explicit path is the only place looked
    with pytest.raises(FileNotFoundError, match=r"'abalone.data' not found; looked in .*mine/abalone.data\. "):
        load_abalone(mine)


def test_installed_layout_is_preferred_to_the_checkout(tmp_path, monkeypatch):
    # an installed wheel holds the files in pystanprivacy/data (pyproject's force-include)
    package = tmp_path / "site" / "pystanprivacy"
    (package / "datasets").mkdir(parents=True)
    (package / "data").mkdir()
    monkeypatch.setattr(uci, "__file__", str(package / "datasets" / "uci.py"))
    assert shipped_data_dir() == package / "data"
    # without it, a data/ folder beside the package counts only in a checkout (beside pyproject.toml)
    (package / "data").rmdir()
    (package.parent / "data").mkdir()
    assert shipped_data_dir() is None
    (package.parent / "pyproject.toml").write_text("")
    assert shipped_data_dir() == package.parent / "data"


def test_missing_file_names_every_folder_searched(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match=rf"looked in .*empty/kosarak.dat, {REPO_DATA}/kosarak.dat\."):
        find_data_file("kosarak.dat")


def test_missing_file_says_where_it_looked(tmp_path, monkeypatch, no_shipped_data):
    with pytest.raises(
        FileNotFoundError,
        match=r"no path given, \$PYSTANPRIVACY_DATA is not set and this "
        r"installation ships no data folder",
    ):
        find_data_file("adult.data")
    with pytest.raises(FileNotFoundError, match="archive.ics.uci.edu/dataset/1/abalone"):
        load_abalone(tmp_path)
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "empty"))
    with pytest.raises(
        FileNotFoundError,
        match=r"'winequality-white.csv' not found; looked in .*empty/"
        r"winequality-white.csv\. Download it from .*wine\+quality",
    ):
        load_wine(colour="white")
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    (tmp_path / "winequality-red.csv").write_text('"a";"b"\n1;2\n')
    with pytest.raises(ValueError, match="expected 12 semicolon-separated columns"):
        load_wine()


def test_modified_adult_file_is_rejected(tmp_path):
    (tmp_path / "adult.data").write_text(
        "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, rich\n"
    )
    with pytest.raises(ValueError, match="income label other than"):
        load_adult(tmp_path)


def test_banknote(shared_data_dir, tmp_path):
    frame = load_banknote(shared_data_dir)
    raw = np.loadtxt(shared_data_dir / "data_banknote_authentication.txt", delimiter=",")  # independent read
    assert frame.shape == (1372, 5) and list(frame.columns) == ["variance", "skewness", "curtosis", "entropy", "forged"]
    np.testing.assert_array_equal(frame.to_numpy(dtype=float), raw)
    assert frame["forged"].dtype == np.int64 and int((frame["forged"] == 0).sum()) == 762  # 762 genuine, 610 forged
    assert len(load_banknote()) == 1372  # shipped in data/
    bad = tmp_path / "data_banknote_authentication.txt"
    bad.write_text("3.6,8.6,-2.8,-0.4,2\n")
    with pytest.raises(ValueError, match="unmodified UCI banknote authentication file"):
        load_banknote(bad)
    with pytest.raises(FileNotFoundError, match="data_banknote_authentication.txt"):
        load_banknote(tmp_path / "elsewhere")
