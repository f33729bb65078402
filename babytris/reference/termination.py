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


def surviving_nodes(rules: Rules, opponent: Any = "random") -> set:
    """The nodes (boards, or with previews, hold or a bag tuples) from which
    the player, with whatever pieces are drawn (``opponent="random"``), or
    the player and an opponent giving the pieces together (any other
    opponent), can keep the game going forever.  Empty: every game ends."""
    everywhere = nodes(rules)
    n_pieces = len(rules.pieces)
    after = {node: {p: [to for _, to, _ in node_moves(rules, node, p)] for p in range(n_pieces)} for node in everywhere}
    kept = set(everywhere)
    removed = True
    while removed:
        removed = False
        for node in list(kept):
            can_come = [p for p in range(n_pieces) if draw_chance(rules, node, p) > 0]
            stays = [any(to in kept for to in after[node][p]) for p in can_come]
            if not (all(stays) if opponent == "random" else any(stays)):
                kept.discard(node)
                removed = True
    return kept
