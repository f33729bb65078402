"""Rewards other than points: weighted board features (the robust player's
reward), the cells the no-holes rule fills, a cost for losing, and the holes a
placement creates (the gap opponent's objective)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..game.rules import Rules
from ..game.validation import check_bool, check_number
from . import _moves
from ._layers import popcounts
from .placements import lost_board, placement_table
from .transitions import HOLD_MOVE, Transitions

__all__ = [
    "Reward",
    "heights",
    "holes",
    "move_rewards",
    "holes_created",
    "holes_filled",
    "check_reward",
    "landed_boards",
]


@dataclass(frozen=True)
class Reward:
    """A placement's reward as a weighted sum of features:

        ``lines * lines_cleared - height * max_height + score * points - gaps * holes
        - new_holes * cells_filled``

    and a cost for losing the game, ``loss`` (>= 0).

    ``lines_cleared`` and ``points`` are those of the placement (its full
    rows are counted as the piece lands, before they are cleared); ``max_height``
    (the highest filled row, 0 for an empty board) and ``holes`` (empty cells
    under a filled cell of their column) are measured on the board after the
    placement and its clear, the board the next piece falls on, or with
    ``before_clear=True`` on the board with the piece landed and its full
    rows still in place (as the Baby Tetris course projects measure them).
    ``cells_filled`` are the holes the placement would have made: the empty
    cells under the landed piece that ``Rules(no_holes=True)`` fills (only
    with those rules).

    ``loss`` is paid when the game ends: a state where the piece to place
    fits nowhere is worth ``-loss`` (instead of 0) to the player, whatever the
    opponent; with ``Rules(top_out=True)`` the game ends by a move instead, a
    placement that tops out, whose reward is then ``score * line_scores[0] -
    loss`` (it clears no row; no board features: the game is over), and the
    lost board after it is worth 0.

    ``Reward()`` (score 1, the rest 0) is the plain game.  The weights of the
    robust-player study are ``Reward(lines=0, height=1, score=4, gaps=1.5)``
    and the like; No-Holes Tetris (:func:`babytris.solvers.models.no_holes_tetris`)
    is ``Reward(new_holes=1, loss=m)`` with line scores 0, 1, 2, ... (points = lines).
    """

    lines: float = 0.0
    height: float = 0.0
    score: float = 1.0
    gaps: float = 0.0
    new_holes: float = 0.0
    loss: float = 0.0
    before_clear: bool = False

    def __post_init__(self) -> None:
        for name in ("lines", "height", "score", "gaps", "new_holes", "loss"):
            object.__setattr__(self, name, check_number(f"Reward.{name}", getattr(self, name)))
        object.__setattr__(self, "before_clear", check_bool("Reward.before_clear", self.before_clear))
        if self.loss < 0:
            raise ValueError(f"Reward.loss must be a finite number >= 0 (a cost), got {self.loss!r}")

    def __repr__(self) -> str:
        # new_holes, loss and before_clear only when set, as most rewards leave them alone
        extra = "".join(
            f", {name}={getattr(self, name)!r}" for name in ("new_holes", "loss", "before_clear") if getattr(self, name)
        )
        return f"Reward(lines={self.lines!r}, height={self.height!r}, score={self.score!r}, gaps={self.gaps!r}{extra})"

    @property
    def is_points(self) -> bool:
        """Whether this is the plain game's reward (points only, weight 1)."""
        return self.scores_points and self.loss == 0.0

    @property
    def scores_points(self) -> bool:
        """Whether every placement that does not top out scores its points
        (weight 1, no other feature); ``loss`` may still be set."""
        return (self.lines, self.height, self.score, self.gaps, self.new_holes) == (0.0, 0.0, 1.0, 0.0, 0.0)

    @property
    def measures_boards(self) -> bool:
        """Whether the reward weighs the board's height or holes."""
        return bool(self.height or self.gaps)

    def dead_value(self, rules: Rules) -> float:
        """The value of a state where the piece fits nowhere: ``-loss``, or 0
        with ``rules.top_out`` (only the lost board has such states, and the
        move that led there paid the loss)."""
        return 0.0 if rules.top_out else -self.loss


def check_reward(reward: Reward | None, rules: Rules) -> None:
    """Raise ``ValueError`` if ``reward`` weighs a feature ``rules`` lack, or
    measures a landed board no_holes would fill."""
    if reward is not None and reward.before_clear and rules.no_holes:
        raise ValueError(
            "reward: Reward.before_clear measures the board as the piece lands, which Rules(no_holes=True) "
            "fills at once; use before_clear=False with no_holes"
        )
    if reward is not None and reward.new_holes and not rules.no_holes:
        raise ValueError(
            f"reward: Reward.new_holes weighs the cells Rules(no_holes=True) fills, and these rules "
            f"keep holes (no_holes=False); got new_holes={reward.new_holes!r} (use gaps)"
        )


def heights(boards: np.ndarray, width: int, height: int) -> np.ndarray:
    """Highest filled row (1-based; 0 if empty) of each board, int64 array."""
    boards = np.asarray(boards, dtype=np.uint64)
    full_row = np.uint64((1 << width) - 1)
    out = np.zeros(boards.shape, dtype=np.int64)
    for row in range(height):
        filled = ((boards >> np.uint64(row * width)) & full_row) != 0
        out[filled] = row + 1
    return out


def holes(boards: np.ndarray, width: int, height: int) -> np.ndarray:
    """Empty cells lying under a filled cell of their column, per board (int64
    array): the cells of the board smeared down (every cell at or below a
    filled one filled) less its own."""
    boards = np.asarray(boards, dtype=np.uint64)
    flat = np.ascontiguousarray(boards.ravel())
    smeared = flat.copy()
    step = width
    while step < width * height:  # shifts of 1, 2, 4, ... rows: each cell ends as the or of those above it
        smeared |= smeared >> np.uint64(step)
        step *= 2
    out = popcounts(smeared).astype(np.int64) - popcounts(flat)
    return out.reshape(boards.shape)


#: Moves per pass when a reward is computed for every move: bounds the
#: temporaries (a few int64 arrays of this length) on tables of 10**8 moves.
CHUNK = 1 << 22


def _chunks(transitions: Transitions, moves: np.ndarray | None):
    """``(moves, states)`` pieces: consecutive ranges of at most CHUNK moves
    covering every move (``moves`` None), or ``moves`` themselves at once;
    ``states`` the state (int64) each move belongs to."""
    t = transitions
    if moves is not None:
        moves = np.asarray(moves, dtype=np.int64)
        yield moves, np.searchsorted(t.offsets, moves, side="right").astype(np.int64) - 1
        return
    for lo in range(0, t.n_moves, CHUNK):
        hi = min(lo + CHUNK, t.n_moves)
        first = int(np.searchsorted(t.offsets, lo, side="right")) - 1  # the state holding move lo
        end = int(np.searchsorted(t.offsets, hi, side="left"))  # the first state from move hi on
        bounds = np.clip(t.offsets[first : end + 1], lo, hi)
        yield np.arange(lo, hi, dtype=np.int64), np.repeat(np.arange(first, end, dtype=np.int64), np.diff(bounds))


def _per_move(transitions: Transitions, moves: np.ndarray | None, compute) -> np.ndarray:
    """``compute(moves, states)`` over every move in chunks (``moves`` None), or over ``moves``."""
    if moves is not None:
        return compute(*next(_chunks(transitions, moves)))
    parts = [compute(m, s) for m, s in _chunks(transitions, None)]
    return np.concatenate(parts) if parts else compute(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def topped_out(transitions: Transitions, moves: np.ndarray | None = None) -> np.ndarray:
    """Whether each move (every move, or those numbered ``moves``) tops out:
    leads to the lost board (bool array; all False without ``rules.top_out``)."""
    t = transitions
    nxt = t.next_board if moves is None else t.next_board[moves]
    if not t.rules.top_out:
        return np.zeros(nxt.shape, dtype=bool)
    return t.boards[nxt] == np.uint64(lost_board(t.rules))


def holes_filled(transitions: Transitions, moves: np.ndarray | None = None) -> np.ndarray:
    """The cells ``rules.no_holes`` fills under the piece for each move (every
    move, or those numbered ``moves``), int64: the cells after it and the
    rows it cleared, less the cells before and the piece's own; 0 for moves
    that top out or put a piece on hold, and without ``no_holes``."""
    t, rules = transitions, transitions.rules
    if not rules.no_holes:
        return np.zeros(t.n_moves if moves is None else len(moves), dtype=np.int64)
    if moves is None and not rules.hold:
        cells = popcounts(t.boards).astype(np.float64)
        out = _moves.move_values(
            t.offsets,
            t.next_board,
            t.lines,
            -_placed_cells(t, cells),
            cells,
            rules.width * np.arange(len(rules.line_scores), dtype=np.float64),
            _lost_rows(t),
            0.0,
        )
        return out.astype(np.int64)
    return _per_move(t, moves, _filler(t))


def _placed_cells(t: Transitions, cells: np.ndarray) -> np.ndarray:
    """Per state (not with hold, where a row may place either of two pieces):
    the cells of its board plus those of the piece it places (float64)."""
    rules = t.rules
    sizes = np.array([p.size for p in rules.pieces], dtype=np.float64)
    node, drawn = np.divmod(np.arange(t.n_states, dtype=np.int64), rules.n_pieces)
    placed = drawn
    if rules.preview and t.queues is not None:  # with a preview the piece placed is the queue's first
        placed = t.queues[node] // rules.n_pieces ** (rules.preview - 1)
    return cells[node] + sizes[placed]


def _lost_rows(t: Transitions) -> np.ndarray | None:
    """uint8 per row: 1 on the lost board (``rules.top_out``); None without top_out."""
    if not t.rules.top_out:
        return None
    return (t.boards == np.uint64(lost_board(t.rules))).astype(np.uint8)


def _filler(t: Transitions):
    """``compute(moves, states)`` of :func:`holes_filled` in numpy (with its per-board counts made once)."""
    rules = t.rules
    cells = popcounts(t.boards).astype(np.int64)
    sizes = np.array([p.size for p in rules.pieces] + [0], dtype=np.int64)  # [-1]: a hold places nothing
    first = placement_table(rules).number_first

    def compute(moves: np.ndarray, states: np.ndarray) -> np.ndarray:
        node = states // rules.n_pieces
        placement = t.placement[moves]
        if rules.hold:
            piece = np.searchsorted(first, placement, side="right") - 1
            piece[placement == HOLD_MOVE] = -1
        elif rules.preview and t.queues is not None:  # with a preview: the queue's first
            piece = t.queues[node] // rules.n_pieces ** (rules.preview - 1)
        else:
            piece = states % rules.n_pieces
        out = cells[t.next_board[moves]] + rules.width * t.lines[moves] - cells[node] - sizes[piece]
        out[topped_out(t, moves)] = 0
        return out

    return compute


def landed_boards(transitions: Transitions, moves: np.ndarray, states: np.ndarray) -> np.ndarray:
    """The board of each move with its piece landed, before full rows are
    cleared (uint64, one per move; the board itself for a move that puts a
    piece on hold).  The piece drops from above to rest on the highest cell
    below it, as the engine drops it (moves are legal, so it ends inside)."""
    t, rules = transitions, transitions.rules
    table = placement_table(rules)
    node = states // rules.n_pieces
    boards = t.boards[node]
    placement = t.placement[moves].astype(np.int64)
    held = np.zeros(len(moves), dtype=bool)
    if rules.hold:  # placement numbers are global (over all pieces)
        held = placement == HOLD_MOVE
        placement = np.where(held, 0, placement)
        piece = np.searchsorted(table.number_first, placement, side="right") - 1
        placement = placement - table.number_first[piece]
    elif rules.preview and t.queues is not None:  # with a preview the piece placed is the queue's first
        piece = t.queues[node] // rules.n_pieces ** (rules.preview - 1)
    else:
        piece = states % rules.n_pieces
    k, locked = table.shapes(piece, placement)
    masks, spans = table.masks[k], table.rows[k].astype(np.int64)
    rest = np.zeros(len(moves), dtype=np.uint64)
    for row in range(rules.height):
        shift = np.uint64(row * rules.width)
        hit = (row <= rules.height - spans) & ((boards & (masks << shift)) != 0)
        rest[hit] = row + 1
    if table.soft:  # the piece locked where it was moved to (or, topping out, on the board's top)
        rest = np.minimum(locked, rules.height - spans).astype(np.uint64)
    out = boards | (masks << (rest * np.uint64(rules.width)))
    out[held] = boards[held]
    return out


def move_rewards(transitions: Transitions, reward: Reward, moves: np.ndarray | None = None) -> np.ndarray:
    """Each move's reward under ``reward`` (float64 array, one per move, or
    per move numbered in ``moves``)."""
    t, rules = transitions, transitions.rules
    per_lines = reward.lines * np.arange(len(rules.line_scores)) + reward.score * np.asarray(rules.line_scores)
    landed = reward.before_clear and reward.measures_boards
    after = None  # per board, then per move: far fewer boards than moves
    if reward.measures_boards and not landed and (moves is None or len(moves) > t.n_boards):
        after = reward.height * heights(t.boards, rules.width, rules.height) + reward.gaps * holes(
            t.boards, rules.width, rules.height
        )
    filling = bool(reward.new_holes and rules.no_holes)
    final = reward.score * rules.line_scores[0] - reward.loss  # a move that tops out
    if moves is None and not rules.hold and not landed:
        # In one compiled pass: a term per state, per board after, per rows cleared.
        per_state, per_row = np.zeros(t.n_states), np.zeros(t.n_boards)
        if after is not None:
            per_row -= after
        if filling:  # - new_holes * (cells after + width * lines - cells before - piece)
            cells = popcounts(t.boards).astype(np.float64)
            per_state += reward.new_holes * _placed_cells(t, cells)
            per_row -= reward.new_holes * cells
            per_lines = per_lines - reward.new_holes * rules.width * np.arange(len(per_lines))
        return _moves.move_values(
            t.offsets,
            t.next_board,
            t.lines,
            per_state,
            per_row,
            np.ascontiguousarray(per_lines, dtype=np.float64),
            _lost_rows(t),
            final,
        )
    filled = _filler(t) if filling else None

    def compute(moves_: np.ndarray, states: np.ndarray) -> np.ndarray:
        out = per_lines[t.lines[moves_]]
        if landed:
            boards = landed_boards(t, moves_, states)
            out -= reward.height * heights(boards, rules.width, rules.height) + reward.gaps * holes(
                boards, rules.width, rules.height
            )
        elif reward.measures_boards:
            if after is not None:
                out -= after[t.next_board[moves_]]
            else:
                boards = t.boards[t.next_board[moves_]]
                out -= reward.height * heights(boards, rules.width, rules.height) + reward.gaps * holes(
                    boards, rules.width, rules.height
                )
        if filled is not None:
            out -= reward.new_holes * filled(moves_, states)
        if rules.top_out:
            out[topped_out(t, moves_)] = final
        return out

    return np.ascontiguousarray(_per_move(t, moves, compute), dtype=np.float64)


def holes_created(transitions: Transitions) -> np.ndarray:
    """Each move's holes after it less holes before (float64 array, one per
    move): the gap opponent's reward.  Negative where a clear removes holes;
    0 for a move that tops out (the lost board's empty rows are no holes)."""
    t, rules = transitions, transitions.rules
    count = holes(t.boards, rules.width, rules.height).astype(np.float64)
    lost = (t.boards == np.uint64(lost_board(rules))).view(np.uint8) if rules.top_out else None
    # In one compiled pass: holes of the board after, less those of the board before (one entry
    # per row for its P states: no copy of the counts P times).
    return _moves.move_values(
        t.offsets,
        t.next_board,
        t.lines,
        -count,
        count,
        np.zeros(int(t.lines.max(initial=0)) + 1),
        lost,
        0.0,
        states_per_entry=rules.n_pieces,
    )
