"""What soft moves cost against hard drops (issue 15, part 2): the search for
lock positions runs for every (board, piece) in the enumeration, where a hard
drop is one loop per placement.  Enumeration and full solve of the same board
with ``moves="soft"`` and ``moves="hard"``, timed interleaved (medians of 5),
at 4x4, 4x5 and 4x6.  ``extra_info`` records the seconds, the ratio, the
boards and moves of each.  No target: the figures are in bench/README.md."""

from __future__ import annotations

import pytest
from timing import interleaved_medians

import babytris

SIZES = {"4x4": (4, 4), "4x5": (4, 5), "4x6": (4, 6)}


@pytest.mark.parametrize("job", ["enumerate", "solve"])
@pytest.mark.parametrize("size", sorted(SIZES))
def test_soft_against_hard(benchmark, size, job):
    width, height = SIZES[size]
    soft = babytris.Rules(width=width, height=height, moves="soft")
    hard = babytris.Rules(width=width, height=height)
    run = babytris.enumerate_boards if job == "enumerate" else babytris.solve
    soft_seconds, hard_seconds = interleaved_medians(lambda: run(soft), lambda: run(hard), rounds=5)
    soft_table, hard_table = babytris.enumerate_boards(soft), babytris.enumerate_boards(hard)
    benchmark.group = f"soft moves against hard drops, {job}"
    benchmark.extra_info.update(
        size=size,
        job=job,
        soft_seconds=soft_seconds,
        hard_seconds=hard_seconds,
        soft_over_hard=soft_seconds / hard_seconds,
        soft_boards=soft_table.n_boards,
        hard_boards=hard_table.n_boards,
        soft_moves=soft_table.n_moves,
        hard_moves=hard_table.n_moves,
    )
    benchmark.pedantic(run, args=(soft,), rounds=1)
