"""A Solution written to a file: the format (its members, their dtypes and
the settings kept) and :func:`save`, with a SHA-256 digest of each array
and of the metadata.  Reading a file back, and proving it, is
:func:`babytris.files.persist.load`'s.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np

from .._version import __version__
from ..engine.transitions import Transitions
from ..engine.writing import replace_atomically

__all__ = [
    "DTYPES",
    "FIELDS",
    "FORMAT",
    "FORMAT_VERSION",
    "READABLE_VERSIONS",
    "SETTINGS",
    "SOLUTION_ARRAYS",
    "TABLE_ARRAYS",
    "digests",
    "save",
]

#: What the file says it is, and the layout's version (raise it when the layout changes).
FORMAT = "babytris.results.solution"
#: The version save writes.
FORMAT_VERSION = 4
#: Versions this babytris reads: 1 lacks the rules' ``no_holes``, ``top_out``
#: and the reward's ``new_holes``, ``loss`` (all off), which 2 adds; 2 lacks
#: the rules' ``moves`` (hard drops), which 3 adds; 3 lacks the rules'
#: ``randomizer`` and ``bag_copies`` (independent draws) and the table's
#: ``bags``, which 4 adds.
READABLE_VERSIONS = (1, 2, 3, 4)

#: The arrays a file holds, by the attribute they come from; None-able ones may be absent.
SOLUTION_ARRAYS = ("values", "policy", "residuals", "opponent_policy", "evaluation_sweeps")
#: (the move table's, beside the solution's)
TABLE_ARRAYS = ("boards", "layer_starts", "offsets", "next_board", "lines", "placement", "queues", "slots", "bags")
#: The dtype each array is written with.
DTYPES = {
    "solution_values": np.float64,
    "solution_policy": np.int16,
    "solution_residuals": np.float64,
    "solution_evaluation_sweeps": np.int32,
    "solution_opponent_policy": np.int16,
    "table_boards": np.uint64,
    "table_layer_starts": np.int64,
    "table_offsets": np.int64,  # (int32 in memory; int64 on file, as format 1 wrote them)
    "table_next_board": np.int32,
    "table_lines": np.uint8,
    "table_placement": np.uint16,
    "table_queues": np.int64,
    "table_slots": np.int64,
    "table_bags": np.int64,
}
#: The Solution's attributes a file's metadata keeps, beside its arrays (:data:`SOLUTION_ARRAYS`).
FIELDS = (
    "rules",
    "discount",
    "iterations",
    "residual",
    "converged",
    "method",
    "tol",
    "max_iter",
    "seconds",
    "opponent",
    "player",
    "reward",
    "opening_row",
    "ties",
    "accelerated",
    "tie_seed",
)
#: The settings a file's metadata holds beside "format", "format_version" and "babytris_version".
SETTINGS = (
    "rules",
    "discount",
    "iterations",
    "residual",
    "converged",
    "method",
    "tol",
    "max_iter",
    "seconds",
    "opponent",
    "player",
    "reward",
    "table_seconds",
)


def save(fields: dict[str, Any], transitions: Transitions, path: str | os.PathLike) -> None:
    """Write a solution to ``path`` (numpy ``.npz``, compressed): ``fields``,
    its attributes named in :data:`FIELDS` and :data:`SOLUTION_ARRAYS` (its
    values, policy and piece choices, settings; an array may be None), and
    its move table ``transitions``.  :meth:`Solution.save` calls it (the
    class is above this module); the quotient of ``solve(..., minimize=True)``
    is not kept.

    The file is written whole beside ``path`` and then renamed onto it, so a
    save that fails or is interrupted (even killed) leaves the previous file
    at ``path``, if any, as it was."""
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "babytris_version": __version__}
    meta.update({name: fields[name] for name in FIELDS})
    meta["rules"] = fields["rules"].to_json()
    meta["reward"] = None if fields["reward"] is None else vars(fields["reward"])
    meta["table_seconds"] = transitions.seconds
    arrays = {f"solution_{name}": fields[name] for name in SOLUTION_ARRAYS if fields[name] is not None}
    arrays.update(
        {
            f"table_{name}": getattr(transitions, name).astype(DTYPES[f"table_{name}"], copy=False)
            for name in TABLE_ARRAYS
            if getattr(transitions, name) is not None
        }
    )
    meta["digests"] = digests(meta, arrays)
    replace_atomically(path, lambda f: np.savez_compressed(f, meta=np.array(json.dumps(meta)), **arrays))


def digests(meta: dict, arrays: dict[str, np.ndarray]) -> dict[str, str]:
    """SHA-256 of each array (its dtype, shape and bytes) and of the metadata
    beside them: they catch a file edited or damaged after it was saved (not
    a forger, who can recompute them).  Returns them by member name."""

    def digest(*parts: bytes | memoryview) -> str:
        # (the parts joined by NUL bytes, fed one by one: an array's bytes are hashed where they lie, not copied)
        h = hashlib.sha256()
        for k, part in enumerate(parts):
            h.update(b"\0" if k else b"")
            h.update(part)
        return h.hexdigest()

    out = {
        name: digest(
            str(a.dtype.str).encode(),
            str(a.shape).encode(),
            np.ascontiguousarray(a).reshape(-1).view(np.uint8).data,
        )
        for name, a in arrays.items()
    }
    settings = {key: value for key, value in meta.items() if key != "digests"}
    out["meta"] = digest(json.dumps(settings, sort_keys=True).encode())
    return out
