"""A lean solution written to a file: the format and :func:`save_lean`.

The file holds what cannot be recomputed cheaply and nothing else: the
reachable boards as the lean mode's bitmap (one bit per possible board:
512 MiB at 4x8), one float64 value per reachable board (4 GB at 4x8's half
a billion boards), the greedy sweeps' residuals, and the settings as JSON,
with a SHA-256 digest of each (:func:`array_digest`, the digests
:func:`babytris.results.saving.digests` writes for a table file).  State
values and moves are not stored: one greedy step from the board values
gives them.  The members are stored uncompressed (a ``.npz`` as
:func:`numpy.savez` writes it), so that a load can read them a slice at a
time.  Reading a file back, and proving it, is
:func:`babytris.files.lean.load_lean`'s.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, cast

import numpy as np

from .._version import __version__
from ..engine.writing import replace_atomically

__all__ = ["LEAN_FORMAT", "LEAN_FORMAT_VERSION", "LEAN_MEMBERS", "LEAN_SETTINGS", "array_digest", "save_lean"]

#: What a lean file says it is, and the layout's version (raise it when the layout changes).
LEAN_FORMAT = "babytris.modes.lean"
LEAN_FORMAT_VERSION = 1
#: The arrays a lean file holds, each with its dtype (``bits``: the bitmap over every possible board).
LEAN_MEMBERS = {"bits": np.dtype("<u8"), "board_values": np.dtype("<f8"), "residuals": np.dtype("<f8")}
#: The settings its metadata holds beside "format", "format_version", "babytris_version" and "digests".
LEAN_SETTINGS = (
    "rules",
    "discount",
    "opponent",
    "n_boards",
    "iterations",
    "residual",
    "converged",
    "tol",
    "method",
    "evaluations",
    "plan",
    "resumed",
    "seconds",
    "ties",
)
#: Bytes hashed (and read, on loading) at a time: Ctrl-C is answered between two slices.
SLICE_BYTES = 2**24


def save_lean(settings: dict[str, Any], arrays: dict[str, np.ndarray], path: str | bytes | os.PathLike) -> None:
    """Write a lean solution to ``path``: ``settings`` (each of
    :data:`LEAN_SETTINGS`, JSON-able but ``rules``, a :class:`~babytris.Rules`)
    and ``arrays`` (each of :data:`LEAN_MEMBERS`).  :meth:`LeanSolution.save`
    calls it.  The file is written whole beside ``path`` and renamed onto it
    (:func:`~babytris.engine.writing.replace_atomically`: regular files
    only), so a save that fails or is killed leaves the old file, if any, as
    it was.  Returns None."""
    meta: dict[str, Any] = {
        "format": LEAN_FORMAT,
        "format_version": LEAN_FORMAT_VERSION,
        "babytris_version": __version__,
    }
    meta.update({name: settings[name] for name in LEAN_SETTINGS})
    meta["rules"] = settings["rules"].to_json()
    arrays = {name: np.ascontiguousarray(arrays[name], dtype=dtype) for name, dtype in LEAN_MEMBERS.items()}
    digests = {name: array_digest(array) for name, array in arrays.items()}
    digests["meta"] = meta_digest(meta)
    meta["digests"] = digests
    savez = cast(Any, np.savez)  # (numpy's stubs take no **arrays beside allow_pickle)
    replace_atomically(os.fsdecode(os.fspath(path)), lambda f: savez(f, meta=np.array(json.dumps(meta)), **arrays))


def array_digest(array: np.ndarray) -> str:
    """SHA-256 of an array's dtype, shape and bytes, hashed a slice at a time
    (the digest :func:`babytris.results.saving.digests` gives it)."""
    h = digest_start(array.dtype, array.shape)
    data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    for first in range(0, data.size, SLICE_BYTES):
        h.update(data[first : first + SLICE_BYTES].data)
    return h.hexdigest()


def digest_start(dtype: np.dtype, shape: tuple[int, ...]) -> Any:
    """The SHA-256 of an array's digest once its dtype and shape are fed: its bytes follow."""
    h = hashlib.sha256()
    h.update(str(np.dtype(dtype).str).encode())
    h.update(b"\0")
    h.update(str(tuple(shape)).encode())
    h.update(b"\0")
    return h


def meta_digest(meta: dict[str, Any]) -> str:
    """SHA-256 of the metadata but its digests (as :func:`babytris.results.saving.digests`)."""
    settings = {key: value for key, value in meta.items() if key != "digests"}
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()
