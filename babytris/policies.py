"""Players and opponents given as objects or arrays, checked and turned into
what the kernels read: each state's move as an offset in its row of the move
table, each board's piece as an index."""

from __future__ import annotations

from typing import Union

import numpy as np

from . import _play
from .solution import Solution
from .states import Transitions

__all__ = [
    "Player", "Opponent", "policy_rows", "resolve_roles", "transitions_of", "player_rows", "opponent_pieces"
]

#: A player: "optimal", "random", a Solution, or placement numbers ``(n_boards, n_pieces)``.
Player = Union[str, Solution, np.ndarray]
#: An opponent: "random", "solution", a Solution, or piece indices ``(n_boards,)``.
Opponent = Union[str, Solution, np.ndarray]


def policy_rows(transitions: Transitions, policy: np.ndarray, *, name: str = "policy") -> np.ndarray:
    """A policy of placement numbers as offsets into the move table.

    Args:
        transitions: the game graph.
        policy: int array ``(n_boards, n_pieces)``, the placement number
            chosen in each state, -1 exactly where the piece fits nowhere
            (like :attr:`Solution.policy`).
        name: the argument's name in error messages.

    Returns:
        int16 array ``(n_states,)``: state s's move is
        ``transitions.offsets[s] + rows[s]``; -1 where the piece fits nowhere.

    Raises:
        ValueError: naming the first state where the placement is not legal,
            or -1 is given where the piece fits, or a placement where it does not.
    """
    t = transitions
    shape = (t.n_boards, t.rules.n_pieces)
    policy = _int_array(name, policy, shape, "(n_boards, n_pieces)")
    flat = np.ascontiguousarray(policy.reshape(-1), dtype=np.int64)
    rows = np.empty(t.n_states, dtype=np.int16)
    s = _play.placement_rows(t.offsets, t.placement, flat, rows)
    if s >= 0:
        b, p = divmod(s, t.rules.n_pieces)
        where = f"piece {t.rules.piece_names[p]!r} on board index {b} (board {int(t.boards[b])})"
        legal = t.placement[t.offsets[s]:t.offsets[s + 1]].tolist()
        if not legal:
            raise ValueError(f"{name}: gives placement {flat[s]} for {where}, where it fits nowhere (must be -1)")
        if flat[s] == -1:
            raise ValueError(f"{name}: gives no move (-1) for {where}, which has legal placements {legal}")
        raise ValueError(f"{name}: placement {flat[s]} is not legal for {where}; legal placements: {legal}")
    return rows


def transitions_of(game: object) -> Transitions:
    """The move table of a :class:`Solution` or :class:`Transitions`; ``TypeError`` otherwise."""
    if isinstance(game, Solution):
        return game.transitions
    if isinstance(game, Transitions):
        return game
    raise TypeError(f"game must be a babytris.Solution or Transitions, got {type(game).__name__}")


def resolve_roles(game: object, player: object, opponent: object) -> tuple[Transitions, np.ndarray | None, np.ndarray | None]:
    """The move table, the player's move rows (None: random) and the
    opponent's pieces (None: drawn at random), checked."""
    t = transitions_of(game)
    if t.rules.preview or t.rules.hold:
        raise ValueError("games with previews or hold (rules.preview > 0, rules.hold) can be solved and "
                         "minimized, not yet played or evaluated over n placements")
    return t, player_rows(game, t, player), opponent_pieces(game, t, opponent)


def player_rows(game: object, t: Transitions, player: object) -> np.ndarray | None:
    if isinstance(player, str):
        if player == "random":
            return None
        if player != "optimal":
            raise ValueError(f"player must be 'optimal', 'random', a Solution or an int array, got {player!r}")
        if not isinstance(game, Solution):
            raise ValueError("player='optimal' needs a Solution as the game (a bare Transitions has no policy)")
        player = game
    if isinstance(player, Solution):
        check_same_game("player", player, t)
        if player.player == "random":
            raise ValueError(f"player: the Solution (opponent={player.opponent!r}) has no player policy: "
                             "its player places at random; use player='random'")
        return policy_rows(t, player.policy, name="player")
    if player is None or isinstance(player, (bool, int, float)):
        raise ValueError(f"player must be 'optimal', 'random', a Solution or an int array, got {player!r}")
    return policy_rows(t, player, name="player")


def opponent_pieces(game: object, t: Transitions, opponent: object) -> np.ndarray | None:
    if isinstance(opponent, str):
        if opponent == "random":
            return None
        if opponent != "solution":
            raise ValueError(f"opponent must be 'random', 'solution', a Solution or an int array, got {opponent!r}")
        if not isinstance(game, Solution):
            raise ValueError("opponent='solution' needs a Solution as the game")
        opponent = game
    if isinstance(opponent, Solution):
        check_same_game("opponent", opponent, t)
        if opponent.opponent == "random":
            raise ValueError("opponent: the Solution was solved against random pieces and picks none; "
                             "use opponent='random', or solve with opponent='minimax'")
        return opponent.piece_choices
    if opponent is None or isinstance(opponent, (bool, int, float)):
        raise ValueError(f"opponent must be 'random', 'solution', a Solution or an int array, got {opponent!r}")
    pieces = _int_array("opponent", opponent, (t.n_boards,), "(n_boards,)")
    bad = np.flatnonzero((pieces < 0) | (pieces >= t.rules.n_pieces))
    if bad.size:
        raise ValueError(
            f"opponent: piece indices must be in [0, {t.rules.n_pieces - 1}], "
            f"got {int(pieces[bad[0]])} at board index {int(bad[0])}"
        )
    return pieces.astype(np.int16)


def check_same_game(name: str, solution: Solution, t: Transitions) -> None:
    if solution.rules != t.rules or solution.n_boards != t.n_boards:
        raise ValueError(
            f"{name}: the Solution was solved on other rules ({solution.n_boards:,} boards of "
            f"{solution.rules!r}) than the game ({t.n_boards:,} boards of {t.rules!r})"
        )


def _int_array(name: str, value: object, shape: tuple[int, ...], shape_text: str) -> np.ndarray:
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an int array of shape {shape_text}, got {value!r}") from None
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be an int array of shape {shape_text} = {shape}, got dtype {array.dtype}")
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape_text} = {shape}, got {array.shape}")
    return array
