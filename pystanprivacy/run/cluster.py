"""Dask distributed executors for the runner (optional extra ``pystanprivacy[scale]``).

:func:`connect` gives a ``dask.distributed.Client`` -- to a running scheduler
(``"tcp://host:8786"``) or to a local cluster of single-threaded worker processes
(``"local"``) -- that :func:`pystanprivacy.run.runner.run_context` hands to every experiment::

    from pystanprivacy import cluster, runner
    from pystanprivacy.experiments import bernstein2018

    with cluster.connect("local", workers=2) as client, runner.run_context(executor=client):
        bernstein2018.reproduce("results/bernstein2018", workers=cluster.total_threads(client))

The same tasks and the same per-task seeds run as on one process or a local pool, so the
tables are the same. Every worker compiles a Stan model at most once: the compiled-model
cache (``$PYSTANPRIVACY_CACHE``, default ``~/.cache/pystanprivacy``) is guarded by a file
lock per model, so workers sharing a cache wait for one compile and then load it, and
workers on other machines compile into their own cache. Each fit runs in its own private
temporary folder on the worker; only the result table comes back.

Workers must be able to start processes (the pystan backend runs every fit in a process
pool of its own): Dask's worker processes are *daemonic* by default, which forbids that.
And Dask's statistical profiler, on by default, holds the frames of running tasks, which
makes pystan's parser of the draws (simdjson) fail at random on large fits.
:func:`connect` starts local workers with ``distributed.worker.daemon: False`` and
``distributed.worker.profile.enabled: False``; for a cluster of your own, start the workers
with ``DASK_DISTRIBUTED__WORKER__DAEMON=False DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False``
(checked when connecting). Workers need the same pystanprivacy version as the client
(checked).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
from collections.abc import Iterator
from typing import Any

__all__ = ["connect", "total_threads", "import_distributed"]

_INSTALL_HINT = "pip install 'pystanprivacy[scale]'"


def import_distributed() -> Any:
    """The ``distributed`` module; ``ImportError`` naming the ``[scale]`` extra when absent."""
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            f"running on a Dask cluster needs dask.distributed, which is not installed ({exc}); "
            f"install it with: {_INSTALL_HINT}"
        ) from exc
    return distributed


def _worker_info() -> dict[str, Any]:
    """Run on each worker: can it start processes, which pystanprivacy does it have, and
    which host with how many CPUs is it on."""
    import os
    import socket

    import dask

    import pystanprivacy

    return {
        "daemon": bool(multiprocessing.current_process().daemon),
        "version": getattr(pystanprivacy, "__version__", None),
        "host": socket.gethostname(),
        "cpus": os.cpu_count() or 1,
        "profile": bool(dask.config.get("distributed.worker.profile.enabled", True)),
    }


def chain_cap(info: dict[str, dict[str, Any]], nthreads: dict[str, int]) -> int:
    """Chains a fit may run at once on any worker: on each host, its CPUs divided among the
    task slots (worker threads) of the workers there; the smallest share over the hosts, at
    least 1. ``info`` is :func:`_worker_info` per worker address, ``nthreads`` the threads
    per worker address."""
    from .runner import worker_chain_cap

    hosts: dict[str, list[int]] = {}
    for address, item in info.items():
        cpus_slots = hosts.setdefault(item["host"], [int(item["cpus"]), 0])
        cpus_slots[1] += int(nthreads.get(address, 1))
    return min(worker_chain_cap(cpus, slots) for cpus, slots in hosts.values())


def _check_workers(client: Any) -> dict[str, dict[str, Any]]:
    import pystanprivacy

    info = client.run(_worker_info)
    if not info:
        raise RuntimeError(f"the Dask cluster at {client.scheduler.address} has no workers")
    daemonic = sorted(w for w, i in info.items() if i["daemon"])
    if daemonic:
        raise RuntimeError(
            f"{len(daemonic)} Dask worker(s) run as daemonic processes (e.g. {daemonic[0]}), which cannot start "
            "the processes a Stan fit needs; start the workers with DASK_DISTRIBUTED__WORKER__DAEMON=False "
            "(or `dask worker --no-nanny`)"
        )
    profiling = sorted(w for w, i in info.items() if i.get("profile"))
    if profiling:
        # The statistical profiler holds the frames of running tasks; pystan's draw parser
        # (simdjson) then fails at random on large fits ("Tried to re-use a parser while
        # simdjson.Object ... still exist").
        raise RuntimeError(
            f"{len(profiling)} Dask worker(s) run Dask's statistical profiler (e.g. {profiling[0]}), which makes "
            "pystan's parsing of the draws fail at random; start the workers with "
            "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False"
        )
    mine = getattr(pystanprivacy, "__version__", None)
    other = sorted({str(i["version"]) for i in info.values() if i["version"] != mine})
    if other:
        raise RuntimeError(
            f"Dask workers have pystanprivacy {', '.join(other)} but this client has {mine}; "
            "install the same version on every worker"
        )
    return info


def total_threads(client: Any) -> int:
    """Number of task slots (worker threads) of the cluster behind ``client``."""
    return max(1, int(sum(client.nthreads().values())))


@contextlib.contextmanager
def connect(
    scheduler: str, *, workers: int | None = None, parallel_chains: int | None = None, quiet: bool = True
) -> Iterator[Any]:
    """A ``dask.distributed.Client`` for the runner, closed on exit.

    Parameters
    ----------
    scheduler:
        ``"local"``: start a :class:`distributed.LocalCluster` here with ``workers``
        single-threaded worker processes (no memory limit: a Stan compile needs ~1.6 GB;
        no dashboard), stopped on exit. Otherwise the address of a running scheduler,
        e.g. ``"tcp://10.0.0.5:8786"`` (``workers`` must then be ``None``: the cluster has
        the workers it has).
    workers:
        Number of local worker processes (``"local"`` only; default 1).
    parallel_chains:
        How many chains of a fit each worker runs at once. Default: each host's CPUs
        divided among the task slots of its workers (at least 1; the smallest share over the
        hosts), so that the workers of a node never run more chain processes than it has
        CPUs -- unless a worker has ``$PYSTANPRIVACY_PARALLEL_CHAINS`` set, which then stands.
        A value given here overrides both. The draws do not depend on it.
    quiet:
        Only warnings and errors from Dask's own loggers.
    """
    distributed = import_distributed()
    import dask

    from ..sampling.backends.base import check_chain_cap
    from ._dask_plugin import StanWorkerPlugin
    from .runner import _check_workers as check_count

    check_chain_cap(parallel_chains, "parallel_chains")
    if not isinstance(scheduler, str) or not scheduler:
        raise TypeError(
            f"scheduler must be 'local' or a scheduler address such as 'tcp://host:8786', got {scheduler!r}"
        )
    with contextlib.ExitStack() as stack:
        if scheduler == "local":
            n = 1 if workers is None else check_count(workers)
            stack.enter_context(
                dask.config.set({"distributed.worker.daemon": False, "distributed.worker.profile.enabled": False})
            )
            cluster = stack.enter_context(
                distributed.LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,
                    processes=True,
                    memory_limit=0,
                    dashboard_address=None,
                    silence_logs=logging.ERROR if quiet else logging.WARNING,
                )
            )
            client = stack.enter_context(distributed.Client(cluster))
        else:
            if workers is not None:
                raise ValueError(
                    f"workers={workers!r} is only for scheduler='local'; a running cluster at "
                    f"{scheduler!r} has the workers it was started with"
                )
            if "://" not in scheduler and ":" not in scheduler:
                raise ValueError(
                    f"scheduler must be 'local' or an address such as 'tcp://host:8786', got {scheduler!r}"
                )
            try:
                client = stack.enter_context(distributed.Client(scheduler, timeout="20s"))
            except OSError as exc:
                raise OSError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from exc
        info = _check_workers(client)
        if parallel_chains is not None:
            plugin = StanWorkerPlugin(parallel_chains, override_env=True)
        else:
            plugin = StanWorkerPlugin(chain_cap(info, client.nthreads()))
        client.register_plugin(plugin, name="pystanprivacy-stan")
        yield client
