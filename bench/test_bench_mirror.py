"""Benchmarks of the mirror pre-reduction: the full solve of ``Rules(mirror=True)``
(each board merged with its mirror image), to set beside ``test_solve``."""

from __future__ import annotations

import os

import pytest

import babytris

SIZES = [
    pytest.param(4, 5, 5, id="4x5"),
    pytest.param(4, 6, 3, id="4x6", marks=pytest.mark.slow),
    pytest.param(5, 5, 3, id="5x5", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("width, height, rounds", SIZES)
def test_solve_mirror(benchmark, width, height, rounds):
    benchmark.group = "solve with mirror merging"
    s = benchmark.pedantic(
        babytris.solve,
        kwargs=dict(width=width, height=height, mirror=True, discount=0.9, tol=1e-8),
        rounds=rounds,
        iterations=1,
        warmup_rounds=1,
    )
    benchmark.extra_info.update(
        size=f"{width}x{height}",
        n_boards=s.n_boards,
        iterations=s.iterations,
        cores=os.cpu_count(),
        load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    )
