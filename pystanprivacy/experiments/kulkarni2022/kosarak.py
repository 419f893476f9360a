"""Kosarak click-stream data (Kulkarni et al. 2022, Sec. 4.1 and Figure 2): a loader for
the public file and a synthetic generator of the same shape.

The Kosarak file (``kosarak.dat``, ~990K sessions over ~41K pages of a Hungarian news
portal) has one line per session: the ids of the pages clicked, separated by spaces. It
is not shipped and never downloaded: pass its path (or a folder holding it), or put it in
the folder named by ``$PYSTANPRIVACY_DATA``. Get it from the FIMI repository,
http://fimi.uantwerpen.be/data/kosarak.dat (also in the SPMF data sets).

:func:`histogram_records` turns sessions into the paper's histogram data: "11K records of
randomly sampled 10 items from the top-10K most frequent items" (Sec. 4.1). Our reading:
draw d items uniformly from the ``top`` most frequent; every session that clicked at least
one of them is a record whose category is one of those items (uniformly, if several);
keep ``n_records`` of them at random.

References
----------
.. [1] A. R. Benson, R. Kumar and A. Tomkins (2018), "A discrete choice model for subset
   selection", WSDM (the Kosarak version the paper cites).
.. [2] Frequent Itemset Mining Dataset Repository, http://fimi.uantwerpen.be/data/.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..._validation import SeedLike, check_int, check_positive, check_random_state

__all__ = ["KOSARAK_FILE", "KOSARAK_URL", "find_kosarak", "load_kosarak", "synthetic_clickstream",
           "histogram_records", "write_sessions"]

KOSARAK_FILE = "kosarak.dat"
KOSARAK_URL = "http://fimi.uantwerpen.be/data/kosarak.dat"
DATA_ENV = "PYSTANPRIVACY_DATA"


def find_kosarak(path: str | os.PathLike | None = None) -> Path:
    """The Kosarak file: ``path`` if it is a file, ``path/kosarak.dat`` if a folder, else
    ``$PYSTANPRIVACY_DATA/kosarak.dat``. ``FileNotFoundError`` says where it looked and
    where to get the file (it is never downloaded)."""
    candidates: list[Path] = []
    if path is not None:
        p = Path(path)
        candidates.append(p if p.is_file() else p / KOSARAK_FILE)
    elif os.environ.get(DATA_ENV):
        candidates.append(Path(os.environ[DATA_ENV]) / KOSARAK_FILE)
    for c in candidates:
        if c.is_file():
            return c
    looked = ", ".join(str(c) for c in candidates) or f"nowhere (no path given and ${DATA_ENV} is not set)"
    raise FileNotFoundError(
        f"Kosarak data file {KOSARAK_FILE!r} not found; looked in: {looked}. Download it from "
        f"{KOSARAK_URL} and pass its path (or its folder), or set ${DATA_ENV} to its folder. "
        "It is never downloaded automatically."
    )


def load_kosarak(path: str | os.PathLike | None = None, *, max_sessions: int | None = None) -> list[np.ndarray]:
    """Read Kosarak sessions: one int64 array of item ids per non-empty line.

    Parameters
    ----------
    path : str or path-like, optional
        The file or a folder holding ``kosarak.dat`` (default ``$PYSTANPRIVACY_DATA``).
    max_sessions : int, optional
        Read only the first ``max_sessions`` sessions.

    Raises
    ------
    FileNotFoundError
        When the file is missing (see :func:`find_kosarak`).
    ValueError
        For a line with something other than non-negative integer ids (line number given).
    """
    file = find_kosarak(path)
    limit = None if max_sessions is None else check_int(max_sessions, "max_sessions", minimum=1)
    sessions: list[np.ndarray] = []
    with open(file, encoding="ascii", errors="strict") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if not all(p.isdigit() for p in parts):
                raise ValueError(f"{file}: line {lineno} is not a space-separated list of non-negative item ids")
            sessions.append(np.array([int(p) for p in parts], dtype=np.int64))
            if limit is not None and len(sessions) >= limit:
                break
    if not sessions:
        raise ValueError(f"{file} holds no sessions")
    return sessions


def write_sessions(sessions: list[np.ndarray], path: str | os.PathLike) -> Path:
    """Write sessions in the Kosarak format (one line per session, ids separated by spaces)."""
    path = Path(path)
    with open(path, "w", encoding="ascii") as fh:
        for s in sessions:
            fh.write(" ".join(str(int(v)) for v in s) + "\n")
    return path


def synthetic_clickstream(n_sessions: int = 100_000, n_items: int = 41_270, *, zipf_exponent: float = 1.1,
                          mean_length: float = 8.1, seed: SeedLike = None) -> list[np.ndarray]:
    """Synthetic click-stream with Kosarak's shape: Zipf-distributed page popularity and
    geometric session lengths (Kosarak: ~990K sessions, ~41K pages, ~8.1 clicks per
    session). Pages within a session are distinct; ids are 1-based like Kosarak's.

    Returns a list of int64 arrays (one per session).
    """
    n_sessions = check_int(n_sessions, "n_sessions", minimum=1)
    n_items = check_int(n_items, "n_items", minimum=2)
    a = check_positive(zipf_exponent, "zipf_exponent")
    mean_length = check_positive(mean_length, "mean_length")
    if mean_length < 1:
        raise ValueError(f"mean_length must be >= 1, got {mean_length!r}")
    rng = check_random_state(seed)
    weights = 1.0 / np.arange(1, n_items + 1) ** a
    cdf = np.cumsum(weights / weights.sum())
    ids = rng.permutation(n_items) + 1            # popularity rank -> page id
    lengths = rng.geometric(1.0 / mean_length, size=n_sessions)
    clicks = ids[np.minimum(np.searchsorted(cdf, rng.random(lengths.sum())), n_items - 1)]
    out = np.split(clicks, np.cumsum(lengths)[:-1])
    return [np.unique(s) for s in out]


def histogram_records(sessions: list[np.ndarray], *, d: int = 10, n_records: int = 11_000, top: int = 10_000,
                      seed: SeedLike = None) -> tuple[np.ndarray, np.ndarray]:
    """Categorical records for the histogram experiment (Sec. 4.1, see module notes).

    Returns
    -------
    categories : ndarray of int64, shape (n,), values in {0, …, d−1}
        n = min(n_records, number of sessions that clicked one of the chosen items).
    items : ndarray of int64, shape (d,)
        The chosen item ids (category j is ``items[j]``).
    """
    d = check_int(d, "d", minimum=2)
    n_records = check_int(n_records, "n_records", minimum=1)
    top = check_int(top, "top", minimum=d)
    if not isinstance(sessions, (list, tuple)) or not sessions:
        raise ValueError("sessions must be a non-empty list of item-id arrays")
    rng = check_random_state(seed)
    lengths = np.fromiter((len(s) for s in sessions), dtype=np.int64, count=len(sessions))
    flat = np.concatenate(sessions).astype(np.int64)
    owner = np.repeat(np.arange(len(sessions)), lengths)
    uniq, counts = np.unique(flat, return_counts=True)
    popular = uniq[np.argsort(-counts, kind="stable")[: min(top, uniq.size)]]
    if popular.size < d:
        raise ValueError(f"the sessions hold only {popular.size} distinct items, fewer than d={d}")
    items = rng.choice(popular, size=d, replace=False)
    hit = np.isin(flat, items)
    hit_owner, hit_item = owner[hit], flat[hit]
    # one uniformly chosen hit per session: shuffle the hits, keep the first per session
    perm = rng.permutation(hit_owner.size)
    sess, first = np.unique(hit_owner[perm], return_index=True)
    chosen_items = hit_item[perm][first]
    cat = np.searchsorted(np.sort(items), chosen_items)
    order = np.argsort(items)
    categories = order[cat]                       # index into ``items``
    if categories.size > n_records:
        categories = categories[rng.choice(categories.size, size=n_records, replace=False)]
    else:
        categories = categories[rng.permutation(categories.size)]
    return categories.astype(np.int64), items.astype(np.int64)
