"""The exact solve sharded over a ``dask.distributed`` cluster.

Exact solves grow about 14x per added row, so the next boards outgrow one
machine.  Here the boards are split into shards, each held by a dask actor
(:class:`~babytris.modes.sharded.shard.Shard`) on a worker, which runs the compiled engine on its own:

1. **Search**: each shard marks the boards it finds in a bitmap and expands all of its own it
   reaches (the lean shards' ``_lean_shard.expand``; beyond 30 cells a level a round), sending
   each board of another shard once straight to its owner, which expands the new ones in the
   next round; the search ends when a round finds none (4x7: two rounds).
2. **Table**: each shard expands its boards once more into a move table (``_shard.table``)
   over its own boards and *ghosts*, the boards of other shards its moves
   lead to, and tells each owner which of its boards it reads.
3. **Rounds**: (with ``exchange="layer"``, the default, each round is one
   sweep, greedy or evaluation, of the single solve's modified policy
   iteration run by the client's schedule over the global residuals, swept
   layer by layer: each layer's boundary is sent as soon as it is swept and
   the next layer, whose moves lead to it, waits for it, so the ghosts are
   as fresh as the single solve's own boards and the shards together run its
   sweeps, value for value.  With ``exchange="sweep"`` the boundary is sent
   after each sweep, each ghost a sweep late; with ``"round"``, as below.)
   Each shard runs the single-process algorithm over its own
   boards, modified policy iteration with Aitken jumps
   (:func:`~babytris.solvers.sweeping.evaluate_policy`, the same compiled
   :class:`~babytris.solvers._sweep.Sweeper`), its ghosts held: a greedy sweep
   and its evaluation sweeps, again while its greedy residual is above
   ``tol`` and above the largest change the ghosts brought, at most
   ``sweeps_per_round`` greedy sweeps.  Then it sends each shard the values of
   its boundary with it (the boards that shard reads) *directly*: an actor
   holds handles to the others and calls their ``put``, a coroutine run on
   the receiving worker's event loop, never through the client, which reads
   each round's residuals alone and says when to stop.  The rounds' error
   falls by a steady ratio over two rounds (the shards read each other's
   values of the round before: block Jacobi between shards), so once the
   global residuals show it, the client asks for an Aitken jump along the
   change over two rounds, which each shard takes over its own boards and
   its ghosts alike (both from the same two snapshots: the ghosts move as
   their owners do, bit for bit).

   *Why the stopping rule and the bound hold.*  The first greedy sweep of a
   round reads ghosts equal to their owners' values as the round began.  Over
   all shards it is one fixed map of the global board values W -> W': an
   in-place Bellman sweep of each shard's boards in its own order, reading
   the others' boards as they were; each new value is a backup of values
   either old or already new, so by induction over the order ``|W' - W*| <=
   discount * |W - W*|`` in the max norm, and ``W*`` is its fixed point.
   The global residual is ``max |W' - W|`` over the shards (each shard's
   first greedy sweep's), so ``|W - W*| <= residual / (1 - discount)`` as for
   one process (:attr:`Solution.error_bound <babytris.Solution.error_bound>`).
   A shard whose first greedy residual is at most ``tol`` sweeps no more in
   that round, and the last round allowed (``max_iter``) runs that sweep
   alone: so the values kept are always a greedy sweep's, which the proof of
   :func:`babytris.load_sharded` checks.  The evaluation sweeps and jumps
   between only choose where the next round starts.
4. **Result**: nothing is gathered.  Each shard takes its ghosts' last
   values and keeps each state's first move within the tie slack of its
   best (as :class:`~babytris.Solution` breaks ties); the result's
   :class:`LiveShards` answer ``value``, ``best_action``, ``start_value``
   and ``played_game`` by asking each shard for its own boards only, and with
   ``out=DIR`` each shard writes its part to the directory, read back by
   :func:`babytris.load_sharded`.  Asked for (``gather=True``), the shards'
   tables and values are gathered into one :class:`~babytris.Transitions`
   and the usual solver goes on from the values (one or two sweeps) to a
   normal :class:`~babytris.Solution`: that needs the whole table in the
   client's process.

Every message but the client's calls and the numbers they return goes from
one worker to another: the boards found (an actor's ``offer``), the boards
a shard reads (``ask``) and their values each round (``put``), coroutines
run on the receiving worker's event loop.

**Faults.**  With ``out=DIR``, every ``checkpoint_rounds`` rounds each shard
writes what its next sweeps start from (``DIR/checkpoint-K-{0,1}.npz``,
atomically, the two files in turn, so the last checkpoint every shard finished
stays whole).  While a round runs the client looks every
:data:`~babytris.modes.sharded.liveness.LIVENESS_SECONDS` whether each shard's worker is still in the cluster;
a shard whose worker left is made anew on a live worker from its checkpoint's
boards (its table built again, the requests sent again), every shard goes back
to that checkpoint, and the rounds go on.  The rounds are deterministic (the
values sent in a round are read in the next, whatever the order they arrive
in; the sweeps' threads share independent layers), so the solve ends with the
values of an undisturbed one, bit for bit.

How boards are split (``split``): ``"hash"`` mixes all of a board's bits
(shards of even size, but most moves lead to another shard); ``"low_rows"`` deals
its bottom rows' patterns to the shards by their boards (:mod:`.owners`), and a placement
leaves them alone unless it clears a row or reaches them, so more moves stay at home.
:class:`ShardedSolve` reports the share of moves that stay, and the bytes
and seconds of every round.

``dask[distributed]`` is an optional extra (``pip install 'babytris[dask]'``),
imported only here, only when a client is given.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...engine.placements import canonical_boards
from ...engine.resources import DEFAULT_MAX_MEMORY, MemoryLimitError, check_max_memory, format_bytes
from ...engine.transitions import layers
from ...game.rules import Rules
from ...game.validation import check_bool, check_int, check_solver_args, default_eval_sweeps
from ...results.solution import Solution, tie_slack
from ...solvers.roles import PIECES_RANDOM, PIECES_WORST
from . import lean_shard, owners, shard
from .checkpoints import boards_path
from .gather import assemble, check_workers, gather_bytes, table_shard_bytes
from .liveness import all_alive, all_results, lost_shards, lost_worker
from .lookups import ShardLookups
from .round_schedules import RoundJumps, SweepSchedule

__all__ = ["LostWorkerError", "LiveShards", "ShardedSolve", "solve_sharded"]

#: When the shards send each other their boundary values (see :func:`solve_sharded`).
EXCHANGES = ("layer", "sweep", "round")
#: Opponents the sharded solve plays against (pieces drawn at random, or the worst piece given).
OPPONENTS = {"random": PIECES_RANDOM, "minimax": PIECES_WORST}


class LiveShards(ShardLookups):
    """A finished :func:`solve_sharded`'s shards on their workers (dask
    actors, alive while this object and its client are): ``value``,
    ``best_action``, ``start_value`` and ``played_game`` ask each shard for its own
    boards only (:class:`~babytris.modes.sharded.lookups.ShardLookups`).

    Attributes:
        rules, opponent, split, n_shards, discount, residual, converged, iterations (rounds), tol: the solve's.
        tie_slack: how close two pieces' values must be to count as tied (the
            minimax opponent gives the first of those), as the moves kept were chosen.
    """

    def __init__(
        self,
        shards: list[Any],
        rules: Rules,
        opponent: str,
        split: str,
        discount: float,
        residual: float,
        converged: bool,
        tie_slack: float,
        iterations: int,
        tol: float,
    ) -> None:
        self._actors = shards
        self.iterations, self.tol = iterations, tol
        self.rules, self.opponent, self.split, self.n_shards = rules, opponent, split, len(shards)
        self.discount, self.residual, self.converged, self.tie_slack = discount, residual, converged, tie_slack

    def _rows(self, k: int, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._actors[k].lookup(boards).result()

    def _n_boards(self, k: int) -> int:
        return self._actors[k].size().result()[0]

    def __repr__(self) -> str:
        r = self.rules
        return (
            f"<LiveShards {r.width}x{r.height} discount={self.discount} opponent={self.opponent}: "
            f"{self.n_shards} shards ({self.split}), residual={self.residual:.1e}"
            f"{'' if self.converged else ' NOT converged'}>"
        )


@dataclass
class ShardedSolve:
    """What :func:`solve_sharded` returns: the shards, still on their workers,
    and what the sharding cost.

    Attributes:
        shards: :class:`LiveShards`, the solution as the shards hold it: its
            lookups ask only the shard a board belongs to.
        solution: the gathered :class:`~babytris.Solution`, as :func:`babytris.solve`
            gives it, if asked for (``gather=True``); else None.
        n_shards, split: how the boards were split.
        boards_per_shard: int64 array ``(n_shards,)``.
        moves_at_home: the share of moves that lead to a board of the same shard.
        search_rounds: rounds of the breadth-first search; ``search_bytes``: board bits sent between shards.
        residuals: float64 array ``(rounds,)``: each round's global residual (the
            largest of the shards' first greedy sweeps).
        round_seconds, round_bytes: float64 and int64 arrays ``(rounds,)``: the wall time of each
            round and the bytes of values the shards sent each other in it (worker to worker).
        round_greedy, round_evaluations: int64 arrays ``(rounds,)``: the greedy and evaluation
            sweeps of each round, summed over the shards.
        seconds: ``{"search": ..., "table": ..., "sweeps": ..., "gather" or "save": ...}``.
    """

    shards: LiveShards
    solution: Solution | None
    n_shards: int
    split: str
    boards_per_shard: np.ndarray
    moves_at_home: float
    search_rounds: int
    search_bytes: int
    residuals: np.ndarray
    round_seconds: np.ndarray
    round_bytes: np.ndarray
    round_greedy: np.ndarray
    round_evaluations: np.ndarray
    seconds: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return (
            f"<ShardedSolve {self.n_shards} shards ({self.split}): {len(self.round_seconds)} rounds, "
            f"{int(self.round_greedy.sum())} greedy sweeps, "
            f"{np.median(self.round_bytes) / 2**20 if len(self.round_bytes) else 0:.2f} MiB and "
            f"{np.median(self.round_seconds) if len(self.round_seconds) else 0:.3f} s per round (medians), "
            f"{self.moves_at_home:.0%} of moves at home" + f", start_value={self.shards.start_value:.6f}" + ">"
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
    n_threads: int | None = None,
    sweeps_per_round: int = 8,
    exchange: str = "layer",
    eval_sweeps: int | None = None,
    max_memory: int = DEFAULT_MAX_MEMORY,
    out: str | os.PathLike | None = None,
    gather: bool = False,
    checkpoint_rounds: int = 10,
    progress: Callable[[int, float], None] | None = None,
    lean: bool = False,
) -> ShardedSolve:
    """Solve ``rules`` with the boards sharded over the workers of ``client``
    (a ``dask.distributed.Client``); see the module's notes.

    Args:
        rules: plain rules: no preview, hold or bag, hard drops.
        client: a ``distributed.Client``.
        discount, tol, max_iter: as for :func:`babytris.solve` (``max_iter`` counts rounds).
        opponent: ``"random"`` or ``"minimax"``.
        n_shards: shards, in [1, 1024]; default: one per worker.  Shard k lives on worker k mod workers.
        split: ``"hash"`` or ``"low_rows"`` (see the module's notes).
        n_threads: threads each shard's compiled loops use, in [1, 256];
            default: its machine's cores shared among the shards on that
            machine (one worker alone on 2 cores: 2, as :func:`babytris.solve`
            takes every core; two: 1 each).
        sweeps_per_round: with ``exchange="round"``, the greedy sweeps (each
            with its evaluation sweeps) a shard runs at most between two
            exchanges, in [1, 100]; a shard stops sooner once its greedy
            residual is at most the largest change its ghosts brought (see
            the module's notes).  The stopping test reads the first greedy
            sweep of a round (the one with the ghosts fresh), so it is the
            same test whatever this is.
        exchange: when the shards send each other their boundary values:
            ``"layer"`` (the default), after every layer of every sweep (one
            sweep a round, as ``"sweep"``, but a layer's boundary goes out as
            soon as it is swept and the next layer, whose moves lead to it,
            waits for it: every ghost is as fresh as the single solve's own
            boards, so the shards run the single solve's sweeps, value for
            value; where the rules put every board in one layer, as
            ``"sweep"``); ``"sweep"``, after every sweep, greedy or
            evaluation (one sweep a round: the shards' modified policy
            iteration is then the single solve's, each ghost one sweep late;
            ``max_iter`` counts greedy sweeps); ``"round"``, after a round
            of modified policy iteration in each shard (see
            ``sweeps_per_round``).  Measured at 4x5-4x7 with 2 shards: every
            sweep took about a third of the sweeps a shard ran exchanging
            after rounds (a shard's values are a sweep late, not a round:
            between shards the iteration is block Jacobi), and the round
            trip a sweep costs milliseconds (docs/results.md).  One shard
            has no one to send to: its one round is the single solve on the
            engine's table (:func:`~babytris.solvers.solve.solve_transitions`,
            its method and its memory: board values alone where it keeps
            them).
        eval_sweeps: evaluation sweeps after each greedy sweep, in [0, 1000]
            (default: :func:`babytris.solve`'s for modified policy iteration at this discount).
        max_memory: the bytes each process of the solve may hold (default
            8 GiB), as :func:`babytris.solve`'s bounds its one process: each
            worker's, summed over the shards it holds, and with ``gather`` the
            client's.  Table shards whose tables and sweeps
            (:func:`~babytris.modes.sharded.gather.table_shard_bytes`) would need
            more on a worker, or a gather more in the client, are refused with
            :class:`~babytris.MemoryLimitError` and the estimate once the
            tables are built (the boards and moves known), before the sweeps;
            lean shards before the search and after it
            (:func:`~babytris.modes.sharded.lean_shard.check_memory`).
        out: a directory: each shard writes its boards, values and moves there
            (``shard-K.npz``, atomically; the workers must see the directory)
            and the client a ``manifest.json`` last; read them back with
            :func:`babytris.load_sharded`, whose lookups open only the shard a
            board belongs to.  Not with ``rules.mirror``.
        checkpoint_rounds: with ``out``, every this many rounds (in [1, 10**6];
            as round ``checkpoint_rounds`` begins, then every as many) each
            shard writes where it stands to ``out/checkpoint-K-{0,1}.npz``
            (atomically, the two in turn); a worker lost after that has its
            shards made anew on a live worker from their checkpoints, every
            shard goes back to the last checkpoint all wrote, and the solve
            goes on to the values an undisturbed one ends with (at most
            :data:`MAX_REBUILDS` times).  A worker lost sooner, or without
            ``out``, ends the solve, as does one with one shard (its one
            round is the single solve: nothing to go back to).  (None as the
            first round begins: the values are their start then.)  The
            checkpoint files are removed once the shards are saved.
        progress: ``progress(round, residual)``, called after each round.
        gather: also gather every shard's table and values into one
            :class:`~babytris.Solution` in the client (``solution``): its
            memory is the whole table's (see ``max_memory``).  Off by default:
            the result's ``shards`` answer lookups from the workers.
        lean: lean shards (:class:`~babytris.modes.sharded.lean_shard.LeanShard`): no
            move table, their moves recomputed as :func:`babytris.solve_lean`'s.

    Raises:
        MemoryLimitError: see ``max_memory``.
        LostWorkerError: a worker was lost mid-solve (dask's error its cause).

    Returns:
        :class:`ShardedSolve`: the live shards, the gathered ``solution`` if
        asked for, and the rounds' costs.
    """
    client = _check_client(client)
    rules, pieces, discount, tol, max_iter, split = _check(rules, opponent, discount, tol, max_iter, split)
    max_memory = check_max_memory(max_memory)
    gather = check_bool("gather", gather)
    lean = check_bool("lean", lean)
    if lean:
        lean_shard.check_rules(rules, gather)
    checkpoint_rounds = check_int("checkpoint_rounds", checkpoint_rounds, 1, 10**6)
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable (round, residual) or None, got {type(progress).__name__}")
    if out is not None and rules.mirror:
        raise ValueError("out: the shards keep boards as stored; a mirror-merged game is gathered, not saved in shards")
    n_shards = None if n_shards is None else check_int("n_shards", n_shards, 1, 1024)
    n_threads = None if n_threads is None else check_int("n_threads", n_threads, 1, 256)
    sweeps_per_round = check_int("sweeps_per_round", sweeps_per_round, 1, 100)
    if exchange not in EXCHANGES:
        raise ValueError(f"exchange must be one of {', '.join(map(repr, EXCHANGES))}, got {exchange!r}")
    eval_sweeps = (
        default_eval_sweeps(discount) if eval_sweeps is None else check_int("eval_sweeps", eval_sweeps, 0, 1000)
    )
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
            exchange,
            eval_sweeps,
            max_memory,
            out,
            gather,
            checkpoint_rounds,
            progress,
            lean_shard.LeanShard if lean else shard.Shard,
        )
    except Exception as err:
        if not lost_worker(err):
            raise
        raise LostWorkerError(
            f"a worker was lost mid-solve ({type(err).__name__}: {err}); nothing was kept. Check the workers "
            "(memory, a killed process), restart them, and solve again"
        ) from err


class LostWorkerError(RuntimeError):
    """A worker of :func:`solve_sharded` was lost mid-solve (killed, out of
    memory, unreachable), and the boards of its shards with it; dask's own
    error is the ``__cause__``."""


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
    n_threads: int | None,
    sweeps_per_round: int,
    exchange: str,
    eval_sweeps: int,
    max_memory: int,
    out: str | os.PathLike | None,
    gather: bool,
    checkpoint_rounds: int,
    progress: Callable[[int, float], None] | None,
    kind: type[shard.Shard],
) -> ShardedSolve:
    """:func:`solve_sharded` on checked arguments; ``kind``: the shards' class."""
    workers = sorted(client.scheduler_info()["workers"])
    n_shards = len(workers) if n_shards is None else n_shards
    lean = kind is lean_shard.LeanShard
    if lean:
        lean_shard.check_memory(rules, n_shards, len(workers), max_memory)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    hosts = [_host(workers[k % len(workers)]) for k in range(n_shards)]
    threads = [n_threads or -hosts.count(hosts[k]) for k in range(n_shards)]  # (-m: the cores over m)
    shards = [
        client.submit(
            kind, rules, k, n_shards, split, threads[k], actor=True, workers=[workers[k % len(workers)]]
        ).result()
        for k in range(n_shards)
    ]
    all_alive(client, shards, [s.connect(shards) for s in shards])
    # (every wait looks whether each shard's worker is still there: a call to a killed one never answers)
    # The search: rounds of expanding every shard's frontier, each board found sent to its owner;
    # one shard searches as the single solve does (the engine's kernel, its table kept for the build).
    rounds, search_bytes = 0, 0
    if n_shards == 1:
        all_alive(client, shards, [shards[0].enumerate_alone()])
    else:
        start = canonical_boards(np.array([rules.start], dtype=np.uint64), rules)
        owner = shards[int(owners.shard_of(start, n_shards, split, rules)[0])]
        all_alive(client, shards, [owner.offer(-1, start)])
        new = sum(all_alive(client, shards, [s.receive() for s in shards]))
        while new:
            rounds += 1
            search_bytes += sum(all_alive(client, shards, [s.expand() for s in shards]))
            new = sum(all_alive(client, shards, [s.receive() for s in shards]))
    if lean:
        rows = all_alive(client, shards, [s.rows_and_ghosts() for s in shards])
        lean_shard.check_memory(rules, n_shards, len(workers), max_memory, rows)
    seconds["search"] = time.perf_counter() - started
    # The table, and who reads whose boards (each shard asks the owners directly).
    began = time.perf_counter()
    all_alive(client, shards, [s.build(pieces, discount, eval_sweeps, True) for s in shards])
    sizes = all_alive(client, shards, [s.size() for s in shards])
    if not lean:
        rows = all_alive(client, shards, [s.rows_and_ghosts() for s in shards])
        needs = [table_shard_bytes(rules, n, moves, ghosts) for (n, ghosts), (_, moves) in zip(rows, sizes)]
        counts = [n for n, _ in rows]
        check_workers(rules, len(workers), max_memory, needs, counts, "tables and sweeps", "once the tables were built")
    n_boards, n_moves = (sum(x) for x in zip(*sizes))
    need = gather_bytes(rules, n_boards, n_moves)
    if gather and need > max_memory:
        raise MemoryLimitError(
            f"{rules.width}x{rules.height}: gathering {n_boards:,} boards and {n_moves:,} moves into one Solution "
            f"needs about {format_bytes(need)}, more than max_memory={format_bytes(max_memory)}; refused before "
            "the sweeps (the shards' tables are built). Raise max_memory, or keep the result in the shards "
            "(gather=False)"
        )
    all_alive(client, shards, [s.serve() for s in shards])
    seconds["table"] = time.perf_counter() - began
    if out is not None:
        os.makedirs(out, exist_ok=True)  # (for the checkpoints)
    # The rounds: each shard sweeps its own boards and sends its boundary to the shards reading it;
    # the client reads the residuals alone.
    began = time.perf_counter()
    residuals: list[float] = []
    rounds_log: list[tuple[float, int, int, int]] = []  # (seconds, greedy sweeps, evaluation sweeps, bytes)
    exchange = "round" if n_shards == 1 else exchange  # (one shard has no one to send to)
    # (a sweep in parts where the rules layer the boards: its boundary sent layer by layer)
    last_layer = len(layers(rules)) - 1 if exchange == "layer" and len(layers(rules)) > 1 else -1
    jumps: RoundJumps | SweepSchedule = (
        RoundJumps() if exchange == "round" else SweepSchedule(eval_sweeps, tol, pieces == PIECES_RANDOM)
    )
    # (the last checkpoint every shard wrote: its files, and the rounds' record as it began)
    kept: tuple[list, list[float], list, Any] | None = None
    resumed, rebuilt = False, 0
    while not jumps.done(residuals, max_iter, tol) and not (n_shards == 1 and not lean and residuals):
        t0 = time.perf_counter()
        r = len(residuals)
        if n_shards == 1 and not lean:  # (one round: the single solve on the engine's table; no checkpoint)
            write, calls = False, [shards[0].solve_alone(opponent, discount, tol, max_iter)]
        elif isinstance(jumps, SweepSchedule):
            greedy, jump, record = jumps.next(resumed)
            count = jumps.greedy - 1 if greedy else 0
            write = out is not None and not resumed and count > 0 and count % checkpoint_rounds == 0
            paths: list[str | None] = (
                _checkpoint_paths(out, n_shards, count // checkpoint_rounds) if write else [None] * n_shards
            )
            calls = [s.step(r, greedy, jump, record, paths[k], last_layer >= 0) for k, s in enumerate(shards)]
        else:
            jump = 0.0 if resumed or n_shards == 1 else jumps.ratio(residuals)
            write = out is not None and not resumed and r > 0 and r % checkpoint_rounds == 0
            paths = _checkpoint_paths(out, n_shards, r // checkpoint_rounds) if write else [None] * n_shards
            calls = [s.round(r, tol, sweeps_per_round, jump, r == max_iter - 1, paths[k]) for k, s in enumerate(shards)]
        try:
            results = all_alive(client, shards, calls)
        except Exception as err:
            if kept is None or not lost_worker(err) or rebuilt >= MAX_REBUILDS:
                raise
            rebuilt += 1
            paths, residuals, rounds_log, jumps = kept[0], list(kept[1]), list(kept[2]), copy.deepcopy(kept[3])
            build = (pieces, discount, eval_sweeps, True)
            shards = _rebuild(client, shards, rules, split, n_threads or 1, build, paths)
            all_results([s.restore(paths[k], rebuilt) for k, s in enumerate(shards)])
            resumed = True
            continue
        if write:
            kept = (paths, list(residuals), list(rounds_log), copy.deepcopy(jumps))
        resumed = False
        residuals.append(max(r for r, _, _, _ in results))
        if isinstance(jumps, SweepSchedule):
            jumps.swept(residuals[-1])
        rounds_log.append(
            (
                time.perf_counter() - t0,
                sum(g for _, g, _, _ in results),
                sum(e for _, _, e, _ in results),
                sum(b for _, _, _, b in results),
            )
        )
        if progress is not None:
            progress(len(residuals), residuals[-1])
    residual = residuals[-1] if residuals else 0.0
    largest = max(all_results([s.close_rounds(len(residuals) - 1, last_layer) for s in shards]))
    slack = tie_slack(discount, residual, np.array([largest])) if residual <= tol else 0.0
    all_results([s.settle(slack) for s in shards])
    seconds["sweeps"] = time.perf_counter() - began
    at_home = sum(all_results([s.at_home() for s in shards]))
    boards_per_shard = [b for b, _ in all_results([s.size() for s in shards])]
    began = time.perf_counter()
    if out is not None:
        _save_shards(out, rules, shards, opponent, discount, residuals, split, tol)
        held = [boards_path(os.fspath(out), k) for k in range(n_shards)]
        for path in _checkpoint_paths(out, n_shards, 0) + _checkpoint_paths(out, n_shards, 1) + held:
            if path is not None and os.path.exists(path):
                os.remove(path)
        seconds["save"] = time.perf_counter() - began
    solution = None
    if gather:
        began = time.perf_counter()
        parts = all_results([s.gather() for s in shards])
        solution = assemble(rules, parts, opponent, discount, tol, max_iter, residuals, seconds)
        seconds["gather"] = time.perf_counter() - began
        solution.seconds["solve"] += seconds["sweeps"]  # (the gathered solve only went on from the shards' values)
    live = LiveShards(shards, rules, opponent, split, discount, residual, residual <= tol, slack, len(residuals), tol)
    return ShardedSolve(
        shards=live,
        solution=solution,
        n_shards=n_shards,
        split=split,
        boards_per_shard=np.array(boards_per_shard, dtype=np.int64),
        moves_at_home=at_home / max(n_moves, 1),
        search_rounds=rounds,
        search_bytes=int(search_bytes),
        residuals=np.array(residuals),
        round_seconds=np.array([r[0] for r in rounds_log]),
        round_greedy=np.array([r[1] for r in rounds_log], dtype=np.int64),
        round_evaluations=np.array([r[2] for r in rounds_log], dtype=np.int64),
        round_bytes=np.array([r[3] for r in rounds_log], dtype=np.int64),
        seconds=seconds,
    )


#: Workers lost (and their shards rebuilt from the checkpoints) a solve survives.
MAX_REBUILDS = 3


def _checkpoint_paths(out: str | os.PathLike | None, n_shards: int, count: int) -> list[str | None]:
    """Each shard's checkpoint file for the ``count``-th checkpoint: two files a
    shard, written in turn, so the last one every shard finished stays whole
    while the next is written (beside them, its boards, written once:
    ``checkpoint-K-boards.npz``)."""
    folder = os.fspath(out)  # type: ignore[arg-type]  # (checkpoints are written only with out=)
    return [os.path.join(folder, f"checkpoint-{k}-{count % 2}.npz") for k in range(n_shards)]


def _rebuild(
    client: Any, shards: list, rules: Rules, split: str, n_threads: int, build: tuple, paths: list[str | None]
) -> list:
    """The shards with each one a lost worker held made anew on a live
    worker (dask's choice) from the boards of its checkpoint (``paths[k]``):
    its table built again and its requests sent, the others' requests sent
    to it again.
    Returns the shards, every one connected to the new ones' handles; the
    caller restores their values."""
    n_shards, kind = len(shards), shards[0]._cls  # (the shards' class: Shard or LeanShard)
    lost = lost_shards(client, shards)
    fresh = list(shards)
    for k in lost:
        fresh[k] = client.submit(kind, rules, k, n_shards, split, n_threads, actor=True, pure=False).result()
    all_results([s.connect(fresh) for s in fresh])
    all_results([fresh[k].load_boards(paths[k]) for k in lost])
    all_results([fresh[k].build(*build) for k in lost])
    all_results([s.ask_again() for k, s in enumerate(fresh) if k not in lost])
    all_results([s.serve() for s in fresh])
    return fresh


def _host(address: str) -> str:
    """The machine of a worker's address (``tcp://10.0.0.5:4321`` -> ``10.0.0.5``)."""
    return address.split("://")[-1].rsplit(":", 1)[0]


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
    if split not in owners.SPLITS:
        raise ValueError(f"split must be one of {', '.join(map(repr, owners.SPLITS))}, got {split!r}")
    discount, tol, max_iter, _, _ = check_solver_args(
        discount, tol, max_iter, "vi", 6, False, undiscounted=rules.objective == "combo"
    )
    return rules, OPPONENTS[opponent], float(discount), float(tol), int(max_iter), split


#: What a sharded directory's manifest says it is, and its layout's version (3: low_rows dealt by boards).
SHARDED_FORMAT, SHARDED_VERSION = "babytris.sharded", 3


def _save_shards(out, rules, shards, opponent, discount, residuals, split, tol) -> None:
    """Each shard's part to ``out/shard-K.npz``, then ``out/manifest.json`` (written last: a
    directory without it is an unfinished save)."""
    from ...engine.writing import replace_atomically

    os.makedirs(out, exist_ok=True)
    residual = residuals[-1] if residuals else 0.0
    saved = all_results([s.save(os.path.join(os.fspath(out), f"shard-{k}.npz")) for k, s in enumerate(shards)])
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
        "digests": [digest for _, digest in saved],
        "owners": owners.owner_digest(rules, len(shards), split),
    }
    text = json.dumps(manifest, indent=1).encode()
    replace_atomically(os.path.join(os.fspath(out), "manifest.json"), lambda f: f.write(text))
