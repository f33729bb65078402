"""Shared fixtures: the 4x4 Baby Tetris game, enumerated and solved once per session.

Everything here comes from the installed package (``--import-mode=importlib``);
nothing puts the source tree on ``sys.path``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# `python -m pytest` puts the working directory first on sys.path; run from the
# repository root, the unbuilt source tree (no compiled _core) would then shadow
# the installed package.  Drop that entry so `import babytris` finds the install.
_REPO = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(os.path.abspath(p or os.curdir)) != _REPO]
# ... and put tests/ itself there, for the shared helpers (strategies.py).
sys.path.insert(0, str(_REPO / "tests"))

import babytris  # noqa: E402
from babytris import Rules, reference  # noqa: E402


@pytest.fixture(scope="session")
def rules_4x4() -> Rules:
    """Default rules: 4x4, trominoes I and L, line scores 0, 1, 3, 6, uniform pieces."""
    return Rules(width=4, height=4)


@pytest.fixture(scope="session")
def transitions_4x4(rules_4x4):
    return babytris.enumerate_boards(rules_4x4)


@pytest.fixture(scope="session")
def solution_4x4(rules_4x4):
    """Discount 0.9, tight tolerance."""
    return babytris.solve(rules_4x4, discount=0.9, tol=1e-10)


@pytest.fixture(scope="session")
def solution_4x4_low_discount(rules_4x4):
    return babytris.solve(rules_4x4, discount=0.1, tol=1e-10)


@pytest.fixture(scope="session")
def reference_boards_4x4(rules_4x4) -> list[int]:
    """Every reachable 4x4 board, found by the pure-Python reference (about 3 s)."""
    return reference.reachable_boards(rules_4x4)
