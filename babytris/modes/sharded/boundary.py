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

    Rows are given as int64 arrays (or a slice for ghosts that follow each
    other); ``layer`` -1 means every layer at once (a whole sweep's values)."""

    def __init__(self, n_shards: int, me: int, layer_of_residue: np.ndarray) -> None:
        self.me, self.layer_of_residue = me, layer_of_residue
        n_layers = len(layer_of_residue)
        self.served: list[np.ndarray] = [np.zeros(0, dtype=np.int64) for _ in range(n_shards)]
        self.served_layers: list[list[np.ndarray]] = [[] for _ in range(n_shards)]
        self.ghosts: list[np.ndarray | slice] = [np.zeros(0, dtype=np.int64) for _ in range(n_shards)]
        self.ghost_layers: list[list[np.ndarray]] = [[] for _ in range(n_shards)]
        self.senders = [0] * n_layers  # (how many shards send each layer's values here)
        self.inbox: dict[tuple[int, int], dict[int, np.ndarray]] = {}  # per (round, layer), per shard
        self.arrivals: dict[tuple[int, int], Any] = {}  # (asyncio events: every sender's values are in)

    def layer(self, boards: np.ndarray) -> np.ndarray:
        """Each board's layer (int64)."""
        return self.layer_of_residue[np.bitwise_count(boards) % len(self.layer_of_residue)]

    def _by_layer(self, rows: np.ndarray, boards: np.ndarray) -> list[np.ndarray]:
        layer = self.layer(boards)
        return [rows[layer == m] for m in range(len(self.layer_of_residue))]

    def serve(self, k: int, rows: np.ndarray, boards: np.ndarray) -> None:
        """Shard ``k`` reads ``boards`` of this one, at ``rows`` here (in the order it asked)."""
        self.served[k], self.served_layers[k] = rows, self._by_layer(rows, boards)

    def ghosts_of(self, k: int, rows: np.ndarray | slice, boards: np.ndarray) -> None:
        """Shard ``k``'s ``boards`` read here are the ghosts at ``rows`` (in the order asked)."""
        listed = np.arange(rows.start, rows.stop, dtype=np.int64) if isinstance(rows, slice) else rows
        self.ghosts[k], self.ghost_layers[k] = rows, self._by_layer(listed, boards)
        self.senders = [sum(len(g[m]) > 0 for g in self.ghost_layers if g) for m in range(len(self.senders))]

    def receive(self, sender: int, values: np.ndarray, index: int, layer: int) -> None:
        """Shard ``sender``'s values of round ``index`` (of ``layer``), for :meth:`take`."""
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
            return np.inf if any(g for g in self.ghost_layers) else 0.0
        news = 0.0
        for k, values in sent.items():
            rows = self.ghosts[k] if layer < 0 else self.ghost_layers[k][layer]
            ghosts = W[rows]
            if len(values):
                news = max(news, float(np.abs(values - ghosts).max()))
            if changes is not None:
                changes[rows] = values - ghosts
            W[rows] = values
        return news

    def send(self, index: int, layer: int, W: np.ndarray, peers: list[Any]) -> tuple[Any, int]:
        """Round ``index``'s boundary values (of ``layer``), copied from ``W``
        now, sent to each shard that reads them (``peers[k].put``).  Returns
        ``(sending, bytes)``: an awaitable done once every shard has them."""
        import asyncio

        parts = self.served if layer < 0 else [p[layer] if p else p for p in self.served_layers]
        sent = [(k, W[rows]) for k, rows in enumerate(parts) if k != self.me and len(rows)]
        sending = asyncio.gather(*(peers[k].put(self.me, values, index, layer) for k, values in sent))
        return sending, sum(values.nbytes for _, values in sent)

    def forget(self) -> None:
        """Drop the values received (a restore goes back to a checkpoint's),
        waking the sweeps that wait for more: they see the restore and stop."""
        for waiting in self.arrivals.values():
            waiting.set()
        self.inbox, self.arrivals = {}, {}
