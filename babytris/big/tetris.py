"""Big boards: Tetris up to 16 columns wide and up to 1,024 rows tall, for playouts and approximate DP.

The exact solvers need the whole game graph, so they stop at 64 cells.  Here
a board is an array of row bitmasks (``rows[r]``, row 0 at the bottom, bit
``c`` its column ``c``, as in :mod:`babytris.big.features`), and the compiled
engine (:mod:`babytris.big._engine`) places pieces, clears rows, computes the board
features and plays whole games without the GIL, for fitted value iteration,
TD learning or policy search on 10 x 20 Tetris.  The rules are those of the
exact engine: a placement (a rotation and a column) drops the piece from above
the board, so it cannot pass under an overhang; a placement where a cell would
rest above the top row is not a move; full rows are cleared; the game is over
when the piece to place fits nowhere.  Placements are numbered as in the exact
engine (:func:`babytris.states.placement_table`): per piece, its orientations
in order (skipping those taller than the board), then columns left to right.

>>> from babytris.big.tetris import Tetris, play_greedy
>>> tetris = Tetris(width=10, height=20)             # the seven tetrominoes
>>> after = tetris.afterstates(tetris.empty(), "I4")   # every placement of I4 on the empty board
>>> len(after), after.rows.shape
(17, (17, 20))
>>> weights = [0, -1, 1, -1, -1, -4, -1]              # Dellacherie's features and weights
>>> names = ["landing_height", "eroded_cells", "row_transitions", "column_transitions", "holes", "wells"]
>>> result = play_greedy(tetris, weights, names, n_games=2, max_placements=10_000, seed=1)
>>> result.placements.tolist()
[10000, 10000]

A one-step greedy policy places each piece where
``line_rewards[rows cleared] + discount * w . phi(afterstate)`` is largest
(the first such placement in placement order), ``phi = [1, features...]``:
the board features of the afterstate (after its rows are cleared) and the
move features ``landing_height`` and ``eroded_cells`` (see :data:`FEATURES`).
With ``line_rewards`` the game's points and ``discount`` < 1 that is the
greedy policy of a value function ``V = w . phi``, as in fitted value iteration.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ..game.pieces import Piece, Placement
from ..game.rules import (
    PieceSpec,
    Rules,
    RulesError,
    check_line_scores,
    check_probabilities,
    piece_repr,
    resolve_pieces,
)
from ..game.validation import check_int, is_int
from . import _engine

__all__ = [
    "Afterstates",
    "FEATURES",
    "MAX_HEIGHT",
    "MAX_WIDTH",
    "MOVE_FEATURES",
    "Tetris",
    "feature_codes",
    "n_threads",
]

#: The widest board: a row is a uint16.
MAX_WIDTH: int = _engine.MAX_WIDTH
#: The tallest board.
MAX_HEIGHT: int = _engine.MAX_HEIGHT

#: Feature names, as in :mod:`babytris.big.features`: one value each, except
#: ``heights`` (``width`` column heights) and ``differences`` (``width - 1``
#: absolute differences of neighbouring heights).  The last two describe the
#: move, not the board: the landing height of the piece (the mean of its
#: lowest and highest rows where it landed, counted from 0, as in mdptetris)
#: and the eroded piece cells (rows cleared times the piece's cells in them).
#: ``wells`` and ``column_transitions`` are Dellacherie's (mdptetris's):
#: policies using them score each afterstate by a scan, about 3.7 times
#: slower than the incremental ``well_runs`` and
#: ``column_transitions_open_top``.  Their order here is their code in the
#: compiled engine.
FEATURES: tuple[str, ...] = (
    "max_height",
    "holes",
    "covers",
    "bumpiness",
    "well_runs",
    "row_transitions",
    "column_transitions_open_top",
    "filled",
    "wells",
    "column_transitions",
    "heights",
    "differences",
    "landing_height",
    "eroded_cells",
)
#: The features of a move rather than of a board.
MOVE_FEATURES: tuple[str, ...] = ("landing_height", "eroded_cells")


@dataclass(frozen=True, eq=True, repr=False)
class Tetris:
    """A big-board game: board size, pieces, piece probabilities, line scores.

    Args:
        width: columns, in [1, 16].
        height: rows, in [1, 1024].
        pieces: as for :class:`babytris.Rules`: catalogue names, group names
            (``"tetrominoes"``, the default, or ``"trominoes"``), Pieces or
            ``(x, y)`` cell lists; each must fit the board in some rotation.
        probabilities: chance of each piece being next, each > 0, summing to 1.
            Default: uniform.
        line_scores: points for clearing 0, 1, 2, ... rows at once (an entry
            for as many rows as the tallest piece spans).  Default: 0, 1, 3, 6, ...

    Bad values raise :class:`babytris.RulesError` (a ``ValueError``) naming
    the field.  Immutable and hashable; the compiled tables are built once.
    """

    width: int = 10
    height: int = 20
    # The fields hold the validated forms; the constructor (typed below) accepts more.
    pieces: tuple[Piece, ...] = field(default=("tetrominoes",))  # type: ignore[arg-type]
    probabilities: tuple[float, ...] = None  # type: ignore[assignment]
    line_scores: tuple[float, ...] = None  # type: ignore[assignment]

    if TYPE_CHECKING:

        def __init__(
            self,
            width: int = 10,
            height: int = 20,
            pieces: str | Iterable[PieceSpec] = ("tetrominoes",),
            probabilities: Iterable[float] | None = None,
            line_scores: Iterable[float] | None = None,
        ) -> None: ...

    def __post_init__(self) -> None:
        width = _bounded_int("width", self.width, 1, MAX_WIDTH)
        height = _bounded_int("height", self.height, 1, MAX_HEIGHT)
        pieces = resolve_pieces(self.pieces)
        tallest = 0
        for p in pieces:
            fitting = [s for s in p.orientations() if _spans(s)[0] <= width and _spans(s)[1] <= height]
            if not fitting:
                raise RulesError(f"pieces: piece {p.name!r} fits a {width}x{height} board in no rotation")
            tallest = max(tallest, *(_spans(s)[1] for s in fitting))
        object.__setattr__(self, "width", width)
        object.__setattr__(self, "height", height)
        object.__setattr__(self, "pieces", pieces)
        object.__setattr__(self, "probabilities", check_probabilities(self.probabilities, len(pieces)))
        object.__setattr__(self, "line_scores", check_line_scores(self.line_scores, tallest))

    @classmethod
    def from_rules(cls, rules: Rules) -> Tetris:
        """The game of a :class:`babytris.Rules` (width at most 16; the
        points objective, no preview, no hold, no mirror merging, the empty
        start board, holes kept, no top-out rule, hard drops and independent draws: the big-board
        engine has none of these, and would otherwise play another game in silence)."""
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a babytris.Rules, got {type(rules).__name__}")
        for name, value, default in (
            ("objective", rules.objective, "points"),
            ("preview", rules.preview, 0),
            ("hold", rules.hold, False),
            ("mirror", rules.mirror, False),
            ("start", rules.start, 0),
            ("no_holes", rules.no_holes, False),
            ("top_out", rules.top_out, False),
            ("moves", rules.moves, "hard"),
            ("randomizer", rules.randomizer, "iid"),
        ):
            if value != default:
                raise RulesError(f"{name}: the big-board engine supports only {name}={default!r}, got {value!r}")
        return cls(rules.width, rules.height, rules.pieces, rules.probabilities, rules.line_scores)

    # --- the pieces and their placements ---------------------------------------------------

    @property
    def n_pieces(self) -> int:
        return len(self.pieces)

    @property
    def piece_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.pieces)

    @property
    def max_lines(self) -> int:
        """The most rows one placement can clear: the rows of the tallest orientation that fits."""
        return int(self.engine.shape.shape[1])

    def piece_index(self, which: int | str | Piece) -> int:
        """Index of a piece given by index, name or Piece; raises ``ValueError`` if absent."""
        if isinstance(which, bool):
            raise ValueError(f"piece must be an index or a name, got {which!r}")
        if is_int(which):
            if not 0 <= which < self.n_pieces:
                raise ValueError(f"piece index must be in [0, {self.n_pieces - 1}], got {which}")
            return int(which)
        name = which.name if isinstance(which, Piece) else which
        for i, p in enumerate(self.pieces):
            if p.name == name:
                return i
        raise ValueError(f"piece {name!r} is not in this game (pieces: {', '.join(self.piece_names)})")

    @cached_property
    def _piece_indices(self) -> dict:
        return {**{p.name: i for i, p in enumerate(self.pieces)}, **{i: i for i in range(len(self.pieces))}}

    @cached_property
    def placements(self) -> tuple[tuple[Placement, ...], ...]:
        """Per piece, its placements in number order (as the exact engine numbers them)."""
        return tuple(tuple(group) for group in self._tables[0])

    @cached_property
    def _tables(self) -> tuple:
        placements: list[list[Placement]] = []
        first, column, n_rows, n_cols, shapes, bottoms, tops = [0], [], [], [], [], [], []
        for piece in self.pieces:
            mine: list[Placement] = []
            for rotation, shape in enumerate(piece.orientations()):
                shape_cols, shape_rows = _spans(shape)
                if shape_rows > self.height:
                    continue
                for col in range(self.width - shape_cols + 1):
                    mine.append(Placement(piece.name, rotation, col, len(mine)))
                    column.append(col)
                    n_rows.append(shape_rows)
                    n_cols.append(shape_cols)
                    shapes.append([sum(1 << (x + col) for x, y in shape if y == i) for i in range(shape_rows)])
                    bottoms.append([min(y for x, y in shape if x == j) for j in range(shape_cols)])
                    tops.append([max(y for x, y in shape if x == j) for j in range(shape_cols)])
            first.append(first[-1] + len(mine))
            placements.append(mine)
        max_rows = max(n_rows)
        row_bits = np.zeros((len(column), max_rows), dtype=np.uint16)
        bottom = np.zeros((len(column), 16), dtype=np.int16)
        top = np.zeros((len(column), 16), dtype=np.int16)
        for k in range(len(column)):
            row_bits[k, : n_rows[k]] = shapes[k]
            bottom[k, : n_cols[k]] = bottoms[k]
            top[k, : n_cols[k]] = tops[k]
        return placements, (first, column, n_rows, n_cols, row_bits, bottom, top)

    @cached_property
    def engine(self) -> _engine.Engine:
        """The compiled engine (placement tables) of this game."""
        return _engine.Engine(self.width, self.height, *self._tables[1])

    # --- boards ----------------------------------------------------------------------------

    def empty(self) -> np.ndarray:
        """The empty board: uint16 ``(height,)`` zeros."""
        return np.zeros(self.height, dtype=np.uint16)

    def board(self, picture: Sequence[str]) -> np.ndarray:
        """A board from a picture, top row first, ``'#'`` a filled cell and
        ``'.'`` an empty one; missing rows at the top are empty."""
        if isinstance(picture, str):
            picture = picture.split()
        lines = list(picture)
        if len(lines) > self.height or any(len(line) != self.width or set(line) - set("#.") for line in lines):
            raise ValueError(f"picture: at most {self.height} lines of {self.width} characters '#' or '.'")
        rows = self.empty()
        for r, line in enumerate(reversed(lines)):
            rows[r] = sum(1 << c for c, ch in enumerate(line) if ch == "#")
        return self.check_rows(rows)

    def text(self, rows: np.ndarray) -> str:
        """A board drawn top row first, ``'#'`` filled, ``'.'`` empty."""
        rows = self.check_rows(rows, full_ok=True)
        return "\n".join(
            "".join("#" if int(rows[r]) >> c & 1 else "." for c in range(self.width))
            for r in reversed(range(self.height))
        )

    def check_rows(self, rows: object, *, name: str = "rows", full_ok: bool = False) -> np.ndarray:
        """``rows`` as uint16 row bitmasks, C-contiguous: ``(height,)`` for one
        board or ``(n, height)``; raises ``ValueError`` naming ``name`` unless
        every row is a bitmask of ``width`` bits (and none is full)."""
        array = np.asarray(rows)
        if array.dtype.kind not in "ui" or array.ndim not in (1, 2) or array.shape[-1] != self.height:
            raise ValueError(
                f"{name} must be an integer array ({self.height},) or (n, {self.height}) of row "
                f"bitmasks, got {array.dtype} {array.shape}"
            )
        if array.size and (array.min() < 0 or array.max() >= 1 << self.width):
            raise ValueError(f"{name}: every row must be a bitmask in [0, 2**{self.width})")
        out = np.ascontiguousarray(array, dtype=np.uint16)
        if not full_ok and out.size:
            full = np.flatnonzero((out == (1 << self.width) - 1).reshape(-1))
            if full.size:
                board, row = divmod(int(full[0]), self.height)
                where = f"board {board} row {row}" if out.ndim == 2 else f"row {row}"
                raise ValueError(f"{name}: {where} is full (it would have been cleared)")
        return out

    # --- moves -----------------------------------------------------------------------------

    def afterstates(self, rows: np.ndarray, piece: int | str | Piece) -> Afterstates:
        """Every legal placement of ``piece`` on one board (``(height,)`` rows),
        in placement order: :class:`Afterstates` with ``len() == 0`` when it
        fits nowhere (game over)."""
        if not (type(rows) is np.ndarray and rows.dtype == np.uint16 and rows.flags.c_contiguous):
            rows = self.check_rows(rows)
        if rows.shape != (self.height,):
            raise ValueError(f"rows must be one board ({self.height},); use afterstates_batch for many")
        p = self._piece_indices.get(piece) if type(piece) is not bool else None  # names and in-range ints
        if p is None:
            p = self.piece_index(piece)
        return Afterstates(*self.engine.afterstates_one(rows, p))  # checks the rows

    def afterstates_batch(self, rows: np.ndarray, pieces: object, *, n_jobs: int | None = 1) -> Afterstates:
        """Every legal placement of ``pieces[i]`` on board ``rows[i]`` (``(n,
        height)``), in CSR form: board i's afterstates are entries
        ``offsets[i]:offsets[i + 1]`` of the :class:`Afterstates`' arrays.
        ``pieces``: one index (or name) per board, or one for all.  Runs in C
        threads (``n_jobs``; None: every core)."""
        rows = self.check_rows(rows)
        if rows.ndim != 2:
            raise ValueError(f"rows must be boards (n, {self.height})")
        return Afterstates(*self.engine.afterstates(rows, self._pieces(pieces, len(rows)), n_threads(n_jobs)))

    def successors(self, rows: np.ndarray, piece: int | str | Piece) -> list[tuple[int, np.ndarray, int]]:
        """``[(placement, next rows, rows cleared), ...]``: the exact engine's
        ``successors`` for one board."""
        after = self.afterstates(rows, piece)
        return [
            (int(k), next_rows, int(lines)) for k, next_rows, lines in zip(after.placement, after.rows, after.lines)
        ]

    def feature_matrix(
        self, boards: np.ndarray | Afterstates, names: Sequence[str], *, n_jobs: int | None = 1
    ) -> np.ndarray:
        """The design matrix of a linear value function: float64 ``(n, 1 + k)``,
        a constant 1 then the named :data:`FEATURES` of each board, computed
        in C; equal to :func:`babytris.big.features.feature_matrix` on the same
        boards.  ``boards``: rows ``(n, height)`` (or one board), or
        :class:`Afterstates`, which the move features need."""
        codes = feature_codes(names)
        if isinstance(boards, Afterstates):
            rows, landing, eroded = boards.rows, boards.landing_height, boards.eroded
        else:
            rows, landing, eroded = self.check_rows(boards, name="boards", full_ok=True), None, None
            if any(FEATURES[c] in MOVE_FEATURES for c in codes):
                raise ValueError("names: the move features (landing_height, eroded_cells) need Afterstates, not rows")
            if rows.ndim == 1:
                rows = rows[None, :]
        out = np.empty((len(rows), self._n_values(codes)), dtype=np.float64)
        self.engine.features(rows, codes, landing, eroded, out, n_threads(n_jobs))
        return out

    def _n_values(self, codes: np.ndarray) -> int:
        sizes = {FEATURES.index("heights"): self.width, FEATURES.index("differences"): self.width - 1}
        return 1 + sum(sizes.get(int(c), 1) for c in codes)

    def _pieces(self, pieces: object, n: int) -> np.ndarray:
        if isinstance(pieces, (str, Piece)) or is_int(pieces):
            return np.full(n, self.piece_index(pieces), dtype=np.int16)
        array = np.asarray(pieces)
        if array.shape != (n,) or (n and array.dtype.kind not in "ui"):
            raise ValueError(f"pieces must be one piece index per board ({n},), got {array.dtype} {array.shape}")
        if n and (array.min() < 0 or array.max() >= self.n_pieces):
            raise ValueError(f"pieces: every index must be in [0, {self.n_pieces - 1}]")
        return np.ascontiguousarray(array, dtype=np.int16)

    def __repr__(self) -> str:
        pieces = ", ".join(piece_repr(p) for p in self.pieces)
        return (
            f"Tetris(width={self.width}, height={self.height}, pieces=({pieces},), "
            f"probabilities={self.probabilities!r}, line_scores={self.line_scores!r})"
        )


class Afterstates:
    """Legal placements and the boards they leave, of one board or many (CSR).

    Attributes (arrays, to be read, not changed):
        offsets: int64 ``(n_boards + 1,)``: board i's entries are
            ``offsets[i]:offsets[i + 1]`` (one board: ``[0, len]``).
        rows: uint16 ``(m, height)``: the board after each placement, its full rows cleared.
        lines: uint8 ``(m,)``: rows cleared.
        placement: int16 ``(m,)``: the placement's number among its piece's placements.
        landing_row: int16 ``(m,)``: the row of the piece's lowest cells where it landed.
        landing_height: float64 ``(m,)``: the mean of its lowest and highest rows, counted from 0.
        eroded: int16 ``(m,)``: rows cleared times the piece's cells in them.
    """

    __slots__ = ("offsets", "rows", "lines", "placement", "landing_row", "landing_height", "eroded")

    def __init__(self, offsets, rows, lines, placement, landing_row, landing_height, eroded) -> None:
        self.offsets = offsets
        self.rows = rows
        self.lines = lines
        self.placement = placement
        self.landing_row = landing_row
        self.landing_height = landing_height
        self.eroded = eroded

    def __len__(self) -> int:
        return len(self.placement)

    @property
    def n_boards(self) -> int:
        return len(self.offsets) - 1

    @property
    def counts(self) -> np.ndarray:
        """int64 ``(n_boards,)``: legal placements per board (0: game over)."""
        return np.diff(self.offsets)

    def board(self, i: int) -> Afterstates:
        """Board i's afterstates alone."""
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        return Afterstates(
            np.array([0, hi - lo], dtype=np.int64),
            *(
                a[lo:hi]
                for a in (self.rows, self.lines, self.placement, self.landing_row, self.landing_height, self.eroded)
            ),
        )

    def __repr__(self) -> str:
        return f"<Afterstates of {self.n_boards:,} board{'s' if self.n_boards != 1 else ''}: {len(self):,} placements>"


def _spans(shape) -> tuple[int, int]:
    return 1 + max(x for x, _ in shape), 1 + max(y for _, y in shape)


def _bounded_int(name: str, value: object, lo: int, hi: int) -> int:
    return check_int(name, value, lo, hi, error=RulesError)


def n_threads(n_jobs: object) -> int:
    """Threads for ``n_jobs``: None or -1 for every core, else an integer in [1, 1024]."""
    if n_jobs is None or n_jobs == -1:
        return os.cpu_count() or 1
    if not is_int(n_jobs) or not 1 <= n_jobs <= 1024:
        raise ValueError(f"n_jobs must be None, -1 or an integer in [1, 1024], got {n_jobs!r}")
    return int(n_jobs)


def feature_codes(names: object) -> np.ndarray:
    """The engine's codes of feature names (of :data:`FEATURES`), checked."""
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise ValueError(f"features must be a sequence of feature names, got {names!r}")
    for name in names:
        if name not in FEATURES:
            raise ValueError(f"features: unknown feature {name!r}; known are {', '.join(FEATURES)}")
    return np.array([FEATURES.index(name) for name in names], dtype=np.int8)
