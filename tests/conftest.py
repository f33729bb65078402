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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "long: a check of many seconds (larger games, exhaustive comparisons, subprocesses) that the README's "
        "test command skips to finish in minutes; .ci/run runs them too (`pytest -m long`)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the ``long`` checks unless a ``-m`` expression names them (``-m long``)."""
    if "long" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="long check: run with `pytest -m long` (.ci/run does)")
    for item in items:
        if item.get_closest_marker("long"):
            item.add_marker(skip)


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
