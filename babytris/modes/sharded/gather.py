"""Gathering a sharded solve into one :class:`~babytris.Solution` in the
client, when asked (``solve_sharded(..., gather=True)``): its memory estimate
and the assembly; and a table shard's memory estimate on its worker."""

from __future__ import annotations

import numpy as np

from ...engine.resources import MemoryLimitError, format_bytes, table_bytes
from ...engine.transitions import Transitions, layer_order, layered_indices, offsets_from_counts
from ...game.rules import Rules
from ...game.validation import solver_method
from ...results.solution import Solution
from ...solvers.solve import solver_bytes_per_board

__all__ = ["gather_bytes", "assemble", "check_workers", "table_shard_bytes"]


def gather_bytes(rules: Rules, n_boards: int, n_moves: int) -> int:
    """The bytes the client holds at the peak of the gather: the shards'
    parts (per board its bits, two offsets, two state values and its value;
    per move the board after as bits, the rows cleared and the placement)
    three times over (as they arrive serialized, deserialized, and
    concatenated), the reordering's gather index and the boards after, then
    the gathered table with the solver's arrays
    (:func:`babytris.engine.resources.table_bytes`).  Measured at 4x5 and 4x6 with
    2 workers: within 20% of the client's peak (docs/results.md)."""
    parts = n_boards * (8 + 8 + 16 + 8) + n_moves * (8 + 1 + 2)  # (two int32 offsets: 8)
    reorder = n_moves * (8 + 8)
    table = table_bytes(rules, n_boards, n_moves, solver_bytes_per_board(rules, "vi", False), placements=True)
    return 3 * parts + reorder + table


#: Bytes a table shard's ghost holds beyond its row: the board asked (8), a row served by its
#: owner for it (8), the two buffers its values are sent from (2 x 8) and those received (8).
TABLE_GHOST_BYTES = 8 + 8 + 2 * 8 + 8


def table_shard_bytes(rules: Rules, n_rows: int, n_moves: int, n_ghosts: int = 0) -> int:
    """A table shard's bytes at its peak, with ``n_rows`` rows (its boards and
    its ``n_ghosts`` ghosts) and ``n_moves`` moves: the single solve's
    estimate for a table that size (:func:`~babytris.engine.resources.table_bytes`,
    its placement numbers held, and what the sweeps keep per board) and
    :data:`TABLE_GHOST_BYTES` a ghost."""
    per_board = solver_bytes_per_board(rules, "mpi", True, n_rows)
    return table_bytes(rules, n_rows, n_moves, per_board, placements=True) + TABLE_GHOST_BYTES * n_ghosts


def check_workers(
    rules: Rules, n_workers: int, max_memory: int, needs: list[int], rows: list[int], what: str, when: str
) -> None:
    """Refuse, with :class:`~babytris.MemoryLimitError`, shards whose bytes
    (``needs[k]``: their ``what``; shard k, of ``rows[k]`` boards and ghosts,
    on worker ``k % n_workers``), summed over the shards one worker holds,
    would pass ``max_memory``, saying ``when`` it was found (before the sweeps)."""
    held = [list(range(w, len(needs), n_workers)) for w in range(n_workers)]
    need = [sum(needs[k] for k in ks) for ks in held]
    w = int(np.argmax(need))
    if need[w] > max_memory:
        shards = ("shards " if len(held[w]) > 1 else "shard ") + ", ".join(map(str, held[w]))
        raise MemoryLimitError(
            f"{rules.width}x{rules.height}: worker {w} holds {shards}, {sum(rows[k] for k in held[w]):,} boards "
            f"and ghosts, whose {what} need about "
            f"{format_bytes(need[w])}, more than max_memory={format_bytes(max_memory)} (each worker's); refused "
            f"{when}, before the sweeps. Give more shards or workers, or raise max_memory"
        )


def assemble(
    rules: Rules,
    parts: list[dict],
    opponent: str,
    discount: float,
    tol: float,
    max_iter: int,
    residuals: list[float],
    seconds: dict,
) -> Solution:
    """One :class:`Transitions` from the shards' parts, and the solver gone on from their values."""
    from ...solvers.roles import resolve
    from ...solvers.solve import SolverSettings, _solve

    P = rules.n_pieces
    boards = np.concatenate([p["boards"] for p in parts])
    order, layer_starts = layer_order(rules, boards)
    counts = np.concatenate([np.diff(p["offsets"]) for p in parts])  # per state, shard after shard
    firsts = np.concatenate([[0], np.cumsum(counts)])[:-1]
    states = (order[:, None] * P + np.arange(P)).ravel()  # each new state's old number
    offsets = offsets_from_counts(counts[states])
    gather = np.repeat(firsts[states] - offsets[:-1], counts[states]) + np.arange(offsets[-1])
    sorted_boards = boards[order]
    next_bits = np.concatenate([p["next_bits"] for p in parts])[gather]
    next_board = layered_indices(rules, sorted_boards, layer_starts, next_bits)
    table = Transitions(
        rules,
        sorted_boards,
        layer_starts,
        offsets,
        next_board.astype(np.int32),
        np.concatenate([p["lines"] for p in parts])[gather],
        np.concatenate([p["placement"] for p in parts])[gather],
        seconds["search"] + seconds["table"],
    )
    values = np.concatenate([p["values"] for p in parts])[states]
    board_values = np.concatenate([p["board_values"] for p in parts])[order]
    roles = resolve(table, opponent, None, None)
    method = solver_method(roles, "vi")
    settings = SolverSettings(method, discount, tol, max_iter, eval_sweeps=6, accelerate=False, n_jobs=1)
    return _solve(table, roles, settings, warm=(values, board_values, residuals))
