"""The exact regret of approximate policies on Baby Tetris (the README's regret table).

Trains fitted value iteration (several feature sets) and TD(lambda) on 4x4
and 4x5 Baby Tetris, turns each into its greedy policy over every state, and
evaluates that policy exactly (policy evaluation on the enumerated table)
against the optimal value, discount 0.9.  Prints a Markdown table; takes a
few minutes.

    python scripts/regret_table.py [--sizes 4x4 4x5] [--td-games 20000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import babytris
from babytris.big import fitted, td
from babytris.big.features import feature_matrix
from babytris.big.games import ExactGame

PAPER = ("max_height", "holes", "covers")
RICH = (
    "heights",
    "differences",
    "max_height",
    "holes",
    "covers",
    "well_runs",
    "row_transitions",
    "column_transitions_open_top",
)


def methods(td_games: int):
    """(name, trainer) pairs; a trainer takes the table and returns (value function, seconds)."""

    def fvi(features, rounds, samples):
        def train(t):
            r = fitted.fitted_value_iteration(t, features, n_samples=samples, rounds=rounds, seed=0)
            return r.value, r.seconds

        return train

    def projection(features):
        def train(t):
            started = time.perf_counter()
            rows = ExactGame(t).rows_of_all
            optimal = babytris.solve_transitions(t)
            weights, *_ = np.linalg.lstsq(
                feature_matrix(rows, t.rules.width, features), optimal.board_values, rcond=None
            )
            return fitted.LinearValue(features, weights, t.rules.width), time.perf_counter() - started

        return train

    def temporal(points):
        def train(t):
            kwargs = dict(points=True, game_over=0.0) if points else {}
            r = td.td_lambda(
                t, n_games=td_games, max_placements=200, report_every=max(1, td_games // 10), seed=0, **kwargs
            )
            return r.network, r.seconds

        return train

    return [
        ("FVI, max height + holes + covers (paper: 1,000 random-play samples)", fvi(PAPER, 1, 1000)),
        ("FVI, same features, 3 rounds resampled by the policy (epsilon 0.3)", fvi(PAPER, 3, 1000)),
        ("FVI, richer features (heights, differences, wells, transitions, ...), 5 x 5,000 samples", fvi(RICH, 5, 5000)),
        ("least squares on the exact values, paper's features (best linear fit)", projection(PAPER)),
        ("least squares on the exact values, richer features", projection(RICH)),
        (f"TD(lambda), paper's network and rewards (+1/+5/-10), {td_games:,} games", temporal(False)),
        (f"TD(lambda), paper's network, rewarded with points, {td_games:,} games", temporal(True)),
    ]


def random_player(t) -> float:
    return babytris.solve_transitions(t, player="random").start_value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["4x4", "4x5"])
    parser.add_argument("--td-games", type=int, default=20_000)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    tables = {}
    for size in args.sizes:
        width, height = map(int, size.split("x"))
        t = babytris.enumerate_boards(babytris.Rules(width=width, height=height))
        rows = []
        for name, train in methods(args.td_games):
            value, seconds = train(t)
            report = fitted.regret(t, fitted.greedy_policy(t, value))
            rows.append(
                dict(
                    method=name,
                    optimal=report.optimal,
                    value=report.policy,
                    regret=report.regret,
                    mean_regret=report.mean_regret,
                    seconds=seconds,
                )
            )
            print(
                f"{size} {name}: value {report.policy:.3f} regret {report.regret:.3f} "
                f"(mean over states {report.mean_regret:.3f}) in {seconds:.1f} s",
                flush=True,
            )
        tables[size] = dict(rows=rows, optimal=rows[0]["optimal"], random=random_player(t))
    print()
    print("| method | " + " | ".join(f"{s} value | {s} regret | {s} mean regret" for s in args.sizes) + " |")
    print("|---|" + "---:|---:|---:|" * len(args.sizes))
    names = [r["method"] for r in tables[args.sizes[0]]["rows"]]
    for i, name in enumerate(names):
        cells = [
            f"{tables[s]['rows'][i]['value']:.3f} | {tables[s]['rows'][i]['regret']:.3f} | "
            f"{tables[s]['rows'][i]['mean_regret']:.3f}"
            for s in args.sizes
        ]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| optimal (exact) | " + " | ".join(f"{tables[s]['optimal']:.3f} | 0 | 0" for s in args.sizes) + " |")
    print(
        "| random placements (exact) | "
        + " | ".join(
            f"{tables[s]['random']:.3f} | {tables[s]['optimal'] - tables[s]['random']:.3f} | " for s in args.sizes
        )
        + " |"
    )
    if args.json:
        with open(args.json, "w") as out:
            json.dump(tables, out, indent=1)


if __name__ == "__main__":
    main()
