"""Piece bags: the contents of a shuffled bag as part of the state.

With ``Rules(randomizer="bag")`` pieces are dealt from a bag holding every
piece ``bag_copies`` times, in random order; when the bag empties it is
filled again.  So the next piece is drawn from what is left in the bag, each
left copy equally likely, and the bag's contents are part of the state.

A bag's contents are a count per piece, each in ``[0, bag_copies]``, not all
0 (an emptied bag is refilled at once).  They are numbered as the digits of
a base ``bag_copies + 1`` number, piece 0 the lowest digit, less one (the
empty bag has no number): the full bag is the last, ``rules.bags - 1``.
Independent draws (``randomizer="iid"``) are one bag of number 0 whose
chances are ``rules.probabilities`` and which never changes.

Every function here returns small numpy tables over the bag numbers; the
move table (:func:`babytris.engine.enumeration.with_previews`), the sweeps and the
lookups read them.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import numpy as np

from .rules import Rules

__all__ = [
    "bag_counts",
    "bag_chances",
    "after_draw",
    "full_bag",
    "bag_number",
    "bag_holding",
    "bag_before",
    "describe_bag",
]


def bag_counts(rules: Rules) -> np.ndarray:
    """int64 array ``(rules.bags, n_pieces)``: the copies of each piece left
    in each bag (with independent draws, one row of ones)."""
    return _counts(rules).copy()


@lru_cache(maxsize=64)
def _counts(rules: Rules) -> np.ndarray:
    n = rules.n_pieces
    if rules.randomizer != "bag":
        return np.ones((1, n), dtype=np.int64)
    base = rules.bag_copies + 1
    codes = np.arange(1, base**n, dtype=np.int64)
    return (codes[:, None] // base ** np.arange(n, dtype=np.int64)) % base


def bag_chances(rules: Rules) -> np.ndarray:
    """float64 array ``(rules.bags, n_pieces)``: the chance of each piece
    being drawn next from each bag (a left copy's share of the bag); with
    independent draws, one row, ``rules.probabilities``."""
    if rules.randomizer != "bag":
        return np.asarray(rules.probabilities, dtype=np.float64)[None, :].copy()
    counts = _counts(rules).astype(np.float64)
    return counts / counts.sum(axis=1, keepdims=True)


def after_draw(rules: Rules) -> np.ndarray:
    """int64 array ``(rules.bags, n_pieces)``: the bag left after drawing each
    piece from each bag (refilled once empty), -1 where the piece is not in
    it; with independent draws, zeros (the one bag never changes)."""
    counts = _counts(rules)
    n = rules.n_pieces
    if rules.randomizer != "bag":
        return np.zeros((1, n), dtype=np.int64)
    base = rules.bag_copies + 1
    digit = base ** np.arange(n, dtype=np.int64)
    code = counts @ digit  # each bag's code (its number + 1)
    left = code[:, None] - digit[None, :]
    left = np.where(left == 0, base**n - 1, left)  # emptied: refilled
    return np.where(counts > 0, left - 1, -1)


def full_bag(rules: Rules) -> int:
    """The number of the full bag (the bag a game starts from); 0 with independent draws."""
    return rules.bags - 1


def bag_number(rules: Rules, counts: Iterable[int]) -> int:
    """The number of the bag holding ``counts[p]`` copies of piece ``p``;
    ``ValueError`` unless each count is in ``[0, bag_copies]`` and not all are 0."""
    counts = tuple(int(c) for c in counts)
    if rules.randomizer != "bag":
        raise ValueError("bag: these rules draw pieces independently (randomizer='iid'); they have no bag")
    high = rules.bag_copies
    if len(counts) != rules.n_pieces or not all(0 <= c <= high for c in counts) or not any(counts):
        raise ValueError(
            f"bag must count each of the {rules.n_pieces} pieces' copies left, each in [0, {high}] and not all 0, "
            f"got {counts!r}"
        )
    base = high + 1
    return sum(c * base**p for p, c in enumerate(counts)) - 1


def _copies(rules: Rules, pieces: Iterable[int | str]) -> list[int]:
    """The copies of each piece among ``pieces`` (indices or names)."""
    counts = [0] * rules.n_pieces
    for p in pieces:
        counts[rules.piece_index(p)] += 1
    return counts


def bag_holding(rules: Rules, pieces: Iterable[int | str]) -> int:
    """The number of the bag holding exactly ``pieces`` (indices or names,
    each copy listed); ``ValueError`` as :func:`bag_number`."""
    return bag_number(rules, _copies(rules, pieces))


def bag_before(rules: Rules, left: Iterable[int | str], drawn: int) -> int:
    """The number of the bag piece ``drawn`` (an index) came from, given
    ``left``: the piece indices left in the bag after it was drawn.  This is
    how a player sees a bag: what is left once the pieces in sight were
    dealt.  ``()`` (or every copy: the bag refilled) means the draw emptied
    the bag, so it came from a bag holding that piece alone.  ``ValueError``
    if no bag deals ``drawn`` and leaves ``left``."""
    n, high = rules.n_pieces, rules.bag_copies
    if rules.randomizer != "bag":
        raise ValueError("bag: these rules draw pieces independently (randomizer='iid'); they have no bag")
    left = list(left)
    counts = _copies(rules, left)
    if any(c > high for c in counts):
        names = tuple(rules.pieces[rules.piece_index(p)].name for p in left)
        raise ValueError(f"bag: a bag holds each piece at most {high} times (bag_copies), got {names!r} left")
    if all(c == high for c in counts):  # a full bag after a draw is the refill: the draw emptied the bag
        counts = [0] * n
    counts[drawn] += 1
    if counts[drawn] > high:
        raise ValueError(
            f"bag: no bag deals {rules.pieces[drawn].name} and leaves all {high} of its copies "
            f"(bag_copies={high}): give what is left after it was drawn"
        )
    return bag_number(rules, counts)


def describe_bag(rules: Rules, number: int) -> str:
    """A bag's contents as text, e.g. ``"I L"`` (pieces repeated per copy left)."""
    counts = _counts(rules)[number]
    return " ".join(name for name, c in zip(rules.piece_names, counts.tolist()) for _ in range(c))
