"""Timing two jobs against each other on a shared machine."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def interleaved_medians(first: Callable[[], object], second: Callable[[], object], rounds: int) -> tuple[float, float]:
    """Run ``first`` then ``second``, ``rounds`` times over, so that a busy spell
    hits both alike; returns the median seconds of each."""
    firsts, seconds = [], []
    for _ in range(rounds):
        for job, times in ((first, firsts), (second, seconds)):
            started = time.perf_counter()
            job()
            times.append(time.perf_counter() - started)
    return statistics.median(firsts), statistics.median(seconds)
