"""The game as (P, R) matrices, for other MDP tools (pymdptoolbox's format).

>>> import babytris, mdptoolbox.mdp, numpy as np
>>> table = babytris.enumerate_boards(babytris.Rules(width=3, height=3))
>>> P, R = babytris.to_mdptoolbox(table, dense=True)
>>> vi = mdptoolbox.mdp.ValueIteration(P, R, 0.9, epsilon=1e-10); vi.run()
>>> ours = babytris.solve_transitions(table, discount=0.9, tol=1e-12).values.ravel()
>>> bool(np.abs(np.asarray(vi.V[:-1]) - ours).max() < 1e-8)   # the last state is game over
True
"""

from __future__ import annotations

import numpy as np

from .placements import placement_table
from .transitions import Transitions
from .validation import check_number, check_type

__all__ = ["to_mdptoolbox"]

#: Dense matrices of more states than this are refused (A * S * S floats).
MAX_DENSE_STATES = 4096


def to_mdptoolbox(transitions: Transitions, *, dense: bool = False, penalty: float = 1.0):
    """The game against randomly drawn pieces as ``(P, R)``: ``P[a]`` the
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
    if rules.preview or rules.hold:
        raise ValueError("to_mdptoolbox: games with previews or hold are not supported")
    if min(rules.line_scores) < 0:
        raise ValueError(
            f"to_mdptoolbox: line_scores must be >= 0 (illegal actions cost penalty), got {rules.line_scores}"
        )
    penalty = check_number("penalty", penalty, 0.0, open_low=True)
    t = transitions
    n_pieces, n_states = rules.n_pieces, t.n_states
    S = n_states + 1
    A = max(len(moves) for moves in placement_table(rules).placements)
    if dense and S > MAX_DENSE_STATES:
        raise ValueError(f"dense: at most {MAX_DENSE_STATES} states for dense matrices, the game has {S}")
    probs = np.asarray(rules.probabilities)
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
        vals = [np.tile(probs, len(src))]
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
            "to_mdptoolbox needs scipy for sparse matrices (pip install scipy), or dense=True for small games"
        ) from None
    return sparse.csr_matrix((vals, (rows, cols)), shape=(size, size))
