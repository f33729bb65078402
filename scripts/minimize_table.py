"""The minimization table of docs/results.md: group counts (and the strong
bisimulation's) and times, for Baby Tetris with previews and hold.

    python scripts/minimize_table.py > /tmp/minimize.md

Times are single runs (the minimization, the full solve, the solve with
minimize=True), so read them as rough; the counts are exact.
"""

from __future__ import annotations

import time

import babytris

CASES = [
    ("4x4", dict(width=4, height=4), ("random", "minimax", "minavg", "gaps")),
    ("4x4, preview 1", dict(width=4, height=4, preview=1), ("random",)),
    ("4x4, preview 2", dict(width=4, height=4, preview=2), ("random",)),
    ("4x5", dict(width=4, height=5), ("random", "minimax", "minavg", "gaps")),
    ("4x5, preview 1", dict(width=4, height=5, preview=1), ("random",)),
    ("4x5, preview 2", dict(width=4, height=5, preview=2), ("random", "minimax")),
    ("4x4, hold", dict(width=4, height=4, hold=True), ("random",)),
    ("4x4, preview 1, hold", dict(width=4, height=4, preview=1, hold=True), ("random",)),
    ("4x4, preview 2, hold", dict(width=4, height=4, preview=2, hold=True), ("random",)),
    ("4x5, hold", dict(width=4, height=5, hold=True), ("random",)),
    ("4x5, preview 1, hold", dict(width=4, height=5, preview=1, hold=True), ("random",)),
    ("4x5, preview 2, hold", dict(width=4, height=5, preview=2, hold=True), ("random",)),
]


def seconds(f) -> tuple[object, float]:
    started = time.perf_counter()
    out = f()
    return out, time.perf_counter() - started


def main() -> None:
    print(
        "| Game | opponent | states | state groups (strong bisimulation) | keeping game over | board rows | row groups "
        "| minimize | full solve | with minimize |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, rules, opponents in CASES:
        t = babytris.enumerate_boards(babytris.Rules(**rules))
        for opponent in opponents:
            p = babytris.minimize(t, opponent=opponent)
            bisimulation = babytris.minimize(t, opponent=opponent, zero_states=False)
            _, full = seconds(lambda t=t, o=opponent: babytris.solve_transitions(t, discount=0.9, opponent=o))
            _, quotient = seconds(
                lambda t=t, o=opponent: babytris.solve_transitions(t, discount=0.9, opponent=o, minimize=True)
            )
            print(
                f"| {name} | {opponent} | {p.n_states:,} | {p.n_classes:,} | {bisimulation.n_classes:,} "
                f"| {p.n_boards:,} | {p.n_board_classes:,} | {p.seconds:.2f} s | {full:.2f} s | {quotient:.2f} s |",
                flush=True,
            )


if __name__ == "__main__":
    main()
