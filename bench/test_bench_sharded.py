"""The sharded solve on a local dask.distributed cluster (issue 16): time and
bytes exchanged per sweep with 1, 2 and 4 worker processes, both splits, on
4x6 and 4x7.  One run of each (a 4x7 run takes minutes); ``extra_info``
records the medians over the run's sweeps (seconds and bytes sent between
shards per sweep), the sweeps, the search's rounds and bytes, the share of
moves at home, the boards per shard and each phase's seconds.  The machine
has 2 cores: 4 workers share them, so the times show the overheads, not a
speed-up.  No target: the figures are in bench/README.md and docs/results.md.
Needs ``dask[distributed]``; skipped without it."""

from __future__ import annotations

import numpy as np
import pytest

import babytris

distributed = pytest.importorskip("distributed", reason="dask.distributed not installed (pip install '.[dask]')")
from babytris.modes.distributed import solve_sharded  # noqa: E402


@pytest.mark.parametrize("split", ["hash", "low_rows"])
@pytest.mark.parametrize("workers", [1, 2, 4])
@pytest.mark.parametrize("height", [6, 7])
def test_sharded_solve(benchmark, height, workers, split):
    rules = babytris.Rules(width=4, height=height)
    with (
        distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit=0
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        # The gathered 4x7 Solution needs about 10.8 GiB at the client's peak (distributed.gather_bytes),
        # more than the default budget of 8 GiB: refused before the sweeps since that guard came in.
        budget = 16 * 2**30 if height == 7 else babytris.DEFAULT_MAX_MEMORY
        result = benchmark.pedantic(
            solve_sharded, args=(rules, client), kwargs={"split": split, "max_memory": budget}, rounds=1
        )
    benchmark.group = f"sharded solve, 4x{height}"
    benchmark.extra_info.update(
        size=f"4x{height}",
        workers=workers,
        split=split,
        rounds=len(result.round_seconds),
        greedy_sweeps=int(result.round_greedy.sum()),
        seconds_per_round=float(np.median(result.round_seconds)),
        bytes_per_round=float(np.median(result.round_bytes)),
        search_rounds=result.search_rounds,
        search_bytes=result.search_bytes,
        moves_at_home=result.moves_at_home,
        boards_per_shard=result.boards_per_shard.tolist(),
        seconds=result.seconds,
        start_value=result.solution.start_value,
        converged=result.solution.converged,
    )
