"""Loaders for the public UCI data sets the papers use: Adult, Abalone, Wine quality, banknote
authentication.

The files ship with pystanprivacy (the repository's ``data/`` folder, ``pystanprivacy/data``
in an installed wheel; sources and licences in ``data/README.md``). Each loader takes a file
path or a folder holding the file; without one it searches, in order, the folder named by
the environment variable ``PYSTANPRIVACY_DATA`` and then the shipped folder
(:func:`data_dirs`). Nothing is ever downloaded: a missing file raises ``FileNotFoundError``
saying which file, every place looked and where to get it.

The loaders return the data as published (pandas DataFrames with named columns, labels as
0/1 integers); the papers' preprocessing (scaling, PCA, clipping, splits) lives with each
paper's experiments.

References
----------
.. [1] D. Dua and C. Graff, UCI Machine Learning Repository, https://archive.ics.uci.edu
   (Adult: id 2, Abalone: id 1, Wine quality: id 186, banknote authentication: id 267).
   Licence CC BY 4.0.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "DATA_ENV",
    "ADULT_COLUMNS",
    "ADULT_NUMERIC",
    "ABALONE_COLUMNS",
    "WINE_COLOURS",
    "BANKNOTE_COLUMNS",
    "shipped_data_dir",
    "data_dirs",
    "find_data_file",
    "recording_data_files",
    "load_adult",
    "load_abalone",
    "load_wine",
    "load_banknote",
]

#: environment variable naming a folder of data files, searched before the shipped folder
DATA_ENV = "PYSTANPRIVACY_DATA"

_SOURCES = {
    "adult.data": "https://archive.ics.uci.edu/dataset/2/adult",
    "adult.test": "https://archive.ics.uci.edu/dataset/2/adult",
    "abalone.data": "https://archive.ics.uci.edu/dataset/1/abalone",
    "winequality-red.csv": "https://archive.ics.uci.edu/dataset/186/wine+quality",
    "winequality-white.csv": "https://archive.ics.uci.edu/dataset/186/wine+quality",
    "data_banknote_authentication.txt": "https://archive.ics.uci.edu/dataset/267/banknote+authentication",
    # not a UCI set: the Afghan War Diary of Foulds et al.'s case study (GPL; data/README.md)
    "afg_war_diary.csv.gz": "the R package ggplyr (https://github.com/garrettgman/ggplyr, data/afg.RData, "
    "converted to the war-log columns; see data/README.md)",
    # not a UCI set: the first 36,683 transactions of Kosarak (Kulkarni et al., Figure 2; data/README.md)
    "kosarak_prefix.dat.gz": "the FIMI repository (http://fimi.uantwerpen.be/data/kosarak.dat: gzip its first "
    "36,683 lines; see data/README.md)",
}

ADULT_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income",
)
#: the six numeric features of Adult
ADULT_NUMERIC = ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week")

ABALONE_COLUMNS = (
    "sex",
    "length",
    "diameter",
    "height",
    "whole_weight",
    "shucked_weight",
    "viscera_weight",
    "shell_weight",
    "rings",
)

#: the Wine quality files, by colour
#: the four wavelet features of the banknote images, then the class (1: forged, as the donors code it)
BANKNOTE_COLUMNS = ("variance", "skewness", "curtosis", "entropy", "forged")
WINE_COLOURS = {"red": "winequality-red.csv", "white": "winequality-white.csv"}


def shipped_data_dir() -> Path | None:
    """The folder of data files that ships with pystanprivacy, or None when there is none.

    In an installed wheel it is ``pystanprivacy/data`` inside the package; in a source
    checkout (also an editable install) the repository's top-level ``data/`` folder, which
    counts only beside the checkout's ``pyproject.toml`` (so that an unrelated ``data``
    folder next to an installed package is never picked up).
    """
    package = Path(__file__).resolve().parents[1]
    candidates = [package / "data"]
    if (package.parent / "pyproject.toml").is_file():
        candidates.append(package.parent / "data")
    return next((c for c in candidates if c.is_dir()), None)


def data_dirs() -> list[Path]:
    """The folders searched, in order, for a data file when no path is given:
    ``$PYSTANPRIVACY_DATA`` when it is set, then :func:`shipped_data_dir`."""
    env = os.environ.get(DATA_ENV)
    shipped = shipped_data_dir()
    folders = [Path(env)] if env else []
    if shipped is not None:
        folders.append(shipped)
    return folders


#: the ``{file name: path}`` of the data files found inside :func:`recording_data_files`
_READ_FILES: contextvars.ContextVar[dict[str, Path] | None] = contextvars.ContextVar(
    "pystanprivacy_read_data_files", default=None
)


@contextlib.contextmanager
def recording_data_files() -> Iterator[dict[str, Path]]:
    """Inside, every data file that :func:`find_data_file` finds in this thread's context (every
    loader of this module goes through it) is added to the yielded ``{file name: path}`` dict.
    The task runner uses it to refuse a task result that read a data file its key does not
    name (:mod:`pystanprivacy.run.study`)."""
    used: dict[str, Path] = {}
    token = _READ_FILES.set(used)
    try:
        yield used
    finally:
        _READ_FILES.reset(token)


def find_data_file(filename: str, path: str | os.PathLike | None = None) -> Path:
    """Locate ``filename``: ``path`` itself when it is a file, ``path/filename`` when it
    is a folder (nothing else is searched when ``path`` is given); without ``path`` the
    first of ``$PYSTANPRIVACY_DATA/filename`` and the shipped ``data/filename`` that exists
    (:func:`data_dirs`).

    Raises
    ------
    FileNotFoundError
        Naming the file, every place looked and where to download it.
    """
    if path is not None:
        p = Path(path)
        candidates = [p if p.is_file() else p / filename]
    else:
        candidates = [folder / filename for folder in data_dirs()]
    for c in candidates:
        if c.is_file():
            used = _READ_FILES.get()
            if used is not None:
                used[filename] = c
            return c
    where = (
        ", ".join(map(str, candidates))
        if candidates
        else f"nowhere (no path given, ${DATA_ENV} is not set and this installation ships no data folder)"
    )
    source = _SOURCES.get(filename, "the UCI Machine Learning Repository")
    raise FileNotFoundError(
        f"data file {filename!r} not found; looked in {where}. Download it from {source} "
        f"and pass its path or folder, or set {DATA_ENV} to the folder holding it"
    )


def _read_adult(file: Path, *, skip_first_line: bool) -> pd.DataFrame:
    frame = pd.read_csv(
        file,
        header=None,
        names=list(ADULT_COLUMNS),
        skiprows=1 if skip_first_line else 0,
        sep=",",
        skipinitialspace=True,
        na_values=["?"],
        skip_blank_lines=True,
        dtype={c: "string" for c in ADULT_COLUMNS if c not in ADULT_NUMERIC},
    )
    income = frame["income"].str.rstrip(".")
    bad = ~income.isin([">50K", "<=50K"])
    if bad.any():
        raise ValueError(
            f"{file}: {int(bad.sum())} row(s) have an income label other than '>50K' or '<=50K' "
            "(with or without a trailing '.'); is this an unmodified UCI Adult file?"
        )
    frame["income"] = (income == ">50K").astype(np.int64)
    for col in ADULT_NUMERIC:
        if not pd.api.types.is_numeric_dtype(frame[col]):
            raise ValueError(f"{file}: column {col!r} is not numeric; is this an unmodified UCI Adult file?")
    return frame


def load_adult(path: str | os.PathLike | None = None, *, split: str = "train") -> pd.DataFrame:
    """The Adult (census income) data: ``split='train'`` (adult.data, 32,561 rows),
    ``'test'`` (adult.test, 16,281 rows; its first line is skipped and the trailing '.' of
    its labels removed) or ``'both'`` (train then test).

    ``path`` is the file (for one split) or the folder holding ``adult.data`` /
    ``adult.test``. Missing values (``?``) become ``<NA>``; rows are not dropped here.
    Column ``income`` is 1 for '>50K' and 0 for '<=50K'.
    """
    if split not in ("train", "test", "both"):
        raise ValueError(f"split must be 'train', 'test' or 'both', got {split!r}")
    if split == "both" and path is not None and Path(path).is_file():
        raise ValueError(f"split='both' needs the folder holding adult.data and adult.test, got the file {path!r}")
    frames = []
    for name in (
        ["adult.data"] if split == "train" else ["adult.test"] if split == "test" else ["adult.data", "adult.test"]
    ):
        file = find_data_file(name, path)
        with open(file) as fh:
            first = fh.readline()
        frames.append(_read_adult(file, skip_first_line=first.startswith("|")))
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def load_abalone(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """The Abalone data (4,177 rows): sex (M/F/I), seven measurements and ``rings``."""
    file = find_data_file("abalone.data", path)
    frame = pd.read_csv(file, header=None, names=list(ABALONE_COLUMNS), dtype={"sex": "string"})
    bad = ~frame["sex"].isin(["M", "F", "I"])
    if bad.any() or frame.isna().any().any():
        raise ValueError(f"{file}: unexpected sex codes or empty cells; is this an unmodified UCI Abalone file?")
    return frame


def load_wine(path: str | os.PathLike | None = None, *, colour: str = "red") -> pd.DataFrame:
    """Wine quality (Cortez et al. 2009): 11 physico-chemical features and ``quality``
    (semicolon-separated files with a quoted header). Column names have spaces replaced by
    underscores (``fixed_acidity``, ..., ``quality``).

    ``colour='red'`` (winequality-red.csv, 1,599 rows; Jewson's Wine panels),
    ``'white'`` (winequality-white.csv, 4,898 rows) or ``'both'`` (red then white, 6,497
    rows, with a 13th column ``red``: 1 for red, 0 for white; Kulkarni's Figure 4). ``path`` is the file (for
    one colour) or the folder holding the files.
    """
    if colour not in (*WINE_COLOURS, "both"):
        raise ValueError(f"colour must be 'red', 'white' or 'both', got {colour!r}")
    if colour == "both":
        if path is not None and Path(path).is_file():
            raise ValueError(f"colour='both' needs the folder holding both Wine quality files, got the file {path!r}")
        red, white = (load_wine(path, colour=c) for c in ("red", "white"))
        return pd.concat([red.assign(red=1), white.assign(red=0)], ignore_index=True)
    file = find_data_file(WINE_COLOURS[colour], path)
    frame = pd.read_csv(file, sep=";")
    frame.columns = [str(c).strip().replace(" ", "_") for c in frame.columns]
    if "quality" not in frame.columns or frame.shape[1] != 12:
        raise ValueError(
            f"{file}: expected 12 semicolon-separated columns ending in 'quality', got {list(frame.columns)}"
        )
    if not all(pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns):
        raise ValueError(f"{file}: non-numeric cells; is this an unmodified UCI Wine quality file?")
    return frame


def load_banknote(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """Banknote authentication (1,372 rows): four wavelet features of the banknote images
    (``variance``, ``skewness``, ``curtosis``, ``entropy``) and the class ``forged`` (0/1;
    762 zeros, 610 ones). Jewson et al.'s (2023) "bank - authenticity" (Figure 9)."""
    file = find_data_file("data_banknote_authentication.txt", path)
    frame = pd.read_csv(file, header=None, names=list(BANKNOTE_COLUMNS))
    if frame.shape[1] != 5 or frame.isna().any().any() or not frame["forged"].isin([0, 1]).all():
        raise ValueError(
            f"{file}: expected 5 comma-separated numeric columns ending in a 0/1 class; "
            "is this an unmodified UCI banknote authentication file?"
        )
    frame["forged"] = frame["forged"].astype(np.int64)
    return frame
