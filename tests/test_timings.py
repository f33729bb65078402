"""Every timing through every door: the opponent choosing the next piece after
the placement (no preview) or before it (``preview=1``, the course's timing,
and longer previews), solved, played, evaluated over n placements and valued
from the start with one convention."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import random_legal_policy, small_rules

import babytris
from babytris import reference
from babytris.solvers.match import Match
from babytris.solvers.roles import policy_rows

SMALL = 400  # rows the reference walks quickly


def ref_node(t: babytris.Transitions, i: int):
    """The reference's name of row i: the board, or with previews (board, queue)."""
    k, P = t.rules.preview, t.rules.n_pieces
    if not k:
        return int(t.boards[i])
    q = int(t.queues[i])
    return int(t.boards[i]), tuple((q // P ** (k - 1 - j)) % P for j in range(k))


def plain_expected_points(t, rows, pieces, starts, weights, n_placements, worst=False):
    """U_k(row) written out in plain Python over the move table: the piece
    drawn (or given, or with ``worst`` the least valuable), the player's move
    (or the mean over the legal ones), points plus U_{k-1} of the row after."""
    P, scores = t.rules.n_pieces, t.rules.line_scores
    probs = t.rules.probabilities
    offsets, nxt, lines = t.offsets.tolist(), t.next_board.tolist(), t.lines.tolist()
    U = [0.0] * t.n_boards
    for _ in range(n_placements):
        new = []
        for b in range(t.n_boards):
            q_values = []
            for p in range(P):
                lo, hi = offsets[b * P + p], offsets[b * P + p + 1]
                moves = range(lo, hi) if rows is None else ([lo + int(rows[b * P + p])] if hi > lo else [])
                q_values.append(sum(scores[lines[e]] + U[nxt[e]] for e in moves) / len(moves) if moves else 0.0)
            if worst:
                new.append(min(q_values))
            elif pieces is None:
                new.append(sum(w * v for w, v in zip(probs, q_values)))
            else:
                new.append(q_values[int(pieces[b])])
        U = new
    opening = [U[int(s)] for s in starts]
    return min(opening) if worst else sum(w * u for w, u in zip(weights, opening))


@pytest.fixture(scope="module")
def course_4x4():
    """The course's timing on 4x4: the opponent names the next piece before the placement."""
    rules = babytris.Rules(width=4, height=4, preview=1)
    t = babytris.enumerate_boards(rules)
    return t, {
        model: babytris.solve_transitions(t, discount=0.9, opponent=model, tol=1e-10)
        for model in ("random", "minimax", "minavg", "gaps")
    }


def test_the_opponent_chooses_the_opening_too(course_4x4):
    t, solved = course_4x4
    rows, chances = t.start_nodes()
    assert len(rows) == 2 and chances.tolist() == [0.5, 0.5]  # the first piece, I or L, before any choice
    for model, pick in (("minimax", min), ("minavg", min), ("gaps", max)):
        s = solved[model]
        opening = s.board_values[rows]
        assert s.start_value == pick(opening)
        assert s.start_value_first_drawn == pytest.approx(opening.mean(), abs=1e-12)
        (row,), (weight,) = s.opening()
        assert weight == 1.0 and s.board_values[row] == pick(opening)
    # against drawn pieces both conventions are the one mean
    assert solved["random"].start_value == solved["random"].start_value_first_drawn
    assert solved["random"].opening()[0].tolist() == rows.tolist()


def test_without_previews_the_first_piece_is_the_start_boards_choice():
    s = babytris.solve(width=4, height=5, opponent="minimax", tol=1e-10)  # (on 4x4 both first pieces tie)
    start = s.transitions.start_index
    assert s.start_value == s.values[start].min()
    assert s.start_value_first_drawn == pytest.approx(s.values[start] @ np.array(s.rules.probabilities), abs=1e-12)
    assert s.start_value < s.start_value_first_drawn


@pytest.mark.parametrize("opponent", ["minimax", "minavg", "gaps"])
def test_the_start_value_equals_the_reference(opponent):
    rules = babytris.Rules(width=3, height=4, preview=1)
    core = babytris.solve(rules, opponent=opponent, tol=1e-12)
    ref = reference.solve(rules, opponent=opponent, tol=1e-12)
    assert core.start_value == pytest.approx(ref.start_value, abs=1e-9)
    assert core.start_value != pytest.approx(core.start_value_first_drawn, abs=1e-6)


def test_the_minimax_solve_of_the_course_timing_satisfies_its_bellman_equation(course_4x4):
    """V(n, p) = max over moves [points + 0.9 * min_q V(n', q)], written out."""
    t, solved = course_4x4
    s = solved["minimax"]
    P, scores = 2, t.rules.line_scores
    least = s.values.min(axis=1)
    worst = 0.0
    for state in range(t.n_states):
        lo, hi = int(t.offsets[state]), int(t.offsets[state + 1])
        if lo == hi:
            assert s.values.flat[state] == 0.0
            continue
        best = max(scores[int(t.lines[e])] + 0.9 * least[int(t.next_board[e])] for e in range(lo, hi))
        worst = max(worst, abs(best - s.values.flat[state]))
    assert worst <= 1e-8
    assert s.values.shape == (t.n_boards, P)


@pytest.mark.parametrize("model", ["random", "minimax", "minavg", "gaps"])
def test_played_games_agree_with_the_exact_expectation(course_4x4, model):
    t, solved = course_4x4
    player = solved["random"] if model in ("random",) else solved["minimax"]
    opponent = "random" if model == "random" else solved[model]
    exact = babytris.expected_points(t, player, opponent, n_placements=200)
    games = babytris.play(t, player, opponent, n_placements=200, n_games=4000, seed=7)
    if games.stderr == 0:
        assert games.mean == pytest.approx(exact, abs=1e-9)
    else:
        assert abs(games.mean - exact) <= 5 * games.stderr


def test_an_opponent_solution_opens_with_its_worst_queue(course_4x4):
    t, solved = course_4x4
    s = solved["minimax"]
    rows, _ = t.start_nodes()
    (opening,), _ = s.opening()
    for n_placements in (1, 2, 30):
        drawn = babytris.horizon_values(t, s, "random", n_placements=n_placements)
        chosen = babytris.horizon_values(t, s, s, n_placements=n_placements)
        assert chosen.starts.tolist() == [opening]
        assert drawn.starts.tolist() == rows.tolist()
        assert chosen.start_value == chosen.values[opening]


@st.composite
def games(draw):
    rules = draw(small_rules(sizes=(2, 4), max_pieces=2))
    rules = dataclasses.replace(rules, preview=draw(st.integers(0, 2)))
    player = draw(st.sampled_from(["optimal", "random", "array"]))
    opponent = draw(st.sampled_from(["random", "array", "minimax", "minavg", "gaps", "best response"]))
    return rules, player, opponent, draw(st.integers(1, 8)), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(games())
def test_expected_points_in_every_timing_equal_the_reference_and_the_plain_recursion(game):
    rules, player_kind, opponent_kind, n_placements, seed = game
    t = babytris.enumerate_boards(rules)
    assume(t.n_boards <= SMALL)
    rng = np.random.default_rng(seed)
    P = rules.n_pieces
    solution = babytris.solve_transitions(t, tol=1e-12)
    if player_kind == "optimal":
        policy = solution.policy
    elif player_kind == "array":  # any legal placement, at random
        policy = random_legal_policy(t, rng)
    player = "random" if player_kind == "random" else policy
    if opponent_kind in ("minimax", "minavg", "gaps"):
        opponent = babytris.solve_transitions(t, opponent=opponent_kind, tol=1e-12)
        pieces = opponent.opponent_policy
        starts, weights = opponent.opening()
    else:
        pieces = rng.integers(0, P, t.n_boards) if opponent_kind == "array" else None
        opponent = {"random": "random", "best response": "best_response"}.get(opponent_kind, pieces)
        starts, weights = t.start_nodes()
    core = babytris.expected_points(t, player, opponent, n_placements=n_placements)

    rows = None if player_kind == "random" else policy_rows(t, policy)
    worst = opponent_kind == "best response"
    plain = plain_expected_points(t, rows, None if worst else pieces, starts, weights, n_placements, worst=worst)
    assert abs(core - plain) <= 1e-9 * max(1.0, abs(plain))

    nodes = [ref_node(t, i) for i in range(t.n_boards)]
    ref_player = (
        "random"
        if player_kind == "random"
        else {(nodes[i], p): int(policy[i, p]) for i in range(t.n_boards) for p in range(P) if policy[i, p] >= 0}
    )
    ref_opponent = (
        {"random": "random", "best response": "best_response"}[opponent_kind]
        if pieces is None or worst
        else {nodes[i]: int(pieces[i]) for i in range(t.n_boards)}
    )
    opening = nodes[int(starts[0])] if len(starts) == 1 and opponent_kind in ("minimax", "minavg", "gaps") else None
    ref = reference.expected_points(rules, ref_player, ref_opponent, n_placements, opening=opening)
    assert abs(core - ref) <= 1e-9 * max(1.0, abs(ref))


@pytest.mark.parametrize("preview", [0, 1, 2])
def test_a_stepped_game_is_the_played_game(preview):
    """The max-min player against its own opponent is deterministic: the game
    stepped placement by placement (the CLI's and the pictures' path) scores
    exactly what the compiled playout and the exact expectation give."""
    s = babytris.solve(width=4, height=5, preview=preview, opponent="minimax", tol=1e-10)
    game = Match(s.rules, opponent=s).stepped_game()
    while not game.over and game.placements < 60:
        game.place(s.best_action(game.board, game.piece, game.preview))
    played = babytris.play(s, "optimal", "solution", n_placements=60)
    assert game.score == played.points[0] == babytris.expected_points(s, "optimal", "solution", n_placements=60)


def test_the_cli_plays_the_course_timing(capsys):
    from babytris.cli import commands as cli

    assert cli.main(["play", "--preview", "1", "--opponent", "minimax", "--placements", "8", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    s = babytris.solve(width=4, height=4, preview=1, opponent="minimax")
    (row,), _ = s.opening()
    first = s.rules.piece_names[s.transitions.queue_of(int(row))[0]]
    assert record["placements"][0]["piece"] == first and len(record["placements"]) == 8


def test_a_best_response_to_an_opponent_solution_keeps_its_opening(course_4x4, tmp_path):
    """Solving against the minimax opponent's choices (a given opponent) gives
    the max-min values back, and the start value opens as that opponent does;
    the opening survives a save and load."""
    t, solved = course_4x4
    minimax = solved["minimax"]
    answer = babytris.solve_transitions(t, discount=0.9, opponent=minimax, tol=1e-10)
    assert answer.opponent == "given" and answer.opening_row == int(minimax.opening()[0][0])
    assert answer.start_value == pytest.approx(minimax.start_value, abs=1e-8)
    assert babytris.evaluate(t, minimax, minimax, discount=0.9) == pytest.approx(minimax.start_value, abs=1e-8)
    assert babytris.evaluate(minimax, opponent="minimax", discount=0.9) == pytest.approx(minimax.start_value, abs=1e-8)
    answer.save(tmp_path / "answer.npz")
    assert babytris.load(tmp_path / "answer.npz").opening_row == answer.opening_row


def test_the_gymnasium_env_opens_as_the_opponent_solution_does(course_4x4):
    pytest.importorskip("gymnasium")
    from babytris.formats.env import BabyTetrisEnv

    t, solved = course_4x4
    minimax = solved["minimax"]
    (row,), _ = minimax.opening()
    env = BabyTetrisEnv(opponent=minimax)
    for seed in range(4):
        _, info = env.reset(seed=seed)
        assert (info["piece"], *info["preview"]) == t.queue_of(int(row)) + (int(minimax.opponent_policy[row]),)


def hold_node(t, i):
    """The reference's name of row i with hold: (board, queue, held piece or None, locked)."""
    P, slot = t.rules.n_pieces, int(t.slots[i])
    board, queue = ref_node(t, i) if t.rules.preview else (int(t.boards[i]), ())
    held = None if slot == 0 else (slot - 1) % P
    return board, queue, held, slot > P


def plain_hold_points(t, rows, pieces, starts, weights, n_placements):
    """U_k written out with hold: a hold (placement HOLD_MOVE) leads to a locked
    row within the same placement, so locked rows are valued first each step.
    ``pieces="worst"``: the finite-horizon adversary, the least of the
    pieces on each row (after a hold it chooses again), from the worst start."""
    from babytris.engine.transitions import HOLD_MOVE

    P, scores, probs = t.rules.n_pieces, t.rules.line_scores, t.rules.probabilities
    order = sorted(range(t.n_boards), key=lambda b: not int(t.slots[b]) > P)
    U = [0.0] * t.n_boards
    for _ in range(n_placements):
        new = [0.0] * t.n_boards
        for b in order:
            q_values = []
            for p in range(P):
                lo, hi = int(t.offsets[b * P + p]), int(t.offsets[b * P + p + 1])
                moves = range(lo, hi) if rows is None else ([lo + int(rows[b * P + p])] if hi > lo else [])
                worth = [
                    scores[int(t.lines[e])] + (new if int(t.placement[e]) == HOLD_MOVE else U)[int(t.next_board[e])]
                    for e in moves
                ]
                q_values.append(sum(worth) / len(worth) if worth else 0.0)
            if isinstance(pieces, str):
                new[b] = min(q_values)
            else:
                new[b] = sum(w * v for w, v in zip(probs, q_values)) if pieces is None else q_values[int(pieces[b])]
        U = new
    if isinstance(pieces, str):
        return min(U[int(s)] for s in starts)
    return sum(w * U[int(s)] for w, s in zip(weights, starts))


@pytest.mark.parametrize("preview", [0, 1])
@pytest.mark.parametrize("player", ["optimal", "random"])
@pytest.mark.parametrize("line_scores", [(0, 1, 3, 6), (0.5, 1, 3, 6)])
def test_the_best_response_with_hold_chooses_again_after_a_hold(preview, player, line_scores):
    """The finite-horizon adversary with hold: a hold counts no placement and
    the adversary gives the next piece with as many placements left; equal
    to the plain recursion and (random player) the reference."""
    rules = babytris.Rules(width=3, height=4, hold=True, preview=preview, line_scores=line_scores)
    t = babytris.enumerate_boards(rules)
    optimal = babytris.solve_transitions(t, tol=1e-12)
    side = optimal if player == "optimal" else "random"
    rows = None if player == "random" else policy_rows(t, optimal.policy)
    starts, weights = t.start_nodes()
    for n in (1, 5):
        worst = babytris.expected_points(t, side, "best_response", n_placements=n)
        assert worst == pytest.approx(plain_hold_points(t, rows, "worst", starts, weights, n), abs=1e-9)
        if player == "random":
            assert worst == pytest.approx(reference.expected_points(rules, "random", "best_response", n), abs=1e-9)
        every_board = babytris.horizon_values(t, side, "best_response", n_placements=n, all_boards=True)
        assert every_board.start_value == pytest.approx(worst, abs=1e-12)
    assert worst <= babytris.expected_points(t, side, "random", n_placements=5) + 1e-9


@pytest.mark.parametrize("preview", [0, 1])
@pytest.mark.parametrize("player", ["optimal", "random"])
@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_hold_is_played_and_evaluated_in_every_timing(preview, player, opponent):
    """A hold counts no placement: the exact expectation equals the plain
    recursion and (random player) the reference; the playouts agree with it."""
    # (a hold clears no row: it scores line_scores[0], here not 0, as the solve and the playouts count it)
    rules = babytris.Rules(width=3, height=4, hold=True, preview=preview, line_scores=(0.5, 1, 3, 6))
    t = babytris.enumerate_boards(rules)
    optimal = babytris.solve_transitions(t, tol=1e-12)
    given = babytris.solve_transitions(t, opponent="minimax", tol=1e-12) if opponent == "minimax" else "random"
    side = optimal if player == "optimal" else "random"
    exact = babytris.expected_points(t, side, given, n_placements=6)
    rows = None if player == "random" else policy_rows(t, optimal.policy)
    pieces = None if opponent == "random" else given.opponent_policy
    starts, weights = given.opening() if opponent == "minimax" else t.start_nodes()
    assert exact == pytest.approx(plain_hold_points(t, rows, pieces, starts, weights, 6), abs=1e-9)
    if player == "random":
        nodes = [hold_node(t, i) for i in range(t.n_boards)]
        ref_opponent = "random" if pieces is None else {nodes[i]: int(pieces[i]) for i in range(t.n_boards)}
        opening = nodes[int(starts[0])] if opponent == "minimax" and len(starts) == 1 else None
        ref = reference.expected_points(rules, "random", ref_opponent, 6, opening=opening)
        assert exact == pytest.approx(ref, abs=1e-9)
    games = babytris.play(t, side, given, n_placements=6, n_games=3000, seed=2)
    assert (games.placements <= 6).all()
    if games.stderr == 0:
        assert games.mean == pytest.approx(exact, abs=1e-9)
    else:
        assert abs(games.mean - exact) <= 5 * games.stderr


@pytest.mark.parametrize("fields", [dict(preview=1), dict(hold=True), dict(preview=1, hold=True)])
def test_bags_with_previews_and_hold_are_played_and_evaluated(fields):
    rules = babytris.Rules(width=3, height=4, randomizer="bag", **fields)
    t = babytris.enumerate_boards(rules)
    exact = babytris.expected_points(t, "random", "random", n_placements=6)
    assert exact == pytest.approx(reference.expected_points(rules, "random", "random", 6), abs=1e-12)
    games = babytris.play(t, "random", "random", n_placements=6, n_games=20_000, seed=1)
    assert abs(games.mean - exact) <= 5 * games.stderr


@pytest.mark.parametrize("preview", [1, 2])
def test_fixed_sides_settle_whatever_the_length_of_their_cycle(preview):
    """Both sides fixed, a game runs into one cycle of rows (8 rows at 4x5 in
    the course timing, which a lag of 12 placements never repeats): the
    checkpoint lag takes its length, so the increments settle and the
    extrapolation equals the exact backups."""
    s = babytris.solve(width=4, height=5, preview=preview, opponent="minimax")
    quick = babytris.horizon_values(s, "optimal", "solution", n_placements=10_000)
    exact = babytris.horizon_values(s, "optimal", "solution", n_placements=10_000, exact=True)
    assert quick.stopped == "extrapolated" and quick.steps < 1_000
    assert quick.start_value == pytest.approx(exact.start_value, abs=1e-9)
