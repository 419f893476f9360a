"""Two processes never compile the same model at once, and the second one finds it cached."""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path

from pystanprivacy.sampling.backends.base import Backend


class SlowFakeBackend(Backend):
    """Records when compile starts and ends; 'compiling' leaves a marker file."""

    name = "fake"

    def __init__(self, log: str):
        self.log = log

    @classmethod
    def availability(cls):
        return None

    def version_tag(self):
        return "fake-1"

    def is_compiled(self, program, key, cache_dir):
        return (Path(cache_dir) / f"{key}.done").exists()

    def compile(self, program, key, cache_dir):
        with open(self.log, "a") as fh:
            fh.write(f"start {time.monotonic()}\n")
        if not self.is_compiled(program, key, cache_dir):
            time.sleep(0.8)
            (Path(cache_dir) / f"{key}.done").write_text("compiled")
        with open(self.log, "a") as fh:
            fh.write(f"end {time.monotonic()}\n")
        return program

    def run(self, handle, data, settings, workdir):  # pragma: no cover - not used here
        raise AssertionError


def _construct(cache: str, log: str, out: str) -> None:
    import os

    os.environ["PYSTANPRIVACY_CACHE"] = cache
    from pystanprivacy.sampling.stan import StanModel

    model = StanModel("foulds2016/beta_bernoulli", backend=SlowFakeBackend(log))
    Path(out).write_text(str(model.was_cached))


def test_concurrent_constructions_are_serialised(tmp_path):
    log = tmp_path / "log.txt"
    ctx = mp.get_context("fork")
    procs = [
        ctx.Process(target=_construct, args=(str(tmp_path / "cache"), str(log), str(tmp_path / f"out{i}")))
        for i in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    events = [line.split() for line in log.read_text().splitlines()]
    kinds = [kind for kind, _ in events]
    assert kinds == ["start", "end", "start", "end"], "compiles overlapped"
    cached = sorted((tmp_path / f"out{i}").read_text() for i in range(2))
    assert cached == ["False", "True"], "exactly one process compiled; the other found it cached"
