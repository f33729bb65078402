"""Regenerate tests/data/counts.json: reachable-board counts from the pure-Python reference.

The counts come from ``babytris.reference.reachable_boards`` only (no compiled
code), so the table is an independent check of the core's enumeration, in the
spirit of chess perft tables.  Run with the installed package, from anywhere:

    /tmp/venv/bin/python -P tests/data/make_counts.py

(``-P`` keeps the source tree off ``sys.path``.)  It takes a couple of minutes,
mostly 4x5 with trominoes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from babytris import Rules, reference


def bar(n: int) -> list[list[int]]:
    return [[x, 0] for x in range(n)]


def square(n: int) -> list[list[int]]:
    return [[x, y] for y in range(n) for x in range(n)]


#: (name, Rules keyword arguments).  Pieces are catalogue names, group names or cell lists.
RULE_SETS: list[tuple[str, dict]] = [
    ("3x3 trominoes", dict(width=3, height=3)),
    ("3x4 trominoes", dict(width=3, height=4)),
    ("4x3 trominoes", dict(width=4, height=3)),
    ("4x4 trominoes", dict(width=4, height=4)),
    ("4x5 trominoes", dict(width=4, height=5)),
    ("5x3 trominoes", dict(width=5, height=3)),
    ("6x3 trominoes", dict(width=6, height=3)),
    ("4x4 tetrominoes", dict(width=4, height=4, pieces="tetrominoes")),
    ("4x5 tetrominoes", dict(width=4, height=5, pieces="tetrominoes")),
    ("5x3 tetrominoes", dict(width=5, height=3, pieces="tetrominoes")),
    ("3x4 I", dict(width=3, height=4, pieces=["I"])),
    ("2x4 I", dict(width=2, height=4, pieces=["I"])),
    ("1x5 I", dict(width=1, height=5, pieces=["I"])),
    ("16x1 I", dict(width=16, height=1, pieces=["I"])),
    ("4x4 L", dict(width=4, height=4, pieces=["L"])),
    ("4x4 O", dict(width=4, height=4, pieces=["O"])),
    ("4x4 T S Z", dict(width=4, height=4, pieces=["T", "S", "Z"])),
    ("3x5 I L O", dict(width=3, height=5, pieces=["I", "L", "O"])),
    ("3x3 I domino", dict(width=3, height=3, pieces=["I", [[0, 0], [1, 0]]])),
    ("4x3 monomino", dict(width=4, height=3, pieces=[[[0, 0]]])),
    ("8x8 3x3 square", dict(width=8, height=8, pieces=[square(3)])),
    ("8x8 4x4 square", dict(width=8, height=8, pieces=[square(4)])),
    ("32x2 bar of 20", dict(width=32, height=2, pieces=[bar(20)])),
    ("64x1 bar of 20", dict(width=64, height=1, pieces=[bar(20)])),
]

#: Published facts the table must reproduce.
KNOWN = {"4x4 trominoes": 12_978, "4x5 trominoes": 182_101}


def main() -> None:
    table = []
    for name, kwargs in RULE_SETS:
        started = time.perf_counter()
        n = len(reference.reachable_boards(Rules(**kwargs)))
        print(f"{name:20s} {n:>9,} boards  {time.perf_counter() - started:6.1f} s", flush=True)
        if name in KNOWN and n != KNOWN[name]:
            raise SystemExit(f"{name}: the reference finds {n} boards, the published count is {KNOWN[name]}")
        table.append({"name": name, "rules": kwargs, "boards": n})
    out = Path(__file__).with_name("counts.json")
    out.write_text(json.dumps(table, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
