"""Saving and loading solutions: one numpy ``.npz`` file with the rules and
the solver's settings as JSON beside the arrays, versioned.

>>> import babytris, os, tempfile
>>> solution = babytris.solve(width=4, height=4)
>>> with tempfile.TemporaryDirectory() as folder:
...     solution.save(os.path.join(folder, "4x4.npz"))
...     loaded = babytris.load(os.path.join(folder, "4x4.npz"))
>>> loaded.start_value == solution.start_value
True
"""

from __future__ import annotations

import json
import os
import zipfile
from typing import Any

import numpy as np

from .pieces import Piece
from .reward import Reward
from .rules import Rules
from .solution import Solution
from .transitions import Transitions

__all__ = ["save", "load", "FORMAT", "FORMAT_VERSION", "READABLE_VERSIONS"]

#: What the file says it is, and the layout's version (raise it when the layout changes).
FORMAT = "babytris.solution"
FORMAT_VERSION = 2
#: Versions this babytris reads: 1 lacks the rules' ``no_holes``, ``top_out``
#: and the reward's ``new_holes``, ``loss`` (all off), which 2 adds.
READABLE_VERSIONS = (1, 2)

# The arrays a file holds, by the attribute they come from; None-able ones may be absent.
_SOLUTION_ARRAYS = ("values", "policy", "residuals", "opponent_policy")
_TABLE_ARRAYS = ("boards", "layer_starts", "offsets", "next_board", "lines", "placement", "queues", "slots")


def save(solution: Solution, path: "str | os.PathLike") -> None:
    """Write ``solution`` to ``path`` (numpy ``.npz``, compressed): its values,
    policy and piece choices, the move table, the rules and the settings.
    The quotient of ``solve(..., minimize=True)`` is not kept."""
    if not isinstance(solution, Solution):
        raise TypeError(f"solution must be a babytris.Solution, got {type(solution).__name__}")
    from . import __version__

    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "babytris_version": __version__,
        "rules": _rules_to_json(solution.rules),
        "discount": solution.discount,
        "iterations": solution.iterations,
        "residual": solution.residual,
        "converged": solution.converged,
        "method": solution.method,
        "tol": solution.tol,
        "max_iter": solution.max_iter,
        "seconds": solution.seconds,
        "opponent": solution.opponent,
        "player": solution.player,
        "reward": None if solution.reward is None else vars(solution.reward),
        "table_seconds": solution.transitions.seconds,
    }
    arrays = {f"solution_{name}": getattr(solution, name) for name in _SOLUTION_ARRAYS
              if getattr(solution, name) is not None}
    arrays.update({f"table_{name}": getattr(solution.transitions, name) for name in _TABLE_ARRAYS
                   if getattr(solution.transitions, name) is not None})
    with open(path, "wb") as f:
        np.savez_compressed(f, meta=np.array(json.dumps(meta)), **arrays)


def load(path: "str | os.PathLike", *, rules: Rules | None = None) -> Solution:
    """Read a solution written by :meth:`Solution.save`.

    Returns:
        the :class:`Solution`, with its move table (``solution.transitions``).

    Args:
        path: the file.
        rules: if given, the rules the file must have been solved for.

    Raises:
        ValueError: the file is not a babytris solution, is corrupt or of
            another format version, or was solved for other ``rules``.
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            contents = {key: data[key] for key in data.files}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as err:
        if isinstance(err, FileNotFoundError):
            raise
        raise ValueError(f"{os.fspath(path)!r} is not a babytris solution file (numpy .npz): {err}") from None
    try:
        meta = json.loads(str(contents.pop("meta")))
    except (KeyError, json.JSONDecodeError):
        raise ValueError(f"{os.fspath(path)!r} is not a babytris solution file: no readable metadata") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"{os.fspath(path)!r} is not a babytris solution file (format {meta.get('format')!r})")
    if meta.get("format_version") not in READABLE_VERSIONS:
        raise ValueError(
            f"{os.fspath(path)!r} has format version {meta.get('format_version')!r}; this babytris reads "
            f"versions {', '.join(map(str, READABLE_VERSIONS))} (re-solve, or load it with the babytris that "
            f"wrote it, {meta.get('babytris_version')!r})"
        )
    try:
        saved_rules = _rules_from_json(meta["rules"])
        table = Transitions(saved_rules, seconds=meta["table_seconds"],
                            **{name: contents.get(f"table_{name}") for name in _TABLE_ARRAYS})
        solution = Solution(
            rules=saved_rules,
            discount=meta["discount"],
            transitions=table,
            iterations=meta["iterations"],
            residual=meta["residual"],
            converged=meta["converged"],
            method=meta["method"],
            tol=meta["tol"],
            max_iter=meta["max_iter"],
            seconds=meta["seconds"],
            opponent=meta["opponent"],
            player=meta["player"],
            reward=None if meta["reward"] is None else Reward(**meta["reward"]),
            **{name: contents.get(f"solution_{name}") for name in _SOLUTION_ARRAYS},
        )
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{os.fspath(path)!r} is a corrupt babytris solution file: {err}") from None
    _check_shapes(solution, path)
    if rules is not None and rules != saved_rules:
        raise ValueError(f"{os.fspath(path)!r} was solved for {saved_rules!r}, not for {rules!r}")
    return solution


def _check_shapes(solution: Solution, path: "str | os.PathLike") -> None:
    t = solution.transitions
    n, n_pieces = t.n_boards, solution.rules.n_pieces
    problems = []
    if solution.values is None or solution.values.shape != (n, n_pieces):
        problems.append("values")
    if solution.policy is None or solution.policy.shape != (n, n_pieces):
        problems.append("policy")
    if t.offsets is None or t.offsets.shape != (n * n_pieces + 1,) or t.offsets[-1] != len(t.next_board):
        problems.append("offsets")
    if t.next_board is None or (len(t.next_board) and not 0 <= t.next_board.min() <= t.next_board.max() < n):
        problems.append("next_board")
    if solution.opponent_policy is not None and solution.opponent_policy.shape != (n,):
        problems.append("opponent_policy")
    if problems:
        raise ValueError(f"{os.fspath(path)!r} is a corrupt babytris solution file: bad {', '.join(problems)}")


def _rules_to_json(rules: Rules) -> dict[str, Any]:
    return {
        "width": rules.width,
        "height": rules.height,
        "pieces": [{"name": p.name, "cells": [list(c) for c in p.cells]} for p in rules.pieces],
        "line_scores": None if rules.objective == "combo" else list(rules.line_scores),
        "probabilities": list(rules.probabilities),
        "start": rules.start,
        "objective": rules.objective,
        "preview": rules.preview,
        "hold": rules.hold,
        "mirror": rules.mirror,
        "no_holes": rules.no_holes,
        "top_out": rules.top_out,
    }


def _rules_from_json(fields: dict[str, Any]) -> Rules:
    fields = dict(fields)
    fields["pieces"] = [Piece(p["name"], tuple(tuple(c) for c in p["cells"])) for p in fields["pieces"]]
    return Rules(**fields)
