"""The course's players and opponents, as the course's final program plays them (4x4).

The slides' table (Ergin & Grousson) pits players against opponents; the
course's program (diaarca/baby-tetris at its "final slide version",
``src/MDP.cpp`` and ``src/Tetris.cpp``) computes each by value iteration and
replays each pairing.  This module does the same, in the program's own
order and arithmetic, beside babytris's solves (whose tie rules are the
variant :mod:`babytris.claims.published` also shows):

- **Solve order and seeding.**  Every value iteration runs in place over the
  states of ``generateReachableStates``, in the order its
  ``std::unordered_map`` iterates (:mod:`.course_code`), the search seeded
  with the empty board holding the program's first piece, then the other.
- **Players.**  The weighted player (``actionValueIteration``) values a move
  ``0.5 * (r + d V[after, I]) + 0.5 * (r + d V[after, L])``, with
  ``r = lines w_l - max height w_h + score w_s - holes w_g`` of the board as
  the piece lands, summed in that order; the max-min player
  (``robustActionValueIterationMaxMin``) values a move by the smaller of
  ``score + d V[after, piece]`` over the next piece.  Each keeps, from its
  last sweep, the first move in the program's move order whose value equals
  the best exactly (floating point, as the program compares them).
- **Opponents** (discount 0.1; they see the board and the piece in hand and
  choose the next piece).  MinMax: per next piece, the best move's
  ``score + d V``, starting from 0; it gives L if L's is strictly smaller,
  else I.  MinAvg: the same with the mean over the moves.  GapAvg: the mean
  of ``holes + d V``; it gives I if L's mean is strictly smaller, else L,
  and its value is the smaller mean either way (the program's code).
- **Replay** (``playPolicy``): the game starts on the empty board, the piece
  in hand replaced by the opponent's choice for the program's first state;
  each turn the player places by its policy, the opponent (or a fair coin
  where there is none) gives the next piece; the points of 10,000
  placements, or fewer if the game ends.

The board is the course's 4x4 (its line clear writes four cells; its rows are
four high in ``Tetris.cpp``).  Pure Python: a player's solve takes a few
seconds.  ``tests/test_course_players.py`` holds what the program printed when
built here (g++ 12.2, a ``main`` taking the first piece and the weights).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..game.validation import check_int, check_number
from .course_code import _search, hash_map_order

__all__ = [
    "OPPONENTS",
    "CourseGame",
    "course_game",
    "course_opponent",
    "course_player",
    "random_pieces_points",
    "replay",
]

#: The course's opponents (``trominoValueIteration*``), in the slides' column order.
OPPONENTS = ("minmax", "minavg", "gapavg")
#: The course's sizes: its line clear writes rows of four; its main builds 4 rows.
WIDTH = HEIGHT = 4
#: The program's stopping test and sweep limit (``EPSILON``, ``MAX_IT``) and its game length (``MAX_ACTION``).
EPSILON, MAX_SWEEPS, MAX_PLACEMENTS = 1e-8, 1000, 10_000


@dataclass(frozen=True)
class CourseGame:
    """The course's game as its program holds it.

    Attributes:
        first: the program's first piece, ``"I"`` or ``"L"``.
        order: the states' indices in the order its hash map iterates.
        moves: per state, its moves in the program's order, each
            ``(score, lines, max height, holes, next state with an I,
            next state with an L)``, the first four of the board as the
            piece lands.
        start: the index of the empty board holding the first piece.
    """

    first: str
    order: tuple[int, ...]
    moves: tuple[tuple[tuple[int, int, int, int, int, int], ...], ...]
    start: int

    @property
    def n_states(self) -> int:
        """The states (board, piece in hand)."""
        return len(self.moves)


def course_game(first: str = "I") -> CourseGame:
    """The course's 4x4 game, its search seeded with the empty board holding
    ``first`` (``"I"`` or ``"L"``: the program draws it after ``srand(time)``),
    then the other piece.

    Returns:
        a :class:`CourseGame`.

    Raises:
        ValueError: ``first`` not ``"I"`` or ``"L"``.
    """
    if first not in ("I", "L"):
        raise ValueError(f"first must be 'I' or 'L' (the program's first piece), got {first!r}")
    seeds = (first, "L" if first == "I" else "I")
    states, listed = _search(WIDTH, HEIGHT, seeds)
    index = {state: i for i, state in enumerate(states)}
    moves = tuple(
        tuple(
            (score, _lines(placed), _max_height(placed), _holes(placed), index[after, 1], index[after, 2])
            for score, after, placed in state_moves
        )
        for state_moves in listed
    )
    order = tuple(hash_map_order([board * 3 + piece for board, piece in states]))
    return CourseGame(first, order, moves, 0)


def course_player(
    game: CourseGame,
    weights: Sequence[float] | None = None,
    *,
    discount: float = 0.9,
    tol: float = EPSILON,
    max_sweeps: int = MAX_SWEEPS,
) -> list[int]:
    """A player's policy as the program computes it: the weighted player of
    ``weights`` ``(lines, height, score, holes)``, or the max-min player for
    None.

    Returns:
        per state, the index of its move in ``game.moves`` (-1: no move).

    Raises:
        ValueError: weights not four numbers, or a discount, tolerance or sweep count out of range.
    """
    discount = check_number("discount", discount, 0.0, 1.0, open_high=True)
    tol = check_number("tol", tol, 0.0, open_low=True)
    max_sweeps = check_int("max_sweeps", max_sweeps, 1, 10**6)
    if weights is not None:
        if len(weights) != 4:
            raise ValueError(f"weights must be four numbers (lines, height, score, holes), got {weights!r}")
        lines_w, height_w, score_w, holes_w = (check_number(f"weights[{k}]", w) for k, w in enumerate(weights))
        # the program's immediate reward, in its order of operations
        rewards = [
            [lines_w * n - height_w * h + score_w * s - holes_w * g for s, n, h, g, _, _ in moves]
            for moves in game.moves
        ]
    values = [0.0] * game.n_states
    policy = [-1] * game.n_states
    delta, sweeps = float("inf"), 0
    while sweeps < max_sweeps and delta > tol:
        delta = 0.0
        for s in game.order:
            moves = game.moves[s]
            if not moves:
                continue
            if weights is None:  # each move's worse next piece
                q = [min(score + discount * values[i], score + discount * values[j]) for score, _, _, _, i, j in moves]
            else:
                q = []
                for r, (_, _, _, _, i, j) in zip(rewards[s], moves):
                    total = 0.5 * (r + discount * values[i])
                    total += 0.5 * (r + discount * values[j])
                    q.append(total)
            best = max(q)
            policy[s] = q.index(best)  # the first move whose value equals the best
            delta = max(delta, abs(best - values[s]))
            values[s] = best
        sweeps += 1
    return policy


def course_opponent(
    game: CourseGame, kind: str, *, discount: float = 0.1, tol: float = EPSILON, max_sweeps: int = MAX_SWEEPS
) -> list[int]:
    """An opponent's choices as the program computes them (``kind`` one of
    :data:`OPPONENTS`).

    Returns:
        per state, the next piece it gives (0: I, 1: L; -1: no move, no choice).

    Raises:
        ValueError: an unknown ``kind``, or a discount, tolerance or sweep count out of range.
    """
    if kind not in OPPONENTS:
        raise ValueError(f"kind must be one of {', '.join(OPPONENTS)}, got {kind!r}")
    discount = check_number("discount", discount, 0.0, 1.0, open_high=True)
    tol = check_number("tol", tol, 0.0, open_low=True)
    max_sweeps = check_int("max_sweeps", max_sweeps, 1, 10**6)
    values = [0.0] * game.n_states
    choice = [-1] * game.n_states
    delta, sweeps = float("inf"), 0
    while sweeps < max_sweeps and delta > tol:
        delta = 0.0
        for s in game.order:
            moves = game.moves[s]
            if not moves:
                continue
            if kind == "minmax":
                to_i = to_l = 0.0  # (the program starts both at 0)
                for score, _, _, _, i, j in moves:
                    to_i = max(to_i, score + discount * values[i])
                    to_l = max(to_l, score + discount * values[j])
                given, value = (1, to_l) if to_l < to_i else (0, to_i)
            else:
                to_i = to_l = 0.0
                for score, _, _, holes, i, j in moves:
                    gain = score if kind == "minavg" else holes
                    to_i += gain + discount * values[i]
                    to_l += gain + discount * values[j]
                to_i /= len(moves)
                to_l /= len(moves)
                if kind == "minavg":
                    given, value = (1, to_l) if to_l < to_i else (0, to_i)
                else:  # GapAvg gives the piece of more holes, and keeps the smaller mean
                    given, value = (0, to_l) if to_l < to_i else (1, to_i)
            choice[s] = given
            delta = max(delta, abs(value - values[s]))
            values[s] = value
        sweeps += 1
    return choice


def replay(game: CourseGame, policy: Sequence[int], pieces: Sequence[int], n_placements: int = MAX_PLACEMENTS) -> int:
    """The program's ``playPolicy`` against an opponent's ``pieces`` (from
    :func:`course_opponent`): the points of ``n_placements`` placements, or
    fewer if the game ends.

    Returns:
        the points scored (an int, as the program's score).

    Raises:
        ValueError: ``n_placements`` out of [1, 10**7].
    """
    n_placements = check_int("n_placements", n_placements, 1, 10**7)
    state = _with_piece(game, pieces[game.start])  # the first piece in hand is the opponent's choice
    points = 0
    for _ in range(n_placements):
        moves = game.moves[state]
        if not moves:
            break
        score, _, _, _, i, j = moves[policy[state]]
        points += score
        state = j if pieces[state] == 1 else i
    return points


def _with_piece(game: CourseGame, piece: int) -> int:
    """The empty board holding ``piece`` (0: I, 1: L): the search's seeds,
    states 0 and 1, are the empty board with the first piece, then the other."""
    first = 0 if game.first == "I" else 1
    return 0 if piece == first else 1


def random_pieces_points(
    game: CourseGame, policy: Sequence[int], n_placements: int = MAX_PLACEMENTS
) -> tuple[float, float]:
    """The policy's points in ``n_placements`` placements against a fair coin
    for every piece, the first included (the program's random opponent),
    computed exactly.

    Returns:
        ``(mean, standard deviation)`` of one game's points.
    """
    n_placements = check_int("n_placements", n_placements, 1, 10**7)
    live = np.array([bool(moves) for moves in game.moves])
    chosen = [moves[policy[s]] if moves else (0, 0, 0, 0, s, s) for s, moves in enumerate(game.moves)]
    gain = np.array([c[0] for c in chosen], dtype=np.float64) * live
    to_i = np.array([c[4] for c in chosen])
    to_l = np.array([c[5] for c in chosen])
    mean = np.zeros(game.n_states)
    square = np.zeros(game.n_states)  # E[points^2]
    for _ in range(n_placements):
        ahead_mean = 0.5 * (mean[to_i] + mean[to_l])
        ahead_square = 0.5 * (square[to_i] + square[to_l])
        square = np.where(live, gain * gain + 2 * gain * ahead_mean + ahead_square, 0.0)
        mean = np.where(live, gain + ahead_mean, 0.0)
    first = game.start, 1 - game.start  # the empty board with either piece
    m = 0.5 * (mean[first[0]] + mean[first[1]])
    second = 0.5 * (square[first[0]] + square[first[1]])
    return float(m), float(np.sqrt(max(second - m * m, 0.0)))


def _lines(board: int) -> int:
    """Full rows of a course board (row 0 at the top)."""
    return sum(((board >> (row * WIDTH)) & 0xF) == 0xF for row in range(HEIGHT))


def _max_height(board: int) -> int:
    """The program's ``getMaxHeight``: rows from the highest filled cell down to the floor."""
    rows = [row for row in range(HEIGHT) if (board >> (row * WIDTH)) & 0xF]
    return HEIGHT - rows[0] if rows else 0


def _holes(board: int) -> int:
    """The program's ``gapCheck``: empty cells below a filled one in their column."""
    holes = 0
    for col in range(WIDTH):
        roof = False
        for row in range(HEIGHT):
            if board >> (row * WIDTH + col) & 1:
                roof = True
            elif roof:
                holes += 1
    return holes
