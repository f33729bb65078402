"""The sharded solve on a local dask.distributed cluster against one process
(issue 49, part 5): 4x7 with 1, 2 and 4 worker processes (:data:`WORKERS`)
and the single-process default (``babytris.solve``), in the same run.

Targets (issue 49): 1 worker at most :data:`ONE_WORKER` times the single
process's time, 2 workers at most :data:`TWO_WORKERS`; 4 workers have none
(on this 2-core machine they share its cores two to one: their row says what
more shards cost, not what a cluster of 4 machines gains).  Each sharded run keeps
its result in the shards (nothing gathered, nothing written: the live shards
answer lookups, as the single process's Solution does; writing the shards'
files is timed apart, ``save``) and records per round the bytes
the shards sent each other, the greedy and evaluation sweeps, and the
seconds, with each phase's seconds; the test prints a COST table (McSherry
et al.: how many workers it takes to beat one good process), one thread and
every core for the single process.  The 4x8 lean shards over 4 workers
(the issue's memory targets) are not run here: this machine has 2 cores
shared with other work.  Needs ``dask[distributed]``; skipped without it."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

import babytris

distributed = pytest.importorskip("distributed", reason="dask.distributed not installed (pip install '.[dask]')")
from babytris.modes.sharded.distributed import solve_sharded  # noqa: E402

#: Issue 49's targets: the sharded solve's time over the single process's, by workers.
ONE_WORKER, TWO_WORKERS = 1.3, 1.5
TARGETS = {1: ONE_WORKER, 2: TWO_WORKERS}
#: The COST table's rows of worker processes.
WORKERS = (1, 2, 4)


def _sharded(rules: babytris.Rules, workers: int, out) -> tuple[float, dict]:
    """One sharded solve on a fresh cluster of ``workers`` processes: its wall
    time (the cluster's start and the shards' files left out) and what it
    recorded, with the seconds the files then take to write to ``out``."""
    with (
        distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            memory_limit=0,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        started = time.perf_counter()
        result = solve_sharded(rules, client)
        seconds = time.perf_counter() - started
        start_value = result.shards.start_value
        started = time.perf_counter()
        saving = [actor.save(str(out / f"shard-{k}.npz")) for k, actor in enumerate(result.shards._actors)]
        [done.result() for done in saving]
        result.seconds["save"] = time.perf_counter() - started
    record = dict(
        seconds=seconds,
        phases=result.seconds,
        rounds=len(result.residuals),
        boards_per_shard=result.boards_per_shard.tolist(),
        moves_at_home=result.moves_at_home,
        search_rounds=result.search_rounds,
        search_bytes=result.search_bytes,
        round_seconds=result.round_seconds.tolist(),
        round_bytes=result.round_bytes.tolist(),
        round_greedy=result.round_greedy.tolist(),
        round_evaluations=result.round_evaluations.tolist(),
        residual=float(result.residuals[-1]),
        start_value=start_value,
    )
    return seconds, record


@pytest.mark.slow
def test_sharded_4x7_against_one_process(benchmark, tmp_path):
    rules = babytris.Rules(width=4, height=7)
    loads = {"start": os.getloadavg()[0]}  # (the 1-minute load average as each row ends: the machine is shared)
    started = time.perf_counter()
    plain = babytris.solve(rules)
    every_core = time.perf_counter() - started
    loads["every core"] = os.getloadavg()[0]
    started = time.perf_counter()
    babytris.solve(rules, n_jobs=1)
    one_thread = time.perf_counter() - started
    loads["one thread"] = os.getloadavg()[0]
    runs = {}
    for workers in WORKERS:
        runs[workers] = _sharded(rules, workers, tmp_path)
        loads[f"{workers} worker{'s' if workers > 1 else ''}"] = os.getloadavg()[0]
    benchmark.group = "sharded solve against one process, 4x7"
    benchmark.extra_info.update(
        size="4x7",
        one_process_seconds=every_core,
        one_thread_seconds=one_thread,
        one_process_sweeps=int(plain.iterations + plain.evaluation_sweeps.sum()),
        sharded={str(w): record for w, (_, record) in runs.items()},
        load_average=loads,
    )
    benchmark.pedantic(lambda: None, rounds=1)
    print("\nCOST, 4x7 (seconds; ratio to one process, every core):")
    print(f"  one process, one thread   {one_thread:8.1f}  {one_thread / every_core:5.2f}x")
    print(f"  one process, every core   {every_core:8.1f}  1.00x")
    for workers, (seconds, record) in runs.items():
        phases = ", ".join(f"{k} {v:.1f}" for k, v in record["phases"].items())
        print(
            f"  {workers} worker{'s' if workers > 1 else ' '}                 {seconds:8.1f}  "
            f"{seconds / every_core:5.2f}x  ({phases}; {record['rounds']} rounds, "
            f"{sum(record['round_greedy'])} greedy and {sum(record['round_evaluations'])} evaluation sweeps, "
            f"{np.median(record['round_bytes']) / 2**20:.2f} MiB a round)"
        )
        print("    per round:", json.dumps({k: record[k] for k in ("round_seconds", "round_bytes", "round_greedy")}))
    print("  load average (1 minute) as each row ended:", ", ".join(f"{k} {v:.1f}" for k, v in loads.items()))
    for _, record in runs.values():
        assert record["start_value"] == pytest.approx(plain.start_value, abs=1e-7)
    missed = {
        w: seconds / every_core
        for w, (seconds, _) in runs.items()
        if w in TARGETS and seconds / every_core > TARGETS[w]
    }
    assert not missed, f"over the targets {TARGETS}: {missed} (see the COST table above)"
