"""Threads never make a solve slower (issue 14, part 1): the default thread
setting against ``n_jobs=1``, on an idle machine and while other processes
keep every core busy.  Target: the default at most 1.1x the one-thread time.

Each case times both settings interleaved in one run (medians of 61, 31 and
15 rounds on 4x4, 4x5 and 4x6: about a second of each, so a busy spell hits
both alike and a few slow milliseconds do not decide), records the medians and their ratio in
``extra_info``, and fails above the target.  ``busy`` starts one spinning
process per core for the duration of the case.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from timing import interleaved_medians

import babytris

TARGET = 1.1
ROUNDS = {(4, 4): 61, (4, 5): 31, (4, 6): 15}

SIZES = [
    pytest.param((4, 4), id="4x4"),
    pytest.param((4, 5), id="4x5"),
    pytest.param((4, 6), id="4x6", marks=pytest.mark.slow),
]


@pytest.fixture(scope="module", params=SIZES)
def table(request):
    width, height = request.param
    return babytris.enumerate_boards(babytris.Rules(width=width, height=height))


@pytest.fixture(params=["idle", "busy"])
def load(request):
    if request.param == "idle":
        yield "idle"
        return
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdout=subprocess.DEVNULL)
        for _ in range(os.cpu_count() or 1)
    ]
    time.sleep(0.2)  # let them take their cores
    try:
        yield "busy"
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_default_threads_against_one_thread(benchmark, table, load, opponent):
    default, one = interleaved_medians(
        lambda: babytris.solve_transitions(table, opponent=opponent),
        lambda: babytris.solve_transitions(table, opponent=opponent, n_jobs=1),
        rounds=ROUNDS[table.rules.width, table.rules.height],
    )
    ratio = default / one
    rules = table.rules
    benchmark.group = f"threads: default against n_jobs=1 ({load})"
    benchmark.extra_info.update(
        size=f"{rules.width}x{rules.height}",
        opponent=opponent,
        load=load,
        cores=os.cpu_count(),
        default_seconds=default,
        one_thread_seconds=one,
        default_over_one_thread=ratio,
    )
    benchmark.pedantic(babytris.solve_transitions, args=(table,), kwargs=dict(opponent=opponent), rounds=1)
    assert ratio <= TARGET, f"the default took {ratio:.2f}x one thread's time ({load}, target <= {TARGET})"
