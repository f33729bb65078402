"""Run the benchmark suite once and print the Markdown summary quoted in the README.

    python bench/report.py                  # everything, a few minutes
    python bench/report.py --quick          # -m "not slow": 4x4, 4x5, 5x4 only (the tournament: 4x4)
    python bench/report.py --json out.json  # also keep pytest-benchmark's raw JSON
    python bench/report.py --from-json out.json   # re-print a saved run, no timing

Every figure comes from one pytest run (one process), so ratios between rows
compare like with like on a shared, noisy machine.  Times are medians.  The
pytest output goes to stderr, the Markdown to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent

#: Full-solve time targets, seconds, by (width, height).
TARGETS = {(4, 5): 0.10, (4, 6): 2.0, (5, 5): 7.0}


def run(quick: bool, json_path: Path) -> float:
    """Run the suite in one pytest process, writing ``json_path``; return its wall time."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(BENCH),
        "--benchmark-only",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--benchmark-json={json_path}",
    ]
    if quick:
        command += ["-m", "not slow"]
    print("$", " ".join(command), file=sys.stderr, flush=True)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, stdout=sys.stderr)
    if done.returncode != 0:
        sys.exit(f"benchmark run failed (pytest exit code {done.returncode})")
    return time.perf_counter() - started


def machine(threads: int | None = None) -> list[str]:
    """The machine, as lines; ``threads``: the benchmarks' default thread count
    (as recorded in their ``extra_info``; default this machine's cores)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    omp = [f"{k}={os.environ[k]}" for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT") if k in os.environ]
    threads = threads or os.cpu_count()
    return [
        f"OpenMP environment: {', '.join(omp) if omp else 'defaults'}",
        f"CPU: {cpu}, {os.cpu_count()} logical cores ({usable} usable)",
        f"Threads: {threads} (`n_jobs=None`, the default: every core) write the move table; each kind of sweep "
        f"(greedy, evaluation) runs its layers on {threads} threads or on 1, whichever that solve has timed "
        f"faster (a busy core stalls threaded layers); `babytris.solve(..., n_jobs=1)` runs on one throughout",
        f"Python {platform.python_version()} ({platform.python_implementation()}, {platform.system()} "
        f"{platform.release()}); numpy {version('numpy')}, Cython {version('Cython')}, "
        f"pytest-benchmark {version('pytest-benchmark')}, babytris {version('babytris')}",
    ]


def seconds(t: float | None) -> str:
    if t is None:
        return "—"
    return f"{t:.3f} s" if t < 1 else f"{t:.2f} s"


def spread(entry: dict | None) -> str:
    if entry is None:
        return "—"
    low, high = entry["stats"]["min"], entry["stats"]["max"]
    return f"{low:.3f}–{high:.3f} s" if high < 1 else f"{low:.2f}–{high:.2f} s"


def report(data: dict, wall: float | None) -> str:
    # rows[(width, height)][test name] = benchmark entry
    rows: dict[tuple[int, int], dict[str, dict]] = {}
    reference = None
    # The suites with tables of their own, by file; the rest is the solve table.
    sections: dict[str, list[dict]] = {
        name: []
        for name in ("play", "opponents", "tournament", "rate", "minimize", "mirror", "big", "models", "fitted")
    }
    for b in data["benchmarks"]:
        test = b["name"].split("[")[0]
        section = next((name for name in sections if f"test_bench_{name}.py" in b["fullname"]), None)
        if section is not None:
            sections[section].append(b)
            continue
        if test == "test_reference_4x4":
            reference = b
            continue
        info = b["extra_info"]
        rows.setdefault((info["width"], info["height"]), {})[test] = b

    def median(entries: dict, test: str) -> float | None:
        return entries[test]["stats"]["median"] if test in entries else None

    lines = [
        "| Size | Boards | Moves | Enumeration | Value iteration | Full solve | Full solve min–max | Iterations "
        "| Peak RSS (MiB) | Target (full solve) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    rounds = []
    for (w, h), entries in sorted(rows.items(), key=lambda item: (item[0][0] * item[0][1], item[0])):
        any_entry = next(iter(entries.values()))["extra_info"]
        solve = entries.get("test_solve")
        full = median(entries, "test_solve")
        target = TARGETS.get((w, h))
        if target is None:
            verdict = "—"
        elif full is None:
            verdict = f"<= {target:g} s: not run"
        else:
            verdict = f"<= {target:g} s: {'met' if full <= target else 'not met'}"
        peak = solve["extra_info"].get("peak_rss_mib") if solve else None
        lines.append(
            f"| {w}x{h} | {any_entry['n_boards']:,} | {any_entry['n_moves']:,} "
            f"| {seconds(median(entries, 'test_enumerate'))} | {seconds(median(entries, 'test_value_iteration'))} "
            f"| {seconds(full)} | {spread(solve)} | {solve['extra_info']['iterations'] if solve else '—'} "
            f"| {'—' if peak is None else f'{peak:.1f}'} | {verdict} |"
        )
        if solve:
            rounds.append(f"{w}x{h}: {solve['stats']['rounds']}")

    out = ["## Benchmarks", ""]
    commit = data.get("commit_info") or {}
    if commit.get("id"):
        out.append(
            f"Repository at git {commit['id'][:10]}{' (working tree modified)' if commit.get('dirty') else ''}, "
            f"installed babytris benchmarked, run {data.get('datetime', '')[:19].replace('T', ' ')} UTC."
        )
    threads = [
        b["extra_info"].get("threads")
        for b in data["benchmarks"]
        if "test_bench_play.py" not in b["fullname"] and "test_bench_big.py" not in b["fullname"]
    ]
    out += [f"- {line}" for line in machine(max(filter(None, threads), default=None))]
    out += ["", *lines, ""]
    if reference:
        info = reference["extra_info"]
        core, ref = info["core_median_s"], info.get("reference_median_s")
        if ref is not None:
            out.append(
                f"core vs reference on 4x4: median {core:.4f} s vs {ref:.2f} s, ratio {ref / core:,.0f}× "
                f"({info['core_iterations']} vs {info['iterations']} sweeps; reference peak RSS "
                f"{info.get('peak_rss_mib')} MiB)"
            )
    else:
        out.append("core vs reference on 4x4: not run (slow tests deselected)")
    out += [
        "",
        "Medians of one run (rounds per size: " + ", ".join(rounds) + "; the reference: 1). "
        "Full solve = `babytris.solve(width=W, height=H, discount=0.9, tol=1e-8)`; enumeration = "
        "`enumerate_boards`; value iteration = `solve_transitions` on a pre-enumerated table. "
        "Peak RSS: the most resident memory a full solve adds above `import babytris`, in a fresh process. "
        "Iterations: Bellman optimality (greedy) sweeps.",
    ]
    out += opponents_report(sections["opponents"], rows)
    out += tournament_report(sections["tournament"])
    out += rate_report(sections["rate"])
    out += minimize_report(sections["minimize"])
    out += mirror_report(sections["mirror"], rows)
    out += play_report(sections["play"])
    out += big_report(sections["big"])
    out += plain_report("Seed models (test_bench_models.py)", sections["models"])
    out += plain_report("Approximate methods (test_bench_fitted.py)", sections["fitted"])
    loads = [b["extra_info"].get("load_average") for b in data["benchmarks"]]
    loads = [x for x in loads if x is not None]
    if loads:
        out.append(f"Machine load (1-min average) during the run: {min(loads):.2f} to {max(loads):.2f}.")
    if wall is not None:
        out.append(f"The run took {wall:.0f} s.")
    return "\n".join(out)


def opponents_report(entries: list[dict], rows: dict[tuple[int, int], dict[str, dict]]) -> list[str]:
    """The table of test_bench_opponents.py, each size led by random pieces
    (test_value_iteration of test_bench_solve.py, the same call with defaults)."""
    if not entries:
        return []
    by_size: dict[tuple[int, int], list[dict]] = {}
    for b in entries:
        by_size.setdefault((b["extra_info"]["width"], b["extra_info"]["height"]), []).append(b)
    lines = [
        "",
        "| Size | Solve | `solve_transitions(t, discount=0.9, tol=1e-8, ...)` | Method | Median | Min–max "
        "| Iterations |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    for (w, h), solves in sorted(by_size.items(), key=lambda item: (item[0][0] * item[0][1], item[0])):
        random = rows.get((w, h), {}).get("test_value_iteration")
        if random is None:
            lines.append(
                f'| {w}x{h} | random pieces | `opponent="random"` (`test_value_iteration`) | — | not run | — | — |'
            )
        else:
            info = random["extra_info"]
            lines.append(
                f'| {w}x{h} | random pieces | `opponent="random"` (`test_value_iteration`) '
                f"| {info.get('method', '—')} | {seconds(random['stats']['median'])} | {spread(random)} "
                f"| {info.get('iterations', '—')} |"
            )
        for b in solves:
            info = b["extra_info"]
            lines.append(
                f"| {w}x{h} | {info['what']} | `{info['arguments']}` | {info['method']} "
                f"| {seconds(b['stats']['median'])} | {spread(b)} | {info['iterations']} |"
            )
    rounds = sorted({(b["extra_info"]["size"], b["stats"]["rounds"]) for b in entries})
    return lines + [
        "",
        "On a table enumerated beforehand; the given policies (the optimal solution against random pieces, the "
        "minimax solution) are solved once per size, not timed.  Best response of the player: to the minimax "
        "solution's piece choices; of the opponent: to the optimal player's placements; policy evaluation: the "
        "optimal player's value against random pieces.  Methods: `mpi` (modified policy iteration: a greedy "
        "sweep, then up to 6 evaluation sweeps, the default when this table was measured) where one side is fixed "
        "or random, `vi` (value iteration) where "
        "both optimise or the player places at random.  Rounds: "
        + ", ".join(f"{size}: {n}" for size, n in rounds)
        + ".",
    ]


def tournament_report(entries: list[dict]) -> list[str]:
    """The table of test_bench_tournament.py: the study's tournament end to end."""
    if not entries:
        return []
    lines = ["", "| Tournament | Boards | Median | Min–max | Rounds | Work |", "|---|---:|---:|---:|---:|---|"]
    for b in sorted(entries, key=lambda entry: entry["extra_info"]["width"] * entry["extra_info"]["height"]):
        info = b["extra_info"]
        pairs = info["players"] * info["opponents"]
        lines.append(
            f"| `standard_tournament(width={info['width']}, height={info['height']})` | {info['n_boards']:,} "
            f"| {seconds(b['stats']['median'])} | {spread(b)} | {b['stats']['rounds']} "
            f"| {info['solves']} solves; {info['players']} players x {info['opponents']} opponents: {pairs} exact "
            f"expected points and {pairs * info['n_games']:,} games of <= {info['n_placements']:,} placements |"
        )
    return lines + [
        "",
        "End to end: enumeration, the solves (discount 0.9; opponents 0.1 and 0.9), "
        "`expected_points` and `play` for every pair, on every core.",
    ]


def rate_report(entries: list[dict]) -> list[str]:
    """The table of test_bench_rate.py: the long-run rate, table built beforehand."""
    if not entries:
        return []
    lines = [
        "",
        "| Long-run rate | Gain (points per placement) | Bounds | Iterations | Median | Min–max |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for b in entries:
        info = b["extra_info"]
        lines.append(
            f"| {info['size']} against {info['opponent']} pieces | {info['gain']:.9f} "
            f"| [{info['lower']:.9f}, {info['upper']:.9f}] | {info['iterations']} "
            f"| {seconds(b['stats']['median'])} | {spread(b)} |"
        )
    return lines + [
        "",
        "`babytris.long_run_rate(transitions, opponent=..., tol=1e-9)` on a table enumerated "
        "beforehand (survival kernel, then relative value iteration with certified bounds).",
    ]


def mirror_report(entries: list[dict], rows: dict) -> list[str]:
    """The table of test_bench_mirror.py beside the plain full solve of the same size."""
    if not entries:
        return []
    lines = [
        "",
        "| Mirror merging | Boards | Full solve | Min–max | Plain full solve | Ratio |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for b in entries:
        info = b["extra_info"]
        plain = rows.get(tuple(int(x) for x in info["size"].split("x")), {}).get("test_solve")
        ratio = f"{b['stats']['median'] / plain['stats']['median']:.2f}" if plain else "—"
        lines.append(
            f"| {info['size']} | {info['n_boards']:,} | {seconds(b['stats']['median'])} | {spread(b)} "
            f"| {seconds(plain['stats']['median']) if plain else '—'} | {ratio} |"
        )
    return lines + ["", "`babytris.solve(width=W, height=H, mirror=True, discount=0.9, tol=1e-8)`."]


def minimize_report(entries: list[dict]) -> list[str]:
    """The table of test_bench_minimize.py: refinement and solves on 4x5 with previews."""
    if not entries:
        return []
    lines = ["", "| Minimization | States | Median | Min–max | Work |", "|---|---:|---:|---:|---|"]
    for b in entries:
        info = b["extra_info"]
        work = (
            f"{info['n_classes']:,} groups in {info['rounds']} rounds"
            if info["what"] == "minimize"
            else f"{info['iterations']} greedy sweeps"
        )
        lines.append(
            f"| {info['size']} preview {info['preview']}: {info['what']} | {info['n_states']:,} "
            f"| {seconds(b['stats']['median'])} | {spread(b)} | {work} |"
        )
    return lines


def play_report(entries: list[dict]) -> list[str]:
    """The table of test_bench_play.py: playouts and expected points on 4x5."""
    if not entries:
        return []
    lines = [
        "",
        "| Playouts and expected points, 4x5 | Median | Min–max | Rounds | Throughput or work |",
        "|---|---:|---:|---:|---|",
    ]
    for b in entries:
        info = b["extra_info"]
        if "placements_per_second" in info:
            work = (
                f"{info['placements_per_second'] / 1e6:.0f} M placements/s ({info['placements']:,} "
                f"placements, {info['threads']} thread{'s' if info['threads'] > 1 else ''})"
            )
        else:
            work = f"{info['boards_computed']:,} boards, {info['steps']:,} backups ({info['stopped']})"
        lines.append(
            f"| `{b['name']}` | {seconds(b['stats']['median'])} | {spread(b)} | {b['stats']['rounds']} | {work} |"
        )
    return lines + [
        "",
        "Playouts: `play(solution, player, n_placements=10_000, ...)`, Python overhead included; "
        "expected points: `horizon_values(solution, n_placements=10_000, ...)` on one thread.",
    ]


def big_report(entries: list[dict]) -> list[str]:
    """The table of test_bench_big.py: big-board playouts and batches on 10x20."""
    if not entries:
        return []
    lines = [
        "",
        "| Big board 10x20, tetrominoes | Median | Min–max | Rounds | Throughput |",
        "|---|---:|---:|---:|---|",
    ]
    for b in entries:
        info = b["extra_info"]
        threads = info.get("threads", 1)
        on = f"{threads} thread{'s' if threads > 1 else ''}"
        if "placements_per_second" in info:
            work = f"{info['placements_per_second'] / 1e6:.2f} M placements/s ({info['placements']:,} placements, {on})"
        elif "afterstates_per_second" in info:
            work = f"{info['afterstates_per_second'] / 1e6:.1f} M afterstates/s ({info['boards']:,} boards, {on})"
        elif "boards_per_second" in info:
            work = (
                f"{info['boards_per_second'] / 1e6:.2f} M boards/s ({info['afterstates']:,} afterstates scored, {on})"
            )
        else:
            work = f"{info.get('afterstates', 0)} afterstates"
        stats = b["stats"]
        if stats["median"] < 1e-3:  # one board: microseconds
            median, span = f"{stats['median'] * 1e6:.1f} µs", f"{stats['min'] * 1e6:.1f}–{stats['max'] * 1e6:.1f} µs"
        else:
            median, span = seconds(stats["median"]), spread(b)
        lines.append(f"| `{b['name']}` | {median} | {span} | {stats['rounds']} | {work} |")
    return lines + [
        "",
        "Greedy playouts: `play_greedy(Tetris(), weights, features, n_games=4, max_placements=250_000)` "
        "with Dellacherie's features and weights; random: `play_greedy(Tetris(), None, "
        "n_games=50_000)`; batches: `afterstates_batch` and `greedy_placements` of 100,000 boards "
        "met in play; Python overhead included.",
    ]


def plain_report(title: str, entries: list[dict]) -> list[str]:
    """A table of one suite: each benchmark's median, spread, rounds and recorded figures."""
    if not entries:
        return []
    lines = ["", f"| {title} | Median | Min–max | Rounds | Recorded |", "|---|---:|---:|---:|---|"]
    for b in entries:
        info = {k: v for k, v in b["extra_info"].items() if k not in ("cores", "load_average")}
        recorded = ", ".join(f"{k} {v:,.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in info.items())
        lines.append(
            f"| `{b['name']}` | {seconds(b['stats']['median'])} | {spread(b)} | {b['stats']['rounds']} | {recorded} |"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help='deselect the slow benchmarks (-m "not slow")')
    parser.add_argument("--json", type=Path, help="keep pytest-benchmark's JSON here")
    parser.add_argument("--from-json", type=Path, help="print the report of a saved JSON, run nothing")
    args = parser.parse_args(argv)
    if args.from_json:
        print(report(json.loads(args.from_json.read_text()), None))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = args.json.resolve() if args.json else Path(tmp) / "bench.json"
        wall = run(args.quick, path)
        print(report(json.loads(path.read_text()), wall))


if __name__ == "__main__":
    main()
