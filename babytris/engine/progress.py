"""Progress bars for long work (enumeration and sweeps), drawn by tqdm on stderr.

A bar appears only when the work has run for ``delay`` seconds and only when
its stream is a terminal, so quick solves, pipes and logs stay clean.  The
enumeration runs in C without the GIL; :func:`polling` reads the counters it
publishes from a second thread.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

import numpy as np

__all__ = ["ProgressBars", "polling"]

#: ``progress(found, expanded)``: boards found and boards expanded so far.
EnumerationProgress = Callable[[int, int], None]


@contextmanager
def polling(progress: EnumerationProgress | None, *, interval: float = 0.1) -> Iterator[np.ndarray | None]:
    """A context manager yielding an int64 array ``(2,)`` for the enumeration
    to publish its counts in; calls ``progress(found, expanded)`` with them
    every ``interval`` seconds from a helper thread, and once more at the end.
    Yields None (and starts no thread) when ``progress`` is None."""
    if progress is None:
        yield None
        return
    counts = np.zeros(2, dtype=np.int64)
    done = threading.Event()

    def poll() -> None:
        while not done.wait(interval):
            progress(int(counts[0]), int(counts[1]))

    thread = threading.Thread(target=poll, name="babytris-progress", daemon=True)
    thread.start()
    try:
        yield counts
    finally:
        done.set()
        thread.join()
    progress(int(counts[0]), int(counts[1]))


class ProgressBars:
    """tqdm bars for one solve: boards found while enumerating, then the
    residual's way down to the tolerance, one decade at a time.

    Args:
        enabled: draw the bars; default: when ``file`` is a terminal.
        delay: seconds of work before a bar appears (quick work shows none).
        file: the stream, default ``sys.stderr``.
        leave: keep the finished bars on screen (default: erase them).
        mininterval: seconds between redraws at least.

    Use :meth:`enumerated` as ``enumerate_boards(..., progress=)`` and
    :meth:`swept` as ``solve_transitions(..., progress=)``; :meth:`close` ends both.
    """

    def __init__(
        self,
        *,
        enabled: bool | None = None,
        delay: float = 1.0,
        file: TextIO | None = None,
        leave: bool = False,
        mininterval: float = 0.1,
    ) -> None:
        self.file = sys.stderr if file is None else file
        self.enabled = _is_terminal(self.file) if enabled is None else bool(enabled)
        self.delay = delay
        self._options = dict(leave=leave, mininterval=mininterval)
        self._bars: dict = {}
        self._first_residual: float | None = None

    def _bar(self, name: str, **options):
        if name not in self._bars:
            from tqdm.auto import tqdm

            self._bars[name] = tqdm(
                file=self.file,
                delay=self.delay,
                disable=not self.enabled,
                dynamic_ncols=True,
                **self._options,
                **options,
            )
        return self._bars[name]

    def enumerated(self, found: int, expanded: int) -> None:
        """Boards found and expanded so far by the search."""
        bar = self._bar("enumerate", desc="enumerate", unit=" boards", unit_scale=True)
        bar.set_postfix_str(f"{expanded:,} expanded", refresh=False)
        bar.update(found - bar.n)

    def swept(self, iteration: int, residual: float, tol: float) -> None:
        """A greedy sweep ended with ``residual``; the bar counts decades down to ``tol``."""
        self.close("enumerate")
        if self._first_residual is None:
            self._first_residual = residual
        decades = _decades(self._first_residual, tol)
        bar = self._bar(
            "solve",
            desc="solve",
            total=decades,
            unit=" decades",
            bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}{postfix}]",
        )
        bar.set_postfix_str(f"sweep {iteration}, residual {residual:.1e} (tol {tol:.0e})", refresh=False)
        bar.update(min(decades, _decades(self._first_residual, max(residual, tol))) - bar.n)

    def close(self, name: str | None = None) -> None:
        """Close one bar (``"enumerate"`` or ``"solve"``), or every bar."""
        for key in [name] if name is not None else list(self._bars):
            bar = self._bars.pop(key, None)
            if bar is not None:
                bar.close()

    def __enter__(self) -> ProgressBars:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _decades(high: float, low: float) -> float:
    """How many factors of ten lie between ``high`` and ``low`` (>= 0, finite)."""
    if not (high > 0 and low > 0 and math.isfinite(high)):
        return 0.0
    return max(0.0, round(math.log10(high / low), 3))


def _is_terminal(file: TextIO) -> bool:
    try:
        return file.isatty()
    except (AttributeError, ValueError):  # closed or file-less streams
        return False
