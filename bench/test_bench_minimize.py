"""Benchmarks of state-partition minimization: the refinement, and the solve
with and without it, on 4x5 with two previewed pieces (1,456,808 states).

``extra_info`` records the states, the groups, the rounds and the iterations."""

from __future__ import annotations

import os

import pytest

import babytris

WIDTH, HEIGHT, PREVIEW = 4, 5, 2


@pytest.fixture(scope="module")
def transitions():
    return babytris.enumerate_boards(babytris.Rules(width=WIDTH, height=HEIGHT, preview=PREVIEW))


def _info(benchmark, t, **more):
    benchmark.extra_info.update(
        size=f"{WIDTH}x{HEIGHT}",
        preview=PREVIEW,
        n_states=t.n_states,
        n_moves=t.n_moves,
        cores=os.cpu_count(),
        load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        **more,
    )


def test_minimize(benchmark, transitions):
    benchmark.group = f"minimization {WIDTH}x{HEIGHT} preview {PREVIEW}"
    p = benchmark.pedantic(babytris.minimize, args=(transitions,), rounds=5, iterations=1, warmup_rounds=1)
    _info(benchmark, transitions, what="minimize", n_classes=p.n_classes, rounds=p.rounds)


@pytest.mark.parametrize("minimize", [False, True], ids=["full", "quotient"])
def test_solve(benchmark, transitions, minimize):
    benchmark.group = f"minimization {WIDTH}x{HEIGHT} preview {PREVIEW}"
    s = benchmark.pedantic(
        babytris.solve_transitions,
        args=(transitions,),
        kwargs=dict(discount=0.9, tol=1e-8, minimize=minimize),
        rounds=5,
        iterations=1,
        warmup_rounds=1,
    )
    _info(benchmark, transitions, what="solve with minimize" if minimize else "solve", iterations=s.iterations)
