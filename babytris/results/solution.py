"""Solution: exact values and an optimal policy over the reachable states."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..engine.lazy import as_held, lazy_field
from ..engine.placements import canonical_boards, mirror_boards, placement_table
from ..engine.reward import Reward, move_rewards
from ..engine.transitions import HOLD_MOVE, Transitions
from ..game.bags import bag_before, bag_holding
from ..game.board import Board
from ..game.pieces import Piece, Placement
from ..game.rules import Rules
from . import saving, tables

__all__ = ["Solution"]


#: How the named optimising opponents value a board from its pieces' values.
_OPPONENT_EXTREMES = {"minimax": np.min, "best_response": np.min, "minavg": np.min, "gaps": np.max}


@dataclass(frozen=True, repr=False, eq=False)
class Solution:
    """Values and a greedy policy for every reachable (board, piece) state.

    Attributes:
        rules: the rule set solved.
        discount: the discount factor.
        values: float64 array ``(n_boards, n_pieces)``: ``values[i, p]`` is the
            optimal expected discounted score of board ``boards[i]`` with piece
            ``p`` to place, counting that placement's points.
        policy: int16 array ``(n_boards, n_pieces)``: the number of the best
            placement among the piece's placements (the lowest of those tied
            within :attr:`tie_slack`), -1 where none fits.  (A table that
            does not hold placement numbers, 4x7 and up, numbers the chosen
            moves when the policy is first read: :class:`ChosenMoves`.)
        iterations: greedy (Bellman optimality) sweeps run.
        residual: the largest change of a board's value in the last greedy sweep.
            :attr:`error_bound` turns it into a proven bound on the values' error.
        converged: whether ``residual <= tol``.
        residuals: float64 array ``(iterations,)``, the residual of each greedy sweep.
        evaluation_sweeps: int32 array ``(iterations,)``, the policy-evaluation
            sweeps run after each greedy sweep (modified policy iteration; with
            strategy iteration the opponent's exact evaluations and the sweeps
            after them; 0 for value iteration), or None (a file saved before
            they were kept).
        transitions: the reachable game graph that was solved.
        method: ``"vi"``, ``"mpi"``, ``"jacobi"`` or ``"strategy"``; ``tol``, ``max_iter`` as passed.
        opponent: who gives the next piece: ``"random"``, ``"minimax"``,
            ``"minavg"``, ``"gaps"`` or ``"given"`` (see :mod:`babytris.solvers.roles`).
        player: who places it: ``"optimal"``, ``"random"`` (no policy: the
            mean over the placements) or ``"given"`` (the policy was given).
        opponent_policy: int16 array ``(n_boards,)``, the piece index the
            opponent gives on each board (the first of those tied within
            :attr:`tie_slack`), or None when pieces are drawn at random.
        opening_row: with previews, the start row (opening queue) a given
            opponent Solution opens with, or an optimising opponent's chosen
            by a tie rule other than ``"first"``; else None (see :meth:`opening`).
        accelerated: whether the sweeps took Aitken jumps (None: a file
            saved before it was kept).
        ties, tie_seed: the rule the policies broke ties by (``"first"``,
            ``"last"``, ``"random"`` with its seed; see :mod:`babytris.solvers.ties`).
        reward: the :class:`~babytris.Reward` the values count, or None for
            points (with ``opponent="gaps"`` they count holes created).
        partition: the :class:`~babytris.solvers.minimize.Partition` whose quotient
            was solved (``solve(..., minimize=True)``), else None.
        seconds: wall time of ``{"enumerate": ..., "solve": ...}``.
        longest_game: at ``discount=1`` (the total reward until game over), a
            proven upper bound on the expected number of placements until game
            over from any row under any play of both sides, which bounds the
            values' error (see :attr:`error_bound` and
            :mod:`babytris.solvers.termination`); None where discounted.
        verified: False for a file read with ``load(..., verify=False)``,
            whose values, policy and table were believed, not recomputed
            (see :func:`babytris.load`); True otherwise.
    """

    rules: Rules
    discount: float
    values: np.ndarray
    policy: np.ndarray
    iterations: int
    residual: float
    converged: bool
    residuals: np.ndarray
    transitions: Transitions
    method: str
    tol: float
    max_iter: int
    seconds: dict = field(default_factory=dict)
    opponent: str = "random"
    player: str = "optimal"
    opponent_policy: np.ndarray | None = None
    reward: Reward | None = None
    partition: Any = None
    evaluation_sweeps: np.ndarray | None = None
    opening_row: int | None = None
    ties: str = "first"
    tie_seed: int | None = None
    accelerated: bool | None = None
    longest_game: float | None = None
    verified: bool = True

    def __post_init__(self) -> None:
        # Read-only, as the table's arrays are: what is derived from a
        # Solution once (the player's move rows, say) stays true of it.
        for name in ("values", "residuals", "opponent_policy", "evaluation_sweeps"):
            _freeze(getattr(self, name))
        _freeze(as_held(self, "policy"))

    @property
    def boards(self) -> np.ndarray:
        """uint64 array ``(n_boards,)`` of the boards reachable from the start
        (numbered as in :class:`~babytris.Transitions`: by layer, ascending within one)."""
        return self.transitions.boards

    @property
    def n_boards(self) -> int:
        """The number of rows of :attr:`values`: reachable boards, or with
        previews or hold (board, queue, hold slot) nodes."""
        return self.transitions.n_boards

    @property
    def n_states(self) -> int:
        """The number of states, ``n_boards * n_pieces``."""
        return self.values.size

    @property
    def board_values(self) -> np.ndarray:
        """float64 array ``(n_boards,)``: each board's value before its next
        piece: ``sum_p prob(p) V(b, p)`` for drawn pieces, else the value of
        the piece the opponent gives."""
        return self._board_value(self.values, self.opponent_policy, None)

    @property
    def start_value(self) -> float:
        """The value of the game from the start board (``rules.start``, the
        empty board by default), before its first piece.

        One convention, in every timing: where an opponent chooses the pieces
        (``"minimax"``, ``"minavg"``, ``"gaps"``) it chooses the first pieces
        too, with previews the queue the game opens with (see :meth:`opening`);
        drawn pieces, and the opening of a game against a given piece array,
        are averaged over their chances.  The value with the opening drawn at
        random is :attr:`start_value_first_drawn`."""
        rows, chances = self.opening()
        return float(self._row_values(rows) @ chances)

    @property
    def start_value_first_drawn(self) -> float:
        """The start value with the first piece drawn at random (with
        previews, every piece of the opening queue), the opponent choosing
        every piece after it.  Without an opponent, :attr:`start_value`."""
        rows, chances = self.transitions.start_nodes()
        if self.opponent_policy is None or self.rules.preview or self.rules.hold_start == "drawn":
            return float(self._row_values(rows) @ chances)
        # Without previews the first piece is the start board's own draw: its pieces' values by their chances.
        return float((self.values[rows] * self.transitions.draw_chances(rows)).sum(axis=1) @ chances)

    def opening_queue(self) -> tuple[int, ...] | None:
        """The queue this Solution's opponent opens with, where it chooses one.

        Returns:
            With previews, the piece indices (next first) of the one start
            row of :meth:`opening`; None where the opening is drawn, or
            without previews.
        """
        rows, _ = self.opening()
        if not self.rules.preview or len(rows) != 1 or len(self.transitions.start_nodes()[0]) < 2:
            return None
        return self.transitions.queue_of(int(rows[0]))

    def opening(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows a game starts on and their weights: the start board with
        each opening queue drawn (see :meth:`Transitions.start_nodes`), or, for
        an opponent that optimises (``"minimax"``, ``"minavg"``, ``"gaps"``),
        the one start row it opens with: the least (most, for ``"gaps"``)
        valuable, the first of those tied within :attr:`tie_slack`; against
        a given opponent Solution, that Solution's (:attr:`opening_row`).

        Returns:
            ``(rows, weights)``: int64 and float64 arrays (weights sum to 1).
        """
        rows, chances = self.transitions.start_nodes()
        if self.opening_row is not None:
            return np.array([self.opening_row], dtype=np.int64), np.ones(1)
        if self.opponent not in _OPPONENT_EXTREMES or len(rows) == 1:
            return rows, chances
        cost = self._row_values(rows) * (1.0 if _OPPONENT_EXTREMES[self.opponent] is np.min else -1.0)
        first = int(np.flatnonzero(cost <= cost.min() + self.tie_slack)[0])
        return rows[first : first + 1], np.ones(1)

    def _row_values(self, rows: np.ndarray) -> np.ndarray:
        """:attr:`board_values` of ``rows`` alone."""
        choice = None if self.opponent_policy is None else self.opponent_policy[rows]
        return self._board_value(self.values[rows], choice, rows)

    def _board_value(self, state_values: np.ndarray, choice: np.ndarray | None, rows: np.ndarray | None) -> np.ndarray:
        """The value of rows (all, or ``rows``) before their piece comes."""
        if choice is None and self.transitions.bags is None:
            return state_values @ np.asarray(self.rules.probabilities)
        chances = self.transitions.draw_chances(rows)
        if choice is None:
            return np.einsum("ij,ij->i", state_values, chances)
        # An optimising opponent's board is worth its least (or most) valuable
        # piece exactly, whichever of tied pieces the policy names (of the pieces that can come).
        if self.opponent in _OPPONENT_EXTREMES:
            fill = np.inf if _OPPONENT_EXTREMES[self.opponent] is np.min else -np.inf
            return _OPPONENT_EXTREMES[self.opponent](np.where(chances > 0, state_values, fill), axis=1)
        return state_values[np.arange(len(state_values)), choice]

    @cached_property  # (the values are read-only: computed once)
    def tie_slack(self) -> float:
        """The float by which two moves' (or pieces') values may differ and
        still count as tied: ``2 * discount * error_bound`` once converged (0
        otherwise), the most two equal values can differ by here.  :attr:`policy` and
        :attr:`opponent_policy` take the first of tied moves (lowest
        placement number) and pieces, so they do not depend on the method,
        the threads or the rounding on the way to the values."""
        return tie_slack(self.discount, self.residual, self.values, self.longest_game) if self.converged else 0.0

    @cached_property
    def error_bound(self) -> float | None:
        """A proven upper bound on ``max |values - V*|``, the distance of the
        values from the exact ones (V* the fixed point of the same game and
        discount), or None when undiscounted without :attr:`longest_game`.

        The last sweep of every method is a greedy one, and its board values
        ``W'`` come from ``W`` by an in-place Bellman sweep, a contraction of
        modulus ``discount`` (``g``) in the max norm whatever the order of
        the updates, the opponent's min or max and the player's max.  So
        ``|W - W*| <= residual / (1 - g)`` and every value written in that
        sweep is within ``g * residual / (1 - g)`` of the truth.  (Big tables
        solved by modified policy iteration keep board values alone while they
        sweep, see ``babytris.solvers.sweep_arrays.BOARD_VALUES_ONLY_STATES``: their residual
        is the board values' change alone, and their state values come from
        the last sweep's board values by one more backup, within ``g`` times
        that.)  A rounding allowance of 16 ulps per backup,
        ``16 * eps * max|values| / (1 - g)``, is added.

        Undiscounted (``discount == 1``, where every game ends), the sweep is
        no contraction in the max norm, but one in the norm weighted by the
        games' lengths: with N = :attr:`longest_game`, the values are within
        ``residual * N`` of the truth (the rounding allowance times N added;
        see :mod:`babytris.solvers.termination`).
        """
        return value_error_bound(self.discount, self.residual, self.values, self.longest_game)

    @property
    def piece_choices(self) -> np.ndarray | None:
        """int16 array ``(n_boards,)`` or None: the same as :attr:`opponent_policy`
        (deprecated: the one name for the opponent's piece per board)."""
        warnings.warn(
            "Solution.piece_choices is deprecated; use Solution.opponent_policy", DeprecationWarning, stacklevel=2
        )
        return self.opponent_policy

    def piece_policy(
        self,
        board: int | Board,
        bag: Sequence[int | str] | None = None,
        *,
        queue: Sequence[int | str] | None = None,
        held: int | str | None = None,
        locked: bool = False,
    ) -> str:
        """The name of the piece the opponent gives on ``board`` (the first of
        those tied); with previews ``queue`` is the pieces in sight before it
        (the opponent names the next piece before the placement); with hold,
        ``held`` and ``locked`` the slot; with a bag, ``bag`` is what the bag
        holds (see :meth:`index`)."""
        if self.opponent_policy is None:
            raise ValueError("piece_policy: pieces are drawn at random here (opponent='random')")
        piece = int(self.opponent_policy[self.index(board, queue=queue, held=held, locked=locked, bag=bag)])
        if self._flipped(board):  # the row is the mirror image's: its piece seen in the mirror
            piece = _mirror_images(self.rules)[piece]
        return self.rules.pieces[piece].name

    def save(self, path) -> None:
        """Write this solution to ``path`` (numpy ``.npz``); read it back with :func:`babytris.load`.
        The file is replaced atomically: a failed or interrupted save leaves the old one as it was."""
        fields = {name: getattr(self, name) for name in (*saving.FIELDS, *saving.SOLUTION_ARRAYS)}
        saving.save(fields, self.transitions, path)

    @property
    def nbytes(self) -> int:
        """The bytes held by the values, policy, residuals and move table."""
        policy = as_held(self, "policy").nbytes  # (the moves not yet numbered hold as many bytes)
        return self.values.nbytes + policy + self.residuals.nbytes + self.transitions.nbytes

    def index(
        self,
        board: int | Board,
        queue: Sequence[int | str] | None = None,
        held: int | str | None = None,
        locked: bool = False,
        bag: Sequence[int | str] | None = None,
    ) -> int:
        """Row of ``board`` (with previews: of ``board`` carrying ``queue``, the
        pieces known before the next draw; with hold: and ``held``, the held
        piece or None; with a bag: and ``bag``, the pieces in the bag the
        next piece is drawn from); ``KeyError`` if it is not reachable.  With
        ``rules.mirror`` a board may be stored as its mirror image, whose row
        lists the mirrored pieces: use :meth:`value` for piece-wise lookups."""
        if queue is not None:
            queue = tuple(self.rules.piece_index(q) for q in queue)
        if held is not None:
            if isinstance(held, bool):
                raise ValueError(f"held must be a piece (index or name) or None, got {held!r}")
            held = self.rules.piece_index(held)
        number = None if bag is None else bag_holding(self.rules, bag)
        return self.transitions.board_index(self._bits(board), queue, held, locked, number)

    def _state(self, board, piece, preview, held=None, locked=False, bag_left=None) -> tuple[int, int, int]:
        """``(row, column, piece placed)`` of the state where ``piece`` is to be
        placed on ``board`` with ``preview`` (the next pieces) in sight (and
        with a bag, ``bag_left`` left in it).  With
        ``rules.mirror`` a board stored as its mirror image takes the mirrored
        pieces (the piece placed too: :meth:`_placement` reflects it back)."""
        preview = tuple(preview)
        if len(preview) != self.rules.preview:
            raise ValueError(f"preview must name {self.rules.preview} pieces (rules.preview), got {preview!r}")
        pieces = [self.rules.piece_index(q) for q in (piece, *preview)]
        if held is not None:
            if isinstance(held, bool):
                raise ValueError(f"held must be a piece (index or name) or None, got {held!r}")
            held = self.rules.piece_index(held)
        bagged = self.rules.randomizer == "bag"
        if bagged != (bag_left is not None):
            raise ValueError(
                "bag_left: these rules deal from a bag: give the pieces left in it once the pieces in sight were "
                "drawn (() when the last draw emptied it)"
                if bagged
                else "bag_left: these rules draw pieces independently (randomizer='iid'); they have no bag"
            )
        left = [] if bag_left is None else [self.rules.piece_index(p) for p in bag_left]
        if self._flipped(board):
            images = _mirror_images(self.rules)
            pieces = [images[p] for p in pieces]
            left = [images[p] for p in left]
            held = None if held is None else images[held]
        # The row is the board with the pieces known before the last was drawn, and the bag it came from.
        number = bag_before(self.rules, left, pieces[-1]) if bagged else None
        queue = tuple(pieces[:-1]) if self.rules.preview else None
        row = self.transitions.board_index(self._bits(board), queue, held, locked, number)
        return row, pieces[-1], pieces[0]

    def _flipped(self, board) -> bool:
        """Whether ``rules.mirror`` stands ``board`` for its mirror image."""
        if not self.rules.mirror:
            return False
        bits = self._bits(board)
        return int(canonical_boards(np.array([bits], dtype=np.uint64), self.rules)[0]) != bits

    def value(
        self,
        board: int | Board,
        piece: int | str | Piece,
        preview: Sequence = (),
        held: int | str | None = None,
        locked: bool = False,
        bag_left: Sequence | None = None,
    ) -> float:
        """The optimal value of placing ``piece`` on ``board`` (0 if it fits nowhere,
        ``-reward.loss`` with a loss; see :class:`~babytris.Reward`),
        with ``preview`` (the next ``rules.preview`` pieces) in sight and, with
        hold, ``held`` in the slot (``locked``: just put there); with a bag
        (``rules.randomizer == "bag"``), ``bag_left`` the pieces left in it
        once the pieces in sight were drawn (``()`` when the last draw emptied it)."""
        row, column, _ = self._state(board, piece, preview, held, locked, bag_left)
        return float(self.values[row, column])

    def policy_table(self) -> Any:
        """One row per state: the board as text, the piece, the policy's
        rotation and column, the value (and more columns with soft moves,
        previews or hold; see :func:`babytris.results.tables.policy_array`).  A pandas
        ``DataFrame`` when pandas is installed, else a structured numpy array."""
        return tables.policy_table(self)

    def best_action(
        self,
        board: int | Board,
        piece: int | str | Piece,
        preview: Sequence = (),
        held: int | str | None = None,
        locked: bool = False,
        bag_left: Sequence | None = None,
    ) -> Placement | str | None:
        """An optimal :class:`Placement` (with hold, of the held piece for a
        swap, or ``"hold"`` to put the piece on hold), or None at game over;
        the arguments as for :meth:`value`."""
        if self.player == "random":
            raise ValueError(f"best_action: with opponent={self.opponent!r} the player places at random")
        row, column, placed = self._state(board, piece, preview, held, locked, bag_left)
        return self._placement(int(self.policy[row, column]), placed, self._flipped(board))

    def _placement(self, number: int, placed: int, flipped: bool = False) -> Placement | str | None:
        """A move's placement number as a Placement (``"hold"``; None for -1);
        ``flipped``: made on the mirror image of the board, so reflected back."""
        if number < 0:
            return None
        table = placement_table(self.rules)
        if number == HOLD_MOVE and self.rules.hold:
            return "hold"
        piece, k = placed, number
        if self.rules.hold:
            piece = int(np.searchsorted(table.number_first, number, side="right")) - 1
            k = number - int(table.number_first[piece])
        if flipped:
            piece, k = _mirrored_placement(self.rules, piece, k)
        return table.placements[piece][k]

    def action_values(
        self,
        board: int | Board,
        piece: int | str | Piece,
        preview: Sequence = (),
        held: int | str | None = None,
        locked: bool = False,
        bag_left: Sequence | None = None,
    ) -> dict:
        """Every legal move (a :class:`Placement`, or ``"hold"``) with its value
        ``points + discount * value after`` (``reward`` in place of points
        when one was given); the arguments as for :meth:`value`."""
        if self.opponent == "gaps":
            raise ValueError("action_values: with opponent='gaps' the values count holes, not the player's moves")
        t = self.transitions
        row, column, placed = self._state(board, piece, preview, held, locked, bag_left)
        s = row * self.rules.n_pieces + column
        after = self.board_values
        rows = range(t.offsets[s], t.offsets[s + 1])
        if self.reward is None:
            gain = [self.rules.line_scores[t.lines[e]] for e in rows]
        else:
            gain = move_rewards(t, self.reward, np.arange(t.offsets[s], t.offsets[s + 1])).tolist()
        flipped = self._flipped(board)
        numbers = t.state_placements(s).tolist()
        return {
            self._placement(number, placed, flipped): g + self.discount * float(after[t.next_board[e]])
            for e, g, number in zip(rows, gain, numbers)
        }

    def _bits(self, board: int | Board) -> int:
        if isinstance(board, Board):
            if (board.width, board.height) != (self.rules.width, self.rules.height):
                raise ValueError(
                    f"board is {board.width}x{board.height}, the rules are {self.rules.width}x{self.rules.height}"
                    + (
                        f" (Board.from_rows(rows, height={self.rules.height}) pads the rows given with empty ones "
                        "on top)"
                        if board.width == self.rules.width and board.height < self.rules.height
                        else ""
                    )
                )
            return board.bits
        if isinstance(board, bool) or not isinstance(board, (int, np.integer)):
            raise TypeError(f"board must be an int or a Board, got {type(board).__name__}")
        return int(board)

    def _repr_html_(self) -> str:
        """A summary and the start board, for Jupyter."""
        import html

        from ..game.svg import board_svg

        start = board_svg(Board(self.rules.start, self.rules.width, self.rules.height))
        return f"<div><p><code>{html.escape(repr(self))}</code></p>{start}</div>"

    def __repr__(self) -> str:
        r = self.rules
        status = "converged" if self.converged else "NOT converged"
        total = sum(self.seconds.values())
        roles = "".join(
            f" {name}={value}"
            for name, value, default in (("opponent", self.opponent, "random"), ("player", self.player, "optimal"))
            if value != default
        )
        if self.reward is not None:
            roles += f" {self.reward!r}"
        bound = "" if self.error_bound is None else f", error <= {self.error_bound:.1e}"
        return (
            f"<Solution {r.width}x{r.height} pieces={','.join(r.piece_names)} discount={self.discount}{roles}: "
            f"{self.n_boards:,} boards, start_value={self.start_value:.6f}, {self.iterations} iterations "
            f"({self.method}), residual={self.residual:.1e} {status}{bound}, {total:.3f}s"
            + ("" if self.verified else ", UNVERIFIED (loaded with verify=False)")
            + ">"
        )


def _mirror_images(rules: Rules) -> tuple[int, ...]:
    """Each piece's mirror image (index), for rules with ``mirror=True`` (closed under mirroring)."""
    images = rules.mirror_map()
    if images is None:  # Rules refuses mirror=True without the images; a hand-built object may not
        raise ValueError("rules: the pieces are not closed under mirroring")
    return images


def _mirrored_placement(rules: Rules, piece: int, k: int) -> tuple[int, int]:
    """The placement (piece, number) that is placement k of ``piece`` reflected left-right."""
    table = placement_table(rules)
    image = _mirror_images(rules)[piece]
    mask = int(
        mirror_boards(np.array([table.masks[table.first[piece] + k]], dtype=np.uint64), rules.width, rules.height)[0]
    )
    lo, hi = table.first[image], table.first[image + 1]
    (j,) = np.flatnonzero(table.masks[lo:hi] == np.uint64(mask))
    return image, int(j)


def _freeze(array: object) -> None:
    if isinstance(array, np.ndarray):
        array.flags.writeable = False


def value_error_bound(
    discount: float, residual: float, values: np.ndarray, longest_game: float | None = None
) -> float | None:
    """:attr:`Solution.error_bound` of values whose last greedy sweep had this
    residual (undiscounted: ``residual`` times ``longest_game``, None without it)."""
    rounding = 16 * float(np.finfo(np.float64).eps) * largest_magnitude(values)
    if discount >= 1.0:
        return None if longest_game is None else (residual + rounding) * longest_game
    return (discount * residual + rounding) / (1.0 - discount)


def tie_slack(discount: float, residual: float, values: np.ndarray, longest_game: float | None = None) -> float:
    """How close two moves' (or pieces') values must be to count as tied:
    ``2 * discount * error_bound``, the most two exactly equal values can
    differ by when each is within ``discount * error_bound`` of the truth
    (undiscounted: twice the error bound, or without one twice the residual
    plus the rounding allowance)."""
    bound = value_error_bound(discount, residual, values, longest_game)
    if bound is None:
        return 2.0 * (residual + 16 * np.finfo(np.float64).eps * largest_magnitude(values))
    return 2.0 * discount * bound


def largest_magnitude(values: np.ndarray) -> float:
    """``max |values|`` (0 if empty; inf or NaN where they are) without a temporary the size of ``values``."""
    if values.size == 0:
        return 0.0
    return float(max(abs(values.max()), abs(values.min())))


@dataclass(frozen=True)
class ChosenMoves:
    """A solution's moves as the sweeps left them, each state's move as its
    offset in the state's row of the table (int16 ``(n_boards, n_pieces)``,
    -1: none), to be numbered as placements when :attr:`Solution.policy` is
    first read: a table of hard drops past
    :data:`~babytris.engine.resources.STORED_PLACEMENTS` moves holds no placement
    numbers, and dropping the chosen pieces again takes 0.5 s at 4x7, which
    a solve whose policy nobody reads need not pay.  ``n_jobs``: the most
    threads the numbering may take (the cores idle then)."""

    rows: np.ndarray
    n_jobs: int

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes


def _numbered(solution: Solution, moves: ChosenMoves) -> np.ndarray:
    """int16 array ``(n_boards, n_pieces)``: each state's best placement
    number, -1 where none fits (see the class's attributes)."""
    from ..engine.resources import idle_cores

    numbers = solution.transitions.chosen_placements(moves.rows, idle_cores(moves.n_jobs)).reshape(moves.rows.shape)
    _freeze(numbers)
    return numbers


# A solve may give the moves as ChosenMoves: every reader still gets placement numbers.
lazy_field(Solution, "policy", lambda policy: isinstance(policy, ChosenMoves), _numbered)
