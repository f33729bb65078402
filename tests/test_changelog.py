"""CHANGELOG.md keeps the 0.x renames honest: each row's new name exists and
its old one does not (no alias is kept), and every ``babytris.…`` name the
README and docs/ write exists, so that a move without a word fails here."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOTTED = re.compile(r"babytris(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
ROW = re.compile(r"^\| `(babytris[^`]*)` \| `(babytris[^`]*)` \|", re.MULTILINE)


def resolves(name: str) -> bool:
    """Whether a dotted name is a module, or an attribute reached from the longest module prefix."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def renames() -> list[tuple[str, str]]:
    return ROW.findall((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))


def test_the_rows_are_read():
    assert ("babytris.Board.show", "babytris.game.svg.board_picture") in renames()
    assert len(renames()) >= 20
    assert resolves("babytris.game.svg.board_picture") and not resolves("babytris.game.svg.no_such_name")


@pytest.mark.parametrize("old, new", renames())
def test_each_rename_is_true(old, new):
    assert resolves(new), f"CHANGELOG.md: {new} does not exist"
    assert not resolves(old), f"CHANGELOG.md: {old} still exists (0.x keeps no alias)"


@pytest.mark.parametrize(
    "page", ["README.md", "bench/README.md", *sorted(p.name for p in (ROOT / "docs").glob("*.md"))]
)
def test_every_name_the_docs_write_exists(page):
    path = ROOT / page if "/" in page or page == "README.md" else ROOT / "docs" / page
    if not path.exists():
        pytest.skip(f"{page} is not in this checkout")
    missing = sorted({name for name in DOTTED.findall(path.read_text(encoding="utf-8")) if not resolves(name)})
    assert not missing, f"{page} names what does not exist (moved? say so in CHANGELOG.md): {missing}"
