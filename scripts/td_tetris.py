r"""TD(lambda) on full-size Tetris (10 x 20, seven tetrominoes): Pirnay & Arabagi's learning curve.

The paper's set-up: the 200 board cells in, 80 sigmoid hidden units, one
output; rewards +1 per placement, +5 per line, -10 at game over; eta 0.01,
lambda 0.6, gamma 0.9; moves drawn by the paper's exploration rule.  Prints
lines per game (N_L) and the share of exploring moves (N_E) per block of
games, and draws the curve.

    python scripts/td_tetris.py --games 700000 --every 1000 \
        --png docs/images/td_curve.png --json docs/data/td_curve.json

The games run compiled (about 1 ms each; 700,000 in 717 s on one core); ``--engine numpy``
runs the reference loop instead (about 12 ms a game, with one BLAS thread: the matrices
are small, and threads cost more than they save).  ``--redraw JSON`` draws a saved curve.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads

import numpy as np  # noqa: E402

from babytris.big import td  # noqa: E402
from babytris.big.tetris import Tetris  # noqa: E402

#: The paper's Table 3: thousands of games -> (lines per game N_L, exploring share N_E).
PUBLISHED = {10: (0.21, 0.86), 300: (0.45, 0.81), 700: (0.77, 0.76)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--every", type=int, default=2_000, help="games per point of the curve")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--png", metavar="FILE")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--engine", choices=td.ENGINES, default="auto")
    parser.add_argument("--redraw", metavar="JSON", help="draw the curve saved in JSON (with --png) and stop")
    args = parser.parse_args()
    if args.redraw:
        with open(args.redraw) as saved:
            draw(json.load(saved), args.png or "td_curve.png")
        return
    tetris = Tetris(width=10, height=20)
    started = time.perf_counter()

    def report(games: int, lines: float) -> None:
        print(f"{games:>8,} games  {lines:.3f} lines/game  {time.perf_counter() - started:7.0f} s", flush=True)

    result = td.td_lambda(
        tetris, n_games=args.games, report_every=args.every, seed=args.seed, progress=report, engine=args.engine
    )
    curve = dict(
        games=result.games.tolist(),
        lines_per_game=result.lines_per_game.tolist(),
        placements_per_game=result.placements_per_game.tolist(),
        explored=result.explored.tolist(),
        seconds=result.seconds,
        published=PUBLISHED,
    )
    print(
        f"\n{args.games:,} games in {result.seconds:.0f} s ({result.seconds / args.games * 1e3:.1f} ms a game); "
        f"last block: {result.lines_per_game[-1]:.3f} lines/game, N_E {result.explored[-1]:.2f}"
    )
    if args.json:
        with open(args.json, "w") as out:
            json.dump(curve, out, indent=1)
    if args.png:
        draw(curve, args.png)


def draw(curve: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.4), layout="constrained")
    ax = fig.add_subplot()
    games = np.array(curve["games"]) / 1000
    lines = np.array(curve["lines_per_game"])
    if len(lines) > 100:  # many blocks: draw them faintly, and their running mean over 20
        label = "babytris TD(λ): lines per game (N_L), per block"
        ax.plot(games, lines, "-", lw=0.5, color="C0", alpha=0.35, label=label)
        mean = np.convolve(lines, np.ones(20) / 20, mode="valid")
        ax.plot(games[19:], mean, "-", lw=1.5, color="C0", label="the same, mean over 20 blocks")
    else:
        ax.plot(games, lines, ".-", ms=3, lw=1, label="babytris TD(λ): lines per game (N_L)")
    ax.plot(games, curve["explored"], "-", lw=1, color="0.6", label="share of exploring moves (N_E)")
    published = sorted(curve["published"].items(), key=lambda kv: int(kv[0]))
    ax.plot(
        [int(k) for k, _ in published], [v[0] for _, v in published], "s", color="C3", label="Pirnay & Arabagi: N_L"
    )
    ax.set_xlabel("games played (thousands)")
    ax.set_ylabel("per game / share")
    ax.set_title("TD(λ) on 10 x 20 Tetris, the paper's network and rewards")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=100, metadata={"Software": None})
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
