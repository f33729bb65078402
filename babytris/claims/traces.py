"""The slides' value-iteration traces (Ergin & Grousson) for :mod:`babytris.reproduce`.

The slides print, for Baby Tetris at 4x4 and 4x5 and discounts 0.1 and 0.9,
the first sweep's largest change (delta) and the sweeps run until delta is
at most 1e-8.  Their code (diaarca/baby-tetris, ``src/MDP.cpp``) updates
each state in place, in the order its ``std::unordered_map`` iterates; each
row runs that value iteration in that order (:mod:`.course_code`), checks
its values against babytris's solve, and shows babytris's own in-place
order beside it.
"""

from __future__ import annotations

import numpy as np

from .registry import AGREES, DIFFERS, Measurement, claim

#: (height, discount): (first delta, sweeps until delta <= 1e-8), as the slides print them.
SLIDES_TRACES = {(4, 0.1): (6.10288, 8), (4, 0.9): (8.36976, 90), (5, 0.1): (6.20552, 8), (5, 0.9): (9.7563, 91)}


def _trace(height: int, discount: float, published: tuple[float, int]):
    def measure(fast: bool) -> Measurement:
        import babytris

        from .course_code import course_trace

        course = course_trace(4, height, discount, seeds=("I", "L"))
        exact = babytris.solve(width=4, height=height, discount=discount, tol=1e-12)
        row = {int(b): i for i, b in enumerate(exact.boards)}
        gap = np.abs(exact.values[[row[int(b)] for b in course.boards], course.pieces] - course.values).max()
        own = babytris.solve(width=4, height=height, discount=discount, tol=1e-8, method="vi", accelerate=False)
        same = float(f"{course.deltas[0]:.6g}") == published[0] and course.sweeps == published[1]
        return Measurement(
            str(course),
            AGREES if same else DIFFERS,
            "the course's value iteration in its own order (in place, in the order its std::unordered_map "
            "iterates under libstdc++: states inserted breadth first from the empty board holding an I, then "
            "an L, as its code from commit 3a845fc on does when its random first piece is an I; "
            f"babytris.claims.course_code); its values end within {gap:.0e} of babytris's solve in all "
            f"{len(course.values):,} states.  babytris's own in-place order (method='vi', fullest board "
            f"first) gives {own.residuals[0]:.5f} in {own.iterations}: the trace is the order's",
        )

    return measure


for (_height, _discount), _published in SLIDES_TRACES.items():
    claim(
        f"slides-vi-trace-4x{_height}-{_discount}",
        "slides",
        f"value iteration's first delta, in sweeps until delta <= 1e-8, discount {_discount}, 4x{_height}",
        f"{_published[0]} in {_published[1]}",
        "from babytris.claims.course_code import course_trace; "
        f"str(course_trace(4, {_height}, {_discount}, seeds=('I', 'L')))",
        fast=_height == 4,
    )(_trace(_height, _discount, _published))
