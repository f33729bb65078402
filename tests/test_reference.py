"""Differential test: the compiled solver against the pure-Python reference on random small games.

Random rule sets (board 2-5 x 2-5, any non-empty set of catalogue pieces,
random piece probabilities and line scores, discount in [0, 0.95]), pieces
drawn at random or picked by the minimax or min-avg opponent; games with
more than SMALL reachable boards are skipped so the reference stays quick.
Both are solved to 1e-12 and compared state by state, matched by board value.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import babytris
from babytris import CATALOGUE, Rules, reference

SMALL = 1500
TOL = 1e-12


def fits(piece, width: int, height: int) -> bool:
    return any(max(x for x, _ in s) < width and max(y for _, y in s) < height for s in piece.orientations())


@st.composite
def games(draw):
    width = draw(st.integers(2, 5))
    height = draw(st.integers(2, 5))
    names = [n for n, p in CATALOGUE.items() if fits(p, width, height)]
    pieces = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
    n = len(pieces)
    weights = draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n))
    total = math.fsum(weights)
    probabilities = [w / total for w in weights]
    tallest = len(Rules(width=width, height=height, pieces=pieces).line_scores) - 1
    line_scores = draw(
        st.lists(
            st.floats(0.0, 20.0, allow_nan=False, allow_infinity=False),
            min_size=tallest + 1,
            max_size=tallest + 3,
        )
    )
    rules = Rules(width=width, height=height, pieces=pieces, line_scores=line_scores, probabilities=probabilities)
    discount = draw(st.floats(0.0, 0.95))
    opponent = draw(st.sampled_from(["random", "minimax", "minavg"]))
    method = draw(st.sampled_from(["mpi", "vi"])) if opponent == "random" else "vi"
    return rules, discount, method, opponent


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(games())
def test_core_equals_reference(game):
    rules, discount, method, opponent = game
    try:  # a small budget stops large games early, before the count is known
        transitions = babytris.enumerate_boards(rules, max_memory=2**24)
    except babytris.MemoryLimitError:
        assume(False)
    assume(transitions.n_boards <= SMALL)

    core = babytris.solve_transitions(
        transitions, discount=discount, tol=TOL, max_iter=100_000, method=method, opponent=opponent
    )
    ref = reference.solve(rules, discount=discount, tol=TOL, max_iter=100_000, opponent=opponent)
    assert core.converged and ref.converged

    # the same boards
    assert sorted(core.boards.tolist()) == sorted(ref.boards)

    # the same values, state by state (rows matched by board value, not index)
    order = core.transitions.indices(np.array(ref.boards, dtype=np.uint64))
    ref_values = np.array(ref.values)
    assert np.max(np.abs(core.values[order] - ref_values)) <= 1e-9
    assert abs(core.start_value - ref.start_value) <= 1e-9

    if opponent == "minavg":  # the player places at random: no move to check
        return
    # the core's chosen move is optimal under the reference's values
    ref_after = {b: reference.board_value(rules, row, opponent) for b, row in zip(ref.boards, ref.values)}
    for j, b in enumerate(ref.boards):
        for p in range(rules.n_pieces):
            moves = reference.moves(rules, b, p)
            action = core.best_action(b, p)
            if not moves:
                assert action is None
                assert ref.values[j][p] == 0.0
                continue
            assert action is not None
            (after, lines) = [(nb, n) for m, nb, n in moves if m == action][0]
            q = rules.line_scores[lines] + discount * ref_after[after]
            assert abs(q - ref.values[j][p]) <= 1e-9, (b, p, action)
