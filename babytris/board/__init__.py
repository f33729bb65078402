"""The analysis board: every solved game explorable in the browser (``babytris board``).

A small server (the standard library's threading HTTP server: no dependency)
over one JSON API (:mod:`.api`), which the page, notebooks and scripts read
alike; the page is three packaged files (``static/``: HTML, a plain ES module
and CSS; no build step, no request to another host).  The front end draws;
the library decides: legal moves, values, regrets and the opponents' pieces
all come from the API.  See docs/board.md.

Imports the layers below the command line (results, solvers, engine, game);
never ``big/``.
"""

from .analyst import MARKS, Analyst
from .notebook import BoardFrame, PositionView
from .position import Position, parse_position, position_text
from .server import BoardServer

__all__ = [
    "Analyst",
    "BoardFrame",
    "BoardServer",
    "MARKS",
    "Position",
    "PositionView",
    "parse_position",
    "position_text",
]
