"""The course's value iteration, in the course's own update order.

The course's program (diaarca/baby-tetris, ``src/MDP.cpp``) updates each state
in place, in the order its ``std::unordered_map<State, double>`` iterates, so
its trace (each sweep's largest change) depends on that order.  The order
follows from three things, which this module models:

- **Insertion order.**  ``generateReachableStates`` searches breadth first
  from the empty board, seeded with the first piece (from commit 3a845fc on,
  with the other piece too).  A state's moves come anchor by anchor (the
  course's rows run top down, each left to right), then rotation by
  rotation in the course's offset tables; each move's board after clearing
  is inserted with an I to come, then with an L.
- **The hash.**  ``State::hash`` is the board's cells as bits
  ``row * width + col`` with row 0 at the *top*, times 3, plus 1 for an I
  and 2 for an L.
- **libstdc++'s hash table** (as built here: g++ 12.2, Debian 12; the
  course's Makefile names no version): a singly linked list cut into
  buckets by ``hash % buckets``.  A new key goes first in its bucket, or first in the list when
  its bucket is empty; growing the table re-links the list node by node in
  the same way.  The bucket counts it passes through are :data:`BUCKETS`.

Each sweep then runs the course's Bellman backup: a move's value is
``0.5 * (score + discount * V[after, I]) + 0.5 * (score + discount * V[after, L])``,
added in that order (as the course's code adds them), a state's value is its
best move's, a state with no move keeps 0, and sweeps stop once the largest
change is at most ``tol``.  The board is 4 wide: the course's line clear
writes a row of four cells, so at another width its program keeps rows of
the wrong length (their hash is -1) and stops on a state it never found.
It is pure Python (4x5 at discount 0.9 takes about 40 s, 350 MB); its
converged values are babytris's solve's, and its traces are the course
program's, sweep by sweep (``tests/test_course_code.py``; the program was
built here with a ``main`` that runs only this value iteration, with the
first piece, height and discount given, and ``tol`` 1e-8).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..game.validation import check_int, check_number

__all__ = ["BUCKETS", "MAX_HEIGHT", "CourseTrace", "course_trace", "hash_map_order"]

#: The bucket counts of a growing ``std::unordered_map`` under libstdc++ (GCC 12):
#: 13 from the first key on, then the next count once the keys outnumber the buckets
#: (measured here by printing ``bucket_count()`` as keys were inserted).
BUCKETS = (13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229, 172933, 351061, 712697, 1447153)

#: The course's pieces: (hash index, cells as (row down, col right) offsets per rotation).
_PIECES = {
    "I": (1, (((0, 0), (0, 1), (0, 2)), ((0, 0), (1, 0), (2, 0)))),
    "L": (
        2,
        (
            ((0, 1), (1, 0), (1, 1)),
            ((0, 0), (1, 0), (1, 1)),
            ((0, 0), (0, 1), (1, 0)),
            ((0, 0), (0, 1), (1, 1)),
        ),
    ),
}
_LINE_SCORES = (0, 1, 3, 6)
#: The tallest board the pure-Python model takes (4x5 holds 364,202 states).
MAX_HEIGHT = 5


@dataclass(frozen=True)
class CourseTrace:
    """The course's value iteration, run in its own order.

    Attributes:
        deltas: each sweep's largest change, in order (the course prints
            ``i = k and delta = ...``).
        boards: (n_states,) uint64, each state's board in babytris's packing
            (bit ``row * width + col``, row 0 at the bottom).
        pieces: (n_states,) uint8, each state's piece to place (0 = I, 1 = L,
            babytris's default order).
        values: (n_states,) float64, the values after the last sweep.
    """

    deltas: tuple[float, ...]
    boards: np.ndarray
    pieces: np.ndarray
    values: np.ndarray

    @property
    def sweeps(self) -> int:
        """The sweeps run."""
        return len(self.deltas)

    def __str__(self) -> str:
        return f"{self.deltas[0]:.6g} in {self.sweeps}"


def course_trace(
    width: int = 4,
    height: int = 4,
    discount: float = 0.9,
    *,
    seeds: Sequence[str] = ("I", "L"),
    tol: float = 1e-8,
    max_sweeps: int = 1000,
) -> CourseTrace:
    """Run the course's in-place value iteration in the course's order.

    ``seeds`` are the empty board's first pieces in the order the search
    starts from them.  The course's ``main`` draws the first piece at random
    (after ``srand(time)``): ``("L",)`` or ``("I",)`` is the code up to
    commit c40fed4 with an L or an I first; from 3a845fc on the search also
    starts from the other piece, so ``("I", "L")`` is that code with an I
    first (the slides' traces) and ``("L", "I")`` with an L first.

    Returns:
        a :class:`CourseTrace`; ``str()`` of it reads as the slides print a
        trace (``"6.10288 in 8"``).

    Raises:
        ValueError: a size, discount, tolerance, sweep count or seed out of range.
    """
    width = check_int("width", width, 4, 4, high_text="4 (the course's line clear writes four cells)")
    height = check_int("height", height, 3, MAX_HEIGHT, high_text=f"{MAX_HEIGHT} (a pure-Python model)")
    discount = check_number("discount", discount, 0.0, 1.0, open_high=True)
    tol = check_number("tol", tol, 0.0, open_low=True)
    max_sweeps = check_int("max_sweeps", max_sweeps, 1, 10**6)
    if isinstance(seeds, str) or not isinstance(seeds, Sequence):
        raise ValueError(f"seeds must be a sequence of distinct pieces 'I' and 'L', got {seeds!r}")
    seeds = tuple(seeds)
    if not seeds or not all(p in ("I", "L") for p in seeds) or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be a sequence of distinct pieces 'I' and 'L', got {seeds!r}")

    states, moves = _search(width, height, seeds)
    index = {state: i for i, state in enumerate(states)}
    succ = [[(score, index[after, 1], index[after, 2]) for score, after, _ in listed] for listed in moves]
    order = hash_map_order([board * 3 + piece for board, piece in states])
    values = [0.0] * len(states)
    deltas: list[float] = []
    delta = float("inf")
    while len(deltas) < max_sweeps and delta > tol:
        delta = 0.0
        for s in order:
            if not succ[s]:
                continue  # no move: the course's loop skips the state, whose value stays 0
            best = max(0.5 * (g + discount * values[a]) + 0.5 * (g + discount * values[b]) for g, a, b in succ[s])
            delta = max(delta, abs(best - values[s]))
            values[s] = best
        deltas.append(delta)
    return CourseTrace(
        tuple(deltas),
        np.array([_to_babytris(board, width, height) for board, _ in states], dtype=np.uint64),
        np.array([piece - 1 for _, piece in states], dtype=np.uint8),
        np.array(values),
    )


def hash_map_order(hashes: Sequence[int]) -> list[int]:
    """The order libstdc++'s ``std::unordered_map`` iterates keys inserted
    with ``hashes`` (of distinct keys, in insertion order).

    Returns:
        the insertion indices in iteration order.

    Raises:
        ValueError: a hash that is not an integer in [0, 2**64), two keys
            with one hash (this model keeps one key a hash), or more keys than
            :data:`BUCKETS` grows to.
    """
    if not all(isinstance(h, (int, np.integer)) and not isinstance(h, bool) and 0 <= h < 2**64 for h in hashes):
        raise ValueError("hashes must be integers in [0, 2**64) (size_t)")
    hashes = [int(h) for h in hashes]
    if len(set(hashes)) != len(hashes):
        raise ValueError("hashes must be distinct (one key a hash)")
    if len(hashes) > BUCKETS[-1]:
        raise ValueError(f"hashes: at most {BUCKETS[-1]:,} keys, got {len(hashes):,}")
    nxt = [-1] * len(hashes)  # the list's links; -1 ends it
    head = -1
    before: list[int | None] = []  # per bucket: the node before its first (-2: the list's head), or None if empty
    n_buckets, grown = 1, -1
    for i, h in enumerate(hashes):
        if i + 1 > (BUCKETS[grown] if grown >= 0 else 0):
            grown += 1
            n_buckets = BUCKETS[grown]
            head, before = _relink(hashes, nxt, head, n_buckets)
        b = h % n_buckets
        prev = before[b]
        if prev is None:  # an empty bucket: first in the list; the old first's bucket now starts after it
            nxt[i], head = head, i
            if nxt[i] != -1:
                before[hashes[nxt[i]] % n_buckets] = i
            before[b] = -2
        elif prev == -2:
            nxt[i], head = head, i
        else:
            nxt[i], nxt[prev] = nxt[prev], i
    order = []
    while head != -1:
        order.append(head)
        head = nxt[head]
    return order


def _relink(hashes: list[int], nxt: list[int], head: int, n_buckets: int) -> tuple[int, list[int | None]]:
    """Re-link the list into ``n_buckets`` buckets as libstdc++'s rehash does:
    ``(new head, per-bucket node before its first)``."""
    before: list[int | None] = [None] * n_buckets
    p, head, head_bucket = head, -1, 0
    while p != -1:
        following = nxt[p]
        b = hashes[p] % n_buckets
        if before[b] is None:
            nxt[p], head = head, p
            before[b] = -2
            if nxt[p] != -1:
                before[head_bucket] = p
            head_bucket = b
        elif before[b] == -2:
            nxt[p], head = head, p
        else:
            prev = before[b]
            assert prev is not None
            nxt[p], nxt[prev] = nxt[prev], p
        p = following
    return head, before


def _search(
    width: int, height: int, seeds: tuple[str, ...]
) -> tuple[list[tuple[int, int]], list[list[tuple[int, int, int]]]]:
    """The course's breadth-first search: ``(states, moves)``, states as
    ``(course board bits, hash piece index)`` in insertion order, and each
    state's moves as ``(score, board after clearing, board as the piece
    lands)`` in the course's order."""
    candidates = {index: _candidates(width, height, offsets) for index, offsets in _PIECES.values()}
    states = [(0, _PIECES[p][0]) for p in seeds]
    seen = set(states)
    moves: list[list[tuple[int, int, int]]] = []
    for board, piece in states:  # the list grows as the search goes
        listed: list[tuple[int, int, int]] = []
        for occupied, cells, above, below, bottom in candidates[piece]:
            if board & (occupied | above) or not (bottom or board & below):
                continue
            after, cleared = _clear(board | cells, width, height)
            listed.append((_LINE_SCORES[cleared], after, board | cells))
            for coming in (1, 2):
                if (after, coming) not in seen:
                    seen.add((after, coming))
                    states.append((after, coming))
        moves.append(listed)
    return states, moves


def _candidates(
    width: int, height: int, offsets: tuple[tuple[tuple[int, int], ...], ...]
) -> list[tuple[int, int, int, int, bool]]:
    """Every anchor and rotation in the course's order, as bit masks
    ``(anchor | cells, cells, cells above them, cells below them, touches
    the bottom)``: a move where the anchor and cells are empty, nothing lies
    above them, and a cell rests on the floor or a filled cell."""
    out = []
    for row in range(height):
        for col in range(width):
            for shape in offsets:
                cells = [(row + dr, col + dc) for dr, dc in shape]
                if not all(0 <= r < height and 0 <= c < width for r, c in cells):
                    continue
                mask = _bits(cells, width)
                above = _bits({(a, c) for r, c in cells for a in range(r)}, width) & ~mask
                below = _bits({(r + 1, c) for r, c in cells if r + 1 < height}, width) & ~mask
                bottom = any(r == height - 1 for r, _ in cells)
                out.append((mask | 1 << (row * width + col), mask, above, below, bottom))
    return out


def _bits(cells: Iterable[tuple[int, int]], width: int) -> int:
    """The bit mask of distinct ``(row, col)`` cells."""
    return sum(1 << (r * width + c) for r, c in set(cells))


def _clear(board: int, width: int, height: int) -> tuple[int, int]:
    """``(board with full rows removed and the rows above dropped, rows removed)``,
    in the course's packing (row 0 at the top)."""
    full = (1 << width) - 1
    kept = [r for r in ((board >> (row * width)) & full for row in range(height)) if r != full]
    rows = [0] * (height - len(kept)) + kept
    return sum(r << (row * width) for row, r in enumerate(rows)), height - len(kept)


def _to_babytris(board: int, width: int, height: int) -> int:
    """A course board in babytris's packing (row 0 at the bottom)."""
    full = (1 << width) - 1
    return sum(((board >> (row * width)) & full) << ((height - 1 - row) * width) for row in range(height))
