"""A lean shard of the sharded solve (``solve_sharded(..., lean=True)``, see
:mod:`babytris.modes.sharded.distributed`): a :class:`~babytris.modes.sharded.shard.Shard`
without a move table, for games whose shards' tables do not fit.

It holds one bitmap over every possible board (1 bit each, and a 4-byte
rank per 64) marking its own boards and its ghosts, the other shards' boards
its moves reach; a value per marked board (8 bytes), each own state's chosen
placement (a byte) and each row's change for the jumps (4 bytes).  The
search marks the boards its moves reach, expanding its own (in compiled
code, :func:`babytris.modes.sharded._lean_shard.expand`) and sending the others'
straight to their owners, as a table shard does.  The sweeps back up its own
boards alone, recomputing their moves as the lean mode does
(:class:`~babytris.modes.sharded._lean_shard.LeanShardSweeper`); the rounds, the
exchange of the ghosts' values worker to worker, the jumps and the
checkpoints are the table shard's."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.enumeration import forecast_boards
from ...engine.placements import canonical_boards
from ...engine.resources import MemoryLimitError, format_bytes
from ...engine.transitions import layers
from ...game.rules import Rules
from ...solvers.roles import PIECES_RANDOM
from ...solvers.sweeping import ThreadTuner
from ..lean import lean_rules_problem
from . import _lean_shard, owners
from .gather import check_workers
from .shard import Shard, largest_size, shard_digest

__all__ = ["LeanShard", "lean_shard_bytes", "check_memory", "check_rules"]

#: Bytes a lean shard holds per row (own board or ghost) while it sweeps: its value, its
#: change for the jumps (float32) and, per piece, the chosen placement (a byte).
ROW_BYTES = 8 + 4
#: Bytes a ghost holds beyond its row while the shard sweeps: its board and row (8 + 8, kept to
#: read its owner's values), a row this shard serves (about as many as its ghosts, 8), the values
#: sent, in two buffers kept by the round's parity (2 x 8: see ``Boundary.send``), and those of a
#: round received, until taken (8).  (4x6, hash, 2 shards in one process: 48 bytes a ghost at the
#: peak beyond the rows', by tracemalloc.)
GHOST_BOOKKEEPING_BYTES = 8 + 8 + 8 + 2 * 8 + 8
#: Bytes a ghost holds while the search finds it: its place in the list (up to twice over as
#: the list doubles, and its copy: 3 x 8), its owner (int64) and its owner's share (8 + 8).
SEARCH_GHOST_BYTES = 3 * 8 + 8 + 8


def lean_shard_bytes(rules: Rules, rows: int, ghosts: int = 0) -> int:
    """Bytes a lean shard of ``rules`` with ``rows`` own boards and ghosts,
    ``ghosts`` of them the other shards' boards, holds at its peak: while
    searching, two bitmaps over every possible board (the boards marked,
    those not yet expanded) and :data:`SEARCH_GHOST_BYTES` a ghost; then the
    bitmap, its ranks (4 bytes per 64 possible boards), :data:`ROW_BYTES`
    plus a byte a piece per row and :data:`GHOST_BOOKKEEPING_BYTES` a
    ghost.  (Not the worker's own: the interpreter and dask, about 60 MiB,
    and the freed memory the allocator keeps, which grows with the rounds:
    at 4x6 with 2 shards, 4-20 MiB a greedy sweep with the hash split's
    0.87 M ghosts a shard, given back by ``malloc_trim``.)"""
    words = max(1, 2 ** (rules.width * rules.height) // 64)
    searching = 16 * words + SEARCH_GHOST_BYTES * ghosts
    return max(searching, 12 * words + (ROW_BYTES + rules.n_pieces) * rows + GHOST_BOOKKEEPING_BYTES * ghosts)


def check_rules(rules: Rules, gather: bool) -> None:
    """Refuse what lean shards cannot do: a game the lean mode does not solve, a gather."""
    problem = lean_rules_problem(rules)
    if problem is not None:
        raise ValueError(f"lean: {problem}")
    if gather:
        raise ValueError("gather: lean shards hold no move table to gather; leave gather=False with lean=True")


def check_memory(
    rules: Rules, n_shards: int, n_workers: int, max_memory: int, rows: list[tuple[int, int]] | None = None
) -> None:
    """Refuse, with :class:`~babytris.MemoryLimitError`, lean shards whose
    :func:`lean_shard_bytes`, summed over the shards one worker holds (shard
    k on worker ``k % n_workers``), would pass ``max_memory`` on a worker:
    before the search (``rows`` None) the two bitmaps of each shard, and the
    boards forecast split evenly (a shard's ghosts and a split's unevenness
    only add); after it, ``rows``, each shard's ``(rows, ghosts)`` counted
    (:meth:`LeanShard.rows_and_ghosts`)."""
    size = f"{rules.width}x{rules.height}"
    if rows is not None:
        needs = [lean_shard_bytes(rules, count, ghosts) for count, ghosts in rows]
        counts = [count for count, _ in rows]
        check_workers(rules, n_workers, max_memory, needs, counts, "lean shards' sweeps", "after the search")
        return
    per_worker = -(-n_shards // n_workers)  # (the most shards a worker holds)
    searching = per_worker * lean_shard_bytes(rules, 0)
    if searching > max_memory:
        raise MemoryLimitError(
            f"{size} in lean shards: each shard's search holds two bitmaps over every possible board, "
            f"{format_bytes(searching)} on a worker holding {per_worker}, more than "
            f"max_memory={format_bytes(max_memory)} (each worker's); refused before the search"
        )
    forecast = forecast_boards(rules)
    if forecast is None:
        return
    split = per_worker * lean_shard_bytes(rules, -(-forecast // n_shards))
    if split > max_memory:
        raise MemoryLimitError(
            f"{size} in lean shards: about {forecast:,} boards (forecast) over {n_shards} shards need at least "
            f"{format_bytes(split)} on a worker holding {per_worker}, more than "
            f"max_memory={format_bytes(max_memory)} (each worker's); refused before the search. Give more shards "
            "or workers, or raise max_memory"
        )


class LeanShard(Shard):
    """One shard's boards and ghosts as a bitmap, its values and its sweeps
    (see the module's notes); a dask actor, called by :func:`solve_sharded`
    in the same steps as :class:`~babytris.modes.sharded.shard.Shard`."""

    def __init__(self, rules: Rules, index: int, n_shards: int, split: str, n_threads: int = 1) -> None:
        super().__init__(rules, index, n_shards, split, n_threads)
        # (owners.shard_of's, for the compiled loops: the key's bits and the owner of each key, or none: mixed)
        self.key_mask = owners.key_mask(split, rules.width)
        self.owners = owners.owner_table(rules, n_shards, split)
        self.bits: np.ndarray | None = None
        self.todo: np.ndarray | None = None
        self.n_moves = self.moves_at_home = self.n_ghosts = 0

    # --- the search ---------------------------------------------------------------------------

    def _bitmap(self) -> np.ndarray:
        """The bitmap of the boards marked (own and ghosts), made on first use."""
        if self.bits is None:
            self.bits = np.zeros(max(1, 2 ** (self.rules.width * self.rules.height) // 64), dtype=np.uint64)
        return self.bits

    def _marks(self) -> tuple[np.ndarray, np.ndarray]:
        """The search's two bitmaps (the boards marked, those to expand), made on first use."""
        if self.todo is None:
            self.todo = np.zeros_like(self._bitmap())
        return self._bitmap(), self.todo

    def receive(self) -> int:
        """Mark the boards offered (this shard's) not marked yet, to expand next; returns how many are new."""
        bits, todo = self._marks()
        offered = np.concatenate([np.zeros(0, dtype=np.uint64), *self.offers])
        self.offers = []
        return int(_lean_shard.mark(bits, todo, offered))

    def _expand(self) -> list[np.ndarray]:
        """Expand every board waiting, and those found here after them, until
        none waits: per shard, the boards of it found (none of this one's:
        they are marked here)."""
        bits, todo = self._marks()
        ghosts, moves, at_home = _lean_shard.expand(
            self.engine, bits, todo, self.key_mask, self.owners, self.n_shards, self.index
        )
        self.n_moves += moves
        self.moves_at_home += at_home
        self.n_ghosts += len(ghosts)  # (each listed once: marked as it is found)
        owner = owners.shard_of(ghosts, self.n_shards, self.split, self.rules)
        return [ghosts[owner == k] for k in range(self.n_shards)]

    def marked(self) -> int:
        """The boards marked: this shard's and its ghosts (after the search: its rows)."""
        return int(np.bitwise_count(self._bitmap()).sum())

    def rows_and_ghosts(self) -> tuple[int, int]:
        """After the search: its rows (:meth:`marked`) and how many of them are ghosts."""
        return self.marked(), self.n_ghosts

    def enumerate_alone(self) -> int:
        """The one shard's search: every board reachable from the start; returns how many."""
        self.offers = [canonical_boards(np.array([self.rules.start], dtype=np.uint64), self.rules)]
        self.receive()
        self._expand()
        return self.marked()

    # --- the sweeps ---------------------------------------------------------------------------

    def _build(self, pieces: int, discount: float, eval_sweeps: int, accelerate: bool) -> list[np.ndarray]:
        """The sweeper over the boards marked (the ranks, the values, the
        kept placements; the search's second bitmap freed) and the rounds'
        tallies.  Returns, per shard, its boards this one reads (uint64,
        ascending; none of its own)."""
        rules = self.rules
        bits = self._bitmap()
        self.todo = None
        self.kernel = _lean_shard.LeanShardSweeper(
            self.engine,
            bits,
            np.asarray(rules.line_scores, dtype=np.float64),
            np.asarray(rules.probabilities, dtype=np.float64),
            discount,
            np.asarray(layers(rules), dtype=np.int64),
            self.key_mask,
            self.owners,
            self.n_shards,
            self.index,
            combine=0 if pieces == PIECES_RANDOM else 1,
            n_threads=self.n_threads,
        )
        self.W = self.kernel.W
        ghosts, rows = self.kernel.boards(False)
        owner = owners.shard_of(ghosts, self.n_shards, self.split, rules)
        # (grouped by owner, then by layer, ascending within each: each shard's ghosts are asked, served
        # and sent so; one order for all, each shard's part a view: no copy per shard)
        order = np.lexsort((self.boundary.layer(ghosts), owner))
        ghosts, rows, owner = ghosts[order], rows[order], owner[order]
        del order
        cuts = np.searchsorted(owner, np.arange(self.n_shards + 1))
        needs = [ghosts[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
        self.ghost_rows = [rows[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
        self.tuned = ThreadTuner(self.kernel, self.n_threads, self.W.nbytes + self.kernel.kept.nbytes)
        self.linear = pieces == PIECES_RANDOM
        self.changes = np.zeros(len(self.W), dtype=np.float32)  # (a jump's direction; the ghosts': _take_ghosts)
        self.recorded = False  # (whether the last sweep recorded its changes)
        self.missed, self.jumped, self.last_greedy = 0, False, np.inf
        self.snapshots: list[np.ndarray] = []
        self.news, self.restored = 0.0, False
        self.generation = 0
        self.working: Any = None
        self.eval_sweeps = eval_sweeps
        self.accelerate = accelerate and self.linear
        return needs

    def size(self) -> tuple[int, int]:
        """``(boards, moves)`` of the shard: its own boards and their moves."""
        return int(self.kernel.n_own), int(self.n_moves)

    def _rows_asked(self, k: int, wanted: np.ndarray) -> np.ndarray:
        """The rows of the boards shard ``k`` asked for (int64, in its order)."""
        rows = self.kernel.rows(wanted)
        mine = owners.shard_of(wanted, self.n_shards, self.split, self.rules) == self.index
        if (rows < 0).any() or not mine.all():
            raise ValueError(f"shard {self.index}: shard {k} asked for boards it does not hold")
        return rows

    def _ghost_rows(self, k: int) -> np.ndarray:
        """The rows of shard ``k``'s ghosts here, in the order asked (int64)."""
        return self.ghost_rows[k]

    # --- the result ---------------------------------------------------------------------------

    def close_rounds(self, index: int, layer: int = -1) -> float:
        """End the rounds: the ghosts' last values (sent in round ``index``, of
        ``layer`` where the rounds exchange by layer), as
        :meth:`Shard.close_rounds <babytris.modes.sharded.shard.Shard.close_rounds>`;
        the moves are computed on demand (:meth:`settle`).  Returns the
        largest |value| of the shard's boards and ghosts (0 if none)."""
        self._take_ghosts(index, layer)
        return largest_size(self.W)

    def settle(self, slack: float) -> None:
        """Each state's move, computed on demand, the first within ``slack`` of its best."""
        self.slack = slack

    def lookup(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(found, values, policy)`` of ``boards`` (uint64, owned here), as
        :meth:`Shard.lookup <babytris.modes.sharded.shard.Shard.lookup>`: computed
        by one greedy step from the values, after :meth:`settle`."""
        boards = np.asarray(boards, dtype=np.uint64)
        P = self.rules.n_pieces
        mine = owners.shard_of(boards, self.n_shards, self.split, self.rules) == self.index
        found = (self.kernel.rows(boards) >= 0) & mine
        values, policy = np.zeros((len(boards), P)), np.full((len(boards), P), -1, dtype=np.int16)
        values[found], policy[found] = self.kernel.state_values(boards[found], self.slack)
        return found, values, policy

    def save(self, path: str) -> tuple[int, str]:
        """Write the shard's boards (ascending), its states' values and moves
        (after :meth:`settle`), as a table shard's file, to ``path`` (.npz,
        atomically); returns the bytes written and the arrays' SHA-256."""
        from ...engine.writing import replace_atomically

        boards, _ = self.kernel.boards(True)
        values, policy = self.kernel.state_values(boards, self.slack)
        arrays: dict[str, np.ndarray] = {"boards": boards, "values": values.ravel(), "policy": policy.ravel()}
        replace_atomically(path, lambda f: np.savez(f, boards=boards, values=arrays["values"], policy=arrays["policy"]))
        return int(sum(a.nbytes for a in arrays.values())), shard_digest(arrays)

    def gather(self) -> dict[str, Any]:
        raise ValueError("lean shards hold no move table to gather (solve_sharded(gather=True) refuses lean=True)")

    # --- the checkpoints ----------------------------------------------------------------------

    def _held(self) -> dict[str, np.ndarray]:
        """What a rebuilt lean shard needs: its bitmap of boards and ghosts, and its moves' counts."""
        return {"bits": self._bitmap(), "counts": np.array([self.n_moves, self.moves_at_home], dtype=np.int64)}

    def _take_held(self, data: Any) -> None:
        self.bits = np.array(data["bits"])
        self.n_moves, self.moves_at_home = (int(c) for c in data["counts"])
