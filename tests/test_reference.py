"""Differential test: the compiled solver against the pure-Python reference on random small games.

Random rule sets (board 2-5 x 2-5, any non-empty set of catalogue pieces,
random piece probabilities and line scores, discount in [0, 0.95], now and
then a start board, the combo objective, mirror merging, no holes or topping
out), pieces drawn at random, picked by the minimax, min-avg or gap
opponent, or given per board; the player optimal, placing at random or given
per state; points, points with a cost for losing, or a random weighted
reward (with a loss, and with no holes a weight on the cells filled).  Games with more than SMALL reachable boards
are skipped so the reference stays quick.  Both are solved to 1e-12 and
compared state by state, matched by board value.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris import CATALOGUE, reference

SMALL = 1500
TOL = 1e-12


@st.composite
def games(draw):
    rules = draw(
        small_rules(sizes=(2, 5), pool=tuple(p.cells for p in CATALOGUE.values()), max_pieces=7, variants=True)
    )
    discount = draw(st.floats(0.0, 0.95))
    opponent = draw(st.sampled_from(["random", "minimax", "minavg", "gaps", "given"]))
    player = "random" if opponent in ("minavg", "gaps") else draw(st.sampled_from(["optimal", "random", "given"]))
    reward = None
    kind = "none" if opponent == "gaps" else draw(st.sampled_from(["none", "loss", "weights"]))
    loss = st.floats(0.0, 20.0, allow_nan=False, allow_infinity=False)
    if kind == "loss":
        reward = babytris.Reward(loss=draw(loss))
    elif kind == "weights":
        weight = st.floats(-3.0, 10.0, allow_nan=False, allow_infinity=False)
        reward = babytris.Reward(
            lines=draw(weight),
            height=draw(weight),
            score=draw(weight),
            gaps=draw(weight),
            new_holes=draw(weight) if rules.no_holes else 0.0,
            loss=draw(loss),
        )
    single_agent = opponent in ("random", "given") and player in ("optimal", "given")
    # van der Wal's generalized policy iteration, and strategy iteration
    game = opponent == "minimax" and player == "optimal"
    methods = ["vi", "jacobi"] + (["mpi"] if single_agent or game else []) + (["strategy"] if game else [])
    method = draw(st.sampled_from(methods))
    seed = draw(st.integers(0, 2**32 - 1))
    return rules, discount, method, opponent, player, reward, seed


def given_roles(transitions, opponent, player, seed):
    """Random given policies, as arrays for the core and dicts for the reference."""
    rng = np.random.default_rng(seed)
    t, n_pieces = transitions, transitions.rules.n_pieces
    core_opponent, ref_opponent, core_player, ref_player = opponent, opponent, player, player
    if opponent == "minimax" and player != "optimal":  # (one meaning per word: that opponent answers a given player)
        core_opponent = ref_opponent = "best_response"
    if opponent == "given":
        core_opponent = rng.integers(0, n_pieces, t.n_boards).astype(np.int16)
        ref_opponent = {int(b): int(p) for b, p in zip(t.boards, core_opponent)}
    if player == "given":
        counts = np.diff(t.offsets)
        pick = t.offsets[:-1] + (rng.random(t.n_states) * np.maximum(counts, 1)).astype(np.int64)
        placement = t.placement if t.n_moves else np.zeros(1, dtype=t.placement.dtype)  # (no move anywhere)
        chosen = np.where(counts > 0, placement[np.minimum(pick, max(t.n_moves - 1, 0))], -1)
        core_player = chosen.reshape(t.n_boards, n_pieces).astype(np.int16)
        ref_player = {(int(b), p): int(core_player[i, p]) for i, b in enumerate(t.boards) for p in range(n_pieces)}
    return core_opponent, ref_opponent, core_player, ref_player


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(games())
def test_core_equals_reference(game):
    rules, discount, method, opponent, player, reward, seed = game
    try:  # a small budget stops large games early, before the count is known
        transitions = babytris.enumerate_boards(rules, max_memory=2**24)
    except babytris.MemoryLimitError:
        assume(False)
    assume(transitions.n_boards <= SMALL)
    core_opponent, ref_opponent, core_player, ref_player = given_roles(transitions, opponent, player, seed)

    core = babytris.solve_transitions(
        transitions,
        discount=discount,
        tol=TOL,
        max_iter=100_000,
        method=method,
        opponent=core_opponent,
        player=core_player,
        reward=reward,
    )
    ref = reference.solve(
        rules, discount=discount, tol=TOL, max_iter=100_000, opponent=ref_opponent, player=ref_player, reward=reward
    )
    assert core.converged and ref.converged

    # the same boards
    assert sorted(core.boards.tolist()) == sorted(ref.boards)

    # the same values, state by state (rows matched by board value, not index)
    order = core.transitions.indices(np.array(ref.boards, dtype=np.uint64))
    ref_values = np.array(ref.values)
    assert np.max(np.abs(core.values[order] - ref_values)) <= 1e-9 * max(1.0, np.abs(ref_values).max())
    assert abs(core.start_value - ref.start_value) <= 1e-9 * max(1.0, abs(ref.start_value))

    # the opponent gives the same piece wherever the choice is clear
    if ref.piece_choices is not None:
        for j, b in enumerate(ref.boards):
            row = sorted(ref.values[j], reverse=opponent == "gaps")  # the opponent's choice first
            if len(row) == 1 or abs(row[1] - row[0]) > 1e-6 or opponent == "given":
                assert int(core.opponent_policy[order[j]]) == ref.piece_choices[b]

    if player != "optimal" or opponent == "gaps":  # nothing chosen by the player to check
        return
    # the core's chosen move is optimal under the reference's values
    ref_after = {b: reference.board_value(rules, row, ref.opponent, b) for b, row in zip(ref.boards, ref.values)}
    for j, b in enumerate(ref.boards):
        for p in range(rules.n_pieces):
            moves = reference.moves(rules, b, p)
            action = core.best_action(b, p)
            if not moves:
                assert action is None
                assert ref.values[j][p] == reference.dead_value(rules, reward)
                continue
            assert action is not None
            (after, lines) = [(nb, n) for m, nb, n in moves if m == action][0]
            q = (
                reference.move_reward(
                    rules, b, after, lines, opponent, reward, reference.filled_cells(rules, b, action)
                )
                + discount * ref_after[after]
            )
            assert abs(q - ref.values[j][p]) <= 1e-9 * max(1.0, abs(ref.values[j][p])), (b, p, action)
