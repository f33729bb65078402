"""The slides' table of players against opponents (Ergin & Grousson) for :mod:`babytris.reproduce`.

The course's final program (diaarca/baby-tetris, "final slide version":
``src/Tetris.cpp`` and ``src/MDP.cpp``) solves, on 4x4, three opponents
(MinMax, MinAvg, GapAvg, at discount 0.1) and the players (weighted rewards
of the landed board, and the max-min player, at 0.9), then plays each player
one game of 10,000 placements against each opponent and against random
pieces: 100 games for a weighted player (their mean is the Rand cell), one
for the max-min player, which it prints after the table.  Min is the least
of a row's four cells.

Each cell is measured two ways:

- **as the program plays** (:mod:`.course_players`: its in-place value
  iteration in its hash map's order, its tie-breaks at exact float
  equality, its replay), with the first piece the program draws taken as an
  I (an L moves two cells; both are stated).  Its deterministic games give
  the cell to the point; a Rand cell is its exact expectation, against the
  noise of the program's own mean (one game's spread over 10 for 100 games);
- **babytris's own solves** of the same players and opponents (its one-preview
  table for the opponents, its tie rule: the first placement in babytris's
  order), the variant each row shows beside.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .registry import AGREES, DIFFERS, WITHIN_NOISE, Measurement, claim

__all__ = ["SLIDES_COLUMNS", "SLIDES_TABLE", "program_cells", "tied_share"]

#: The slides' results table: row -> (player weights (lines, height, score, gaps) or None for
#: the max-min player, and its published Rand, MinMax, MinAvg, GapAvg and Min).
SLIDES_TABLE = {
    "maxmin": (None, (10685, 9999, 9999, 10356, 9999)),
    "w-0-0-3-0": ((0, 0, 3, 0), (11090.70, 9999, 10000, 10622, 9999)),
    "w-0-0-1-1": ((0, 0, 1, 1), (10837.25, 9999, 10000, 9999, 9999)),
    "w-10-0-3-1": ((10, 0, 3, 1), (9833.09, 9998, 11248, 7500, 7500)),
    "w-10-0-4-0": ((10, 0, 4, 0), (10611.33, 9998, 10000, 7500, 7500)),
    "w-0-1-4-1.5": ((0, 1, 4, 1.5), (9810.65, 9999, 10000, 9999, 9810.65)),
    "w-0-2-1-1": ((0, 2, 1, 1), (0.05, 0, 0, 0, 0)),
}
SLIDES_COLUMNS = ("rand", "minmax", "minavg", "gapavg", "min")
OPPONENT_COLUMNS = ("minmax", "minavg", "gapavg")
#: Games behind a row's Rand cell in the program: NB_SIMU for a weighted player, one for the max-min player.
RAND_GAMES = {row: 1 if weights is None else 100 for row, (weights, _) in SLIDES_TABLE.items()}
#: The program's first piece as the rows take it (the one that gives every deterministic cell).
FIRST = "I"


# --------------------------------------------------------------------------------------------
# as the course's program plays
# --------------------------------------------------------------------------------------------

_program: dict[str, Any] = {}


def program_cells(row: str, first: str = FIRST) -> dict[str, Any]:
    """A row as the course's program plays it with ``first`` as its first
    piece, computed once a process: ``{"minmax" | "minavg" | "gapavg": points,
    "rand": (exact mean, one game's standard deviation)}``."""
    from .course_players import course_game, course_opponent, course_player, random_pieces_points, replay

    if first not in _program:
        game = course_game(first)
        _program[first] = {"game": game, "pieces": {k: course_opponent(game, k) for k in OPPONENT_COLUMNS}}
    done = _program[first]
    if row not in done:
        game, pieces = done["game"], done["pieces"]
        policy = course_player(game, SLIDES_TABLE[row][0])
        cells: dict[str, Any] = {k: replay(game, policy, pieces[k]) for k in OPPONENT_COLUMNS}
        cells["rand"] = random_pieces_points(game, policy)
        done[row] = cells
    return done[row]


# --------------------------------------------------------------------------------------------
# babytris's own solves of the same players and opponents (the variant)
# --------------------------------------------------------------------------------------------

_own: dict[str, Any] = {}


def tied_share(solution) -> float:
    """The share of states (with a move) whose best moves are two or more (values within 1e-9)."""
    t = solution.transitions
    reward = np.asarray(t.rules.line_scores)[t.lines]
    q = reward + solution.discount * solution.board_values[t.next_board]
    counts = np.diff(t.offsets)
    live = counts > 0
    best = np.maximum.reduceat(q, t.offsets[:-1][live])
    near = q >= np.repeat(best, counts[live]) - 1e-9
    ties = np.add.reduceat(near.astype(np.int64), t.offsets[:-1][live])
    return float(np.mean(ties > 1))


def _own_game() -> dict[str, Any]:
    """babytris's setup of the same game on 4x4, built once: the plain table,
    the one-preview table (the opponents choose the next piece seeing the
    board and the piece in hand), and the three opponents' choices there
    (discount 0.1, rewards on the board as the piece lands; ties go to I,
    except GapAvg's, which chooses the piece with the larger mean of holes
    plus value)."""
    if not _own:
        import babytris

        t0 = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
        t1 = babytris.enumerate_boards(babytris.Rules(width=4, height=4, preview=1))

        def values(opponent: str, reward=None) -> np.ndarray:
            return babytris.solve_transitions(t1, opponent=opponent, discount=0.1, tol=1e-12, reward=reward).values

        minmax, minavg = values("minimax"), values("minavg")
        holes = values("minavg", babytris.Reward(score=0, gaps=-1, before_clear=True))
        smaller_l = lambda v: (v[:, 1] < v[:, 0] - 1e-9).astype(np.int64)  # noqa: E731  (L if strictly less, else I)
        _own.update(
            t0=t0,
            t1=t1,
            board_of_node=t0.indices(t1.boards),  # each one-preview node's board in the plain table
            choices={"minmax": smaller_l(minmax), "minavg": smaller_l(minavg), "gapavg": 1 - smaller_l(holes)},
            rows={},
        )
    return _own


def own_cells(row: str) -> dict[str, Any]:
    """A row under babytris's own solves (ties to the first placement), once a
    process: each opponent column -> the distinct points of the games its
    first piece allows (sorted), ``"rand"`` -> the exact mean, and for the
    max-min row ``"tied"`` -> the share of states whose best moves tie."""
    import babytris

    game = _own_game()
    if row not in game["rows"]:
        weights = SLIDES_TABLE[row][0]
        cells: dict[str, Any] = {}
        if weights is None:  # max over moves, min over the next piece
            solution = babytris.solve_transitions(game["t0"], opponent="minimax", discount=0.9, tol=1e-12)
            cells["tied"] = tied_share(solution)
        else:
            lines, height, score, gaps = weights
            reward = babytris.Reward(lines=lines, height=height, score=score, gaps=gaps, before_clear=True)
            solution = babytris.solve_transitions(game["t0"], reward=reward, discount=0.9, tol=1e-12)
        policy = solution.policy
        for column in OPPONENT_COLUMNS:
            choice = game["choices"][column]
            starts = {int(choice[game["t1"].board_index(0, (c,))]) for c in (0, 1)}
            cells[column] = sorted({_own_replay(policy, choice, first) for first in starts})
        cells["rand"] = babytris.expected_points(game["t0"], player=policy, n_placements=10_000)
        game["rows"][row] = cells
    return game["rows"][row]


def _own_replay(policy: np.ndarray, choice: np.ndarray, first: int, n_placements: int = 10_000) -> float:
    """A babytris policy against a piece-choosing opponent on the one-preview
    table: the opponent gives the next piece for (board, piece in hand), the
    player places the piece in hand; the points of ``n_placements``
    placements (fewer if the piece fits nowhere).  Both sides are
    deterministic, so the game enters a cycle; once a node repeats, the
    remaining placements are whole cycles and a part of one."""
    game = _own_game()
    t1, board_of_node = game["t1"], game["board_of_node"]
    scores = t1.rules.line_scores
    node, points = t1.board_index(0, (first,)), 0.0
    seen: dict[int, tuple[int, float]] = {}  # node -> (placements made, points) on first arrival
    path: list[float] = []  # points after each placement
    step = 0
    while step < n_placements:
        if node in seen:
            start, before = seen[node]
            length, gain = step - start, points - before
            cycles, rest = divmod(n_placements - step, length)
            return points + cycles * gain + (path[start + rest - 1] - before if rest else 0.0)
        seen[node] = (step, points)
        placement = int(policy[board_of_node[node], int(t1.queues[node])])
        if placement < 0:
            break
        row = node * 2 + int(choice[node])
        moves = np.arange(t1.offsets[row], t1.offsets[row + 1])
        move = int(moves[t1.placement[moves] == placement][0])
        points += scores[t1.lines[move]]
        path.append(points)
        node = int(t1.next_board[move])
        step += 1
    return points


# --------------------------------------------------------------------------------------------
# the rows
# --------------------------------------------------------------------------------------------


def _points(values: list[float]) -> str:
    return " or ".join(f"{v:,.0f}" for v in values)


def _variant(row: str, column: str) -> str:
    """babytris's own solves' figure for a cell, as a clause."""
    own = own_cells(row)
    if column == "rand":
        shown = f"{own['rand']:,.2f} expected"
    else:
        shown = _points(own[column]) + (" (by the first piece)" if len(own[column]) > 1 else "")
    text = f"; babytris's own solves of these players and opponents (ties to its first placement) give {shown}"
    if "tied" in own:
        text += f" (its max-min player's best moves tie in {own['tied']:.0%} of states)"
    return text


def _rand_cell(row: str, published: float) -> tuple[float, float, str]:
    """``(exact mean, distance in the program's noise, why)`` of a Rand cell."""
    mean, spread = program_cells(row)["rand"]
    games = RAND_GAMES[row]
    noise = spread / math.sqrt(games)
    off = abs(published - mean) / noise if noise > 0 else (0.0 if published == mean else math.inf)
    other = program_cells(row, "L")["rand"][0]
    mean_of = "one game" if games == 1 else f"a mean of {games} games"
    why = (
        f"the exact expectation of the program's player against random pieces ({mean:,.2f} with an I first, "
        f"{other:,.2f} with an L); the program's figure is {mean_of}, whose standard deviation is {noise:.2f}: "
        f"{off:.1f} of it away"
    )
    return mean, off, why


def _slides_cell(row: str, column: str, published: float):
    def measure(fast: bool) -> Measurement:
        if column == "rand":
            mean, off, why = _rand_cell(row, published)
            return Measurement(round(mean, 2), WITHIN_NOISE if off <= 3 else DIFFERS, why + _variant(row, column))
        if column == "min":
            mean = program_cells(row)["rand"][0]
            games = [program_cells(row)[k] for k in OPPONENT_COLUMNS]
            least = min(mean, *games)
            if min(games) < mean:  # a deterministic game is the least: it must match to the point
                verdict = AGREES if published == min(games) else DIFFERS
                why = "the least of the row's four cells, a deterministic game's"
            else:
                noise = program_cells(row)["rand"][1] / math.sqrt(RAND_GAMES[row])
                verdict = WITHIN_NOISE if abs(published - mean) <= 3 * noise else DIFFERS
                why = "the least of the row's four cells, its Rand cell's (an exact expectation here, a mean there)"
            return Measurement(round(least, 2), verdict, why)
        points = program_cells(row)[column]
        other = program_cells(row, "L")[column]
        why = (
            "one deterministic game of 10,000 placements, played as the course's final program plays it "
            "(its value iterations in place in its hash map's order, seeded with the empty board holding an I, "
            "then an L; ties to the first move in its order at exact float equality; its replay)"
        )
        why += f"; with an L first it gives {other:,}" if other != points else "; an L first gives the same"
        return Measurement(points, AGREES if points == published else DIFFERS, why + _variant(row, column))

    return measure


_NAMES = {
    "minmax": "the MinMax opponent",
    "minavg": "the MinAvg opponent",
    "gapavg": "the GapAvg opponent",
    "min": "the least of the four",
}
for _row, (_player_weights, _published_row) in SLIDES_TABLE.items():
    _player = "the max-min player" if _player_weights is None else f"the player of weights {_player_weights}"
    _weights = "None" if _player_weights is None else str(_player_weights)
    for _column, _value in zip(SLIDES_COLUMNS, _published_row):
        _against = _NAMES.get(_column) or (
            "random pieces (one game)" if RAND_GAMES[_row] == 1 else "random pieces (mean of 100 games)"
        )
        _how = (
            "random_pieces_points(g, p)"
            if _column in ("rand", "min")
            else f"replay(g, p, course_opponent(g, {_column!r}))"
        )
        claim(
            f"slides-table-{_row}-{_column}",
            "slides",
            f"points in 10,000 placements on 4x4, {_player} against {_against}",
            _value,
            f"from babytris.claims.course_players import *; g = course_game('I'); "
            f"p = course_player(g, {_weights}); {_how}",
        )(_slides_cell(_row, _column, _value))
