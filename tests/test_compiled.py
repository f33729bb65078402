"""The compiled core is built, installed, and is the one the package uses (no silent fallback)."""

from __future__ import annotations

import importlib.machinery
import sys
from pathlib import Path

import babytris
import babytris.solve
import babytris.states
from babytris import Rules, _core


def test_core_is_an_extension_module():
    path = _core.__file__
    assert path is not None
    assert not path.endswith((".py", ".pyx", ".pyc"))
    assert path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), path
    assert path.endswith((".so", ".pyd"))
    assert isinstance(_core.__loader__, importlib.machinery.ExtensionFileLoader)


def test_core_lives_in_the_imported_package():
    assert Path(_core.__file__).parent == Path(babytris.__file__).parent
    assert sys.modules["babytris._core"] is _core


def test_package_modules_use_the_compiled_core():
    assert babytris._core is _core
    assert babytris.placements._core is _core
    assert sys.modules["babytris.solve"]._core is _core
    engine = babytris.states.engine(Rules())
    assert type(engine) is _core.Engine
    assert type(engine).__module__ == "babytris._core"


def test_no_pyximport_in_play():
    assert "pyximport" not in sys.modules
