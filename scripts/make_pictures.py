"""Draw the README's pictures into docs/images/: a board with the optimal moves, convergence, EXP3's regret.

    python scripts/make_pictures.py [--out docs/images]

Writes ``board.png`` (a 4x5 board, then the best move for I and for L on it
with the state's value) and ``convergence.png`` (the residual of each greedy
sweep solving the default 4x5 game by value iteration and by modified policy
iteration, with and without acceleration), and ``exp3_regret.png`` (EXP3
over the eight exact policies of :func:`babytris.analysis.adaptive.standard_experts`
against each tournament opponent, 10,000 placements of 4x4, seed 0; its
figures are in docs/results.md).  Deterministic: rerunning gives
the same bytes.  Needs matplotlib (``pip install 'babytris[plot]'``); takes
a few seconds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

import babytris  # noqa: E402
from babytris import Board, Rules  # noqa: E402
from babytris.analysis.adaptive import exp3_study  # noqa: E402
from babytris.draw.pictures import draw_board, draw_move, plot_convergence, plot_regret, save  # noqa: E402

RULES = Rules(width=4, height=5)
# Reachable (an I and an L); the best L clears two rows, the best I stands in the side column.
BOARD = Board.from_rows(["#..#", "##.#"], height=5)
DPI = 100


def board_picture(solution: babytris.Solution) -> Figure:
    """Three panels: the board, then the policy's move for each piece on it."""
    fig = Figure(figsize=(6.0, 2.9), layout="constrained")
    panels = fig.subplots(1, 1 + RULES.n_pieces)
    draw_board(BOARD, ax=panels[0], title=f"{RULES.width}x{RULES.height} board\n")
    for ax, piece in zip(panels[1:], RULES.piece_names):
        draw_move(solution, BOARD, piece, ax=ax)
    return fig


def convergence_picture() -> Figure:
    """Residual per greedy sweep of the default 4x5 game, four ways."""
    runs, labels = [], []
    for method, name in (("vi", "value iteration"), ("mpi", "modified policy iteration")):
        for accelerate in (False, True):
            run = babytris.solve(RULES, method=method, accelerate=accelerate)
            runs.append(run)
            labels.append(f"{name}{', accelerated' if accelerate else ''} ({run.iterations})")
    fig = Figure(figsize=(6.0, 3.4), layout="constrained")
    plot_convergence(
        *runs,
        labels=labels,
        ax=fig.add_subplot(),
        title=f"Solving {RULES.width}x{RULES.height} Baby Tetris (discount {runs[0].discount})",
    )
    return fig


def regret_picture() -> Figure:
    """EXP3's regret against the best fixed policy, 4x4, each tournament opponent."""
    results = exp3_study(babytris.enumerate_boards(Rules(width=4, height=4)), n_placements=10_000, seed=0)
    fig = Figure(figsize=(6.0, 3.4), layout="constrained")
    plot_regret(results, ax=fig.add_subplot(), title="EXP3 over 8 exact policies, 4x4, 10,000 placements")
    return fig


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "images")
    out = parser.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)
    solution = babytris.solve(RULES)
    pictures = {"board.png": board_picture(solution), "convergence.png": convergence_picture()}
    pictures["exp3_regret.png"] = regret_picture()
    for name, fig in pictures.items():
        path = save(fig, out / name, dpi=DPI)
        print(f"{path}: {path.stat().st_size / 1024:.1f} KiB")


if __name__ == "__main__":
    main()
