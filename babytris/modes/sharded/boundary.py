"""What one shard of the sharded solve (:mod:`babytris.modes.sharded.distributed`)
exchanges with the others: the rows of its boards each other shard reads (its
boundary with it), the rows of its *ghosts* (the others' boards its moves lead
to), whole and layer by layer, and the values received, by round and layer,
with the events a layer's sweep waits on."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Boundary"]


class Boundary:
    """Shard ``me``'s boundary with the other ``n_shards - 1``; a board's layer
    is ``layer_of_residue[its cells % len(layer_of_residue)]``, as the sweeps number them.

    Each list of boards one shard reads of another (asked and served in the
    same order) is grouped by layer, ascending within each, so a layer's
    part of it is a stretch (``cuts``); rows are given as int64 arrays, or a
    slice for ghosts that follow each other.  ``layer`` -1 means every layer
    at once (a whole sweep's values)."""

    def __init__(self, n_shards: int, me: int, layer_of_residue: np.ndarray) -> None:
        self.me, self.layer_of_residue = me, layer_of_residue
        self.n_layers = n_layers = int(layer_of_residue.max()) + 1
        none = np.zeros(n_layers + 1, dtype=np.int64)
        self.served: list[np.ndarray] = [np.zeros(0, dtype=np.int64) for _ in range(n_shards)]
        self.served_cuts = [none] * n_shards
        self.ghosts: list[np.ndarray | slice] = [np.zeros(0, dtype=np.int64) for _ in range(n_shards)]
        self.ghost_cuts = [none] * n_shards
        self.senders = [0] * n_layers  # (how many shards send each layer's values here)
        self.inbox: dict[tuple[int, int], dict[int, np.ndarray]] = {}  # per (round, layer), per shard
        self.arrivals: dict[tuple[int, int], Any] = {}  # (asyncio events: every sender's values are in)
        self.buffers: dict[tuple[int, int], np.ndarray] = {}  # per (reader, round's parity), the values sent
        self.epoch = 0  # (the restores so far, as the client counts them: a given-up round's values are dropped)

    def layer(self, boards: np.ndarray) -> np.ndarray:
        """Each board's layer (int8: a byte a board, where a lean shard lists millions of ghosts)."""
        return self.layer_of_residue.astype(np.int8)[np.bitwise_count(boards) % len(self.layer_of_residue)]

    def by_layer(self, boards: np.ndarray) -> np.ndarray:
        """The order (int64) that groups ``boards`` by layer, keeping their order within each: a
        list of boards one shard reads of another is asked, served and sent in it."""
        return np.argsort(self.layer(boards), kind="stable")

    def _cuts(self, boards: np.ndarray) -> np.ndarray:
        layer = self.layer(boards)
        if np.any(layer[1:] < layer[:-1]):
            raise ValueError(f"shard {self.me}: boards read between shards must be grouped by layer")
        return np.searchsorted(layer, np.arange(self.n_layers + 1))

    def serve(self, k: int, rows: np.ndarray, boards: np.ndarray) -> None:
        """Shard ``k`` reads ``boards`` of this one (grouped by layer), at ``rows`` here."""
        self.served[k], self.served_cuts[k] = rows, self._cuts(boards)
        self.buffers.pop((k, 0), None)
        self.buffers.pop((k, 1), None)

    def ghosts_of(self, k: int, rows: np.ndarray | slice, boards: np.ndarray) -> None:
        """Shard ``k``'s ``boards`` read here (grouped by layer) are the ghosts at ``rows``."""
        self.ghosts[k], self.ghost_cuts[k] = rows, self._cuts(boards)
        self.senders = [sum(c[m + 1] > c[m] for c in self.ghost_cuts) for m in range(self.n_layers)]

    @staticmethod
    def _part(rows: np.ndarray | slice, cuts: np.ndarray, layer: int) -> np.ndarray | slice:
        """The stretch of ``rows`` in ``layer`` (all of them for -1)."""
        if layer < 0:
            return rows
        if isinstance(rows, slice):
            return slice(rows.start + int(cuts[layer]), rows.start + int(cuts[layer + 1]))
        return rows[cuts[layer] : cuts[layer + 1]]

    def receive(self, sender: int, values: np.ndarray, index: int, layer: int, epoch: int) -> None:
        """Shard ``sender``'s values of round ``index`` (of ``layer``), for
        :meth:`take`; dropped if sent before the last restore (``epoch``: the
        restores the sender had seen), by a round the client gave up."""
        if epoch != self.epoch:
            return
        sent = self.inbox.setdefault((index, layer), {})
        sent[sender] = values
        if layer >= 0 and len(sent) == self.senders[layer]:
            self._arrival(index, layer).set()

    def _arrival(self, index: int, layer: int) -> Any:
        import asyncio

        return self.arrivals.setdefault((index, layer), asyncio.Event())

    async def wait(self, index: int, layer: int) -> None:
        """Until every shard sending ``layer``'s values of round ``index`` has sent them (or :meth:`forget`)."""
        if self.senders[layer]:
            await self._arrival(index, layer).wait()

    def take(self, index: int, layer: int, W: np.ndarray, changes: np.ndarray | None) -> float:
        """Write the ghosts' values received in round ``index`` (of ``layer``;
        none before the first round) into ``W``, and into ``changes``, if
        given, each one's change (its owner's in a sweep that recorded its
        own).  Returns their largest change (inf before the first round
        where there are ghosts: their values are not known yet)."""
        sent = self.inbox.pop((index, layer), {})
        self.arrivals.pop((index, layer), None)
        self.inbox = {key: values for key, values in self.inbox.items() if key > (index, layer)}
        if index < 0:
            return np.inf if any(c[-1] for c in self.ghost_cuts) else 0.0
        news = 0.0
        for k, values in sent.items():
            rows = self._part(self.ghosts[k], self.ghost_cuts[k], layer)
            change = values - W[rows]
            if changes is not None:
                changes[rows] = change
            if len(values):
                news = max(news, float(np.abs(change, out=change).max()))
            W[rows] = values
        return news

    def send(self, index: int, layer: int, W: np.ndarray, peers: list[Any]) -> tuple[Any, int]:
        """Round ``index``'s boundary values (of ``layer``), copied from ``W``
        now, sent to each shard that reads them (``peers[k].put``).  Returns
        ``(sending, bytes)``: an awaitable done once every shard has them."""
        import asyncio

        sent = []
        for k, (rows, cuts) in enumerate(zip(self.served, self.served_cuts)):
            if k == self.me or not len(rows):
                continue
            # (into one of two buffers a reader, by the round's parity: the copies sent were kept alive
            # after the reader's put returned, up to 20 rounds of them on a worker; a round's values are
            # read by the next round's start, before the buffer comes round again)
            if (k, index % 2) not in self.buffers:
                self.buffers[k, index % 2] = np.empty(len(rows))
            a, b = (0, len(rows)) if layer < 0 else (int(cuts[layer]), int(cuts[layer + 1]))
            if b > a:  # (mode "clip": no buffered copy; the rows were checked as they were asked)
                sent.append((k, np.take(W, rows[a:b], out=self.buffers[k, index % 2][a:b], mode="clip")))
        sending = asyncio.gather(*(peers[k].put(self.me, values, index, layer, self.epoch) for k, values in sent))
        return sending, sum(values.nbytes for _, values in sent)

    def forget(self, epoch: int) -> None:
        """Drop the values received (a restore goes back to a checkpoint's) and
        any sent before it (``epoch``: the restores so far), waking the sweeps
        that wait for more: they see the restore and stop."""
        for waiting in self.arrivals.values():
            waiting.set()
        self.inbox, self.arrivals, self.epoch = {}, {}, epoch
