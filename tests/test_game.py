"""Game: one game stepped placement by placement agrees with the enumerated table."""

import pytest

import babytris
from babytris.engine.stepped import Game


def test_moves_are_the_tables_moves():
    rules = babytris.Rules(width=4, height=4)
    t = babytris.enumerate_boards(rules)
    game = Game(rules, seed=7)
    for _ in range(200):
        if game.over:
            break
        s = t.board_index(game.board) * rules.n_pieces + game.piece
        table = sorted(
            (int(t.placement[e]), int(t.boards[t.next_board[e]]), int(t.lines[e]))
            for e in range(t.offsets[s], t.offsets[s + 1])
        )
        moves = game.moves()
        assert [(m.placement.index, m.board, m.lines) for m in moves] == table
        assert all(m.placement.piece == game.piece_name for m in moves)
        game.place(moves[len(moves) // 2].placement)


def test_score_and_counters_follow_the_placements():
    rules = babytris.Rules(width=4, height=4)
    solution = babytris.solve(rules)
    game = Game(rules, seed=3)
    points = lines = 0
    while not game.over and game.placements < 50:
        best = solution.best_action(game.board, game.piece)
        move = next(m for m in game.moves() if m.placement == best)
        assert game.place(best) == move.points
        points += move.points
        lines += move.lines
    assert (game.score, game.lines) == (points, lines) and lines > 0


def test_same_seed_same_pieces_and_previews_shift():
    rules = babytris.Rules(width=4, height=5, preview=2)
    a, b = Game(rules, seed=11), Game(rules, seed=11)
    while not a.over:
        assert (a.piece, a.preview) == (b.piece, b.preview)
        expected_next = a.preview[0]
        a.place(a.moves()[0].placement)
        b.place(b.moves()[0].placement)
        assert a.piece == expected_next and len(a.preview) == 2
    assert b.over and a.placements == b.placements > 0


def test_a_chooser_gives_the_pieces():
    rules = babytris.Rules(width=4, height=4)
    robust = babytris.solve(rules, opponent="minimax")
    game = Game(rules, seed=0, choose_piece=lambda board, known: int(robust.opponent_policy[robust.index(board)]))
    for _ in range(100):  # the robust player survives the minimax opponent forever
        game.place(robust.best_action(game.board, game.piece))
        assert game.piece_name == robust.piece_policy(game.board)
    assert not game.over


def test_bad_moves_and_rules_are_refused():
    rules = babytris.Rules(width=4, height=4)
    game = Game(rules, seed=0)
    other = "L" if game.piece_name == "I" else "I"
    with pytest.raises(ValueError, match="legal"):
        game.place(99)
    with pytest.raises(ValueError, match="piece"):
        game.place(babytris.Placement(other, 0, 0, 0))
    with pytest.raises(ValueError, match="choose_piece"):
        Game(rules, choose_piece=3)
    bad = Game(rules, seed=0, choose_piece=lambda board, known: 5 if board else 0)
    with pytest.raises(ValueError, match="choose_piece returned 5"):
        bad.place(bad.moves()[0].placement)


def test_game_over_when_nothing_fits():
    rules = babytris.Rules(width=3, height=2, pieces=["I"])
    game = Game(rules, seed=0)
    game.place(game.moves()[0].placement)  # the row clears: 1 point
    assert game.score == 1 and not game.over
    rules = babytris.Rules(width=3, height=2, pieces=["I"], start=babytris.Board.from_rows(["#..", "..."]))
    game = Game(rules, seed=0)
    assert game.over and game.moves() == [] and "over" in repr(game)


def test_mirror_rules_keep_the_real_board():
    plain = Game(babytris.Rules(width=4, height=5), seed=2)
    merged = Game(babytris.Rules(width=4, height=5, mirror=True), seed=2)
    while not plain.over and plain.placements < 60:
        assert (plain.board, plain.piece, [m.board for m in plain.moves()]) == (
            merged.board,
            merged.piece,
            [m.board for m in merged.moves()],
        )
        last = plain.moves()[-1].placement  # the rightmost placements: a mirror image would show at once
        plain.place(last)
        merged.place(last)


def test_a_placement_must_match_its_number_and_seeds_are_checked():
    game = Game(babytris.Rules(width=4, height=4, pieces=["L"]), seed=0)
    first, other = game.moves()[0].placement, game.moves()[5].placement
    with pytest.raises(ValueError, match="does not match"):
        game.place(babytris.Placement(first.piece, other.rotation, other.column, first.index))
    for seed in (-1, 1.5, True):
        with pytest.raises(ValueError, match="seed"):
            Game(babytris.Rules(width=4, height=4), seed=seed)
