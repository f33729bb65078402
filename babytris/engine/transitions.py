"""The move table every solver reads: :class:`Transitions` (the reachable
game graph in CSR form), the numbering of its boards by layers, and the order
sweeps visit them in."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from ..game.rules import Rules
from ..game.validation import is_int
from ._layers import live_boards, popcounts
from ._moves import dropped_placements
from ._moves import placement_numbers as _moves_placement_numbers
from .lazy import as_held, lazy_field
from .placements import canonical_boards, engine, placement_table
from .resources import MemoryLimitError, idle_cores

__all__ = [
    "Transitions",
    "TableError",
    "HOLD_MOVE",
    "MAX_MOVES",
    "offsets_from_counts",
    "layers",
    "layer_order",
    "layered_indices",
    "sweep_order",
    "independent_layers",
]

#: Placement number of the move that puts the piece to place on hold (into
#: the empty slot), placing nothing (fits int16 policies and uint16 tables).
HOLD_MOVE = 0x7FFF


class TableError(ValueError):
    """A move table that is not one babytris could have built: ``field`` names
    the array at fault (``"offsets"``, ``"next_board"``, ...)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"transitions.{field}: {problem}")
        self.field, self.problem = field, problem


#: The most moves a table holds: its offsets are int32, which every sweep
#: reads once per state (half the bytes of int64: 285 MB less at 4x7).  A
#: bigger game is refused with :class:`~babytris.MemoryLimitError` and goes
#: to the lean mode, which stores no moves.
MAX_MOVES = 2**31 - 1

#: The dtype of each array of a table (the compiled loops read them as these C types).
DTYPES = {
    "boards": np.uint64,
    "layer_starts": np.int64,
    "offsets": np.int32,
    "next_board": np.int32,
    "lines": np.uint8,
    "placement": np.uint16,
    "queues": np.int64,
    "slots": np.int64,
    "bags": np.int64,
}


@dataclass(frozen=True, repr=False, eq=False)
class Transitions:
    """The reachable game graph in CSR form.

    State ``s = board * n_pieces + piece`` has moves ``offsets[s]:offsets[s+1]``;
    for each move ``next_board`` (int32 board index), ``lines`` (uint8 rows
    cleared) and ``placement`` (uint16, number of the move among the piece's
    placements, see :func:`placement_table`; a big table of hard drops, over
    :data:`~babytris.engine.resources.STORED_PLACEMENTS` moves, drops its pieces again when it is first
    read instead of storing it from the start).  ``boards[i]`` (uint64) is board
    ``i``.  Boards are numbered layer by layer (see :func:`layers`), layer
    ``k`` being ``boards[layer_starts[k]:layer_starts[k + 1]]``, and in
    ascending order within a layer, so a lookup is a binary search.  With one
    layer (most rule sets but the default) the boards are simply sorted, the
    empty board first.

    With previews (``rules.preview = k > 0``) the rows are nodes, a board with
    the k pieces known before the next draw: node ``i`` is board
    ``boards[i]`` with queue ``queues[i]`` (the pieces as base-``n_pieces``
    digits, the next to place first), node ``board_number * n_pieces**k +
    queue``.  State ``node * n_pieces + piece`` then has drawn ``piece`` onto
    the queue's end: it places the queue's first piece, and its moves lead to
    the node of the board after with the rest of the queue and the drawn piece.
    With hold, nodes also carry the hold slot ``slots[i]`` (0: empty; 1 + p:
    piece p held; 1 + n_pieces + p: piece p held, locked), node
    ``(board_number * n_pieces**k + queue) * (2 * n_pieces + 1) + slot``; see
    :func:`with_previews`.  With a bag (``rules.randomizer == "bag"``) nodes
    carry the bag's contents before the next draw too, ``bags[i]`` (see
    :mod:`babytris.game.bags`): node ``((board_number * rules.bags + bag) *
    n_pieces**k + queue) * hold_slots + slot``; state ``node * n_pieces +
    piece`` draws ``piece`` from that bag, so it has no move where the bag
    holds no copy of it (a chance of 0: see :meth:`draw_chances`).
    """

    rules: Rules
    boards: np.ndarray
    layer_starts: np.ndarray
    offsets: np.ndarray
    next_board: np.ndarray
    lines: np.ndarray
    placement: np.ndarray
    seconds: float
    queues: np.ndarray | None = None
    slots: np.ndarray | None = None
    bags: np.ndarray | None = None

    def __post_init__(self) -> None:
        # Every table is checked once, here, and frozen: the compiled loops
        # that read it trust its ranges (a bad offset would read out of bounds).
        check_table(self)
        if len(self.boards):  # (a game starts on its start board: an edited table may have lost it)
            try:
                self.start_nodes()
            except KeyError:
                raise TableError("boards", f"the start board {self.rules.start} is not in the table") from None
        for name in DTYPES:
            array = self._stored(name)
            if array is not None:
                array.flags.writeable = False

    def _stored(self, name: str) -> np.ndarray | None:
        """The array ``name`` as the table holds it: None for placement
        numbers not dropped again yet, without dropping them."""
        return as_held(self, "placement") if name == "placement" else getattr(self, name)

    def state_placements(self, state: int) -> np.ndarray:
        """The placement numbers of state ``state``'s moves, in row order:
        uint16 array ``(moves,)``; a table that does not hold them drops
        that board's pieces again (not the whole table's)."""
        lo, hi = int(self.offsets[state]), int(self.offsets[state + 1])
        stored = self._stored("placement")
        if stored is not None:
            return stored[lo:hi]
        P = self.rules.n_pieces
        board = state // P
        offsets = self.offsets[board * P : (board + 1) * P + 1] - self.offsets[board * P]
        numbers = dropped_placements(engine(self.rules), self.boards[board : board + 1], offsets)
        return numbers[lo - int(self.offsets[board * P]) : hi - int(self.offsets[board * P])]

    def chosen_placements(self, rows: np.ndarray, n_threads: int = 1) -> np.ndarray:
        """Each state's move, given as its offset in the state's row (int,
        ``(n_states,)``; -1: none), as its placement number: int16 array
        ``(n_states,)``, -1 where none.  A table that does not hold the
        numbers drops again only these moves (on ``n_threads`` threads)."""
        rows = np.ascontiguousarray(rows, dtype=np.int16).reshape(-1)
        if self.n_moves == 0:
            return np.full(rows.shape, -1, dtype=np.int16)
        if self._stored("placement") is None:
            return dropped_placements(engine(self.rules), self.boards, self.offsets, rows, n_threads)
        return _moves_placement_numbers(self.offsets, self.placement, rows)

    @property
    def placement_stored(self) -> bool:
        """Whether the placement numbers are held (False: a big table of hard
        drops, which drops its pieces again when ``placement`` is first read)."""
        return self._stored("placement") is not None

    @property
    def n_boards(self) -> int:
        """The number of rows of the table: boards, or with previews or hold
        (board, queue, hold slot) nodes."""
        return len(self.boards)

    @property
    def start_index(self) -> int:
        """Index of the row the game starts on (``rules.start``; with a bag,
        full): without previews and without a drawn hold only."""
        if self.rules.preview:
            raise ValueError(
                "start_index: with previews a game starts on one of several (board, queue) nodes; see start_nodes()"
            )
        if self.rules.hold_start == "drawn":
            raise ValueError(
                "start_index: with hold_start='drawn' a game starts holding one of several pieces; see start_nodes()"
            )
        if self.rules.randomizer == "bag":  # the start board with the bag full
            return int(self._bag_starts()[0][0])
        return self.board_index(self.rules.start)

    def start_nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows a game starts on and their chances: the start board with each
        queue (its pieces drawn before play, independently or from the full
        bag) and the hold slot empty, or with ``rules.hold_start == "drawn"``
        holding each piece (drawn too, before the queue; free to swap), or
        without previews and bag the start board alone.

        Returns:
            ``(indices, chances)``: int64 and float64 arrays, one entry per
            start row of positive chance (in row order).
        """
        rules = self.rules
        if rules.randomizer == "bag":
            return self._bag_starts()
        first = self.board_index(rules.start, (0,) * rules.preview)
        chances = np.ones(1)
        for _ in range(rules.preview):  # independent draws: the queues' chances are products
            chances = np.outer(chances, rules.probabilities).ravel()
        rows = first + np.arange(rules.queues, dtype=np.int64) * rules.hold_slots
        if rules.hold_start == "drawn":  # slots 1..n: piece p held, free (slot 0: empty)
            rows = (rows[:, None] + 1 + np.arange(rules.n_pieces)).ravel()
            chances = np.outer(chances, rules.probabilities).ravel()
        return rows, chances

    def _bag_starts(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`start_nodes` with a bag: the pieces dealt before play, one draw at a time."""
        from ..game.bags import after_draw, bag_chances, full_bag

        rules = self.rules
        chance, after = bag_chances(rules), after_draw(rules)
        first = self.board_index(rules.start, (0,) * rules.preview, bag=0)
        # (held piece, queue, bag) -> chance
        starts: dict[tuple, float] = {(None, (), full_bag(rules)): 1.0}
        draws = rules.preview + (rules.hold_start == "drawn")
        for _ in range(draws):
            dealt: dict[tuple, float] = {}
            for (held, queue, bag), c in starts.items():
                for p in np.flatnonzero(chance[bag] > 0).tolist():
                    key = (
                        (p, queue, int(after[bag, p]))
                        if rules.hold_start == "drawn" and held is None
                        else (
                            held,
                            queue + (p,),
                            int(after[bag, p]),
                        )
                    )
                    dealt[key] = dealt.get(key, 0.0) + c * float(chance[bag, p])
            starts = dealt
        rows = {
            first
            + (bag * rules.queues + self.queue_code(queue)) * rules.hold_slots
            + (0 if held is None else 1 + held): c
            for (held, queue, bag), c in starts.items()
        }
        order = sorted(rows)
        return np.array(order, dtype=np.int64), np.array([rows[r] for r in order])

    @property
    def n_states(self) -> int:
        """The number of states, ``n_boards * n_pieces``."""
        return self.n_boards * self.rules.n_pieces

    @property
    def n_moves(self) -> int:
        """The number of moves (entries of the table)."""
        return len(self.next_board)

    @property
    def nbytes(self) -> int:
        """The bytes held by the table's arrays (placement numbers only once held)."""
        arrays: tuple[np.ndarray, ...] = (
            self.boards,
            self.layer_starts,
            self.offsets,
            self.next_board,
            self.lines,
        )
        arrays += tuple(a for a in (self._stored("placement"), self.queues, self.slots, self.bags) if a is not None)
        return sum(a.nbytes for a in arrays)

    def board_index(
        self,
        board: int,
        queue: tuple[int, ...] | None = None,
        held: int | None = None,
        locked: bool = False,
        bag: int | None = None,
    ) -> int:
        """Index of a reachable board (with previews: of the board with ``queue``,
        its ``preview`` piece indices, next first; with hold: and ``held``, the
        held piece's index or None, ``locked`` if it was just put there; with a
        bag: and ``bag``, the number of the bag the next piece is drawn from,
        see :mod:`babytris.game.bags`); raises ``KeyError`` if it is not reachable,
        ``ValueError`` for a bad queue, slot or bag."""
        board = int(board)
        cells = self.rules.cells
        i = int(self.indices(np.array([board], dtype=np.uint64))[0]) if 0 <= board < 2**cells else -1
        if i < 0:
            raise KeyError(
                f"board {board} is not reachable from the start board ({self.rules.start}) under these rules; "
                f"to value it, solve the game that starts there: Rules(start={board}, ...)"
            )
        slot = 0
        if held is not None or locked:
            n = self.rules.n_pieces
            if not self.rules.hold:
                raise ValueError("held: these rules have no hold (rules.hold is False)")
            if held is None or isinstance(held, bool) or not (isinstance(held, (int, np.integer)) and 0 <= held < n):
                raise ValueError(f"held must be a piece index in [0, {n - 1}] (or None: the slot empty), got {held!r}")
            slot = 1 + int(held) + (n if locked else 0)
        if self.rules.randomizer == "bag":
            if bag is None or not (is_int(bag) and 0 <= bag < self.rules.bags):
                raise ValueError(
                    f"bag must be a bag number in [0, {self.rules.bags - 1}] (see babytris.game.bags), got {bag!r}"
                )
            i += int(bag) * self.rules.queues * self.rules.hold_slots
        elif bag is not None:
            raise ValueError("bag: these rules draw pieces independently (randomizer='iid'); they have no bag")
        return i + self.queue_code(queue) * self.rules.hold_slots + slot

    def reachable(self, starts: np.ndarray | None = None) -> np.ndarray:
        """bool array ``(n_boards,)``: the rows some play reaches from the rows
        ``starts`` (default: :meth:`start_nodes`), whatever pieces come (of
        positive chance: a bag's missing pieces have no move).  Without
        previews, hold or a bag every row is reachable; node tables also hold
        (board, bag, queue, slot) combinations no game meets."""
        starts = self.start_nodes()[0] if starts is None else np.asarray(starts, dtype=np.int64)
        seen = np.zeros(self.n_boards, dtype=bool)
        seen[starts] = True
        frontier = np.unique(starts)
        n_pieces = self.rules.n_pieces
        while frontier.size:
            states = (frontier[:, None] * n_pieces + np.arange(n_pieces)).ravel()
            first, counts = self.offsets[states], np.diff(self.offsets)[states]
            moves = np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
            after = np.unique(self.next_board[moves])
            frontier = after[~seen[after]]
            seen[frontier] = True
        return seen

    @cached_property
    def can_come(self) -> np.ndarray:
        """uint8 array ``(n_states,)``, read-only: 1 where the state's piece
        can come to its row (a chance above 0: with a bag, one left in it),
        as the walks over the rows a game meets read it (computed once)."""
        coming = (self.draw_chances() > 0).astype(np.uint8).ravel()
        coming.flags.writeable = False
        return coming

    def draw_chances(self, rows: np.ndarray | None = None) -> np.ndarray:
        """float64 array ``(len(rows), n_pieces)`` (every row by default): the
        chance of each piece being drawn at each row, ``rules.probabilities``
        for independent draws, the bag's shares with a bag (0 for a piece the
        bag does not hold)."""
        from ..game.bags import bag_chances

        rows = np.arange(self.n_boards) if rows is None else np.asarray(rows)
        table = bag_chances(self.rules)
        return (
            table[self.bags[rows]] if self.bags is not None else np.broadcast_to(table[0], (len(rows), len(table[0])))
        )

    def queue_code(self, queue: tuple[int, ...] | None) -> int:
        """A queue of piece indices as its row offset among the board's nodes."""
        k, n = self.rules.preview, self.rules.n_pieces
        queue = () if queue is None and k == 0 else queue
        if (
            queue is None
            or len(queue) != k
            or not all(isinstance(p, (int, np.integer)) and not isinstance(p, bool) and 0 <= p < n for p in queue)
        ):
            raise ValueError(f"queue must be {k} piece indices in [0, {n - 1}] (rules.preview = {k}), got {queue!r}")
        code = 0
        for p in queue:
            code = code * n + int(p)
        return code

    def queue_of(self, row: int) -> tuple[int, ...]:
        """The queue row ``row`` carries: its ``rules.preview`` piece indices, next first (``()`` without previews)."""
        k, n = self.rules.preview, self.rules.n_pieces
        if not k or self.queues is None:
            return ()
        code = int(self.queues[row])
        return tuple((code // n ** (k - 1 - j)) % n for j in range(k))

    def indices(self, boards: np.ndarray) -> np.ndarray:
        """Index of each board of a uint64 array, -1 where it is not reachable:
        an int64 array of the shape of ``boards``.  With previews, the index of
        its node with the queue of first pieces (0, ..., 0); with
        ``rules.mirror``, of the board or its mirror image, the lesser."""
        return layered_indices(self.rules, self.boards, self.layer_starts, canonical_boards(boards, self.rules))

    def __repr__(self) -> str:
        return (
            f"<Transitions {self.rules.width}x{self.rules.height}: {self.n_boards:,} boards, "
            f"{self.n_moves:,} moves, {self.nbytes / 2**20:.1f} MiB>"
        )


def _dropped_placements(t: Transitions, _: None) -> np.ndarray:
    """Each move's placement number among its piece's placements: uint16 array
    ``(n_moves,)``, held, or dropped again by the engine on first read, on the
    idle cores (read-only, then held like the others)."""
    numbers = dropped_placements(engine(t.rules), t.boards, t.offsets, n_threads=idle_cores(os.cpu_count() or 1))
    numbers.flags.writeable = False
    return numbers


# One name for every reader, whether the numbers are held or dropped again when asked.
lazy_field(Transitions, "placement", lambda numbers: numbers is None, _dropped_placements)


def offsets_from_counts(counts: np.ndarray) -> np.ndarray:
    """The offsets of a table whose state ``s`` has ``counts[s]`` moves: int32
    ``(len(counts) + 1,)``, rising from 0.  Raises
    :class:`~babytris.MemoryLimitError` if the moves are more than
    :data:`MAX_MOVES`."""
    total = int(np.sum(counts, dtype=np.int64))
    if total > MAX_MOVES:
        raise MemoryLimitError(too_many_moves(total))
    offsets = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:], dtype=np.int32)
    return offsets


def too_many_moves(n_moves: int) -> str:
    """The refusal of a table of ``n_moves`` moves, more than :data:`MAX_MOVES`."""
    return (
        f"{n_moves:,} moves: a move table holds at most 2**31 - 1 = {MAX_MOVES:,} (int32 offsets); "
        "use the lean mode (babytris.solve_lean, or babytris solve --mode lean), which stores no moves"
    )


def check_table(t: Transitions) -> None:
    """Raise :class:`TableError` unless ``t``'s arrays are a table babytris
    could have built: the dtypes of :data:`DTYPES`, C-contiguous, shapes that
    agree, boards on the rules' cells and ascending within each layer, layer
    starts, offsets rising from 0 to the number of moves, and next boards,
    rows cleared, placement numbers, queues and hold slots in range.  Costs
    about 1% of a solve of the same table (vectorised)."""
    if not isinstance(t.rules, Rules):
        raise TableError("rules", f"must be a babytris.Rules, got {type(t.rules).__name__}")
    _check_dtypes(t)
    _check_rows(t)
    _check_moves(t)
    _check_nodes(t)


def _check_dtypes(t: Transitions) -> None:
    """The arrays the rules call for, each of its :data:`DTYPES` dtype, 1-d and C-contiguous."""
    rules = t.rules
    for name, dtype in DTYPES.items():
        array = t._stored(name)
        if name == "placement" and array is None:
            continue  # (dropped again when read: checked below)
        # Node tables (preview, hold or bag) have queues, slots with hold and
        # bags with a bag; a table of the boards alone (the base with_previews builds on) none.
        if name in ("slots", "bags") and array is None:
            if t.queues is not None and (rules.hold if name == "slots" else rules.randomizer == "bag"):
                raise TableError(name, "missing: the rules have " + ("hold" if name == "slots" else "a bag"))
            continue
        if name == "queues" and array is None:
            for other in ("slots", "bags"):
                if getattr(t, other) is not None:
                    raise TableError("queues", f"missing, where {other} are given")
            continue
        if (
            (name == "queues" and not rules.node_tables)
            or (name == "slots" and not rules.hold)
            or (name == "bags" and rules.randomizer != "bag")
        ):
            wanted = {"queues": "preview, hold or bag", "slots": "hold", "bags": "bag"}[name]
            raise TableError(name, f"given, but the rules have no {wanted}")
        if array is None:
            raise TableError(name, "missing")
        if not isinstance(array, np.ndarray) or array.dtype != dtype or array.ndim != 1:
            raise TableError(
                name,
                f"must be a 1-d {np.dtype(dtype)} array, got "
                f"{getattr(array, 'dtype', type(array).__name__)} {getattr(array, 'shape', '')}",
            )
        if not array.flags.c_contiguous:
            raise TableError(name, "must be C-contiguous")


def _check_rows(t: Transitions) -> None:
    """The rows: boards on the rules' cells, ascending within each layer, the
    layer starts, and offsets rising from 0 to the number of moves."""
    rules, boards, offsets = t.rules, t.boards, t.offsets
    n, n_moves = len(boards), len(t.next_board)
    rows_per_board = 1 if t.queues is None else rules.nodes_per_board
    if n == 0 or n % rows_per_board:
        raise TableError(
            "boards", f"{n} rows, not a positive multiple of {rows_per_board} (bags x queues x hold slots)"
        )
    if rules.cells < 64 and int(boards.max()) >> rules.cells:
        raise TableError(
            "boards", f"a board has cells beyond the {rules.cells} of a {rules.width}x{rules.height} board"
        )
    starts = t.layer_starts
    if len(starts) != len(layers(rules)) + 1 or starts[0] != 0 or starts[-1] != n or np.any(np.diff(starts) < 0):
        raise TableError("layer_starts", f"must be {len(layers(rules)) + 1} starts rising from 0 to {n} rows")
    for lo, hi in zip(starts[:-1], starts[1:]):
        # (np.diff of uint64 would wrap around)
        if hi - lo > 1 and _first_where(np.less, boards[lo + 1 : hi], boards[lo : hi - 1]) >= 0:
            raise TableError("boards", "not in ascending order within a layer")
    if len(offsets) != n * rules.n_pieces + 1:
        raise TableError(
            "offsets", f"{len(offsets):,} entries, not n_boards * n_pieces + 1 = {n * rules.n_pieces + 1:,}"
        )
    # (comparisons, not np.diff: one byte per entry instead of eight, as this runs on every table)
    if n_moves > MAX_MOVES:
        raise TableError("next_board", too_many_moves(n_moves))
    bad = _first_where(np.less, offsets[1:], offsets[:-1])
    if offsets[0] != 0 or offsets[-1] != n_moves or bad >= 0:
        where = ""
        if bad >= 0:
            where = f"; offsets[{bad + 1}] = {offsets[bad + 1]:,} is below offsets[{bad}] = {offsets[bad]:,}"
        raise TableError("offsets", f"must rise from 0 to the number of moves, {n_moves:,}{where}")


def _check_moves(t: Transitions) -> None:
    """The moves: next rows, rows cleared and placement numbers in range, one of each per move."""
    rules, next_board = t.rules, t.next_board
    n, n_moves = len(t.boards), len(next_board)
    for name in ("lines", "placement"):
        array = t._stored(name)
        if array is not None and len(array) != n_moves:
            raise TableError(name, f"{len(array):,} entries, not one per move ({n_moves:,})")
    bad = _first_where(np.greater_equal, next_board.view(np.uint32), n)  # (negatives wrap to the top)
    if bad >= 0:
        raise TableError("next_board", f"move {bad} leads to row {next_board[bad]}, outside the {n:,} rows")
    if n_moves and t.lines.max() >= len(rules.line_scores):
        raise TableError("lines", f"a move clears more than the {len(rules.line_scores) - 1} rows the rules score")
    table = placement_table(rules)
    numbers = int(table.number_first[-1]) if rules.hold else int(np.diff(table.number_first).max())
    placement = t._stored("placement")
    if placement is None:  # (dropped again when read, by the engine: in range)
        if t.queues is not None or rules.moves == "soft":
            raise TableError("placement", "missing: only a table of hard drops without nodes drops its pieces again")
    elif n_moves and placement.max() >= numbers:  # (one pass where all is well)
        outside = placement >= numbers
        if rules.hold:
            outside &= placement != HOLD_MOVE  # the hold move, with hold only
        if outside.any():
            raise TableError("placement", f"a placement number outside the {numbers} placements of the pieces")


def _check_nodes(t: Transitions) -> None:
    """A node table's queues, hold slots and bags: in range, and in the rows' layout."""
    rules, n = t.rules, len(t.boards)
    rows_per_board = 1 if t.queues is None else rules.nodes_per_board
    for name, high in (("queues", rules.queues), ("slots", rules.hold_slots), ("bags", rules.bags)):
        array = getattr(t, name)
        if array is not None and not (0 <= array.min() and array.max() < high):
            raise TableError(name, f"values outside [0, {high})")
    # The sweeps read a node's bag from ``bags`` and lookups compute rows by
    # arithmetic: the arrays must follow the layout (board, bag, queue, slot).
    shape = (n // rows_per_board, rules.bags, rules.queues, rules.hold_slots)
    for axis, name in ((1, "bags"), (2, "queues"), (3, "slots")):
        array = getattr(t, name)
        if array is not None and t.queues is not None:
            expected = np.arange(shape[axis]).reshape([-1 if a == axis else 1 for a in range(4)])
            if not (array.reshape(shape) == expected).all():
                raise TableError(name, "does not follow the rows' layout: board, then bag, queue and hold slot")


#: Entries per slice of the table checks' comparisons: their scratch (4 MiB of
#: bools) is reused, where comparing whole arrays at 4x7 took 180 MB of fresh
#: memory, each page first touched and zeroed by the kernel.
CHECK_SLICE = 2**22


def _first_where(compare: Callable[..., np.ndarray], left: np.ndarray, right: np.ndarray | int) -> int:
    """The first i where ``compare(left[i], right[i])`` holds (``right``: an
    array as long as ``left``, or a number), slice by slice; -1 if none."""
    for first in range(0, len(left), CHECK_SLICE):
        part = slice(first, first + CHECK_SLICE)
        found = compare(left[part], right if isinstance(right, int) else right[part])
        if found.any():  # (where, only if anything: the common case is one pass)
            return first + int(np.flatnonzero(found)[0])
    return -1


def layered_indices(rules: Rules, boards: np.ndarray, layer_starts: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Index of each board of ``query`` (uint64, canonical) among ``boards``,
    numbered by layer and ascending within one (as :class:`Transitions`
    numbers them, ``layer_starts`` cutting the layers), -1 where absent:
    an int64 array of the shape of ``query``."""
    out = np.full(query.shape, -1, dtype=np.int64)
    layer_of_residue = layers(rules)
    layer = layer_of_residue[popcounts(query.ravel()).reshape(query.shape) % len(layer_of_residue)]
    for k in range(len(layer_starts) - 1):
        lo, hi = layer_starts[k], layer_starts[k + 1]
        mine = layer == k
        at = lo + np.searchsorted(boards[lo:hi], query[mine])
        found = at < hi
        found[found] = boards[at[found]] == query[mine][found]
        out[np.flatnonzero(mine)[found]] = at[found]
    return out


def layer_order(rules: Rules, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How to number ``boards`` (uint64, distinct) as :class:`Transitions`
    does: layer by layer, ascending within each.

    Returns:
        ``(order, layer_starts)``: int64 arrays; ``boards[order]`` is the
        numbering, layer ``k`` its entries ``layer_starts[k]:layer_starts[k + 1]``.
    """
    layer_of_residue = layers(rules)
    layer = layer_of_residue[popcounts(boards) % len(layer_of_residue)]
    order = np.lexsort((boards, layer)).astype(np.int64)
    starts = np.zeros(len(layer_of_residue) + 1, dtype=np.int64)
    np.cumsum(np.bincount(layer, minlength=len(layer_of_residue)), out=starts[1:])
    return order, starts


@lru_cache(maxsize=64)
def _layers(rules: Rules) -> tuple[int, ...]:
    if rules.no_holes:
        return (0,)  # filling holes adds cells: the count no longer steps by the piece's size
    steps = {piece.size % rules.width for piece in rules.pieces}
    if len(steps) != 1 or 0 in steps:
        return (0,)
    (step,) = steps
    # Along each cycle r, r - step, r - 2 step, ... of residues c mod w.
    sequence: list[int] = []
    for start in range(rules.width):
        r = start
        while r not in sequence:
            sequence.append(r)
            r = (r - step) % rules.width
    return tuple(sequence.index(r) for r in range(rules.width))


def layers(rules: Rules) -> np.ndarray:
    """Layer of a board with c filled cells: ``layers(rules)[c % len(...)]`` (int64 array).

    If every piece has the same number of cells k modulo the width w (and k
    is not a multiple of w), a placement takes a board's cell count c to
    c + k (mod w), whatever it clears.  The boards are then layered by c mod w,
    each layer numbered after the layer its moves lead to, so a Gauss-Seidel
    sweep in number order reads values of the same sweep for every move but
    those out of the first layer of each cycle, and no board of a layer leads
    to another of the same layer: threads may share a layer.  (A move that
    tops out, ``rules.top_out``, leads to the lost board, whose value is never
    swept: reading it is safe from any layer.)  Otherwise, or with
    ``rules.no_holes`` (the cells filled under a piece add to the count),
    there is one layer (``[0]``).
    """
    return np.array(_layers(rules), dtype=np.int64)


def sweep_order(transitions: Transitions, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The boards that have a move, in the order sweeps visit them.

    With several layers, in number order (a layer after the one its moves
    lead to).  With one, from the largest board down: a move that clears
    nothing leads to a superset, a larger number, visited first.  With hold,
    layer by layer but from the last row of a layer down, as a move putting a
    piece on hold stays on its board and (without previews) leads to a later
    row of it; with previews it may lead to an earlier one, read from the
    sweep before (the layers are then not independent: see :func:`independent_layers`).

    ``out`` (int32, an entry per board), if given, receives the order where
    its layers are independent (the order is then a view of its start).

    Returns:
        ``(order, layer_starts)``: int32 board indices; int64 boundaries, layer
        ``k`` being ``order[layer_starts[k]:layer_starts[k + 1]]``.
    """
    out = out if independent_layers(transitions) else None  # (the others reorder a copy)
    order, starts = live_boards(transitions.offsets, transitions.rules.n_pieces, transitions.layer_starts, out)
    if len(transitions.layer_starts) == 2:
        return order[::-1].copy(), starts
    if transitions.rules.hold:
        order = np.concatenate([order[a:b][::-1] for a, b in zip(starts[:-1], starts[1:])])
    return order, starts


def independent_layers(transitions: Transitions) -> bool:
    """Whether no row leads to another of its own layer (threads may share a
    layer): several layers, and no hold (a hold move stays on its board)."""
    return len(transitions.layer_starts) > 2 and not transitions.rules.hold
