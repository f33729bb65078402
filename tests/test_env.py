"""The Gymnasium environment: API conformance, legal moves, rewards, rendering, exact regret."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import babytris
import babytris.formats.env as babyenv
from babytris import Board, Rules
from babytris.draw.frames import film_strip
from babytris.engine.placements import engine
from babytris.formats.env import ENV_ID, ActionMasks, BabyTetrisEnv, decode_observation, encode_observation
from babytris.game.svg import EMPTY_RGB, FILLED_RGB, PIECE_RGB


@pytest.fixture(scope="module")
def minimax_4x4():
    return babytris.solve(Rules(width=4, height=4), discount=0.9, opponent="minimax", tol=1e-10)


def legal(rules: Rules, board: int, piece: int) -> set[int]:
    """Placement numbers of ``piece`` that fit on ``board``, straight from the engine."""
    return {k for k, _, _ in engine(rules).successors(board, piece)}


def first_legal(info: dict) -> int:
    return int(np.flatnonzero(info["action_mask"])[0])


# -- API conformance ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [dict(), dict(preview=1), dict(width=3, height=4, render_mode="ansi")],
    ids=["default", "preview 1", "3x4 ansi"],
)
def test_gymnasium_checker_passes_without_warnings(kwargs):
    env = gymnasium.make(ENV_ID, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker reports problems as warnings too
        check_env(env.unwrapped)


def test_gymnasium_checker_passes_with_a_solution_opponent(minimax_4x4):
    env = gymnasium.make(ENV_ID, opponent=minimax_4x4)
    assert env.unwrapped.rules == minimax_4x4.rules  # taken from the Solution
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_spaces_and_convenience_rule_fields():
    env = gymnasium.make(ENV_ID, width=3, height=4, preview=2)
    rules = env.unwrapped.rules
    assert rules == Rules(width=3, height=4, preview=2)
    # 3 wide: I has 1 flat + 3 upright placements, L 4 rotations x 2 columns.
    assert env.action_space == gymnasium.spaces.Discrete(8)
    assert env.observation_space == gymnasium.spaces.MultiBinary(12 + 2 * 3)
    assert BabyTetrisEnv().rules == Rules(width=4, height=4)


def test_make_by_module_path_registers_without_an_import():
    code = (
        "import sys, gymnasium\n"
        "assert 'babytris.formats.env' not in sys.modules\n"
        "env = gymnasium.make('babytris.formats.env:babytris/BabyTetris-v0', width=3, height=3)\n"
        "obs, info = env.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, obs.shape)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=os.path.dirname(__file__), timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["BabyTetrisEnv", "(11,)"]  # 9 cells + 2 pieces


def test_import_without_gymnasium_says_how_to_install(monkeypatch):
    monkeypatch.delitem(sys.modules, "babytris.formats.env")
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # import gymnasium now fails
    with pytest.raises(ImportError, match=r"pip install 'babytris\[gym\]'"):
        importlib.import_module("babytris.formats.env")


def test_same_seed_same_trajectory_and_other_seeds_differ():
    def trajectory(env, seed):
        obs, info = env.reset(seed=seed)
        out = [obs.tolist()]
        for step in range(40):
            legal_actions = np.flatnonzero(info["action_mask"])
            obs, reward, terminated, truncated, info = env.step(int(legal_actions[step % len(legal_actions)]))
            out.append((obs.tolist(), reward, terminated, truncated))
            if terminated or truncated:
                break
        return out

    env = gymnasium.make(ENV_ID)
    first = trajectory(env, 7)
    trajectory(env, 8)
    assert trajectory(env, 7) == first
    assert trajectory(gymnasium.make(ENV_ID), 7) == first
    assert any(trajectory(env, seed) != first for seed in range(8, 12))


def test_observation_encodes_board_piece_and_preview():
    rules = Rules(width=4, height=4, preview=2)
    board = Board.from_rows(["#...", "##.#"], height=4)
    obs = encode_observation(rules, board.bits, 1, (0, 1))
    assert obs.dtype == np.int8
    assert obs[:16].reshape(4, 4)[::-1].tolist() == [[0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 1]]
    assert obs[16:].tolist() == [0, 1, 1, 0, 0, 1]
    assert decode_observation(rules, obs) == (board.bits, 1, (0, 1))
    env = BabyTetrisEnv(rules)
    obs, info = env.reset(seed=3)
    for _ in range(10):
        assert decode_observation(rules, obs) == (info["board"], info["piece"], info["preview"])
        obs, _, terminated, _, info = env.step(first_legal(info))
        if terminated:
            break
    with pytest.raises(ValueError, match="preview"):
        encode_observation(rules, 0, 0, (1,))


# -- legal moves, rewards, episode ends ----------------------------------------------------------


def test_action_mask_is_exactly_the_legal_placements():
    rules = Rules(width=4, height=4)
    env = BabyTetrisEnv(rules)
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        terminated = truncated = False
        while not (terminated or truncated):
            mask = info["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (env.action_space.n,)
            assert np.array_equal(env.action_masks(), mask)
            assert set(np.flatnonzero(mask).tolist()) == legal(rules, info["board"], info["piece"])
            assert [m.placement.index for m in env.game.moves()] == np.flatnonzero(mask).tolist()
            # Random (not optimal) play, so the games end.
            _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            checked += 1
        assert terminated and not info["action_mask"].any()
    assert checked > 20


def test_illegal_action_terminates_by_default():
    env = BabyTetrisEnv(Rules(width=4, height=4), illegal_reward=-5)
    obs, info = env.reset(seed=1)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])  # a piece with fewer placements than the most
    obs2, reward, terminated, truncated, info2 = env.step(illegal)
    assert (reward, terminated, truncated, info2["illegal_action"]) == (-5.0, True, False, True)
    assert np.array_equal(obs2, obs) and info2["board"] == info["board"] and info2["placements"] == 0
    with pytest.raises(RuntimeError, match="reset"):
        env.step(first_legal(info))


def test_illegal_action_raises_when_asked_and_keeps_the_state():
    env = BabyTetrisEnv(Rules(width=4, height=4), illegal_action="raise")
    _, info = env.reset(seed=1)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match=f"action {illegal} is not a legal placement"):
        env.step(illegal)
    assert env.game.placements == 0 and env.game.board == info["board"]
    _, _, terminated, _, info = env.step(first_legal(info))
    assert not terminated and info["placements"] == 1 and not info["illegal_action"]


@pytest.mark.parametrize("action", [-1, 12, 1.0, True, "0", np.array([1, 2])])
@pytest.mark.parametrize("mode", ["terminate", "raise"])
def test_actions_outside_the_space_raise(action, mode):
    env = BabyTetrisEnv(Rules(width=4, height=4), illegal_action=mode)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must be an integer in \[0, 11\]"):
        env.step(action)


def test_numpy_actions_are_accepted():
    env = BabyTetrisEnv(Rules(width=4, height=4))
    _, info = env.reset(seed=0)
    a = first_legal(info)
    _, _, _, _, info = env.step(np.int64(a))
    _, _, _, _, info = env.step(np.array([first_legal(info)]))
    assert info["placements"] == 2


def test_rewards_sum_to_the_score_and_games_end_exactly_at_game_over():
    rules = Rules(width=4, height=4)
    env = BabyTetrisEnv(rules)
    rng = np.random.default_rng(1)
    scored = 0
    for seed in range(10):
        _, info = env.reset(seed=seed)
        total, terminated, truncated = 0.0, False, False
        while not (terminated or truncated):
            before = info
            _, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            total += reward
            lines = info["lines"] - before["lines"]
            assert reward == rules.line_scores[lines]
            assert terminated == (not legal(rules, info["board"], info["piece"]))
            assert not truncated
        assert total == info["score"] == env.game.score
        scored += total
    assert scored > 0


def test_truncated_after_max_steps(solution_4x4):
    env = BabyTetrisEnv(Rules(width=4, height=4), max_steps=3)
    _, info = env.reset(seed=0)
    flags = []
    for _ in range(3):  # optimal play: the game does not end by itself
        _, _, terminated, truncated, info = env.step(solution_4x4.best_action(info["board"], info["piece"]).index)
        flags.append((terminated, truncated))
    assert flags == [(False, False), (False, False), (False, True)]
    assert info["placements"] == 3 and info["action_mask"].any()  # the game could go on
    with pytest.raises(RuntimeError, match="episode has ended"):
        env.step(first_legal(info))
    _, info = env.reset()
    assert info["placements"] == 0


def test_reset_options():
    env = BabyTetrisEnv(Rules(width=4, height=4))
    env.reset(options={})
    with pytest.raises(ValueError, match="options"):
        env.reset(options={"board": 3})


# -- rendering -----------------------------------------------------------------------------------


def test_render_ansi_shows_the_board_and_the_piece():
    start = Board.from_rows(["....", ".#..", "##.#", "#.##"])
    env = BabyTetrisEnv(Rules(width=4, height=4, start=start, preview=1), render_mode="ansi")
    _, info = env.reset(seed=0)
    text = env.render()
    lines = text.splitlines()
    assert lines[:4] == start.rows()
    assert f"piece {env.game.piece_name}" in lines[4] and "next " in lines[4] and "score 0" in lines[4]
    env.step(first_legal(info))
    assert env.render().splitlines()[:4] == Board(env.game.board, 4, 4).rows()


def test_render_rgb_array_colours_filled_cells():
    start = Board.from_rows(["#..."], height=4)  # only the bottom-left cell filled
    env = BabyTetrisEnv(Rules(width=4, height=3, start=start.bits & 0xFFF), render_mode="rgb_array", cell_pixels=10)
    env.reset(seed=0)
    image = env.render()
    # the board (40 x 30 px), then a panel with margins of 2 px: the pieces' room (the I flat and
    # the L: 3 x 2 cells), and under it the score's line (8 px: digits are 0.75 of a 10 px font)
    assert image.dtype == np.uint8 and image.shape == (2 + 20 + 2 + 8 + 2, 40 + 30 + 2 * 2, 3)
    assert tuple(image[25, 5]) == FILLED_RGB and tuple(image[5, 5]) == EMPTY_RGB  # bottom-left, top-left
    assert tuple(image[15, 35]) == EMPTY_RGB
    panel = image[:, 40:]
    piece = env.rules.pieces[env.game.piece]
    top = max(y for _, y in piece.cells)
    for x, y in piece.cells:  # the piece to place, each cell at its centre
        assert tuple(panel[2 + (top - y) * 10 + 5, 2 + x * 10 + 5]) == PIECE_RGB
    text = panel.min(axis=2) >= 120  # light grey: only the text (antialiased) is
    assert text[24:].sum() > 5 and not text[:24].any()  # the score "0", as text under the pieces
    assert BabyTetrisEnv(Rules(width=4, height=3)).render() is None  # no render_mode


def test_frames_follow_the_game():
    env = BabyTetrisEnv(Rules(width=4, height=4), render_mode="rgb_array", cell_pixels=8)
    _, info = env.reset(seed=1)
    before = env.render()
    action = int(np.flatnonzero(info["action_mask"])[0])
    env.step(action)
    after = env.render()
    assert before.shape == after.shape and not np.array_equal(before[:32, :32], after[:32, :32])
    strip = film_strip([before, after], per_row=2, gap=3)
    assert strip.shape == (before.shape[0], 2 * before.shape[1] + 3, 3)
    assert np.array_equal(strip[:, : before.shape[1]], before)
    with pytest.raises(ValueError, match="per_row must be an integer >= 1"):
        film_strip([before], per_row=0)


# -- opponents -----------------------------------------------------------------------------------


def test_minimax_solution_opponent_gives_its_pieces(minimax_4x4):
    s = minimax_4x4
    env = BabyTetrisEnv(opponent=s)
    given = 0
    for seed in range(3):
        _, info = env.reset(seed=seed)
        assert s.rules.piece_names[info["piece"]] == s.piece_policy(s.rules.start)
        for _ in range(30):
            # The opponent's worst pieces end the game sooner than random ones; play well.
            _, _, terminated, truncated, info = env.step(s.best_action(info["board"], info["piece"]).index)
            if terminated or truncated:
                break
            assert s.rules.piece_names[info["piece"]] == s.piece_policy(info["board"])
            given += 1
    assert given > 20


def test_solution_opponent_with_previews_reads_the_queue():
    s = babytris.solve(Rules(width=4, height=3, preview=1), discount=0.9, opponent="minimax", tol=1e-10)
    env = BabyTetrisEnv(opponent=s)
    rng = np.random.default_rng(0)
    given = 0
    for seed in range(5):
        _, info = env.reset(seed=seed)
        known = info["piece"]  # the first piece is drawn; the opponent gives the one after it
        assert info["preview"][0] == s.opponent_policy[s.index(info["board"], (known,))]
        terminated = truncated = False
        while not (terminated or truncated):
            known = info["preview"][0]
            _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            assert info["piece"] == known
            assert info["preview"][0] == s.opponent_policy[s.index(info["board"], (known,))]
            given += 1
    assert given > 5


def test_callable_opponent():
    env = BabyTetrisEnv(Rules(width=4, height=4), opponent=lambda board: 0)
    _, info = env.reset(seed=0)
    for _ in range(5):
        assert info["piece"] == 0
        _, _, _, _, info = env.step(first_legal(info))
    bad = BabyTetrisEnv(Rules(width=4, height=4), opponent=lambda board: 2)
    with pytest.raises(ValueError, match=r"opponent returned 2; it must be a piece index in \[0, 1\]"):
        bad.reset(seed=0)


def test_random_pieces_follow_the_probabilities():
    env = BabyTetrisEnv(Rules(width=4, height=4, probabilities=(0.9, 0.1)))
    firsts = [env.reset(seed=seed)[1]["piece"] for seed in range(200)]
    assert 150 < firsts.count(0) < 195


# -- exact values and regret ---------------------------------------------------------------------


def test_best_actions_have_zero_regret_and_values_match_the_solution(solution_4x4):
    s = solution_4x4
    env = gymnasium.make(ENV_ID, max_steps=60)
    _, info = env.reset(seed=0)
    truncated, steps = False, 0
    while not truncated:
        board, piece = info["board"], info["piece"]
        assert babyenv.optimal_value(env, s) == s.value(board, piece)
        values = babyenv.action_values(env, s)
        assert np.array_equal(~np.isnan(values), info["action_mask"].astype(bool))
        best = s.best_action(board, piece).index
        assert 0.0 <= babyenv.regret(env, s, best) <= s.tie_slack
        assert values[best] == pytest.approx(s.value(board, piece), abs=1e-9)
        _, _, terminated, truncated, info = env.step(best)
        assert not terminated  # optimal play survives on 4x4
        steps += 1
    assert steps == 60


def test_a_bad_action_has_positive_regret(solution_4x4):
    s = solution_4x4
    env = BabyTetrisEnv(s.rules)
    _, info = env.reset(seed=0)
    found = 0
    for _ in range(20):
        values = env.action_values(s)
        worst = int(np.nanargmin(values))
        if np.nanmax(values) - values[worst] > 1e-6:
            assert env.regret(s, worst) == pytest.approx(np.nanmax(values) - values[worst])
            assert env.regret(s, worst) > 0
            found += 1
        _, _, _, _, info = env.step(s.best_action(info["board"], info["piece"]).index)
    assert found > 5


def test_regret_of_an_illegal_action_and_at_game_over(solution_4x4):
    s = solution_4x4
    only_i = BabyTetrisEnv(s.rules, opponent=lambda board: 0, illegal_reward=-2)  # I has 6 placements of 12
    _, info = only_i.reset(seed=0)
    assert info["piece"] == 0 and info["action_mask"][6:].sum() == 0
    # An illegal action ends the game with illegal_reward: it forfeits the whole value, and 2 more.
    assert only_i.regret(s, 6) == pytest.approx(only_i.optimal_value(s) + 2)
    raising = BabyTetrisEnv(s.rules, opponent=lambda board: 0, illegal_action="raise")
    raising.reset(seed=0)
    with pytest.raises(ValueError, match="action 6 is not a legal placement here"):
        raising.regret(s, 6)
    over = Board.from_rows(["#.#.", ".#.#", "#.#.", ".#.#"])  # no piece fits
    ended = BabyTetrisEnv(Rules(width=4, height=4, start=over), opponent=lambda board: 1)
    _, info = ended.reset(seed=0)
    assert not info["action_mask"].any()
    t = babytris.solve(ended.rules)
    assert ended.optimal_value(t) == 0.0 and np.isnan(ended.action_values(t)).all()
    with pytest.raises(ValueError, match="game over"):
        ended.regret(t, 0)


def test_values_with_previews():
    s = babytris.solve(Rules(width=4, height=3, preview=1), discount=0.8, tol=1e-10)
    env = BabyTetrisEnv(s.rules)
    _, info = env.reset(seed=2)
    for _ in range(10):
        assert env.optimal_value(s) == s.value(info["board"], info["piece"], preview=info["preview"])
        best = s.best_action(info["board"], info["piece"], preview=info["preview"]).index
        assert env.regret(s, best) == 0.0
        _, _, terminated, _, info = env.step(best)
        if terminated:
            break


def test_regret_refuses_other_rules_and_non_optimal_players(solution_4x4):
    env = BabyTetrisEnv(Rules(width=4, height=3))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="solution was solved for"):
        env.optimal_value(solution_4x4)
    random_player = babytris.solve(Rules(width=4, height=3), player="random")
    with pytest.raises(ValueError, match="solution: its values are those of a 'random' player"):
        env.regret(random_player, 0)
    with pytest.raises(ValueError, match="solution must be a babytris.Solution"):
        env.optimal_value("solution")


# -- bad arguments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(max_steps=0), r"max_steps must be an integer >= 1, got 0"),
        (dict(max_steps=-3), "max_steps"),
        (dict(max_steps=2.5), "max_steps"),
        (dict(max_steps=True), "max_steps"),
        (dict(render_mode="human"), r"render_mode must be None or one of 'ansi', 'rgb_array', got 'human'"),
        (dict(illegal_action="ignore"), "illegal_action must be one of 'terminate', 'raise'"),
        (dict(illegal_reward=float("nan")), "illegal_reward must be a finite number"),
        (dict(cell_pixels=1), r"cell_pixels must be an integer in \[2, 256\]"),
        (dict(opponent="minimax"), r"opponent must be .*pass babytris.solve\(rules, opponent='minimax'\)"),
        (dict(opponent=3), "opponent must be 'random', a babytris.Solution"),
        (dict(hold=True), "rules: hold is not supported"),
    ],
)
def test_bad_arguments_name_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BabyTetrisEnv(**kwargs)


def test_bad_solution_opponents(solution_4x4, minimax_4x4):
    with pytest.raises(ValueError, match="opponent: this Solution draws its pieces at random"):
        BabyTetrisEnv(opponent=solution_4x4)
    with pytest.raises(ValueError, match="opponent: the Solution was solved for"):
        BabyTetrisEnv(Rules(width=4, height=3), opponent=minimax_4x4)


def test_step_before_reset():
    with pytest.raises(RuntimeError, match="reset"):
        BabyTetrisEnv().step(0)


def test_mirror_rules_play_the_same_boards_as_plain_rules():
    plain = BabyTetrisEnv(babytris.Rules(width=4, height=5))
    merged = BabyTetrisEnv(babytris.Rules(width=4, height=5, mirror=True))
    solution = babytris.solve(width=4, height=5, mirror=True)
    (a, _), (b, _) = plain.reset(seed=8), merged.reset(seed=8)
    for _ in range(40):
        assert np.array_equal(a, b)
        best = solution.best_action(merged.game.board, merged.game.piece)
        assert merged.regret(solution, best.index) == pytest.approx(0.0, abs=1e-9)
        a, ra, done_a, _, _ = plain.step(best.index)
        b, rb, done_b, _, _ = merged.step(best.index)
        assert (ra, done_a) == (rb, done_b)
        if done_a:
            break


def test_a_game_over_at_reset_terminates_on_any_action():
    for mode in ("terminate", "raise"):
        env = BabyTetrisEnv(babytris.Rules(width=4, height=4, objective="combo"), illegal_action=mode)
        obs, info = env.reset(seed=0)
        assert not info["action_mask"].any()
        _, reward, terminated, truncated, info = env.step(0)
        assert (reward, terminated, truncated, info["illegal_action"]) == (0.0, True, False, False)


def test_observation_codec_refuses_what_it_cannot_show():
    rules = babytris.Rules(width=4, height=4)
    with pytest.raises(ValueError, match="piece"):
        babytris.formats.env.encode_observation(rules, 0, -1)
    with pytest.raises(ValueError, match="board"):
        babytris.formats.env.encode_observation(rules, 2**16, 0)
    obs = babytris.formats.env.encode_observation(rules, 5, 1)
    assert babytris.formats.env.decode_observation(rules, obs) == (5, 1, ())
    obs[-2:] = (2, -1)
    with pytest.raises(ValueError, match="0 or 1"):
        babytris.formats.env.decode_observation(rules, obs)
    with pytest.raises(ValueError, match="illegal_reward"):
        BabyTetrisEnv(rules, illegal_reward=1.0)


def test_the_made_env_shows_its_action_masks_through_the_wrappers():
    # Gymnasium 1.x wrappers forward no attribute: make(...).action_masks() once raised AttributeError
    env = gymnasium.make(ENV_ID, width=4, height=4, max_episode_steps=50)
    assert isinstance(env, ActionMasks)  # (outermost, over make's own wrappers and the time limit)
    _, info = env.reset(seed=0)
    mask = env.action_masks()
    assert mask.dtype == np.int8 and mask.tolist() == [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    np.testing.assert_array_equal(mask, info["action_mask"])
    np.testing.assert_array_equal(mask, env.unwrapped.action_masks())
    # a legal move changes the piece: the mask follows the game within
    _, _, _, _, info = env.step(int(np.flatnonzero(mask)[0]))
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"])
    # under a wrapper of one's own, Gymnasium's way (and Stable-Baselines3's vectorized envs')
    outer = gymnasium.wrappers.RecordEpisodeStatistics(env)
    np.testing.assert_array_equal(outer.get_wrapper_attr("action_masks")(), info["action_mask"])
    # the spec records the wrapper, so an env made again from it has it too
    again = gymnasium.make(env.spec)
    again.reset(seed=0)
    assert again.action_masks().tolist() == mask.tolist()
