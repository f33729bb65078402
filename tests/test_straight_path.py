"""Issue 37's straight path: a solve's move table goes from ``solve`` down
to the sweeps and back up to the Solution once.  The table's trip is traced
(every Python call that receives the table or one of its arrays) and, apart
from the orchestrator (``babytris.solvers.solve``), the table's own accessors
and the argument checks, each module it enters is entered once: the
resolved game (match, roles), the sweeps' arrays, the Solution.  And the
functions of the solve path are short."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import babytris
from babytris.engine.enumeration import enumerate_boards
from babytris.solvers.solve import solve_transitions

# The orchestrator, the table's own accessors and the argument checks: what a trip passes through, not enters.
PASSED_THROUGH = {
    "babytris.solvers.solve",
    "babytris.engine.transitions",
    "babytris.engine.lazy",
    "babytris.game.validation",
}

SOLVE_PATH = [
    "solvers/solve.py",
    "solvers/sweep_arrays.py",
    "solvers/sweeping.py",
    "solvers/match.py",
    "solvers/roles.py",
    "engine/enumeration.py",
    "engine/transitions.py",
    "results/solution.py",
]


def _trip(transitions, **kw) -> list[str]:
    """The modules entered by calls receiving the table, in order, repeats within a stay merged."""
    watched = {id(transitions), id(transitions.offsets), id(transitions.next_board), id(transitions.lines)}
    modules: list[str] = []

    def profile(frame, event, arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if module.startswith("babytris") and any(id(v) in watched for v in frame.f_locals.values()):
            modules.append(module)

    sys.setprofile(profile)
    try:
        solve_transitions(transitions, **kw)
    finally:
        sys.setprofile(None)
    entered = [m for m in modules if m not in PASSED_THROUGH]
    return [m for i, m in enumerate(entered) if i == 0 or m != entered[i - 1]]


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"opponent": "minimax"},
        {"reward": babytris.Reward(score=1, gaps=-0.5)},
        {"opponent": "minavg"},
        {"opponent": "gaps"},
    ],
    ids=["random", "minimax", "reward", "minavg", "gaps"],
)
def test_the_table_enters_each_module_once(kw):
    trip = _trip(enumerate_boards(babytris.Rules(width=4, height=4)), **kw)
    assert trip[0] == "babytris.solvers.match" and trip[-1] == "babytris.results.solution"
    assert "babytris.solvers.sweep_arrays" in trip
    assert len(trip) == len(set(trip)) <= 5, trip


def test_a_minimized_solve_enters_the_minimization_once():
    trip = _trip(enumerate_boards(babytris.Rules(width=4, height=4)), minimize=True)
    assert "babytris.solvers.minimize" in trip
    assert len(trip) == len(set(trip)), trip


@pytest.mark.parametrize("path", SOLVE_PATH)
def test_the_solve_path_has_no_long_function(path):
    source = (Path(babytris.__file__).parent / path).read_text()
    long = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            has_doc = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
            first = body[1].lineno if has_doc and len(body) > 1 else body[0].lineno
            if node.end_lineno - first + 1 > 80:
                long.append((node.name, node.end_lineno - first + 1))
    assert not long, f"{path}: functions over 80 lines of code: {long}"
