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
from .export import check_opponent, exported_game, slices

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
    sparse: Any = None if dense else _scipy_sparse()
    scores = np.asarray(rules.line_scores, dtype=np.float64)
    counts = np.diff(t.offsets)
    live = np.flatnonzero(counts > 0)
    state_of_move = np.repeat(np.arange(n_states), counts)
    coming = np.count_nonzero(chances > 0, axis=1)  # (a legal placement's entries: the pieces that can come)
    R = np.zeros((S, A))
    P = []
    # One action at a time, each matrix's rows built in order (no sort): Ctrl-C is answered between
    # actions, each a few numpy calls over its moves.
    for a in range(A):
        mine = np.flatnonzero(t.placement == a)
        src, nxt = state_of_move[mine], t.next_board[mine].astype(np.int64)
        R[src, a] = scores[t.lines[mine]]
        # illegal where some move fits: a costly self-loop; where none fits (and on game over): game over
        per_row = np.ones(S, dtype=np.int64)
        per_row[src] = coming[nxt]
        indptr = np.concatenate(([0], np.cumsum(per_row)))
        indices, data = np.empty(int(indptr[-1]), dtype=np.int64), np.ones(int(indptr[-1]))
        others = np.ones(S, dtype=bool)
        others[src] = False
        loops = np.zeros(S, dtype=bool)
        loops[live] = others[live]
        at = indptr[:-1][others]
        indices[at] = np.where(loops[others], np.flatnonzero(others), n_states)
        R[loops, a] = -penalty
        # a legal placement: to (board after, piece q) with chance chances[q], for the pieces that can come
        kept = chances[nxt] > 0
        within = np.cumsum(kept, axis=1) - 1
        slots = (indptr[src][:, None] + within)[kept]
        indices[slots] = (nxt[:, None] * n_pieces + np.arange(n_pieces))[kept]
        data[slots] = chances[nxt][kept]
        if dense:
            matrix = np.zeros((S, S))
            matrix[np.repeat(np.arange(S), per_row), indices] = data
            P.append(matrix)
        else:
            P.append(sparse.csr_matrix((data, indices, indptr), shape=(S, S)))
    return (np.stack(P) if dense else P), R


def _scipy_sparse() -> Any:
    try:
        from scipy import sparse
    except ImportError:
        raise ImportError(
            "to_mdptoolbox needs scipy for sparse matrices (pip install 'babytris[export]'), "
            "or dense=True for small games"
        ) from None
    return sparse


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
    offsets = table.offsets.astype(np.int64)
    counts = np.diff(offsets)
    moves = np.maximum(counts, 1)  # a dead state's one move: to game over
    pairs = np.concatenate(([0], np.cumsum(moves)))
    L = int(pairs[-1]) + 1
    chances = exported.chances
    # Q's entries per pair: a move's, one per piece of positive chance at the board after; a dead
    # state's and game over's, one (to game over).
    coming = np.count_nonzero(chances > 0, axis=1)
    per_pair = np.ones(L, dtype=np.int64)
    s_indices, a_indices = np.empty(L, dtype=np.int64), np.empty(L, dtype=np.int64)
    placements, R = np.full(L, -1, dtype=np.int64), np.zeros(L)
    for lo, hi in slices(n_states):  # (in slices, each a few milliseconds: Ctrl-C is answered between them)
        first, last, m = pairs[lo], pairs[hi], slice(offsets[lo], offsets[hi])
        s_indices[first:last] = np.repeat(np.arange(lo, hi), moves[lo:hi])
        a_indices[first:last] = np.arange(first, last) - np.repeat(pairs[lo:hi], moves[lo:hi])
        live = np.repeat(pairs[lo:hi] - offsets[lo:hi], counts[lo:hi]) + np.arange(m.start, m.stop)
        placements[live], R[live] = table.placement[m], scores[table.lines[m]]
        per_pair[live] = coming[table.next_board[m]]
    s_indices[-1], a_indices[-1] = over, 0
    indptr = np.concatenate(([0], np.cumsum(per_pair)))
    index_type = np.int32 if max(int(indptr[-1]), n_states + 1) < 2**31 else np.int64
    indices, data = np.empty(int(indptr[-1]), dtype=index_type), np.empty(int(indptr[-1]))
    ends = np.zeros((1, n_pieces))
    ends[0, 0] = 1.0  # (an end's one entry, to game over)
    for lo, hi in slices(n_states):
        first, last, m = pairs[lo], pairs[hi], slice(offsets[lo], offsets[hi])
        live = np.repeat(pairs[lo:hi] - offsets[lo:hi], counts[lo:hi]) + np.arange(m.start, m.stop) - first
        # each pair's row of n_pieces candidates, in pair and piece order; the positive ones kept
        after = np.full((last - first, n_pieces), over, dtype=np.int64)
        weight = np.repeat(ends, last - first, axis=0)
        after[live] = table.next_board[m].astype(np.int64)[:, None] * n_pieces + np.arange(n_pieces)
        weight[live] = chances[table.next_board[m]]  # (with a bag, each piece's share of the bag there)
        kept = weight > 0
        indices[indptr[first] : indptr[last]], data[indptr[first] : indptr[last]] = after[kept], weight[kept]
    indices[-1], data[-1] = over, 1.0
    Q = sparse.csr_matrix((data, indices, indptr.astype(index_type)), shape=(L, n_states + 1))
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
