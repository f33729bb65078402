"""``babytris solve --scheduler ADDRESS --plan WxH``: a sharded solve sized on
the cluster before it runs (:mod:`babytris.modes.sharded.plan`), from the rates
of a solve of the smaller board WxH run on that cluster first."""

from __future__ import annotations

import argparse
import dataclasses

from ..game.rules import Rules
from .common import EXIT_OK, Output, rules_record
from .options import game_rules
from .sharded import connected

__all__ = ["plan_command"]


def plan_command(args: argparse.Namespace, out: Output) -> int:
    """Measure the rates on the cluster with ``--plan``'s board, then print the plan for the game's."""
    from ..modes.sharded.distributed import solve_sharded
    from ..modes.sharded.plan import Rates, plan_sharded

    if args.scheduler is None:
        raise ValueError("--plan: give --scheduler ADDRESS too (the plan is for that cluster, measured there)")
    rules = game_rules(args)
    small = _board("--plan", args.plan, rules)
    with connected(args.scheduler) as client:
        workers = client.scheduler_info()["workers"].values()
        memory = min(int(w.get("memory_limit") or 0) for w in workers)
        cores = min(int(w.get("nthreads") or 1) for w in workers)
        if memory <= 0:
            raise ValueError("--scheduler: the cluster's workers have no memory limit; start them with one")
        out.line(f"measuring on {len(workers)} workers: {small.width}x{small.height} sharded...")
        run = solve_sharded(small, client, discount=args.discount, tol=args.tol, opponent=args.opponent)
    rates = Rates.from_run(run)
    plan = plan_sharded(rules, len(workers), memory, rates, cores_per_worker=cores)
    for line in plan.lines():
        out.line(line)
    record = dataclasses.asdict(plan)
    record["rules"] = rules_record(rules)
    out.result(record)
    return EXIT_OK


def _board(option: str, text: str, rules: Rules) -> Rules:
    """The rules at the board ``text`` (``WxH``), smaller than ``rules``' own."""
    width, _, height = text.partition("x")
    if not (width.isdigit() and height.isdigit()):
        raise ValueError(f"{option}: a board as WxH (e.g. 4x6), got {text!r}")
    small = dataclasses.replace(rules, width=int(width), height=int(height))
    if small.width * small.height >= rules.width * rules.height:
        raise ValueError(f"{option}: the measured board must be smaller than the one planned, got {text!r}")
    return small
