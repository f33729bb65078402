"""Reachable-state enumeration: every board reachable from the start, and the
move table (:class:`~babytris.engine.transitions.Transitions`) the solvers sweep,
with previews and hold expanded over it."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable

import numpy as np

from ..game.bags import after_draw, bag_counts
from ..game.rules import Rules
from ..game.validation import check_type
from . import _core, _moves
from .placements import canonical_boards, engine, lost_board, most_moves, placement_table
from .progress import polling
from .resources import (
    DEFAULT_MAX_MEMORY,
    LAYER_BYTES,
    MIN_BOARDS_PER_THREAD,
    STORED_PLACEMENTS,
    MemoryLimitError,
    check_max_memory,
    estimate_bytes_per_board,
    format_bytes,
    idle_cores,
    resolve_n_jobs,
    table_bytes,
)
from .transitions import HOLD_MOVE, MAX_MOVES, TableError, Transitions, layers, offsets_from_counts, too_many_moves

__all__ = ["enumerate_boards", "table_of_boards", "with_previews"]


def enumerate_boards(
    rules: Rules,
    *,
    max_memory: int = DEFAULT_MAX_MEMORY,
    n_jobs: int | None = None,
    solver_bytes_per_board: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> Transitions:
    """Every board reachable from the empty board, and the move table.

    A breadth-first search marks the boards found, in a bitmap over all
    ``2**cells`` boards when the board has at most 30 cells, else in a hash
    map; then the moves are written in sorted board order by ``n_jobs``
    threads (default: every core other processes leave idle as the search
    starts, see :func:`~babytris.engine.resources.idle_cores`; the bitmap search
    shares its wide stretches among them too; a board of 16 cells or fewer
    takes one thread without looking).  The result does not depend
    on ``n_jobs``.
    ``progress(found, expanded)``, if given, is called about ten times a
    second during the search (from a helper thread) with the boards found
    and expanded so far, and once at its end (see :class:`babytris.engine.progress.ProgressBars`).

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
    check_type("rules", rules, Rules, "a babytris.Rules")
    max_memory = check_max_memory(max_memory)
    threads = resolve_n_jobs(n_jobs)
    per_board = estimate_bytes_per_board(rules, solver_bytes_per_board)
    worst_boards = (2**rules.width - 1) ** rules.height  # no full row survives a placement
    forecast = forecast_table(rules)
    if forecast is not None and table_bytes(rules, *forecast, solver_bytes_per_board) > max_memory:
        need = table_bytes(rules, *forecast, solver_bytes_per_board)
        raise MemoryLimitError(
            f"{rules.width}x{rules.height} with {len(rules.pieces)} pieces needs more than max_memory="
            f"{format_bytes(max_memory)}: about {forecast[0]:,} boards and {forecast[1]:,} moves (forecast from the "
            f"smaller heights), {format_bytes(need)}; refused before the search. "
            "Raise max_memory, use a smaller board, or the lean mode (babytris.solve_lean)"
        )
    if forecast is not None and rules.node_tables:  # previews, hold, bags: the nodes' states alone, before the search
        nodes = forecast[0] * rules.nodes_per_board
        need = nodes * rules.n_pieces * 96 + nodes * (16 + solver_bytes_per_board)  # (with_previews' terms, no moves)
        if need > max_memory:
            raise MemoryLimitError(
                f"{rules.width}x{rules.height} with preview={rules.preview}, hold={rules.hold}: about "
                f"{forecast[0]:,} boards (forecast from the smaller heights) x {rules.nodes_per_board:,} nodes each "
                f"x {rules.n_pieces} pieces = {nodes * rules.n_pieces:,} states need more than {format_bytes(need)}, "
                f"more than max_memory={format_bytes(max_memory)}; refused before the search"
            )
    if forecast is not None and forecast[1] > MAX_MOVES:  # (refused before the search, as for memory)
        raise MemoryLimitError(
            f"{rules.width}x{rules.height}: about {too_many_moves(forecast[1])} (forecast from the smaller heights)"
        )
    started = time.perf_counter()
    start = int(canonical_boards(np.array([rules.start], dtype=np.uint64), rules)[0])
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable(found, expanded) or None, got {progress!r}")
    with polling(progress) as counts:
        status, boards, layer_starts, offsets, next_board, lines, placement = _engine_table(
            rules,
            start,
            max_memory,
            solver_bytes_per_board,
            _default_threads(rules, threads) if n_jobs in (None, -1) else threads,  # (explicit n_jobs: as asked)
            progress=counts,
        )
    if status != 0:
        code, n_seen, footprint = status
        if code == -4:
            raise KeyboardInterrupt
        if code == -1:
            raise MemoryError(f"enumeration ran out of memory after {n_seen:,} boards")
        if code == -3:
            raise MemoryLimitError(f"more than 2**31 boards reachable for {rules!r}")
        if code == -5:  # (footprint: the moves found)
            raise MemoryLimitError(f"{rules.width}x{rules.height}: {too_many_moves(footprint)}")
        raise MemoryLimitError(
            f"{rules.width}x{rules.height} with {len(rules.pieces)} pieces needs more than max_memory="
            f"{format_bytes(max_memory)}: "
            + (
                f"over {n_seen:,} boards reachable, whose search and table would hold {format_bytes(footprint)}"
                if n_seen > 1
                else f"the search's index alone would hold {format_bytes(footprint)}"
            )
            + f" (stopped before allocating it), ~{per_board} bytes per board (worst case "
            f"{worst_boards:,} boards, "
            f"{format_bytes(worst_boards * per_board)}); raise max_memory or use a smaller board",
            boards_found=n_seen,
        )
    transitions = Transitions(
        rules, boards, layer_starts, offsets, next_board, lines, placement, time.perf_counter() - started
    )
    if rules.node_tables:
        transitions = with_previews(
            transitions, max_memory=max_memory, bytes_per_node=solver_bytes_per_board, started=started
        )
    return transitions


def _engine_table(rules: Rules, start: int, max_memory: int, bytes_per_board: int, threads: int, **options) -> tuple:
    """The engine's enumeration (``Engine.enumerate``) of ``rules`` from
    ``start`` with the layers and placement numbers every table has;
    ``bytes_per_board``: what the caller holds per board after; ``options``:
    ``progress=`` or ``given=`` (the boards to build on, in place of a search).

    Returns:
        ``(status, boards, layer_starts, offsets, next_board, lines, placement)``.
    """
    return engine(rules).enumerate(
        start,
        max_memory,
        bytes_per_board + LAYER_BYTES,
        threads,
        MIN_BOARDS_PER_THREAD,
        layer_of_residue=layers(rules),
        placements_up_to=STORED_PLACEMENTS,
        **options,
    )


def table_of_boards(
    rules: Rules, boards: np.ndarray, *, offsets: np.ndarray | None = None, max_memory: int = DEFAULT_MAX_MEMORY
) -> Transitions:
    """The move table of ``rules`` built on ``boards`` (a table's boards, as
    a saved file lists them: each board once per node with previews, hold or
    a bag) in place of the search: every move the engine's own, and the
    table :func:`enumerate_boards` derives, where ``boards`` are the boards
    play reaches from the start.  That is checked, not assumed: each board
    on the rules' cells and given once, every move leading to a board given
    (the set is closed), and every board reached by play from the start (a
    walk over the moves; a list far from closed is refused before its table is
    allocated, from the moves of a sample, and one made to pass the sample once
    its table is built).  About two thirds of an enumeration: no search.

    ``offsets`` (a plain table's, saved with ``boards``) spare the count of
    the moves where the boards are listed in the table's order (hard drops):
    the moves are written at them, and a state whose moves do not fill its
    row exactly is refused; they are the rules' own offsets once built, so
    nothing is taken on their word.  Elsewhere the moves are counted (and
    the boards compared, the caller's part, tell the file's table from the
    rules').

    Returns:
        :class:`Transitions`, its boards in the engine's order (compare them
        with ``boards`` to tell whether those were listed in it).

    Raises:
        TableError: (field ``"boards"``) the boards are not the rules'
            reachable ones; the message names a board at fault.  (Field
            ``"offsets"``) an offset is not the rules' own; the message
            names the first, and the rules' own there.
        MemoryLimitError: the table of that many boards could exceed ``max_memory``.
    """
    check_type("rules", rules, Rules, "a babytris.Rules")
    max_memory = check_max_memory(max_memory)
    boards = np.asarray(boards)
    per_board = rules.nodes_per_board if rules.node_tables else 1
    if boards.dtype != np.uint64 or boards.ndim != 1 or len(boards) % per_board:
        raise TableError(
            "boards", f"must be a 1-d uint64 array of {per_board} entries per board, got {boards.dtype} {boards.shape}"
        )
    base = np.ascontiguousarray(boards[::per_board])
    if offsets is not None:
        if rules.node_tables:
            raise ValueError("offsets: a table with previews, hold or a bag is built on its boards' table; give none")
        offsets = np.asarray(offsets)
        if offsets.dtype != np.int32 or offsets.ndim != 1:  # (a saved table's: not worth converting)
            offsets = None
        else:
            offsets = np.ascontiguousarray(offsets)
    if not len(base):
        raise TableError("boards", "none given: a table holds the start board at least")
    cells = rules.width * rules.height
    if cells < 64 and int(base.max()) >> cells:
        raise TableError("boards", f"{int(base.max())} is not a board of {rules.width}x{rules.height} cells")
    need = table_bytes(rules, len(base), len(base) * rules.n_pieces * most_moves(rules))  # (every placement a move)
    if need > max_memory:
        raise MemoryLimitError(
            f"the table of {len(base):,} boards could hold {format_bytes(need)}, "
            f"more than max_memory={format_bytes(max_memory)}"
        )
    started = time.perf_counter()
    # (threads as the enumeration takes them by default: one on small boards, else the idle cores only)
    threads = _default_threads(rules, resolve_n_jobs(None))
    status, *arrays = _engine_table(rules, 0, max_memory, 0, threads, given=base, given_offsets=offsets)
    if status != 0:
        code, board, found = status
        if code == -9 and offsets is not None:
            raise TableError(
                "offsets", f"[{board:,}] is {offsets[board]} where the rules' own table (re-derived) has {found}"
            )
        if code == -4:
            raise KeyboardInterrupt
        if code == -6:
            raise TableError("boards", f"board {board} has a move to a board not in the table")
        if code == -7:
            raise TableError("boards", f"board {board} is listed twice")
        if code == -5:
            raise MemoryLimitError(f"{rules.width}x{rules.height}: over {too_many_moves(found)}")
        if code == -3:
            raise MemoryLimitError(f"{len(base):,} boards given: a table holds fewer than 2**31")
        raise MemoryError(f"the table of {len(base):,} given boards: out of memory")
    boards_found, layer_starts, offsets, next_board, lines, placement = arrays
    table = Transitions(
        rules, boards_found, layer_starts, offsets, next_board, lines, placement, time.perf_counter() - started
    )
    start = int(canonical_boards(np.array([rules.start], dtype=np.uint64), rules)[0])
    at = np.flatnonzero(table.boards == start)
    if not len(at):
        raise TableError("boards", f"the start board {start} is not in the table")
    unreached = _core.first_unreached(table.offsets, table.next_board, rules.n_pieces, int(at[0]))
    if unreached >= 0:
        raise TableError("boards", f"board {table.boards[unreached]} is not reached by play from the start board")
    if rules.node_tables:
        table = with_previews(table, max_memory=max_memory, started=started)
    return table


def _default_threads(rules: Rules, threads: int) -> int:
    """The enumeration's threads by default: one where the board has fewer
    possible boards than two threads' share of the move table
    (:data:`~babytris.engine.resources.MIN_BOARDS_PER_THREAD` each), without a look
    at the load: its table is written on one thread anyway, and its search
    gains nothing from a second (4x4: 1.63 ms on one thread or two, medians
    of 300), while the look costs a dozen system calls (by default, with the
    look, 1.68-1.76 ms against 1.61-1.67 ms on one thread, medians of 61 in
    two runs; with a spinning process per core 1.06-1.12x one thread's time,
    means of 241); else the idle cores (:func:`~babytris.engine.resources.idle_cores`)."""
    if 2 ** (rules.width * rules.height) < 2 * MIN_BOARDS_PER_THREAD:
        return 1
    return idle_cores(threads)


#: Boards of at most this many cells are searched to forecast a bigger board's count (each well under a second).
FORECAST_CELLS = 20
#: The memory a forecast's search of taller rows may take (where a piece standing up needs
#: them): a search stopped by it costs a second or less (8x5 with an L or a T pentomino: stopped
#: after 0.3 s with 2.9 million boards found).
FORECAST_BUDGET = 2**28
#: Boards of more cells than this get a forecast before their search (5x5 and up;
#: 4x7 forecast 35.85 million boards against 35.7 found): a bitmap search of
#: 25-30 cells can hold 100 million boards or more before a budget stops it
#: (5x6 with max_memory 1 GiB: refused after 13-119 s of search, now in a second).
FORECASTED_FROM_CELLS = 24


def forecast_boards(rules: Rules) -> int | None:
    """:func:`forecast_table`'s boards alone."""
    forecast = forecast_table(rules)
    return None if forecast is None else forecast[0]


def forecast_table(rules: Rules) -> tuple[int, int] | None:
    """A forecast ``(boards, moves)`` of the reachable boards of ``rules``
    and their moves, for boards too big to search cheaply (over
    :data:`FORECASTED_FROM_CELLS` cells);
    None for smaller ones or when no forecast can be made.  Two boards of
    the same width, one row apart, are searched, and their ratio (the growth
    per added row) extrapolated to ``rules.height``; the moves per board are
    the taller one's (4 wide: 2.72 at every height from 4 to 7).

    Where the rows of :data:`FORECAST_CELLS` cells are too low for a piece
    standing up (their growth counts it lying down only: an upright 1x5
    piece at 8x8 was forecast 115,269 boards from 8x2 and 8x1, where 8x6
    and 8x5 forecast 2.1e8, and the search then ran 30 s and 3.5 GiB before
    it was refused), the pairs of heights searched start at the lowest
    where every orientation of every piece fits and go up a row at a time,
    each search within :data:`FORECAST_BUDGET`, until one stops at that
    budget: the boards it had found are then a floor of its count, so of
    its growth (8x8 with a T pentomino: 209 boards at 8x3, 1,763 at 8x4,
    over 2.9 million at 8x5: forecast 8.9 million from the first pair, over
    10**16 from the second).  The forecast is the largest of the pairs'.
    Otherwise (or where the lowest pair's search stops), the two lowest
    rows with at most :data:`FORECAST_CELLS` cells.
    The growth per row itself grows with the height (4 wide: 14.0x from 4
    to 5 rows, 14.0x from 5 to 6; 6 wide: 55x from 3 to 4, 61x from 4 to 5),
    so the forecast tends to fall short: it refuses only work that surely
    would not fit.  Not where every board searched has no hole (one-cell
    blocks, ``no_holes``): the boards are then column heights, whose count
    grows slower than any power of the rows (block drop, 6 wide: 32x from 1
    to 2 rows, 10x from 2 to 3), so the forecast is kept to their number,
    ``(height + 1) ** width``, and the lost board (without that bound, the
    seed models' block drop on 6x10, 7x9 and 8x8 and no-holes Tetris on 6x6
    were refused as needing 8.3 GiB to 1.5e8 GiB)."""
    cells = rules.width * rules.height
    low = FORECAST_CELLS // rules.width
    if cells <= FORECASTED_FROM_CELLS or low < 2:
        return None
    tallest = max(1 + max(y for _, y in shape) for p in rules.pieces for shape in p.orientations())
    pairs = []
    top = tallest + 1
    if low < top < rules.height:  # the low rows miss a piece standing up: search where it stands, and up
        while top < rules.height and (searched := _searched_pair(rules, top, FORECAST_BUDGET)) is not None:
            pairs.append(searched)
            if not searched[1][0][3]:  # the taller search stopped at the budget: no row further
                break
            top += 1
    if not pairs:
        for top in (low, low + 1):  # (a row more where a piece does not fit the lower)
            if top < rules.height and (searched := _searched_pair(rules, top, 2**30)) is not None:
                pairs.append(searched)
                break
    if not pairs:
        return None
    return max(_extrapolated(rules, top, upper, lower) for top, (upper, lower) in pairs)


def _extrapolated(
    rules: Rules, top: int, upper: tuple[int, int, bool, bool], lower: tuple[int, int, bool, bool]
) -> tuple[int, int]:
    """``(boards, moves)`` of ``rules`` from the counts ``(boards, moves, no
    holes, exact)`` at heights ``top`` and ``top - 1`` (:func:`_counts`)."""
    growth = upper[0] / max(lower[0], 1)  # (at least that where the upper search stopped: upper[0] is a floor)
    boards = int(upper[0] * growth ** (rules.height - top))
    if upper[2] and lower[2]:
        boards = min(boards, (rules.height + 1) ** rules.width + 1)
    known = upper if upper[3] else lower
    return boards, int(boards * known[1] / max(known[0], 1))


def _searched_pair(rules: Rules, top: int, budget: int) -> tuple[int, list[tuple[int, int, bool, bool]]] | None:
    """``(top, [counts at height top, counts at top - 1])`` of ``rules`` from
    the empty board without preview or hold, each :func:`_counts` searched
    within ``budget`` bytes; the upper one may be a floor (its search
    stopped at the budget), the lower one is exact.  None where a piece
    fits neither, or where the lower one needs more than the budget."""
    try:
        shorter = [dataclasses.replace(rules, height=h, start=0, preview=0, hold=False) for h in (top, top - 1)]
    except ValueError:  # rules that do not fit the smaller boards
        return None
    lower = _counts(shorter[1], budget)
    if lower is None or not lower[3]:
        return None
    upper = _counts(shorter[0], budget)
    return None if upper is None else (top, [upper, lower])


@functools.lru_cache(maxsize=64)
def _counts(rules: Rules, budget: int) -> tuple[int, int, bool, bool] | None:
    """``(boards, moves, no holes, exact)`` of a forecast's search of
    ``rules`` (no holes: :func:`_column_heights`); where the search stopped
    at ``budget`` bytes, ``(boards found, 0, False, False)``: a floor of the
    boards; None where a piece does not fit or the search was refused
    before it ran.  Kept a process (counts only, not the tables): a
    forecast that falls back to lower rows, and the lean mode that
    forecasts before the enumeration does, search each board once."""
    try:
        table = enumerate_boards(rules, n_jobs=1, max_memory=budget)
    except MemoryLimitError as err:
        return None if err.boards_found is None else (err.boards_found, 0, False, False)
    except (ValueError, MemoryError):
        return None
    return table.n_boards, table.n_moves, _column_heights(table), True


def _column_heights(table: Transitions) -> bool:
    """Whether every board of ``table`` but the lost one (a full top row,
    with ``top_out``) has no hole: each filled cell's column filled below it."""
    rules = table.rules
    boards = table.boards
    if rules.top_out:
        boards = boards[boards != np.uint64(lost_board(rules))]
    below, shift = boards.copy(), rules.width
    while shift < rules.width * rules.height:
        below |= below >> np.uint64(shift)
        shift *= 2
    return bool(np.array_equal(below, boards))


def _plain_previews(base: Transitions, n_states: int, started: float | None) -> Transitions:
    """:func:`with_previews` without hold or a bag (the course's timing and
    longer previews): the offsets and the moves in one compiled call
    (:func:`babytris.engine._moves.preview_moves`)."""
    rules = base.rules
    queues = rules.queues
    if queues * base.n_moves > MAX_MOVES:  # (each base row serves queues / P queues and P drawn pieces)
        raise MemoryLimitError(too_many_moves(queues * base.n_moves))
    offsets, next_node, lines, placement = _moves.preview_moves(
        base.offsets, base.next_board, base.lines, base.placement, rules.n_pieces, queues, resolve_n_jobs(None)
    )
    del n_states  # (= len(offsets) - 1, counted by the caller's guard)
    return Transitions(
        rules,
        np.repeat(base.boards, queues),
        base.layer_starts * queues,
        offsets,
        next_node,
        lines,
        placement,
        (time.perf_counter() - started) if started is not None else base.seconds,
        np.tile(np.arange(queues, dtype=np.int64), base.n_boards),
        None,
        None,
    )


def previews_moves(rules: Rules, base_moves: int) -> int:
    """The most moves :func:`with_previews` may write from a table of
    ``base_moves`` moves: a piece's row and the held one's, each drawn piece
    from each bag holding it."""
    dealt = int(bag_counts(rules).astype(bool).sum())
    return 2 * base_moves * rules.queues * rules.hold_slots * dealt // rules.n_pieces


def previews_bytes(rules: Rules, n_boards: int, base_moves: int, bytes_per_node: int = 0) -> int:
    """Bytes :func:`with_previews` holds at its peak, besides the base table,
    for ``n_boards`` boards of ``base_moves`` moves (and ``bytes_per_node``
    more per node): about a dozen int64 arrays per state and ten per move (measured)."""
    nodes = n_boards * rules.nodes_per_board
    return nodes * rules.n_pieces * 96 + previews_moves(rules, base_moves) * 90 + nodes * (16 + bytes_per_node)


def with_previews(
    base: Transitions, *, max_memory: int = DEFAULT_MAX_MEMORY, bytes_per_node: int = 0, started: float | None = None
) -> Transitions:
    """The move table of ``base.rules`` (with ``preview = k``, ``hold`` and/or
    a bag) built from the table of the same boards without them: every board
    times every bag's contents (with ``randomizer="bag"``), every queue of k
    pieces (any queue or bag can come with any reachable board) and, with
    hold, every hold slot.  A state draws its piece from its node's bag, so
    it has no move where the bag holds none of that piece.  Vectorised: the rows are the base rows, the
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
    bags, queues, slots = rules.bags, rules.queues, rules.hold_slots
    nodes = n * rules.nodes_per_board
    n_states = nodes * n_pieces
    n_moves = previews_moves(rules, base.n_moves)
    need = previews_bytes(rules, n, base.n_moves, bytes_per_node) + base.nbytes
    need += 0 if base.placement_stored else 2 * base.n_moves  # (the base's numbers, dropped again below)
    what = f"preview={k}, hold={rules.hold}" + (f", a bag of {bags:,} contents" if rules.randomizer == "bag" else "")
    sizes = f"{n:,} boards x " + (f"{bags:,} bags x " if bags > 1 else "") + f"{queues:,} queues x {slots} hold slots"
    if rules.hold and placement_table(rules).number_first[-1] >= HOLD_MOVE:
        raise ValueError(
            f"hold: at most {HOLD_MOVE - 1} placements over all pieces, got {placement_table(rules).number_first[-1]}"
        )
    if nodes >= 2**31 - 1:
        raise MemoryLimitError(f"{what}: {sizes} is over 2**31 nodes")
    if need > max_memory:
        raise MemoryLimitError(
            f"{what}: {sizes} x {n_pieces} pieces = {n_states:,} "
            f"states and up to {n_moves:,} moves need about {format_bytes(need)}, "
            f"more than max_memory={format_bytes(max_memory)}"
        )
    if not rules.hold and rules.randomizer != "bag":
        return _plain_previews(base, n_states, started)
    state = np.arange(n_states, dtype=np.int64)
    node, drawn = np.divmod(state, n_pieces)
    node, slot = np.divmod(node, slots)
    node, queue = np.divmod(node, queues)
    board, bag = np.divmod(node, bags)
    dealt = bag_counts(rules)[bag, drawn] > 0  # (always, with independent draws)
    next_bag = after_draw(rules)[bag, drawn]
    shift = queues // n_pieces if k else 1
    placed = queue // shift if k else drawn  # the first of queue + drawn
    rest = (queue % shift) * n_pieces + drawn if k else np.zeros_like(drawn)  # the queue after it
    counts = np.diff(base.offsets)
    own = np.where(dealt, counts[board * n_pieces + placed], 0)
    held = np.where((slot >= 1) & (slot <= n_pieces), slot - 1, 0)
    if rules.hold:
        # (no swap with the same piece held: it would repeat the row)
        swap = (slot >= 1) & (slot <= n_pieces) & (held != placed)
        other = np.where(dealt, np.where(slot == 0, 1, np.where(swap, counts[board * n_pieces + held], 0)), 0)
    else:
        other = np.zeros_like(own)
    offsets = offsets_from_counts(own + other)
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
    next_node = ((next_board.astype(np.int64) * bags + next_bag[ms]) * queues + rest[ms]) * slots + next_slot
    lines = np.where(is_hold, 0, pad(base.lines)[base_move]).astype(np.uint8)
    placement = pad(base.placement)[base_move]
    if rules.hold:
        first = placement_table(rules).number_first
        piece = np.where(is_own, placed[ms], held[ms])
        placement = np.where(is_hold, HOLD_MOVE, first[piece] + placement).astype(np.uint16)
    per_board = rules.nodes_per_board
    return Transitions(
        rules,
        np.repeat(base.boards, per_board),
        base.layer_starts * per_board,
        offsets,
        next_node.astype(np.int32),
        lines,
        placement.astype(np.uint16),
        (time.perf_counter() - started) if started is not None else base.seconds,
        np.tile(np.repeat(np.arange(queues, dtype=np.int64), slots), n * bags),
        np.tile(np.arange(slots, dtype=np.int64), n * bags * queues) if rules.hold else None,
        np.tile(np.repeat(np.arange(bags, dtype=np.int64), queues * slots), n) if rules.randomizer == "bag" else None,
    )
