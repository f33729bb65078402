"""The board in Jupyter: a position with its moves' values (the board's API
answer drawn with the library's one SVG, :mod:`babytris.game.svg`, and a
table), or the whole page, served on loopback from this kernel and shown in
an iframe (:class:`BoardFrame`: the same front end as ``babytris board``).

>>> import babytris
>>> from babytris.board import PositionView
>>> solution = babytris.solve(width=4, height=4)
>>> view = PositionView(solution, "....;L")
>>> view.moves[0]["id"], round(view.moves[0]["value"], 4) == round(solution.value(0, "L"), 4)
('L-0', True)
>>> "<svg" in view._repr_html_()
True
"""

from __future__ import annotations

import threading
from html import escape
from typing import Any
from urllib.parse import quote

from ..engine.resources import DEFAULT_MAX_MEMORY
from ..game.board import Board
from ..game.svg import board_svg
from ..game.validation import check_int
from ..results.solution import Solution
from .analyst import Analyst
from .position import Position, parse_position, position_text
from .server import BoardServer

__all__ = ["BoardFrame", "PositionView"]


class PositionView:
    """``position`` (its text form, or a :class:`Position`) of ``solution``'s
    game with every move's value, regret and mark (:meth:`Analyst.analysis`).

    Attributes:
        analysis: the API's answer for the position (``moves`` best first).
        moves: ``analysis["moves"]``.
    """

    def __init__(self, solution: Solution, position: str | Position) -> None:
        analyst = Analyst(solution, max_memory=DEFAULT_MAX_MEMORY)
        self.rules = solution.rules
        self.position = parse_position(position, self.rules) if isinstance(position, str) else position
        self.analysis: dict[str, Any] = analyst.analysis(self.position)
        self.moves: list[dict[str, Any]] = self.analysis["moves"]

    def _repr_html_(self) -> str:
        """The board with the best move landed, and one row per move: id, value, regret, mark."""
        board = Board(self.position.board, self.rules.width, self.rules.height)
        best = next((m for m in self.moves if m["best"]), None)
        svg = board_svg(board, landing={tuple(c) for c in best["cells"]} if best else ())
        rows = "".join(
            f"<tr><td>{escape(m['id'])}</td><td>{m['value']:.4f}</td><td>{m['regret']:.4f}</td>"
            f"<td>{escape(m['mark'])}</td></tr>"
            for m in self.moves
        )
        return (
            f"<div><p>{escape(self.analysis['position'])}: value {self.analysis['value']:.4f}</p>{svg}"
            f"<table><tr><th>move</th><th>value</th><th>regret</th><th>mark</th></tr>{rows}</table></div>"
        )

    def __repr__(self) -> str:
        return (
            f"<PositionView {self.analysis['position']!r}: {len(self.moves)} moves, value {self.analysis['value']:.4f}>"
        )


class BoardFrame:
    """The analysis board of ``solution`` served from this process on a free
    loopback port (a daemon thread) and shown by Jupyter in an iframe, at
    ``position`` (its text form, or a :class:`Position`; default: a game's
    start).  The browser showing the notebook must run on this machine (the
    board answers 127.0.0.1 only).  :meth:`close` stops the server.

    Attributes:
        url: the page's address (with the position, if one was given).
        server: the :class:`BoardServer`.
    """

    def __init__(
        self, solution: Solution, position: str | Position | None = None, *, width: int = 1100, height: int = 640
    ) -> None:
        self.size = (check_int("width", width, 1, 100_000), check_int("height", height, 1, 100_000))  # (pixels)
        if isinstance(position, Position):
            position = position_text(position, solution.rules)
        elif isinstance(position, str):
            position = position_text(parse_position(position, solution.rules), solution.rules)  # (checked first)
        self.server = BoardServer(Analyst(solution, max_memory=DEFAULT_MAX_MEMORY), "127.0.0.1", 0)
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
        self._thread.start()
        self.url = self.server.url + ("" if position is None else f"?pos={quote(position, safe='')}")

    def _repr_html_(self) -> str:
        """An iframe of the page."""
        width, height = self.size
        return f'<iframe src="{escape(self.url)}" width="{width}" height="{height}" style="border: 0"></iframe>'

    def close(self) -> None:
        """Stop the server (the iframe then shows nothing new)."""
        self.server.shutdown()
        self.server.server_close()

    def __repr__(self) -> str:
        return f"<BoardFrame {self.url}>"
