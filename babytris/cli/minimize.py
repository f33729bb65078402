"""``babytris minimize``: the game's states merged into groups of equal value
(:func:`babytris.minimize`) for each opponent, with the solves' times with and
without the groups."""

from __future__ import annotations

import argparse
import time

from .common import EXIT_OK, Output
from .options import game_rules

__all__ = ["minimize_command"]


def minimize_command(args: argparse.Namespace, out: Output) -> int:
    """Run ``babytris minimize``: each opponent's state and board groups, and the solves with and without them."""
    import babytris

    t = babytris.enumerate_boards(game_rules(args))
    rows = (
        "boards"
        if args.preview == 0 and not args.hold
        else f"(board, queue, slot) rows (preview {args.preview}{', hold' if args.hold else ''})"
    )
    out.line(f"{args.width}x{args.height}: {t.n_states:,} states, {t.n_boards:,} {rows} (discount {args.discount})")
    out.line(
        "opponent   state groups  board groups  keeping game over   minimize   full solve   "
        "quotient solve (with minimize)"
    )
    records = []
    for opponent in ("random", "minimax", "minavg", "gaps"):
        p = babytris.minimize(t, opponent=opponent)
        bisimulation = babytris.minimize(t, opponent=opponent, zero_states=False)
        started = time.perf_counter()
        babytris.solve_transitions(t, discount=args.discount, opponent=opponent)
        full = time.perf_counter() - started
        started = time.perf_counter()
        babytris.solve_transitions(t, discount=args.discount, opponent=opponent, minimize=True)
        quotient = time.perf_counter() - started
        records.append(
            {
                "opponent": opponent,
                "state_groups": p.n_classes,
                "board_groups": p.n_board_classes,
                "bisimulation_state_groups": bisimulation.n_classes,
                "minimize_seconds": p.seconds,
                "full_solve_seconds": full,
                "quotient_solve_seconds": quotient,
            }
        )
        out.line(
            f"{opponent:9} {p.n_classes:>13,} {p.n_board_classes:>13,} {bisimulation.n_classes:>18,} "
            f"{p.seconds:>9.3f}s {full:>11.3f}s "
            f"{quotient:>15.3f}s"
        )
    out.result({"states": t.n_states, "boards": t.n_boards, "discount": args.discount, "groups": records})
    return EXIT_OK
