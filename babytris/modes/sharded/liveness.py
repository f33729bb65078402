"""Whether the workers of a sharded solve (:mod:`babytris.modes.sharded.distributed`)
are alive: waiting on the shards' actor calls while looking that their workers
are still in the cluster, and telling dask's errors for a lost worker from
babytris's own."""

from __future__ import annotations

from typing import Any

__all__ = ["LIVENESS_SECONDS", "all_results", "all_alive", "lost_shards", "lost_worker"]


def lost_worker(err: Exception) -> bool:
    """Whether dask raised ``err`` for a worker lost (a killed worker, a
    cancelled future, a closed connection, an actor whose worker died), not
    an error of babytris's own (a RuntimeError, a file not written), which
    must surface as it is."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker

    if isinstance(err, (KilledWorker, CancelledError)):
        return True
    if isinstance(err, OSError):  # (dask's comm errors are OSErrors; a file's are subclasses: FileNotFoundError, ...)
        return type(err) is OSError or type(err).__module__.startswith("distributed")
    return isinstance(err, RuntimeError) and ("Actor was lost" in str(err) or "Actor's worker" in str(err))


def all_results(futures: list) -> list:
    """The results of actor calls started together (they run at once on their workers)."""
    return [f.result() for f in futures]


#: Seconds between two looks at whether the shards' workers are alive, while a round runs.
LIVENESS_SECONDS = 0.5


def all_alive(client: Any, shards: list, futures: list) -> list:
    """:func:`all_results`, looking every :data:`LIVENESS_SECONDS` whether each
    shard's worker is still in the cluster: an actor call to a killed worker
    waits for dask to make the actor again, which never answers it (a shard
    sending to it waits as long).  Raises an ``OSError`` naming the shard
    whose worker is gone, or the first error a call raised, whichever
    comes first: exchanging by layer, a shard whose step failed leaves the
    others waiting for its values, so every call is looked at, not the
    first unanswered one alone."""
    results: list = [None] * len(futures)
    waiting = list(range(len(futures)))
    while waiting:
        try:
            results[waiting[0]] = futures[waiting[0]].result(timeout=LIVENESS_SECONDS)
            waiting.pop(0)
            continue
        except TimeoutError:
            pass
        for k in [k for k in waiting if futures[k].done()]:
            results[k] = futures[k].result()  # (raises the call's error)
            waiting.remove(k)
        lost = lost_shards(client, shards)
        if lost:
            raise OSError(f"the worker of shard {lost[0]} ({shards[lost[0]]._address}) is gone") from None
    return results


def lost_shards(client: Any, shards: list) -> list[int]:
    """The shards whose actor's worker has left the cluster, as the scheduler
    says now (none where it does not answer).  Not ``client.scheduler_info()``:
    it returns the client's cache where its query fails, and the client's
    periodic refresh caches no workers at all (every shard then looked lost:
    loaded runs ended with LostWorkerError, no worker gone)."""
    try:
        live = set(client.sync(client.scheduler.identity, n_workers=-1)["workers"])
    except OSError:
        return []
    return [k for k, shard in enumerate(shards) if shard._address not in live]
