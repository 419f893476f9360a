"""``Posterior.load`` checks what it reads (issue 53, item 6).

A saved posterior is a netCDF (HDF5) file written by :meth:`Posterior.save`. ``load`` must
refuse a path that is not a regular file without reading it (a FIFO must not block), give ONE
error type, :class:`PosteriorFileError`, for every file it cannot use, name the path, never
quote a value of the draws, and validate the privacy record as ``PrivacyRecord.from_dict``
does. No Stan model is compiled here: the posteriors are built from arrays.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import pystanprivacy
import pystanprivacy.models.base  # registers the record check (PrivacyRecord.from_dict)
from pystanprivacy.privacy.records import PrivacyRecord
from pystanprivacy.sampling import posterior as posterior_module
from pystanprivacy.sampling.backends.base import RawFit, SamplerSettings
from pystanprivacy.sampling.posterior import Posterior, PosteriorFileError

#: every draw of ``mu`` is this value: no message may contain it
SECRET = 987.654321
CHAINS, DRAWS = 2, 7


def _posterior(privacy) -> Posterior:
    rng = np.random.default_rng(0)
    raw = RawFit(
        variables={"mu": np.full((CHAINS, DRAWS), SECRET), "theta": rng.normal(size=(CHAINS, DRAWS, 3))},
        sampler={
            "lp__": rng.normal(size=(CHAINS, DRAWS)),
            "divergent__": (rng.random((CHAINS, DRAWS)) < 0.3) * 1.0,
            "treedepth__": rng.integers(1, 5, size=(CHAINS, DRAWS)).astype(float),
        },
    )
    post = Posterior(
        raw,
        model="test/model",
        backend="pystan",
        settings=SamplerSettings(chains=CHAINS, warmup=11, draws=DRAWS, seed=5),
        elapsed=0.1,
    )
    post.privacy = privacy
    return post


RECORD = PrivacyRecord(
    mechanism="laplace",
    epsilon=0.5,
    sensitivity=2.0,
    sensitivity_norm="l1",
    scale=4.0,
    bounds=(0.0, 1.0),
    n=40,
    details={"datasets": 1, "projection": "nonnegative"},
)


@pytest.fixture
def good(tmp_path) -> Path:
    return _posterior(RECORD.to_dict()).save(tmp_path / "good.nc")


# --------------------------------------------------------------------------- the round trip
@pytest.mark.parametrize("privacy", [RECORD.to_dict(), "non-private", None], ids=["record", "non-private", "none"])
def test_a_saved_posterior_loads_back_exactly(tmp_path, privacy):
    post = _posterior(privacy)
    back = Posterior.load(post.save(tmp_path / "p.nc"))
    assert back.privacy == privacy
    assert (back.model, back.backend, back.num_chains, back.num_draws) == ("test/model", "pystan", CHAINS, DRAWS)
    assert (back.settings.warmup, back.settings.seed) == (11, 5)
    for name in ("mu", "theta"):
        np.testing.assert_array_equal(back.draws(name, combine_chains=False), post.draws(name, combine_chains=False))
    for stat in ("lp", "diverging", "tree_depth"):
        np.testing.assert_array_equal(back.sample_stat(stat), post.sample_stat(stat))
    assert back.num_divergences == post.num_divergences > 0


def test_the_record_loads_in_its_canonical_form(tmp_path):
    # a record written with its fields in another order and without its defaults is the same record
    post = _posterior({"epsilon": 0.5, "mechanism": "laplace", "n": 40})
    back = Posterior.load(post.save(tmp_path / "p.nc"))
    assert back.privacy == PrivacyRecord(mechanism="laplace", epsilon=0.5, n=40).to_dict()


# --------------------------------------------------------------------------- corrupted files
def _edit(good: Path, tmp_path: Path, name: str, change) -> Path:
    path = tmp_path / f"{name}.nc"
    shutil.copyfile(good, path)
    with h5py.File(path, "r+") as f:
        change(f)
    return path


def _bytes(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _privacy(value):
    def change(f):
        f.attrs["privacy"] = value if isinstance(value, str) else json.dumps(value)

    return change


def _set(attr, value):
    def change(f):
        f.attrs[attr] = value

    return change


def _corpus(good: Path, tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, what the message must say): the 23 damaged or forged files."""
    data = good.read_bytes()
    forged = {**RECORD.to_dict(), "epsilon": -5.0}
    unknown = {**RECORD.to_dict(), "trust_me": True}
    return {
        "zero bytes": (_bytes(tmp_path, "empty.nc", b""), "not an HDF5/netCDF file"),
        "random bytes": (
            _bytes(tmp_path, "random.nc", np.random.default_rng(1).bytes(4096)),
            "not an HDF5/netCDF file",
        ),
        "truncated to half": (_bytes(tmp_path, "half.nc", data[: len(data) // 2]), "not a posterior file"),
        "truncated to 100 bytes": (_bytes(tmp_path, "head.nc", data[:100]), "not an HDF5/netCDF file"),
        "a JSON file": (
            _bytes(tmp_path, "release.json", json.dumps({"values": [1.0], "record": RECORD.to_dict()}).encode()),
            "not an HDF5/netCDF file",
        ),
        "HDF5 without the groups": (
            _edit(good, tmp_path, "nogroups", lambda f: [f.__delitem__(g) for g in list(f)]),
            "expected 'posterior'",
        ),
        "'posterior' is not a group": (
            _edit(
                good,
                tmp_path,
                "dataset",
                lambda f: (f.__delitem__("posterior"), f.create_dataset("posterior", data=np.zeros(3))),
            ),
            "'posterior' is not a group",
        ),
        "missing 'chains'": (
            _edit(good, tmp_path, "nochains", lambda f: f.attrs.__delitem__("chains")),
            "lack ['chains']",
        ),
        "'chains' a string": (
            _edit(good, tmp_path, "chainsstr", _set("chains", "two")),
            "'chains' must be one integer",
        ),
        "'chains' = 0": (
            _edit(good, tmp_path, "chains0", _set("chains", np.array([0]))),
            "'chains' must be an integer >= 1",
        ),
        "'model' an integer": (
            _edit(good, tmp_path, "modelint", _set("model", np.array([3]))),
            "'model' must be a non-empty string",
        ),
        "unknown root attribute": (
            _edit(good, tmp_path, "extra", _set("note", "hello")),
            "unknown root attribute(s) ['note']",
        ),
        "'privacy' not JSON": (_edit(good, tmp_path, "notjson", _privacy("{epsilon: ")), "'privacy' is not valid JSON"),
        "'privacy' a JSON list": (_edit(good, tmp_path, "list", _privacy([1, 2])), "got a JSON list"),
        "forged record: epsilon = -5": (
            _edit(good, tmp_path, "forged", _privacy(forged)),
            "invalid privacy record: epsilon",
        ),
        "record with an unknown key": (
            _edit(good, tmp_path, "unknownkey", _privacy(unknown)),
            "invalid privacy record: unknown PrivacyRecord field(s): ['trust_me']",
        ),
        "record with delta = 1": (
            _edit(good, tmp_path, "delta", _privacy({**RECORD.to_dict(), "delta": 1.0})),
            "invalid privacy record: delta",
        ),
        "unknown group (observed data)": (
            _edit(
                good,
                tmp_path,
                "observed",
                lambda f: f.create_group("observed_data").create_dataset("x", data=np.full(5, SECRET)),
            ),
            "expected 'posterior' and at most",
        ),
        "draws of strings": (
            _edit(
                good,
                tmp_path,
                "strings",
                lambda f: f["posterior"].create_dataset("names", data=np.array([[b"a"] * DRAWS] * CHAINS)),
            ),
            "variable 'names' of group 'posterior' has dtype",
        ),
        "draws of another chain count": (
            _edit(
                good,
                tmp_path,
                "shape",
                lambda f: f["posterior"].create_dataset("extra", data=np.full((CHAINS + 1, DRAWS), SECRET)),
            ),
            "variable 'extra' of group 'posterior' has shape (3, 7)",
        ),
        "unknown sampler statistic": (
            _edit(
                good,
                tmp_path,
                "stat",
                lambda f: f["sample_stats"].create_dataset("secret", data=np.full((CHAINS, DRAWS), SECRET)),
            ),
            "unknown statistic(s) ['secret']",
        ),
        "statistic of another length": (
            _edit(
                good,
                tmp_path,
                "statlen",
                lambda f: (
                    f["sample_stats"].__delitem__("lp"),
                    f["sample_stats"].create_dataset("lp", data=np.full((CHAINS, DRAWS + 1), SECRET)),
                ),
            ),
            "variable 'lp' of group 'sample_stats' has shape",
        ),
        "a group inside 'posterior'": (
            _edit(good, tmp_path, "nested", lambda f: f["posterior"].create_group("g")),
            "holds 'g', which is not a variable",
        ),
    }


def test_every_damaged_or_forged_file_raises_posterior_file_error(good, tmp_path):
    corpus = _corpus(good, tmp_path)
    assert len(corpus) >= 13
    for what, (path, says) in corpus.items():
        with pytest.raises(PosteriorFileError) as info:
            Posterior.load(path)
        message = str(info.value)
        assert str(path) in message, what
        assert says in message, f"{what}: {message}"
        assert "987.65" not in message, f"{what}: a draw value in the message"  # never a value of the draws
        err = info.value  # no reader message chained (it may quote bytes of the file)
        assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__), what
    assert issubclass(PosteriorFileError, ValueError)


def test_without_a_registered_record_check_a_record_is_refused_not_trusted(good, monkeypatch):
    monkeypatch.setattr(posterior_module, "_record_check", None)
    with pytest.raises(PosteriorFileError, match="import pystanprivacy.models"):
        Posterior.load(good)


# --------------------------------------------------------------------------- not regular files
def test_a_directory_a_device_and_a_missing_file_are_refused(tmp_path):
    for path, says in (
        (tmp_path, "is a directory"),
        (Path(os.devnull), "is a device"),
        (tmp_path / "missing.nc", "No such file"),
    ):
        with pytest.raises(PosteriorFileError, match=says) as info:
            Posterior.load(path)
        assert str(path) in str(info.value)
    with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
        Posterior.load(3)
    with pytest.raises(PosteriorFileError, match="path is empty"):  # not the working directory, Path("")
        Posterior.load("")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_at_once_and_never_blocks(tmp_path):
    """Run in a child process with a timeout: a load that blocks on the FIFO (waiting for a
    writer, as ``open`` does) fails this test after 120 s instead of hanging the suite."""
    fifo = tmp_path / "posterior.nc"
    os.mkfifo(fifo)
    code = (
        "import sys\nfrom pystanprivacy.sampling.posterior import Posterior, PosteriorFileError\n"
        "try:\n    Posterior.load(sys.argv[1])\nexcept PosteriorFileError as exc:\n    print('REFUSED', exc)\n"
    )
    root = str(Path(pystanprivacy.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("REFUSED") and "is a FIFO" in done.stdout and str(fifo) in done.stdout


def test_the_top_level_posterior_validates_records_in_a_fresh_process(tmp_path):
    # psp.Posterior (the curated import surface) registers the record check itself, so a plain
    # ``import pystanprivacy as psp; psp.Posterior.load(path)`` refuses a forged record (epsilon = -5)
    # and loads a good one, with no import of pystanprivacy.models by the caller
    good_path = _posterior(RECORD.to_dict()).save(tmp_path / "good.nc")
    forged = _edit(good_path, tmp_path, "forged", _privacy({**RECORD.to_dict(), "epsilon": -5.0}))
    code = (
        "import sys, pystanprivacy as psp\n"
        "assert 'pystanprivacy.models.base' not in sys.modules\n"
        f"print(psp.Posterior.load({str(good_path)!r}).privacy['epsilon'])\n"
        "try:\n"
        f"    psp.Posterior.load({str(forged)!r})\n"
        "except psp.sampling.posterior.PosteriorFileError as e:\n"
        "    print('refused', 'epsilon' in str(e))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0.5", "refused", "True"]
