"""Piece bags: pieces dealt from a shuffled bag of every piece, the bag's
contents part of the state (``Rules(randomizer="bag")``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import small_rules

import babytris
from babytris import Rules, RulesError, reference
from babytris.game.bags import after_draw, bag_before, bag_chances, bag_counts, bag_number, describe_bag, full_bag
from babytris.reference.game import reachable_nodes


@pytest.fixture(scope="module")
def bag44():
    return babytris.solve(width=4, height=4, randomizer="bag", tol=1e-11)


def test_bag_contents_are_numbered_as_digits():
    """Two pieces, one copy each: {I}, {L}, {I, L}; two copies: 8 contents."""
    rules = Rules(randomizer="bag")
    assert rules.bags == 3 and full_bag(rules) == 2
    assert bag_counts(rules).tolist() == [[1, 0], [0, 1], [1, 1]]
    assert bag_chances(rules).tolist() == [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
    # drawing I from the full bag leaves {L}; drawing the last piece refills the bag
    assert after_draw(rules).tolist() == [[2, -1], [-1, 2], [1, 0]]
    assert [describe_bag(rules, b) for b in range(3)] == ["I", "L", "I L"]
    two = Rules(randomizer="bag", bag_copies=2)
    assert two.bags == 8 and bag_counts(two)[full_bag(two)].tolist() == [2, 2]
    assert bag_chances(two)[bag_number(two, [2, 1])].tolist() == pytest.approx([2 / 3, 1 / 3])
    assert Rules().bags == 1 and bag_chances(Rules()).tolist() == [[0.5, 0.5]]


def test_a_player_names_the_bag_by_what_is_left():
    rules = Rules(randomizer="bag", bag_copies=2)
    # L drawn, one I and two L left: it came from {I, L, L, L}? no: from I + L L + the L drawn
    assert bag_counts(rules)[bag_before(rules, ["I", "L"], 1)].tolist() == [1, 2]
    # the draw emptied the bag (nothing left, or all of it: the refill): it came from {L}
    assert bag_before(rules, [], 1) == bag_before(rules, ["I", "I", "L", "L"], 1) == bag_number(rules, [0, 1])
    with pytest.raises(ValueError, match="no bag deals L"):
        bag_before(rules, ["L", "L"], 1)
    with pytest.raises(ValueError, match="at most 2 times"):
        bag_before(rules, ["I", "I", "I"], 0)


@pytest.mark.parametrize(
    "fields, match",
    [
        (dict(randomizer="shuffle"), "randomizer must be one of 'iid', 'bag'"),
        (dict(randomizer="bag", bag_copies=0), r"bag_copies must be .*\[1, 16\]"),
        (dict(randomizer="bag", bag_copies=1.5), "bag_copies"),
        (dict(bag_copies=2), "bag_copies=2 needs randomizer='bag'"),
        (dict(randomizer="bag", probabilities=(0.3, 0.7)), "leave probabilities unset"),
        (dict(randomizer="bag", pieces="tetrominoes", bag_copies=4), "more than 65,536"),
    ],
)
def test_bad_bag_rules(fields, match):
    with pytest.raises(RulesError, match=match):
        Rules(**fields)


def test_numpy_bag_copies_and_uniform_probabilities_are_accepted():
    rules = Rules(randomizer="bag", bag_copies=np.int64(2), probabilities=(0.5, 0.5))
    assert rules.bag_copies == 2 and type(rules.bag_copies) is int


@pytest.mark.long
def test_counts_and_reachable_nodes_4x4(bag44):
    """12,978 boards x 3 bags are the table's rows; 9,905 of them are met in play
    (the cell count fixes how many pieces were dealt, so the bag's parity)."""
    t = bag44.transitions
    assert t.n_boards == 12_978 * 3 and t.n_moves == 35_280 * 2  # each piece from the full bag, and the one left
    assert int(t.reachable().sum()) == len(reachable_nodes(Rules(width=4, height=4, randomizer="bag"))) == 9_905


def test_a_bag_is_worth_more_than_independent_draws(bag44):
    """Knowing the next piece half of the time helps: the optimal values rise
    from the independent game's 9.1186 at the start."""
    plain = babytris.solve(width=4, height=4, tol=1e-11)
    assert bag44.start_value > plain.start_value + 1.0
    # the start is the empty board with a full bag: I and L equally likely
    rows, chances = bag44.transitions.start_nodes()
    assert chances.tolist() == [1.0] and bag44.transitions.bags[rows[0]] == full_bag(bag44.rules)


def test_one_piece_bag_is_the_one_piece_game():
    """A bag of a single piece always deals it: the same game as independent draws."""
    plain = babytris.solve(width=3, height=4, pieces=["L"], tol=1e-12)
    bagged = babytris.solve(width=3, height=4, pieces=["L"], randomizer="bag", bag_copies=3, tol=1e-12)
    assert bagged.start_value == pytest.approx(plain.start_value, abs=1e-10)
    reached = bagged.transitions.reachable()
    assert np.abs(bagged.board_values[reached].max() - plain.board_values.max()) <= 1e-10


def test_lookups_take_what_is_left_in_the_bag(bag44):
    s = bag44
    board = babytris.Board.from_rows(["....", "....", "#...", "##.#"])
    # L drawn with I left: the bag was full; with nothing left: the bag was {L}, and the next is a fresh bag
    full, alone = s.value(board, "L", bag_left=["I"]), s.value(board, "L", bag_left=())
    assert full == s.values[s.index(board, bag=["I", "L"]), 1]
    assert alone == s.values[s.index(board, bag=["L"]), 1]
    q = s.action_values(board, "L", bag_left=["I"])
    assert max(q.values()) == pytest.approx(full, abs=1e-9)
    assert s.best_action(board, "L", bag_left=["I"]) in q
    with pytest.raises(ValueError, match="give the pieces left"):
        s.value(board, "L")
    with pytest.raises(ValueError, match="no bag deals L"):
        s.value(board, "L", bag_left=["L"])
    with pytest.raises(ValueError, match="no bag"):
        babytris.solve(width=3, height=3).value(0, "L", bag_left=["I"])


def test_a_piece_the_bag_lacks_has_no_move(bag44):
    """State (node, piece) with the piece not in the node's bag cannot arise: no row of moves."""
    t = bag44.transitions
    lacking = bag_counts(t.rules)[t.bags] == 0
    counts = np.diff(t.offsets).reshape(t.n_boards, -1)
    assert lacking.any() and np.all(counts[lacking] == 0)
    assert np.all(t.draw_chances()[lacking] == 0)


def test_saved_and_loaded(tmp_path, bag44):
    path = tmp_path / "bag.npz"
    bag44.save(path)
    back = babytris.load(path)
    assert back.rules == bag44.rules and back.rules.randomizer == "bag"
    assert np.array_equal(back.transitions.bags, bag44.transitions.bags)
    assert back.start_value == bag44.start_value


@pytest.mark.parametrize("opponent", ["random", "minimax"])
def test_equals_reference_with_preview_and_two_copies(opponent):
    rules = Rules(width=3, height=3, preview=1, randomizer="bag", bag_copies=2)
    core = babytris.solve(rules, opponent=opponent, tol=1e-12)
    ref = reference.solve(rules, opponent=opponent, tol=1e-12)
    rows = [core.transitions.board_index(b, q, bag=bag_number(rules, bag)) for b, q, bag in ref.boards]
    assert np.abs(core.values[rows] - np.array(ref.values)).max() <= 1e-9
    assert core.start_value == pytest.approx(ref.start_value, abs=1e-9)


def test_an_opponent_gives_only_pieces_left_in_the_bag():
    """Against minimax a bag protects the player: the opponent must deal what the bag holds."""
    free = babytris.solve(width=4, height=4, opponent="minimax", tol=1e-11)
    bagged = babytris.solve(width=4, height=4, opponent="minimax", randomizer="bag", tol=1e-11)
    assert bagged.start_value > free.start_value
    choice = bagged.opponent_policy
    assert np.all(bag_counts(bagged.rules)[bagged.transitions.bags, choice] > 0)


def test_the_long_run_rate_refuses_a_bag_clearly(bag44):
    with pytest.raises(ValueError, match="bag"):
        babytris.long_run_rate(bag44.transitions)


@pytest.mark.parametrize("copies", [1, 2])
@pytest.mark.parametrize("opponent", ["random", "best_response"])
def test_expected_points_equal_the_reference(copies, opponent):
    """Exact points of 12 placements by a random player, pieces from the bag
    or the worst piece left in it (the finite-horizon adversary)."""
    rules = Rules(width=3, height=4, randomizer="bag", bag_copies=copies)
    exact = babytris.expected_points(babytris.solve(rules), player="random", opponent=opponent, n_placements=12)
    assert exact == pytest.approx(reference.expected_points(rules, "random", opponent, n_placements=12), abs=1e-12)


def test_playouts_deal_from_the_bag(bag44):
    """The compiled playouts' mean points agree with the exact expectation, which
    differs from the independent game's by far more than the noise."""
    exact = babytris.expected_points(bag44, n_placements=30)
    played = babytris.play(bag44, n_placements=30, n_games=20_000, seed=7)
    assert abs(played.mean - exact) < 4 * played.stderr
    independent = babytris.solve(width=4, height=4)
    assert abs(babytris.expected_points(independent, n_placements=30) - exact) > 20 * played.stderr
    assert bag44.transitions.start_index == bag44.transitions.start_nodes()[0][0]


def _node_row(t, rules, node):
    """The compiled row of a reference node (board, queue[, held, locked], bag)."""
    bag = bag_number(rules, node[-1])
    if rules.hold:
        return t.board_index(node[0], node[1], node[2], node[3], bag=bag)
    return t.board_index(node[0], node[1], bag=bag)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(
    small_rules(sizes=(2, 3), variants=True, max_pieces=3),
    st.integers(0, 1),
    st.booleans(),
    st.integers(1, 2),
    st.sampled_from(["random", "minimax", "gaps"]),
    st.floats(0.0, 0.9),
)
def test_random_bag_games_equal_reference(rules, preview, hold, copies, opponent, discount):
    """Values, start value, reachable nodes, partition counts and the minimized
    solve equal the reference's on random small rule sets with a bag."""
    if rules.mirror and rules.mirror_map() != tuple(range(rules.n_pieces)):
        assume(False)
    rules = Rules(
        width=rules.width,
        height=rules.height,
        pieces=rules.pieces,
        start=rules.start,
        objective=rules.objective,
        preview=preview,
        hold=hold,
        line_scores=None if rules.objective == "combo" else rules.line_scores,
        no_holes=rules.no_holes,
        top_out=rules.top_out,
        moves=rules.moves,
        randomizer="bag",
        bag_copies=copies,
    )
    try:
        t = babytris.enumerate_boards(rules, max_memory=2**24)
    except babytris.MemoryLimitError:
        assume(False)
    assume(t.n_boards <= 800)
    core = babytris.solve_transitions(t, discount=discount, opponent=opponent, tol=1e-12)
    ref = reference.solve(rules, discount=discount, opponent=opponent, tol=1e-12)
    rows = [_node_row(t, rules, node) for node in ref.boards]
    scale = max(1.0, np.abs(core.values).max())
    assert np.abs(core.values[rows] - np.array(ref.values)).max() <= 1e-9 * scale
    assert core.start_value == pytest.approx(ref.start_value, abs=1e-9 * scale)
    assert int(t.reachable().sum()) == len(reachable_nodes(rules))
    states, boards = reference.minimize(rules, opponent=opponent)
    p = babytris.minimize(t, opponent=opponent)
    assert p.n_classes == len(set(states.values())) and p.n_board_classes == len(set(boards.values()))
    quotient = babytris.solve_transitions(t, discount=discount, opponent=opponent, tol=1e-12, minimize=True)
    assert np.abs(quotient.values - core.values).max() <= 1e-9 * scale


def test_a_game_deals_every_piece_once_per_bag(bag44):
    """Each run of n_pieces * bag_copies pieces from a refill holds every piece
    bag_copies times, and the optimal player's lookups take ``Game.bag_left``."""
    from babytris.engine.stepped import Game

    for copies in (1, 2):
        rules = Rules(width=4, height=4, randomizer="bag", bag_copies=copies)
        game = Game(rules, seed=copies)
        dealt = []
        while len(dealt) < 24 and not game.over:
            dealt.append(game.piece)
            game.place(game.moves()[0].placement)
        size = 2 * copies
        for start in range(0, len(dealt) - size + 1, size):
            assert sorted(dealt[start : start + size]) == [0] * copies + [1] * copies
    game = Game(bag44.rules, seed=5)
    score = 0.0
    for _ in range(30):
        move = bag44.best_action(game.board, game.piece, bag_left=game.bag_left)
        if move is None:
            break
        score += game.place(move)
    assert game.placements == 30 and score > 0


def test_a_chooser_must_give_a_piece_left_in_the_bag():
    from babytris.engine.stepped import Game

    game = Game(Rules(width=4, height=4, randomizer="bag"), seed=1, choose_piece=lambda board, known: 0)
    assert game.piece == 0 and game.bag_left == (1,)  # I dealt from the full bag: L left
    with pytest.raises(ValueError, match="which the bag does not hold"):
        game.place(game.moves()[0].placement)


def test_the_policy_table_says_what_is_left(bag44):
    from babytris.results.tables import policy_array

    table = policy_array(bag44)
    assert len(table) == 12_978 * 4  # per board: I or L from the full bag, the one piece of a single bag
    empty = table[table["board"] == 0]
    assert sorted(zip(empty["piece"].tolist(), empty["bag_left"].tolist())) == [
        ("I", ""),
        ("I", "L"),
        ("L", ""),
        ("L", "I"),
    ]
    row = empty[(empty["piece"] == "I") & (empty["bag_left"] == "L")][0]
    assert row["value"] == bag44.value(0, "I", bag_left=["L"])


def test_cli_solves_a_bag(capsys):
    from babytris.cli.commands import main

    assert main(["solve", "--randomizer", "bag", "--bag-copies", "2", "--json"]) == 0
    summary = __import__("json").loads(capsys.readouterr().out)
    assert summary["rules"]["randomizer"] == "bag" and summary["rules"]["bag_copies"] == 2
    assert summary["rows"] == 12_978 * 8
    assert summary["rows_reached"] == int(
        babytris.enumerate_boards(Rules(randomizer="bag", bag_copies=2)).reachable().sum()
    )
    reference_start = babytris.solve(width=4, height=4, randomizer="bag", bag_copies=2).start_value
    assert summary["start_value"] == pytest.approx(reference_start, abs=1e-7)
    assert main(["solve", "--randomizer", "bag", "--mode", "lean"]) == 2


def test_what_does_not_take_a_bag_says_so():
    from babytris.big import Tetris

    rules = Rules(width=4, height=4, randomizer="bag")
    with pytest.raises(ValueError, match="bag"):
        babytris.solve_lean(rules)
    with pytest.raises(RulesError, match="randomizer"):
        Tetris.from_rules(rules)
    gym = pytest.importorskip("gymnasium", reason="gymnasium not installed")
    assert gym
    from babytris.formats.env import BabyTetrisEnv

    with pytest.raises(ValueError, match="bag"):
        BabyTetrisEnv(rules)


def test_cli_plays_a_saved_bag_solution(tmp_path, capsys, bag44):
    from babytris.cli.commands import main

    path = tmp_path / "bag.npz"
    bag44.save(path)
    assert main(["play", "--solution", str(path), "--placements", "12", "--json"]) == 0
    played = __import__("json").loads(capsys.readouterr().out)
    pieces = [step["piece"] for step in played["placements"]]
    assert len(pieces) == 12
    # a fresh bag of one I and one L every two pieces
    assert all(sorted(pieces[k : k + 2]) == ["I", "L"] for k in range(0, 12, 2))


@pytest.mark.parametrize(
    "fields, reward",
    [
        (dict(), babytris.Reward(height=-1, before_clear=True)),
        (dict(), babytris.Reward(gaps=-1, before_clear=True)),
        (dict(no_holes=True), babytris.Reward(new_holes=1)),
        (dict(preview=2), babytris.Reward(height=-1, before_clear=True, loss=5)),
    ],
    ids=["height-landed", "holes-landed", "new-holes", "preview-2-loss"],
)
def test_rewards_of_the_landed_piece_equal_the_reference(fields, reward):
    """The piece placed is the drawn one without a preview, even though bag tables carry queues."""
    rules = Rules(width=3, height=3 if fields.get("preview") else 4, randomizer="bag", **fields)
    core = babytris.solve(rules, reward=reward, tol=1e-12)
    ref = reference.solve(rules, reward=reward, tol=1e-12)
    assert core.start_value == pytest.approx(ref.start_value, abs=1e-9)
    rows = [_node_row(core.transitions, rules, node) for node in ref.boards]
    assert np.abs(core.values[rows] - np.array(ref.values)).max() <= 1e-9


def test_a_given_opponent_must_deal_from_the_bag(bag44):
    t = bag44.transitions
    with pytest.raises(ValueError, match="whose bag holds none"):
        babytris.solve_transitions(t, opponent=np.zeros(t.n_boards, dtype=np.int16))
    first_left = np.argmax(bag_counts(t.rules)[t.bags] > 0, axis=1).astype(np.int16)  # always a piece it holds
    given = babytris.solve_transitions(t, opponent=first_left, tol=1e-10)
    minimax = babytris.solve_transitions(t, opponent="minimax", tol=1e-10)
    # a known order (I, then L, from every full bag) helps the player; the worst one gives least
    assert minimax.start_value < bag44.start_value < given.start_value
    board = babytris.Board.from_rows(["....", "....", "#...", "##.#"])
    assert minimax.piece_policy(board, bag=["I", "L"]) in ("I", "L")
    assert minimax.piece_policy(board, bag=["L"]) == "L"


def test_a_table_whose_bags_break_the_layout_is_refused(tmp_path, bag44):
    path = tmp_path / "bag.npz"
    bag44.save(path)
    with np.load(path) as data:
        arrays = dict(data)
    arrays["table_bags"] = np.zeros_like(arrays["table_bags"])
    # (without the saved digests, which would refuse the edit first, as files saved before they were kept:
    # the table is then read whole and checks itself)
    meta = json.loads(str(arrays["meta"]))
    del meta["digests"]
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "bad.npz", **arrays)
    for verify in (True, False):
        with pytest.raises(ValueError, match="table_bags|bags"):
            babytris.load(tmp_path / "bad.npz", verify=verify)


def test_a_game_without_a_bag_has_none():
    from babytris.engine.stepped import Game

    game = Game(Rules(width=3, height=3), seed=0)
    plain = babytris.solve(width=3, height=3)
    assert game.bag_left is None
    assert plain.value(game.board, game.piece, bag_left=game.bag_left) == plain.value(game.board, game.piece)


def test_the_reference_deals_long_previews_from_the_bag():
    rules = Rules(width=3, height=3, randomizer="bag", preview=3)
    core = babytris.solve(rules, tol=1e-12)
    assert core.start_value == pytest.approx(reference.solve(rules, tol=1e-12).start_value, abs=1e-9)
    rows, chances = core.transitions.start_nodes()
    assert chances.tolist() == [0.25] * 4  # I L then either order of the next bag's first, or L I ...
