"""One game, one model: a Match (rules, player, opponent, reward) is built
once and read by every door, which give what the same sides give when
passed one by one; what no door can take is refused by the Match, once."""

from __future__ import annotations

import json

import numpy as np
import pytest

import babytris
from babytris import Match, Reward, Rules
from babytris.cli.commands import _parser
from babytris.cli.options import game_match
from babytris.formats.export import explicit_model
from babytris.formats.interop import to_quantecon


@pytest.fixture(scope="module", params=[0, 1], ids=["after", "before"])
def timed(request):
    """3x4 in both timings: the table, the optimal player, the minimax solve."""
    t = babytris.enumerate_boards(Rules(width=3, height=4, preview=request.param))
    return t, babytris.solve_transitions(t, tol=1e-12), babytris.solve_transitions(t, opponent="minimax", tol=1e-12)


def test_a_match_solves_as_its_sides_given_one_by_one(timed):
    t, _, minimax = timed
    match = Match(t.rules, opponent="minimax")
    solved = babytris.solve(match, tol=1e-12)
    np.testing.assert_array_equal(solved.values, minimax.values)
    assert solved.start_value == minimax.start_value
    # the table given is reused, and gives the same
    assert babytris.solve(Match(t.rules, opponent="minimax", table=t), tol=1e-12).start_value == minimax.start_value


def test_a_match_plays_and_evaluates_as_its_sides_given_one_by_one(timed):
    t, optimal, minimax = timed
    match = Match.of(t, optimal, minimax)  # the optimal player against the equilibrium opponent's choices
    assert babytris.expected_points(match, n_placements=50) == babytris.expected_points(
        t, optimal, minimax, n_placements=50
    )
    played = babytris.play(match, n_placements=50, n_games=20, seed=3)
    np.testing.assert_array_equal(
        played.points, babytris.play(t, optimal, minimax, n_placements=50, n_games=20, seed=3).points
    )
    exact = babytris.horizon_values(match, n_placements=50, exact=True)
    assert exact.start_value == pytest.approx(babytris.expected_points(match, n_placements=50), abs=1e-9)
    # the discounted value of the max-min player against its own equilibrium opponent is the max-min value
    own = Match.played(minimax)
    assert babytris.evaluate(own, discount=0.9) == pytest.approx(minimax.start_value, abs=1e-9)


def test_a_match_exports_its_opponent(timed):
    t, _, minimax = timed
    match = Match(t.rules, opponent="minimax", table=t)
    by_match = explicit_model(match, discount=0.9)
    by_sides = explicit_model(t, discount=0.9, opponent=minimax)
    np.testing.assert_array_equal(by_match.targets, by_sides.targets)
    np.testing.assert_array_equal(by_match.probabilities, by_sides.probabilities)
    # the exported MDP's optimum is the max-min value, from the opponent's own opening
    assert by_match.total_reward()[0] == pytest.approx(minimax.start_value, abs=1e-9)
    q = to_quantecon(match, discount=0.9)
    assert q.R.shape == to_quantecon(t, discount=0.9, opponent=minimax).R.shape


def test_a_stepped_game_follows_the_matchs_opponent(timed):
    t, _, minimax = timed
    game = Match.played(minimax).stepped_game(seed=0)
    points = 0.0
    while not game.over and game.placements < 30:
        move = minimax.best_action(game.board, game.piece, game.preview)
        game.place(move)
    points = game.score
    assert points == babytris.play(minimax, "optimal", "solution", n_placements=30).points[0]


def test_a_tournament_takes_a_match_and_plays_each_pair_as_one(timed):
    t, optimal, minimax = timed
    table = babytris.tournament(Match(t.rules, table=t), {"opt": optimal}, {"mm": minimax}, n_placements=40, n_games=0)
    assert table.expected[0, 0] == babytris.expected_points(Match.of(t, optimal, minimax), n_placements=40)
    with pytest.raises(ValueError, match="a tournament crosses the players and opponents given"):
        babytris.tournament(Match(t.rules, opponent=minimax), {"opt": optimal}, {"mm": minimax})


def test_refusals_come_from_the_match_once_with_the_reason(timed):
    t, optimal, minimax = timed
    rules = t.rules
    with pytest.raises(ValueError, match="opponent='minimax' is the equilibrium opponent of an optimal player"):
        Match(rules, player=optimal, opponent="minimax")
    with pytest.raises(ValueError, match="opponent='minavg' plays against a player placing at random"):
        Match(rules, player="optimal", opponent="minavg")
    with pytest.raises(ValueError, match="reward: opponent='gaps' counts holes created"):
        Match(rules, opponent="gaps", reward=Reward(lines=1.0))
    with pytest.raises(ValueError, match="opponent='best_response' answers a given player"):
        Match(rules, opponent="best_response")
    with pytest.raises(ValueError, match="player: the Solution was solved on other rules"):
        Match(Rules(width=3, height=3), player=optimal)
    for nothing in (None, 3, 0.5, True):  # (refused here, not later by the door that reads the pieces)
        with pytest.raises(ValueError, match=rf"opponent must be one of 'random', .*, got {nothing!r}$"):
            Match(rules, opponent=nothing)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rules must be a babytris.Rules"):
        Match("3x4")  # type: ignore[arg-type]
    # the doors read the same refusals
    with pytest.raises(ValueError, match="opponent='minimax' is the equilibrium opponent of an optimal player"):
        babytris.solve(rules, player=optimal, opponent="minimax")
    # what a door cannot do with a match, the match says
    with pytest.raises(ValueError, match="player='optimal' has no policy to play until the match is solved"):
        babytris.play(Match(rules))
    with pytest.raises(ValueError, match="opponent='gaps' chooses pieces once solved"):
        babytris.expected_points(Match(rules, opponent="gaps"), n_placements=5)
    with pytest.raises(ValueError, match="player: an export is the MDP of an optimal player"):
        explicit_model(Match(rules, player=optimal), discount=0.9)
    with pytest.raises(ValueError, match="a Match carries its"):
        babytris.solve(Match(rules), opponent="minimax")
    with pytest.raises(ValueError, match="a Match carries its"):
        babytris.play(Match(rules, player=optimal), "random")


def test_the_default_player_is_the_one_the_opponent_models():
    rules = Rules(width=3, height=3)
    assert Match(rules).player == "optimal"
    assert Match(rules, opponent="minavg").player == "random"
    assert Match(rules, opponent="gaps").player == "random"


@pytest.mark.parametrize("command", ["solve", "play", "export", "tournament"])
def test_every_subcommand_builds_the_same_match_from_the_same_options(command):
    options = ["--width", "3", "--height", "4", "--preview", "1", "--line-scores", "0", "2", "5", "9"]
    extra = ["--format", "drn", "--out", "x.drn"] if command == "export" else []
    args = _parser().parse_args([command, *options, *extra])
    match = game_match(args)
    assert match.rules == Rules(width=3, height=4, preview=1, line_scores=(0, 2, 5, 9))
    assert match.opponent == getattr(args, "opponent", "random")


def test_the_lean_mode_reads_every_rule_option_like_the_table(capsys):
    from babytris.cli import commands as cli

    options = ["solve", "--width", "3", "--height", "4", "--line-scores", "0", "2", "5", "9", "--top-out"]
    values = {}
    for mode in ("lean", "table"):
        assert cli.main([*options, "--mode", mode, "--json", "--tol", "1e-12"]) == 0
        values[mode] = json.loads(capsys.readouterr().out)["start_value"]
    expected = babytris.solve(Rules(width=3, height=4, line_scores=(0, 2, 5, 9), top_out=True), tol=1e-12)
    assert values["lean"] == pytest.approx(expected.start_value, abs=1e-9)
    assert values["table"] == pytest.approx(expected.start_value, abs=1e-9)


def test_the_table_of_a_match_shows_both_sides(timed):
    t, optimal, minimax = timed
    table = Match.of(t, optimal, minimax).policy_table()
    P = t.rules.n_pieces
    names = np.asarray(t.rules.piece_names)
    assert (np.asarray(table["gives"]) == names[np.repeat(minimax.opponent_policy, P)]).all()
    assert (np.asarray(table["placement"]) == optimal.policy.ravel()).all()
    given = np.asarray(table["gives"]) == np.asarray(table["drawn"])
    assert (np.asarray(table["chance"]) == given.astype(float)).all()
    drawn = Match.of(t, optimal, "random").policy_table()
    assert "gives" not in drawn and np.allclose(np.asarray(drawn["chance"]), t.draw_chances().ravel())
    with pytest.raises(ValueError, match="a table shows a Solution's policy"):
        Match(t.rules, opponent=minimax).policy_table()


def test_the_pictures_take_a_match(timed):
    from babytris.draw.frames import game_frames

    t, optimal, minimax = timed
    by_match = game_frames(Match.of(t, optimal, minimax), n_placements=5, candidates=False)
    by_sides = game_frames(optimal, opponent=minimax, n_placements=5, candidates=False)
    assert len(by_match) == len(by_sides) and all((a == b).all() for a, b in zip(by_match, by_sides))
    with pytest.raises(ValueError, match="a Match whose player is one"):
        game_frames(Match(t.rules, opponent=minimax))
