"""The compiled core is built, installed, and is the one the package uses (no silent fallback)."""

from __future__ import annotations

import importlib.machinery
import sys
from pathlib import Path

import pytest

import babytris
import babytris.solvers.solve
from babytris import Rules
from babytris.engine import _core
from babytris.solvers import _sweep


def test_core_is_an_extension_module():
    path = _core.__file__
    assert path is not None
    assert not path.endswith((".py", ".pyx", ".pyc"))
    assert path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), path
    assert path.endswith((".so", ".pyd"))
    assert isinstance(_core.__loader__, importlib.machinery.ExtensionFileLoader)


def test_core_lives_in_the_imported_package():
    assert Path(_core.__file__).parent == Path(babytris.__file__).parent / "engine"
    assert sys.modules["babytris.engine._core"] is _core


@pytest.mark.parametrize(
    "name", ["engine._core", "solvers._sweep", "analysis._play", "analysis._rate", "solvers._minimize"]
)
def test_every_compiled_module_is_an_extension_with_a_stub(name):
    module = importlib.import_module(f"babytris.{name}")
    assert isinstance(module.__loader__, importlib.machinery.ExtensionFileLoader)
    assert Path(module.__file__).with_name(name.rpartition(".")[2] + ".pyi").is_file()


def test_the_roles_pass_the_sweeps_own_codes():
    from babytris.solvers import roles

    for name in (
        "PIECES_RANDOM",
        "PIECES_WORST",
        "PIECES_BEST",
        "PIECES_FIXED",
        "MOVES_BEST",
        "MOVES_MEAN",
        "MOVES_FIXED",
    ):
        assert getattr(roles, name) == getattr(_sweep, name)
    assert len({roles.PIECES_RANDOM, roles.PIECES_WORST, roles.PIECES_BEST, roles.PIECES_FIXED}) == 4


def test_package_modules_use_the_compiled_core():
    assert babytris.engine._core is _core
    assert babytris.engine.placements._core is _core
    assert sys.modules["babytris.solvers.solve"]._sweep is _sweep
    engine = babytris.engine.placements.engine(Rules())
    assert type(engine) is _core.Engine
    assert type(engine).__module__ == "babytris.engine._core"


def test_no_pyximport_in_play():
    assert "pyximport" not in sys.modules
