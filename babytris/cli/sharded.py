"""``babytris solve --scheduler ADDRESS``: the solve with its boards sharded
over a dask.distributed cluster (:mod:`babytris.modes.sharded.distributed`)."""

from __future__ import annotations

import argparse
import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..engine.resources import gib_to_bytes
from .options import conflicts, game_rules

__all__ = ["connected", "sharded_solution"]

#: ``--scheduler local:N`` starts a cluster of N worker processes on this machine.
LOCAL = "local:"


def sharded_solution(args: argparse.Namespace) -> tuple[Any, dict]:
    """Solve what ``babytris solve`` was asked on the cluster at ``args.scheduler``.

    Returns:
        ``(solution, record)``: the :class:`~babytris.Solution` and a dict of
        what the sharding cost (shards, split, rounds and sweeps, medians of
        bytes and seconds per round, the share of moves at home).
    """
    conflicts(
        args,
        {"jobs": "--jobs", "accelerate": "--accelerate", "ties": "--ties", "tie_seed": "--tie-seed"},
        "--scheduler",
        "the sharded solve runs modified policy iteration in each shard, one thread per shard, its ties broken by "
        "'first'",
    )
    import numpy as np

    from ..modes.sharded.distributed import solve_sharded

    if args.mode == "lean":
        raise ValueError(
            "--scheduler: the command gathers the sharded solve into one Solution, and lean shards gather "
            "nothing (in Python: babytris.solve_sharded(rules, client, lean=True, out=DIR), read back with "
            "babytris.load_sharded); not with --mode lean"
        )
    if args.method not in (None, "mpi"):
        raise ValueError(
            f"--method: the sharded solve runs modified policy iteration (mpi) in each shard, got {args.method!r}"
        )
    rules = game_rules(args)
    with connected(args.scheduler) as client:
        result = solve_sharded(
            rules,
            client,
            discount=args.discount,
            tol=args.tol,
            max_iter=args.max_iter,
            opponent=args.opponent,
            max_memory=gib_to_bytes(args.max_memory),
            gather=True,  # (the command prints and saves a Solution: gathered within --max-memory)
        )
    record = {
        "scheduler": args.scheduler,
        "shards": result.n_shards,
        "split": result.split,
        "boards_per_shard": result.boards_per_shard.tolist(),
        "moves_at_home": result.moves_at_home,
        "rounds": len(result.round_seconds),
        "greedy_sweeps": int(result.round_greedy.sum()),
        "evaluation_sweeps": int(result.round_evaluations.sum()),
        "bytes_per_round": float(np.median(result.round_bytes)) if len(result.round_bytes) else 0.0,
        "seconds_per_round": float(np.median(result.round_seconds)) if len(result.round_seconds) else 0.0,
        "seconds": result.seconds,
    }
    return result.solution, record


@contextmanager
def connected(address: str) -> Iterator[Any]:
    """A dask client of the cluster at ``address`` (``local:N``: N worker
    processes started here, one thread each, killed at once on Ctrl-C), closed on leaving."""
    from distributed import Client, LocalCluster  # (without it: the CLI names the extra, exit 4)

    local = address.startswith(LOCAL)
    if local and not (address[len(LOCAL) :].isdigit() and 1 <= int(address[len(LOCAL) :]) <= 64):
        raise ValueError(f"--scheduler: local:N takes N workers in [1, 64], got {address!r}")
    cluster = client = None
    try:  # (a lost worker: babytris.modes.sharded.distributed.LostWorkerError, exit 5)
        with _StopOnInterrupt(local):
            if local:
                # (its scheduler's and nannies' log lines about a lost worker would precede the CLI's one line)
                cluster = LocalCluster(
                    n_workers=int(address[len(LOCAL) :]),
                    threads_per_worker=1,
                    dashboard_address=None,
                    # (its HTTP server, dashboard or not, took port 8787 and warned where that was in use)
                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                    silence_logs=logging.CRITICAL,
                )
                client = Client(cluster)
            else:
                client = Client(address, timeout="10s")
            yield client
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


class _StopOnInterrupt:
    """Ctrl-C during a sharded solve on ``local:N``: its workers killed at once,
    in the signal's handler, then KeyboardInterrupt (the command's one line,
    exit 130).  A graceful close waited 1-2.4 s for workers busy in compiled
    loops and could leave one running.  A KeyboardInterrupt can be lost
    (Python drops one raised while a weakref callback runs: once, the solve
    ran to its end, 20 s, after a Ctrl-C 2 s in); with the workers gone the
    solve cannot go on, and what dask raises then is taken for the interrupt."""

    def __init__(self, local: bool) -> None:
        self.local, self.fired = local, False
        self.previous: Any = None  # (the handler put back on leaving)

    def __enter__(self) -> None:
        import signal
        import threading

        previous = signal.getsignal(signal.SIGINT)
        # (not where Ctrl-C is ignored, as in a background job, nor off the main thread)
        if self.local and previous is not signal.SIG_IGN and threading.current_thread() is threading.main_thread():
            self.previous = previous
            signal.signal(signal.SIGINT, self._stop)

    def _stop(self, signum: int, frame: object) -> None:
        if not self.fired:
            self.fired = True
            # (the solve's pending calls to its actors are dropped with it: their coroutines, never
            # awaited, would each print a RuntimeWarning after the command's one line)
            warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
            _stop_local_workers()
        raise KeyboardInterrupt

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        if self.fired and error is not None and not isinstance(error, KeyboardInterrupt):
            raise KeyboardInterrupt from None


def _stop_local_workers() -> None:
    """Kill the worker processes of ``local:N``: every child of this process
    but multiprocessing's resource tracker, the workers and one being spawned
    (not yet among multiprocessing's children; it would print a traceback
    once this process is gone, and hold the terminal's stderr)."""
    import atexit

    import psutil  # type: ignore[import-untyped]  # (distributed's own dependency)
    from distributed.deploy.spec import close_clusters

    # (the client's and nannies' loggers would each print a line about the workers gone)
    logging.disable(logging.CRITICAL)
    atexit.unregister(close_clusters)  # (dask would close them again at exit, and fail on one killed starting)
    for child in psutil.Process().children(recursive=True):
        try:
            if not any("resource_tracker" in part for part in child.cmdline()):
                child.kill()
        except psutil.Error:  # (gone already)
            pass
