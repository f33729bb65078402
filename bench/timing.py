"""Timing two jobs against each other on a shared machine."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def interleaved_times(
    first: Callable[[], object], second: Callable[[], object], rounds: int
) -> tuple[list[float], list[float]]:
    """Run ``first`` and ``second``, ``rounds`` times over, so that a busy spell
    hits both alike, each going first in every other round (so neither always
    finds the caches the other left); returns the seconds of each run, two
    lists of ``rounds``."""
    firsts: list[float] = []
    seconds: list[float] = []
    for k in range(rounds):
        pair = ((first, firsts), (second, seconds))
        for job, times in pair if k % 2 == 0 else pair[::-1]:
            started = time.perf_counter()
            job()
            times.append(time.perf_counter() - started)
    return firsts, seconds


def interleaved_medians(first: Callable[[], object], second: Callable[[], object], rounds: int) -> tuple[float, float]:
    """:func:`interleaved_times`' median seconds of each job."""
    firsts, seconds = interleaved_times(first, second, rounds)
    return statistics.median(firsts), statistics.median(seconds)
