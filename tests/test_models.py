"""Seed models (babytris.solvers.models): Block Drop and No-Holes Tetris, and the rules
and rewards they rest on (no holes, topping out, a cost for losing), checked
against the paper's own state, column heights, simulated here in plain Python."""

from __future__ import annotations

import itertools
import json
import random
from collections import deque

import numpy as np
import pytest

import babytris
from babytris import Reward, Rules, RulesError, reference
from babytris.engine.placements import engine, lost_board
from babytris.engine.reward import holes_filled
from babytris.solvers.models import BLOCK, block_drop, no_holes_tetris

# --------------------------------------------------------------------------
# The paper's state: a height per column, 0..m-1
# --------------------------------------------------------------------------


def bits_of(heights, width: int) -> int:
    """The board whose column c is filled from the bottom up to ``heights[c]``."""
    return sum(1 << (r * width + c) for c, h in enumerate(heights) for r in range(h))


def heights_of(board: int, width: int, height: int) -> tuple[int, ...]:
    return tuple(max((r + 1 for r in range(height) if board >> (r * width + c) & 1), default=0) for c in range(width))


def height_vectors(m: int, n: int) -> list[tuple[int, ...]]:
    """Every live board of Block Drop by the paper's definition: heights in
    0..m-1, and (as a full row is cleared at once) some column at 0."""
    return [h for h in itertools.product(range(m), repeat=n) if min(h) == 0]


def heights_drop(heights, shape, column: int, m: int):
    """One placement on column heights: ``(heights after, lines, cells filled)``,
    or None when the game is lost.  The piece rests on the highest column
    under it; each of its columns rises to the piece's top there; rows
    0..min-1 are then full and cleared; a column left at height m (or a piece
    reaching above the board) loses."""
    cols: dict[int, list[int]] = {}
    for x, y in shape:
        cols.setdefault(x, []).append(y)
    rest = max(heights[column + x] - min(ys) for x, ys in cols.items())
    if rest + 1 + max(y for _, y in shape) > m:
        return None
    after = list(heights)
    filled = 0
    for x, ys in cols.items():
        after[column + x] = rest + max(ys) + 1
        filled += (rest + min(ys) - heights[column + x]) + (max(ys) - min(ys) + 1 - len(ys))
    lines = min(after)
    after = [h - lines for h in after]
    if max(after) >= m:
        return None
    return tuple(after), lines, filled


def heights_moves(rules: Rules, heights, piece: int):
    """Every placement of ``piece`` in the engine's order: ``(number, next board, lines, filled)``."""
    out, number = [], 0
    for shape in rules.pieces[piece].orientations():
        if 1 + max(y for _, y in shape) > rules.height:
            continue
        for column in range(rules.width - max(x for x, _ in shape)):
            step = heights_drop(heights, shape, column, rules.height)
            if step is None:
                out.append((number, lost_board(rules), 0, 0))
            else:
                out.append((number, bits_of(step[0], rules.width), step[1], step[2]))
            number += 1
    return out


def heights_reachable(rules: Rules) -> set[int]:
    """Boards reachable from the empty one by :func:`heights_moves` (the lost board included)."""
    start = (0,) * rules.width
    seen, queue = {start}, deque([start])
    boards = {0}
    while queue:
        h = queue.popleft()
        for p in range(rules.n_pieces):
            for _, after, _, _ in heights_moves(rules, h, p):
                boards.add(after)
                if after != lost_board(rules):
                    nxt = heights_of(after, rules.width, rules.height)
                    if nxt not in seen:
                        seen.add(nxt)
                        queue.append(nxt)
    return boards


# --------------------------------------------------------------------------
# Boards: the paper's m^n, exactly
# --------------------------------------------------------------------------


@pytest.mark.parametrize("m, n", [(m, n) for m in range(1, 7) for n in range(2, 6)])
def test_block_drop_boards_are_the_height_vectors(m, n):
    t = babytris.enumerate_boards(block_drop(width=n, height=m).rules)
    want = {bits_of(h, n) for h in height_vectors(m, n)} | {lost_board(t.rules)}
    assert set(t.boards.tolist()) == want
    assert t.n_boards == m**n - (m - 1) ** n + 1  # the paper's m^n + 1, less the (m-1)^n with a full row


def test_block_drop_one_column_never_loses():
    t = babytris.enumerate_boards(block_drop(width=1, height=3).rules)
    assert t.boards.tolist() == [0]  # every block clears its row


@pytest.mark.parametrize(
    "m, n, pieces, unreachable",
    [
        (4, 4, "tetrominoes", [(0, 3, 0, 3), (3, 0, 0, 3), (3, 0, 3, 0)]),
        (5, 4, "tetrominoes", []),
        (4, 5, "tetrominoes", 15),
        (6, 4, ["O", "I4"], 612),
        (5, 4, ["T"], 288),
    ],
)
def test_no_holes_boards_equal_the_column_height_game(m, n, pieces, unreachable):
    rules = no_holes_tetris(width=n, height=m, pieces=pieces).rules
    t = babytris.enumerate_boards(rules)
    assert set(t.boards.tolist()) == heights_reachable(rules)
    live = {bits_of(h, n) for h in height_vectors(m, n)}
    missing = sorted(h for h in height_vectors(m, n) if bits_of(h, n) not in set(t.boards.tolist()))
    assert t.n_boards == len(live) - len(missing) + 1
    assert missing == unreachable if isinstance(unreachable, list) else len(missing) == unreachable


@pytest.mark.parametrize(
    "m, n, pieces",
    [
        (4, 4, "tetrominoes"),
        (5, 5, "tetrominoes"),
        (6, 4, ["T", "S", "Z"]),
        (3, 5, ["L", "I", "O"]),
        (6, 6, ["J", "L4", "I4"]),
    ],
)
def test_no_holes_drop_equals_column_heights(m, n, pieces):
    """The compiled drop, on random boards, is the column-height transition."""
    rules = no_holes_tetris(width=n, height=m, pieces=pieces).rules
    e = engine(rules)
    rng = random.Random(m * 100 + n)
    vectors = height_vectors(m, n)
    for heights in rng.sample(vectors, min(len(vectors), 150)):
        for p in range(rules.n_pieces):
            want = [(k, nb, lines) for k, nb, lines, _ in heights_moves(rules, heights, p)]
            assert e.successors(bits_of(heights, n), p) == want, (heights, p)
    assert all(e.successors(lost_board(rules), p) == [] for p in range(rules.n_pieces))


def test_cells_filled_equal_column_heights():
    rules = no_holes_tetris(width=4, height=5).rules
    t = babytris.enumerate_boards(rules)
    filled = holes_filled(t)
    for i, b in enumerate(t.boards.tolist()):
        if b == lost_board(rules):
            continue
        for p in range(rules.n_pieces):
            s = i * rules.n_pieces + p
            want = [f for _, _, _, f in heights_moves(rules, heights_of(b, 4, 5), p)]
            assert filled[t.offsets[s] : t.offsets[s + 1]].tolist() == want
    assert filled.max() > 0


# --------------------------------------------------------------------------
# Block Drop: the obvious policy
# --------------------------------------------------------------------------


@pytest.mark.parametrize("m, n", [(4, 4), (5, 4), (6, 4), (4, 5), (5, 5)])
def test_block_drop_fills_the_lowest_columns(m, n):
    """From every live board the optimal drops are exactly those into a
    column of least height: the policy never makes a height difference it
    need not.  Those are the only ties: boards that are column permutations
    of each other have equal values (the game ignores the columns' order)."""
    s = block_drop(width=n, height=m).solve(discount=0.9, tol=1e-12)
    by_sorted: dict[tuple, float] = {}
    for b in s.boards.tolist():
        if b == lost_board(s.rules):
            assert s.value(b, "block") == 0.0
            continue
        h = heights_of(b, n, m)
        q = s.action_values(b, "block")
        best = max(q.values())
        optimal = sorted(p.column for p, v in q.items() if v >= best - 1e-9)
        assert optimal == [c for c in range(n) if h[c] == min(h)], h
        assert all(v < best - 1e-3 for v in q.values() if v < best - 1e-9)  # a clear margin otherwise
        assert s.value(b, "block") == pytest.approx(by_sorted.setdefault(tuple(sorted(h)), best), abs=1e-9)


def test_block_drop_4x4_policy_fills_rows_left_to_right():
    """The paper: "drops a single block into each column (from left to
    right) until a line is cleared, at which point it repeats".  Among the
    equally good columns (the lowest ones) take the leftmost: 0, 1, 2, 3, 0,
    ...; the solver's own choice fills each row before it starts the next."""
    model = block_drop(width=4, height=4)
    s = model.solve(discount=0.9, tol=1e-12)
    e = engine(model.rules)
    for leftmost in (True, False):
        board, columns, lines = 0, [], []
        for _ in range(12):
            q = s.action_values(board, "block")
            move = (
                min((p for p, v in q.items() if v >= max(q.values()) - 1e-9), key=lambda p: p.column)
                if leftmost
                else s.best_action(board, "block")
            )
            ((board, cleared),) = [(nb, n) for k, nb, n in e.successors(board, 0) if k == move.index]
            columns.append(move.column)
            lines.append(cleared)
        assert lines == [0, 0, 0, 1] * 3
        if leftmost:
            assert columns == [0, 1, 2, 3] * 3
        else:
            assert all(sorted(columns[i : i + 4]) == [0, 1, 2, 3] for i in (0, 4, 8))
    # a line every 4 drops from the empty board: 0.9^3 + 0.9^7 + ...
    assert s.start_value == pytest.approx(0.9**3 / (1 - 0.9**4), abs=1e-9)


# --------------------------------------------------------------------------
# The cost of losing
# --------------------------------------------------------------------------


def test_a_state_with_no_placement_is_worth_minus_the_loss():
    rules = Rules(width=3, height=3, pieces=["I", "L"])
    plain = babytris.solve(rules, tol=1e-12)
    lossy = babytris.solve(rules, tol=1e-12, reward=Reward(loss=5))
    dead = np.diff(lossy.transitions.offsets).reshape(lossy.values.shape) == 0
    assert dead.any() and not dead.all()
    assert np.all(lossy.values[dead] == -5.0) and np.all(plain.values[dead] == 0.0)
    # A loss can only lower values (the start's 11.75 not at all: optimal play from there never
    # loses, and both agree to within their error bounds), and it lowers those of boards that lose.
    assert lossy.start_value <= plain.start_value + lossy.error_bound + plain.error_bound
    assert np.all(lossy.board_values <= plain.board_values + lossy.error_bound + plain.error_bound)
    assert (lossy.board_values < plain.board_values - 1.0).any()
    assert lossy.reward == Reward(loss=5)
    ref = reference.solve(rules, tol=1e-12, reward=Reward(loss=5))
    assert lossy.start_value == pytest.approx(ref.start_value, abs=1e-9)


@pytest.mark.parametrize("opponent", ["minimax", "minavg"])
def test_the_opponent_gives_a_killing_piece(opponent):
    rules = Rules(width=3, height=3, pieces=["I", "L"])
    s = babytris.solve(rules, opponent=opponent, tol=1e-12, reward=Reward(loss=7))
    dead = np.diff(s.transitions.offsets).reshape(s.values.shape) == 0
    killing = np.flatnonzero(dead.any(axis=1))
    assert killing.size
    assert np.all(dead[killing, s.opponent_policy[killing]])
    assert np.all(s.board_values[killing] == -7.0)
    ref = reference.solve(rules, opponent=opponent, tol=1e-12, reward=Reward(loss=7))
    order = s.transitions.indices(np.array(ref.boards, dtype=np.uint64))
    assert np.abs(s.values[order] - np.array(ref.values)).max() <= 1e-9


def test_topping_out_costs_the_loss_on_the_move():
    model = block_drop(width=3, height=3)
    s = model.solve(tol=1e-12)
    assert s.value(lost_board(model.rules), "block") == 0.0  # paid already
    board = bits_of((2, 0, 1), 3)
    q = {p.column: v for p, v in s.action_values(board, "block").items()}
    assert q[0] == -3.0  # column 0 reaches the top row: the game is lost, at a cost of m = 3
    assert q[1] > q[2] > q[0]
    with pytest.raises(ValueError, match="loss"):
        Reward(loss=-1)
    with pytest.raises(ValueError, match="loss"):
        Reward(loss=float("inf"))


@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_models_equal_the_reference(opponent):
    for model in (
        block_drop(width=3, height=4),
        no_holes_tetris(width=4, height=4),
        no_holes_tetris(width=3, height=4, pieces=["T", "O", "L"]),
    ):
        s = model.solve(discount=0.8, tol=1e-12, opponent=opponent)
        ref = reference.solve(model.rules, discount=0.8, tol=1e-12, opponent=opponent, reward=model.reward)
        order = s.transitions.indices(np.array(ref.boards, dtype=np.uint64))
        assert sorted(ref.boards) == sorted(s.boards.tolist())
        assert np.abs(s.values[order] - np.array(ref.values)).max() <= 1e-9
        quotient = model.solve(discount=0.8, tol=1e-12, opponent=opponent, minimize=True)
        assert np.abs(quotient.values - s.values).max() <= 1e-9


def test_evaluate_with_the_models_reward():
    model = no_holes_tetris(width=4, height=4)
    s = model.solve(tol=1e-12)
    assert babytris.evaluate(s, discount=0.9, reward=model.reward, tol=1e-12) == pytest.approx(s.start_value, abs=1e-8)
    assert babytris.evaluate(s, discount=0.9, tol=1e-12) > s.start_value  # lines alone, no holes or loss counted
    with pytest.raises(ValueError, match="reward"):
        babytris.evaluate(s, n_placements=10, reward=model.reward)


# --------------------------------------------------------------------------
# The API and its checks
# --------------------------------------------------------------------------


def test_model_objects():
    model = no_holes_tetris(width=4, height=5, pieces=["T", "O"])
    rules, reward = model
    assert rules.no_holes and rules.top_out and rules.width == 4 and rules.height == 5
    assert reward == Reward(new_holes=1, loss=5) and rules.line_scores == (0, 1, 2, 3, 4, 5)
    assert model.size == "5x4" and model.paper_states == 2 * 5**4 + 1
    assert "No-Holes Tetris 5x4" in repr(model)
    drop = block_drop(width=4, height=6)
    assert drop.rules.pieces == (BLOCK,) and drop.reward == Reward(loss=6) and not drop.rules.no_holes
    assert babytris.block_drop is block_drop and isinstance(drop, babytris.Model)
    mirrored = block_drop(width=4, height=4, mirror=True).solve(tol=1e-12)
    plain = block_drop(width=4, height=4).solve(tol=1e-12)
    assert mirrored.n_boards < plain.n_boards
    assert mirrored.start_value == pytest.approx(plain.start_value, abs=1e-9)


def test_bad_input_names_the_field():
    with pytest.raises(RulesError, match="width"):
        block_drop(width=0, height=4)
    with pytest.raises(RulesError, match="height"):
        no_holes_tetris(width=4, height="4")
    with pytest.raises(RulesError, match="width \\* height"):
        block_drop(width=9, height=8)
    with pytest.raises(RulesError, match="top_out"):
        Rules(top_out=True, objective="combo")
    with pytest.raises(RulesError, match="no_holes"):
        Rules(no_holes=1)
    with pytest.raises(RulesError, match="start"):
        Rules(width=3, height=3, no_holes=True, start=1 << 4)  # row 1 over an empty cell
    with pytest.raises(RulesError, match="start"):
        Rules(width=3, height=3, top_out=True, start=1 << 7)
    with pytest.raises(RulesError, match="line_scores"):
        Rules(width=3, height=4, no_holes=True, line_scores=(0, 1, 3, 6))
    with pytest.raises(ValueError, match="new_holes"):
        babytris.solve(width=3, height=3, reward=Reward(new_holes=1))


def test_files_keep_the_new_fields(tmp_path):
    model = no_holes_tetris(width=4, height=4, pieces=["T", "O"])
    s = model.solve(tol=1e-10)
    path = tmp_path / "nh.npz"
    s.save(path)
    back = babytris.load(path, rules=model.rules)
    assert back.rules == model.rules and back.reward == model.reward
    assert np.array_equal(back.values, s.values)
    # a file of version 1 (before these fields) still loads
    plain = tmp_path / "v1.npz"
    babytris.solve(width=3, height=3, tol=1e-8).save(plain)
    with np.load(plain) as data:
        contents = {k: data[k] for k in data.files}
    meta = json.loads(str(contents["meta"]))
    meta["format_version"] = 1
    del meta["rules"]["no_holes"], meta["rules"]["top_out"]
    del meta["digests"]  # (a version-1 file had none)
    np.savez(tmp_path / "old.npz", **{**contents, "meta": np.array(json.dumps(meta))})
    assert babytris.load(tmp_path / "old.npz").rules == Rules(width=3, height=3)


@pytest.mark.parametrize("fields", [dict(), dict(preview=1), dict(hold=True), dict(mirror=True)])
def test_move_rewards_compiled_and_numpy_agree(fields):
    """Every move's reward in one compiled pass equals the same asked move by move."""
    from babytris.engine.reward import move_rewards

    rules = Rules(
        width=4, height=4, pieces=["T", "O", "I"], no_holes=True, top_out=True, line_scores=(0, 1, 3, 6, 10), **fields
    )
    t = babytris.enumerate_boards(rules)
    for reward in (Reward(new_holes=1.5, loss=4, lines=1, score=0.5, height=0.25, gaps=2), Reward(loss=3)):
        every = move_rewards(t, reward)
        assert np.array_equal(every, move_rewards(t, reward, np.arange(t.n_moves)))
        assert np.array_equal(holes_filled(t), holes_filled(t, np.arange(t.n_moves)))
        assert np.any(every == -4 if reward.loss == 4 else every == -3)


def test_long_run_rate_of_the_models():
    """Lines per placement in the long run: a block a column, so 1/n for Block
    Drop; under the ceiling, which counts the cells no_holes may fill, for
    No-Holes Tetris (its points are lines)."""
    drop = babytris.long_run_rate(block_drop(width=4, height=4).rules)
    assert drop.gain == pytest.approx(0.25, abs=1e-8) and drop.survives
    for model in (
        no_holes_tetris(width=4, height=4, pieces=["T", "O", "I4"]),
        no_holes_tetris(width=3, height=5, pieces=["L", "O"]),
    ):
        rate = babytris.long_run_rate(model.rules)
        ref = reference.long_run_rate(model.rules, tol=1e-7)
        assert rate.gain == pytest.approx(ref.gain, abs=1e-6)
        assert rate.upper <= rate.ceiling
