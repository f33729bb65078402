"""A dask.distributed cluster of worker processes on this machine, as the
sharded solve's tests use it (``pytest.importorskip("distributed")`` first)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import distributed


@contextmanager
def worker_processes(n_workers: int = 2) -> Iterator[distributed.Client]:
    """A client of a fresh ``LocalCluster`` of ``n_workers`` processes, one
    thread each (as on a cluster: the shards' values cross between
    processes), closed on leaving."""
    with (
        distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # (8787 may be another run's)
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
