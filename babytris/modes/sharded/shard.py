"""One shard of the sharded solve (:mod:`babytris.modes.sharded.distributed`, whose
notes give the algorithm): a dask actor holding its boards, its move table over
them and its ghosts, and its values; it searches, builds, sweeps by modified
policy iteration (the single solve's compiled sweeps and evaluation,
:func:`~babytris.solvers.sweeping.evaluate_policy`), sends boards and values
straight to the other shards, checkpoints, and answers lookups."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from ...engine._moves import placement_numbers
from ...engine.placements import engine
from ...engine.transitions import layers
from ...game.rules import Rules
from ...solvers import _greedy, _sweep
from ...solvers.roles import PIECES_RANDOM
from ...solvers.sweeping import MAX_MISSED_JUMPS, ThreadTuner, _jump_along, evaluate_policy
from . import _lean_shard, _shard, owners
from .board_ranks import MAX_BITMAP_CELLS, BoardRanks
from .boundary import Boundary
from .checkpoints import ShardCheckpoints

__all__ = ["Shard", "largest_size", "shard_digest", "ROUND_PERIOD"]

#: The rounds' error turns round over this many rounds (two shards reading each other's
#: values of the round before: block Jacobi), so their jumps go along the change over as many.
ROUND_PERIOD = 2


class Shard(ShardCheckpoints):
    """The boards one shard owns, their move table and values; a dask actor
    (``client.submit(Shard, ..., actor=True)``), so the arrays stay on its
    worker and only what other shards need travels.  The methods are the
    steps of :func:`solve_sharded`, called in its order."""

    def __init__(self, rules: Rules, index: int, n_shards: int, split: str, n_threads: int = 1) -> None:
        """``n_threads``: the threads of the compiled loops; ``-m``: this machine's cores over ``m``
        (the shards on it), at least 1."""
        self.rules, self.index, self.n_shards, self.split = rules, index, n_shards, split
        self.n_threads = n_threads if n_threads > 0 else max(1, (os.cpu_count() or 1) // -n_threads)
        self.threads_asked = n_threads > 0  # (else one shard searches on the idle ones: enumerate_alone)
        self.engine = engine(rules)
        self.layer_of_residue = layers(rules)  # (a board's layer by its cells: the sweeps' and the exchange's)
        self.boundary = Boundary(n_shards, index, self.layer_of_residue)
        self.boards = np.zeros(0, dtype=np.uint64)  # by layer (the engine's), ascending within each once built
        self.runs = np.array([0, 0], dtype=np.int64)  # (those layers' starts)
        self.frontier = np.zeros(0, dtype=np.uint64)
        self.boards_written: str | None = None  # (the file of its boards beside its checkpoints, once written)

    def connect(self, peers: list[Any]) -> None:
        """Keep the handles of every shard (``peers[k]``: shard k's actor) to
        send them boards and values directly, worker to worker."""
        self.peers = peers
        self.seen: np.ndarray | None = None  # (the search's bitmaps: _search_marks)
        self.todo: np.ndarray | None = None
        self.ghosts: list[np.ndarray] = []  # (the search's: the other shards' boards found here)
        self.moves_found = 0  # (the search's: the moves of the boards it expanded)
        self.offers: list[np.ndarray] = []  # boards found by the shards, owned here
        self.asked: dict[int, np.ndarray] = {}  # per shard, the boards of this one it reads

    # --- the search ---------------------------------------------------------------------------

    async def offer(self, sender: int, boards: np.ndarray) -> None:
        """Receive boards (uint64) shard ``sender`` found, owned here, for :meth:`receive`.
        (A coroutine, as :meth:`put`.)"""
        self.offers.append(boards)

    def _search_marks(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The search's bitmaps (the lean shards'), made on first use, up to :data:`MAX_BITMAP_CELLS` cells:
        a bit a possible board for the boards found here, own and ghosts (each sent to its owner once),
        and one for those waiting (at 4x7 two exchanges, where breadth first took 37 levels)."""
        cells = self.rules.width * self.rules.height
        if cells > MAX_BITMAP_CELLS:
            return None
        if self.seen is None or self.todo is None:
            self.seen = np.zeros(max(1, (1 << cells) >> 6), dtype=np.uint64)
            self.todo = np.zeros_like(self.seen)
        return self.seen, self.todo

    def receive(self) -> int:
        """Keep the boards offered not seen yet to expand next; returns how many are new."""
        offered = np.concatenate([np.zeros(0, dtype=np.uint64), *self.offers])
        self.offers = []
        marks = self._search_marks()
        if marks is not None:  # (the boards themselves listed from it as the table is built)
            return int(_lean_shard.mark(*marks, offered))
        found = owners.distinct(offered)
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
        """The boards the search finds (:meth:`_expand`), each sent to the shard
        that owns it; returns the bytes sent to other shards."""
        import asyncio

        found = await asyncio.to_thread(self._expand)
        self.offers.append(found[self.index])
        others = [(k, boards) for k, boards in enumerate(found) if k != self.index and len(boards)]
        await asyncio.gather(*(self.peers[k].offer(self.index, boards) for k, boards in others))
        return sum(boards.nbytes for _, boards in others)

    def _expand(self) -> list[np.ndarray]:
        """The boards after every move of the frontier: per shard, the distinct ones it owns (uint64).
        With the search's bitmaps, every board waiting and those found here after it, until none
        waits (one thread): per shard, its boards found here not sent before (none of this one's)."""
        marks = self._search_marks()
        if marks is not None:
            key, table = (
                owners.key_mask(self.split, self.rules.width),
                owners.owner_table(self.rules, self.n_shards, self.split),
            )
            ghosts, moves, _ = _lean_shard.expand(self.engine, *marks, key, table, self.n_shards, self.index)
            self.ghosts.append(ghosts)
            self.moves_found += moves
            owner = owners.shard_of(ghosts, self.n_shards, self.split, self.rules)
            return [ghosts[owner == k] for k in range(self.n_shards)]
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
        """Receive the boards of this shard that shard ``sender`` reads (uint64, grouped by layer,
        ascending within each), for :meth:`serve`."""
        self.asked[sender] = wanted

    def enumerate_alone(self) -> int:
        """The one shard's boards and table: the single solve's own search and
        table (:func:`~babytris.engine.enumeration.enumerate_boards`, the engine's
        compiled kernel on ``n_threads`` threads, or where they were not asked
        those of them other processes leave idle, as the single solve's default:
        threads that wait at every barrier for a busy core took 27 s at 4x7, load
        6), kept for :meth:`build`; the boards in the engine's order (by layer,
        ascending within one).  Returns the boards."""
        from ...engine import enumeration, resources

        threads = self.n_threads if self.threads_asked else resources.idle_cores(self.n_threads)
        self.table = enumeration.enumerate_boards(self.rules, n_jobs=threads)
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
        read (uint64, grouped by layer, ascending within each; none of its own)."""
        self.pieces = pieces
        if self.n_shards == 1:  # (its sweeps are the single solve's, set up as it runs: solve_alone)
            if not hasattr(self, "table"):
                self.enumerate_alone()
            t = self.table
            self.offsets, self.next_board, self.lines = t.offsets, t.next_board, t.lines
            self.moves_at_home = t.n_moves
            self.eval_sweeps = eval_sweeps
            return [np.zeros(0, dtype=np.uint64)]
        rules = self.rules
        P = rules.n_pieces
        cells = rules.width * rules.height
        seen, words, n_moves = getattr(self, "seen", None), None, -1
        if seen is not None:  # (the search's boards, ascending: its bitmap without the ghosts, ranked as it is)
            _shard.unmark(seen, np.concatenate([np.zeros(0, dtype=np.uint64), *self.ghosts]))
            self.boards, words, n_moves = _shard.listed(seen), seen, self.moves_found
            self.seen = self.todo = None
            self.ghosts, self.frontier = [], np.zeros(0, dtype=np.uint64)
        # (rows numbered layer after layer, as the engine numbers them: a layer's sweep then reads and writes
        # one stretch of the values and the moves; ranked, 4x6's evaluation sweeps took 4.8 times as long)
        boards = self.boards if words is not None else np.sort(self.boards)  # (a rebuilt shard's: by layer)
        ranks = BoardRanks(boards, cells, self.layer_of_residue, words)
        self.boards, self.runs = ranks.rowed, ranks.layer_starts
        n = len(self.boards)
        offsets, nxt, away, after, owner = self._table(cells, ranks, n_moves)
        self.moves_at_home = len(nxt) - len(away)
        needs: list[np.ndarray] = []
        base = n
        for k in range(self.n_shards):
            mine = owner == k
            wanted = np.zeros(0, dtype=np.uint64)
            if k != self.index:  # (a binary search: the ghosts are a few percent of the boards)
                wanted = owners.distinct(after[mine])
                order = self.boundary.by_layer(wanted)  # (the ghosts' rows grouped by layer, as sent)
                row_of_rank = np.empty(len(wanted), dtype=np.int64)
                row_of_rank[order] = np.arange(len(wanted))
                nxt[away[mine]] = base + row_of_rank[np.searchsorted(wanted, after[mine])]
                wanted = wanted[order]
            needs.append(wanted)
            base += len(wanted)
        self.ghost_starts = np.cumsum([n] + [len(w) for w in needs])
        n_rows = base
        if n_rows > np.iinfo(np.int32).max:
            raise ValueError(f"shard {self.index}: {n_rows:,} boards and ghosts, more than a table's int32 rows")
        # (the ghosts' rows, without moves: realloc maps the new pages alone; no view of the fresh offsets
        # exists, a profiler's reference to them is not one)
        offsets.resize(n_rows * P + 1, refcheck=False)
        offsets[n * P + 1 :] = offsets[n * P]
        self.offsets = offsets
        self.next_board = nxt
        order, starts = self._order()
        self._sweeps_over(n_rows, order, starts, len(starts) > 2, pieces, discount)
        self.eval_sweeps = eval_sweeps
        self.accelerate = accelerate and self.linear
        return needs

    def _table(
        self, cells: int, ranks: BoardRanks, n_moves: int = -1
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every move of the shard's boards, each move's row found where the
        board after is its own (``ranks``'s, layer after layer): the compiled
        pass (``_shard.table``, its bitmap; one pass where the search counted
        the moves, ``n_moves``), the boards after the others found again
        (``_shard.away_moves``), up to :data:`MAX_BITMAP_CELLS` cells; numpy's
        lookups beyond.

        Returns:
            ``(offsets, rows, away, after, owner)``: the table's offsets
            (int32), the int32 rows per move (set for its own boards
            only), the moves to other shards' boards (int64 indices,
            ascending), the boards after them (uint64) and the shard owning
            each (int64).
        """
        rules = self.rules
        if cells <= MAX_BITMAP_CELLS:
            key, table = owners.key_mask(self.split, rules.width), owners.owner_table(rules, self.n_shards, self.split)
            offsets, rows, self.lines, self.placement = _shard.table(
                self.engine,
                self.boards,
                ranks.words,
                ranks.before,
                ranks.masks,
                ranks.layer_of_residue,
                key,
                table,
                self.n_shards,
                self.index,
                self.n_threads,
                n_moves=n_moves,
            )
            away, after = _shard.away_moves(self.engine, self.boards, offsets, rows)
            if np.any(rows[away] == -2):
                raise ValueError(f"shard {self.index}: a move leads to a board of its own it does not hold")
            return offsets, rows, away, after, owners.shard_of(after, self.n_shards, self.split, rules)
        offsets, after, self.lines, self.placement = _shard.expand(self.engine, self.boards, self.n_threads)
        owner = owners.shard_of(after, self.n_shards, self.split, rules)
        home = owner == self.index
        rows = np.full(len(after), -1, dtype=np.int32)
        rows[home] = ranks.index(after[home])
        away = np.flatnonzero(~home)
        return offsets, rows, away, after[away], owner[away]

    def _sweeps_over(
        self, n_rows: int, order: np.ndarray, starts: np.ndarray, independent: bool, pieces: int, discount: float
    ) -> None:
        """The board values (0), the compiled sweeper over ``n_rows`` rows (own
        boards then ghosts) in ``order`` by layers ``starts``, and the jumps'
        tallies.  The sweeps keep board values alone and each state's chosen
        move in the sweeper's cache (5 bytes a state), as the single solve
        does above :data:`~babytris.solvers.sweep_arrays.BOARD_VALUES_ONLY_STATES`
        states: the evaluation sweeps read the cache, not the table; the
        state values and moves are written once, as the rounds end
        (:meth:`close_rounds`)."""
        rules = self.rules
        self.scores, self.discount = np.asarray(rules.line_scores, dtype=np.float64), discount
        self.W = np.zeros(n_rows)
        self.sweeper = _sweep.Sweeper(
            self.offsets,
            self.next_board,
            self.lines,
            self.scores,
            np.asarray(rules.probabilities, dtype=np.float64),
            discount,
            None,
            self.W,
            None,
            order,
            starts,
            pieces=pieces,
            independent_layers=independent,
            n_threads=self.n_threads,
        )
        self.tuned = ThreadTuner(self.sweeper, self.n_threads, self.W.nbytes + 5 * len(self.offsets))
        self.linear = pieces == PIECES_RANDOM
        # (a jump's direction; the ghosts' are their owners' recorded ones, see _take_ghosts)
        self.changes = np.zeros(n_rows, dtype=np.float32)
        self.recorded = False  # (whether the last sweep recorded its changes: exchange="sweep")
        self.missed, self.jumped, self.last_greedy = 0, False, np.inf
        self.snapshots: list[np.ndarray] = []  # (the values as the last rounds began, for the rounds' jumps)
        self.news, self.restored = 0.0, False
        self.generation = 0  # (restores so far)
        self.working: Any = None  # (the work running in a thread: an asyncio future)

    def _order(self) -> tuple[np.ndarray, np.ndarray]:
        """The own boards that have a move in the order the whole game's sweeps
        take them (:func:`babytris.engine.transitions.sweep_order`): layer by
        layer, ascending within each, or with one layer from the largest board
        down.  Returns int32 rows and int64 layer starts."""
        order, starts = _shard.live_by_layer(self.offsets, self.boards, self.rules.n_pieces, self.layer_of_residue)
        return (order[::-1].copy(), starts) if len(starts) == 2 else (order, starts)

    def size(self) -> tuple[int, int]:
        """``(boards, moves)`` of the shard's table."""
        return len(self.boards), len(self.next_board)

    def rows_and_ghosts(self) -> tuple[int, int]:
        """``(rows, ghosts)`` of the shard's table (its boards and ghosts, and the ghosts), after :meth:`build`."""
        rows = len(self.W) if self.n_shards > 1 else len(self.boards)
        return rows, rows - len(self.boards)

    def at_home(self) -> int:
        """The moves that lead to a board of this shard."""
        return self.moves_at_home

    def serve(self) -> None:
        """Note, per shard that asked (:meth:`ask`), where the boards it reads
        are here (this shard's boundary with it), and where its ghosts are."""
        for k, wanted in self.asked.items():
            self.boundary.serve(k, self._rows_asked(k, wanted), wanted)
        self.asked = {}
        for k, wanted in enumerate(self.needs):
            if k != self.index:
                self.boundary.ghosts_of(k, self._ghost_rows(k), wanted)

    def _rows_asked(self, k: int, wanted: np.ndarray) -> np.ndarray:
        """The rows of the boards shard ``k`` asked for (int64, in its order)."""
        found, at = self._find(wanted)
        if not found.all():
            raise ValueError(f"shard {self.index}: shard {k} asked for boards it does not hold")
        return at

    def _find(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(found, rows)``: whether each of ``boards`` is this shard's, and its row (int64) where it is."""
        found, rows = np.zeros(len(boards), dtype=bool), np.zeros(len(boards), dtype=np.int64)
        for a, b in zip(self.runs[:-1], self.runs[1:]):
            at = np.minimum(a + np.searchsorted(self.boards[a:b], boards), b - 1)
            here = ~found & (self.boards[at] == boards) if b > a else np.zeros(len(boards), dtype=bool)
            found |= here
            rows[here] = at[here]
        return found, rows

    def _ghost_rows(self, k: int) -> np.ndarray | slice:
        """The rows of shard ``k``'s ghosts here, in the order asked (a slice: they follow each other)."""
        return slice(int(self.ghost_starts[k]), int(self.ghost_starts[k + 1]))

    # --- the rounds ---------------------------------------------------------------------------

    async def put(self, sender: int, values: np.ndarray, index: int, layer: int = -1, epoch: int = 0) -> None:
        """Receive shard ``sender``'s values of the boards read here (in the
        order asked) from round ``index``, of one ``layer`` of them (-1:
        all), for the next round or (a layer's) the next layer's sweep;
        ``epoch``: the restores the sender had seen (a given-up round's
        values are dropped).  (A coroutine: it runs on the worker's event
        loop, never queued behind a round's sweeps.)"""
        self.boundary.receive(sender, values, index, layer, epoch)

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
        sending, sent = self._send(index)
        await sending
        return (*swept, sent)

    def _send(self, index: int, layer: int = -1) -> tuple[Any, int]:
        """Round ``index``'s boundary values (of one ``layer``; -1: all), sent
        straight to each shard that reads them: ``(sending, bytes)``
        (:meth:`Boundary.send <babytris.modes.sharded.boundary.Boundary.send>`)."""
        return self.boundary.send(index, layer, self.W, self.peers)

    async def step(
        self, index: int, greedy: bool, jump: float, record: bool, checkpoint: str | None = None, by_layer: bool = False
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

        ``by_layer`` (``exchange="layer"``): the sweep runs layer by layer,
        and each layer's boundary is sent as soon as it is swept; a layer
        waits for the values of the layer before it (the one its moves
        lead to) from every shard it reads, so its ghosts are as fresh as
        the single solve's own boards: the shards together run the single
        solve's sweep, value for value.

        Returns:
            ``(residual, greedy sweeps, evaluation sweeps, bytes sent)``.
        """
        generation = self.generation
        last = len(self.layer_of_residue) - 1 if by_layer else -1
        if self.restored:
            self.restored = False
        else:
            self._take_ghosts(index - 1, last)
            if checkpoint is not None:
                await self._in_thread(self._checkpoint, checkpoint)
        if generation != self.generation:  # (restored meanwhile: the client gave this round up)
            return np.inf, 0, 0, 0
        swept = await self._sweep_and_send(index, greedy, jump, record, by_layer, generation)
        return swept if generation == self.generation else (np.inf, 0, 0, 0)

    async def _sweep_and_send(
        self, index: int, greedy: bool, jump: float, record: bool, by_layer: bool, generation: int
    ) -> tuple[float, int, int, int]:
        """:meth:`step`'s sweep and its boundary sent: whole, or layer by
        layer (``by_layer``), each layer's boundary sent once it is swept and
        each layer first taking the ghosts of the one before; stops where a
        restore (``generation`` passed) gave the round up.  Returns
        ``(residual, greedy sweeps, evaluation sweeps, bytes sent)``."""
        import asyncio
        from functools import partial

        self.recorded = record and not greedy
        if jump and not greedy:  # (the ghosts too, along their owners' changes: they stay their owners' values)
            await self._in_thread(_jump_along, jump, self.W, self.changes)
        changes = self.changes if self.recorded else None
        sweeper = cast(Any, self.tuned.sweeper)  # (a layer's sweep: timed as its own kind)
        residual, sendings, sent = 0.0, [], 0
        for layer in range(len(self.layer_of_residue)) if by_layer else [-1]:
            if layer > 0:
                await self.boundary.wait(index, layer - 1)
                if generation != self.generation:
                    break
                self._take_ghosts(index, layer - 1)
            if layer < 0:
                work = self.tuned.greedy_sweep if greedy else partial(self.tuned.evaluation_sweep, changes)
            elif greedy:
                work = partial(self.tuned.timed, f"greedy-{layer}", partial(sweeper.greedy_sweep, layer=layer))
            else:
                work = partial(
                    self.tuned.timed, f"evaluation-{layer}", partial(sweeper.evaluation_sweep, changes, layer=layer)
                )
            swept = await self._in_thread(work)
            if generation != self.generation:
                break
            residual = max(residual, swept)
            sending, size = self._send(index, layer)
            sendings.append(sending)
            sent += size
        await asyncio.gather(*sendings)
        return residual, int(greedy), int(not greedy), sent

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

    async def _in_thread(self, work: Callable, *args: Any) -> Any:
        """``work(*args)`` in a thread (the event loop goes on), noted for :meth:`restore` to wait for."""
        import asyncio

        self.working = working = asyncio.ensure_future(asyncio.to_thread(work, *args))
        return await working

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

    def _take_ghosts(self, index: int, layer: int = -1) -> float:
        """The ghosts' values sent in round ``index`` (none before the first),
        of one ``layer`` (-1: all of them, sent together); a sweep recording
        its changes records theirs, their owners'.  Returns their largest
        change (inf in the first round of a shard with ghosts)."""
        return self.boundary.take(index, layer, self.W, self.changes if self.recorded else None)

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

    def close_rounds(self, index: int, layer: int = -1) -> float:
        """End the rounds: the ghosts' last values (sent in round ``index``, the
        last; of its last ``layer`` where the rounds exchange by layer), then
        the own states' values and best moves from the board values as they
        stand (one backup, :func:`babytris.solvers._greedy.state_values`, as
        the single solve writes them where it kept board values alone); the
        sweeper and its cache are freed.  Returns the largest |value| of the
        shard's states (0 if none), for the tie slack."""
        if self.n_shards > 1:  # (else solve_alone wrote its values and moves as the single solve does)
            self._take_ghosts(index, layer)
            del self.sweeper, self.tuned, self.changes
            n, P = len(self.boards), self.rules.n_pieces
            self.V, self.policy = np.zeros(n * P), np.empty(n * P, dtype=np.int16)
            _greedy.state_values(*self._backup_table(), self.V, policy=self.policy, n_threads=self.n_threads)
        return largest_size(self.V)

    def _backup_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
        """The own states' moves, the scores, the values they lead to and the discount, as
        :mod:`babytris.solvers._greedy`'s passes take them."""
        n, P = len(self.boards), self.rules.n_pieces
        return self.offsets[: n * P + 1], self.next_board, self.lines, self.scores, self.W, self.discount

    def settle(self, slack: float) -> None:
        """Keep each state's move the first within ``slack`` of its best, as
        :class:`~babytris.Solution` breaks ties, as its placement number (after
        :meth:`close_rounds`)."""
        if self.n_shards == 1:  # (solve_alone settled its moves as the single solve does)
            return
        table = self._backup_table()
        _greedy.first_best_moves(*table, self.policy, slack, best=self.V, n_threads=self.n_threads)
        self.chosen = placement_numbers(table[0], self.placement, self.policy)

    def lookup(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(found, values, policy)`` of ``boards`` (uint64, owned here): bool
        ``(m,)``, the states' values (float64) and placement numbers (int16,
        -1 at game over) ``(m, P)``; after :meth:`settle`."""
        P = self.rules.n_pieces
        found, rows = self._find(boards)
        states = rows[:, None] * P + np.arange(P)
        return found, self.V[states], self.chosen[states]

    def save(self, path: str) -> tuple[int, str]:
        """Write the shard's boards, values and moves (after :meth:`settle`) to
        ``path`` (.npz, atomically); returns the bytes written and the arrays' SHA-256."""
        from ...engine.writing import replace_atomically

        n, P = len(self.boards), self.rules.n_pieces
        arrays: dict[str, np.ndarray] = {"boards": self.boards, "values": self.V[: n * P], "policy": self.chosen}
        if len(self.runs) > 2:  # (a file's boards ascend: the runs merged)
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
            "next_bits": np.concatenate([self.boards, *self.needs])[self.next_board],  # (own boards', then ghosts')
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


def largest_size(values: np.ndarray) -> float:
    """The largest |value| of ``values`` (0 if none), without a temporary of their size
    (``np.abs(W)`` of a lean 4x8 shard's values was its worker's peak: 1 GB more)."""
    return abs(float(max(values.max(initial=0.0), -values.min(initial=0.0))))


def shard_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of a shard's boards, values and policy (dtypes, shapes and bytes)."""
    import hashlib

    h = hashlib.sha256()
    for key in ("boards", "values", "policy"):
        a = np.ascontiguousarray(arrays[key])
        h.update(f"{key}:{a.dtype.str}:{a.shape}:".encode())
        h.update(a.tobytes())
    return h.hexdigest()
