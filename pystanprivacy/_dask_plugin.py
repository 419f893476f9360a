"""The Dask worker plugin of :mod:`pystanprivacy.cluster` (imports ``distributed``)."""
from __future__ import annotations

from distributed.diagnostics.plugin import WorkerPlugin

from .runner import _init_worker, _reap_children


class StanWorkerPlugin(WorkerPlugin):
    """Stops the worker's own child processes (httpstan's per-fit process pool) when the
    worker closes, so that it exits at once instead of being killed by its nanny after a
    timeout and leaving orphaned processes behind."""

    def setup(self, worker: object) -> None:
        _init_worker()  # also at interpreter exit, if teardown is skipped

    def teardown(self, worker: object) -> None:
        _reap_children()
