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
from ..game.validation import is_number
from ..solvers.sweeping import RoundState

__all__ = ["Checkpointer", "CHECKPOINT_FILE", "DEFAULT_CHECKPOINT_SECONDS"]

#: The file in the checkpoint directory.
CHECKPOINT_FILE = "lean-checkpoint.npz"
#: Seconds between checkpoints by default: 4x8's values (4 GB) take several seconds to write.
DEFAULT_CHECKPOINT_SECONDS = 120.0
#: Values read per slice of a resume (8 MiB): no second copy of 4x8's 4 GB.
READ_SLICE = 2**20


class Checkpointer:
    """Writes and reads the checkpoints of one solve in ``folder``.

    ``game``: what a checkpoint must match to be resumed (the rules, the
    discount, the opponent, the settings that decide the sweeps and the
    number of boards), as JSON-able values.  ``seconds``: the least time
    between two checkpoints (0: one before every greedy sweep)."""

    def __init__(self, folder: str | os.PathLike, game: dict[str, Any], seconds: float) -> None:
        if not isinstance(folder, (str, bytes, os.PathLike)) or not os.fspath(folder):
            raise ValueError(f"checkpoint must be a directory path (str, bytes or os.PathLike), got {folder!r}")
        folder = os.fsdecode(os.fspath(folder))
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise ValueError(f"checkpoint must be a directory, got {folder!r}, which is not one")
        if not (is_number(seconds) and 0 <= seconds < float("inf")):
            raise ValueError(f"checkpoint_seconds must be a number >= 0, got {seconds!r}")
        self.path = os.path.join(folder, CHECKPOINT_FILE)
        self.folder = folder
        self.game = json.loads(json.dumps(game))  # (as it reads back)
        self.seconds = float(seconds)
        self.written = 0
        self._last = time.monotonic()

    def load(self, into: np.ndarray) -> RoundState | None:
        """Read the last checkpoint's values into ``into`` (float64, one per
        board: they must be as many), a slice at a time, and return where
        the solve stood; None where there is no checkpoint.  ``ValueError``
        naming the file and what differs where it is of another solve, and
        where it is damaged (its zip's checksums, its form, values not finite)."""
        if not os.path.exists(self.path):
            return None
        try:
            with zipfile.ZipFile(self.path) as archive:
                with archive.open("meta.npy") as f:
                    meta = json.loads(str(np.lib.format.read_array(f, allow_pickle=False)[()]))
                game = meta["game"]
                for key, value in self.game.items():
                    if game.get(key) != value:
                        raise _OtherSolve(key, game.get(key), value)
                state = _round_state(meta["state"])
                with archive.open("values.npy") as f:
                    _read_values(f, into)
        except _OtherSolve as other:
            raise ValueError(
                f"checkpoint {self.path} is of another solve: its {other.key} is {other.theirs!r}, this solve's "
                f"{other.ours!r} (use another directory)"
            ) from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError, zipfile.BadZipFile) as error:
            raise ValueError(f"checkpoint {self.path}: not a readable checkpoint ({error})") from None
        return state

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


class _OtherSolve(Exception):
    def __init__(self, key: str, theirs: Any, ours: Any) -> None:
        self.key, self.theirs, self.ours = key, theirs, ours


def _round_state(saved: Any) -> RoundState:
    """The saved state, checked for its form (``ValueError`` otherwise)."""
    state = RoundState(**saved)
    if not (
        isinstance(state.residuals, list)
        and all(isinstance(r, float) for r in state.residuals)
        and isinstance(state.evaluations, list)
        and all(isinstance(e, int) and e >= 0 for e in state.evaluations)
        and len(state.evaluations) == len(state.residuals)
        and isinstance(state.missed, int)
        and state.missed >= 0
        and isinstance(state.accelerate, bool)
        and isinstance(state.jumped, bool)
        and (not state.jumped or state.residuals)
    ):
        raise ValueError(f"its state is not one modified policy iteration reaches: {saved!r}")
    return state


def _read_values(f: Any, into: np.ndarray) -> None:
    """Read a .npy member of float64 values into ``into``, a slice at a time, each checked finite."""
    version = np.lib.format.read_magic(f)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"its values are in .npy format {version}, not 1.0 or 2.0")
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read_header(f)
    if shape != into.shape or fortran or dtype != np.dtype("<f8"):
        raise ValueError(f"its values are {shape} {dtype}, not {into.size:,} float64 (one per board)")
    for first in range(0, into.size, READ_SLICE):
        part = into[first : first + READ_SLICE]
        view = part.view(np.uint8).data  # (its bytes: readinto fills them)
        if f.readinto(view) != view.nbytes:
            raise ValueError("its values end early")
        if not np.isfinite(part).all():
            raise ValueError("its values are not all finite")
    if f.read(1):  # (and the zip's checksum is checked at the member's end)
        raise ValueError("its values run on past the boards")
