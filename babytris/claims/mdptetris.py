"""mdptetris's exact values on small boards (Thiery & Scherrer) for :mod:`babytris.reproduce`.

mdptetris (brunoscherrer/mdptetris, commit 5cc0815) solves "simple tetris"
exactly with ``mdptetris_value_iteration`` (``src/value_iteration.c``): value
iteration over every grid of filled and empty cells (``2^(width * height)``
codes, ``src/simple_tetris.c``, reachable or not), 5x5 by default and 4x5
when built with ``SIZE_45`` (``include/simple_tetris.h``).  Its setup:

- the pieces of ``data/pieces4.dat``, the seven tetrominoes in their 19
  distinct rotations (I, S, Z two; O one; T, J, L four), drawn uniformly: a
  grid's value is the mean over the pieces of the best move's;
- a move is a rotation and a column; the piece drops straight down from above
  the stack until it rests (``board_drop_piece`` in ``src/board.c``, from the
  wall height, which ``set_game_state`` puts at the top row);
- its reward is the number of lines it clears (a point a line,
  ``line_scores=(0, 1, 2, 3, 4)``); a piece that ends above the top row ends
  the game, with nothing, and clears no line (``allow_lines_after_overflow``
  is 0); the value of the grid after the game ends is 0;
- ``gamma`` 1 by default: the expected total of lines until game over;
  sweeps synchronous by default ("use a buffer"), in place without; it stops
  when the largest change of a sweep is at most the delta limit.

Its repository publishes no value, so the numbers below are what its own
program gave when built and run here (gcc 12, ``-O2``; the GSL it links for
random numbers and statistics, which value iteration never calls, replaced by
stand-ins); the 5x5 run, too long to write a 256 MiB value file each sweep,
printed the empty grid's value each sweep instead.  babytris's rules differ in
one point, which does not move a value: a piece ending above the top row is
no move there, and a board with no move ends the game; since no value is
negative, the best move's value is the same either way.
"""

from __future__ import annotations

import math

from .registry import AGREES, DIFFERS, Measurement, claim

__all__ = ["MDPTETRIS_RUNS"]

#: (width, height) -> what mdptetris_value_iteration gave here, gamma 1, the seven tetrominoes:
#: (the empty grid's value, sweeps run, the last sweep's largest change, how it swept).
MDPTETRIS_RUNS = {
    (4, 5): (12.50655387079807, 342, 9.539036e-13, "synchronously (its default), delta limit 1e-12"),
    (5, 5): (
        13.701541078155236,
        97,
        3.494587e-06,
        "in place (its buffer off), stopped here before its delta limit 1e-9 (about 40 s a sweep)",
    ),
}


def _total_lines(width: int, height: int):
    def measure(fast: bool) -> Measurement:
        import babytris

        value, sweeps, delta, how = MDPTETRIS_RUNS[(width, height)]
        s = babytris.solve(
            width=width, height=height, pieces="tetrominoes", line_scores=(0, 1, 2, 3, 4), discount=1, tol=1e-12
        )
        # Each of its sweeps updates the reachable grids in place (or all at once) from the others:
        # its last change bounds its own error by delta x the longest game (solvers/termination.py).
        longest, error = s.longest_game or math.inf, s.error_bound or 0.0  # both set at discount=1
        slack = delta * longest + error
        gap = abs(s.start_value - value)
        return Measurement(
            s.start_value,
            AGREES if gap <= slack else DIFFERS,
            f"babytris's exact total at discount=1 over the {s.transitions.n_boards:,} boards reachable from the "
            f"empty one (error <= {error:.0e}; games last at most {longest:.1f} placements "
            f"expected); mdptetris_value_iteration swept all 2^{width * height} grids {sweeps} times, {how}, "
            f"to a last change of {delta:.1e}, so its value lies within {slack:.0e} of the truth, and the two "
            f"lie {gap:.0e} apart. The same game: seven tetrominoes, 19 rotations, drawn uniformly, dropped "
            "straight down, a point a line; a piece ending above the top row ends mdptetris's game with "
            "nothing and is no move in babytris's (the same values, none being negative)",
        )

    return measure


for (_width, _height), _run in MDPTETRIS_RUNS.items():
    claim(
        f"mdptetris-total-lines-{_width}x{_height}",
        "mdptetris",
        f"expected lines until game over from the empty grid, optimal play, seven tetrominoes drawn uniformly, "
        f"gamma 1 (mdptetris_value_iteration, run here), {_width}x{_height}",
        _run[0],
        f"babytris.solve(width={_width}, height={_height}, pieces='tetrominoes', line_scores=(0, 1, 2, 3, 4), "
        "discount=1).start_value",
        fast=_width * _height <= 20,
    )(_total_lines(_width, _height))
