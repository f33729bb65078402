"""Hypothesis strategies shared by the differential tests: small random rule sets."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

import babytris
from babytris import CATALOGUE, Rules

#: Small custom pieces beside the catalogue's.
CUSTOM = {"monomino": [(0, 0)], "domino": [(0, 0), (1, 0)]}
#: The default pool: a few catalogue pieces and the custom ones.
SMALL_POOL = tuple(CATALOGUE[n].cells for n in ("I", "L", "O", "T")) + tuple(map(tuple, CUSTOM.values()))


def fits(cells, width: int, height: int) -> bool:
    """Whether some orientation of the piece fits the board."""
    piece = babytris.Piece.from_cells(cells)
    return any(max(x for x, _ in s) < width and max(y for _, y in s) < height for s in piece.orientations())


@st.composite
def small_rules(
    draw, *, sizes=(2, 4), pool=SMALL_POOL, max_pieces=3, line_scores=True, equal_chance=False, variants=False
):
    """Rules on a board ``sizes[0]``..``sizes[1]`` wide and high, with up to
    ``max_pieces`` pieces of ``pool`` (cell lists) that fit; random
    probabilities (with ``equal_chance``, uniform half the time); random line
    scores in [0, 20] if ``line_scores``, else the default.  With
    ``variants``, a random start board a third of the time, the combo
    objective a third of the time, mirror merging a quarter of the time
    where the pieces allow it, and each of ``no_holes`` and ``top_out`` (not
    with the combo objective) a quarter of the time, and soft moves (tucks
    and slides, ``moves="soft"``) a quarter of the time."""
    width = draw(st.integers(*sizes))
    height = draw(st.integers(*sizes))
    fitting = [cells for cells in pool if fits(cells, width, height)]
    chosen = draw(
        st.lists(st.sampled_from(range(len(fitting))), min_size=1, max_size=min(max_pieces, len(fitting)), unique=True)
    )
    pieces = [fitting[i] for i in chosen]
    n = len(pieces)
    if equal_chance and draw(st.booleans()):
        probabilities = [1 / n] * n
    else:
        weights = draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n))
        probabilities = [w / math.fsum(weights) for w in weights]
    fields = dict(width=width, height=height, pieces=pieces, probabilities=probabilities)
    if variants and draw(st.integers(0, 3)) == 0:
        fields["no_holes"] = True
    if variants and draw(st.integers(0, 2)) == 0:
        fields["start"] = draw(boards(width, height, no_holes=fields.get("no_holes", False)))
    if variants and draw(st.integers(0, 2)) == 0:
        fields["objective"] = "combo"
        line_scores = False
    elif variants and draw(st.integers(0, 3)) == 0:
        fields["top_out"] = True
        fields["start"] = fields.get("start", 0) & ((1 << (width * (height - 1))) - 1)  # the top row empty
    if variants and draw(st.integers(0, 3)) == 0:
        fields["moves"] = "soft"
    if line_scores:
        tallest = (
            len(Rules(width=width, height=height, pieces=pieces, no_holes=fields.get("no_holes", False)).line_scores)
            - 1
        )
        fields["line_scores"] = draw(
            st.lists(
                st.floats(0.0, 20.0, allow_nan=False, allow_infinity=False), min_size=tallest + 1, max_size=tallest + 3
            )
        )
    rules = Rules(**fields)
    if variants and draw(st.integers(0, 3)) == 0:
        try:  # mirror where the pieces allow it
            rules = Rules(**fields, mirror=True)
        except babytris.RulesError:
            pass
    return rules


@st.composite
def boards(draw, width: int, height: int, no_holes: bool = False):
    """A random board of that size with no full row (none can stand): full
    rows emptied, or with ``no_holes`` each column filled up to its top cell
    and then the full rows removed (the rows above them fall)."""
    bits = draw(st.integers(0, 2 ** (width * height) - 1))
    row = (1 << width) - 1
    if no_holes:
        for _ in range(height):
            bits |= bits >> width
        for r in reversed(range(height)):
            if (bits >> (r * width)) & row == row:
                bits = (bits & ((1 << (r * width)) - 1)) | ((bits >> ((r + 1) * width)) << (r * width))
        return bits
    for r in range(height):
        if (bits >> (r * width)) & row == row:
            bits &= ~(row << (r * width))
    return bits


def random_legal_policy(t: babytris.Transitions, rng) -> np.ndarray:
    """A policy array ``(n_boards, n_pieces)`` of legal placements drawn uniformly per state (-1 where none fits)."""
    counts = np.diff(t.offsets)
    pick = t.offsets[:-1] + (rng.random(t.n_states) * counts).astype(np.int64)
    policy = np.where(counts > 0, t.placement[np.minimum(pick, t.n_moves - 1)].astype(np.int64), -1)
    return policy.reshape(t.n_boards, t.rules.n_pieces)
