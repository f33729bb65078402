"""Regenerate tests/data/partitions.json: state and board group counts of the
coarsest equal-value partition (and of the coarsest strong bisimulation, the
same without merging the zero-valued states), from the pure-Python reference.

The counts come from ``babytris.reference.minimize`` only (no compiled code),
so the table checks the core's refinement independently.  Run with the
installed package, from anywhere:

    /tmp/venv/bin/python -P tests/data/make_partitions.py

It takes about an hour, mostly 4x5 with previews.  ``--missing`` computes
only the cases the file does not have yet and keeps the rest.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from babytris import Reward, Rules, reference

#: (name, Rules keyword arguments, minimize keyword arguments).
CASES: list[tuple[str, dict, dict]] = [
    ("3x4 random", dict(width=3, height=4), dict(opponent="random")),
    ("4x4 random", dict(width=4, height=4), dict(opponent="random")),
    ("4x4 minimax", dict(width=4, height=4), dict(opponent="minimax")),
    ("4x4 gaps", dict(width=4, height=4), dict(opponent="gaps")),
    ("4x4 random, unequal pieces", dict(width=4, height=4, probabilities=(0.3, 0.7)), dict(opponent="random")),
    (
        "4x4 random, weighted reward",
        dict(width=4, height=4),
        dict(opponent="random", reward=Reward(lines=0, height=1, score=4, gaps=1.5)),
    ),
    ("4x5 random", dict(width=4, height=5), dict(opponent="random")),
    ("4x5 minimax", dict(width=4, height=5), dict(opponent="minimax")),
    ("4x4 random, preview 1", dict(width=4, height=4, preview=1), dict(opponent="random")),
    ("4x4 random, preview 2", dict(width=4, height=4, preview=2), dict(opponent="random")),
    ("4x4 minimax, preview 2", dict(width=4, height=4, preview=2), dict(opponent="minimax")),
    ("4x5 random, preview 1", dict(width=4, height=5, preview=1), dict(opponent="random")),
    ("4x5 random, preview 2", dict(width=4, height=5, preview=2), dict(opponent="random")),
    ("4x4 random, hold", dict(width=4, height=4, hold=True), dict(opponent="random")),
    ("4x4 random, preview 1, hold", dict(width=4, height=4, preview=1, hold=True), dict(opponent="random")),
    ("4x4 minimax, preview 1, hold", dict(width=4, height=4, preview=1, hold=True), dict(opponent="minimax")),
    ("4x4 random, preview 2, hold", dict(width=4, height=4, preview=2, hold=True), dict(opponent="random")),
    ("4x5 random, hold", dict(width=4, height=5, hold=True), dict(opponent="random")),
]


#: The largest game whose strong bisimulation the table records (the reference takes minutes beyond).
BISIMULATION_STATES = 400_000


def main() -> None:
    path = Path(__file__).with_name("partitions.json")
    partial = path.with_suffix(".partial.json")
    source = partial if partial.exists() else path
    have = {row["name"]: row for row in json.loads(source.read_text())} if "--missing" in sys.argv else {}
    out = []
    for name, rules, options in CASES:
        if name in have:
            out.append(have[name])
            continue
        started = time.perf_counter()
        states, boards = reference.minimize(Rules(**rules), **options)
        # the strong bisimulation too, where the reference is quick enough
        bisim = len(states) <= BISIMULATION_STATES
        if bisim:
            bisim_states, bisim_boards = reference.minimize(Rules(**rules), zero_states=False, **options)
        row = {
            "name": name,
            "rules": rules,
            "opponent": options["opponent"],
            "reward": None if "reward" not in options else vars(options["reward"]),
            "preview": rules.get("preview", 0),
            "hold": rules.get("hold", False),
            "states": len(states),
            "state_classes": len(set(states.values())),
            "boards": len(boards),
            "board_classes": len(set(boards.values())),
            "bisimulation_state_classes": len(set(bisim_states.values())) if bisim else None,
            "bisimulation_board_classes": len(set(bisim_boards.values())) if bisim else None,
        }
        print(f"{name}: {row['states']} -> {row['state_classes']} states, {time.perf_counter() - started:.1f} s")
        out.append(row)
        partial = path.with_suffix(".partial.json")  # a long run's progress, for --missing after a stop
        partial.write_text(json.dumps(out, indent=1) + "\n")
    if out[1]["states"] != 25_956 or out[6]["boards"] != 182_101:
        raise SystemExit("the reference does not reproduce 25,956 states on 4x4 and 182,101 boards on 4x5")
    path.write_text(json.dumps(out, indent=1) + "\n")
    partial.unlink(missing_ok=True)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
