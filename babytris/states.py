"""Reachable-state enumeration: every board reachable from the start, and the
transition table (CSR) the solvers sweep."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from . import _core
from .pieces import Placement
from .progress import polling
from .rules import Rules
from .validation import is_int

__all__ = [
    "Transitions", "MemoryLimitError", "enumerate_boards", "placement_table", "sweep_order", "lost_board",
    "DEFAULT_MAX_MEMORY",
]

#: Default memory budget of a solve: 8 GiB, a third of the 24 GiB machine.
DEFAULT_MAX_MEMORY = 8 * 2**30

# Below this many boards per thread, starting threads costs more than it saves.
MIN_BOARDS_PER_THREAD = 50_000

# Bytes per move in the table: next board (int32), rows cleared (uint8), placement (uint16).
MOVE_BYTES = 4 + 1 + 2
# Bytes per board the numbering by layers holds while the table is built:
# the boards regrouped (uint64), each one's new number (int32) and layer (uint8).
LAYER_BYTES = 8 + 4 + 1


class MemoryLimitError(MemoryError):
    """The work would need more memory than ``max_memory`` allows."""


@dataclass(frozen=True)
class PlacementTable:
    """Every (piece, rotation, column) move as flat arrays, grouped by piece.

    ``masks[k]``: cells at row 0 (uint64); ``rows[k]``: rows spanned;
    ``first[p]:first[p+1]``: the moves of piece p (rotation-major).
    """

    masks: np.ndarray
    rows: np.ndarray
    first: np.ndarray
    placements: tuple[tuple[Placement, ...], ...]


@lru_cache(maxsize=64)
def placement_table(rules: Rules) -> PlacementTable:
    """The :class:`PlacementTable` of ``rules`` (cached)."""
    masks: list[int] = []
    rows: list[int] = []
    first = [0]
    placements = []
    for piece in rules.pieces:
        mine = []
        for rotation, shape in enumerate(piece.orientations()):
            shape_width = 1 + max(x for x, _ in shape)
            shape_rows = 1 + max(y for _, y in shape)
            if shape_rows > rules.height:
                continue
            for column in range(rules.width - shape_width + 1):
                masks.append(sum(1 << (y * rules.width + x + column) for x, y in shape))
                rows.append(shape_rows)
                mine.append(Placement(piece.name, rotation, column, len(mine)))
        first.append(len(masks))
        placements.append(tuple(mine))
    return PlacementTable(
        np.array(masks, dtype=np.uint64),
        np.array(rows, dtype=np.uint8),
        np.array(first, dtype=np.int32),
        tuple(placements),
    )


@lru_cache(maxsize=64)
def engine(rules: Rules) -> _core.Engine:
    """The compiled placement engine for ``rules`` (cached)."""
    t = placement_table(rules)
    return _core.Engine(rules.width, rules.height, t.masks, t.rows, t.first, clears_only=rules.objective == "combo",
                        mirror_rows=mirror_rows(rules.width) if rules.mirror else None, no_holes=rules.no_holes,
                        top_out=rules.top_out)


def lost_board(rules: Rules) -> int:
    """The board a placement that tops out leads to (``rules.top_out``): the
    top row full, which no other board has; nothing is a move on it."""
    return ((1 << rules.width) - 1) << ((rules.height - 1) * rules.width)


def mirror_rows(width: int) -> np.ndarray:
    """uint16 array ``(2**width,)``: each row pattern reflected left-right."""
    rows = np.arange(1 << width, dtype=np.int64)
    out = np.zeros_like(rows)
    for col in range(width):
        out |= ((rows >> col) & 1) << (width - 1 - col)
    return out.astype(np.uint16)


def mirror_boards(boards: np.ndarray, width: int, height: int) -> np.ndarray:
    """Each board of a uint64 array reflected left-right."""
    boards = np.asarray(boards, dtype=np.uint64)
    table = mirror_rows(width).astype(np.uint64)
    row = np.uint64((1 << width) - 1)
    out = np.zeros_like(boards)
    for r in range(height):
        shift = np.uint64(r * width)
        out |= table[((boards >> shift) & row).astype(np.int64)] << shift
    return out


def canonical_boards(boards: np.ndarray, rules: Rules) -> np.ndarray:
    """Each board, or its mirror image where that is less (``rules.mirror``); as is otherwise."""
    boards = np.asarray(boards, dtype=np.uint64)
    if not rules.mirror:
        return boards
    return np.minimum(boards, mirror_boards(boards, rules.width, rules.height))


@dataclass(frozen=True, repr=False, eq=False)
class Transitions:
    """The reachable game graph in CSR form.

    State ``s = board * n_pieces + piece`` has moves ``offsets[s]:offsets[s+1]``;
    for each move ``next_board`` (int32 board index), ``lines`` (uint8 rows
    cleared) and ``placement`` (uint16, number of the move among the piece's
    placements, see :func:`placement_table`).  ``boards[i]`` (uint64) is board
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
    :func:`with_previews`.
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

    @property
    def n_boards(self) -> int:
        """The number of rows of the table: boards, or with previews or hold
        (board, queue, hold slot) nodes."""
        return len(self.boards)

    @property
    def start_index(self) -> int:
        """Index of the board the game starts on (``rules.start``); without previews only."""
        if self.rules.preview:
            raise ValueError("start_index: with previews a game starts on one of several (board, queue) nodes; "
                             "see start_nodes()")
        return self.board_index(self.rules.start)

    def start_nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows a game starts on and their chances: the start board with each
        queue (its pieces drawn independently) and the hold slot empty, or
        without previews the start board alone.

        Returns:
            ``(indices, chances)``: int64 and float64 arrays ``(rules.queues,)``.
        """
        first = self.board_index(self.rules.start, (0,) * self.rules.preview)
        chances = np.ones(1)
        for _ in range(self.rules.preview):
            chances = np.outer(chances, self.rules.probabilities).ravel()
        return first + np.arange(self.rules.queues, dtype=np.int64) * self.rules.hold_slots, chances

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
        """The bytes held by the table's arrays."""
        arrays = (self.boards, self.layer_starts, self.offsets, self.next_board, self.lines, self.placement)
        arrays += tuple(a for a in (self.queues, self.slots) if a is not None)
        return sum(a.nbytes for a in arrays)

    def board_index(self, board: int, queue: "tuple[int, ...] | None" = None, held: int | None = None,
                    locked: bool = False) -> int:
        """Index of a reachable board (with previews: of the board with ``queue``,
        its ``preview`` piece indices, next first; with hold: and ``held``, the
        held piece's index or None, ``locked`` if it was just put there); raises
        ``KeyError`` if it is not reachable, ``ValueError`` for a bad queue or slot."""
        board = int(board)
        cells = self.rules.cells
        i = int(self.indices(np.array([board], dtype=np.uint64))[0]) if 0 <= board < 2**cells else -1
        if i < 0:
            raise KeyError(f"board {board} is not reachable from the start under these rules")
        slot = 0
        if held is not None or locked:
            n = self.rules.n_pieces
            if not self.rules.hold:
                raise ValueError("held: these rules have no hold (rules.hold is False)")
            if held is None or isinstance(held, bool) or not (isinstance(held, (int, np.integer)) and 0 <= held < n):
                raise ValueError(f"held must be a piece index in [0, {n - 1}] (or None: the slot empty), got {held!r}")
            slot = 1 + int(held) + (n if locked else 0)
        return i + self.queue_code(queue) * self.rules.hold_slots + slot

    def queue_code(self, queue: "tuple[int, ...] | None") -> int:
        """A queue of piece indices as its row offset among the board's nodes."""
        k, n = self.rules.preview, self.rules.n_pieces
        queue = () if queue is None and k == 0 else queue
        if queue is None or len(queue) != k or not all(
            isinstance(p, (int, np.integer)) and not isinstance(p, bool) and 0 <= p < n for p in queue
        ):
            raise ValueError(f"queue must be {k} piece indices in [0, {n - 1}] (rules.preview = {k}), got {queue!r}")
        code = 0
        for p in queue:
            code = code * n + int(p)
        return code

    def indices(self, boards: np.ndarray) -> np.ndarray:
        """Index of each board of a uint64 array, -1 where it is not reachable:
        an int64 array of the shape of ``boards``.  With previews, the index of
        its node with the queue of first pieces (0, ..., 0); with
        ``rules.mirror``, of the board or its mirror image, the lesser."""
        boards = canonical_boards(boards, self.rules)
        out = np.full(boards.shape, -1, dtype=np.int64)
        layer_of_residue = layers(self.rules)
        layer = layer_of_residue[_core.popcounts(boards.ravel()).reshape(boards.shape) % len(layer_of_residue)]
        for k in range(len(self.layer_starts) - 1):
            lo, hi = self.layer_starts[k], self.layer_starts[k + 1]
            mine = layer == k
            at = lo + np.searchsorted(self.boards[lo:hi], boards[mine])
            found = at < hi
            found[found] = self.boards[at[found]] == boards[mine][found]
            out[np.flatnonzero(mine)[found]] = at[found]
        return out

    def __repr__(self) -> str:
        return (
            f"<Transitions {self.rules.width}x{self.rules.height}: {self.n_boards:,} boards, "
            f"{self.n_moves:,} moves, {self.nbytes / 2**20:.1f} MiB>"
        )


def estimate_bytes_per_board(rules: Rules, solver_bytes_per_board: int = 0) -> int:
    """Upper bound of the bytes one reachable board costs at the peak: its key,
    its map slots, its rows of the table with every placement legal, and what
    the solver keeps for it."""
    n_moves = len(placement_table(rules).masks)
    return 8 + 4 * 16 + 8 * rules.n_pieces + MOVE_BYTES * n_moves + LAYER_BYTES + solver_bytes_per_board


def enumerate_boards(
    rules: Rules, *, max_memory: int = DEFAULT_MAX_MEMORY, n_jobs: int | None = None, solver_bytes_per_board: int = 0,
    progress: "Callable[[int, int], None] | None" = None,
) -> Transitions:
    """Every board reachable from the empty board, and the move table.

    A breadth-first search marks the boards found, in a bitmap over all
    ``2**cells`` boards when the board has at most 30 cells, else in a hash
    map; then the moves are written in sorted board order by ``n_jobs``
    threads (default: every core).  The result does not depend on ``n_jobs``.
    ``progress(found, expanded)``, if given, is called about ten times a
    second during the search (from a helper thread) with the boards found
    and expanded so far, and once at its end (see :class:`babytris.progress.ProgressBars`).

    Returns:
        :class:`Transitions` with ``n_boards`` boards and the move table.

    Raises:
        MemoryLimitError: if the table (plus ``solver_bytes_per_board`` for
            each board, what the caller allocates next) would exceed
            ``max_memory`` bytes.  How many boards are reachable is known only
            by searching, so the search itself keeps count: it stops as soon
            as what it holds, or the table it would then build, would cross
            the budget, before allocating beyond it.  The message gives the
            estimate so far and the worst case (every board without a full
            row reachable, every placement legal).
    """
    max_memory = _check_max_memory(max_memory)
    per_board = estimate_bytes_per_board(rules, solver_bytes_per_board)
    worst_boards = (2**rules.width - 1) ** rules.height  # no full row survives a placement
    started = time.perf_counter()
    start = int(canonical_boards(np.array([rules.start], dtype=np.uint64), rules)[0])
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable(found, expanded) or None, got {progress!r}")
    with polling(progress) as counts:
        status, boards, layer_starts, offsets, next_board, lines, placement = engine(rules).enumerate(
            start, max_memory, solver_bytes_per_board + LAYER_BYTES, resolve_n_jobs(n_jobs), MIN_BOARDS_PER_THREAD,
            layer_of_residue=layers(rules), progress=counts,
        )
    if status != 0:
        code, n_seen, footprint = status
        if code == -1:
            raise MemoryError(f"enumeration ran out of memory after {n_seen:,} boards")
        if code == -3:
            raise MemoryLimitError(f"more than 2**31 boards reachable for {rules!r}")
        raise MemoryLimitError(
            f"{rules.width}x{rules.height} with {len(rules.pieces)} pieces needs more than max_memory="
            f"{_size(max_memory)}: over {n_seen:,} boards reachable, {_size(footprint)} already, "
            f"~{per_board} bytes per board (worst case {worst_boards:,} boards, "
            f"{_size(worst_boards * per_board)}); raise max_memory or use a smaller board"
        )
    transitions = Transitions(
        rules, boards, layer_starts, offsets, next_board, lines, placement, time.perf_counter() - started
    )
    if rules.preview or rules.hold:
        transitions = with_previews(transitions, max_memory=max_memory, bytes_per_node=solver_bytes_per_board,
                                    started=started)
    return transitions


#: Placement number of the move that puts the piece to place on hold (into
#: the empty slot), placing nothing (fits int16 policies and uint16 tables).
HOLD_MOVE = 0x7FFF


def with_previews(base: Transitions, *, max_memory: int = DEFAULT_MAX_MEMORY, bytes_per_node: int = 0,
                  started: float | None = None) -> Transitions:
    """The move table of ``base.rules`` (with ``preview = k`` and/or ``hold``)
    built from the table of the same boards without them: every board times
    every queue of k pieces (any queue can come with any reachable board) and,
    with hold, every hold slot.  Vectorised: the rows are the base rows, the
    next nodes computed from the queues.  Refuses (:class:`MemoryLimitError`)
    a table that, with ``bytes_per_node`` more per node (what the solver will
    hold), would exceed ``max_memory``.

    With hold a node's slot is empty, holds piece p (free), or holds p just
    put there (locked: the piece to place came out of the queue by that hold
    and cannot be held again).  A state's row lists the placements of the
    piece to place (the slot unchanged, unlocked), then either the placements
    of the held piece (a swap: the piece to place goes on hold; none when
    the same piece is held) or, with the slot empty, one move placing nothing
    that puts the piece to place on hold (placement number :data:`HOLD_MOVE`, no rows cleared).  Placement
    numbers then count over every piece's placements (see :func:`placement_table`).
    """
    rules = base.rules
    n, n_pieces, k = base.n_boards, rules.n_pieces, rules.preview
    queues, slots = rules.queues, rules.hold_slots
    nodes = n * queues * slots
    n_states = nodes * n_pieces
    n_moves = 2 * base.n_moves * queues * slots  # at most: a piece's row and the held one's
    # The build holds about a dozen int64 arrays per state and ten per move at its peak (measured).
    need = n_states * 96 + n_moves * 90 + nodes * (16 + bytes_per_node) + base.nbytes
    what = f"preview={k}, hold={rules.hold}"
    if rules.hold and len(placement_table(rules).masks) >= HOLD_MOVE:
        raise ValueError(f"hold: at most {HOLD_MOVE - 1} placements over all pieces, got {len(placement_table(rules).masks)}")
    if nodes >= 2**31 - 1:
        raise MemoryLimitError(f"{what}: {n:,} boards x {queues:,} queues x {slots} hold slots is over 2**31 nodes")
    if need > max_memory:
        raise MemoryLimitError(
            f"{what}: {n:,} boards x {queues:,} queues x {slots} hold slots x {n_pieces} pieces = {n_states:,} "
            f"states and up to {n_moves:,} moves need about {_size(need)}, more than max_memory={_size(max_memory)}"
        )
    state = np.arange(n_states, dtype=np.int64)
    node, drawn = np.divmod(state, n_pieces)
    node, slot = np.divmod(node, slots)
    board, queue = np.divmod(node, queues)
    shift = queues // n_pieces if k else 1
    placed = queue // shift if k else drawn                 # the first of queue + drawn
    rest = (queue % shift) * n_pieces + drawn if k else np.zeros_like(drawn)  # the queue after it
    counts = np.diff(base.offsets)
    own = counts[board * n_pieces + placed]
    held = np.where((slot >= 1) & (slot <= n_pieces), slot - 1, 0)
    if rules.hold:
        # (no swap with the same piece held: it would repeat the row)
        swap = (slot >= 1) & (slot <= n_pieces) & (held != placed)
        other = np.where(slot == 0, 1, np.where(swap, counts[board * n_pieces + held], 0))
    else:
        other = np.zeros_like(own)
    offsets = np.zeros(n_states + 1, dtype=np.int64)
    np.cumsum(own + other, out=offsets[1:])
    move_state = np.repeat(state, own + other)
    j = np.arange(offsets[-1]) - offsets[:-1][move_state]
    ms, mb = move_state, board[move_state]
    is_own = j < own[ms]
    is_swap = ~is_own & (slot[ms] >= 1)
    is_hold = ~is_own & (slot[ms] == 0)
    base_row = np.where(is_own, mb * n_pieces + placed[ms], mb * n_pieces + held[ms])
    base_move = np.minimum(base.offsets[base_row] + np.where(is_own, j, j - own[ms]), max(base.n_moves - 1, 0))
    # (a table with no move but hold moves: read a dummy move, masked below)
    pad = (lambda a: a) if base.n_moves else (lambda a: np.zeros(1, dtype=a.dtype))
    next_board = np.where(is_hold, mb, pad(base.next_board)[base_move])
    unlocked = np.where(slot[ms] > n_pieces, slot[ms] - n_pieces, slot[ms])
    next_slot = np.where(is_own, unlocked, np.where(is_swap, placed[ms] + 1, n_pieces + 1 + placed[ms]))
    next_node = (next_board.astype(np.int64) * queues + rest[ms]) * slots + next_slot
    lines = np.where(is_hold, 0, pad(base.lines)[base_move]).astype(np.uint8)
    placement = pad(base.placement)[base_move]
    if rules.hold:
        first = placement_table(rules).first
        piece = np.where(is_own, placed[ms], held[ms])
        placement = np.where(is_hold, HOLD_MOVE, first[piece] + placement).astype(np.uint16)
    return Transitions(
        rules,
        np.repeat(base.boards, queues * slots),
        base.layer_starts * queues * slots,
        offsets,
        next_node.astype(np.int32),
        lines,
        placement.astype(np.uint16),
        (time.perf_counter() - started) if started is not None else base.seconds,
        np.tile(np.repeat(np.arange(queues, dtype=np.int64), slots), n),
        np.tile(np.arange(slots, dtype=np.int64), n * queues) if rules.hold else None,
    )


def resolve_n_jobs(n_jobs: object) -> int:
    """Threads to use: ``None`` or -1 for every core, else an integer >= 1."""
    cores = os.cpu_count() or 1
    if n_jobs is None or n_jobs == -1:
        return cores
    if not (is_int(n_jobs) and 1 <= n_jobs <= 1024):  # type: ignore[operator]
        raise ValueError(f"n_jobs must be None, -1 or an integer in [1, 1024], got {n_jobs!r}")
    return int(n_jobs)  # type: ignore[call-overload]


def _check_max_memory(max_memory: object) -> int:
    if not (is_int(max_memory) and 2**20 <= max_memory < 2**63):  # type: ignore[operator]
        raise ValueError(f"max_memory must be an integer number of bytes in [2**20, 2**63), got {max_memory!r}")
    return int(max_memory)


def _size(n: float) -> str:
    """Bytes as GiB, or MiB below 1 GiB."""
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


@lru_cache(maxsize=64)
def _layers(rules: Rules) -> tuple[int, ...]:
    if rules.no_holes:
        return (0,)   # filling holes adds cells: the count no longer steps by the piece's size
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


def sweep_order(transitions: Transitions) -> tuple[np.ndarray, np.ndarray]:
    """The boards that have a move, in the order sweeps visit them.

    With several layers, in number order (a layer after the one its moves
    lead to).  With one, from the largest board down: a move that clears
    nothing leads to a superset, a larger number, visited first.  With hold,
    layer by layer but from the last row of a layer down, as a move putting a
    piece on hold stays on its board and (without previews) leads to a later
    row of it; with previews it may lead to an earlier one, read from the
    sweep before (the layers are then not independent: see :func:`independent_layers`).

    Returns:
        ``(order, layer_starts)``: int32 board indices; int64 boundaries, layer
        ``k`` being ``order[layer_starts[k]:layer_starts[k + 1]]``.
    """
    n_pieces = transitions.rules.n_pieces
    has_move = np.diff(transitions.offsets[::n_pieces]) > 0
    order = np.flatnonzero(has_move).astype(np.int32)
    if len(transitions.layer_starts) == 2:
        return order[::-1].copy(), np.array([0, len(order)], dtype=np.int64)
    live_before = np.concatenate([[0], np.cumsum(has_move)])
    starts = live_before[transitions.layer_starts].astype(np.int64)
    if transitions.rules.hold:
        order = np.concatenate([order[a:b][::-1] for a, b in zip(starts[:-1], starts[1:])])
    return order, starts


def independent_layers(transitions: Transitions) -> bool:
    """Whether no row leads to another of its own layer (threads may share a
    layer): several layers, and no hold (a hold move stays on its board)."""
    return len(transitions.layer_starts) > 2 and not transitions.rules.hold
