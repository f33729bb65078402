"""``babytris export``: solve a game and write it for another tool (Storm's
DRN, PRISM's explicit files, QuantEcon's arrays); see :mod:`babytris.formats.export`
and :func:`babytris.to_quantecon`."""

from __future__ import annotations

import argparse
import time
from typing import Any

from .common import (
    EPILOG,
    EXIT_OK,
    Output,
    check_writable,
    rules_record,
    solution_from,
)
from .options import board_arguments, output_arguments, rule_arguments, solver_arguments

__all__ = ["FORMATS", "add_export_parser", "export_command"]

#: ``--format`` choices and what each writes.
FORMATS = {
    "drn": "Storm's explicit DRN (one file)",
    "prism": "PRISM's explicit files OUT.tra, OUT.lab, OUT.srew (OUT is a stem)",
    "quantecon": "QuantEcon's DiscreteDP arrays (.npz; babytris.formats.interop.QuantEconModel.load)",
}


def add_export_parser(commands: argparse._SubParsersAction) -> None:
    """The ``export`` command's options, under ``babytris``'s ``commands``."""
    export = commands.add_parser(
        "export",
        epilog=EPILOG,
        help="write the game for Storm, PRISM or QuantEcon",
        description="Solve the game and write it for another tool: the discounted game as total reward until "
        '"done" for Storm and PRISM (Rmax=? [ F "done" ] is the start value), or QuantEcon\'s DiscreteDP '
        "arrays.  With --opponent, the MDP the solved opponent's piece choices induce (against minimax, its "
        "optimum is the max-min value; against minavg and gaps, the optimal player's best response to them).  "
        "Prints the start value to compare with.",
    )
    output_arguments(export)
    board_arguments(export)
    rule_arguments(export)
    solver_arguments(export)
    export.add_argument("--format", required=True, choices=("drn", "prism", "quantecon"), help="the file format")
    export.add_argument("--out", required=True, metavar="PATH", help="the file (for prism: the stem of three files)")


def export_command(args: argparse.Namespace, out: Output) -> int:
    from ..formats.export import explicit_model, to_drn, to_prism
    from ..formats.interop import to_quantecon
    from ..solvers.solve import solve_transitions

    targets = [args.out + suffix for suffix in (".tra", ".lab", ".srew")] if args.format == "prism" else [args.out]
    for target in targets:
        check_writable("--out", target)
    solved = solution_from(args, out)
    # The exported MDP's optimum is an optimal player's value: against a random player's opponent
    # (minavg, gaps), the best response to its piece choices.
    solution = (
        solved
        if solved.player == "optimal"
        else solve_transitions(solved.transitions, discount=solved.discount, tol=solved.tol, opponent=solved)
    )
    started = time.perf_counter()
    if args.format == "quantecon":
        model = to_quantecon(solution.transitions, discount=solution.discount, opponent=_opponent(solved))
        model.save(args.out)
        size = {"states": int(model.Q.shape[1]), "pairs": len(model.R)}
    else:
        explicit = explicit_model(solution.transitions, discount=solution.discount, opponent=_opponent(solved))
        if args.format == "drn":
            to_drn(explicit, args.out)
        else:
            to_prism(explicit, args.out)
        size = {"states": explicit.n_states, "choices": explicit.n_choices, "branches": explicit.n_branches}
    seconds = time.perf_counter() - started
    check = 'Rmax=? [ F "done" ] at the initial state' if args.format != "quantecon" else "model.start_value(v)"
    value_of = _value_of(solved)
    out.result(
        {
            "rules": rules_record(solution.rules),
            "discount": solution.discount,
            "opponent": solved.opponent,
            "format": args.format,
            "files": targets,
            **size,
            "start_value": solution.start_value,
            "start_value_of": value_of,
            "solved_start_value": solved.start_value,  # what `babytris solve` prints for the same options
            "solved_player": solved.player,
            "error_bound": solution.error_bound,
            "check": check,
            "seconds": seconds,
        }
    )
    out.line(f"format       {args.format}: {FORMATS[args.format]}")
    out.line("model        " + ", ".join(f"{value:,} {name}" for name, value in size.items()))
    out.line(f"written      {', '.join(targets)} in {seconds:.2f} s")
    out.line(
        f"start value  {solution.start_value:.9f} points, {value_of} (error <= {solution.error_bound:.1e}; "
        f"discount {solution.discount}): {check}"
    )
    if solved is not solution:
        out.line(
            f"             (babytris solve prints {solved.start_value:.6f} for these options: the {solved.player} "
            f"player's {'holes' if solved.opponent == 'gaps' else 'points'}, whom {solved.opponent} is solved against)"
        )
    return EXIT_OK


def _value_of(solved: Any) -> str:
    """Whose value the exported model's optimum is, in words (the ``solved`` game's opponent)."""
    if solved.opponent_policy is None:
        return "the optimal player's against random pieces"
    if solved.player == "optimal":
        return f"the optimal player's against the {solved.opponent} opponent"
    return f"the optimal player's best response to the {solved.opponent} opponent's pieces"


def _opponent(solved: Any) -> Any:
    """Who gives the pieces in the export: the solution's opponent (its piece choices), or drawn."""
    return "random" if solved.opponent_policy is None else solved
