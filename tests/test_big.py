"""The big-board engine (babytris.big.tetris, babytris.big._engine): the exact engine's
moves on every board both can hold, babytris.big.features' values, and games
that depend on their seed alone."""

from __future__ import annotations

import importlib.machinery

import numpy as np
import pytest

import babytris
from babytris import Rules
from babytris.big import _engine, _playout
from babytris.big import features as F
from babytris.big.playouts import greedy_placements, play_greedy, sample_boards
from babytris.big.tetris import FEATURES, MOVE_FEATURES, Tetris
from babytris.engine.placements import engine, placement_table

BOARD_FEATURES = [name for name in FEATURES if name not in MOVE_FEATURES]
DELLACHERIE = (
    ["landing_height", "eroded_cells", "row_transitions", "column_transitions", "holes", "wells"],
    [0.0, -1.0, 1.0, -1.0, -1.0, -4.0, -1.0],
)
U_PENTOMINO = [(0, 0), (1, 0), (2, 0), (0, 1), (2, 1)]  # a piece with a gap under its middle column
HOOK = [(0, 0), (0, 1), (0, 2), (1, 2)]  # an overhang of its own


def packed(rows: np.ndarray, width: int) -> np.ndarray:
    """Row bitmasks (n, height) as the exact engine's packed boards."""
    shifts = np.arange(rows.shape[1], dtype=np.uint64) * np.uint64(width)
    return np.bitwise_or.reduce(rows.astype(np.uint64) << shifts, axis=1)


def random_boards(n: int, width: int, height: int, seed: int) -> np.ndarray:
    """Ragged stacks with holes and overhangs, and no full row."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 1 << width, size=(n, height), dtype=np.uint32)
    tops = rng.integers(0, height + 1, size=n)
    rows[np.arange(height)[None, :] >= tops[:, None]] = 0
    full = (1 << width) - 1
    rows[rows == full] ^= (1 << rng.integers(0, width, size=int((rows == full).sum()))).astype(np.uint32)
    return rows.astype(np.uint16)


def test_compiled_module():
    for module in (_engine, _playout):
        path = module.__file__
        assert path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), path
    assert type(Tetris().engine).__module__ == "babytris.big._engine"


# --- the exact engine's moves ---------------------------------------------------------------

EXACT_RULES = [
    pytest.param(dict(width=4, height=4), 1, id="4x4-trominoes"),
    pytest.param(dict(width=4, height=5), 7, id="4x5-trominoes"),
    pytest.param(dict(width=3, height=6), 1, id="3x6-trominoes"),
    pytest.param(dict(width=4, height=4, pieces="tetrominoes"), 1, id="4x4-tetrominoes"),
    pytest.param(dict(width=4, height=5, pieces="tetrominoes"), 5, id="4x5-tetrominoes"),
    pytest.param(dict(width=3, height=6, pieces="tetrominoes"), 1, id="3x6-tetrominoes"),
    pytest.param(
        dict(width=5, height=4, pieces=["I", "O", U_PENTOMINO, HOOK], probabilities=(0.4, 0.3, 0.2, 0.1)),
        3,
        id="5x4-custom",
    ),
    pytest.param(dict(width=2, height=8, pieces=["I", [(0, 0)], [(0, 0), (1, 1), (0, 1)]]), 1, id="2x8-custom"),
    pytest.param(dict(width=5, height=5), None, id="5x5-trominoes-sampled"),
    pytest.param(dict(width=5, height=5, pieces="tetrominoes"), None, id="5x5-tetrominoes-sampled"),
    pytest.param(dict(width=8, height=8, pieces=["I4", "T", "S"]), None, id="8x8-sampled"),
]


@pytest.mark.parametrize("fields, every", EXACT_RULES)
def test_moves_equal_the_exact_engine(fields, every):
    """Every placement, next board, rows cleared and game over of the exact
    engine, on reachable boards (every ``every``-th) and on random ones."""
    rules = Rules(**fields)
    tetris = Tetris.from_rules(rules)
    exact = engine(rules)
    if every is None:  # too many boards to enumerate: boards met in random play instead
        boards = packed(sample_boards(tetris, 3000, seed=1).rows, rules.width)
    else:
        boards = babytris.enumerate_boards(rules).boards[::every]
    boards = np.concatenate([boards, packed(random_boards(300, rules.width, rules.height, 7), rules.width)])
    rows = F.rows_from_bits(boards, rules.width, rules.height).astype(np.uint16)
    checked = over = 0
    for piece in range(rules.n_pieces):
        after = tetris.afterstates_batch(rows, piece)
        next_bits = packed(after.rows, rules.width)
        for i, bits in enumerate(boards):
            lo, hi = after.offsets[i], after.offsets[i + 1]
            got = list(zip(after.placement[lo:hi].tolist(), next_bits[lo:hi].tolist(), after.lines[lo:hi].tolist()))
            assert got == exact.successors(int(bits), piece), (int(bits), piece)
            checked += hi - lo
            over += lo == hi
    assert checked > 1000
    if rules.height <= 5:
        assert over > 0  # some board is game over for some piece


def test_single_board_afterstates_equal_the_batch():
    tetris = Tetris(width=6, height=7, pieces="tetrominoes")
    rows = random_boards(50, 6, 7, seed=2)
    for piece in range(tetris.n_pieces):
        batch = tetris.afterstates_batch(rows, piece)
        for i in range(len(rows)):
            one = tetris.afterstates(rows[i], tetris.piece_names[piece])
            part = batch.board(i)
            for name in ("rows", "lines", "placement", "landing_row", "landing_height", "eroded"):
                assert np.array_equal(getattr(one, name), getattr(part, name)), name
            assert one.offsets.tolist() == [0, len(one)]
            moves = tetris.successors(rows[i], piece)
            assert [(k, r.tolist(), n) for k, r, n in moves] == [
                (int(k), r.tolist(), int(n)) for k, r, n in zip(one.placement, one.rows, one.lines)
            ]


def test_placements_are_numbered_as_in_the_exact_engine():
    for rules in (
        Rules(width=4, height=5),
        Rules(width=4, height=3, pieces="tetrominoes"),
        Rules(width=5, height=4, pieces=["L", U_PENTOMINO]),
    ):
        assert Tetris.from_rules(rules).placements == placement_table(rules).placements
    tetris = Tetris()
    assert [len(p) for p in tetris.placements] == [17, 9, 34, 17, 17, 34, 34]


def test_afterstates_on_a_known_board():
    tetris = Tetris(width=4, height=5, pieces="tetrominoes")
    board = tetris.board(["#...", "##.#"])
    i4 = tetris.afterstates(board, "I4")
    # Flat on top of column 0 (completing row 2); upright in columns 1, 2 (filling row 0's gap) and 3;
    # not upright in column 0 (it would stick out).
    assert [(p.rotation, p.column) for p in np.array(tetris.placements[0])[i4.placement]] == [
        (0, 0),
        (1, 1),
        (1, 2),
        (1, 3),
    ]
    assert i4.lines.tolist() == [1, 0, 1, 0] and i4.landing_row.tolist() == [2, 1, 0, 1]
    assert np.array_equal(i4.rows[0], board) and i4.eroded.tolist() == [4, 0, 1, 0]
    assert tetris.text(i4.rows[1]) == "\n".join([".#..", ".#..", ".#..", "##..", "##.#"])
    # Upright in column 2: row 0 is full and cleared, the rest of the I falls by one row.
    assert i4.rows[2].tolist() == [0b0101, 0b0100, 0b0100, 0, 0]
    # The T pointing down fills the gap and completes both rows: the board empties.
    t = tetris.afterstates(board, "T")
    k = int(np.argmax(t.lines))
    assert t.lines[k] == 2 and (t.lines == 2).sum() == 1 and not t.rows[k].any()
    assert t.eroded[k] == 2 * 4 and t.landing_row[k] == 0 and t.landing_height[k] == 0.5  # rows 0-1, from 0


# --- features --------------------------------------------------------------------------------


@pytest.mark.parametrize("width, height", [(10, 20), (4, 5), (1, 6), (16, 8), (3, 40), (7, 1)])
def test_features_equal_babytris_features(width, height):
    pieces = "tetrominoes" if width >= 4 and height >= 4 else ["I", [(0, 0)]] if width >= 3 else [[(0, 0)]]
    tetris = Tetris(width, height, pieces)
    rows = random_boards(300, width, height, seed=width * 100 + height)
    assert np.array_equal(tetris.feature_matrix(rows, BOARD_FEATURES), F.feature_matrix(rows, width, BOARD_FEATURES))
    for piece in range(tetris.n_pieces):
        after = tetris.afterstates_batch(rows, piece)
        X = tetris.feature_matrix(after, BOARD_FEATURES + list(MOVE_FEATURES))
        assert np.array_equal(X[:, :-2], F.feature_matrix(after.rows, width, BOARD_FEATURES))
        # The move features from the piece's cells where it landed.
        placed = np.zeros_like(after.rows)
        k = tetris.engine.first[piece] + after.placement
        for i in range(tetris.max_lines):
            r = after.landing_row + i
            inside = (i < tetris.engine.n_rows[k]) & (r < height)
            placed[np.flatnonzero(inside), r[inside]] = tetris.engine.shape[k[inside], i]
        assert np.array_equal(X[:, -2], F.landing_height(placed))
        before = np.repeat(rows, np.diff(after.offsets), axis=0) | placed
        assert np.array_equal(X[:, -1], F.eroded_cells(before, placed, width))


def _values(tetris, after, weights, names, line_rewards, discount):
    return np.asarray(line_rewards)[after.lines] + discount * (tetris.feature_matrix(after, names) @ weights)


@pytest.mark.parametrize(
    "names",
    [
        DELLACHERIE[0],
        ["wells"],
        ["well_runs", "column_transitions_open_top", "row_transitions"],
        ["column_transitions"],
        ["holes", "covers"],
        ["bumpiness", "max_height", "filled"],
        ["heights", "differences", "landing_height"],
        BOARD_FEATURES + list(MOVE_FEATURES),
    ],
)
@pytest.mark.parametrize("width, height", [(10, 20), (5, 6), (1, 6), (16, 8)])
def test_greedy_placements_maximise_the_value(names, width, height):
    """The engine scores a placement from the board's totals (or, when it
    clears rows, from the rows above its landing row): its choice and value
    equal the argmax over the feature matrix of every afterstate."""
    tetris = Tetris(width, height, "tetrominoes" if width >= 4 else ["I", [(0, 0)]])
    rows = random_boards(400, width, height, seed=height)
    d = tetris.feature_matrix(tetris.afterstates(tetris.empty(), 0), names).shape[1]
    weights = np.random.default_rng(d).normal(size=d)
    rewards = np.arange(tetris.max_lines + 1) ** 2 * 0.5
    for piece in range(tetris.n_pieces):
        choice = greedy_placements(tetris, rows, piece, weights, names, line_rewards=rewards, discount=0.9)
        after = tetris.afterstates_batch(rows, piece)
        values = _values(tetris, after, weights, names, rewards, 0.9)
        for i in range(len(rows)):
            lo, hi = after.offsets[i], after.offsets[i + 1]
            if lo == hi:
                assert choice.placement[i] == -1 and choice.value[i] == 0.0
                continue
            best = values[lo:hi].max()
            assert choice.value[i] == pytest.approx(best, rel=1e-12, abs=1e-9)
            chosen = lo + int(np.flatnonzero(after.placement[lo:hi] == choice.placement[i])[0])
            assert values[chosen] == pytest.approx(best, rel=1e-12, abs=1e-9)


def test_greedy_takes_the_first_among_equals():
    tetris = Tetris(width=6, height=8)
    rows = random_boards(200, 6, 8, seed=1)
    for piece in range(tetris.n_pieces):
        after = tetris.afterstates_batch(rows, piece)
        counts = after.counts
        first = np.where(counts > 0, after.placement[np.minimum(after.offsets[:-1], len(after) - 1)], -1)
        flat = greedy_placements(tetris, rows, piece, [2.5, 0, 0], ["holes", "wells"], discount=0.5)
        assert (flat.placement == first).all() and (flat.value[counts > 0] == 1.25).all()
        # Lowest landing first: among the placements landing lowest, the first.
        low = greedy_placements(tetris, rows, piece, [0, -1], ["landing_height"])
        for i in np.flatnonzero(counts):
            lo, hi = after.offsets[i], after.offsets[i + 1]
            assert low.placement[i] == after.placement[lo + np.argmin(after.landing_height[lo:hi])]


# --- games -----------------------------------------------------------------------------------


def test_play_is_reproducible_and_independent_of_threads():
    tetris = Tetris(width=8, height=12)
    names, weights = DELLACHERIE
    runs = [play_greedy(tetris, weights, names, n_games=12, max_placements=3000, seed=5, n_jobs=n) for n in (1, 2, 3)]
    for run in runs[1:]:
        assert np.array_equal(run.placements, runs[0].placements)
        assert np.array_equal(run.lines, runs[0].lines)
        assert np.array_equal(run.points, runs[0].points)
    other = play_greedy(tetris, weights, names, n_games=12, max_placements=3000, seed=6)
    assert not np.array_equal(other.lines, runs[0].lines)
    explored = [
        play_greedy(tetris, weights, names, epsilon=0.05, n_games=6, max_placements=500, seed=5, n_jobs=n)
        for n in (1, 2)
    ]
    assert np.array_equal(explored[0].lines, explored[1].lines)
    rand = [play_greedy(tetris, None, n_games=50, seed=3, n_jobs=n) for n in (1, 2)]
    assert np.array_equal(rand[0].placements, rand[1].placements)


def test_lifespans_of_simple_policies():
    # One I4 on a 4-wide board: lying flat clears its row; standing up piles up.
    tetris = Tetris(width=4, height=6, pieces=["I4"])
    low = play_greedy(tetris, [0, -1], ["max_height"], n_games=20, max_placements=10_000, seed=1)
    assert (low.placements == 10_000).all() and (low.lines == 10_000).all() and low.games_over == 0
    assert low.points.sum() == 20 * 10_000 * tetris.line_scores[1]
    # On a 5-wide board, the tallest stack first: four upright I4s, then nothing fits.
    tower = play_greedy(Tetris(width=5, height=6, pieces=["I4"]), [0, 1], ["max_height"], n_games=20, seed=1)
    assert (tower.placements == 4).all() and tower.games_over == 20 and tower.lines.sum() == 0
    # At random the I4 always fits on 4 columns (flat, it clears its row) but not on 5.
    assert play_greedy(tetris, None, n_games=50, max_placements=10_000, seed=1).games_over == 0
    rand = play_greedy(Tetris(width=5, height=6, pieces=["I4"]), None, n_games=200, max_placements=10_000, seed=1)
    assert rand.games_over == 200 and rand.mean_placements < 1000
    # O pieces on a 4-wide board: minimise holes and height, never lose.
    squares = Tetris(width=4, height=4, pieces=["O"])
    assert (
        play_greedy(squares, [0, -1, -1], ["holes", "max_height"], n_games=4, max_placements=5000, seed=2).placements
        == 5000
    ).all()
    # Dellacherie's player on 10x20 outlives a random one by far.
    big = Tetris()
    good = play_greedy(big, DELLACHERIE[1], DELLACHERIE[0], n_games=4, max_placements=20_000, seed=3)
    assert good.games_over == 0 and good.lines.min() > 7000
    bad = play_greedy(big, None, n_games=100, seed=3)
    assert bad.games_over == 100 and bad.mean_placements < 100 and bad.lines.sum() < 100


def test_play_from_a_start_board_and_truncation():
    tetris = Tetris(width=4, height=4, pieces=["O"])
    start = tetris.board(["#...", "#..."])
    first = play_greedy(tetris, None, n_games=1, start=start, max_placements=0)
    assert first.placements.tolist() == [0] and first.games_over == 0
    # An O fits only on columns 1-2 or 2-3 here; the board holds few of them.
    assert play_greedy(tetris, None, n_games=50, start=start, seed=1).placements.max() < 100


def test_sample_boards_follow_the_policy():
    tetris = Tetris(width=6, height=10)
    names, weights = DELLACHERIE
    sample = sample_boards(tetris, 3000, weights=weights, features=names, max_placements=400, seed=4, n_jobs=2)
    assert len(sample) == 3000 and sample.rows.shape == (3000, 10)
    again = sample_boards(tetris, 3000, weights=weights, features=names, max_placements=400, seed=4, n_jobs=1)
    for name in ("rows", "pieces", "game", "step"):
        assert np.array_equal(getattr(sample, name), getattr(again, name)), name
    # Each board is the greedy afterstate of the one before it in its game.
    choice = greedy_placements(tetris, sample.rows, sample.pieces, weights, names)
    same_game = sample.game[1:] == sample.game[:-1]
    for i in np.flatnonzero(same_game):
        after = tetris.afterstates(sample.rows[i], int(sample.pieces[i]))
        k = int(np.flatnonzero(after.placement == choice.placement[i])[0])
        assert np.array_equal(after.rows[k], sample.rows[i + 1])
        assert sample.step[i + 1] == sample.step[i] + 1
    # Games as long as play_greedy's with the same seed: a board per placement, and the lost one.
    played = play_greedy(tetris, weights, names, n_games=int(sample.game.max()), max_placements=400, seed=4)
    per_game = np.bincount(sample.game)[:-1]
    assert np.array_equal(per_game, played.placements + (played.placements < 400))
    assert (sample.step[~np.r_[False, same_game]] == 0).all()


def test_random_sample_starts_empty_and_explores():
    tetris = Tetris(width=10, height=20)
    sample = sample_boards(tetris, 20_000, seed=9)
    assert (sample.rows[sample.step == 0] == 0).all()
    assert sample.game.max() > 100  # random games are short
    assert np.array_equal(sample.rows, sample_boards(tetris, 20_000, seed=9, n_jobs=1).rows)
    explored = sample_boards(tetris, 500, weights=DELLACHERIE[1], features=DELLACHERIE[0], epsilon=1.0, seed=9)
    assert np.array_equal(explored.rows, sample.rows[:500])  # always exploring: the random player


# --- arguments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, words",
    [
        (dict(width=17), "width"),
        (dict(width=0), "width"),
        (dict(height=0), "height"),
        (dict(height=2000), "height"),
        (dict(width=True), "width"),
        (dict(pieces="X"), "pieces"),
        (dict(pieces=[]), "pieces"),
        (dict(width=3, height=3, pieces=["I4"]), "pieces"),
        (dict(probabilities=(0.5, 0.5)), "probabilities"),
        (dict(line_scores=(0, 1)), "line_scores"),
    ],
)
def test_bad_games(fields, words):
    with pytest.raises(ValueError, match=words):
        Tetris(**fields)


def test_from_rules_refuses_what_the_engine_lacks():
    assert Tetris.from_rules(Rules(width=4, height=5)) == Tetris(4, 5, "trominoes")
    for fields, words in (
        (dict(preview=1), "preview"),
        (dict(hold=True), "hold"),
        (dict(objective="combo"), "objective"),
        (dict(mirror=True), "mirror"),
        (dict(start=1), "start"),
        (dict(no_holes=True), "no_holes"),  # (both were accepted and another game played)
        (dict(top_out=True), "top_out"),
        (dict(moves="soft"), "moves"),
        (dict(width=17, height=3), "width"),
    ):
        with pytest.raises(ValueError, match=words):
            Tetris.from_rules(Rules(**fields))


def test_bad_arguments_name_the_field():
    tetris = Tetris(width=6, height=8)
    names, weights = DELLACHERIE
    good = dict(n_games=2, max_placements=10)
    cases = [
        (dict(weights=weights[:-1]), "weights"),
        (dict(weights=[float("nan")] * 7), "weights"),
        (dict(features=names[:-1] + ["wellz"]), "features"),
        (dict(features="holes"), "features"),
        (dict(line_rewards=[0, 1]), "line_rewards"),
        (dict(line_rewards="points"), "line_rewards"),
        (dict(discount=1.5), "discount"),
        (dict(epsilon=-0.1), "epsilon"),
        (dict(n_games=0), "n_games"),
        (dict(max_placements=-1), "max_placements"),
        (dict(seed=-1), "seed"),
        (dict(n_jobs=0), "n_jobs"),
        (dict(start=np.zeros(7, dtype=np.uint16)), "start"),
        (dict(start=np.full(8, 63, dtype=np.uint16)), "start"),
    ]
    for change, words in cases:
        kwargs = dict(weights=weights, features=names, **good)
        kwargs.update(change)
        w, f = kwargs.pop("weights"), kwargs.pop("features")
        with pytest.raises(ValueError, match=words):
            play_greedy(tetris, w, f, **kwargs)
    with pytest.raises(ValueError, match="n"):
        sample_boards(tetris, 0)
    board = tetris.empty()
    for rows, words in (
        (np.full(8, 64), "bitmask"),
        (np.full(8, 63), "full"),
        (np.zeros(7, dtype=np.uint16), "rows"),
        (np.zeros(8, dtype=float), "integer"),
        (np.zeros((2, 8), dtype=np.uint16), "one board"),
    ):
        with pytest.raises(ValueError, match=words):
            tetris.afterstates(rows, 0)
    for piece, words in ((7, "piece"), ("I", "piece"), (True, "piece")):
        with pytest.raises(ValueError, match=words):
            tetris.afterstates(board, piece)
    with pytest.raises(ValueError, match="pieces"):
        tetris.afterstates_batch(np.zeros((3, 8), dtype=np.uint16), [0, 1])
    with pytest.raises(ValueError, match="pieces"):
        tetris.afterstates_batch(np.zeros((2, 8), dtype=np.uint16), [0, 9])
    with pytest.raises(ValueError, match="move features"):
        tetris.feature_matrix(np.zeros((2, 8), dtype=np.uint16), ["landing_height"])
    with pytest.raises(ValueError, match="picture"):
        tetris.board(["#####"])


def test_reprs():
    tetris = Tetris(width=6, height=8, pieces=["I4", [(0, 0), (1, 0)]])
    assert eval(repr(tetris), {"Tetris": Tetris}) == tetris
    result = play_greedy(tetris, None, n_games=3, seed=1)
    assert "3 games" in repr(result) and "lost" in repr(result)
    assert "1 board" in repr(tetris.afterstates(tetris.empty(), 0))
    assert "boards from" in repr(sample_boards(tetris, 10))
