"""The layout stays as docs/design.md draws it: small source files, a stub for
every compiled module, the public API importable from the top level."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import tomllib

import babytris

SOURCE = Path(__file__).resolve().parents[1] / "babytris"
# A file past this many lines does more than one thing (issue 12); split it.
MAX_LINES = 700


def _sources(*patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in SOURCE.rglob(pattern))


def test_the_source_tree_is_beside_the_tests():
    assert (SOURCE / "engine" / "_core.pyx").is_file()


@pytest.mark.parametrize("path", _sources("*.py", "*.pyx", "*.pxd"), ids=lambda p: str(p.relative_to(SOURCE)))
def test_no_source_file_is_over_the_limit(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(SOURCE)} has {n} lines (limit {MAX_LINES})"


@pytest.mark.parametrize("path", _sources("*.pyx"), ids=lambda p: str(p.relative_to(SOURCE)))
def test_every_compiled_module_has_a_stub(path):
    assert path.with_suffix(".pyi").is_file(), f"{path.relative_to(SOURCE)} has no .pyi stub"


@pytest.mark.parametrize("name", babytris.__all__)
def test_every_public_name_is_there(name):
    assert getattr(babytris, name) is not None


#: The layers of docs/design.md, top first: the folders of the package.
LAYERS = [
    "cli", "board", "claims", "formats", "draw", "analysis", "files", "modes", "solvers", "results", "engine", "game",
]  # fmt: skip


@pytest.mark.parametrize("layer", [*LAYERS, "reference", "big", "modes/sharded"])
def test_each_folder_holds_at_most_15_modules_and_says_what_it_may_import(layer):
    folder = SOURCE / layer
    modules = [p for p in folder.iterdir() if p.suffix in (".py", ".pyx") and p.stem != "__init__"]
    assert 0 < len(modules) <= 15, f"{layer}/ holds {len(modules)} modules"
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
    assert doc and "import" in doc.lower(), f"{layer}/__init__.py does not say what it may import"


def test_the_package_root_holds_the_api_only():
    loose = sorted(p.name for p in SOURCE.iterdir() if p.suffix in (".py", ".pyx", ".pxd"))
    assert loose == ["__init__.py", "__main__.py", "_version.py"]


def test_the_import_contracts_name_every_layer():
    config = tomllib.loads((SOURCE.parent / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    assert layers == [f"babytris.{name}" for name in LAYERS]
    assert {p.name for p in SOURCE.iterdir() if (p / "__init__.py").exists()} == {*LAYERS, "reference", "big"}
