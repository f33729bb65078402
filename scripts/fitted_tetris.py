"""Fitted value iteration on full-size Tetris (10 x 20, seven tetrominoes): Bodoia & Puranik's Table 1.

For each feature set: fit a linear value function by fitted value iteration
(1,000 boards sampled by random play, discount 0.9, reward 1 per line,
losing costs 20, until no weight moves more than 0.01), five times with
different seeds, and let each greedy policy play 100 games; report the mean
lifespan (placements until the game is lost) and the mean weights, beside
the published figures.  Then richer feature sets.

    python scripts/fitted_tetris.py [--runs 5] [--games 100] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from babytris.big.fitted import fitted_value_iteration
from babytris.big.tetris import Tetris, play_greedy

#: The paper's Table 1: feature set -> (average lifespan, parameter vector).
PUBLISHED = {
    (): (25.8, (-13.8,)),
    ("max_height",): (56.8, (21.8, -2.8)),
    ("holes",): (47.7, (17.6, -2.5)),
    ("covers",): (40.5, (12.6, -1.0)),
    ("max_height", "holes"): (126.0, (8.2, -0.4, -0.7)),
    ("max_height", "covers"): (72.1, (63.1, -3.7, -0.2)),
    ("holes", "covers"): (42.0, (-15.1, -5.5, -0.1)),
    ("max_height", "holes", "covers"): (129.4, (-17.0, -1.0, -0.9, -0.1)),
}
#: Richer feature sets: name -> (features, boards per round, rounds, exploration of the later rounds).
RICHER = {
    "+ bumpiness, wells": (("max_height", "holes", "covers", "bumpiness", "well_runs"), 1000, 1, 0.0),
    "+ row and column transitions": (
        ("max_height", "holes", "covers", "bumpiness", "well_runs", "row_transitions", "column_transitions_open_top"),
        1000,
        1,
        0.0,
    ),
    "column heights, differences, holes, wells, transitions": (
        ("heights", "differences", "holes", "well_runs", "row_transitions", "column_transitions_open_top"),
        1000,
        1,
        0.0,
    ),
    "NH, wells, transitions; 10 rounds of 10,000 greedy-play boards (epsilon 0.05)": (
        ("holes", "well_runs", "row_transitions", "column_transitions_open_top"),
        10_000,
        10,
        0.05,
    ),
}
SHORT = {"max_height": "MH", "holes": "NH", "covers": "NC"}


def run(
    tetris: Tetris,
    features,
    runs: int,
    games: int,
    max_placements: int,
    n_samples: int = 1000,
    rounds: int = 1,
    epsilon: float = 0.0,
) -> dict:
    lifespans, lines, weights, seconds, iterations, converged = [], [], [], [], [], []
    for seed in range(runs):
        fit = fitted_value_iteration(
            tetris,
            features,
            n_samples=n_samples,
            rounds=rounds,
            epsilon=epsilon,
            discount=0.9,
            loss=tetris.height,
            tol=0.01,
            seed=seed,
        )
        games_played = play_greedy(
            tetris,
            fit.value.weights,
            features,
            line_rewards="scores",
            discount=0.9,
            n_games=games,
            max_placements=max_placements,
            seed=1000 + seed,
        )
        lifespans.append(games_played.mean_placements)
        lines.append(games_played.mean_lines)
        if fit.converged:  # a diverged fit's policy still plays (its lifespan counts); its weights do not
            weights.append(fit.value.weights)
        converged.append(fit.converged)
        seconds.append(fit.seconds)
        iterations.append(list(fit.iterations))
    return dict(
        features=list(features),
        lifespan=float(np.mean(lifespans)),
        lifespans=lifespans,
        lines=float(np.mean(lines)),
        weights=np.mean(weights, axis=0).tolist() if weights else None,
        converged=converged,
        fit_seconds=float(np.median(seconds)),
        iterations=iterations,
    )


def _diverged(result: dict) -> str:
    bad = result["converged"].count(False)
    return f" ({bad} of {len(result['converged'])} fits diverged)" if bad else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fits per feature set (the paper: 5)")
    parser.add_argument("--games", type=int, default=100, help="games per fit (the paper: 100)")
    parser.add_argument("--max-placements", type=int, default=1_000_000, help="a game stops after this many")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    tetris = Tetris(width=10, height=20, line_scores=(0, 1, 2, 3, 4))  # 1 per line, as the paper rewards
    started = time.perf_counter()
    results = []
    print(
        "| feature set | lifespan (paper) | lifespan (babytris) | lines per game | weights (paper) "
        "| weights (babytris) |"
    )
    print("|---|---:|---:|---:|---|---|")
    for features, (lifespan, weights) in PUBLISHED.items():
        r = run(tetris, features, args.runs, args.games, args.max_placements)
        results.append(dict(r, published_lifespan=lifespan, published_weights=list(weights)))
        name = ", ".join(SHORT[f] for f in features) or "constant"
        print(
            f"| {name} | {lifespan} | {r['lifespan']:.1f}{_diverged(r)} | {r['lines']:.1f} | {weights} | "
            f"({', '.join(f'{w:.2f}' for w in r['weights'])}) |",
            flush=True,
        )
    for name, (features, n_samples, rounds, epsilon) in RICHER.items():
        r = run(tetris, features, args.runs, args.games, args.max_placements, n_samples, rounds, epsilon)
        results.append(dict(r, name=name))
        print(f"| {name} | | {r['lifespan']:,.1f}{_diverged(r)} | {r['lines']:,.1f} | | |", flush=True)
    print(f"\n{args.runs} fits x {args.games} games per row; {time.perf_counter() - started:.0f} s in all")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()
