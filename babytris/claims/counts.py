"""The sources' counting claims, for :mod:`babytris.reproduce`.

- Ergin & Grousson's first report: its value iteration first runs over every
  grid of filled and empty cells with every tromino, the naive count
  ``2^(height * width) * n_trominoes`` on its 4x4 grid with I and L
  (babytris's default :class:`~babytris.Rules`), before a breadth-first
  search keeps the states reachable from the empty grid;
- Bodoia & Puranik: "the number of ways to fill in a 20x10 board is 2^200,
  and the Tetris requirement that no row be completely filled only reduces
  this to (2^10 - 1)^20";
- Pirnay & Arabagi's Table 4 (the Tetris column: 200 state descriptors, a
  random branching of 7, a dimensionality of 2^200, about 10^60) and their
  training-size estimate: if the updates needed scale with log10 of the
  number of states, Tetris needs "30 times as many updates" as TD-Gammon's
  900 million (10^20 states), 27 billion, 100 million games of 270 moves.

Each count is recomputed from babytris's own objects, the formula checked by
brute force on a board small enough to list.
"""

from __future__ import annotations

import itertools
import math

from .registry import AGREES, DIFFERS, Measurement, claim

__all__ = ["TD_GAMMON"]

#: Pirnay & Arabagi's TD-Gammon figures: states (10^20), games to converge, moves per game, half-moves.
TD_GAMMON = {"states_log10": 20.0, "games": 4_500_000, "moves": 100, "half_moves": 900_000_000}


def _grids_without_a_full_row(width: int, height: int) -> int:
    """Grids of ``width x height`` cells with no full row, listed one by one."""
    full = (1 << width) - 1
    return sum(all(row != full for row in rows) for rows in itertools.product(range(1 << width), repeat=height))


@claim(
    "bodoia-count-grids-10x20",
    "bodoia",
    "ways to fill a 20x10 board (each cell filled or not), and those with no full row",
    "2^200; (2^10 - 1)^20",
    "from babytris.big.tetris import Tetris; t = Tetris(width=10, height=20); "
    "(2 ** (t.width * t.height), (2 ** t.width - 1) ** t.height)",
)
def _grids(fast: bool) -> Measurement:
    from ..big.tetris import Tetris

    t = Tetris(width=10, height=20)
    every, no_full = 2 ** (t.width * t.height), (2**t.width - 1) ** t.height
    listed = _grids_without_a_full_row(3, 4)
    checked = listed == (2**3 - 1) ** 4
    same = every == 2**200 and no_full == 1023**20 and checked
    return Measurement(
        f"2^{t.width * t.height}; {no_full:.3e}",
        AGREES if same else DIFFERS,
        f"{t.width}x{t.height} cells, each filled or empty: 2^200 = {every:.3e}; with no row full, each row is one of "
        f"2^10 - 1 patterns: (2^10 - 1)^20 = {no_full:.3e}, {no_full / every:.1%} of them; listing every 3x4 grid "
        f"finds {listed:,} without a full row, (2^3 - 1)^4 = {7**4:,}",
    )


@claim(
    "pirnay-table-4-tetris",
    "pirnay",
    "Table 4, TD-Tetris: state descriptors, random branching each move, problem dimensionality",
    "200; 7; 2^200 ≈ 10^60",
    "ValueNetwork(10, 20).W1.shape[1], len(Tetris(width=10, height=20).pieces), 200 * log10(2)"
    "  # babytris.big.td, babytris.big.tetris",
)
def _table_4(fast: bool) -> Measurement:
    from ..big.td import ValueNetwork
    from ..big.tetris import Tetris

    inputs = ValueNetwork(10, 20).W1.shape[1]
    pieces = len(Tetris(width=10, height=20).pieces)
    exponent = inputs * math.log10(2)
    same = inputs == 200 and pieces == 7 and round(exponent) == 60
    return Measurement(
        f"{inputs}; {pieces}; 10^{exponent:.1f}",
        AGREES if same else DIFFERS,
        f"babytris's TD network takes the board's {inputs} cells; the next piece is one of {pieces} tetrominoes; "
        f"2^{inputs} = 10^{exponent:.2f}",
    )


@claim(
    "pirnay-training-estimate",
    "pirnay",
    "updates Tetris would need by the paper's rule (updates scale with log10 of the states), and games of 270 moves",
    "30 times TD-Gammon's: 27,000,000,000 updates, 100,000,000 games",
    "math.log10(2 ** 200) / 20 * 900_000_000 / 270",
)
def _training_estimate(fast: bool) -> Measurement:
    half_moves = TD_GAMMON["games"] * TD_GAMMON["moves"] * 2
    factor = 200 * math.log10(2) / TD_GAMMON["states_log10"]
    updates = TD_GAMMON["half_moves"] * factor
    games = updates / 270
    return Measurement(
        f"{factor:.2f} times: {updates:.2e} updates, {games:.2e} games",
        AGREES if round(factor) == 30 else DIFFERS,
        f"TD-Gammon's 4.5 million games of about 100 moves, both sides learning, are {half_moves:,} half-moves, as "
        f"the paper says; but by its own rule the factor is log10(2^200) / log10(10^20) = {factor:.2f}, not 30: "
        f"{updates:.2e} updates and {games:.2e} games of 270 moves (its 27 billion and 100 million take 30), so "
        f"its 700,000 games are {700_000 / games:.0%} of them, not under one percent",
    )


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
