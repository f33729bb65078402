"""The first report's claims (Ergin & Grousson, *Baby Tetris First Part Report*) for :mod:`babytris.reproduce`.

The report's setup: Baby Tetris on a 4x4 grid with the two trominoes I and L
(babytris's default :class:`~babytris.Rules`); its value iteration first runs
over every grid of filled and empty cells with every tromino, the naive count
``2^(height * width) * n_trominoes``, before a breadth-first search keeps the
states reachable from the empty grid.
"""

from __future__ import annotations

from .registry import AGREES, DIFFERS, Measurement, claim


@claim(
    "report-naive-states-4x4",
    "report",
    "naive state count 2^(4*4) * 2 = 2^17, every grid with every tromino, 4x4",
    2**17,
    "r = babytris.Rules(width=4, height=4); 2 ** (r.width * r.height) * r.n_pieces",
)
def _naive_states(fast: bool) -> Measurement:
    import babytris

    rules = babytris.Rules(width=4, height=4)
    naive = 2 ** (rules.width * rules.height) * rules.n_pieces
    reached = babytris.enumerate_boards(rules)
    return Measurement(
        naive,
        AGREES if naive == 2**17 else DIFFERS,
        f"every grid of the default rules' {rules.width}x{rules.height} cells with each of its "
        f"{rules.n_pieces} pieces; the search from the empty grid reaches {reached.n_states:,} of them "
        f"({reached.n_boards:,} boards, {reached.n_states / naive:.1%})",
    )
