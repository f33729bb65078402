"""The board's JSON API, without HTTP: a request's path and query in, a JSON
object out, or a one-line :class:`ValueError` (the server's 400) or
:class:`LookupError` (its 404).  The page, notebooks and scripts read the same
answers; docs/board.md documents them.

=================  ===============================================  ===================================
path               query                                            answer
=================  ===============================================  ===================================
``/api/game``      (none)                                           the rules, discount, pieces, palette,
                                                                    opponents, marks
``/api/start``     ``opponent``, ``seed``                           ``{"position": text}``
``/api/position``  ``pos``, ``opponent``, ``compare``               the position's value and moves
``/api/play``      ``pos``, ``move``, ``opponent`` or ``piece``,    the new position, the piece that
                   ``seed``, ``ply``, ``compare``                   came, points; its ``analysis``
=================  ===============================================  ===================================
"""

from __future__ import annotations

from typing import Any

from ..game.svg import CELL, COLORS
from ..game.validation import check_int
from .analyst import MARKS, Analyst
from .position import parse_position, position_text

__all__ = ["answer", "NoSuchPath", "PATHS"]


class NoSuchPath(LookupError):
    """A path the API does not have (the server's 404)."""


#: Each path's query parameters (every one optional but ``pos`` and ``move``).
PATHS: dict[str, tuple[str, ...]] = {
    "/api/game": (),
    "/api/start": ("opponent", "seed"),
    "/api/position": ("pos", "opponent", "compare"),
    "/api/play": ("pos", "move", "opponent", "piece", "seed", "ply", "compare"),
}

#: The largest seed (numpy's generators take any non-negative integer; JavaScript's numbers are exact to 2**53).
MAX_SEED = 2**53 - 1


def answer(analyst: Analyst, path: str, query: dict[str, list[str]]) -> dict[str, Any]:
    """The API's answer to ``path`` with ``query`` (as :func:`urllib.parse.parse_qs` gives it).

    Raises:
        NoSuchPath: for a path the API does not have.
        ValueError: for a bad request, in one line naming the parameter.
    """
    if path not in PATHS:
        raise NoSuchPath(f"no such path {path[:80]!r}; the API has {', '.join(PATHS)}")
    params = _single(query, PATHS[path])
    if path == "/api/game":
        return describe(analyst)
    opponent = analyst.opponents.check(params.get("opponent", "random"))
    seed = _int(params, "seed", MAX_SEED, "2**53 - 1")
    if path == "/api/start":
        return {"position": position_text(analyst.opponents.start(opponent, seed), analyst.rules)}
    position = parse_position(_required(params, "pos"), analyst.rules)
    compare = params.get("compare") or None  # (empty: no second player)
    if path == "/api/position":
        return analyst.analysis(position, opponent=opponent, compare=compare)
    piece = params.get("piece")
    if piece is not None:
        if "opponent" in params:
            raise ValueError("piece and opponent conflict: a piece given by hand is the next piece")
        if piece not in analyst.rules.piece_names:
            raise ValueError(f"piece must be one of {', '.join(analyst.rules.piece_names)}, got {piece[:40]!r}")
    index = None if piece is None else analyst.rules.piece_names.index(piece)
    ply = _int(params, "ply", 10**9, "10**9")
    played = analyst.play(position, _required(params, "move"), opponent=opponent, seed=seed, ply=ply, piece=index)
    after = parse_position(played["position"], analyst.rules)
    return {**played, "analysis": analyst.analysis(after, opponent=opponent, compare=compare)}


def describe(analyst: Analyst) -> dict[str, Any]:
    """``/api/game``: what the page needs before any position."""
    s, rules = analyst.solution, analyst.rules
    return {
        "width": rules.width,
        "height": rules.height,
        "pieces": [{"name": p.name, "cells": [list(c) for c in p.cells]} for p in rules.pieces],
        "line_scores": list(rules.line_scores),
        "preview": rules.preview,
        "hold": rules.hold,
        "bag": rules.randomizer == "bag",
        "moves": rules.moves,
        "discount": s.discount,
        "opponent": s.opponent,
        "counts": "evaluation" if analyst.kind == "estimate" else "points" if s.reward is None else "reward",
        "error_bound": s.error_bound,
        "tie_slack": s.tie_slack,
        "start_value": s.start_value,
        "estimate": analyst.kind == "estimate",
        "player": "dellacherie" if analyst.kind == "estimate" else "optimal",
        "result": analyst.kind,
        "opponents": list(analyst.opponents.available),
        "compare": list(analyst.comparable),
        "marks": [[threshold, sign] for threshold, sign in MARKS],
        "palette": dict(COLORS),
        "cell": CELL,
    }


def _single(query: dict[str, list[str]], known: tuple[str, ...]) -> dict[str, str]:
    """Each parameter's one value; an unknown or repeated one refused."""
    for name, values in query.items():
        if name not in known:
            raise ValueError(f"unknown parameter {name[:40]!r}; this path takes {', '.join(known) or 'none'}")
        if len(values) != 1:
            raise ValueError(f"{name} given {len(values)} times; give it once")
    return {name: values[0] for name, values in query.items()}


def _required(params: dict[str, str], name: str) -> str:
    if name not in params:
        raise ValueError(f"{name} is missing")
    return params[name]


def _int(params: dict[str, str], name: str, high: int, high_text: str) -> int:
    text = params.get(name, "0")
    if not (text.isascii() and text.isdigit() and len(text) <= 20):
        raise ValueError(f"{name} must be an integer in [0, {high_text}], got {text[:40]!r}")
    return check_int(name, int(text), 0, high, high_text=high_text)
