"""play(): many independent games on the move table, replayed here in pure Python."""

from __future__ import annotations

import importlib.machinery
import itertools
import math
import sys

import numpy as np
import pytest

import babytris
from babytris.analysis import _play

evaluate = sys.modules["babytris.analysis.evaluate"]  # the module (babytris.evaluate is the function)

MASK = 2**64 - 1


# --------------------------------------------------------------------------
# A pure-Python twin of the generator and of one game
# --------------------------------------------------------------------------


def splitmix64(state: int) -> tuple[int, int]:
    """(next state, output) of splitmix64."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & MASK


class Xoshiro256:
    """xoshiro256**, its state given or seeded from one integer by splitmix64."""

    def __init__(self, seed: int | None = None, state: tuple[int, int, int, int] | None = None):
        if state is None:
            state = []
            for _ in range(4):
                seed, out = splitmix64(seed)
                state.append(out)
        self.s = list(state)

    def next(self) -> int:
        s0, s1, s2, s3 = self.s
        result = (rotl((s1 * 5) & MASK, 7) * 9) & MASK
        t = (s1 << 17) & MASK
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
        self.s = [s0, s1, s2, s3]
        return result


def replay(transitions, seed: int, n_placements: int, rows=None, pieces=None) -> tuple[float, int]:
    """One game as the kernel plays it: (points, placements)."""
    t = transitions
    rules = t.rules
    cumulative = list(itertools.accumulate(rules.probabilities))
    rng = Xoshiro256(seed)
    board, points = 0, 0.0
    for k in range(n_placements):
        if pieces is None:
            u = (rng.next() >> 11) * 2.0**-53
            p = 0
            while p < rules.n_pieces - 1 and u >= cumulative[p]:
                p += 1
        else:
            p = int(pieces[board])
        s = board * rules.n_pieces + p
        lo, hi = int(t.offsets[s]), int(t.offsets[s + 1])
        if lo == hi:
            return points, k
        e = lo + int(rows[s]) if rows is not None else lo + ((rng.next() >> 32) * (hi - lo) >> 32)
        points += rules.line_scores[t.lines[e]]
        board = int(t.next_board[e])
    return points, n_placements


def test_splitmix64_known_outputs():
    """The published first outputs of splitmix64 from seed 0."""
    assert evaluate.game_seeds(0, 3).tolist() == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    state, outputs = 0, []
    for _ in range(3):
        state, out = splitmix64(state)
        outputs.append(out)
    assert outputs == evaluate.game_seeds(0, 3).tolist()


def test_xoshiro256_known_outputs():
    """The reference implementation's first outputs from the state (1, 2, 3, 4)."""
    rng = Xoshiro256(state=(1, 2, 3, 4))
    assert [rng.next() for _ in range(4)] == [11520, 0, 1509978240, 1215971899390074240]


@pytest.fixture(scope="module")
def minimax_4x4(transitions_4x4):
    return babytris.solve_transitions(transitions_4x4, opponent="minimax", tol=1e-10)


@pytest.mark.parametrize("player", ["random", "optimal"])
@pytest.mark.parametrize("opponent", ["random", "fixed"])
def test_games_equal_python_replay(solution_4x4, transitions_4x4, player, opponent):
    """Each game, points and placements, exactly as the Python twin plays it from its seed."""
    n_games, n_placements = 40, 60
    pieces = (np.arange(transitions_4x4.n_boards) * 7 // 3 % 2).astype(np.int16) if opponent == "fixed" else None
    rows = evaluate.policy_rows(transitions_4x4, solution_4x4.policy) if player == "optimal" else None
    result = babytris.play(
        solution_4x4,
        player,
        "random" if pieces is None else pieces,
        n_placements=n_placements,
        seed=2024,
        n_games=n_games,
    )
    seeds = evaluate.game_seeds(2024, n_games)
    expected = [replay(transitions_4x4, int(s), n_placements, rows, pieces) for s in seeds]
    assert result.points.tolist() == [points for points, _ in expected]
    assert result.placements.tolist() == [placements for _, placements in expected]
    if player == "random":
        assert result.games_over > 0  # a random player soon tops out...
        assert result.placements.min() < n_placements
    else:
        assert result.games_over == 0  # ... an optimal one never does here


def test_result_types_and_shapes(solution_4x4):
    r = babytris.play(solution_4x4, n_placements=100, n_games=7, seed=3)
    assert isinstance(r, babytris.PlayResult)
    assert r.points.shape == (7,) and r.points.dtype == np.float64
    assert r.placements.shape == (7,) and r.placements.dtype == np.int64
    assert r.n_games == 7 and r.n_placements == 100 and r.seed == 3
    assert r.mean == pytest.approx(r.points.mean())
    assert r.stderr == pytest.approx(r.points.std(ddof=1) / math.sqrt(7))
    assert r.points_per_placement == pytest.approx(r.points.sum() / r.placements.sum())
    with pytest.raises(AttributeError):
        r.seed = 4


def test_one_game_has_no_stderr(solution_4x4):
    r = babytris.play(solution_4x4, n_placements=10)
    assert r.n_games == 1 and math.isnan(r.stderr)
    assert "1 game of up to 10 placements" in repr(r) and "±" not in repr(r)


def test_repr(solution_4x4):
    r = babytris.play(solution_4x4, "random", n_placements=1000, n_games=20, seed=1)
    text = repr(r)
    assert text.startswith("<PlayResult 20 games of up to 1,000 placements: mean ")
    assert "±" in text and f"{r.games_over:,} over early>" in text


def test_no_placement_no_points_per_placement():
    # 1x1 board with the monomino: the piece fills the row, which clears: the game goes on forever.
    rules = babytris.Rules(width=1, height=1, pieces=[[(0, 0)]], line_scores=(0, 2))
    t = babytris.enumerate_boards(rules)
    r = babytris.play(t, "random", n_placements=5, n_games=2)
    assert r.points.tolist() == [10.0, 10.0] and r.placements.tolist() == [5, 5]
    assert r.points_per_placement == 2.0


def test_results_do_not_depend_on_n_jobs(solution_4x4):
    runs = [babytris.play(solution_4x4, "random", n_placements=500, n_games=301, seed=9, n_jobs=j) for j in (1, 2, 3)]
    for r in runs[1:]:
        assert np.array_equal(r.points, runs[0].points)
        assert np.array_equal(r.placements, runs[0].placements)


def test_seeds_are_per_game(solution_4x4):
    """The first games of a longer run are the games of a shorter one; another seed gives other games."""
    long = babytris.play(solution_4x4, "random", n_placements=200, n_games=50, seed=11)
    short = babytris.play(solution_4x4, "random", n_placements=200, n_games=20, seed=11)
    other = babytris.play(solution_4x4, "random", n_placements=200, n_games=50, seed=12)
    assert np.array_equal(long.points[:20], short.points)
    assert not np.array_equal(long.points, other.points)


def test_biggest_seed(solution_4x4):
    r = babytris.play(solution_4x4, n_placements=10, seed=2**64 - 1, n_games=2)
    assert r.seed == 2**64 - 1 and evaluate.game_seeds(2**64 - 1, 2).dtype == np.uint64


def test_deterministic_game_scores_its_exact_value(minimax_4x4):
    """Optimal player against the minimax opponent: nothing is random, so one
    game scores exactly the expected points, extrapolated or not."""
    game = babytris.play(minimax_4x4, "optimal", "solution", n_placements=10_000, seed=5)
    assert game.placements.tolist() == [10_000]
    assert game.points[0] == babytris.expected_points(minimax_4x4, "optimal", "solution", n_placements=10_000)
    assert game.points[0] == babytris.expected_points(
        minimax_4x4, "optimal", "solution", n_placements=10_000, exact=True
    )
    assert game.points[0] == int(game.points[0]) > 0


def extreme_policy(t, which: str) -> np.ndarray:
    """Placement numbers (n_boards, n_pieces): each state's legal placement with
    the smallest (``"first"``) or largest (``"last"``) number, -1 where none fits."""
    lo, hi = t.offsets[:-1], t.offsets[1:]
    chosen = t.placement[np.minimum(lo if which == "first" else hi - 1, max(t.n_moves - 1, 0))].astype(np.int64)
    return np.where(hi > lo, chosen, -1).reshape(t.n_boards, t.rules.n_pieces)


@pytest.mark.parametrize(
    "piece, which, points, placements",
    [
        ("I", "first", 14_994, 10_000),  # lying I pieces, leftmost first
        ("I", "last", 15_000, 10_000),  # upright I pieces, rightmost first: 3 rows every 4 pieces
        ("L", "first", 5, 10),  # the L pieces top out after 10
    ],
)
def test_deterministic_games_by_rule(transitions_4x4, piece, which, points, placements):
    """A fixed player and one kind of piece on 4x4: exact scores, the same from
    play and from expected_points (the game may end: then at its points)."""
    t = transitions_4x4
    pieces = np.full(t.n_boards, t.rules.piece_index(piece), dtype=np.int16)
    policy = extreme_policy(t, which)
    game = babytris.play(t, policy, pieces, n_placements=10_000)
    assert game.points.tolist() == [points] and game.placements.tolist() == [placements]
    assert babytris.expected_points(t, policy, pieces, n_placements=10_000) == points
    assert babytris.expected_points(t, policy, pieces, n_placements=10_000, exact=True) == points


@pytest.mark.parametrize(
    "player, n_placements, n_games",
    [("optimal", 100, 4000), ("random", 10_000, 20_000)],
)
def test_mean_of_games_agrees_with_expected_points(solution_4x4, player, n_placements, n_games):
    """The sample mean lies within 5 standard errors of the exact expectation
    (a fixed seed: the check is deterministic; a fresh seed fails it with
    probability below 1e-6)."""
    r = babytris.play(solution_4x4, player, n_placements=n_placements, n_games=n_games, seed=123)
    exact = babytris.expected_points(solution_4x4, player, n_placements=n_placements)
    assert r.stderr > 0
    assert abs(r.mean - exact) <= 5 * r.stderr


def test_mean_against_weighted_pieces():
    """Drawn pieces follow the rules' probabilities (here 0.9 / 0.1)."""
    s = babytris.solve(width=4, height=4, probabilities=(0.9, 0.1))
    r = babytris.play(s, n_placements=60, n_games=4000, seed=8)
    assert abs(r.mean - babytris.expected_points(s, n_placements=60)) <= 5 * r.stderr


def test_player_forms_agree(solution_4x4, transitions_4x4):
    """ "optimal", the Solution itself, and its policy array play the same games."""
    kw = dict(n_placements=300, n_games=10, seed=4)
    a = babytris.play(solution_4x4, "optimal", **kw)
    b = babytris.play(transitions_4x4, solution_4x4, **kw)
    c = babytris.play(transitions_4x4, solution_4x4.policy.astype(np.int64), **kw)
    assert np.array_equal(a.points, b.points) and np.array_equal(a.points, c.points)


def test_opponent_forms_agree(minimax_4x4, transitions_4x4):
    kw = dict(n_placements=300, seed=4)
    a = babytris.play(minimax_4x4, "optimal", "solution", **kw)
    b = babytris.play(transitions_4x4, minimax_4x4, minimax_4x4, **kw)
    c = babytris.play(transitions_4x4, minimax_4x4, minimax_4x4.opponent_policy.tolist(), **kw)
    assert a.points[0] == b.points[0] == c.points[0]


def test_play_module_is_compiled():
    assert isinstance(_play.__loader__, importlib.machinery.ExtensionFileLoader)
    assert evaluate._play is _play
