"""``babytris solve --scheduler ADDRESS``: the solve with its boards sharded
over a dask.distributed cluster (:mod:`babytris.modes.distributed`)."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from .options import conflicts, game_rules

__all__ = ["sharded_solution"]

#: ``--scheduler local:N`` starts a cluster of N worker processes on this machine.
LOCAL = "local:"


def sharded_solution(args: argparse.Namespace) -> tuple[Any, dict]:
    """Solve what ``babytris solve`` was asked on the cluster at ``args.scheduler``.

    Returns:
        ``(solution, record)``: the :class:`~babytris.Solution` and a dict of
        what the sharding cost (shards, split, sweeps, medians of bytes and
        seconds per sweep, the share of moves at home).
    """
    conflicts(
        args,
        {"jobs": "--jobs", "accelerate": "--accelerate", "ties": "--ties", "tie_seed": "--tie-seed"},
        "--scheduler",
        "the sharded solve runs plain value iteration, one thread per shard, its ties broken by 'first'",
    )
    import numpy as np
    from distributed import Client, LocalCluster  # (without it: the CLI names the extra, exit 4)

    from ..modes.distributed import solve_sharded

    if args.mode == "lean":
        raise ValueError("--scheduler: the sharded solve stores each shard's move table; not with --mode lean")
    if args.method not in (None, "vi"):
        raise ValueError(f"--method: the sharded solve runs value iteration (vi), got {args.method!r}")
    rules = game_rules(args)
    address = args.scheduler
    if address.startswith(LOCAL):
        workers = address[len(LOCAL) :]
        if not workers.isdigit() or not 1 <= int(workers) <= 64:
            raise ValueError(f"--scheduler: local:N takes N workers in [1, 64], got {address!r}")
        # (its scheduler's and nannies' log lines about a lost worker would precede the CLI's one line)
        cluster = LocalCluster(
            n_workers=int(workers), threads_per_worker=1, dashboard_address=None, silence_logs=logging.CRITICAL
        )
        client = Client(cluster)
    else:
        cluster, client = None, Client(address, timeout="10s")
    try:  # (a lost worker: babytris.modes.distributed.LostWorkerError, exit 5)
        result = solve_sharded(
            rules, client, discount=args.discount, tol=args.tol, max_iter=args.max_iter, opponent=args.opponent
        )
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    record = {
        "scheduler": address,
        "shards": result.n_shards,
        "split": result.split,
        "boards_per_shard": result.boards_per_shard.tolist(),
        "moves_at_home": result.moves_at_home,
        "sweeps": len(result.sweep_seconds),
        "bytes_per_sweep": float(np.median(result.sweep_bytes)) if len(result.sweep_bytes) else 0.0,
        "seconds_per_sweep": float(np.median(result.sweep_seconds)) if len(result.sweep_seconds) else 0.0,
        "seconds": result.seconds,
    }
    return result.solution, record
