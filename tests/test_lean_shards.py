"""Lean shards (``solve_sharded(..., lean=True)``) on a dask.distributed
LocalCluster of 2 worker processes: no move table, each shard's boards and
ghosts in a bitmap; the values and moves of the single-process solve."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris import Rules

distributed = pytest.importorskip("distributed", reason="dask.distributed not installed (pip install '.[dask]')")
from clusters import worker_processes  # noqa: E402

from babytris.engine.placements import engine  # noqa: E402
from babytris.engine.transitions import layers  # noqa: E402
from babytris.modes.sharded import _lean_shard  # noqa: E402
from babytris.modes.sharded.distributed import solve_sharded  # noqa: E402
from babytris.modes.sharded.lean_shard import LeanShard  # noqa: E402
from babytris.modes.sharded.owners import shard_of  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with worker_processes(2) as client:  # (as on a cluster: the ghosts' values cross between processes)
        yield client


@pytest.fixture(scope="module")
def plain():
    solved = {}

    def solve(height: int, opponent: str) -> babytris.Solution:
        if (height, opponent) not in solved:
            solved[height, opponent] = babytris.solve(Rules(width=4, height=height), tol=1e-11, opponent=opponent)
        return solved[height, opponent]

    return solve


def _same_answers(result, plain, tol=1e-9):
    """Every reachable board's states, asked of the live lean shards, have the single solve's values and moves."""
    P = plain.rules.n_pieces
    values, policy = result.shards.rows(plain.boards)
    assert np.abs(values - plain.values.reshape(-1, P)).max() <= tol
    assert np.array_equal(policy, plain.policy.reshape(-1, P))
    assert result.shards.start_value == pytest.approx(plain.start_value, abs=tol)


@pytest.mark.parametrize("opponent", ["random", "minimax"])
@pytest.mark.parametrize("n_shards", [1, 2, 3])
@pytest.mark.parametrize("split", ["low_rows", "hash"])
def test_lean_shards_equal_the_single_process_solve_4x4(client, plain, opponent, n_shards, split):
    rules = Rules(width=4, height=4)
    result = solve_sharded(rules, client, tol=1e-11, lean=True, opponent=opponent, n_shards=n_shards, split=split)
    _same_answers(result, plain(4, opponent))
    assert result.shards.converged and result.boards_per_shard.sum() == 12_978
    assert len(result.boards_per_shard) == n_shards and result.boards_per_shard.min() > 0
    if n_shards > 1:  # the ghosts' values went worker to worker every round, and some moves stay at home
        assert result.search_bytes > 0 and result.round_bytes.min() > 0
        assert 0 < result.moves_at_home < 1
    else:
        assert result.round_bytes.sum() == 0 and result.moves_at_home == 1


@pytest.mark.parametrize("opponent", ["random", "minimax"])
@pytest.mark.parametrize("n_shards", [2, 3])
def test_lean_shards_equal_the_single_process_solve_4x5(client, plain, opponent, n_shards):
    rules = Rules(width=4, height=5)
    result = solve_sharded(rules, client, tol=1e-11, lean=True, opponent=opponent, n_shards=n_shards)
    _same_answers(result, plain(5, opponent))
    assert result.boards_per_shard.sum() == 182_101
    # the game the policy plays, walked by asking the owners: the single solve's, exactly
    pieces = "solution" if opponent == "minimax" else "random"
    exact = babytris.expected_points(plain(5, opponent), opponent=pieces, n_placements=300)
    assert babytris.expected_points(result.shards, opponent=pieces, n_placements=300) == exact
    # modified policy iteration: evaluation sweeps between the greedy ones
    assert result.round_evaluations.sum() > result.round_greedy.sum() > 0
    if n_shards == 2 and opponent == "random":  # (the ghosts jump with their owners, as the table shards' do)
        assert result.round_greedy.sum() / 2 <= 2 * plain(5, opponent).iterations, result.round_greedy.sum()


def test_lean_shards_count_the_moves_and_the_table_shards_do(client):
    """The search counts each own board's moves once, and those staying at home, as the table does."""
    rules = Rules(width=4, height=5)
    lean = solve_sharded(rules, client, tol=1e-6, lean=True)
    table = solve_sharded(rules, client, tol=1e-6)
    assert np.array_equal(lean.boards_per_shard, table.boards_per_shard)
    assert lean.moves_at_home == pytest.approx(table.moves_at_home, abs=1e-12)


@pytest.mark.parametrize("split", ["low_rows", "hash"])
@pytest.mark.parametrize("size", [(4, 5), (5, 4), (3, 6)])
def test_a_shard_owns_the_boards_the_split_gives_it(split, size):
    """The compiled owner of a board is owners.shard_of's: each shard's own
    boards, out of every reachable board, are those shard_of gives it (the
    low rows' key depends on the width)."""
    rules = Rules(width=size[0], height=size[1])
    alone = LeanShard(rules, 0, 1, split)
    alone.connect([alone])
    boards = babytris.enumerate_boards(rules).boards
    assert alone.enumerate_alone() == len(boards)
    owner = shard_of(boards, 3, split, rules)
    for k in range(3):
        shard = LeanShard(rules, k, 3, split)
        kernel = _lean_shard.LeanShardSweeper(
            engine(rules),
            alone.bits,
            np.asarray(rules.line_scores, dtype=np.float64),
            np.asarray(rules.probabilities, dtype=np.float64),
            0.9,
            np.asarray(layers(rules), dtype=np.int64),
            shard.key_mask,
            shard.owners,
            3,
            k,
        )
        own, rows = kernel.boards(True)
        assert np.array_equal(own, np.sort(boards[owner == k]))
        assert np.array_equal(kernel.rows(own), rows) and kernel.n_rows == len(boards)


def test_lean_refuses_what_it_cannot_do(client):
    with pytest.raises(ValueError, match="gather: lean shards hold no move table"):
        solve_sharded(Rules(width=4, height=4), client, lean=True, gather=True)
    with pytest.raises(ValueError, match="lean: lean mode holds boards of at most 32 cells"):
        solve_sharded(Rules(width=5, height=7), client, lean=True)
    with pytest.raises(ValueError, match="lean: lean mode solves the plain game: mirror not supported"):
        solve_sharded(Rules(width=4, height=4, mirror=True), client, lean=True)
    with pytest.raises(ValueError, match="lean must be"):
        solve_sharded(Rules(width=4, height=4), client, lean="yes")


def test_lean_shards_saved_to_a_directory_are_proved_and_answer(client, plain, tmp_path):
    """``out=``: each lean shard writes its boards, states' values and moves as a table shard
    does; load_sharded proves the directory one shard at a time and answers as the single solve."""
    from babytris import load_sharded

    rules = Rules(width=4, height=5)
    result = solve_sharded(rules, client, tol=1e-11, lean=True, out=tmp_path / "lean")
    solve_sharded(rules, client, tol=1e-11, out=tmp_path / "table")
    assert sorted(p.name for p in (tmp_path / "lean").iterdir()) == ["manifest.json", "shard-0.npz", "shard-1.npz"]
    saved, theirs = load_sharded(tmp_path / "lean"), load_sharded(tmp_path / "table")
    assert saved.verified and saved.converged and saved.start_value == pytest.approx(plain(5, "random").start_value)
    for k in range(2):
        assert np.array_equal(saved._shard(k)["boards"], theirs._shard(k)["boards"])
        assert np.array_equal(saved._shard(k)["policy"], theirs._shard(k)["policy"])
        assert np.abs(saved._shard(k)["values"] - theirs._shard(k)["values"]).max() <= 1e-9
    board = int(plain(5, "random").boards[1234])
    assert saved.best_action(board, "L") == result.shards.best_action(board, "L")
    # the low_rows split's table, recomputed on loading: the shards' boards within 0.1% of even
    sizes = [len(saved._shard(k)["boards"]) for k in range(2)]
    assert sum(sizes) == 182_101 and max(sizes) <= 1.001 * 182_101 / 2
    assert all(np.all(shard_of(saved._shard(k)["boards"], 2, "low_rows", rules) == k) for k in range(2))
    # a directory of version 2 (the patterns mixed) is refused, saying why
    manifest = tmp_path / "lean" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"format_version": 3', '"format_version": 2'))
    with pytest.raises(ValueError, match=r"has babytris.sharded version 2; this babytris reads version 3 \(from"):
        load_sharded(tmp_path / "lean")


def test_a_killed_worker_has_its_lean_shard_rebuilt_from_the_checkpoint(tmp_path):
    """As the table shards' test: a worker killed after the second checkpoint; its lean shard is
    made anew from its checkpoint's bitmap and values, and the solve ends bit for bit as the calm one."""
    import os
    import signal

    from babytris import load_sharded

    rules = Rules(width=4, height=5)
    with worker_processes(2) as client:
        calm = solve_sharded(rules, client, tol=1e-11, lean=True, out=tmp_path / "calm", checkpoint_rounds=4)
        calm_start = calm.shards.start_value  # (asked before the kill: the start's owner may be the shard lost)
        pids = client.run(os.getpid)
        killed = []

        def kill_after_round_6(done, residual):
            if done >= 6 and (tmp_path / "hit" / "checkpoint-1-1.npz").exists() and not killed:
                killed.append(sorted(pids)[1])
                os.kill(pids[killed[0]], signal.SIGKILL)

        hit = solve_sharded(
            rules, client, tol=1e-11, lean=True, out=tmp_path / "hit", checkpoint_rounds=4, progress=kill_after_round_6
        )
        assert killed and killed[0] not in client.scheduler_info()["workers"]
        # the killed worker's shard was made anew on a live worker: no shard's actor is where it was
        held = {actor._address for actor in hit.shards._actors}
        assert killed[0] not in held and held <= set(client.scheduler_info()["workers"])
        assert hit.shards.start_value == calm_start
    assert np.array_equal(hit.residuals, calm.residuals) and hit.shards.converged
    a, b = load_sharded(tmp_path / "calm"), load_sharded(tmp_path / "hit")
    for k in range(2):
        for key in ("boards", "values", "policy"):
            assert np.array_equal(a._shard(k)[key], b._shard(k)[key])


def test_lean_shards_that_would_not_fit_a_worker_are_refused(client):
    """max_memory, with lean shards, bounds each worker's: the search's two bitmaps and the
    forecast boards split evenly up front, each shard's boards and ghosts once searched."""
    from babytris import MemoryLimitError
    from babytris.modes.sharded.lean_shard import lean_shard_bytes

    rules = Rules(width=4, height=6)
    bitmaps = lean_shard_bytes(rules, 0)
    assert bitmaps == 16 * 2**24 // 64  # (two bitmaps of 2**24 bits)
    with pytest.raises(MemoryLimitError, match="possible board, 4.0 MiB on a worker holding 1, more than"):
        solve_sharded(rules, client, lean=True, max_memory=bitmaps - 1)
    with pytest.raises(MemoryLimitError, match=r"worker [01] holds shard [01], 1,[0-9,]+ boards and ghosts, whose"):
        solve_sharded(rules, client, lean=True, max_memory=2 * bitmaps)
    with pytest.raises(MemoryLimitError, match=r"4x7 in lean shards: about [0-9,]+ boards \(forecast\) over 2 shards"):
        solve_sharded(Rules(width=4, height=7), client, lean=True, max_memory=2**28)
    small = Rules(width=4, height=4)
    most = 12 * 2**16 // 64 + (12 + small.n_pieces) * 12_978  # (the most a shard can hold: every board)
    assert lean_shard_bytes(small, 12_978) == most and 2 * most < 2**20  # (two shards fit the least max_memory)
    assert solve_sharded(small, client, lean=True, max_memory=2**20).shards.converged


def test_lean_shards_memory_is_summed_over_each_workers_shards():
    """Shard k runs on worker k % workers: max_memory bounds the sum of the
    shards one worker holds, not each shard alone (3 shards on 2 workers)."""
    from babytris import MemoryLimitError
    from babytris.modes.sharded.lean_shard import check_memory, lean_shard_bytes

    rules = Rules(width=4, height=6)
    rows = [(1_000, 10), (3_000, 30), (2_000, 20)]  # (worker 0 holds shards 0 and 2, worker 1 shard 1)
    need = lean_shard_bytes(rules, 1_000, 10) + lean_shard_bytes(rules, 2_000, 20)
    assert need > lean_shard_bytes(rules, 3_000, 30)
    check_memory(rules, 3, 2, need, rows)
    with pytest.raises(MemoryLimitError, match=r"worker 0 holds shards 0, 2, 3,000 boards and ghosts"):
        check_memory(rules, 3, 2, need - 1, rows)
    check_memory(rules, 3, 3, lean_shard_bytes(rules, 3_000, 30), rows)  # (a worker a shard: the largest alone)
    # before the search: the two bitmaps of each shard a worker holds (2 of 3 on 2 workers)
    bitmaps = lean_shard_bytes(rules, 0)
    check_memory(rules, 3, 2, 2 * bitmaps)
    with pytest.raises(MemoryLimitError, match="two bitmaps over every possible board, 8.0 MiB on a worker holding 2"):
        check_memory(rules, 3, 2, 2 * bitmaps - 1)


@pytest.mark.parametrize("split", ["hash", "low_rows"])
def test_lean_shard_bytes_is_a_shards_peak(split):
    """Two lean shards in one process (their messages called directly, no
    dask): the most their arrays held at once, searching, building and in 8
    rounds (tracemalloc), is within 5% of lean_shard_bytes summed over them,
    with the hash split's many ghosts (40% of the rows) as with low_rows'
    few; without the ghosts' bytes it fell short by half with hash (4x6:
    63 MiB against 129)."""
    import asyncio
    import tracemalloc

    from babytris.modes.sharded.lean_shard import GHOST_BOOKKEEPING_BYTES, lean_shard_bytes

    rules, n = Rules(width=4, height=6), 2  # (4x6: the other threads' allocations a small part)
    shards = [LeanShard(rules, k, n, split) for k in range(n)]
    for shard in shards:
        shard.connect(shards)  # (their coroutines awaited here, as dask would run them)

    async def each(method, *args):
        return await asyncio.gather(*(getattr(shard, method)(*args) for shard in shards))

    start = np.array([rules.start], dtype=np.uint64)
    tracemalloc.start()
    try:
        asyncio.run(shards[int(shard_of(start, n, split, rules)[0])].offer(-1, start))
        while sum(shard.receive() for shard in shards):
            asyncio.run(each("expand"))
        counts = [shard.rows_and_ghosts() for shard in shards]
        asyncio.run(each("build", 0, 0.9, 4, True))
        for shard in shards:
            shard.serve()
        for r in range(8):
            asyncio.run(each("step", r, r % 3 == 0, 0.0, r % 3 == 2))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [rows for rows, _ in counts] == [shard.kernel.n_rows for shard in shards]
    assert [ghosts for _, ghosts in counts] == [shard.kernel.n_rows - shard.kernel.n_own for shard in shards]
    estimate = sum(lean_shard_bytes(rules, rows, ghosts) for rows, ghosts in counts)
    assert 0.95 * estimate <= peak <= 1.05 * estimate, (peak, estimate)
    if split == "hash":
        assert sum(GHOST_BOOKKEEPING_BYTES * ghosts for _, ghosts in counts) > 0.4 * estimate
