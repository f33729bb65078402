"""What every ``babytris`` subcommand shares: the exit statuses (the one
table), the output (text, ``--json`` or ``--quiet``), the record of the
rules, the check of a path to write and the solve of the subcommand's game."""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.resources import gib_to_bytes
from .options import game_match, tie_fields

# The exit statuses: the one table (docs/guide.md, "The exit status", lists it; a new one goes here).
EXIT_OK = 0
EXIT_NOT_CONVERGED = 1  # a solve stopped at --max-iter before --tol
EXIT_BAD_ARGUMENTS = 2  # also argparse's own usage errors, and unreadable, invalid or unwritable files
EXIT_OVER_MEMORY = 3
EXIT_MISSING_EXTRA = 4  # an optional dependency is not installed: the line names the extra to install
EXIT_LOST_WORKER = 5  # --scheduler: a dask worker was lost mid-solve (nothing saved; restart and solve again)
EXIT_BAD_FILE = 6  # a solution file that is corrupt or fails its checks (babytris.files.persist.SolutionFileError)
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT), as shells report it: 128 + 2

EPILOG = """exit status: 0 done; 1 not converged (hit --max-iter); 2 bad arguments, or a
file that cannot be read, is not a valid solution, or cannot be written; 3 the work needs
more memory than --max-memory allows; 4 an optional extra is missing (pip install
'babytris[EXTRA]'); 5 a dask worker of a sharded solve was lost; 6 a corrupt solution file;
130 interrupted (Ctrl-C): a file being saved is left as it was."""
# The same, for the commands that run no solve to a tolerance (no --max-iter, no exit 1).
EPILOG_NO_SOLVE = """exit status: 0 done; 2 bad arguments, or a file that cannot be read or
written; 3 the work needs more memory than the default budget of babytris.solve allows; 4 an
optional extra is missing; 6 a corrupt solution file; 130 interrupted (Ctrl-C): a file being
saved is left as it was."""


class Output:
    """Where a command's text goes: stdout, or nowhere with --json / --quiet."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.json = args.json
        self.quiet = args.quiet

    @property
    def chatty(self) -> bool:
        return not (self.json or self.quiet)

    def line(self, text: str = "", **kwargs: Any) -> None:
        if self.chatty:
            print(text, **kwargs)

    def result(self, data: dict | list) -> None:
        if self.json:
            print(json.dumps(finite(data), indent=2, allow_nan=False, default=plain))


def finite(data: Any) -> Any:
    """``data`` with NaN and infinities as None (JSON null): strict JSON has no such numbers."""
    if isinstance(data, dict):
        return {key: finite(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(value) for value in data]
    if isinstance(data, (float, np.floating)) and not math.isfinite(data):
        return None
    return data


def plain(value: Any) -> Any:
    """JSON for numpy scalars and tuples."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def solution_from(args: argparse.Namespace, out: Output):
    """The solve of the subcommand's game (:func:`~babytris.cli.options.game_match`)."""
    import babytris

    return babytris.solve(
        game_match(args),
        discount=args.discount,
        tol=args.tol,
        max_iter=args.max_iter,
        method=args.method,
        accelerate=args.accelerate,
        max_memory=gib_to_bytes(args.max_memory),
        n_jobs=args.jobs,
        progress=out.chatty,
        **tie_fields(args),
    )


def rules_record(rules) -> dict:
    return {
        "width": rules.width,
        "height": rules.height,
        "pieces": list(rules.piece_names),
        "line_scores": list(rules.line_scores),
        "probabilities": list(rules.probabilities),
        "preview": rules.preview,
        "hold": rules.hold,
        "hold_start": rules.hold_start,
        "moves": rules.moves,
        "randomizer": rules.randomizer,
        "bag_copies": rules.bag_copies,
        "objective": rules.objective,
        "mirror": rules.mirror,
    }


def check_writable(option: str, path: str) -> None:
    """Refuse, before any work, a file that could not be saved: a directory,
    in a missing directory, or in one this user may not write to (saves write
    a temporary file beside ``path`` and rename it over, so the directory
    must be writable, not the old file); and an empty path, a device, a FIFO
    or a socket (only regular files are written)."""
    from ..engine.writing import check_write_target

    try:
        check_write_target(path, field=option)
    except IsADirectoryError:
        raise ValueError(f"{option}: {path!r} is a directory; give a file name") from None
    target = Path(path)
    folder = target.resolve().parent
    if not folder.is_dir():
        raise ValueError(f"{option}: no directory {str(folder)!r} to save {path!r} in")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{option}: cannot write in {str(folder)!r} (permission denied)")
