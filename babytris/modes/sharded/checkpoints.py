"""A shard's checkpoints in the sharded solve (:mod:`babytris.modes.sharded.distributed`):
where its rounds stand, written every few rounds, and what it holds, written
once; read back by the shard itself when the solve goes back to the last
checkpoint, or by a shard made anew on another worker after a worker was lost."""

from __future__ import annotations

import os
from typing import Any, cast

import numpy as np

__all__ = ["ShardCheckpoints", "boards_path"]


def boards_path(folder: str, index: int) -> str:
    """The file of what shard ``index`` holds, in the checkpoints' ``folder`` (written once a solve)."""
    return os.path.join(folder, f"checkpoint-{index}-boards.npz")


class ShardCheckpoints:
    """The checkpoint methods of :class:`~babytris.modes.sharded.shard.Shard`
    (and :class:`~babytris.modes.sharded.lean_shard.LeanShard`, which holds a
    bitmap where a shard holds its boards: :meth:`_held`, :meth:`_take_held`)."""

    index: int
    W: np.ndarray
    boards: np.ndarray
    boards_written: str | None
    snapshots: list[np.ndarray]
    missed: int
    jumped: bool
    last_greedy: float
    accelerate: bool
    news: float
    generation: int
    working: Any
    boundary: Any
    restored: bool
    recorded: bool
    seen: Any

    def _checkpoint(self, path: str) -> None:
        """Write, atomically, all a round needs to go on as if never stopped:
        the values, own and ghosts, the snapshots the rounds jump from and
        the jumps' tallies; and once, beside it, what the shard holds
        (:meth:`_boards_path`: its boards), which a shard rebuilt elsewhere
        reads (:meth:`load_boards`).  (Written as a greedy sweep begins: the
        moves the last one chose are not needed.)"""
        from ...engine.writing import replace_atomically

        boards = self._boards_path(path)
        if self.boards_written != boards:  # (before the values: the last whole checkpoint stays whole)
            replace_atomically(boards, lambda f: np.savez(f, **cast(dict[str, Any], self._held())))
            self.boards_written = boards
        tallies = np.array([self.missed, self.jumped, self.last_greedy, self.accelerate, self.news])
        snapshots, shard = np.array(self.snapshots), np.array([self.index, len(self.W)])
        replace_atomically(path, lambda f: np.savez(f, W=self.W, snapshots=snapshots, tallies=tallies, shard=shard))

    def _boards_path(self, path: str) -> str:
        """The file of what the shard holds, beside its checkpoint at ``path`` (:func:`boards_path`)."""
        return boards_path(os.path.dirname(path), self.index)

    def _held(self) -> dict[str, np.ndarray]:
        """What a rebuilt shard needs to build its table again: its boards."""
        return {"boards": self.boards}

    async def restore(self, path: str, epoch: int) -> None:
        """Go back to the checkpoint at ``path`` (:meth:`_checkpoint`): the next
        round runs its sweeps from there; ``epoch``: the restores so far (the
        values a given-up round still sends are dropped).  A round still
        running here (the client gave it up when a worker was lost) sees the
        restore as its work in a thread ends, and changes nothing more: the
        restore waits for that work, and any it started meanwhile."""
        import asyncio

        self.generation += 1  # (first: the given-up round stops as soon as its thread's work ends)
        while self.working is not None and not self.working.done():
            await asyncio.wait([self.working])
        with np.load(path, allow_pickle=False) as data:
            if data["shard"].tolist() != [self.index, len(self.W)]:
                raise ValueError(f"shard {self.index}: {path!r} is another shard's checkpoint")
            self.W[:] = data["W"]
            self.snapshots = list(data["snapshots"])
            missed, jumped, self.last_greedy, accelerate, self.news = data["tallies"].tolist()
        self.missed, self.jumped, self.accelerate = int(missed), bool(jumped), bool(accelerate)
        self.boundary.forget(epoch)
        self.restored, self.recorded = True, False

    def load_boards(self, path: str) -> None:
        """Take what the shard held from beside its checkpoint at ``path``
        (:meth:`_boards_path`): a shard rebuilt on another worker, whose
        search is not run again."""
        with np.load(self._boards_path(path), allow_pickle=False) as data:
            self._take_held(data)

    def _take_held(self, data: Any) -> None:
        """:meth:`_held`'s arrays, read back."""
        self.boards = data["boards"]
        self.seen = None  # (not searched)
