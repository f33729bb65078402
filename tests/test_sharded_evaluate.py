"""A sharded solution's policy evaluated and played without gathering: the
game its policy plays, walked with each board asked of its owner shard, is
the single-process Solution's as play, expected_points and evaluate see it
(live shards on a LocalCluster of 2 worker processes, and a saved directory)."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris import Rules

distributed = pytest.importorskip("distributed", reason="dask.distributed not installed (pip install '.[dask]')")
from clusters import worker_processes  # noqa: E402

from babytris.modes.sharded.distributed import solve_sharded  # noqa: E402
from babytris.modes.sharded.owners import shard_of  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with worker_processes(2) as client:
        yield client


@pytest.fixture(scope="module")
def solved(client, tmp_path_factory):
    """Per (height, opponent): the live shards, the same solve's saved directory, and the single-process Solution."""
    out = {}
    for height in (4, 5):
        for opponent in ("random", "minimax"):
            rules = Rules(width=4, height=height)
            path = tmp_path_factory.mktemp(f"shards-{height}-{opponent}")
            live = solve_sharded(rules, client, tol=1e-11, opponent=opponent, out=path).shards
            plain = babytris.solve(rules, tol=1e-11, opponent=opponent)
            out[height, opponent] = live, babytris.load_sharded(path), plain
    return out


@pytest.mark.parametrize("where", ["live", "saved"])
@pytest.mark.parametrize("opponent", ["random", "minimax"])
@pytest.mark.parametrize("height", [4, 5])
def test_evaluate_and_expected_points_are_the_single_process_solutions(solved, height, opponent, where):
    live, saved, plain = solved[height, opponent]
    sharded = live if where == "live" else saved
    pieces = "solution" if opponent == "minimax" else "random"
    for n in (1, 7, 300):  # (the same moves and pieces: the same sums, exactly)
        mine = babytris.expected_points(sharded, opponent=pieces, n_placements=n)
        assert mine == babytris.expected_points(plain, opponent=pieces, n_placements=n)
    assert mine > 100  # (300 placements score)
    assert babytris.evaluate(sharded, opponent=pieces, n_placements=50) == babytris.evaluate(
        plain, opponent=pieces, n_placements=50
    )
    assert babytris.evaluate(sharded, opponent="best_response", n_placements=40) == babytris.evaluate(
        plain, opponent="best_response", n_placements=40
    )
    # the policy's own value at its own discount is the solve's start value
    own = "minimax" if opponent == "minimax" else "random"
    assert babytris.evaluate(sharded, opponent=own, discount=0.9) == pytest.approx(plain.start_value, abs=1e-8)
    assert babytris.evaluate(sharded, opponent="best_response", discount=0.9) == pytest.approx(
        babytris.evaluate(plain, opponent="best_response", discount=0.9), abs=1e-8
    )


@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_play_through_the_played_game_is_the_single_process_solutions(solved, opponent):
    live, saved, plain = solved[5, opponent]
    pieces = "solution" if opponent == "minimax" else "random"
    theirs = babytris.play(plain, opponent=pieces, n_placements=400, n_games=50, seed=3)
    for sharded in (live, saved):
        mine = babytris.play(sharded, opponent=pieces, n_placements=400, n_games=50, seed=3)
        assert np.array_equal(mine.points, theirs.points) and np.array_equal(mine.placements, theirs.placements)


@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_the_played_game_is_the_policys_part_of_the_table(solved, opponent):
    live, saved, plain = solved[5, opponent]
    played = live.played_game()
    assert played is live.played_game()  # (built once, then kept)
    assert played.transitions.n_moves <= played.n_states and 1 < played.n_boards < plain.n_boards / 10
    assert played.transitions.rules.start in played.boards
    at = plain.transitions.indices(played.boards)
    assert np.array_equal(played.policy, plain.policy[at])
    assert np.abs(played.values - plain.values[at]).max() <= 1e-9
    if opponent == "minimax":
        assert np.array_equal(played.opponent_policy, plain.opponent_policy[at])
    else:
        assert played.opponent_policy is None
    again = saved.played_game()
    assert np.array_equal(again.boards, played.boards) and np.array_equal(again.policy, played.policy)
    assert np.array_equal(again.transitions.next_board, played.transitions.next_board)
    assert (again.iterations, again.tol, again.converged) == (saved.iterations, saved.tol, True)
    assert (played.iterations, played.tol) == (saved.iterations, 1e-11)


def test_the_walk_asks_each_board_once_of_its_owner(solved, monkeypatch):
    live, _, plain = solved[5, "random"]
    asked = []
    rows = type(live)._rows

    def counted(self, k, boards):
        asked.append((k, boards.copy()))
        return rows(self, k, boards)

    monkeypatch.setattr(type(live), "_rows", counted)
    live.__dict__.pop("_played", None)  # (walked afresh)
    played = live.played_game()
    assert sum(len(boards) for _, boards in asked) == played.n_boards  # (each board's step taken once)
    assert {k for k, _ in asked} == {0, 1}
    for k, boards in asked:
        assert np.all(shard_of(boards, live.n_shards, live.split, live.rules) == k)


def test_what_needs_every_move_is_refused_with_its_size(solved, tmp_path):
    live, saved, plain = solved[5, "random"]
    unopened = babytris.load_sharded(saved.path, verify=False)
    assert unopened.n_boards == live.n_boards == saved.n_boards == plain.n_boards == 182_101
    assert unopened._shards == {}  # (the boards counted from the files' headers)
    size = f"{11 * 182_101 * 2 / 2**20:.1f} MiB"
    for sharded, kind in ((live, "LiveShards"), (saved, "ShardedValues")):
        with pytest.raises(ValueError, match=f"player: a {kind} plays its own policy only .* at least {size}"):
            babytris.play(sharded, "random")
        with pytest.raises(ValueError, match=f"opponent: with a {kind} give"):
            babytris.expected_points(sharded, opponent=np.zeros(plain.n_boards, dtype=np.int16))
        with pytest.raises(
            ValueError, match=f"opponent='minimax': the equilibrium opponent of another game than this {kind}"
        ):
            babytris.evaluate(sharded, opponent="minimax", discount=0.9)
    own_minimax = solved[5, "minimax"][0]  # (its own game's minimax at another discount is another game)
    with pytest.raises(ValueError, match="opponent='minimax': the equilibrium opponent of another game"):
        babytris.evaluate(own_minimax, opponent="minimax", discount=0.8)
