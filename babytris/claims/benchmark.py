"""A quick benchmark of the solvers (``babytris bench``): medians of a few runs.

For the figures quoted in the README use the pytest-benchmark suites in
``bench/`` (``python bench/report.py``); this one answers "how fast is it on
this machine?" in seconds, with the same code paths.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from ..analysis.evaluate import play
from ..engine.enumeration import enumerate_boards
from ..game.rules import Rules
from ..game.validation import check_int
from ..solvers.solve import solve_transitions

__all__ = ["BenchmarkRow", "Benchmark", "quick_benchmark", "DEFAULT_SIZES"]

#: Board sizes (width, height) benchmarked by default.
DEFAULT_SIZES = ((4, 4), (4, 5))
#: Games of the playout measurement, each of ``PLAYOUT_PLACEMENTS`` placements at most.
PLAYOUT_GAMES = 200
PLAYOUT_PLACEMENTS = 10_000


@dataclass(frozen=True)
class BenchmarkRow:
    """Medians over the repeats for one board size (seconds, or placements per second).

    Attributes:
        size: ``"WxH"``.
        boards: reachable boards.
        enumerate: the search and the move table.
        solve: optimal play against random pieces on the enumerated table (MPI).
        minimax: the max-min player against the worst pieces (VI).
        playouts: placements per second of the optimal player's games.
        sweeps: greedy sweeps of the random-pieces solve.
    """

    size: str
    boards: int
    enumerate: float
    solve: float
    minimax: float
    playouts: float
    sweeps: int


@dataclass(frozen=True)
class Benchmark:
    """The result of :func:`quick_benchmark`.

    Attributes:
        rows: one :class:`BenchmarkRow` per size.
        reference: ``(size, reference seconds, core seconds)`` of the full
            solve by :mod:`babytris.reference` and by the core, or None.
        repeat: runs per median.
    """

    rows: tuple[BenchmarkRow, ...]
    reference: tuple[str, float, float] | None
    repeat: int

    def to_records(self) -> dict:
        """Plain data for JSON: ``{"repeat", "rows": [dict, ...], "reference": dict | None}``."""
        reference = None
        if self.reference is not None:
            size, slow, fast = self.reference
            reference = {"size": size, "reference_seconds": slow, "core_seconds": fast, "ratio": slow / fast}
        return {"repeat": self.repeat, "rows": [asdict(row) for row in self.rows], "reference": reference}

    def __str__(self) -> str:
        lines = [
            f"medians of {self.repeat} runs; seconds unless stated",
            "size        boards   enumerate      solve    minimax   sweeps   playouts (placements/s)",
        ]
        for r in self.rows:
            lines.append(
                f"{r.size:5} {r.boards:>12,} {r.enumerate:>11.4f} {r.solve:>10.4f} {r.minimax:>10.4f} "
                f"{r.sweeps:>8} {r.playouts:>10.3g}"
            )
        if self.reference is not None:
            size, slow, fast = self.reference
            lines.append(
                f"{size} full solve: babytris.reference {slow:.3f} s, core {fast:.4f} s: {slow / fast:,.0f}x faster"
            )
        return "\n".join(lines)


def quick_benchmark(
    sizes: Sequence[tuple[int, int]] = DEFAULT_SIZES,
    *,
    repeat: int = 3,
    reference: bool = True,
    n_jobs: int | None = None,
) -> Benchmark:
    """Time enumeration, solves (random pieces and minimax) and playouts on
    each ``(width, height)`` of Baby Tetris (I and L, discount 0.9), and the
    pure-Python reference against the core on 4x3.

    Args:
        sizes: board sizes, each with ``width * height <= 30`` (quick work only).
        repeat: runs per median, in [1, 100].
        reference: also time :func:`babytris.reference.solve` (about a second).
        n_jobs: threads (default: every core).

    Returns:
        :class:`Benchmark`.
    """
    repeat = check_int("repeat", repeat, 1, 100)
    pairs: list[tuple[int, int]] = []
    for size in sizes:
        pair = tuple(size)
        if len(pair) != 2:
            raise ValueError(f"sizes: each entry must be (width, height), got {size!r}")
        pairs.append((pair[0], pair[1]))
    if not pairs:
        raise ValueError("sizes must name at least one (width, height)")
    for width, height in pairs:
        Rules(width=width, height=height)  # validates
        if width * height > 30:
            raise ValueError(
                f"sizes: {width}x{height} has {width * height} cells; the quick benchmark takes "
                f"at most 30 (use bench/ for bigger boards)"
            )
    rows = tuple(_row(Rules(width=w, height=h), repeat, n_jobs) for w, h in pairs)
    slow_fast = None
    if reference:
        from ..reference import solvers as pure

        rules = Rules(width=4, height=3)
        slow = _median(lambda: pure.solve(rules), repeat)
        fast = _median(lambda: solve_transitions(enumerate_boards(rules, n_jobs=n_jobs), n_jobs=n_jobs), repeat)
        slow_fast = ("4x3", slow, fast)
    return Benchmark(rows, slow_fast, repeat)


def _row(rules: Rules, repeat: int, n_jobs: int | None) -> BenchmarkRow:
    t = enumerate_boards(rules, n_jobs=n_jobs)
    solution = solve_transitions(t, n_jobs=n_jobs)

    def playouts() -> None:
        result = play(solution, n_placements=PLAYOUT_PLACEMENTS, n_games=PLAYOUT_GAMES, n_jobs=n_jobs)
        placed.append(int(result.placements.sum()))

    placed: list[int] = []
    seconds = _median(playouts, repeat)
    return BenchmarkRow(
        size=f"{rules.width}x{rules.height}",
        boards=t.n_boards,
        enumerate=_median(lambda: enumerate_boards(rules, n_jobs=n_jobs), repeat),
        solve=_median(lambda: solve_transitions(t, n_jobs=n_jobs), repeat),
        minimax=_median(lambda: solve_transitions(t, opponent="minimax", n_jobs=n_jobs), repeat),
        playouts=statistics.median(placed) / seconds,
        sweeps=solution.iterations,
    )


def _median(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)
