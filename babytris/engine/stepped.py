"""Game: one game played placement by placement, for people and agents.

The solvers work on whole tables; a :class:`Game` is the single game a
terminal viewer (``babytris play``) or a reinforcement-learning environment
(:mod:`babytris.formats.env`) steps through.  Each step asks the compiled engine for
the piece's legal placements, so the moves are exactly the solvers'.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..game.board import Board
from ..game.pieces import Placement
from ..game.rules import Rules
from ..game.svg import CELL, frame_svg  # (importing it also lets Jupyter draw Boards)
from ..game.validation import ArgumentTypeError
from .placements import engine, placement_table

__all__ = ["Game", "Move"]

#: Who gives the next piece: called with the board (bits) and the pieces known
#: before the draw (the preview queue, a tuple of indices), and with hold the
#: slot as keywords (``held=`` a piece index or None, ``locked=``), returns a
#: piece index; None draws it by ``rules.probabilities``.
PieceChooser = Callable[..., int]


@dataclass(frozen=True)
class Move:
    """A legal placement of the piece to place and what it leads to.

    Attributes:
        placement: the :class:`Placement` (piece, rotation, column, number).
        board: the board after the drop and the line clears (bits).
        lines: rows cleared.
        points: ``rules.line_scores[lines]``.
    """

    placement: Placement
    board: int
    lines: int
    points: float


class Game:
    """A game of ``rules`` from ``rules.start``, one placement at a time.

    Args:
        rules: the rule set (previews are shown as :attr:`queue`; with hold,
            the slot as :attr:`held` and :attr:`locked`).
        seed: seeds the random pieces (``numpy.random.default_rng``).
        choose_piece: who gives the pieces (``f(board_bits, known) -> piece
            index``, ``known`` the queue of pieces already in sight); default:
            drawn at random with ``rules.probabilities``, or with
            ``rules.randomizer == "bag"`` dealt from the bag (see
            :attr:`bag_left`; a chooser must give a piece left in it).  With
            previews the first ``rules.preview`` pieces are drawn at random
            (or given by ``opening``) and the chooser gives every piece after
            them, as the solvers assume.
        opening: with previews, the ``rules.preview`` piece indices the game
            opens with, as an opponent gives them (the queue of
            :meth:`Solution.opening`'s row: ``transitions.queue_of(row)``).
        opening_held: with ``rules.hold_start == "drawn"``, the piece index
            the slot opens with, as an opponent gives it (default: drawn).

    With hold (``rules.hold``) a step is a placement of the piece to place,
    a swap (a placement of the held piece, which puts the piece to place on
    hold; not right after a hold, nor with the same piece held) or, with the
    slot empty, :meth:`hold` (the piece goes on hold, the next comes, and
    nothing is placed): the solvers' moves, as
    :meth:`Solution.best_action` names them (a :class:`Placement`, or
    ``"hold"``), which :meth:`place` takes.

    >>> game = Game(Rules(width=4, height=4), seed=1)
    >>> move = game.moves()[0]
    >>> game.place(move.placement) == move.points
    True
    >>> game.placements
    1
    """

    def __init__(
        self,
        rules: Rules,
        *,
        seed: int | None = None,
        choose_piece: PieceChooser | None = None,
        opening: tuple[int, ...] | None = None,
        opening_held: int | None = None,
    ) -> None:
        if not isinstance(rules, Rules):
            raise ArgumentTypeError(f"rules must be a babytris.Rules, got {type(rules).__name__}")
        if opening_held is not None and not (
            rules.hold_start == "drawn"
            and isinstance(opening_held, (int, np.integer))
            and not isinstance(opening_held, bool)
            and 0 <= opening_held < rules.n_pieces
        ):
            raise ValueError(
                f"opening_held must be a piece index in [0, {rules.n_pieces - 1}] with rules.hold_start='drawn', "
                f"got {opening_held!r}"
            )
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
        if choose_piece is not None and not callable(choose_piece):
            raise ValueError(
                f"choose_piece must be a callable(board, known) -> piece index or None, got {choose_piece!r}"
            )
        if opening is not None:
            opening = tuple(opening)
            if len(opening) != rules.preview or not all(
                isinstance(p, (int, np.integer)) and not isinstance(p, bool) and 0 <= p < rules.n_pieces
                for p in opening
            ):
                raise ValueError(
                    f"opening must be {rules.preview} piece indices in [0, {rules.n_pieces - 1}] "
                    f"(rules.preview), got {opening!r}"
                )
        self.rules = rules
        self._opening = opening
        self._opening_held = opening_held
        self._rng = np.random.default_rng(seed)
        self._choose = choose_piece
        # The plain engine: with rules.mirror the table's engine stores each
        # board as the lesser of it and its mirror image; a game keeps its own.
        self._engine = engine(dataclasses.replace(rules, mirror=False) if rules.mirror else rules)
        self._placements = placement_table(rules).placements
        self.reset()

    def reset(self) -> None:
        """Back to the start board with fresh random pieces (the generator goes on)."""
        self.board: int = self.rules.start
        self.score: float = 0.0
        self.lines: int = 0
        self.placements: int = 0
        self._bag = [self.rules.bag_copies] * self.rules.n_pieces  # (a bag of one copy each: unused without a bag)
        #: The held piece's index (None: the slot empty, or no hold) and whether it was just put there.
        self.held: int | None = None
        self.locked: bool = False
        if self.rules.hold and self.rules.hold_start == "drawn":  # the first piece drawn fills the slot
            self.held = self._draw() if self._opening_held is None else self._deal(self._opening_held)
        if self._opening is None:
            known = [self._draw() for _ in range(self.rules.preview)]
        else:
            known = [self._deal(p) for p in self._opening]
        last = self._draw() if self._choose is None else self._chosen(self._choose, self.board, tuple(known))
        pieces = known + [last]
        self.piece: int = pieces[0]
        self.queue: deque[int] = deque(pieces[1:])

    def _draw(self) -> int:
        if self.rules.randomizer != "bag":
            return int(self._rng.choice(self.rules.n_pieces, p=self.rules.probabilities))
        left = np.asarray(self._bag, dtype=np.float64)
        return self._deal(int(self._rng.choice(self.rules.n_pieces, p=left / left.sum())))

    def _deal(self, piece: int) -> int:
        """Take ``piece`` out of the bag (refilled once empty); ``ValueError`` if the bag lacks it."""
        if self.rules.randomizer == "bag":
            if not self._bag[piece]:
                raise ValueError(
                    f"choose_piece gave {self.rules.pieces[piece].name}, which the bag does not hold "
                    f"(left: {' '.join(self.rules.pieces[p].name for p in self.bag_left or ()) or 'nothing'})"
                )
            self._bag[piece] -= 1
            if not any(self._bag):
                self._bag = [self.rules.bag_copies] * self.rules.n_pieces
        return piece

    @property
    def bag_left(self) -> tuple[int, ...] | None:
        """The piece indices left in the bag once the pieces in sight were
        dealt (the full bag right after a refill), as :meth:`Solution.value`
        takes them (``bag_left=``); None without a bag."""
        if self.rules.randomizer != "bag":
            return None
        return tuple(p for p, c in enumerate(self._bag) for _ in range(c))

    @property
    def piece_name(self) -> str:
        """The name of the piece to place."""
        return self.rules.pieces[self.piece].name

    @property
    def preview(self) -> tuple[int, ...]:
        """The piece indices after the one to place (``rules.preview`` of them)."""
        return tuple(self.queue)

    def moves(self) -> list[Move]:
        """The legal placements of the piece to place, in placement-number
        order, then with hold those of the held piece where a swap is allowed
        (:attr:`can_swap`); empty when no piece fits."""
        pieces = (self.piece, int(self.held)) if self.can_swap and self.held is not None else (self.piece,)
        return [move for piece in pieces for move in self._moves_of(piece)]

    def _moves_of(self, piece: int) -> list[Move]:
        points = self.rules.line_scores
        mine = self._placements[piece]
        return [
            Move(mine[k], int(after), int(lines), float(points[lines]))
            for k, after, lines in self._engine.successors(self.board, piece)
        ]

    @property
    def can_hold(self) -> bool:
        """Whether :meth:`hold` is a move: with hold, the slot empty."""
        return self.rules.hold and self.held is None

    @property
    def can_swap(self) -> bool:
        """Whether the held piece may be placed instead (putting the piece to
        place on hold): a piece held, not just put there, and another piece."""
        return self.held is not None and not self.locked and self.held != self.piece

    @property
    def over(self) -> bool:
        """Whether the game has ended: no move (no placement of the piece to
        place, nor of the held piece, nor a hold)."""
        return not self.can_hold and not self.moves()

    def place(self, placement: Placement | int | str) -> float:
        """Drop the piece at ``placement`` (a :class:`Placement` of this piece,
        or its number; with hold, of the held piece for a swap, or ``"hold"``:
        :meth:`hold`), clear rows, bring in the next piece; returns the points.

        Raises:
            ValueError: if the placement is not a legal move here.
        """
        if isinstance(placement, str) and placement == "hold":
            return self.hold()
        number = placement.index if isinstance(placement, Placement) else placement
        piece = self.piece
        if isinstance(placement, Placement) and placement.piece != self.piece_name:
            held = None if self.held is None else self.rules.pieces[self.held].name
            if placement.piece != held or not self.can_swap or self.held is None:
                raise ValueError(
                    f"placement is of piece {placement.piece}, the piece to place is {self.piece_name}"
                    + (f" (held: {held}, {'a swap allowed' if self.can_swap else 'no swap now'})" if held else "")
                )
            piece = self.held
        if isinstance(number, bool) or not isinstance(number, (int, np.integer)):
            raise ValueError(f"placement must be a Placement, a placement number or 'hold', got {placement!r}")
        for move in self._moves_of(piece):
            if move.placement.index == number:
                if isinstance(placement, Placement) and placement != move.placement:
                    raise ValueError(
                        f"placement {placement!r} does not match placement number {number} of "
                        f"{self.piece_name}: {move.placement!r}"
                    )
                break
        else:
            name = self.rules.pieces[piece].name
            legal = [m.placement.index for m in self._moves_of(piece)]
            raise ValueError(f"placement {placement!r} is not a legal move of {name} here; legal numbers: {legal}")
        if piece != self.piece:  # a swap: the piece to place goes on hold
            self.held = self.piece
        self.locked = False
        self.board = move.board
        self.score += move.points
        self.lines += move.lines
        self.placements += 1
        self._next_piece()
        return move.points

    def hold(self) -> float:
        """Put the piece to place on hold (the slot empty) and bring in the
        next: a step that places nothing and counts no placement; returns 0.0
        (the points, none).

        Raises:
            ValueError: without hold, or with a piece held already.
        """
        if not self.rules.hold:
            raise ValueError("hold: these rules have no hold (rules.hold is False)")
        if self.held is not None:
            raise ValueError(f"hold: the slot holds {self.rules.pieces[self.held].name} already; swap by placing it")
        self.held, self.locked = self.piece, True
        self._next_piece()
        return 0.0

    def _next_piece(self) -> None:
        """Bring in the next piece: drawn or chosen, onto the queue's end with previews."""
        nxt = self._draw() if self._choose is None else self._chosen(self._choose, self.board, tuple(self.queue))
        if self.rules.preview:
            self.queue.append(nxt)
            nxt = self.queue.popleft()
        self.piece = nxt

    def _chosen(self, choose: PieceChooser, board: int, known: tuple[int, ...]) -> int:
        piece = choose(board, known, held=self.held, locked=self.locked) if self.rules.hold else choose(board, known)
        if isinstance(piece, bool) or not isinstance(piece, (int, np.integer)) or not 0 <= piece < self.rules.n_pieces:
            raise ValueError(
                f"choose_piece returned {piece!r}; it must be a piece index in [0, {self.rules.n_pieces - 1}]"
            )
        return self._deal(int(piece))

    def drawing(self) -> str:
        """The board drawn as text (top row first), ``#`` filled, ``.`` empty."""
        return str(Board(self.board, self.rules.width, self.rules.height))

    def _repr_svg_(self) -> str:
        """The board, the piece to place and the score as SVG, for Jupyter (see :mod:`babytris.game.svg`)."""
        return frame_svg(self.rules, self.board, None if self.over else self.piece, self.score, cell=CELL)

    def __repr__(self) -> str:
        queue = f" preview={','.join(self.rules.pieces[p].name for p in self.queue)}" if self.queue else ""
        if self.rules.hold:
            queue += f" held={'-' if self.held is None else self.rules.pieces[self.held].name}"
            queue += " (locked)" if self.locked else ""
        state = "over" if self.over else f"piece={self.piece_name}{queue}"
        return (
            f"<Game {self.rules.width}x{self.rules.height} {state} score={self.score:g} "
            f"lines={self.lines} placements={self.placements}>"
        )
