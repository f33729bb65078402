"""The layout stays as docs/design.md draws it: small source files, a stub for
every compiled module, the public API importable from the top level."""

from __future__ import annotations

from pathlib import Path

import pytest

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
