"""One shard of the sharded solve (:mod:`babytris.modes.sharded.distributed`, whose
notes give the algorithm): a dask actor holding its boards, its move table over
them and its ghosts, and its values; it searches, builds, sweeps by modified
policy iteration (the single solve's compiled sweeps and evaluation,
:func:`~babytris.solvers.sweeping.evaluate_policy`), sends boards and values
straight to the other shards, checkpoints, and answers lookups."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ...engine.placements import engine
from ...engine.transitions import layer_order, layers
from ...game.rules import Rules
from ...solvers import _sweep
from ...solvers.roles import PIECES_RANDOM
from ...solvers.sweep_arrays import CHOSEN_MOVES_STATES
from ...solvers.sweeping import MAX_MISSED_JUMPS, ThreadTuner, _jump_along, evaluate_policy
from . import _shard, owners
from .board_ranks import MAX_BITMAP_CELLS, BoardRanks

__all__ = ["Shard", "shard_digest", "ROUND_PERIOD"]

#: The rounds' error turns round over this many rounds (two shards reading each other's
#: values of the round before: block Jacobi), so their jumps go along the change over as many.
ROUND_PERIOD = 2


class Shard:
    """The boards one shard owns, their move table and values; a dask actor
    (``client.submit(Shard, ..., actor=True)``), so the arrays stay on its
    worker and only what other shards need travels.  The methods are the
    steps of :func:`solve_sharded`, called in its order."""

    def __init__(self, rules: Rules, index: int, n_shards: int, split: str, n_threads: int = 1) -> None:
        """``n_threads``: the threads of the compiled loops; ``-m``: this machine's cores over ``m``
        (the shards on it), at least 1."""
        self.rules, self.index, self.n_shards, self.split = rules, index, n_shards, split
        self.n_threads = n_threads if n_threads > 0 else max(1, (os.cpu_count() or 1) // -n_threads)
        self.engine = engine(rules)
        self.boards = np.zeros(0, dtype=np.uint64)  # ascending (one shard's: within each of the engine's layers)
        self.runs = np.array([0, 0], dtype=np.int64)  # (one shard's: those layers' starts)
        self.frontier = np.zeros(0, dtype=np.uint64)

    def connect(self, peers: list[Any]) -> None:
        """Keep the handles of every shard (``peers[k]``: shard k's actor) to
        send them boards and values directly, worker to worker."""
        self.peers = peers
        cells = self.rules.width * self.rules.height
        # (the boards the search has seen here, a bit a possible board, up to MAX_BITMAP_CELLS: the
        # boards are listed from it once, where merging them every level copied them all each time)
        bitmap = cells <= MAX_BITMAP_CELLS and self.n_shards > 1 and not len(self.boards)
        self.seen = np.zeros(max(1, (1 << cells) >> 6), dtype=np.uint64) if bitmap else None
        self.offers: list[np.ndarray] = []  # boards found by the shards, owned here
        self.asked: dict[int, np.ndarray] = {}  # per shard, the boards of this one it reads
        self.inbox: dict[int, dict[int, np.ndarray]] = {}  # per round, per shard, the values it sent

    # --- the search ---------------------------------------------------------------------------

    async def offer(self, sender: int, boards: np.ndarray) -> None:
        """Receive boards (uint64) shard ``sender`` found, owned here, for :meth:`receive`.
        (A coroutine, as :meth:`put`.)"""
        self.offers.append(boards)

    def receive(self) -> int:
        """Keep the boards offered not seen yet as the next frontier; returns how many are new."""
        found = owners.distinct(np.concatenate([np.zeros(0, dtype=np.uint64), *self.offers]))
        self.offers = []
        if self.seen is not None:  # (the boards themselves listed from it as the table is built)
            self.frontier = _shard.first_seen(found, self.seen)
            return len(self.frontier)
        # (a binary search: the boards found ascend, so its steps stay in cache; a bitmap
        # built again every level took 40% of the search at 4x6)
        at = np.searchsorted(self.boards, found)
        seen = at < len(self.boards)
        seen[seen] = self.boards[at[seen]] == found[seen]
        self.frontier = found[~seen]
        # (two sorted runs: the stable sort merges them in linear time)
        self.boards = np.sort(np.concatenate([self.boards, self.frontier]), kind="stable")
        return len(self.frontier)

    async def expand(self) -> int:
        """The boards after every move of the frontier, each sent to the shard
        that owns it (the distinct ones); returns the bytes sent to other shards."""
        import asyncio

        found = await asyncio.to_thread(self._expand)
        self.offers.append(found[self.index])
        others = [(k, boards) for k, boards in enumerate(found) if k != self.index and len(boards)]
        await asyncio.gather(*(self.peers[k].offer(self.index, boards) for k, boards in others))
        return sum(boards.nbytes for _, boards in others)

    def _expand(self) -> list[np.ndarray]:
        """The boards after every move of the frontier: per shard, the distinct ones it owns (uint64)."""
        _, after, _, _ = _shard.expand(self.engine, self.frontier, self.n_threads)
        after = owners.distinct(after)
        owner = owners.shard_of(after, self.n_shards, self.split, self.rules)
        return [after[owner == k] for k in range(self.n_shards)]

    # --- the table ---------------------------------------------------------------------------

    async def build(self, pieces: int, discount: float, eval_sweeps: int, accelerate: bool) -> int:
        """:meth:`_build`, then each shard told which of its boards this one reads
        (its request, sent directly); returns the bytes of the requests."""
        import asyncio

        self.needs = await asyncio.to_thread(self._build, pieces, discount, eval_sweeps, accelerate)
        await self.ask_again()
        return sum(wanted.nbytes for k, wanted in enumerate(self.needs) if k != self.index)

    async def ask(self, sender: int, wanted: np.ndarray) -> None:
        """Receive the boards of this shard that shard ``sender`` reads (uint64, sorted), for :meth:`serve`."""
        self.asked[sender] = wanted

    def enumerate_alone(self) -> int:
        """The one shard's boards and table: the single solve's own search and
        table (:func:`~babytris.engine.enumeration.enumerate_boards`, the engine's
        compiled kernel on ``n_threads`` threads), kept for :meth:`build`; the
        boards in the engine's order (by layer, ascending within one).
        Returns the boards."""
        from ...engine.enumeration import enumerate_boards

        self.table = enumerate_boards(self.rules, n_jobs=self.n_threads)
        self.boards = self.table.boards
        self.runs = self.table.layer_starts
        return len(self.boards)

    def _build(self, pieces: int, discount: float, eval_sweeps: int, accelerate: bool) -> list[np.ndarray]:
        """Expand every board into the move table over own boards and ghosts,
        and set up the sweeps: modified policy iteration's, ``eval_sweeps``
        evaluation sweeps after each greedy one, Aitken jumps if ``accelerate``
        (and the pieces drawn: evaluating a policy against the minimax
        opponent still chooses, and is no linear iteration).  One shard
        takes the single solve's table as it is (:meth:`enumerate_alone`).
        Returns, per shard, the boards of it whose values the moves here
        read (uint64, sorted; none of its own)."""
        self.pieces = pieces
        if self.n_shards == 1:  # (its sweeps are the single solve's, set up as it runs: solve_alone)
            if not hasattr(self, "table"):
                self.enumerate_alone()
            t = self.table
            self.offsets, self.next_board, self.lines = t.offsets, t.next_board, t.lines
            self.moves_at_home = t.n_moves
            self.eval_sweeps = eval_sweeps
            return [np.zeros(0, dtype=np.uint64)]
        seen = getattr(self, "seen", None)
        if seen is not None:  # (the search's boards, ascending)
            self.boards, self.seen, self.frontier = _shard.listed(seen), None, np.zeros(0, dtype=np.uint64)
        rules = self.rules
        P = rules.n_pieces
        n = len(self.boards)
        cells = rules.width * rules.height
        offsets, after, nxt, owner, away = self._table(cells)
        self.next_bits = after
        self.moves_at_home = len(after) - len(away)
        needs: list[np.ndarray] = []
        base = n
        for k in range(self.n_shards):
            mine = away[owner == k]
            wanted = np.zeros(0, dtype=np.uint64)
            if k != self.index:
                ghosts = BoardRanks.of(after[mine], cells)
                wanted = ghosts.boards
                nxt[mine] = base + ghosts.index(after[mine])
            needs.append(wanted)
            base += len(wanted)
        self.ghost_starts = np.cumsum([n] + [len(w) for w in needs])
        n_rows = base
        if n_rows > np.iinfo(np.int32).max:
            raise ValueError(f"shard {self.index}: {n_rows:,} boards and ghosts, more than a table's int32 rows")
        self.offsets = np.concatenate([offsets, np.full((n_rows - n) * P, offsets[-1], dtype=offsets.dtype)])
        self.next_board = nxt
        live = ~(np.diff(self.offsets[: n * P + 1]) == 0).reshape(n, P).all(axis=1)
        order, starts = self._order(np.flatnonzero(live))
        self._sweeps_over(n_rows, order, starts, len(starts) > 2, pieces, discount)
        self.eval_sweeps = eval_sweeps
        self.accelerate = accelerate and self.linear
        return needs

    def _table(self, cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every move of the shard's boards, each move's row found where the
        board is its own: the compiled pass (``_shard.table``, its bitmap of
        :class:`BoardRanks`) up to :data:`MAX_BITMAP_CELLS` cells, numpy's
        lookups beyond.

        Returns:
            ``(offsets, next_bits, rows, owner, away)``: :func:`_shard.expand`'s
            offsets and boards after, int32 rows per move (set for its own
            boards only), the moves to other shards' boards (int64 indices,
            ascending) and the shard owning each of them (int64).
        """
        rules = self.rules
        if cells <= MAX_BITMAP_CELLS:
            ranks = BoardRanks(self.boards, cells)
            key, table = owners.key_mask(self.split, rules.width), owners.owner_table(rules, self.n_shards, self.split)
            offsets, after, rows, self.lines, self.placement = _shard.table(
                self.engine,
                self.boards,
                ranks.words,
                ranks.before,
                key,
                table,
                self.n_shards,
                self.index,
                self.n_threads,
            )
            away = np.flatnonzero(rows < 0)
            if np.any(rows[away] == -2):
                raise ValueError(f"shard {self.index}: a move leads to a board of its own it does not hold")
            return offsets, after, rows, owners.shard_of(after[away], self.n_shards, self.split, rules), away
        offsets, after, self.lines, self.placement = _shard.expand(self.engine, self.boards, self.n_threads)
        owner = owners.shard_of(after, self.n_shards, self.split, rules)
        home = owner == self.index
        rows = np.full(len(after), -1, dtype=np.int32)
        rows[home] = BoardRanks(self.boards, cells).index(after[home])
        away = np.flatnonzero(~home)
        return offsets, after, rows, owner[away], away

    def _sweeps_over(
        self, n_rows: int, order: np.ndarray, starts: np.ndarray, independent: bool, pieces: int, discount: float
    ) -> None:
        """The values (0), the compiled sweeper over ``n_rows`` rows (own boards
        then ghosts) in ``order`` by layers ``starts``, and the jumps' tallies."""
        rules = self.rules
        P = rules.n_pieces
        self.V = np.zeros(n_rows * P)
        self.W = np.zeros(n_rows)
        self.policy = np.full(n_rows * P, -1, dtype=np.int16)
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
            independent_layers=independent,
            n_threads=self.n_threads,
        )
        if n_rows * P <= CHOSEN_MOVES_STATES:
            self.sweeper.cache_chosen_moves()
        self.tuned = ThreadTuner(self.sweeper, self.n_threads, self.W.nbytes + self.V.nbytes)
        self.linear = pieces == PIECES_RANDOM
        # (a jump's direction; the ghosts' are their owners' recorded ones, see _take_ghosts)
        self.changes = np.zeros(n_rows, dtype=np.float32)
        self.recorded = False  # (whether the last sweep recorded its changes: exchange="sweep")
        self.missed, self.jumped, self.last_greedy = 0, False, np.inf
        self.snapshots: list[np.ndarray] = []  # (the values as the last rounds began, for the rounds' jumps)
        self.news, self.restored = 0.0, False
        self.generation = 0  # (restores so far)
        self.working: Any = None  # (the work running in a thread: an asyncio future)

    def _order(self, live: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The live boards in the order the whole game's sweeps take them
        (:func:`babytris.engine.transitions.sweep_order`): layer by layer, or with
        one layer from the largest board down."""
        if len(layers(self.rules)) == 1:
            return live[::-1].astype(np.int32), np.array([0, len(live)], dtype=np.int64)
        order, starts = layer_order(self.rules, self.boards[live])
        return live[order].astype(np.int32), starts

    def _runs(self) -> np.ndarray:
        """The starts of the runs of ascending boards, and the end: one run but
        for :meth:`enumerate_alone`'s layers."""
        return self.runs if self.n_shards == 1 else np.array([0, len(self.boards)], dtype=np.int64)

    def size(self) -> tuple[int, int]:
        """``(boards, moves)`` of the shard's table."""
        return len(self.boards), len(self.next_board)

    def at_home(self) -> int:
        """The moves that lead to a board of this shard."""
        return self.moves_at_home

    def largest(self) -> float:
        """The largest |value| of the shard's states (0 if none)."""
        n = len(self.boards) * self.rules.n_pieces
        return float(np.abs(self.V[:n]).max()) if n else 0.0

    def serve(self) -> None:
        """Note, per shard that asked (:meth:`ask`), where the boards it reads
        are here: this shard's boundary with it."""
        if not hasattr(self, "served"):  # (a rebuilt shard's requests come again alone)
            self.served = [np.zeros(0, dtype=np.int64) for _ in range(self.n_shards)]
        for k, wanted in self.asked.items():
            at = np.searchsorted(self.boards, wanted)
            if len(wanted) and not np.array_equal(self.boards[np.minimum(at, len(self.boards) - 1)], wanted):
                raise ValueError(f"shard {self.index}: shard {k} asked for boards it does not hold")
            self.served[k] = at
        self.asked = {}

    # --- the rounds ---------------------------------------------------------------------------

    async def put(self, sender: int, values: np.ndarray, index: int) -> None:
        """Receive shard ``sender``'s values of the boards read here (in the
        order asked), for the next round.  (A coroutine: it runs on the
        worker's event loop, never queued behind a round's sweeps.)"""
        self.inbox.setdefault(index, {})[sender] = values

    async def round(
        self, index: int, tol: float, greedy_sweeps: int, jump: float, last: bool, checkpoint: str | None = None
    ) -> tuple[float, int, int, int]:
        """Round ``index``: the ghosts' values the other shards sent in the round
        before (a shard may send those of this round before this one has
        begun: they wait for the next), then modified
        policy iteration over this shard's boards (see the module's notes),
        then the boundary values straight to each shard that reads them.
        ``checkpoint``: a path to write where the round stands before its
        sweeps (:meth:`_checkpoint`).  After :meth:`restore` the round goes
        on from there: its ghosts and jump are those of the checkpoint.

        Returns:
            ``(residual, greedy sweeps, evaluation sweeps, bytes sent)``, the
            residual the first greedy sweep's, whose ghosts were fresh (one
            shard's: the last one's, see :meth:`_sweeps`).
        """

        generation = self.generation
        if self.restored:
            self.restored = False
        else:
            self.news = self._take_ghosts(index - 1)
            if jump:
                self.news = max(self.news, self._jump(jump))
            self.snapshots = [*self.snapshots[1 - ROUND_PERIOD :], self.W.copy()]
            if checkpoint is not None:
                await self._in_thread(self._checkpoint, checkpoint)
        swept = (np.inf, 0, 0)
        if generation == self.generation:  # (else restored meanwhile: the client gave this round up)
            swept = await self._in_thread(self._sweeps, tol, 0 if last else greedy_sweeps, self.news)
        if generation != self.generation:
            return (*swept, 0)  # (read by no one; the values are the checkpoint's again)
        return (*swept, await self._send(index))

    async def _send(self, index: int) -> int:
        """Round ``index``'s boundary values, straight to each shard that reads
        them; returns the bytes sent."""
        import asyncio

        sent = [
            (k, self.W[at]) for k, at in enumerate(self.served) if k != self.index and len(at)
        ]  # (copies: the next round's sweeps change W while these travel)
        await asyncio.gather(*(self.peers[k].put(self.index, values, index) for k, values in sent))
        return sum(values.nbytes for _, values in sent)

    async def step(
        self, index: int, greedy: bool, jump: float, record: bool, checkpoint: str | None = None
    ) -> tuple[float, int, int, int]:
        """Round ``index`` of the solve that exchanges after every sweep
        (``exchange="sweep"``): the ghosts sent in the round before, one
        sweep, and the boundary sent, as :meth:`round`.  A greedy sweep
        (``greedy``) reads ghosts equal to their owners' values, so its
        residual is the global map's, as :meth:`round`'s first; an
        evaluation sweep first takes the client's Aitken jump (``jump``, a
        ratio, along the changes the last evaluation sweep recorded: the
        ghosts' are what their values brought after it, their owners'
        changes, so they jump as their owners do) and records its own
        changes if ``record``.  ``checkpoint``: as :meth:`round`'s.

        Returns:
            ``(residual, greedy sweeps, evaluation sweeps, bytes sent)``.
        """
        generation = self.generation
        if self.restored:
            self.restored = False
        else:
            self._take_ghosts(index - 1)
            if checkpoint is not None:
                await self._in_thread(self._checkpoint, checkpoint)
        swept = (np.inf, 0, 0)
        if generation == self.generation:
            swept = await self._in_thread(self._one_sweep, greedy, jump, record)
        if generation != self.generation:
            return (*swept, 0)
        return (*swept, await self._send(index))

    def _one_sweep(self, greedy: bool, jump: float, record: bool) -> tuple[float, int, int]:
        """:meth:`step`'s sweep: ``(residual, greedy sweeps, evaluation sweeps)``."""
        self.recorded = record and not greedy
        if greedy:
            return self.tuned.greedy_sweep(), 1, 0
        if jump:  # (the ghosts too, along their owners' changes: they stay their owners' values, bit for bit)
            _jump_along(jump, self.W, self.changes)
        return self.tuned.evaluation_sweep(self.changes if record else None), 0, 1

    def solve_alone(self, opponent: str, discount: float, tol: float, max_iter: int) -> tuple[float, int, int, int]:
        """The one shard's rounds: the single solve on the engine's table it
        built (:func:`~babytris.solvers.solve.solve_transitions`: its method,
        its sweeps keeping board values alone where it keeps them, its
        moves the first best within its tie slack), in one round, as it has
        no one to exchange with; the state values and moves kept for
        :meth:`lookup`.  Returns ``(last greedy residual, greedy sweeps,
        evaluation sweeps, 0 bytes sent)``."""
        from ...solvers.solve import solve_transitions

        solved = solve_transitions(
            self.table,
            discount=discount,
            tol=tol,
            max_iter=max_iter,
            opponent=opponent,
            eval_sweeps=self.eval_sweeps,
            n_jobs=self.n_threads,
        )
        self.V = solved.values.ravel()
        self.chosen = np.asarray(solved.policy).ravel()
        evaluations = 0 if solved.evaluation_sweeps is None else int(solved.evaluation_sweeps.sum())
        return solved.residual, solved.iterations, evaluations, 0

    def _checkpoint(self, path: str) -> None:
        """Write, atomically, all a round needs to go on as if never stopped:
        the boards (to rebuild the table elsewhere), the values, own and
        ghosts, the state values (the greedy residual compares with them),
        the snapshots the rounds jump from, and the jumps' tallies."""
        from ...engine.writing import replace_atomically

        n = len(self.boards) * self.rules.n_pieces
        tallies = np.array([self.missed, self.jumped, self.last_greedy, self.accelerate, self.news])
        snapshots = np.array(self.snapshots)
        replace_atomically(
            path,
            lambda f: np.savez(f, boards=self.boards, W=self.W, V=self.V[:n], snapshots=snapshots, tallies=tallies),
        )

    async def _in_thread(self, work: Callable, *args: Any) -> Any:
        """``work(*args)`` in a thread (the event loop goes on), noted for :meth:`restore` to wait for."""
        import asyncio

        self.working = working = asyncio.ensure_future(asyncio.to_thread(work, *args))
        return await working

    async def restore(self, path: str) -> None:
        """Go back to the checkpoint at ``path`` (:meth:`_checkpoint`): the next
        :meth:`round` runs its sweeps from there.  A round still running here
        (the client gave it up when a worker was lost) is waited for and then
        changes nothing more."""
        import asyncio

        if self.working is not None and not self.working.done():
            await asyncio.wait([self.working])
        self.generation += 1
        with np.load(path, allow_pickle=False) as data:
            if not np.array_equal(data["boards"], self.boards) or data["W"].shape != self.W.shape:
                raise ValueError(f"shard {self.index}: {path!r} is another shard's checkpoint")
            n = len(self.boards) * self.rules.n_pieces
            self.W[:] = data["W"]
            self.V[:n] = data["V"]
            self.snapshots = list(data["snapshots"])
            missed, jumped, self.last_greedy, accelerate, self.news = data["tallies"].tolist()
        self.missed, self.jumped, self.accelerate = int(missed), bool(jumped), bool(accelerate)
        self.inbox, self.restored, self.recorded = {}, True, False

    def load_boards(self, path: str) -> None:
        """Take the boards of the checkpoint at ``path``: a shard rebuilt on
        another worker, whose search is not run again."""
        with np.load(path, allow_pickle=False) as data:
            self.boards = data["boards"]
        self.seen = None  # (not searched)

    async def ask_again(self) -> None:
        """Send each owner the boards this shard reads again (a shard rebuilt elsewhere has none)."""
        import asyncio

        others = [(k, wanted) for k, wanted in enumerate(self.needs) if k != self.index and len(wanted)]
        await asyncio.gather(*(self.peers[k].ask(self.index, wanted) for k, wanted in others))

    def _jump(self, ratio: float) -> float:
        """The round's Aitken jump, by the client's ``ratio`` of the global
        residuals: every row, own and ghost, moved on along its change over
        the round before (the last two snapshots: both are the values every
        shard held at a round's end, so the ghosts move as their owners do,
        bit for bit); returns the largest step."""
        step = ratio / (1.0 - ratio) * (self.W - self.snapshots[0])
        self.W += step
        return float(np.abs(step).max(initial=0.0))

    def _take_ghosts(self, index: int) -> float:
        """The ghosts' values sent in round ``index`` (none before the first);
        returns their largest change (inf in the first round of a shard with
        ghosts: their values are not known yet)."""
        sent = self.inbox.pop(index, {})
        self.inbox = {r: values for r, values in self.inbox.items() if r > index}
        if index < 0:
            return np.inf if len(self.W) > len(self.boards) else 0.0
        news = 0.0
        for k, values in sent.items():
            ghosts = self.W[self.ghost_starts[k] : self.ghost_starts[k + 1]]
            if len(values):
                news = max(news, float(np.abs(values - ghosts).max()))
            if self.recorded:  # (the owner's change in the sweep it recorded, as its sweeper rounds it)
                self.changes[self.ghost_starts[k] : self.ghost_starts[k + 1]] = values - ghosts
            ghosts[:] = values
        return news

    def _sweeps(self, tol: float, greedy_sweeps: int, news: float) -> tuple[float, int, int]:
        """Modified policy iteration over the shard, the ghosts held: a greedy
        sweep and its evaluation sweeps, again while the greedy residual is
        above ``tol`` and above ``news`` (the ghosts' largest change: the
        values inside gain little more before the next exchange), at most
        ``greedy_sweeps`` greedy sweeps (0: the one greedy sweep alone, as
        the last round allowed ends).  Returns the first greedy sweep's
        residual (one shard's: the last one's; it has no ghosts, so every
        greedy sweep is the whole game's and the round may stop the solve
        on its last, as the single solve stops) and the greedy and
        evaluation sweeps run."""
        first = residual = np.inf
        greedy = evaluations = 0
        while greedy < max(greedy_sweeps, 1):
            residual = self.tuned.greedy_sweep()
            greedy += 1
            first = residual if greedy == 1 else first
            if self.jumped and residual > self.last_greedy and (greedy > 1 or not news):
                self.missed += 1  # (the jump overshot, as modified_policy_iteration counts it)
                self.accelerate = self.missed < MAX_MISSED_JUMPS
            self.last_greedy = residual
            if residual <= tol or not greedy_sweeps:
                break  # (then no evaluation: the values stay as the greedy sweep left them)
            swept, self.jumped = evaluate_policy(
                self.tuned, self.W, tol, self.eval_sweeps, accelerate=self.accelerate, changes=self.changes
            )
            evaluations += swept
            if residual <= news:
                break
        return (residual if self.n_shards == 1 else first), greedy, evaluations

    def settle(self, slack: float, index: int) -> None:
        """End the rounds: the ghosts' last values (sent in round ``index``, the last), so
        that the moves are greedy in the values as they stand, and each
        state's move the first within ``slack`` of its best, as
        :class:`~babytris.Solution` breaks ties, as its placement number."""
        if self.n_shards == 1:  # (solve_alone settled its moves as the single solve does)
            return
        self._take_ghosts(index)
        self.sweeper.first_best_moves(slack)
        n, P = len(self.boards), self.rules.n_pieces
        offsets = self.offsets[: n * P + 1]
        policy = self.policy[: n * P].astype(np.int64)
        chosen = np.full(n * P, -1, dtype=np.int64)
        if len(self.placement):
            at = np.clip(offsets[:-1] + policy, 0, len(self.placement) - 1)
            chosen = np.where(policy >= 0, self.placement[at], -1)
        self.chosen = chosen.astype(np.int16)

    def lookup(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(found, values, policy)`` of ``boards`` (uint64, owned here): bool
        ``(m,)``, the states' values (float64) and placement numbers (int16,
        -1 at game over) ``(m, P)``; after :meth:`settle`."""
        P = self.rules.n_pieces
        found, rows = np.zeros(len(boards), dtype=bool), np.zeros(len(boards), dtype=np.int64)
        for a, b in zip(self._runs()[:-1], self._runs()[1:]):
            at = np.minimum(a + np.searchsorted(self.boards[a:b], boards), b - 1)
            here = ~found & (self.boards[at] == boards) if b > a else np.zeros(len(boards), dtype=bool)
            found |= here
            rows[here] = at[here]
        states = rows[:, None] * P + np.arange(P)
        return found, self.V[states], self.chosen[states]

    def save(self, path: str) -> tuple[int, str]:
        """Write the shard's boards, values and moves (after :meth:`settle`) to
        ``path`` (.npz, atomically); returns the bytes written and the arrays' SHA-256."""
        from ...engine.writing import replace_atomically

        n, P = len(self.boards), self.rules.n_pieces
        arrays: dict[str, np.ndarray] = {"boards": self.boards, "values": self.V[: n * P], "policy": self.chosen}
        if len(self._runs()) > 2:  # (a file's boards ascend: the runs merged)
            rows = np.argsort(self.boards, kind="stable")
            arrays = {
                "boards": self.boards[rows],
                "values": self.V[: n * P].reshape(n, P)[rows].ravel(),
                "policy": self.chosen.reshape(n, P)[rows].ravel(),
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
            "next_bits": self.boards[self.next_board] if self.n_shards == 1 else self.next_bits,
            "lines": self.lines,
            "placement": self.table.placement if self.n_shards == 1 else self.placement,
            "values": self.V[: n * P],
            "board_values": self._board_values(),
            "moves_at_home": self.moves_at_home,
        }

    def _board_values(self) -> np.ndarray:
        """The own boards' values (float64 ``(n,)``); one shard's from its state
        values (its sweeps' board values were the single solve's, freed)."""
        n, P = len(self.boards), self.rules.n_pieces
        if self.n_shards > 1:
            return self.W[:n]
        values = self.V.reshape(n, P)
        if self.pieces == PIECES_RANDOM:
            return values @ np.asarray(self.rules.probabilities, dtype=np.float64)
        return values.min(axis=1)


def shard_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of a shard's boards, values and policy (dtypes, shapes and bytes)."""
    import hashlib

    h = hashlib.sha256()
    for key in ("boards", "values", "policy"):
        a = np.ascontiguousarray(arrays[key])
        h.update(f"{key}:{a.dtype.str}:{a.shape}:".encode())
        h.update(a.tobytes())
    return h.hexdigest()
