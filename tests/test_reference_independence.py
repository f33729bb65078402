"""The oracle is independent of what it checks: the reference twin imports
nothing from babytris but the rules' data, and its game is checked against
boards worked out by hand, not only against the compiled engine."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import babytris
from babytris import Rules
from babytris.reference.game import holes, land, max_height, move_reward, moves

SOURCE = Path(__file__).resolve().parents[1] / "babytris"
REFERENCE_MODULES = ("reference/__init__.py", "reference/solvers.py", "reference/game.py")
#: What the reference may import from babytris: the game's data, and itself.
ALLOWED_PACKAGES = ("babytris.game", "babytris.reference")
STDLIB = {"__future__", "collections", "dataclasses", "functools", "itertools", "math", "typing"}


def babytris_imports(source: str, package: str) -> set[str]:
    """The modules ``source`` (a module of ``package``) imports, relative imports resolved."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                found |= {f"{base}.{node.module}"} if node.module else {f"{base}.{a.name}" for a in node.names}
            elif node.module and node.module.split(".")[0] not in STDLIB:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] not in STDLIB}
    return found


def _outside(imported: set[str]) -> set[str]:
    return {m for m in imported if not any(m == p or m.startswith(p + ".") for p in ALLOWED_PACKAGES)}


@pytest.mark.parametrize("name", REFERENCE_MODULES)
def test_the_reference_imports_only_the_games_data(name):
    imported = babytris_imports((SOURCE / name).read_text(), "babytris.reference")
    assert not _outside(imported), f"{name} imports {sorted(_outside(imported))}"


def test_the_check_catches_an_import_of_the_fast_path():
    imported = babytris_imports(
        "from ..solvers.roles import resolve\nfrom ..engine import _core\nimport numpy", "babytris.reference"
    )
    assert imported == {"babytris.solvers.roles", "babytris.engine", "numpy"}
    assert _outside(imported) == imported


# --- the reference's game, against boards worked out by hand ---------------------------------------------

RULES = Rules(width=4, height=4)  # pieces: I (index 0), L (index 1)
I_PIECE = 0


def test_a_vertical_i_completes_the_bottom_row_and_the_rest_falls():
    # before: row 0 = "###."  (bits 0, 1, 2 = 7); the I stands upright in column 3, rows 0-2
    # row 0 is full and cleared; the I's cells in rows 1, 2 fall to rows 0, 1 of column 3: bits 3 and 7
    after, rows, filled = land(RULES, 0b0111, I_PIECE, 1, 3)
    assert (after, rows, filled) == (0b1000_1000, 1, 0)


def test_the_moves_of_an_i_on_the_empty_board():
    # flat in row 0 from column 0 or 1 (from 2 it would stick out): bits 0-2, 1-3;
    # upright in column c: bits c, c + 4, c + 8
    got = {(m.rotation, m.column): (after, rows) for m, after, rows in moves(RULES, 0, I_PIECE)}
    assert got == {
        (0, 0): (0b0111, 0),
        (0, 1): (0b1110, 0),
        **{(1, c): ((1 | 1 << 4 | 1 << 8) << c, 0) for c in range(4)},
    }
    assert land(RULES, 0, I_PIECE, 0, 2) is None  # flat from column 2: a cell off the board (it used to wrap)


def test_holes_and_heights_of_a_hand_drawn_board():
    # drawn top row first: row 1 = "#...", row 0 = "...." (bit 4 filled)
    board = 1 << 4
    assert holes(board, 4, 4) == 1  # the empty cell under it in column 0
    assert max_height(board, 4, 4) == 2


def test_a_rewards_weights_are_applied_by_hand():
    reward = babytris.Reward(lines=0.5, height=1.0, gaps=2.0)
    # a move to the board above (no row cleared): 0.5 * 0 + 1 * 0 points - 1 * height 2 - 2 * 1 hole = -4
    assert move_reward(RULES, 0, 1 << 4, 0, "random", reward) == -4.0
    # the clearing move of the first test: 0.5 * 1 + 1 point - height 2 - no hole = -0.5
    assert move_reward(RULES, 0b0111, 0b1000_1000, 1, "random", reward) == -0.5
    # the opponent that maximises holes counts the holes created
    assert move_reward(RULES, 0, 1 << 4, 0, "gaps", None) == 1.0
