"""Pure-Python twin of the engine and solvers: plain, readable and slow.

Boards are sets of filled ``(col, row)`` cells; nothing here shares code with
the compiled core beyond the :class:`~babytris.Rules` it reads (and its
``pieces`` only for their rotation-0 cells).  It is the oracle of the tests
and the baseline of the benchmarks.  Same call shapes as the fast API:
``reference.solve(rules, discount=0.9)`` or ``reference.solve(width=4, height=4)``.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any

from ..game.pieces import Placement
from ..game.rules import Rules
from .game import (
    board_of,
    canonical,
    dead_value,
    draw_chance,
    filled_cells,
    holes,
    land,
    lost_board,
    max_height,
    move_reward,
    moves,
    node_moves,
    nodes,
    orientations,
    reachable_boards,
    start_chance,
)
from .termination import surviving_nodes

# The oracle shares no code with what it checks: it reads the rules' data (Rules, pieces)
# and a Reward's weights, and checks and resolves its arguments itself, below.

#: The opponent and player models the reference knows (as babytris.solvers.roles names them).
OPPONENTS = ("random", "minimax", "minavg", "gaps")
PLAYERS = ("optimal", "random")


@dataclass(frozen=True)
class _Roles:
    opponent: str  # a model name, or "given" (a dict board -> piece index)
    player: str  # "optimal", "random", or "given" (a dict (board, piece) -> placement number)
    reward: Any  # a Reward's weights (lines, score, height, gaps, new_holes, loss), or None: points


def _rules(rules: Rules | None, fields: dict[str, Any]) -> Rules:
    if rules is None:
        return Rules(**fields)
    elif not isinstance(rules, Rules) or fields:
        raise ValueError("give a babytris.Rules or rule fields (width=..., ...), not both")
    return rules


def _check_number(name: str, value: Any, low: float, high: float, *, closed_high: bool) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not (ok and low <= value and (value <= high if closed_high else value < high)):
        raise ValueError(f"{name} must be a number in [{low}, {high}{']' if closed_high else ')'}, got {value!r}")
    return float(value)


def _check_solver(discount: Any, tol: Any, max_iter: Any, undiscounted: bool) -> None:
    _check_number("discount", discount, 0.0, 1.0, closed_high=undiscounted)
    if not (_check_number("tol", tol, 0.0, math.inf, closed_high=False) > 0):
        raise ValueError(f"tol must be a number > 0, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or not 1 <= max_iter <= 10**7:
        raise ValueError(f"max_iter must be an integer in [1, 10**7], got {max_iter!r}")


def _points_only(reward: Any) -> bool:
    return (reward.lines, reward.score, reward.height, reward.gaps, reward.new_holes, reward.loss) == (0, 1, 0, 0, 0, 0)


def _roles(rules: Rules, opponent: Any, player: Any, reward: Any) -> _Roles:
    """Name who plays: models by name, given policies as dicts; a plain-points reward as None."""
    if reward is not None:
        if not all(hasattr(reward, w) for w in ("lines", "score", "height", "gaps", "new_holes", "loss")):
            raise ValueError(f"reward must be a babytris.Reward or None, got {reward!r}")
        if getattr(reward, "before_clear", False) and rules.no_holes:
            raise ValueError("reward: before_clear measures the landed board, which no_holes fills at once")
        if reward.new_holes and not rules.no_holes:
            raise ValueError("reward: new_holes weighs the cells no_holes fills; these rules keep holes")
        reward = None if _points_only(reward) else reward
    opponent = ("minavg" if player == "random" else "minimax") if opponent == "best_response" else opponent
    if isinstance(opponent, str):
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent must be one of {OPPONENTS} or a dict, got {opponent!r}")
        opponent_label = opponent
    else:
        opponent_label = "given"
    if opponent_label in ("minavg", "gaps"):
        if player not in (None, "random"):
            raise ValueError(f"player: opponent={opponent_label!r} plays against a random player, got {player!r}")
        player = "random"
    if opponent_label == "gaps" and reward is not None:
        raise ValueError("reward: opponent='gaps' counts holes created; it takes no reward")
    player = "optimal" if player is None else player
    if isinstance(player, str) and player not in PLAYERS:
        raise ValueError(f"player must be one of {PLAYERS} or a dict, got {player!r}")
    return _Roles(opponent_label, player if isinstance(player, str) else "given", reward)


__all__ = [
    "orientations",
    "moves",
    "reachable_boards",
    "solve",
    "board_value",
    "state_value",
    "ReferenceSolution",
    "holes",
    "max_height",
    "move_reward",
    "minimize",
    "expected_points",
    "long_run_rate",
    "ReferenceRate",
    "nodes",
    "node_moves",
    "board_of",
    "canonical",
    "land",
    "lost_board",
    "filled_cells",
    "dead_value",
]


@dataclass
class ReferenceSolution:
    """Result of :func:`solve`: ``values[i][p]`` for board ``boards[i]`` and piece index ``p``."""

    rules: Rules
    discount: float
    boards: list[Any]  # boards (ints), or with previews/hold nodes (tuples)
    values: list[list[float]]
    policy: list[list[Placement | None]]
    iterations: int
    residual: float
    converged: bool
    opponent: Any = "random"
    piece_choices: dict[int, int] | None = None  # board -> piece the opponent gives (None: drawn)

    @property
    def n_boards(self) -> int:
        return len(self.boards)

    @property
    def start_value(self) -> float:
        """The start board's value: an optimising opponent (``"minimax"``,
        ``"minavg"``: the least, ``"gaps"``: the most) chooses the opening
        queue too; otherwise averaged over its queues, the hold slot empty (or
        with ``hold_start="drawn"`` holding a piece drawn first, free)."""
        opening = [
            (chance, board_value(self.rules, self.values[i], self.opponent, node))
            for i, node in enumerate(self.boards)
            if (chance := start_chance(self.rules, node)) > 0
        ]
        pick = (
            {"minimax": min, "minavg": min, "gaps": max}.get(self.opponent) if isinstance(self.opponent, str) else None
        )
        return pick(v for _, v in opening) if pick else sum(c * v for c, v in opening)

    def value(self, board: int, piece: int) -> float:
        return self.values[self.boards.index(int(board))][piece]

    def best_action(self, board: int, piece: int) -> Placement | None:
        return self.policy[self.boards.index(int(board))][piece]


def solve(
    rules: Rules | None = None,
    /,
    *,
    discount: float = 0.9,
    tol: float = 1e-8,
    max_iter: int = 1000,
    opponent: Any = "random",
    player: Any = None,
    reward: Any = None,
    **rule_fields: Any,
) -> ReferenceSolution:
    """Value iteration (Jacobi: each sweep reads the previous sweep's values).

    ``V(b, p) = max over moves [reward(move) + discount * U(b')]``, 0 where no
    move fits (``-reward.loss`` with a loss, unless ``rules.top_out``), with
    ``U(b) = sum_q prob(q) V(b, q)`` for random pieces,
    ``min_q V(b, q)`` when an opponent gives them (``opponent="minimax"``), or
    ``V(b, opponent[b])`` for a given opponent (a dict board -> piece index).
    With ``opponent="minavg"`` the max over moves is a mean (a player placing
    at random) and ``U`` the min; with ``"gaps"`` a mean, ``U`` the max and
    the reward the holes created.  ``player``: ``"optimal"`` (the max),
    ``"random"`` (the mean) or a dict (board, piece index) -> placement
    number (that move).  Stops when no value changes by more than ``tol``.
    """
    rules = _rules(rules, rule_fields)
    _check_solver(discount, tol, max_iter, undiscounted=True)
    roles = _roles(rules, opponent, player, reward)
    given = player if roles.player == "given" else roles.player  # (whose moves keep a game going)
    if discount == 1 and surviving_nodes(rules, "random" if roles.opponent == "random" else "chosen", given):
        raise ValueError("discount=1: some play never ends, so the total reward is unbounded")
    if roles.opponent == "given" and not isinstance(opponent, dict):
        raise ValueError("opponent: the reference takes a given opponent as a dict {board: piece index}")
    if roles.player == "given" and not isinstance(player, dict):
        raise ValueError("player: the reference takes a given player as a dict {(board, piece): placement number}")
    boards = nodes(rules)
    index = {b: i for i, b in enumerate(boards)}
    n_pieces = len(rules.pieces)
    table = [
        [
            [
                (
                    index[after],
                    move_reward(
                        rules,
                        board_of(b),
                        board_of(after),
                        rows,
                        roles.opponent,
                        roles.reward,
                        filled_cells(rules, board_of(b), m),
                        m,
                    ),
                    m,
                )
                for m, after, rows in node_moves(rules, b, p)
            ]
            for p in range(n_pieces)
        ]
        for b in boards
    ]
    dead = dead_value(rules, roles.reward)
    if roles.player == "given":  # keep only the given move
        if rules.hold:
            raise ValueError("player: the reference takes no given player with hold")
        table = [
            [[m for m in row if m[2].index == player[(b, p)]] for p, row in enumerate(rows)]
            for b, rows in zip(boards, table)
        ]
    label = opponent if roles.opponent == "given" else roles.opponent
    values = [[0.0] * n_pieces for _ in boards]
    iterations, residual = 0, float("inf")
    while iterations < max_iter and residual > tol:
        expected = [board_value(rules, row, label, b) for row, b in zip(values, boards)]
        new = [
            [
                state_value([r + discount * expected[j] for j, r, _ in table[i][p]], roles.player, dead)
                for p in range(n_pieces)
            ]
            for i in range(len(boards))
        ]
        residual = max(abs(a - b) for row_new, row in zip(new, values) for a, b in zip(row_new, row))
        values = new
        iterations += 1
    expected = [board_value(rules, row, label, b) for row, b in zip(values, boards)]
    policy = []
    for i in range(len(boards)):
        row = []
        for p in range(n_pieces):
            options = [] if roles.player == "random" else table[i][p]
            best = max(options, key=lambda m: m[1] + discount * expected[m[0]], default=None)
            row.append(None if best is None else best[2])
        policy.append(row)
    choices = None
    if roles.opponent == "given":
        choices = dict(opponent)
    elif roles.opponent != "random":
        pick = max if roles.opponent == "gaps" else min
        choices = {b: pick(range(n_pieces), key=lambda p: row[p]) for b, row in zip(boards, values)}
    return ReferenceSolution(
        rules, discount, boards, values, policy, iterations, residual, residual <= tol, label, choices
    )


def board_value(rules: Rules, piece_values: list[float], opponent: Any, board: int | None = None) -> float:
    """A board's value before its next piece: the mean over the rules'
    probabilities; the minimum when an opponent gives the piece (``"minimax"``,
    ``"minavg"``), the maximum for ``"gaps"``; the given piece's value for a
    dict opponent (board -> piece index)."""
    if isinstance(opponent, dict):
        return piece_values[opponent[board]]
    # (with a bag, only the pieces left in it can come)
    chances = [draw_chance(rules, board, p) for p in range(len(piece_values))]
    if opponent in ("minimax", "minavg"):
        return min(v for v, q in zip(piece_values, chances) if q > 0)
    if opponent == "gaps":
        return max(v for v, q in zip(piece_values, chances) if q > 0)
    return sum(q * v for q, v in zip(chances, piece_values))


def state_value(move_values: list[float], player: str = "optimal", dead: float = 0.0) -> float:
    """A (board, piece) state's value from its moves' values: the best one
    (the given one, left alone), or their mean for a player placing at
    random (``"random"``, as in the min-avg and gap models); ``dead`` if none."""
    if not move_values:
        return dead
    if player == "random":
        return sum(move_values) / len(move_values)
    return max(move_values)


def expected_points(rules: Rules, player="random", opponent="random", n_placements: int = 10, opening=None) -> float:
    """Expected points of ``n_placements`` placements from the empty board, by
    backward induction over every reachable board (undiscounted).

    ``U_0 = 0`` and ``U_k(b) = sum over pieces p of w(b, p) * Q_k(b, p)``,
    where ``w`` is the rules' probability of p (``opponent="random"``), or 1
    for the piece ``opponent[b]`` and 0 for the others (``opponent`` a dict
    from board to piece index); ``Q_k(b, p) = score(rows) + U_{k-1}(after)``
    for the move with placement number ``player[(b, p)]`` (``player`` a dict
    from (board, piece index) to placement number), or the mean of that over
    the legal moves (``player="random"``); 0 where p fits nowhere.  With
    ``opponent="best_response"``, ``U_k(b) = min over p of Q_k(b, p)``: the pieces
    chosen to leave the player the fewest points over the placements left.
    With previews, hold or a bag the rows are nodes (see :func:`nodes`); a
    game starts on the opening drawn (the bag full), or on ``opening`` where
    given; ``"best_response"`` opens with the worst node.  A hold (player
    ``"hold"``) counts no placement."""
    if isinstance(n_placements, bool) or not isinstance(n_placements, int) or n_placements < 1:
        raise ValueError(f"n_placements must be an integer >= 1, got {n_placements!r}")
    if player != "random" and not isinstance(player, dict):
        raise ValueError(f"player must be 'random' or a dict {{(board, piece): placement number}}, got {player!r}")
    if opponent not in ("random", "best_response") and not isinstance(opponent, dict):
        raise ValueError(f"opponent must be 'random', 'best_response' or a dict {{board: piece}}, got {opponent!r}")
    boards = sorted(nodes(rules), key=lambda node: not node[3]) if rules.hold else nodes(rules)  # locked first
    # For each board, the pieces it may get with their weights, and for each
    # piece the player's moves: [(points, after, hold)], one move or all of them.
    options = {}
    for b in boards:
        can_come = [p for p in range(len(rules.pieces)) if draw_chance(rules, b, p) > 0]
        if opponent == "random":
            given = [(p, draw_chance(rules, b, p)) for p in can_come]
        elif opponent == "best_response":
            given = [(p, 1.0) for p in can_come]
        else:
            given = [(opponent[b], 1.0)]
        row = []
        for p, weight in given:
            moves = node_moves(rules, b, p)
            legal = [(rules.line_scores[rows], after, "hold" if m == "hold" else m.index) for m, after, rows in moves]
            if player != "random" and legal:
                legal = [move for move in legal if move[2] == player[(b, p)]]
                if len(legal) != 1:
                    raise ValueError(f"player: placement {player[(b, p)]} is not legal for piece {p} on board {b}")
            row.append((weight, [(points, after, number == "hold") for points, after, number in legal]))
        options[b] = row
    values = {b: 0.0 for b in boards}

    def piece_value(chosen, values, new) -> float:
        worth = [points + (new[after] if hold else values[after]) for points, after, hold in chosen]
        return sum(worth) / len(worth) if worth else 0.0

    for _ in range(n_placements):
        new: dict = {}
        for b in boards:  # (locked nodes first: a hold reads its node's value of this step)
            worth = [weight * piece_value(chosen, values, new) for weight, chosen in options[b]]
            new[b] = min(worth) if opponent == "best_response" else sum(worth)
        values = new
    if opening is not None:
        return values[opening]
    if opponent == "best_response":
        return min(values[b] for b in boards if start_chance(rules, b) > 0)
    return sum(start_chance(rules, b) * values[b] for b in boards if start_chance(rules, b) > 0)


def minimize(rules: Rules, opponent: Any = "random", player: Any = None, reward: Any = None, zero_states: bool = True):
    """Coarsest partition of the states (and boards) into groups of equal
    value, by plain refinement: start from one group each, and give every
    state the signature (its group, its moves' (move reward, next board's
    group)), every board (its group, its pieces' (piece weight, state's
    group)), until the number of groups stops growing.

    Moves are compared as a set for an optimal player (a maximum), as a sorted
    multiset for a random one (a mean); pieces as a multiset of (probability,
    group) when drawn, as a set of groups when an opponent gives them.  With
    ``zero_states``, every state worth zero under any play (no reward
    reachable, and a state without moves worth zero) starts, and stays, in
    one group of its own; without, the result is the coarsest strong
    bisimulation of the game with its rewards.

    Returns ``(state_groups, board_groups)``: dicts ``(board, piece) -> int``
    and ``board -> int``, groups numbered by first appearance.
    """
    roles = _roles(rules, opponent, player, reward)
    if roles.opponent == "given" or roles.player == "given":
        raise ValueError("minimize: opponent and player must be named models, not given policies")
    boards = nodes(rules)
    n_pieces = len(rules.pieces)
    table = {
        (b, p): [
            (
                move_reward(
                    rules,
                    board_of(b),
                    board_of(after),
                    rows,
                    roles.opponent,
                    roles.reward,
                    filled_cells(rules, board_of(b), m),
                    m,
                ),
                after,
            )
            for m, after, rows in node_moves(rules, b, p)
        ]
        for b in boards
        for p in range(n_pieces)
    }
    moves_as_set = roles.player == "optimal"
    pieces_as_set = roles.opponent != "random"

    def weight(b, p) -> float:
        return 0.0 if pieces_as_set else draw_chance(rules, b, p)

    absent = {(b, p) for b in boards for p in range(n_pieces) if draw_chance(rules, b, p) == 0}
    zero = _zero_states(table, boards, n_pieces, dead_value(rules, roles.reward), absent) if zero_states else set()

    def collect(items):
        return tuple(sorted(set(items))) if moves_as_set else tuple(sorted(items))

    state_group = {s: 0 for s in table}
    board_group = {b: 0 for b in boards}
    while True:
        state_sig = {
            s: (state_group[s], "zero" if s in zero else collect((r, board_group[a]) for r, a in table[s]))
            for s in table
        }
        new_states = _number(state_sig, list(table))
        board_sig = {}
        for b in boards:
            # (a piece the bag lacks cannot come: one entry alike on every board)
            pieces = [
                (weight(b, p), new_states[(b, p)]) if draw_chance(rules, b, p) > 0 else (0.0, -1)
                for p in range(n_pieces)
            ]
            board_sig[b] = (board_group[b], tuple(sorted(set(pieces) if pieces_as_set else pieces)))
        new_boards = _number(board_sig, boards)
        if len(set(new_states.values())) == len(set(state_group.values())) and len(set(new_boards.values())) == len(
            set(board_group.values())
        ):
            return new_states, new_boards
        state_group, board_group = new_states, new_boards


def _zero_states(table: dict, boards: list, n_pieces: int, dead: float, absent: set) -> set:
    """The states worth zero under any play: remove, until none is left to
    remove, every state with a rewarding move, a move to a board one of whose
    states is removed, or no move at all when such a state is worth ``dead`` != 0
    (unless its piece cannot come, ``absent``: a bag lacks it)."""
    zero = {s for s, moves in table.items() if moves or dead == 0 or s in absent}
    while True:
        zero_boards = {b for b in boards if all((b, p) in zero for p in range(n_pieces))}
        keep = {s for s in zero if all(r == 0 and a in zero_boards for r, a in table[s])}
        if keep == zero:
            return zero
        zero = keep


def _number(signatures: dict, order: list) -> dict:
    """Group number of each key: equal signatures, equal numbers, by first appearance in ``order``."""
    first: dict = {}
    return {key: first.setdefault(signatures[key], len(first)) for key in order}


@dataclass
class ReferenceRate:
    """Result of :func:`long_run_rate` (the fields of :class:`babytris.Rate`).

    ``kernel``: the set of boards of the survival kernel; ``rank[b]``: for
    the other boards, the placements the player surely still makes;
    ``policy[i][p]``: the placement played with piece index p on board
    ``boards[i]`` (None where it fits nowhere); ``piece_choices[i]``: the
    opponent's piece index on it (``"minimax"``; else None).
    """

    rules: Rules
    opponent: str
    gain: float
    lower: float
    upper: float
    iterations: int
    converged: bool
    survives: bool
    survival: float
    guaranteed_placements: int | None
    boards: list[int]
    kernel: set
    rank: dict
    policy: list[list[Placement | None]]
    piece_choices: list[int] | None


def long_run_rate(
    rules: Rules | None = None,
    /,
    *,
    opponent: str = "random",
    tol: float = 1e-9,
    max_iter: int = 100_000,
    **rule_fields: Any,
) -> ReferenceRate:
    """The optimal average points per placement from the empty board, by the
    method of :func:`babytris.long_run_rate`, in dicts and loops.

    1. The survival kernel S: pass after pass, drop the boards where some
       piece has no move into the boards still kept; a board's rank is the
       pass that dropped it.
    2. On S, with the moves staying in S: relative value iteration
       ``U <- U + tau (T U - U)`` (tau = 0.7, Jacobi), ``T U(b)`` the mean
       over the pieces (or the least, ``opponent="minimax"``) of the best
       ``points + U(b')``.  ``lower``: the least ``T U - U`` over the boards
       the greedy moves reach from the start whatever the pieces; ``upper``:
       the greatest over S, or against the opponent, if less, over the
       boards reached when it gives its least valuable piece and the player
       moves anyhow (every 8th iteration and the last, while the bounds are
       more than the tolerance apart).  The start: the empty board, or when it is off S the
       boards of S first entered from it.  Until
       ``upper - lower <= tol`` (``tol / 2`` with the empty board off S).
    3. Random pieces: the largest chance x of reaching S, iterated up from
       0 and down from 1 off S until they are ``tol / (2 max(1, upper))``
       apart; with the empty board off S the bounds are ``x_lo * lower``
       and ``x_hi * upper``.  With the empty board off S against the
       opponent, or S empty, the rate is 0 (the iteration of 2, from the
       boards of S first entered, then serves only the policy on S).
    4. The policy: on S the greedy move (first of equals); off S the move
       to the board of greatest chance (random pieces), then of greatest
       rank.  The opponent's piece: on S the least valuable, off S the one
       whose best move is least so compared.
    """
    rules = _rules(rules, rule_fields)
    if rules.preview or rules.hold or rules.randomizer == "bag":
        raise ValueError("long_run_rate: games with previews, hold or a bag are not supported yet")
    start = canonical(rules, rules.start)
    if opponent not in ("random", "minimax"):
        raise ValueError(f"opponent must be 'random' or 'minimax', got {opponent!r}")
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 < tol < float("inf"):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or not 1 <= max_iter <= 10**7:
        raise ValueError(f"max_iter must be an integer in [1, 10**7], got {max_iter!r}")
    if min(rules.line_scores) < 0:
        raise ValueError(f"line_scores must all be >= 0 for the long-run rate, got {rules.line_scores}")
    tau = 0.7
    worst = opponent == "minimax"
    n_pieces = len(rules.pieces)
    scores = rules.line_scores
    boards = reachable_boards(rules)
    table = {b: [moves(rules, b, p) for p in range(n_pieces)] for b in boards}

    # 1. The kernel and the ranks.
    kernel = set(boards)
    rank: dict[int, int] = {}
    passes = 0
    while True:
        doomed = [b for b in kernel if any(not any(after in kernel for _, after, _ in row) for row in table[b])]
        if not doomed:
            break
        for b in doomed:
            rank[b] = passes
        kernel -= set(doomed)
        passes += 1
    survives = start in kernel

    # 2. Relative value iteration on the kernel.
    iterations, lower, upper, survival = 0, 0.0, 0.0, float(survives)
    greedy: dict[tuple[int, int], Any] = {}  # (board, piece) -> (placement, next board)
    least_piece: dict[int, int] = {}
    chance = None
    if kernel:
        if survives:
            seeds = [start]
        else:  # the boards of S first entered from the start board
            seen, queue = {start}, deque([start])
            while queue:
                b = queue.popleft()
                for row in table[b]:
                    for _, after, _ in row:
                        if after not in seen:
                            seen.add(after)
                            if after not in kernel:
                                queue.append(after)
            seeds = sorted(seen & kernel)
        inside = {
            b: [[(m, after, scores[rows]) for m, after, rows in row if after in kernel] for row in table[b]]
            for b in kernel
        }
        U = {b: 0.0 for b in kernel}
        target = tol if survives else tol / 2
        while True:
            iterations += 1
            delta = {}
            for b in kernel:
                total, least = 0.0, float("inf")
                for p, kept in enumerate(inside[b]):
                    best, arg = -float("inf"), None
                    for m, after, points in kept:
                        if points + U[after] > best:
                            best, arg = points + U[after], (m, after)
                    greedy[b, p] = arg
                    if best < least:
                        least, least_piece[b] = best, p
                    total = total + rules.probabilities[p] * best
                delta[b] = (least if worst else total) - U[b]
            lower = min(delta[b] for b in _closure(seeds, lambda b: [greedy[b, p][1] for p in range(n_pieces)]))
            upper = max(delta.values())
            if worst and upper - lower > target and (iterations % 8 == 0 or iterations >= max_iter):
                upper = min(
                    upper,
                    max(
                        delta[b]
                        for b in _closure(seeds[:1], lambda b: [after for _, after, _ in inside[b][least_piece[b]]])
                    ),
                )
            if upper - lower <= target or iterations >= max_iter:
                break
            shift = tau * delta[seeds[0]]
            U = {b: U[b] + (tau * delta[b] - shift) for b in kernel}

        # 3. The chance of reaching the kernel.
        if not worst:
            x_lo = {b: 1.0 if b in kernel else 0.0 for b in boards}
            x_hi = {b: 1.0 for b in boards}
            outside = [b for b in boards if b not in kernel]
            for _ in range(max_iter):

                def step(x):
                    return {
                        b: sum(
                            q * max((x[after] for _, after, _ in row), default=0.0)
                            for q, row in zip(rules.probabilities, table[b])
                        )
                        for b in outside
                    }

                new_lo, new_hi = step(x_lo), step(x_hi)
                x_lo.update(new_lo)
                x_hi.update(new_hi)
                if max((x_hi[b] - x_lo[b] for b in outside), default=0.0) <= tol / (2 * max(1.0, upper)):
                    break
            chance = x_lo
            if not survives:
                lower, upper = x_lo[start] * max(0.0, lower), x_hi[start] * max(0.0, upper)
                survival = (x_lo[start] + x_hi[start]) / 2
        elif not survives:
            lower = upper = 0.0

    # 4. The policy.
    policy, pieces = [], []
    for b in boards:
        if b in kernel:
            policy.append([greedy[b, p][0] for p in range(n_pieces)])
            pieces.append(least_piece[b])
            continue
        row_out, keys = [], []

        def key(move):  # the board of greatest chance, then of greatest rank
            return chance[move[1]] if chance else 0.0, rank.get(move[1], float("inf"))

        for row in table[b]:
            chosen = max(row, key=key, default=None)  # max keeps the first of equals
            row_out.append(None if chosen is None else chosen[0])
            keys.append((-1.0, -1) if chosen is None else key(chosen))
        policy.append(row_out)
        pieces.append(min(range(n_pieces), key=keys.__getitem__))
    gain = (lower + upper) / 2
    return ReferenceRate(
        rules,
        opponent,
        gain,
        lower,
        upper,
        iterations,
        upper - lower <= tol,
        survives,
        survival,
        None if survives else rank[start],
        boards,
        kernel,
        rank,
        policy,
        pieces if worst else None,
    )


def _closure(seeds, successors) -> set:
    """The boards reachable from ``seeds`` (themselves included) along ``successors(board)``."""
    seen = set(seeds)
    queue = deque(seeds)
    while queue:
        for after in successors(queue.popleft()):
            if after not in seen:
                seen.add(after)
                queue.append(after)
    return seen
