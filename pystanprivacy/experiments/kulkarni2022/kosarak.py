"""Kosarak click-stream data (Kulkarni et al. 2022, Sec. 4.1 and Figure 2): a loader for
the FIMI file (plain or gzip-compressed) and a synthetic generator of the same shape.

The Kosarak file (``kosarak.dat``, 990,002 sessions over ~41K pages of a Hungarian news
portal) has one line per session: the ids of the pages clicked, separated by spaces.
pystanprivacy ships a **prefix** of it, ``data/kosarak_prefix.dat.gz`` (:data:`KOSARAK_PREFIX_FILE`:
the first 36,683 transactions, gzip-compressed; provenance in ``data/README.md``), which
``reproduce kulkarni2022`` reads by default. The whole file is never downloaded: pass its path
(or a folder holding ``kosarak.dat``) to use it instead; get it from the FIMI repository,
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

import gzip
import io
import os
import zlib
from pathlib import Path

import numpy as np

from ..._validation import SeedLike, check_int, check_positive, check_random_state
from ...datasets.uci import find_data_file

__all__ = ["KOSARAK_FILE", "KOSARAK_PREFIX_FILE", "KOSARAK_TRANSACTIONS", "KOSARAK_URL", "find_kosarak",
           "load_kosarak", "synthetic_clickstream", "histogram_records", "write_sessions"]

#: the whole file's name, as the FIMI repository publishes it (looked for in a folder given as ``path``)
KOSARAK_FILE = "kosarak.dat"
#: the shipped prefix (``data/``; its first 36,683 transactions), read when no path is given
KOSARAK_PREFIX_FILE = "kosarak_prefix.dat.gz"
#: the number of transactions (lines) of the whole published file
KOSARAK_TRANSACTIONS = 990_002
KOSARAK_URL = "http://fimi.uantwerpen.be/data/kosarak.dat"
DATA_ENV = "PYSTANPRIVACY_DATA"

#: the first two bytes of a gzip file (RFC 1952): how a compressed file is recognised
_GZIP_MAGIC = b"\x1f\x8b"


def find_kosarak(path: str | os.PathLike | None = None) -> Path:
    """The Kosarak file: ``path`` itself if it is a file, ``path/kosarak.dat`` if it is a folder
    (nothing else is searched when ``path`` is given); without ``path`` the shipped prefix
    :data:`KOSARAK_PREFIX_FILE`, looked for in ``$PYSTANPRIVACY_DATA`` and then the shipped
    ``data/`` (:func:`~pystanprivacy.datasets.uci.find_data_file`). ``FileNotFoundError`` says
    where it looked and where to get the file (it is never downloaded)."""
    if path is None:
        return find_data_file(KOSARAK_PREFIX_FILE)
    p = Path(path)
    candidate = p if p.is_file() else p / KOSARAK_FILE
    if candidate.is_file():
        return candidate
    raise FileNotFoundError(
        f"Kosarak data file {KOSARAK_FILE!r} not found; looked in: {candidate}. Download it from "
        f"{KOSARAK_URL} and pass its path (or its folder), or give no path to read the shipped prefix "
        f"{KOSARAK_PREFIX_FILE!r}. It is never downloaded automatically."
    )


def load_kosarak(path: str | os.PathLike | None = None, *, max_sessions: int | None = None) -> list[np.ndarray]:
    """Read Kosarak sessions: one int64 array of item ids per non-empty line.

    Parameters
    ----------
    path : str or path-like, optional
        The file (plain text or gzip-compressed, recognised by its content, not its name) or a
        folder holding ``kosarak.dat``; default: the shipped prefix :data:`KOSARAK_PREFIX_FILE`
        (see :func:`find_kosarak`).
    max_sessions : int, optional
        Read only the first ``max_sessions`` sessions.

    Raises
    ------
    FileNotFoundError
        When the file is missing (see :func:`find_kosarak`).
    ValueError
        For a line with something other than non-negative integer ids (line number given), a
        file that starts like gzip but cannot be decompressed, or a file with no session; a file
        that is not ASCII text raises ``UnicodeDecodeError`` (a ``ValueError``).
    """
    file = find_kosarak(path)
    limit = None if max_sessions is None else check_int(max_sessions, "max_sessions", minimum=1)
    with open(file, "rb") as fh:
        compressed = fh.read(2) == _GZIP_MAGIC
    sessions: list[np.ndarray] = []
    try:
        with open(file, "rb") as raw:
            binary = gzip.GzipFile(fileobj=raw) if compressed else raw
            with io.TextIOWrapper(binary, encoding="ascii", errors="strict") as fh:
                for lineno, line in enumerate(fh, start=1):
                    parts = line.split()
                    if not parts:
                        continue
                    if not all(p.isdigit() for p in parts):
                        raise ValueError(
                            f"{file}: line {lineno} is not a space-separated list of non-negative item ids"
                        )
                    sessions.append(np.array([int(p) for p in parts], dtype=np.int64))
                    if limit is not None and len(sessions) >= limit:
                        break
    except (OSError, EOFError, zlib.error) as exc:
        if not compressed:
            raise
        raise ValueError(
            f"{file} starts like a gzip file but cannot be decompressed ({type(exc).__name__})"
        ) from None
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
