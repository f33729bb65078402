"""Hold, stepped by hand: a Game with hold makes exactly the move table's moves
(placements, swaps, the hold step), and one game stepped with a Solution's
choices scores what the compiled playouts and the exact evaluation say."""

from __future__ import annotations

import numpy as np
import pytest

import babytris
from babytris import Match, Rules
from babytris.engine.stepped import Game


@pytest.mark.parametrize("hold_start", ["empty", "drawn"])
@pytest.mark.parametrize("preview", [0, 1])
def test_a_stepped_game_with_hold_is_the_compiled_playout(hold_start, preview):
    rules = Rules(width=3, height=4, hold=True, hold_start=hold_start, preview=preview)
    maxmin = babytris.solve(rules, opponent="minimax", tol=1e-12)
    game = Match.played(maxmin).stepped_game(seed=0)
    while not game.over and game.placements < 40:
        game.place(maxmin.best_action(game.board, game.piece, game.preview, game.held, game.locked))
    played = babytris.play(maxmin, "optimal", "solution", n_placements=40)
    assert (game.score, game.placements) == (played.points[0], played.placements[0])


@pytest.mark.parametrize("hold_start", ["empty", "drawn"])
def test_a_games_moves_are_the_tables_moves(hold_start):
    rules = Rules(width=3, height=4, hold=True, hold_start=hold_start)
    solution = babytris.solve(rules)
    rng = np.random.default_rng(7)
    for seed in range(5):
        game = Game(rules, seed=seed)
        while not game.over and game.placements < 30:
            table = solution.action_values(game.board, game.piece, game.preview, game.held, game.locked)
            moves = [m.placement for m in game.moves()] + (["hold"] if game.can_hold else [])
            assert set(moves) == set(table)
            game.place(moves[rng.integers(len(moves))])


def test_the_mean_of_stepped_games_is_the_exact_expectation():
    rules = Rules(width=3, height=4, hold=True)
    solution = babytris.solve(rules)
    n_placements, scores = 12, []
    for seed in range(400):
        game = Game(rules, seed=seed)
        while not game.over and game.placements < n_placements:
            game.place(solution.best_action(game.board, game.piece, game.preview, game.held, game.locked))
        scores.append(game.score)
    exact = babytris.expected_points(solution, n_placements=n_placements, exact=True)
    assert abs(np.mean(scores) - exact) <= 4 * np.std(scores) / np.sqrt(len(scores))


def test_the_hold_moves_refuse_what_the_rules_do_not_allow():
    game = Game(Rules(width=3, height=4, hold=True), seed=0)
    assert game.held is None and game.can_hold and not game.locked
    first = game.piece
    assert game.place("hold") == 0.0 and game.placements == 0
    assert (game.held, game.locked, game.can_swap) == (first, True, False)
    with pytest.raises(ValueError, match="the slot holds"):
        game.hold()
    held_name = game.rules.pieces[first].name
    if held_name != game.piece_name:  # just held: no swap
        swap = next(m for m in game._moves_of(first))
        with pytest.raises(ValueError, match="no swap now"):
            game.place(swap.placement)
    game.place(game.moves()[0].placement)
    assert not game.locked and game.placements == 1
    with pytest.raises(ValueError, match="these rules have no hold"):
        Game(Rules(width=3, height=4), seed=0).hold()
    with pytest.raises(ValueError, match="opening_held must be a piece index"):
        Game(Rules(width=3, height=4, hold=True), opening_held=0)


def test_babytris_play_steps_hold_games_as_the_playouts_score_them(capsys, tmp_path):
    import json

    from babytris.cli import commands as cli

    options = ["--width", "3", "--height", "4", "--hold", "--preview", "1", "--opponent", "minimax", "--tol", "1e-12"]
    assert cli.main(["play", *options, "--placements", "30", "--json", "--strip", str(tmp_path / "s.png")]) == 0
    record = json.loads(capsys.readouterr().out)
    placed = [step for step in record["placements"] if "hold" not in step]
    assert len(placed) == 30 or record["game_over"]
    maxmin = babytris.solve(Rules(width=3, height=4, hold=True, preview=1), opponent="minimax", tol=1e-12)
    played = babytris.play(maxmin, "optimal", "solution", n_placements=30)
    assert record["score"] == played.points[0] == sum(step["points"] for step in record["placements"])
    assert (tmp_path / "s.png").stat().st_size > 0
