"""What a piece bag costs against independent draws (issue 15, part 1): the
table has a row per (board, bag contents), every combination, so the sweeps
read more rows than play meets.  Enumeration and full solve of the same
board with ``randomizer="bag"`` (one and two copies of each piece) and
independent draws, timed interleaved (medians of 5), at 4x4 and 4x5.
``extra_info`` records the seconds, the ratio, the rows, the rows met in
play and the moves of each.  No target: the figures are in bench/README.md."""

from __future__ import annotations

import pytest
from timing import interleaved_medians

import babytris

SIZES = {"4x4": (4, 4), "4x5": (4, 5)}


@pytest.mark.parametrize("copies", [1, 2])
@pytest.mark.parametrize("job", ["enumerate", "solve"])
@pytest.mark.parametrize("size", sorted(SIZES))
def test_bag_against_independent_draws(benchmark, size, job, copies):
    width, height = SIZES[size]
    bag = babytris.Rules(width=width, height=height, randomizer="bag", bag_copies=copies)
    iid = babytris.Rules(width=width, height=height)
    run = babytris.enumerate_boards if job == "enumerate" else babytris.solve
    bag_seconds, iid_seconds = interleaved_medians(lambda: run(bag), lambda: run(iid), rounds=5)
    bag_table, iid_table = babytris.enumerate_boards(bag), babytris.enumerate_boards(iid)
    benchmark.group = f"a bag against independent draws, {job}"
    benchmark.extra_info.update(
        size=size,
        job=job,
        copies=copies,
        bag_seconds=bag_seconds,
        iid_seconds=iid_seconds,
        bag_over_iid=bag_seconds / iid_seconds,
        bag_rows=bag_table.n_boards,
        bag_rows_met_in_play=int(bag_table.reachable().sum()),
        iid_rows=iid_table.n_boards,
        bag_moves=bag_table.n_moves,
        iid_moves=iid_table.n_moves,
    )
    benchmark.pedantic(run, args=(bag,), rounds=1)
