"""The course's players and opponents as its final program plays them
(babytris.claims.course_players), against what that program printed when built here:
diaarca/baby-tetris at eec1009 ("final slide version"), g++ 12.2.0 -O2, its src/ with
Tetris.cpp's main replaced by one that takes the first piece and the player's weights,
solves the three opponents and the player as Tetris.cpp does, and plays one game against
each opponent (and, seeded, 2,000 against random pieces)."""

import math

import pytest

from babytris.claims.course_players import (
    OPPONENTS,
    course_game,
    course_opponent,
    course_player,
    random_pieces_points,
    replay,
)

#: `./tetris FIRST SEED 0 WEIGHTS...`: the points against MinMax, MinAvg, GapAvg.
PRINTED = {
    ("I", None): (9999, 9999, 10356),
    ("I", (0, 0, 3, 0)): (9999, 10000, 10622),
    ("I", (0, 0, 1, 1)): (9999, 10000, 9999),
    ("I", (10, 0, 3, 1)): (9998, 11248, 7500),
    ("I", (10, 0, 4, 0)): (9998, 10000, 7500),
    ("I", (0, 1, 4, 1.5)): (9999, 10000, 9999),
    ("I", (0, 2, 1, 1)): (0, 0, 0),
    # an L first: the two cells that move
    ("L", (10, 0, 3, 1)): (9998, 11250, 7500),
    ("L", (0, 1, 4, 1.5)): (7500, 10000, 9999),
}
#: `./tetris I 7 2000 WEIGHTS...`: 2,000 games against random pieces, their mean and standard deviation.
PRINTED_RANDOM = {(0, 0, 3, 0): (11086.7, 28.9138), None: (10670.1, 26.4)}


@pytest.fixture(scope="module")
def games():
    return {first: (g := course_game(first), {k: course_opponent(g, k) for k in OPPONENTS}) for first in "IL"}


@pytest.mark.parametrize(("first", "weights"), list(PRINTED))
def test_every_game_is_the_programs(games, first, weights):
    game, pieces = games[first]
    policy = course_player(game, weights)
    assert tuple(replay(game, policy, pieces[k]) for k in OPPONENTS) == PRINTED[first, weights]


@pytest.mark.parametrize("weights", list(PRINTED_RANDOM))
def test_random_pieces_are_the_programs_mean(games, weights):
    game, _ = games["I"]
    mean, spread = random_pieces_points(game, course_player(game, weights))
    printed_mean, printed_spread = PRINTED_RANDOM[weights]
    assert abs(mean - printed_mean) < 3 * printed_spread / math.sqrt(2000)
    assert spread == pytest.approx(printed_spread, rel=0.1)


def test_the_game_and_its_seeds(games):
    game, pieces = games["I"]
    assert game.n_states == 25_956 and sorted(game.order) == list(range(25_956))
    assert game.first == "I" and game.start == 0
    empty_i, empty_l = game.moves[0], game.moves[1]
    assert len(empty_i) == 4 + 2 and len(empty_l) == 4 * 3  # I: upright in columns 0-3, flat at 0-1; L: 4 turns x 3
    # the program's move order: anchors row by row from the top, so the upright I (anchored higher) first
    assert [m[:4] for m in empty_i] == [(0, 0, 3, 0)] * 4 + [(0, 0, 1, 0)] * 2  # (score, lines, height, holes)
    assert set(pieces["minmax"]) == {-1, 0, 1}  # (a state with no move: no choice)
    assert random_pieces_points(game, course_player(game, (0, 0, 1, 0)), n_placements=1) == (0.0, 0.0)


def test_bad_arguments_are_refused(games):
    game, _ = games["I"]
    with pytest.raises(ValueError, match="first must be 'I' or 'L'"):
        course_game("T")
    with pytest.raises(ValueError, match="kind must be one of minmax, minavg, gapavg"):
        course_opponent(game, "minimax")
    with pytest.raises(ValueError, match="weights must be four numbers"):
        course_player(game, (1, 2, 3))
    with pytest.raises(ValueError, match="discount"):
        course_player(game, None, discount=1.0)
    with pytest.raises(ValueError, match="n_placements"):
        replay(game, [0] * game.n_states, [0] * game.n_states, n_placements=0)


def test_the_programs_max_min_moves_are_among_babytris_s_best(games):
    """Where babytris's max-min player scores otherwise, it is the tie rule: the
    program's move is, in every state, one of the moves babytris values best."""
    import numpy as np

    import babytris
    from babytris.claims.course_code import _search, _to_babytris

    game, _ = games["I"]
    policy = course_player(game, None)
    states, listed = _search(4, 4, ("I", "L"))
    s = babytris.solve(width=4, height=4, opponent="minimax", discount=0.9, tol=1e-12)
    t = s.transitions
    q = np.asarray(t.rules.line_scores)[t.lines] + 0.9 * s.board_values[t.next_board]
    row_of = {int(b): i for i, b in enumerate(t.boards)}
    gaps = []
    for k, (board, piece) in enumerate(states):
        if policy[k] >= 0:
            row = row_of[_to_babytris(board, 4, 4)] * 2 + piece - 1
            moves = np.arange(t.offsets[row], t.offsets[row + 1])
            after = _to_babytris(listed[k][policy[k]][1], 4, 4)
            theirs = max(q[m] for m in moves if int(t.boards[t.next_board[m]]) == after)
            gaps.append(q[moves].max() - theirs)
    assert len(gaps) == 14_030 and max(gaps) < s.tie_slack
