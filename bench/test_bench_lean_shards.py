"""Lean shards (``solve_sharded(..., lean=True)``) on a local dask.distributed
cluster against the single-process lean solve (issue 49, part 5), in the
same run: 4x7 over 2 and 4 worker processes (recorded, no target), and 4x8
over 4 (the issue's targets: each worker's peak resident memory at most
:data:`WORKER_SHARE` of the single process's, the client's at most
:data:`CLIENT_BYTES`, the time at most :data:`TIME_RATIO` times the single
process's).

Peak memory is each process's ``VmHWM`` (Linux), its mark reset
(``/proc/self/clear_refs``) as the solve begins: the single process's in a
fresh interpreter, each worker's and the client's (this process) around the
sharded solve.  The cluster starts fresh for each run; its start is not
timed.  Needs ``dask[distributed]``; skipped without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import babytris

distributed = pytest.importorskip("distributed", reason="dask.distributed not installed (pip install '.[dask]')")
from babytris.modes.sharded.distributed import solve_sharded  # noqa: E402

#: Issue 49's targets at 4x8 over 4 workers: a worker's peak over the single lean process's,
#: the client's peak, and the time over the single lean process's.
WORKER_SHARE, CLIENT_BYTES, TIME_RATIO = 0.35, 2**30, 2.0

_SINGLE = """
import json, time, babytris
from babytris.modes.sharded.distributed import solve_sharded  # (the imports the sharded client makes, as there)
open("/proc/self/clear_refs", "w").write("5")
started = time.perf_counter()
lean = babytris.solve_lean(babytris.Rules(width=4, height={height}))
seconds = time.perf_counter() - started
peak = [int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM")][0]
print(json.dumps(dict(seconds=seconds, peak=peak, start_value=lean.start_value, n_boards=lean.n_boards,
                      greedy=lean.iterations, evaluations=lean.evaluations)))
"""


# (expressions, so that the workers run them by eval: this module is not importable there)
PEAK = "[int(line.split()[1]) * 1024 for line in open('/proc/self/status') if line.startswith('VmHWM')][0]"
RESET_PEAK = "open('/proc/self/clear_refs', 'w').write('5')"


def single_lean(height: int) -> dict:
    """The single-process lean solve of 4 x ``height``, every default, in a fresh interpreter."""
    run = subprocess.run(
        [sys.executable, "-c", _SINGLE.format(height=height)], capture_output=True, text=True, check=True
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


def lean_sharded(height: int, workers: int) -> dict:
    """One lean sharded solve of 4 x ``height`` on a fresh cluster of
    ``workers`` processes: its wall time, phases and rounds, each shard's
    boards and ghosts, each worker's and the client's peak resident bytes."""
    rules = babytris.Rules(width=4, height=height)
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
        client.run(eval, RESET_PEAK)
        eval(RESET_PEAK)
        started = time.perf_counter()
        result = solve_sharded(rules, client, lean=True)
        seconds = time.perf_counter() - started
        client_peak = eval(PEAK)
        worker_peaks = sorted(client.run(eval, PEAK).values())
        rows = [actor.marked().result() for actor in result.shards._actors]
        start_value = result.shards.start_value
    return dict(
        seconds=seconds,
        phases=result.seconds,
        rounds=len(result.residuals),
        greedy=int(result.round_greedy.sum()),
        evaluations=int(result.round_evaluations.sum()),
        boards_per_shard=result.boards_per_shard.tolist(),
        ghosts_per_shard=(np.array(rows) - result.boards_per_shard).tolist(),
        moves_at_home=result.moves_at_home,
        search_bytes=result.search_bytes,
        round_bytes_median=float(np.median(result.round_bytes)),
        round_seconds_median=float(np.median(result.round_seconds)),
        worker_peaks=worker_peaks,
        client_peak=client_peak,
        residual=float(result.residuals[-1]),
        start_value=start_value,
        load_average=os.getloadavg()[0],
    )


def _show(size: str, single: dict, runs: dict[int, dict]) -> None:
    print(
        f"\n{size}: single lean {single['seconds']:.1f} s, peak {single['peak'] / 2**30:.2f} GiB "
        f"({single['greedy']} greedy, {single['evaluations']} evaluation sweeps)"
    )
    for workers, r in runs.items():
        phases = ", ".join(f"{k} {v:.1f}" for k, v in r["phases"].items())
        print(
            f"  {workers} workers: {r['seconds']:.1f} s ({r['seconds'] / single['seconds']:.2f}x; {phases}), "
            f"{r['rounds']} rounds, {r['greedy']} greedy and {r['evaluations']} evaluation sweeps over the shards, "
            f"{r['round_bytes_median'] / 2**20:.2f} MiB and {r['round_seconds_median']:.3f} s a round (medians); "
            f"peaks: workers {[round(p / 2**30, 2) for p in r['worker_peaks']]} GiB "
            f"({max(r['worker_peaks']) / single['peak']:.2f} of the single), "
            f"client {r['client_peak'] / 2**30:.2f} GiB; "
            f"boards {r['boards_per_shard']}, ghosts {r['ghosts_per_shard']}, {r['moves_at_home']:.1%} of moves at "
            f"home; load average {r['load_average']:.1f}"
        )


@pytest.mark.slow
def test_lean_shards_4x7(benchmark):
    single = single_lean(7)
    runs = {workers: lean_sharded(7, workers) for workers in (2, 4)}
    benchmark.group = "lean shards against one lean process, 4x7"
    benchmark.extra_info.update(size="4x7", single=single, sharded={str(w): r for w, r in runs.items()})
    benchmark.pedantic(lambda: None, rounds=1)
    _show("4x7", single, runs)
    for r in runs.values():
        assert r["start_value"] == pytest.approx(single["start_value"], abs=1e-7)
        assert sum(r["boards_per_shard"]) == single["n_boards"]


@pytest.mark.slow
def test_lean_shards_4x8_over_4_workers(benchmark):
    """The issue's targets (about 20 minutes on this machine's 2 cores)."""
    single = single_lean(8)
    run = lean_sharded(8, 4)
    benchmark.group = "lean shards against one lean process, 4x8"
    benchmark.extra_info.update(size="4x8", single=single, sharded={"4": run})
    benchmark.pedantic(lambda: None, rounds=1)
    _show("4x8", single, {4: run})
    assert run["start_value"] == pytest.approx(single["start_value"], abs=1e-7)
    missed = {
        name: value
        for name, value, bound in (
            ("worker peak / single peak", max(run["worker_peaks"]) / single["peak"], WORKER_SHARE),
            ("client peak, GiB", run["client_peak"] / 2**30, CLIENT_BYTES / 2**30),
            ("time / single time", run["seconds"] / single["seconds"], TIME_RATIO),
        )
        if value > bound
    }
    assert not missed, f"over the targets: {missed}"
