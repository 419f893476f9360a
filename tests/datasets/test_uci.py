"""UCI loaders: exact row counts and label rules on the real files, clear errors otherwise."""
from __future__ import annotations

import pytest

from pystanprivacy.datasets.uci import (
    ADULT_NUMERIC,
    DATA_ENV,
    find_data_file,
    load_abalone,
    load_adult,
    load_wine,
)


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


def test_missing_file_says_where_to_get_it(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    with pytest.raises(FileNotFoundError, match=r"no path given and \$PYSTANPRIVACY_DATA is not set"):
        find_data_file("adult.data")
    with pytest.raises(FileNotFoundError, match="archive.ics.uci.edu/dataset/1/abalone"):
        load_abalone(tmp_path)
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
