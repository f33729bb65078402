"""Timing two jobs against each other on a shared machine."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def interleaved_medians(first: Callable[[], object], second: Callable[[], object], rounds: int) -> tuple[float, float]:
    """Run ``first`` and ``second``, ``rounds`` times over, so that a busy spell
    hits both alike, each going first in every other round (so neither always
    finds the caches the other left); returns the median seconds of each."""
    firsts: list[float] = []
    seconds: list[float] = []
    for k in range(rounds):
        pair = ((first, firsts), (second, seconds))
        for job, times in pair if k % 2 == 0 else pair[::-1]:
            started = time.perf_counter()
            job()
            times.append(time.perf_counter() - started)
    return statistics.median(firsts), statistics.median(seconds)
