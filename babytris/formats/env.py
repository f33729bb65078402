"""BabyTetrisEnv: a Gymnasium environment of one Baby Tetris game, with exact values to measure regret.

Needs the optional extra: ``pip install 'babytris[gym]'``.  Importing this
module registers the id ``"babytris/BabyTetris-v0"``, so

>>> import gymnasium
>>> import babytris.formats.env
>>> env = gymnasium.make("babytris/BabyTetris-v0", width=4, height=4)
>>> obs, info = env.reset(seed=0)
>>> obs.shape, int(env.action_space.n)
((18,), 12)

(``gymnasium.make("babytris.formats.env:babytris/BabyTetris-v0")`` imports it for you.)

Observation: an int8 ``MultiBinary(cells + n_pieces * (1 + preview))``
vector, see :func:`encode_observation`: the board's cells in bit order
(cell ``(col, row)`` at ``row * width + col``, row 0 at the bottom), then the
piece to place one-hot, then each previewed piece one-hot, the next first.

Action: ``Discrete(n)``, ``n`` the most placements any piece has; action k
drops the piece to place at its placement number k (see
:func:`babytris.engine.placements.placement_table`).  ``info["action_mask"]`` and
:meth:`BabyTetrisEnv.action_masks` (sb3-contrib's ``MaskablePPO``
convention; ``gymnasium.make`` wraps the env in :class:`ActionMasks`, so the
made env has it too) mark the legal ones.  An illegal action ends the episode
(``illegal_action="terminate"``, the default; Gymnasium's checker and
random agents sample any action) or raises ``ValueError`` (``"raise"``).

Reward: the points of the rows the placement cleared (``rules.line_scores``),
undiscounted.  The episode terminates when the piece to place fits nowhere
and is truncated after ``max_steps`` placements.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as err:  # an optional extra: say how to get it
    raise ImportError(
        "babytris.formats.env needs gymnasium, an optional dependency: pip install 'babytris[gym]'"
    ) from err

from ..draw.frames import frame
from ..engine.placements import placement_table
from ..engine.stepped import Game
from ..game.rules import Rules, make_rules
from ..results.solution import Solution

__all__ = [
    "ActionMasks",
    "BabyTetrisEnv",
    "ENV_ID",
    "ILLEGAL_ACTIONS",
    "action_values",
    "decode_observation",
    "encode_observation",
    "optimal_value",
    "regret",
]

#: The id registered with Gymnasium when this module is imported.
ENV_ID = "babytris/BabyTetris-v0"
#: What an action that is not a legal placement does: end the episode, or raise ValueError.
ILLEGAL_ACTIONS = ("terminate", "raise")
#: Who gives the pieces: "random", a Solution with a piece-giving opponent, or f(board bits) -> piece index.
OpponentSpec = str | Solution | Callable[[int], int]

MAX_CELL_PIXELS = 256


def encode_observation(rules: Rules, board: int, piece: int, preview: Sequence[int] = ()) -> np.ndarray:
    """The observation of a state: int8 array ``(cells + n_pieces * (1 + preview),)``.

    ``obs[:cells]`` are the board's cells in bit order (``obs[row * width +
    col]``, row 0 at the bottom: ``obs[:cells].reshape(height, width)[::-1]``
    is the picture); then ``n_pieces`` entries, the piece to place one-hot;
    then ``n_pieces`` per previewed piece, the next first.
    """
    cells, n = rules.cells, rules.n_pieces
    if len(preview) != rules.preview:
        raise ValueError(f"preview must hold {rules.preview} piece indices (rules.preview), got {tuple(preview)!r}")
    for name, p in (("piece", piece), *(("preview", q) for q in preview)):
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 0 <= p < n:
            raise ValueError(f"{name} must hold piece indices in [0, {n - 1}], got {p!r}")
    if isinstance(board, bool) or not isinstance(board, (int, np.integer)) or not 0 <= board < 1 << cells:
        raise ValueError(f"board must be an integer in [0, 2**{cells}), got {board!r}")
    obs = np.zeros(cells + n * (1 + rules.preview), dtype=np.int8)
    obs[:cells] = (np.uint64(board) >> np.arange(cells, dtype=np.uint64)) & np.uint64(1)
    for slot, p in enumerate((piece, *preview)):
        obs[cells + slot * n + int(p)] = 1
    return obs


def decode_observation(rules: Rules, obs: np.ndarray) -> tuple[int, int, tuple[int, ...]]:
    """The state an observation shows: ``(board bits, piece index, preview piece indices)``."""
    obs = np.asarray(obs)
    cells, n = rules.cells, rules.n_pieces
    size = cells + n * (1 + rules.preview)
    if obs.shape != (size,):
        raise ValueError(f"obs must have shape ({size},) for these rules, got {obs.shape}")
    board = sum(1 << i for i in np.flatnonzero(obs[:cells]).tolist())
    if not np.isin(obs, (0, 1)).all():
        raise ValueError("obs: every entry must be 0 or 1")
    hot = obs[cells:].reshape(1 + rules.preview, n)
    if not np.array_equal(hot.sum(axis=1), np.ones(1 + rules.preview)):
        raise ValueError("obs: each piece slot must be one-hot (exactly one 1 among n_pieces entries)")
    pieces = [int(i) for i in hot.argmax(axis=1)]
    return board, pieces[0], tuple(pieces[1:])


class BabyTetrisEnv(gymnasium.Env):
    """One game of ``rules``, placement by placement, as a Gymnasium environment.

    Args:
        rules: the rule set (no hold); default: built from ``rule_fields``
            (``width=4, height=4``, ...), or the rules of an ``opponent`` Solution.
        opponent: who gives the pieces.  ``"random"`` (default): drawn with
            ``rules.probabilities``.  A :class:`~babytris.Solution` of these
            rules solved with a piece-giving opponent (``solve(rules,
            opponent="minimax")``): its :attr:`~babytris.Solution.opponent_policy`.
            A callable ``f(board bits) -> piece index``.  The opponent gives
            every piece, the first one too (with previews a Solution's
            opening queue, :meth:`Solution.opening`; a callable's opening is
            drawn), as :attr:`Solution.start_value` counts it.
        max_steps: placements before the episode is truncated, >= 1.
        render_mode: None, ``"ansi"`` (text: the board and the pieces, score)
            or ``"rgb_array"`` (uint8 image, ``cell_pixels`` per cell; drawn
            by :func:`babytris.draw.frames.frame`, which needs the ``draw``
            extra: ``pip install 'babytris[draw]'``).
        illegal_action: ``"terminate"`` (default): an action that is no legal
            placement of the piece ends the episode (``terminated=True``)
            with reward ``illegal_reward``, the board unchanged and
            ``info["illegal_action"]`` True; ``"raise"``: ``step`` raises
            ``ValueError`` and the state is unchanged.  An action outside the
            action space raises ``ValueError`` either way.
        illegal_reward: the reward of an illegal action under ``"terminate"``
            (default 0: it scores like a top-out; make it negative to punish).
        cell_pixels: side of a cell in ``rgb_array`` images, in [2, 256].
        **rule_fields: :class:`~babytris.Rules` fields when ``rules`` is None.

    Spaces: ``observation_space`` is ``MultiBinary(cells + n_pieces * (1 +
    preview))`` (see :func:`encode_observation`); ``action_space`` is
    ``Discrete(n)``, action k the placement number k of the piece to place.

    ``info`` (reset and step): ``action_mask`` (int8 ``(n,)``), ``board``
    (bits), ``piece``, ``preview`` (piece indices), ``score`` (points so far),
    ``lines``, ``placements``; step adds ``illegal_action`` (bool).  A game
    can be over at reset (the first piece fits nowhere on ``rules.start``,
    as on an empty board with ``objective="combo"``): the mask is then all 0
    and every action is illegal.

    For RL measurements against the exact solution see :meth:`optimal_value`,
    :meth:`action_values` and :meth:`regret`.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    rules: Rules
    max_steps: int
    illegal_action: str
    illegal_reward: float
    cell_pixels: int
    n_actions: int
    _ended: bool

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        opponent: OpponentSpec = "random",
        max_steps: int = 10_000,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        illegal_reward: float = 0.0,
        cell_pixels: int = 16,
        **rule_fields: Any,
    ) -> None:
        if rules is None and not rule_fields and isinstance(opponent, Solution):
            rules = opponent.rules
        rules = make_rules(rules, rule_fields)
        if rules.hold:
            raise ValueError(
                "rules: hold is not supported by BabyTetrisEnv (a hold step places nothing); use hold=False"
            )
        if rules.randomizer == "bag":
            raise ValueError(
                "rules: a bag (randomizer='bag') is not supported by BabyTetrisEnv yet (the observation would need "
                "the bag's contents); use babytris.Game, which deals from the bag"
            )
        self.rules = rules
        self._solution = self._check_opponent(opponent, rules)
        self.opponent = opponent
        if isinstance(max_steps, bool) or not isinstance(max_steps, numbers.Integral) or max_steps < 1:
            raise ValueError(f"max_steps must be an integer >= 1, got {max_steps!r}")
        self.max_steps = int(max_steps)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {', '.join(map(repr, self.metadata['render_modes']))}"
                f", got {render_mode!r}"
            )
        self.render_mode = render_mode
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(
                f"illegal_action must be one of {', '.join(map(repr, ILLEGAL_ACTIONS))}, got {illegal_action!r}"
            )
        self.illegal_action = illegal_action
        if (
            isinstance(illegal_reward, bool)
            or not isinstance(illegal_reward, numbers.Real)
            or not math.isfinite(illegal_reward)
        ):
            raise ValueError(f"illegal_reward must be a finite number, got {illegal_reward!r}")
        if illegal_reward > 0:  # a reward for breaking the rules would beat legal moves (and make regrets < 0)
            raise ValueError(f"illegal_reward must be <= 0, got {illegal_reward!r}")
        self.illegal_reward = float(illegal_reward)
        if (
            isinstance(cell_pixels, bool)
            or not isinstance(cell_pixels, numbers.Integral)
            or not (2 <= cell_pixels <= MAX_CELL_PIXELS)
        ):
            raise ValueError(f"cell_pixels must be an integer in [2, {MAX_CELL_PIXELS}], got {cell_pixels!r}")
        self.cell_pixels = int(cell_pixels)
        self.n_actions = max(len(mine) for mine in placement_table(rules).placements)
        self.action_space = spaces.Discrete(self.n_actions)
        self.observation_space = spaces.MultiBinary(rules.cells + rules.n_pieces * (1 + rules.preview))
        self._game: Game | None = None
        self._ended = False

    @staticmethod
    def _check_opponent(opponent: object, rules: Rules) -> Solution | None:
        """The Solution giving the pieces, or None; raises ``ValueError`` for a bad opponent."""
        if isinstance(opponent, Solution):
            if opponent.rules != rules:
                raise ValueError(f"opponent: the Solution was solved for {opponent.rules!r}, the env plays {rules!r}")
            if opponent.opponent_policy is None:
                raise ValueError(
                    "opponent: this Solution draws its pieces at random (solved with opponent='random'); "
                    "pass opponent='random', or a Solution solved with e.g. opponent='minimax'"
                )
            return opponent
        if isinstance(opponent, str) and opponent == "random":
            return None
        if callable(opponent) and not isinstance(opponent, str):
            return None
        hint = (
            f"; for a {opponent!r} opponent pass babytris.solve(rules, opponent={opponent!r})"
            if isinstance(opponent, str)
            else ""
        )
        raise ValueError(
            f"opponent must be 'random', a babytris.Solution solved with a piece-giving opponent, "
            f"or a callable(board bits) -> piece index; got {opponent!r}{hint}"
        )

    # -- the game -----------------------------------------------------------------------------

    @property
    def game(self) -> Game:
        """The :class:`~babytris.engine.stepped.Game` being played (after :meth:`reset`)."""
        if self._game is None:
            raise RuntimeError("BabyTetrisEnv: call reset() first")
        return self._game

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Start a game on ``rules.start``; ``seed`` seeds :attr:`np_random`,
        which draws every random piece.  No ``options`` are supported (None or {}).

        Returns:
            ``(obs, info)``: obs int8 ``(observation_space.n,)``; info as in the class docstring.
        """
        super().reset(seed=seed)
        if options:
            raise ValueError(f"options: BabyTetrisEnv takes no reset options, got keys {sorted(options)}")
        game_seed = int(self.np_random.integers(2**63))
        # "random": the Game draws every piece; else the opponent gives every piece, a Solution's
        # opening queue too (Solution.opening, as its start_value counts it); a callable's opening is drawn.
        chooser = None if isinstance(self.opponent, str) else self._give
        opening = None if self._solution is None else self._solution.opening_queue()
        self._game = Game(self.rules, seed=game_seed, choose_piece=chooser, opening=opening)
        self._ended = False
        return self._observation(), self._info()

    def _give(self, board: int, known: tuple[int, ...]) -> int:
        """The opponent's piece on ``board`` with ``known`` (the previewed pieces before the draw)."""
        solution = self._solution
        if solution is not None:
            if self.rules.preview and solution.opponent_policy is not None:
                # (mirror rules with previews have self-mirror pieces only)
                return int(solution.opponent_policy[solution.index(board, known)])
            return self.rules.piece_index(solution.piece_policy(board))
        if not callable(self.opponent):
            raise ValueError(f"opponent must be a Solution or a callable(board) -> piece, got {self.opponent!r}")
        piece = self.opponent(board)
        if isinstance(piece, bool) or not isinstance(piece, (int, np.integer)) or not 0 <= piece < self.rules.n_pieces:
            raise ValueError(f"opponent returned {piece!r}; it must be a piece index in [0, {self.rules.n_pieces - 1}]")
        return int(piece)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Drop the piece to place at placement number ``action``.

        Returns:
            ``(obs, reward, terminated, truncated, info)``: obs int8
            ``(observation_space.n,)``; reward the points scored (float); ``terminated`` once the next
            piece fits nowhere
            (or after an illegal action, see ``illegal_action``);
            ``truncated`` after ``max_steps`` placements unless terminated.

        Raises:
            ValueError: ``action`` is not in the action space, or (with
                ``illegal_action="raise"``) not a legal placement here.
            RuntimeError: the episode has ended, or reset() was never called.
        """
        game = self.game
        if self._ended:
            raise RuntimeError("step: the episode has ended (terminated or truncated); call reset()")
        number = self._action_number(action)
        mask = self.action_masks()
        if not mask.any():  # over before any move (e.g. a start board where nothing fits): nothing to blame
            self._ended = True
            return self._observation(), 0.0, True, False, self._info(illegal=False)
        if not mask[number]:
            if self.illegal_action == "raise":
                raise ValueError(
                    f"action {number} is not a legal placement of {game.piece_name} here; "
                    f"legal actions: {np.flatnonzero(mask).tolist()}"
                )
            self._ended = True
            return self._observation(), self.illegal_reward, True, False, self._info(illegal=True)
        reward = float(game.place(number))
        terminated = game.over
        truncated = not terminated and game.placements >= self.max_steps
        self._ended = terminated or truncated
        return self._observation(), reward, terminated, truncated, self._info(illegal=False)

    def _action_number(self, action: object) -> int:
        if isinstance(action, np.ndarray) and action.size == 1 and np.issubdtype(action.dtype, np.integer):
            action = action.reshape(()).item()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= action < self.n_actions:
            raise ValueError(
                f"action must be an integer in [0, {self.n_actions - 1}] (a placement number), got {action!r}"
            )
        return int(action)

    def action_masks(self) -> np.ndarray:
        """int8 array ``(action_space.n,)``: 1 where the action is a legal
        placement of the piece to place (all 0 at game over)."""
        game = self.game
        mask = np.zeros(self.n_actions, dtype=np.int8)
        mask[[move.placement.index for move in game.moves()]] = 1
        return mask

    def _observation(self) -> np.ndarray:
        game = self.game
        return encode_observation(self.rules, game.board, game.piece, tuple(game.queue))

    def _info(self, *, illegal: bool | None = None) -> dict:
        game = self.game
        info = {
            "action_mask": self.action_masks(),
            "board": int(game.board),
            "piece": int(game.piece),
            "preview": tuple(game.queue),
            "score": float(game.score),
            "lines": int(game.lines),
            "placements": int(game.placements),
        }
        if illegal is not None:
            info["illegal_action"] = illegal
        return info

    # -- rendering ------------------------------------------------------------------------------

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the board (top row first, ``#`` filled) and a line with
        the piece, preview, score and placements; ``"rgb_array"``: uint8
        ``(rows, columns, 3)``, the board (``cell_pixels`` per cell) with a
        panel on its right showing the piece to place and the score (see
        :func:`babytris.draw.frames.frame`); None without a render_mode."""
        if self.render_mode == "ansi":
            return self._text()
        if self.render_mode == "rgb_array":
            return self._image()
        return None

    def _text(self) -> str:
        game = self.game
        names = self.rules.piece_names
        preview = f"  next {','.join(names[p] for p in game.queue)}" if game.queue else ""
        status = "  game over" if game.over else ""
        return (
            f"{game.drawing()}\npiece {game.piece_name}{preview}  score {game.score:g}  lines {game.lines}  "
            f"placements {game.placements}{status}\n"
        )

    def _image(self) -> np.ndarray:
        game = self.game
        return frame(self.rules, game.board, None if game.over else game.piece, game.score, self.cell_pixels)

    # -- exact values ---------------------------------------------------------------------------

    def _check_solution(self, solution: object) -> Solution:
        if not isinstance(solution, Solution):
            raise ValueError(f"solution must be a babytris.Solution, got {type(solution).__name__}")
        if solution.rules != self.rules:
            raise ValueError(f"solution was solved for {solution.rules!r}, the env plays {self.rules!r}")
        if solution.player != "optimal":
            raise ValueError(
                f"solution: its values are those of a {solution.player!r} player, not optimal ones; "
                "solve with player='optimal'"
            )
        return solution

    def optimal_value(self, solution: Solution) -> float:
        """The exact optimal value of the current state under ``solution``
        (``solution.value(board, piece, preview)``; 0 at game over).

        It is the expected *discounted* score (``solution.discount``) with
        ``solution``'s opponent model giving the pieces, over an unbounded
        game, whereas the env's rewards are undiscounted points and its
        episodes stop at ``max_steps``: use it to compare actions, not as a
        prediction of the episode's return.
        """
        solution = self._check_solution(solution)
        game = self.game
        return solution.value(game.board, game.piece, preview=tuple(game.queue))

    def action_values(self, solution: Solution) -> np.ndarray:
        """float64 array ``(action_space.n,)``: each legal action's exact value
        ``points + solution.discount * value after`` (discounted, see
        :meth:`optimal_value`); NaN where the action is not a legal placement."""
        solution = self._check_solution(solution)
        game = self.game
        out = np.full(self.n_actions, np.nan)
        for placement, value in solution.action_values(game.board, game.piece, preview=tuple(game.queue)).items():
            out[placement.index] = value
        return out

    def regret(self, solution: Solution, action: int) -> float:
        """How much ``action`` loses against the best action here, in
        ``solution``'s discounted values: ``max(action_values) -
        action_values[action]`` (>= 0; 0 for an optimal action).  An illegal
        action under ``illegal_action="terminate"`` ends the game with
        ``illegal_reward``, so its regret is ``max(action_values) - illegal_reward``.

        Raises:
            ValueError: ``action`` is outside the action space, no placement
                fits (game over), or (``illegal_action="raise"``) ``action`` is illegal.
        """
        number = self._action_number(action)
        values = self.action_values(solution)
        if np.isnan(values).all():
            raise ValueError("regret: no placement fits here (game over): no action has a value")
        best = float(np.nanmax(values))
        if np.isnan(values[number]):
            if self.illegal_action == "raise":
                raise ValueError(
                    f"action {number} is not a legal placement here; legal actions: "
                    f"{np.flatnonzero(~np.isnan(values)).tolist()}"
                )
            return best - self.illegal_reward
        return best - float(values[number])


class ActionMasks(gymnasium.Wrapper, gymnasium.utils.RecordConstructorArgs):
    """The legal actions on the outside of the wrappers: :meth:`action_masks`
    of the env within.  ``gymnasium.make`` puts it outermost (Gymnasium 1.x
    wrappers forward no attribute, so ``make(...).action_masks()``, which
    sb3-contrib's ``MaskablePPO`` calls on an env it is given, would miss
    it).  Under wrappers of your own, ``env.get_wrapper_attr("action_masks")()``
    reaches it, as Stable-Baselines3's vectorized envs do."""

    def __init__(self, env: gymnasium.Env) -> None:
        gymnasium.utils.RecordConstructorArgs.__init__(self)
        gymnasium.Wrapper.__init__(self, env)

    def action_masks(self) -> np.ndarray:
        """int8 array ``(action_space.n,)``: :meth:`BabyTetrisEnv.action_masks`."""
        return self.env.get_wrapper_attr("action_masks")()


def _unwrapped(env: gymnasium.Env) -> BabyTetrisEnv:
    inner = env.unwrapped
    if not isinstance(inner, BabyTetrisEnv):
        raise ValueError(f"env must be a BabyTetrisEnv (possibly wrapped), got {type(inner).__name__}")
    return inner


def optimal_value(env: gymnasium.Env, solution: Solution) -> float:
    """The exact optimal value of a (possibly wrapped) env's current state:
    :meth:`BabyTetrisEnv.optimal_value`."""
    return _unwrapped(env).optimal_value(solution)


def action_values(env: gymnasium.Env, solution: Solution) -> np.ndarray:
    """The exact value of each action of a (possibly wrapped) env:
    :meth:`BabyTetrisEnv.action_values`, float64 ``(n_actions,)``, NaN where illegal."""
    return _unwrapped(env).action_values(solution)


def regret(env: gymnasium.Env, solution: Solution, action: int) -> float:
    """The regret of ``action`` in a (possibly wrapped) env's current state:
    :meth:`BabyTetrisEnv.regret`."""
    return _unwrapped(env).regret(solution, action)


if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        id=ENV_ID, entry_point="babytris.formats.env:BabyTetrisEnv", additional_wrappers=(ActionMasks.wrapper_spec(),)
    )
