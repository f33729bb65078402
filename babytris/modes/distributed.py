"""The exact solve sharded over a ``dask.distributed`` cluster.

Exact solves grow about 14x per added row, so the next boards outgrow one
machine.  Here the boards are split into shards, each held by a dask actor
(:class:`Shard`) on a worker, which runs the compiled engine on its own:

1. **Search**: a sharded breadth-first search.  Each shard expands the
   boards it found last (``babytris.modes._shard.expand``, threads without the
   GIL) and sends every board after to the shard that owns it, which keeps
   the new ones for the next round; the search ends when a round finds none.
2. **Table**: each shard expands its boards once more into a move table
   over its own boards and *ghosts*, the boards of other shards its moves
   lead to, and tells each owner which of its boards it reads.
3. **Sweeps**: in each round every shard receives the values of its ghosts,
   runs one in-place Bellman sweep over its boards with the compiled
   :class:`~babytris.solvers._sweep.Sweeper`, and sends back the values others
   read: only those cross the network.  Rounds stop when the largest change
   over all shards (the global residual) is at most ``tol``.  A round is
   one in-place (Gauss-Seidel) sweep in which ghosts are read as they were
   at its start: a fixed map with the game's fixed point and a contraction
   of modulus ``discount`` in the max norm, so the error bound of
   :attr:`Solution.error_bound <babytris.Solution.error_bound>` holds for it.
4. **Result**: the shards' boards, moves and values are gathered into one
   :class:`~babytris.Transitions` and the usual solver goes on from the
   values (one or two sweeps, as it is already converged) to give a normal
   :class:`~babytris.Solution` with its policy.  The gather needs the whole
   table in the client's process: the sharded sweeps are what a cluster
   saves, not the final table.

How boards are split (``split``): ``"hash"`` mixes all of a board's bits
(shards of even size, but most moves lead to another shard) and
``"low_rows"`` mixes its bottom rows only, which a placement leaves alone
unless it clears a row or reaches them, so more moves stay at home.
:class:`ShardedSolve` reports the share of moves that stay, and the bytes
and seconds of every round.

``dask[distributed]`` is an optional extra (``pip install 'babytris[dask]'``),
imported only here, only when a client is given.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.placements import canonical_boards, engine
from ..engine.resources import DEFAULT_MAX_MEMORY, MemoryLimitError, check_max_memory, format_bytes, table_bytes
from ..engine.transitions import Transitions, layer_order, layered_indices, layers, offsets_from_counts
from ..game.rules import Rules
from ..game.validation import check_int, check_solver_args, solver_method
from ..results.solution import Solution
from ..solvers import _sweep
from ..solvers.roles import PIECES_RANDOM, PIECES_WORST
from ..solvers.solve import solver_bytes_per_board
from . import _shard

__all__ = [
    "SPLITS",
    "LostWorkerError",
    "Shard",
    "ShardedSolve",
    "solve_sharded",
    "shard_of",
    "shard_digest",
    "gather_bytes",
]

#: How boards are split into shards (see the module's notes).
SPLITS = ("hash", "low_rows")
#: The bottom rows ``"low_rows"`` splits by.
LOW_ROWS = 2
#: Opponents the sharded solve plays against (pieces drawn at random, or the worst piece given).
OPPONENTS = {"random": PIECES_RANDOM, "minimax": PIECES_WORST}


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over a uint64 array: every bit of the input stirs every bit of the output."""
    x = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _distinct(boards: np.ndarray) -> np.ndarray:
    """The distinct boards of a uint64 array, ascending (np.unique, without its slow path for uint64)."""
    boards = np.sort(boards)
    keep = np.ones(len(boards), dtype=bool)
    keep[1:] = boards[1:] != boards[:-1]
    return boards[keep]


def shard_of(boards: np.ndarray, n_shards: int, split: str, width: int) -> np.ndarray:
    """The shard that owns each board: int64 array of the shape of ``boards`` (uint64)."""
    key = boards if split == "hash" else boards & np.uint64((1 << (width * LOW_ROWS)) - 1)
    return (_mix(key) % np.uint64(n_shards)).astype(np.int64)


class Shard:
    """The boards one shard owns, their move table and values; a dask actor
    (``client.submit(Shard, ..., actor=True)``), so the arrays stay on its
    worker and only what other shards need travels.  The methods are the
    steps of :func:`solve_sharded`, called in its order."""

    def __init__(self, rules: Rules, index: int, n_shards: int, split: str, n_threads: int = 1) -> None:
        self.rules, self.index, self.n_shards, self.split = rules, index, n_shards, split
        self.n_threads = n_threads
        self.engine = engine(rules)
        self.boards = np.zeros(0, dtype=np.uint64)  # sorted
        self.frontier = np.zeros(0, dtype=np.uint64)

    # --- the search ---------------------------------------------------------------------------

    def receive(self, arrays: list[np.ndarray]) -> int:
        """Keep the boards of ``arrays`` (uint64; all owned here) not seen yet as the next
        frontier; returns how many are new."""
        found = _distinct(np.concatenate([np.zeros(0, dtype=np.uint64), *arrays]))
        at = np.searchsorted(self.boards, found)
        seen = at < len(self.boards)
        seen[seen] = self.boards[at[seen]] == found[seen]
        self.frontier = found[~seen]
        # (two sorted runs: the stable sort merges them in linear time)
        self.boards = np.sort(np.concatenate([self.boards, self.frontier]), kind="stable")
        return len(self.frontier)

    def expand(self) -> list[np.ndarray]:
        """The boards after every move of the frontier: per shard, the distinct ones it owns (uint64)."""
        _, after, _, _ = _shard.expand(self.engine, self.frontier, self.n_threads)
        after = _distinct(after)
        owner = shard_of(after, self.n_shards, self.split, self.rules.width)
        return [after[owner == k] for k in range(self.n_shards)]

    # --- the table ----------------------------------------------------------------------------

    def build(self, pieces: int, discount: float, dead: float) -> list[np.ndarray]:
        """Expand every board into the move table over own boards and ghosts,
        and set up the sweeps.  Returns, per shard, the boards of it whose
        values the moves here read (uint64, sorted; none of its own)."""
        rules = self.rules
        P = rules.n_pieces
        n = len(self.boards)
        offsets, after, self.lines, self.placement = _shard.expand(self.engine, self.boards, self.n_threads)
        self.next_bits = after
        owner = shard_of(after, self.n_shards, self.split, rules.width)
        home = owner == self.index
        self.moves_at_home = int(home.sum())
        nxt = np.empty(len(after), dtype=np.int64)
        nxt[home] = np.searchsorted(self.boards, after[home])
        needs: list[np.ndarray] = []
        base = n
        for k in range(self.n_shards):
            mine = owner == k
            wanted = _distinct(after[mine]) if k != self.index else np.zeros(0, dtype=np.uint64)
            if k != self.index:
                nxt[mine] = base + np.searchsorted(wanted, after[mine])
            needs.append(wanted)
            base += len(wanted)
        self.ghost_starts = np.cumsum([n] + [len(w) for w in needs])
        n_rows = base
        self.offsets = np.concatenate([offsets, np.full((n_rows - n) * P, offsets[-1], dtype=offsets.dtype)])
        self.next_board = nxt.astype(np.int32)
        self.V = np.zeros(n_rows * P)
        self.W = np.zeros(n_rows)
        no_move = np.diff(self.offsets) == 0
        if dead:
            self.V[no_move] = dead
            self.W[no_move.reshape(-1, P).all(axis=1)] = dead
        self.policy = np.full(n_rows * P, -1, dtype=np.int16)
        live = ~no_move[: n * P].reshape(n, P).all(axis=1)
        order, starts = self._order(np.flatnonzero(live))
        self.sweeper = _sweep.Sweeper(
            self.offsets,
            self.next_board,
            self.lines,
            np.asarray(rules.line_scores, dtype=np.float64),
            np.asarray(rules.probabilities, dtype=np.float64),
            discount,
            self.V,
            self.W,
            self.policy,
            order,
            starts,
            pieces=pieces,
            dead_value=dead,
            independent_layers=len(starts) > 2,
            n_threads=self.n_threads,
        )
        return needs

    def _order(self, live: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The live boards in the order the whole game's sweeps take them
        (:func:`babytris.engine.transitions.sweep_order`): layer by layer, or with
        one layer from the largest board down."""
        if len(layers(self.rules)) == 1:
            return live[::-1].astype(np.int32), np.array([0, len(live)], dtype=np.int64)
        order, starts = layer_order(self.rules, self.boards[live])
        return live[order].astype(np.int32), starts

    def size(self) -> tuple[int, int]:
        """``(boards, moves)`` of the shard's table."""
        return len(self.boards), len(self.next_bits)

    def at_home(self) -> int:
        """The moves that lead to a board of this shard."""
        return self.moves_at_home

    def largest(self) -> float:
        """The largest |value| of the shard's states (0 if none)."""
        n = len(self.boards) * self.rules.n_pieces
        return float(np.abs(self.V[:n]).max()) if n else 0.0

    def serve(self, requests: list[np.ndarray]) -> None:
        """Note, per shard, where the boards it reads (``requests[k]``, uint64) are here."""
        self.served = []
        for wanted in requests:
            at = np.searchsorted(self.boards, wanted)
            if len(wanted) and not np.array_equal(self.boards[np.minimum(at, len(self.boards) - 1)], wanted):
                raise ValueError(f"shard {self.index}: asked for boards it does not hold")
            self.served.append(at)

    # --- the sweeps ---------------------------------------------------------------------------

    def sweep(self, ghosts: list[np.ndarray], sweeps: int = 1) -> tuple[float, list[np.ndarray]]:
        """Set the ghosts' values (``ghosts[k]``: shard k's, in the order asked),
        sweep ``sweeps`` times; returns the largest change of the first sweep
        (the one that read the ghosts fresh) and, per shard, the values it reads."""
        for k, values in enumerate(ghosts):
            self.W[self.ghost_starts[k] : self.ghost_starts[k + 1]] = values
        residual = self.sweeper.greedy_sweep()
        for _ in range(sweeps - 1):  # (the ghosts held: these carry the news within the shard)
            self.sweeper.greedy_sweep()
        return residual, [self.W[at] for at in self.served]

    def save(self, path: str, slack: float) -> tuple[int, str]:
        """Write the shard's boards, values and moves (each state's first move
        within ``slack`` of its best, as :class:`~babytris.Solution` breaks
        ties) to ``path`` (.npz, atomically); returns the bytes written and the arrays' SHA-256."""
        from ..engine.writing import replace_atomically

        self.sweeper.first_best_moves(slack)
        n, P = len(self.boards), self.rules.n_pieces
        offsets = self.offsets[: n * P + 1]
        policy = self.policy[: n * P].astype(np.int64)
        chosen = np.full(n * P, -1, dtype=np.int64)
        if len(self.placement):
            at = np.clip(offsets[:-1] + policy, 0, len(self.placement) - 1)
            chosen = np.where(policy >= 0, self.placement[at], -1)
        arrays: dict[str, np.ndarray] = {
            "boards": self.boards,
            "values": self.V[: n * P],
            "policy": chosen.astype(np.int16),
        }
        replace_atomically(
            path, lambda f: np.savez(f, boards=arrays["boards"], values=arrays["values"], policy=arrays["policy"])
        )
        return int(sum(a.nbytes for a in arrays.values())), shard_digest(arrays)

    def gather(self) -> dict[str, Any]:
        """The shard's boards, moves (boards after as bits) and values, for the client."""
        n, P = len(self.boards), self.rules.n_pieces
        return {
            "boards": self.boards,
            "offsets": self.offsets[: n * P + 1],
            "next_bits": self.next_bits,
            "lines": self.lines,
            "placement": self.placement,
            "values": self.V[: n * P],
            "board_values": self.W[:n],
            "moves_at_home": self.moves_at_home,
        }


@dataclass
class ShardedSolve:
    """What :func:`solve_sharded` returns: the solution and what the sharding cost.

    Attributes:
        solution: the :class:`~babytris.Solution`, as :func:`babytris.solve` gives it
            (None when the shards were saved instead: ``out=``).
        n_shards, split: how the boards were split.
        boards_per_shard: int64 array ``(n_shards,)``.
        moves_at_home: the share of moves that lead to a board of the same shard.
        search_rounds: rounds of the breadth-first search; ``search_bytes``: board bits sent between shards.
        sweep_seconds, sweep_bytes: float64 and int64 arrays ``(sweeps,)``: the wall time of each
            round of sweeps and the bytes of values sent between shards in it.
        seconds: ``{"search": ..., "table": ..., "sweeps": ..., "gather": ...}``.
    """

    solution: Solution | None
    n_shards: int
    split: str
    boards_per_shard: np.ndarray
    moves_at_home: float
    search_rounds: int
    search_bytes: int
    sweep_seconds: np.ndarray
    sweep_bytes: np.ndarray
    seconds: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return (
            f"<ShardedSolve {self.n_shards} shards ({self.split}): {len(self.sweep_seconds)} sweeps, "
            f"{np.median(self.sweep_bytes) / 2**20 if len(self.sweep_bytes) else 0:.2f} MiB and "
            f"{np.median(self.sweep_seconds) if len(self.sweep_seconds) else 0:.3f} s per sweep (medians), "
            f"{self.moves_at_home:.0%} of moves at home"
            + ("" if self.solution is None else f", start_value={self.solution.start_value:.6f}")
            + ">"
        )


def solve_sharded(
    rules: Rules,
    client: Any,
    *,
    discount: float = 0.9,
    tol: float = 1e-8,
    max_iter: int = 10_000,
    opponent: Any = "random",
    n_shards: int | None = None,
    split: str = "low_rows",
    n_threads: int = 1,
    sweeps_per_round: int = 1,
    max_memory: int = DEFAULT_MAX_MEMORY,
    out: str | os.PathLike | None = None,
) -> ShardedSolve:
    """Solve ``rules`` with the boards sharded over the workers of ``client``
    (a ``dask.distributed.Client``); see the module's notes.

    Args:
        rules: plain rules: no preview, hold or bag, hard drops.
        client: a ``distributed.Client``.
        discount, tol, max_iter: as for :func:`babytris.solve` (``max_iter`` counts rounds of sweeps).
        opponent: ``"random"`` or ``"minimax"``.
        n_shards: shards, in [1, 1024]; default: one per worker.  Shard k lives on worker k mod workers.
        split: ``"hash"`` or ``"low_rows"`` (see the module's notes).
        n_threads: threads each shard's compiled loops use, in [1, 256].
        sweeps_per_round: sweeps each shard runs between exchanges, in [1, 100]:
            more carry values further within a shard per round of traffic.
            The stopping test reads the first sweep of a round (the one with
            the ghosts fresh), so it is the same test whatever this is.
        max_memory: the bytes the client may hold for the gathered solution
            (default 8 GiB); once the shards have built their tables (the
            boards and moves known), a gather that would need more is refused
            with :class:`~babytris.MemoryLimitError` and its estimate, before
            the sweeps.

        out: a directory: instead of gathering, each shard writes its boards,
            values and moves there (``shard-K.npz``, the workers must see the
            directory) and the client a ``manifest.json``; read them back with
            :func:`babytris.load_sharded`, whose lookups open only the shard a board
            belongs to.  ``solution`` is then None.  Not with ``rules.mirror``.

    Raises:
        MemoryLimitError: see ``max_memory``.
        LostWorkerError: a worker was lost mid-solve (dask's error its cause).

    Returns:
        :class:`ShardedSolve`, whose ``solution`` is a normal :class:`~babytris.Solution`.
    """
    client = _check_client(client)
    rules, pieces, discount, tol, max_iter, split = _check(rules, opponent, discount, tol, max_iter, split)
    max_memory = check_max_memory(max_memory)
    n_shards = None if n_shards is None else check_int("n_shards", n_shards, 1, 1024)
    n_threads = check_int("n_threads", n_threads, 1, 256)
    sweeps_per_round = check_int("sweeps_per_round", sweeps_per_round, 1, 100)
    try:
        return _solve(
            client,
            rules,
            pieces,
            opponent,
            discount,
            tol,
            max_iter,
            n_shards,
            split,
            n_threads,
            sweeps_per_round,
            max_memory,
            out,
        )
    except Exception as err:
        if not _lost_worker(err):
            raise
        raise LostWorkerError(
            f"a worker was lost mid-solve ({type(err).__name__}: {err}); nothing was kept. Check the workers "
            "(memory, a killed process), restart them, and solve again"
        ) from err


class LostWorkerError(RuntimeError):
    """A worker of :func:`solve_sharded` was lost mid-solve (killed, out of
    memory, unreachable), and the boards of its shards with it; dask's own
    error is the ``__cause__``."""


def _lost_worker(err: Exception) -> bool:
    """Whether dask raised ``err`` for a worker lost (a killed worker, a
    cancelled future, a closed connection, an actor whose worker died), not
    an error of babytris's own (a RuntimeError, a file not written), which
    must surface as it is."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker

    if isinstance(err, (KilledWorker, CancelledError)):
        return True
    if isinstance(err, OSError):  # (dask's comm errors are OSErrors; a file's are subclasses: FileNotFoundError, ...)
        return type(err) is OSError or type(err).__module__.startswith("distributed")
    return isinstance(err, RuntimeError) and ("Actor was lost" in str(err) or "Actor's worker" in str(err))


def _solve(
    client: Any,
    rules: Rules,
    pieces: int,
    opponent: str,
    discount: float,
    tol: float,
    max_iter: int,
    n_shards: int | None,
    split: str,
    n_threads: int,
    sweeps_per_round: int,
    max_memory: int,
    out: str | os.PathLike | None,
) -> ShardedSolve:
    """:func:`solve_sharded` on checked arguments."""
    workers = sorted(client.scheduler_info()["workers"])
    n_shards = len(workers) if n_shards is None else n_shards
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    shards = [
        client.submit(
            Shard, rules, k, n_shards, split, n_threads, actor=True, workers=[workers[k % len(workers)]]
        ).result()
        for k in range(n_shards)
    ]
    # The search: rounds of expanding every shard's frontier and routing the boards found.
    start = canonical_boards(np.array([rules.start], dtype=np.uint64), rules)
    owner = int(shard_of(start, n_shards, split, rules.width)[0])
    _all([s.receive([start] if k == owner else []) for k, s in enumerate(shards)])
    rounds, search_bytes, new = 0, 0, 1
    while new:
        rounds += 1
        found = _all([s.expand() for s in shards])
        search_bytes += sum(a.nbytes for j, out in enumerate(found) for k, a in enumerate(out) if j != k)
        new = sum(_all([s.receive([out[k] for out in found]) for k, s in enumerate(shards)]))
    seconds["search"] = time.perf_counter() - started
    # The table, and who reads whose boards.
    began = time.perf_counter()
    dead = 0.0
    needs = _all([s.build(pieces, discount, dead) for s in shards])
    n_boards, n_moves = (sum(x) for x in zip(*_all([s.size() for s in shards])))
    need = gather_bytes(rules, n_boards, n_moves)
    if out is None and need > max_memory:
        raise MemoryLimitError(
            f"{rules.width}x{rules.height}: gathering {n_boards:,} boards and {n_moves:,} moves into one Solution "
            f"needs about {format_bytes(need)}, more than max_memory={format_bytes(max_memory)}; refused before "
            "the sweeps (the shards' tables are built). Raise max_memory; a result kept in the shards is not built yet"
        )
    _all([s.serve([needs[j][k] for j in range(n_shards)]) for k, s in enumerate(shards)])
    seconds["table"] = time.perf_counter() - began
    # The sweeps: each round sends every shard its ghosts' values and sweeps them all at once.
    began = time.perf_counter()
    ghosts = [[np.zeros(len(needs[k][j])) for j in range(n_shards)] for k in range(n_shards)]
    residuals: list[float] = []
    sweep_seconds, sweep_bytes = [], []
    while len(residuals) < max_iter and (not residuals or residuals[-1] > tol):
        t0 = time.perf_counter()
        results = _all([s.sweep(ghosts[k], sweeps_per_round) for k, s in enumerate(shards)])
        residuals.append(max(r for r, _ in results))
        ghosts = [[results[j][1][k] for j in range(n_shards)] for k in range(n_shards)]
        sweep_bytes.append(sum(v.nbytes for k in range(n_shards) for j, v in enumerate(ghosts[k]) if j != k))
        sweep_seconds.append(time.perf_counter() - t0)
    seconds["sweeps"] = time.perf_counter() - began
    began = time.perf_counter()
    solution = None
    if out is not None:
        _save_shards(out, rules, shards, opponent, discount, residuals, split, tol, sweeps_per_round)
        at_home = sum(_all([s.at_home() for s in shards]))
        boards_per_shard = [b for b, _ in _all([s.size() for s in shards])]
        seconds["save"] = time.perf_counter() - began
    else:
        parts = _all([s.gather() for s in shards])
        solution = _assemble(rules, parts, opponent, discount, tol, max_iter, residuals, seconds)
        seconds["gather"] = time.perf_counter() - began
        solution.seconds["solve"] += seconds["sweeps"]  # (the gathered solve only went on from the shards' values)
        at_home = sum(p["moves_at_home"] for p in parts)
        boards_per_shard = [len(p["boards"]) for p in parts]
    return ShardedSolve(
        solution=solution,
        n_shards=n_shards,
        split=split,
        boards_per_shard=np.array(boards_per_shard, dtype=np.int64),
        moves_at_home=at_home / max(n_moves, 1),
        search_rounds=rounds,
        search_bytes=int(search_bytes),
        sweep_seconds=np.array(sweep_seconds),
        sweep_bytes=np.array(sweep_bytes, dtype=np.int64),
        seconds=seconds,
    )


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


def _all(futures: list) -> list:
    """The results of actor calls started together (they run at once on their workers)."""
    return [f.result() for f in futures]


def _assemble(
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
    from ..solvers.roles import resolve
    from ..solvers.solve import SolverSettings, _solve

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


def _check_client(client: Any) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise ImportError("client: the sharded solve needs dask.distributed (pip install 'babytris[dask]')") from None
    if not isinstance(client, Client):
        raise ValueError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
    return client


def _check(rules: Any, opponent: Any, discount: Any, tol: Any, max_iter: Any, split: Any) -> tuple:
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a babytris.Rules, got {type(rules).__name__}")
    unsupported = [
        name
        for name, used in (
            ("preview", rules.preview),
            ("hold", rules.hold),
            ("randomizer='bag'", rules.randomizer == "bag"),
            ("moves='soft'", rules.moves == "soft"),
        )
        if used
    ]
    if unsupported:
        raise ValueError(f"the sharded solve takes plain rules: {', '.join(unsupported)} not supported")
    if opponent not in OPPONENTS:
        raise ValueError(
            f"opponent must be one of {', '.join(map(repr, OPPONENTS))} in the sharded solve, got {opponent!r}"
        )
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(map(repr, SPLITS))}, got {split!r}")
    discount, tol, max_iter, _, _ = check_solver_args(
        discount, tol, max_iter, "vi", 6, False, undiscounted=rules.objective == "combo"
    )
    return rules, OPPONENTS[opponent], float(discount), float(tol), int(max_iter), split


#: What a sharded directory's manifest says it is, and its layout's version.
SHARDED_FORMAT, SHARDED_VERSION = "babytris.sharded", 1


def _save_shards(out, rules, shards, opponent, discount, residuals, split, tol, sweeps_per_round) -> None:
    """Each shard's part to ``out/shard-K.npz``, then ``out/manifest.json`` (written last: a
    directory without it is an unfinished save)."""
    from ..engine.writing import replace_atomically
    from ..results.solution import tie_slack

    if rules.mirror:
        raise ValueError("out: the shards keep boards as stored; a mirror-merged game is gathered, not saved in shards")
    os.makedirs(out, exist_ok=True)
    residual = residuals[-1] if residuals else 0.0
    largest = max(_all([s.largest() for s in shards]))
    slack = tie_slack(discount, residual, np.array([largest])) if residual <= tol else 0.0
    saved = _all([s.save(os.path.join(os.fspath(out), f"shard-{k}.npz"), slack) for k, s in enumerate(shards)])
    manifest = {
        "format": SHARDED_FORMAT,
        "format_version": SHARDED_VERSION,
        "rules": rules.to_json(),
        "opponent": opponent,
        "discount": discount,
        "split": split,
        "n_shards": len(shards),
        "iterations": len(residuals),
        "residual": residual,
        "converged": residual <= tol,
        "tol": tol,
        "sweeps_per_round": sweeps_per_round,  # (how far the last round's values may lie from its residual's)
        "digests": [digest for _, digest in saved],
    }
    text = json.dumps(manifest, indent=1).encode()
    replace_atomically(os.path.join(os.fspath(out), "manifest.json"), lambda f: f.write(text))


def shard_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of a shard's boards, values and policy (dtypes, shapes and bytes)."""
    import hashlib

    h = hashlib.sha256()
    for key in ("boards", "values", "policy"):
        a = np.ascontiguousarray(arrays[key])
        h.update(f"{key}:{a.dtype.str}:{a.shape}:".encode())
        h.update(a.tobytes())
    return h.hexdigest()
