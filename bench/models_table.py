"""Print the sizes of Block Drop and No-Holes Tetris babytris solves exactly,
and how long it takes: a Markdown table of boards, states, sweeps, the median
of 3 full solves (enumeration included) and the peak memory.

    python bench/models_table.py                 # every series, up to a minute a solve (~20 min)
    python bench/models_table.py --quick         # the paper's sizes only
    python bench/models_table.py --max-seconds 10 --max-gib 4

Each size runs in a fresh interpreter (in an empty directory, so it imports
the installed babytris): ``model.solve(discount=0.9, tol=1e-8)`` three times,
the peak resident memory above the bare import measured as in
``bench/conftest.py``.  A series stops at the first size whose median is over
``--max-seconds`` or that needs more than ``--max-gib`` (the solver refuses,
with ``max_memory``, work it estimates above it; the peak is checked too).
Sizes are the paper's ``m x n``: m rows (height), n columns (width).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

#: (label, model function, pieces, sizes m x n in order of growing work)
SERIES = [
    (
        "Block Drop",
        "block_drop",
        None,
        [(4, 4), (5, 4), (6, 4), (7, 5), (8, 6), (10, 6), (9, 7), (8, 8), (7, 9), (6, 10)],
    ),
    (
        "No-Holes Tetris, 7 tetrominoes",
        "no_holes_tetris",
        "tetrominoes",
        [(4, 4), (5, 4), (6, 4), (5, 5), (6, 5), (6, 6), (7, 6), (7, 7), (8, 7), (9, 7), (8, 8)],
    ),
    (
        "No-Holes Tetris, 3 pieces (I4, O, T)",
        "no_holes_tetris",
        ["I4", "O", "T"],
        [(4, 4), (5, 4), (6, 4), (5, 5), (6, 5), (6, 6), (7, 6), (7, 7), (8, 7), (9, 7), (8, 8)],
    ),
    (
        "No-Holes Tetris, 1 piece (T)",
        "no_holes_tetris",
        ["T"],
        [(4, 4), (5, 4), (6, 4), (5, 5), (6, 5), (6, 6), (7, 6), (7, 7), (8, 7), (9, 7), (8, 8), (7, 9), (6, 10)],
    ),
]
QUICK = {(4, 4), (5, 4), (6, 4), (7, 5)}

CHILD = """
import json, re, time, babytris
def kib(key):
    with open("/proc/self/status") as f:
        return int(re.search(key + r":\\s+(\\d+) kB", f.read()).group(1))
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the peak RSS to the current RSS
before = kib("VmRSS")
model = babytris.models.{function}(width={n}, height={m}{pieces})
times = []
try:
    for _ in range(3):
        started = time.perf_counter()
        s = model.solve(discount=0.9, tol=1e-8, max_memory={max_bytes})
        times.append(time.perf_counter() - started)
        if times[-1] > {max_seconds} * 3:
            break  # a median over the limit whatever comes next
except babytris.MemoryLimitError as err:
    print(json.dumps(dict(error=str(err))))
    raise SystemExit
print(json.dumps(dict(boards=s.n_boards, states=s.n_states, moves=s.transitions.n_moves, sweeps=s.iterations,
                      converged=s.converged, start_value=s.start_value, times=times,
                      enumerate=s.seconds["enumerate"], solve=s.seconds["solve"],
                      peak_mib=(kib("VmHWM") - before) / 1024)))
"""


def measure(function: str, m: int, n: int, pieces, max_seconds: float, max_gib: float) -> dict:
    code = CHILD.format(
        function=function,
        m=m,
        n=n,
        pieces="" if pieces is None else f", pieces={pieces!r}",
        max_bytes=int(max_gib * 2**30),
        max_seconds=max_seconds,
    )
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        return dict(error=done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the paper's sizes only")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="stop a series past this median (60)")
    parser.add_argument("--max-gib", type=float, default=8.0, help="memory budget of a solve in GiB (8)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(
        "| Model | m x n (rows x columns) | Boards | States | Paper's states | Sweeps | Solve (median of 3) "
        "| Min–max | Enumerate + solve | Peak memory |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, function, pieces, sizes in SERIES:
        n_pieces = 1 if pieces is None else (7 if pieces == "tetrominoes" else len(pieces))
        for m, n in sizes:
            if args.quick and (m, n) not in QUICK:
                continue
            r = measure(function, m, n, pieces, args.max_seconds, args.max_gib)
            paper = f"{n_pieces * m**n + 1:,}"
            if "error" in r:
                print(f"| {label} | {m}x{n} | | | {paper} | | not solved: {r['error'][:120]} | | | |", flush=True)
                break
            median = statistics.median(r["times"])
            print(
                f"| {label} | {m}x{n} | {r['boards']:,} | {r['states']:,} | {paper} | {r['sweeps']} "
                f"| {median:.3g} s | {min(r['times']):.3g}–{max(r['times']):.3g} s "
                f"| {r['enumerate']:.3g} + {r['solve']:.3g} s | {r['peak_mib'] / 1024:.2f} GiB |",
                flush=True,
            )
            if median > args.max_seconds or r["peak_mib"] > args.max_gib * 1024:
                break
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"\n{os.cpu_count()} cores; discount 0.9, tol 1e-8; load average {load:.2f} at the end; "
        f"the run took {time.perf_counter() - started:.0f} s."
    )


if __name__ == "__main__":
    main()
