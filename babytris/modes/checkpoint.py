"""Checkpoints of a long lean solve (``solve_lean(checkpoint=DIR)``, ``babytris
solve --checkpoint DIR``): the board values and where modified policy
iteration stands, written atomically between rounds, so that a solve started
again with the same directory goes on from the last one and ends with the
values an uninterrupted solve ends with.

Only the values are written, not the moves the last greedy sweep kept: a
checkpoint is taken before a greedy sweep, which keeps them afresh (at 4x8
that saves writing 1 to 5 GB each time).  A checkpoint's values are a start,
not a claim: the sweeps after it converge from any finite values, and the
solve's error bound comes from its own last sweep; so a damaged file can cost
sweeps but not correctness, and what it must match (the game, the settings,
the number of boards) is checked before it is used.
"""

from __future__ import annotations

import json
import os
import time
import zipfile
from dataclasses import asdict
from typing import Any

import numpy as np

from ..engine.writing import replace_atomically
from ..solvers.sweeping import RoundState

__all__ = ["Checkpointer", "CHECKPOINT_FILE", "DEFAULT_CHECKPOINT_SECONDS"]

#: The file in the checkpoint directory.
CHECKPOINT_FILE = "lean-checkpoint.npz"
#: Seconds between checkpoints by default: 4x8's values (4 GB) take several seconds to write.
DEFAULT_CHECKPOINT_SECONDS = 120.0


class Checkpointer:
    """Writes and reads the checkpoints of one solve in ``folder``.

    ``game``: what a checkpoint must match to be resumed (the rules, the
    discount, the opponent, the settings that decide the sweeps and the
    number of boards), as JSON-able values.  ``seconds``: the least time
    between two checkpoints (0: one before every greedy sweep)."""

    def __init__(self, folder: str | os.PathLike, game: dict[str, Any], seconds: float) -> None:
        folder = os.fspath(folder)
        if not isinstance(folder, str) or not folder:
            raise ValueError(f"checkpoint must be a directory path, got {folder!r}")
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise ValueError(f"checkpoint must be a directory, got {folder!r}, which is not one")
        if not (isinstance(seconds, (int, float)) and 0 <= seconds < float("inf")):
            raise ValueError(f"checkpoint_seconds must be a number >= 0, got {seconds!r}")
        self.path = os.path.join(folder, CHECKPOINT_FILE)
        self.folder = folder
        self.game = json.loads(json.dumps(game))  # (as it reads back)
        self.seconds = float(seconds)
        self.written = 0
        self._last = time.monotonic()

    def load(self, n_boards: int) -> tuple[np.ndarray, RoundState] | None:
        """The values (float64, ``(n_boards,)``) and the state of the last
        checkpoint, or None where there is none; ``ValueError`` naming the
        file and what differs where it is of another solve or damaged."""
        if not os.path.exists(self.path):
            return None
        try:
            with np.load(self.path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"][()]))
                values = np.array(data["values"], dtype=np.float64)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError) as error:
            raise ValueError(f"checkpoint {self.path}: not a readable checkpoint ({error})") from None
        for key, value in self.game.items():
            if meta.get("game", {}).get(key) != value:
                raise ValueError(
                    f"checkpoint {self.path} is of another solve: its {key} is {meta.get('game', {}).get(key)!r}, "
                    f"this solve's {value!r} (use another directory, or remove it)"
                )
        if values.shape != (n_boards,) or not np.isfinite(values).all():
            raise ValueError(f"checkpoint {self.path}: its values are not {n_boards:,} finite numbers")
        state = RoundState(**meta["state"])
        return values, state

    def __call__(self, values: np.ndarray, state: RoundState) -> None:
        """Write a checkpoint of ``values`` and ``state`` if :attr:`seconds`
        have passed since the last one (or since the solve began)."""
        if time.monotonic() - self._last < self.seconds:
            return
        os.makedirs(self.folder, exist_ok=True)
        meta = json.dumps({"game": self.game, "state": asdict(state)})
        replace_atomically(
            self.path,
            lambda f: np.savez(f, values=values, meta=np.array(meta)),
            field="checkpoint",
        )
        self.written += 1
        self._last = time.monotonic()
