"""The reference twin of :mod:`babytris.solvers.termination`: the nodes from
which some play never ends, found by removing, until none is left to remove,
every node where a piece that can come (with pieces drawn: some piece that
can be drawn; where an opponent gives them: every one it may give) has no
move to a node still kept.  Plain sets and loops over
:func:`~babytris.reference.game.node_moves`."""

from __future__ import annotations

from typing import Any

from ..game.rules import Rules
from .game import draw_chance, node_moves, nodes

__all__ = ["surviving_nodes"]


def surviving_nodes(rules: Rules, opponent: Any = "random", player: Any = "optimal") -> set:
    """The nodes (boards, or with previews, hold or a bag tuples) from which
    the player, with whatever pieces are drawn (``opponent="random"``), or
    the player and an opponent giving the pieces together (any other
    opponent), can keep the game going forever.  Empty: every game ends.
    An optimal player keeps a node with some move to a kept node; a player
    placing at random (``player="random"``) only with every move of the
    piece leading to one; a given player (a dict (node, piece) -> placement
    number) with its own move."""
    everywhere = nodes(rules)
    n_pieces = len(rules.pieces)
    after = {
        node: {p: [(placement, to) for placement, to, _ in node_moves(rules, node, p)] for p in range(n_pieces)}
        for node in everywhere
    }
    kept = set(everywhere)
    removed = True
    while removed:
        removed = False
        for node in list(kept):
            can_come = [p for p in range(n_pieces) if draw_chance(rules, node, p) > 0]
            stays = [_stays(after[node][p], kept, player, (node, p)) for p in can_come]
            if not (all(stays) if opponent == "random" else any(stays)):
                kept.discard(node)
                removed = True
    return kept


def _stays(moves: list, kept: set, player: Any, state: tuple) -> bool:
    """Whether the player's play of this state (its ``(placement, node
    after)`` moves) keeps the game among the ``kept`` nodes."""
    if player == "random":
        return bool(moves) and all(to in kept for _, to in moves)
    if isinstance(player, dict):
        return any(to in kept for placement, to in moves if getattr(placement, "index", None) == player.get(state))
    return any(to in kept for _, to in moves)
