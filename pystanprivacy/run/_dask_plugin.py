"""The Dask worker plugin of :mod:`pystanprivacy.run.cluster` (imports ``distributed``)."""

from __future__ import annotations

from distributed.diagnostics.plugin import WorkerPlugin

from .runner import _init_worker, _reap_children


class StanWorkerPlugin(WorkerPlugin):
    """Sets how many chains of a fit a worker runs at once (``chain_cap``, see
    :func:`pystanprivacy.sampling.backends.base.set_parallel_chains`; ``None``: the worker's default),
    and stops the worker's own child processes (httpstan's chain process pool) when the
    worker closes, so that it exits at once instead of being killed by its nanny after a
    timeout and leaving orphaned processes behind."""

    def __init__(self, chain_cap: int | None = None, override_env: bool = False) -> None:
        self.chain_cap = chain_cap
        self.override_env = override_env

    def setup(self, worker: object) -> None:
        _init_worker(
            self.chain_cap, self.override_env
        )  # also stops the children at interpreter exit, if teardown is skipped

    def teardown(self, worker: object) -> None:
        _reap_children()
