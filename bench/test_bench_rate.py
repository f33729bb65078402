"""Benchmarks of the long-run rate on 4x5 (the default rules), both opponents.

``test_long_run_rate``: ``babytris.long_run_rate(transitions, opponent=...)``
on a table enumerated once per module (not timed): the survival kernel, the
relative value iteration on it to ``tol=1e-9``, the chance of reaching it
(random pieces) and the policy.  ``extra_info`` records the gain, its bounds,
the iterations and the kernel's size.
"""

from __future__ import annotations

import os

import pytest

import babytris

WIDTH, HEIGHT = 4, 5


@pytest.fixture(scope="module")
def transitions():
    return babytris.enumerate_boards(babytris.Rules(width=WIDTH, height=HEIGHT))


@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_long_run_rate(benchmark, transitions, opponent):
    benchmark.group = f"long-run rate {WIDTH}x{HEIGHT}"
    rate = benchmark.pedantic(
        babytris.long_run_rate,
        args=(transitions,),
        kwargs=dict(opponent=opponent, tol=1e-9),
        rounds=10,
        iterations=1,
        warmup_rounds=1,
    )
    assert rate.converged
    benchmark.extra_info.update(
        size=f"{WIDTH}x{HEIGHT}",
        opponent=opponent,
        n_boards=transitions.n_boards,
        n_moves=transitions.n_moves,
        n_kernel=rate.n_kernel,
        gain=rate.gain,
        lower=rate.lower,
        upper=rate.upper,
        iterations=rate.iterations,
        cores=os.cpu_count(),
        load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    )
