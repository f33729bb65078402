"""The game as arrays for other MDP tools in Python: (P, R) matrices in
pymdptoolbox's format (:func:`to_mdptoolbox`), and QuantEcon's state-action
pair form (:func:`to_quantecon`).  For model checkers' files see
:mod:`babytris.formats.export`.

>>> import babytris, mdptoolbox.mdp, numpy as np
>>> table = babytris.enumerate_boards(babytris.Rules(width=3, height=3))
>>> P, R = babytris.to_mdptoolbox(table, dense=True)
>>> vi = mdptoolbox.mdp.ValueIteration(P, R, 0.9, epsilon=1e-10); vi.run()
>>> ours = babytris.solve_transitions(table, discount=0.9, tol=1e-12).values.ravel()
>>> bool(np.abs(np.asarray(vi.V[:-1]) - ours).max() < 1e-8)   # the last state is game over
True
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.placements import placement_table
from ..engine.transitions import Transitions
from ..engine.writing import replace_atomically
from ..game.validation import check_number, check_type
from ..results.solution import Solution
from ..solvers.match import Match
from ..solvers.roles import piece_chances
from .export import check_opponent, exported_game

__all__ = ["to_mdptoolbox", "to_quantecon", "QuantEconModel"]

#: Dense matrices of more states than this are refused (A * S * S floats).
MAX_DENSE_STATES = 4096


def to_mdptoolbox(transitions: Transitions, *, dense: bool = False, penalty: float = 1.0, opponent: object = "random"):
    """The game against ``opponent`` (drawn pieces; or a Solution solved
    against an opponent, or a piece array ``(n_boards,)``: the MDP its
    choices induce) as ``(P, R)``: ``P[a]`` the
    ``S x S`` transition matrix of action ``a``, ``R`` the ``S x A``
    expected immediate rewards, as pymdptoolbox takes them.

    States: ``board * n_pieces + piece`` as in :class:`Transitions`, then
    one absorbing game-over state (``S = n_states + 1``).  Action ``a`` is
    placement number ``a`` of the piece to place (``A`` = the most placements
    a piece has).  A legal placement leads to each next state (the board
    after, a piece drawn) with the piece's probability and scores its points;
    an action that is not a legal placement there loops on the state at a cost
    of ``penalty`` (> 0, so it is never optimal, the points being >= 0); in a
    state where the piece fits nowhere every action leads to game over,
    scoring 0.  Solved with the same discount, the first ``n_states`` values
    are :attr:`Solution.values` (raveled).

    Args:
        dense: numpy arrays ``(A, S, S)`` instead of a list of ``scipy.sparse``
            CSR matrices (at most ``MAX_DENSE_STATES`` states).
        penalty: the cost of an illegal action.

    Returns:
        ``(P, R)``.
    """
    check_type("transitions", transitions, Transitions, "a babytris.Transitions (from enumerate_boards)")
    rules = transitions.rules
    if rules.node_tables:
        raise ValueError("to_mdptoolbox: games with previews, hold or a bag are not supported")
    if min(rules.line_scores) < 0:
        raise ValueError(
            f"to_mdptoolbox: line_scores must be >= 0 (illegal actions cost penalty), got {rules.line_scores}"
        )
    penalty = check_number("penalty", penalty, 0.0, open_low=True)
    check_opponent(opponent)
    t = transitions
    n_pieces, n_states = rules.n_pieces, t.n_states
    S = n_states + 1
    A = max(len(moves) for moves in placement_table(rules).placements)
    if dense and S > MAX_DENSE_STATES:
        raise ValueError(f"dense: at most {MAX_DENSE_STATES} states for dense matrices, the game has {S}")
    chances, _, _ = piece_chances(t, opponent)
    scores = np.asarray(rules.line_scores)
    counts = np.diff(t.offsets)
    state_of_move = np.repeat(np.arange(n_states), counts)
    action_of_move = t.placement.astype(np.int64)
    R = np.zeros((S, A))
    legal = np.zeros((S, A), dtype=bool)
    legal[state_of_move, action_of_move] = True
    R[state_of_move, action_of_move] = scores[t.lines]
    live = counts > 0
    P = []
    for a in range(A):
        mine = action_of_move == a
        src, nxt = state_of_move[mine], t.next_board[mine].astype(np.int64)
        # a legal placement: to (board after, piece q) with chance probs[q]
        rows = [np.repeat(src, n_pieces)]
        cols = [(nxt[:, None] * n_pieces + np.arange(n_pieces)).ravel()]
        vals = [chances[nxt].ravel()]
        # illegal where some move fits: a costly self-loop; where none fits: game over
        loops = np.flatnonzero(live & ~legal[:n_states, a])
        over = np.concatenate([np.flatnonzero(~live), [n_states]])
        rows += [loops, over]
        cols += [loops, np.full(len(over), n_states)]
        vals += [np.ones(len(loops)), np.ones(len(over))]
        R[loops, a] = -penalty
        P.append(_matrix(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), S, dense))
    return (np.stack(P) if dense else P), R


def _matrix(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, size: int, dense: bool):
    if dense:
        out = np.zeros((size, size))
        np.add.at(out, (rows, cols), vals)
        return out
    try:
        from scipy import sparse
    except ImportError:
        raise ImportError(
            "to_mdptoolbox needs scipy for sparse matrices (pip install 'babytris[export]'), "
            "or dense=True for small games"
        ) from None
    return sparse.csr_matrix((vals, (rows, cols)), shape=(size, size))


@dataclass(frozen=True, eq=False)
class QuantEconModel:
    """The game in QuantEcon's state-action pair form
    (``quantecon.markov.DiscreteDP(R, Q, beta, s_indices, a_indices)``).

    States: the game's ``board * n_pieces + piece``, then one absorbing
    game-over state (``n = n_states + 1``).  Pair ``l`` is state
    ``s_indices[l]``'s ``a_indices[l]``-th move (0, 1, ... in placement
    order; ``placements[l]`` is its placement number, -1 for the move to
    game over where the piece fits nowhere, and for game over's loop).

    Attributes:
        s_indices, a_indices: int64 ``(L,)``, sorted by state.
        R: float64 ``(L,)``, the points of each move.
        Q: ``scipy.sparse.csr_matrix`` ``(L, n)``, each move's chances of the
            next states (the board after, each piece drawn).
        beta: the discount.
        placements: int64 ``(L,)``.
        start_states, start_chances: where a game starts (the start board
            with each piece drawn, and with previews each queue): the start
            value is ``start_chances @ v[start_states]``.
    """

    s_indices: np.ndarray
    a_indices: np.ndarray
    R: np.ndarray
    Q: Any
    beta: float
    placements: np.ndarray
    start_states: np.ndarray
    start_chances: np.ndarray

    def discrete_dp(self) -> Any:
        """``quantecon.markov.DiscreteDP`` of this model (needs quantecon)."""
        try:
            from quantecon.markov import DiscreteDP
        except ImportError:
            raise ImportError("discrete_dp needs quantecon: pip install 'babytris[export]'") from None
        return DiscreteDP(self.R, self.Q, self.beta, self.s_indices, self.a_indices)

    def start_value(self, v: np.ndarray) -> float:
        """The start value given the values ``v`` of every state ``(n,)``."""
        return float(self.start_chances @ np.asarray(v)[self.start_states])

    def save(self, path: str | os.PathLike) -> None:
        """Write the arrays (``Q`` as CSR parts) to an ``.npz``, atomically;
        :meth:`load` reads it back."""
        arrays = {
            name: getattr(self, name)
            for name in ("s_indices", "a_indices", "R", "placements", "start_states", "start_chances")
        }
        arrays.update(
            beta=np.float64(self.beta),
            Q_data=self.Q.data,
            Q_indices=self.Q.indices,
            Q_indptr=self.Q.indptr,
            Q_shape=np.array(self.Q.shape),
        )
        replace_atomically(path, lambda f: np.savez_compressed(f, **arrays))

    @classmethod
    def load(cls, path: str | os.PathLike) -> QuantEconModel:
        """Read a model that :meth:`save` wrote (needs scipy)."""
        from scipy import sparse

        with np.load(path, allow_pickle=False) as f:
            Q = sparse.csr_matrix((f["Q_data"], f["Q_indices"], f["Q_indptr"]), shape=tuple(f["Q_shape"]))
            return cls(
                s_indices=f["s_indices"],
                a_indices=f["a_indices"],
                R=f["R"],
                Q=Q,
                beta=float(f["beta"]),
                placements=f["placements"],
                start_states=f["start_states"],
                start_chances=f["start_chances"],
            )


def to_quantecon(
    game: Match | Transitions | Solution, *, discount: float | None = None, opponent: object = None
) -> QuantEconModel:
    """The game in QuantEcon's state-action pair form (needs scipy for
    ``Q``).  Solved by QuantEcon, ``model.start_value(v)`` is the solve's
    start value.

    Args:
        game: a :class:`~babytris.Solution` (an optimal player, points), a
            :class:`~babytris.Transitions` or a :class:`~babytris.Match`;
            previews, hold and bags included.
        discount: in [0, 1); default: the solution's (required for a table).
        opponent: who gives the pieces, as for
            :func:`~babytris.formats.export.explicit_model` (default: a Solution's
            own opponent, drawn pieces for a table).

    Returns:
        :class:`QuantEconModel`.
    """
    exported = exported_game(game, discount, opponent)
    table, discount = exported.table, exported.discount
    if discount >= 1.0:
        raise ValueError(
            "discount: QuantEcon's DiscreteDP solves discounted MDPs (beta < 1); for the total reward until game "
            "over, export to Storm or PRISM (to_drn, to_prism)"
        )
    try:
        from scipy import sparse
    except ImportError:
        raise ImportError("to_quantecon needs scipy: pip install 'babytris[export]'") from None
    rules = table.rules
    n_pieces, n_states = rules.n_pieces, table.n_states
    over = n_states
    scores = np.asarray(rules.line_scores, dtype=np.float64)
    counts = np.diff(table.offsets)
    moves = np.maximum(counts, 1)  # a dead state's one move: to game over
    pairs = np.concatenate(([0], np.cumsum(moves)))
    L = int(pairs[-1]) + 1
    s_indices = np.append(np.repeat(np.arange(n_states), moves), over)
    a_indices = np.arange(L) - np.append(np.repeat(pairs[:-1], moves), L - 1)
    live_pair = np.repeat(pairs[:-1] - table.offsets[:-1], counts) + np.arange(len(table.lines))
    placements = np.full(L, -1, dtype=np.int64)
    placements[live_pair] = table.placement
    R = np.zeros(L)
    R[live_pair] = scores[table.lines]
    # Q: a move's row has a chance per piece drawn; a dead state's and game over's, game over.
    ends = np.setdiff1d(np.arange(L), live_pair)
    rows = np.concatenate((np.repeat(live_pair, n_pieces), ends))
    cols = np.concatenate(
        (
            (table.next_board.astype(np.int64)[:, None] * n_pieces + np.arange(n_pieces)).ravel(),
            np.full(len(ends), over),
        )
    )
    # (each piece with its chance at the next node: with a bag, its share of the bag there)
    vals = np.concatenate((exported.chances[table.next_board].ravel(), np.ones(len(ends))))
    Q = sparse.csr_matrix((vals, (rows, cols)), shape=(L, n_states + 1))
    Q.eliminate_zeros()
    start_rows, start_chances = exported.starts, exported.start_weights
    return QuantEconModel(
        s_indices=s_indices,
        a_indices=a_indices,
        R=R,
        Q=Q,
        beta=float(discount),
        placements=placements,
        start_states=(start_rows[:, None] * n_pieces + np.arange(n_pieces)).ravel(),
        start_chances=(start_chances[:, None] * exported.chances[start_rows]).ravel(),
    )
