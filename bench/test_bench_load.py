"""Loading a saved solution against solving it (issue 38: a load's checks may
cost at most one enumeration plus one sweep, well under a solve), and the
refusal of a hostile file (a zip bomb declaring 1 GiB: well under a second).

Each case times load and solve interleaved (medians of ``rounds``), records
them and their ratio in ``extra_info``, and fails above ``TARGET``.  At these
sizes a solve is fast (5 ms at 4x4, 41 ms at 4x5 on 2 cores) and a load is
dominated by decompressing the file (about 60%) and the digests (about 25%):
a load costs 1.1x-1.3x a solve there (first run, dev venv).  Default rules,
discount 0.9, default threads.
"""

from __future__ import annotations

import os
import statistics
import time
import zipfile

import numpy as np
import pytest

import babytris

#: The most a load may cost, in solves of the same game.
TARGET = 2.0

# (width, height, rounds)
SIZES = [pytest.param((4, 4, 9), id="4x4"), pytest.param((4, 5, 5), id="4x5")]


def _seconds(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


@pytest.mark.parametrize("size", SIZES)
def test_load_against_solve(benchmark, tmp_path, size):
    width, height, rounds = size
    rules = babytris.Rules(width=width, height=height)
    path = tmp_path / "s.npz"
    babytris.solve(rules).save(path)
    times: dict[str, list[float]] = {"load": [], "solve": []}
    for _ in range(rounds):
        times["load"].append(_seconds(lambda: babytris.load(path)))
        times["solve"].append(_seconds(lambda: babytris.solve(rules)))
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    benchmark.group = "load against solve"
    benchmark.extra_info.update(
        size=f"{width}x{height}",
        load_seconds=medians["load"],
        solve_seconds=medians["solve"],
        load_over_solve=medians["load"] / medians["solve"],
        cores=os.cpu_count(),
    )
    benchmark.pedantic(lambda: babytris.load(path), rounds=1)
    assert medians["load"] < TARGET * medians["solve"], medians


def test_a_zip_bomb_is_refused_quickly(benchmark, tmp_path):
    good = tmp_path / "good.npz"
    babytris.solve(width=4, height=4).save(good)
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bomb, "w", compresslevel=1) as out:
        for info in src.infolist():
            if info.filename != "solution_values.npy":
                out.writestr(info.filename, src.read(info), compress_type=zipfile.ZIP_DEFLATED)
                continue
            member = zipfile.ZipInfo(info.filename)
            member.compress_type = zipfile.ZIP_DEFLATED
            with out.open(member, "w", force_zip64=True) as f:
                np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (2**27,)})
                chunk = bytes(2**24)
                for _ in range(2**30 // len(chunk)):
                    f.write(chunk)

    def refuse() -> None:
        try:
            babytris.load(bomb)
        except babytris.files.persist.SolutionFileError:
            return
        raise AssertionError("the zip bomb loaded")

    seconds = statistics.median(_seconds(refuse) for _ in range(5))
    benchmark.group = "hostile files"
    benchmark.extra_info.update(file_bytes=bomb.stat().st_size, declared_bytes=2**30, refuse_seconds=seconds)
    benchmark.pedantic(refuse, rounds=1)
    assert seconds < 0.5, seconds
