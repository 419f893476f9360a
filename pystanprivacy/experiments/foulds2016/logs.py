"""Which war logs each item of Foulds et al.'s case study (Sec. 5, supplement E) runs on.

* **Afghanistan**: the public Afghan War Diary shipped as ``data/afg_war_diary.csv.gz``
  (76,209 reports, 2004-01 to 2009-12; source and licence in ``data/README.md``), read by
  :func:`~.warlogs.load_war_logs` through the supplement E.2 preprocessing, for every
  Afghanistan item of ``reproduce foulds2016 --full``: F5 (Supp. Fig. 5, 3 states), F6 (Fig. 6
  and Supp. Fig. 2), F7 (Fig. 7 and Supp. Fig. 6, part ``ops_states``;
  scored without true states, :mod:`.ops_states`) and F8 (the 10-state occupancy).
* **Iraq**: no public copy of the Iraq logs is available here, so the Iraq items stay on
  synthetic logs (:func:`~.hmm.synthetic_dataset`, the same seed streams as before).
* ``--quick`` keeps both data sets synthetic (the logs of :data:`~.hmm.QUICK`): it is the
  pipeline's smoke test, whose synthetic truth lets it score the states it finds. The diary
  would make it slower, not faster: as many reports as the quick Afghanistan logs (about
  76,000) but 189 feature values against 79, about twice the cost per fit
  (``benchmarks/foulds2016_diary_cost.py``).

:func:`provenance` says, per data set label, which data a table came from; every sidecar of
the HMM study carries it (``data`` in the sidecar's ``args``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...datasets.uci import find_data_file
from ...run.runner import root_sequence, write_results
from .warlogs import WarLogCounts, load_war_logs, preprocessing_counts

__all__ = [
    "DIARY_FILE",
    "DIARY_LABEL",
    "diary_path",
    "load_diary",
    "file_sha256",
    "study_logs",
    "provenance",
    "PREPROCESSING_NAME",
    "write_diary_preprocessing",
]

#: the shipped Afghan War Diary (data/README.md: source, licence, sha256)
DIARY_FILE = "afg_war_diary.csv.gz"
#: the file name (``.csv`` + JSON sidecar) of the diary's preprocessing counts
PREPROCESSING_NAME = "foulds2016_warlogs_afghanistan_preprocessing"
#: the data set label of the real diary in tables, figures and sidecars (the label the HMM study
#: gives a real file: its country)
DIARY_LABEL = "afghanistan"


def diary_path(path: str | os.PathLike | None = None) -> Path:
    """The Afghan War Diary: ``path`` itself (a file or a folder holding
    :data:`DIARY_FILE`), else ``$PYSTANPRIVACY_DATA/afg_war_diary.csv.gz``, else the shipped
    ``data/afg_war_diary.csv.gz`` (:func:`~pystanprivacy.datasets.uci.find_data_file`).

    Raises
    ------
    FileNotFoundError
        Naming the file and every place looked.
    """
    return find_data_file(DIARY_FILE, path)


@functools.cache
def _load(path: str, size: int, mtime_ns: int) -> WarLogCounts:
    return load_war_logs(path)


def load_diary(path: str | os.PathLike | None = None) -> WarLogCounts:
    """The diary (:func:`diary_path`) preprocessed as supplement E.2 says
    (:func:`~.warlogs.load_war_logs`: 5 regions x 72 months, 75,907 reports). Read once per
    process and file version; treat the result as read-only."""
    file = diary_path(path).resolve()
    stat = file.stat()
    return _load(str(file), stat.st_size, stat.st_mtime_ns)


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 of a file's bytes (the compressed bytes for the ``.csv.gz``)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def study_logs(
    size: Mapping[str, Any],
    seed: int,
    *,
    real: bool,
    heldout: bool = False,
    data_dir: str | os.PathLike | None = None,
    reuse: Mapping[str, tuple[WarLogCounts, np.ndarray | None]] | None = None,
) -> dict[str, tuple[WarLogCounts, np.ndarray | None]]:
    """The logs of the case study's states items (F5, F7, F8), or with ``heldout=True`` those of
    its held-out panels (F6), by data set label.

    Parameters
    ----------
    size : mapping
        :data:`~.hmm.QUICK` or :data:`~.hmm.FULL` (``datasets``, ``heldout_datasets``,
        ``heldout_months``).
    seed : int
        The study's root seed (the synthetic logs' seed streams ``foulds2016_hmm/data/<kind>``).
    real : bool
        ``True``: the Afghanistan logs are the diary (label ``"afghanistan"``, truth ``None``);
        ``False``: synthetic (label ``"synthetic afghanistan"``). Iraq is synthetic either way.
    heldout : bool
        The held-out panels' data sets (``size["heldout_datasets"]``, synthetic ones over
        ``size["heldout_months"]`` months) instead of the states items' (``size["datasets"]``).
    data_dir : path, optional
        Where to find the diary (:func:`diary_path`).
    reuse : mapping, optional
        Logs already made (the states items'), taken as they are where the held-out panels
        want the same logs (same label, same number of months) instead of generated again.

    Returns
    -------
    dict
        label -> (counts, true states or ``None``), in the order of ``size``'s data sets (the
        order fixes the tasks' indices, hence their seeds).
    """
    from . import hmm

    out: dict[str, tuple[WarLogCounts, np.ndarray | None]] = {}
    kinds = size["heldout_datasets"] if heldout else size["datasets"]
    for kind in kinds:
        if kind == "afghanistan" and real:
            out[DIARY_LABEL] = (load_diary(data_dir), None)
            continue
        kwargs = dict(size["datasets"].get(kind, {}))
        stream = f"{hmm.NAME}/data/{kind}"
        if heldout and size["heldout_months"] != kwargs.get("n_months", 72):
            kwargs["n_months"] = size["heldout_months"]
            stream += "/heldout"
        elif reuse is not None and f"synthetic {kind}" in reuse:
            out[f"synthetic {kind}"] = reuse[f"synthetic {kind}"]
            continue
        rng = np.random.default_rng(root_sequence(seed, stream))
        out[f"synthetic {kind}"] = hmm.synthetic_dataset(kind, seed=rng, **kwargs)
    return out


def provenance(
    labels: list[str] | tuple[str, ...], *, data_path: str | os.PathLike | None = None, seed: int | None = None
) -> dict[str, dict[str, Any]]:
    """Per data set label, where its logs came from, for the sidecars: ``{"data": "real",
    "file": <name>, "sha256": <of the file's bytes>}`` for a real file (the diary, or
    ``data_path`` given to ``reproduce --data``), ``{"data": "synthetic", "generator": ...,
    "seed": ...}`` for synthetic logs."""
    out: dict[str, dict[str, Any]] = {}
    for label in labels:
        if label.startswith("synthetic "):
            out[label] = {
                "data": "synthetic",
                "generator": f"pystanprivacy.experiments.foulds2016.warlogs.synthetic_war_logs({label.split()[-1]!r})",
                "seed": seed,
                "why": "no public copy of these logs is available here" if "iraq" in label else "--quick",
            }
        else:
            file = Path(data_path) if data_path is not None else diary_path()
            out[label] = {"data": "real", "file": file.name, "sha256": file_sha256(file)}
    return out


def write_diary_preprocessing(out_dir: str | os.PathLike, *, seed: int = 0, quick: bool = False) -> pd.DataFrame | None:
    """Write the diary's preprocessing counts against the paper's
    (:func:`~.warlogs.preprocessing_counts`) as ``<out_dir>/foulds2016_warlogs_afghanistan_
    preprocessing.csv`` with its sidecar (the file's name and sha256), and return the table.
    Part of ``reproduce foulds2016`` (:func:`.hmm.reproduce`). A missing diary is an error with
    ``quick=False`` (the full study needs it) and a warning with ``quick=True`` (``None``)."""
    try:
        file = diary_path()
    except FileNotFoundError:
        if not quick:
            raise
        warnings.warn(f"{DIARY_FILE} not found: its preprocessing counts are not written", stacklevel=2)
        return None
    table = preprocessing_counts(file)
    args = {
        "data": provenance([DIARY_LABEL])[DIARY_LABEL],
        "function": "warlogs.preprocessing_counts",
        "seed": seed,
        "quick": quick,
    }
    write_results(out_dir, PREPROCESSING_NAME, table, args)
    return table
