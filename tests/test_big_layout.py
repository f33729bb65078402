"""The big-board wing (babytris.big) is joined to the rest of babytris by
public names only, the rest does not import it, and every compiled module of
the wing ships a type stub."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

# The source tree (the installed package has no .pyx files): the files these tests read.
PACKAGE = Path(__file__).resolve().parents[1] / "babytris"
BIG = PACKAGE / "big"

#: Modules above both wings, allowed to import big: the published claims recompute numbers of
#: every wing (imported only when a claim runs, so `import babytris` never loads big).
ABOVE_BOTH = {
    "babytris.claims.published",
    "babytris.claims.pirnay",
    "babytris.claims.bodoia",
    "babytris.claims.bodoia_features",
    "babytris.claims.counts",
    "babytris.claims.table_1_fit",
}
#: ... and the analysis board's estimates for boards too big to solve (imported when one is asked for).
ABOVE_BOTH |= {"babytris.board.estimates"}


CIMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+cimport\s+(.+)|cimport\s+([\w.]+))", re.MULTILINE)


def _imports(path: Path, package: str) -> list[tuple[str, str]]:
    """(module, name) of each import in a .py file; name "" for ``import module``.
    Relative imports are resolved against ``package`` (the file's package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, "") for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.extend((module, alias.name) for alias in node.names)
    return out


def _cimports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of each cimport in a .pyx or .pxd file; name "" for ``cimport module``."""
    out = []
    for match in CIMPORT.finditer(path.read_text(encoding="utf-8")):
        if match.group(3):
            out.append((match.group(3), ""))
            continue
        names = match.group(2).strip().strip("()")
        out.extend((match.group(1), name.split(" as ")[0].strip()) for name in names.split(",") if name.strip())
    return out


def _private(module: str, name: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")[1:]) or name.startswith("_")


def _outside_big(module: str) -> bool:
    return (module == "babytris" or module.startswith("babytris.")) and not (
        module == "babytris.big" or module.startswith("babytris.big.")
    )


def _big_files(*suffixes: str) -> list[Path]:
    return sorted(p for p in BIG.iterdir() if p.suffix in suffixes)


def test_the_wing_has_its_modules():
    names = {p.name for p in BIG.iterdir()}
    for expected in (
        "__init__.py",
        "tetris.py",
        "features.py",
        "fitted.py",
        "td.py",
        "lookahead.py",
        "_engine.pyx",
        "_playout.pyx",
    ):
        assert expected in names


@pytest.mark.parametrize("path", _big_files(".py"), ids=lambda p: p.name)
def test_big_imports_public_names_only(path):
    bad = [(m, n) for m, n in _imports(path, "babytris.big") if _outside_big(m) and _private(m, n)]
    assert not bad, f"{path.name} imports private names of babytris: {bad}"


@pytest.mark.parametrize("path", _big_files(".pyx", ".pxd"), ids=lambda p: p.name)
def test_big_cimports_public_names_only(path):
    found = _cimports(path)
    assert found, f"{path.name}: no cimport found (the pattern is broken?)"
    bad = [(m, n) for m, n in found if _outside_big(m) and _private(m, n)]
    assert not bad, f"{path.name} cimports private names of babytris: {bad}"


def test_the_rest_does_not_import_big():
    offenders = {}
    for path in sorted(p for p in PACKAGE.rglob("*.py") if BIG not in p.parents):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if module in ABOVE_BOTH:
            continue
        package = module if path.stem == "__init__" else module.rpartition(".")[0]
        found = [
            m
            for m, n in _imports(path, package)
            if m == "babytris.big" or m.startswith("babytris.big.") or (m == "babytris" and n == "big")
        ]
        if found:
            offenders[path.name] = found
    for path in sorted(p for p in [*PACKAGE.rglob("*.pyx"), *PACKAGE.rglob("*.pxd")] if BIG not in p.parents):
        found = [m for m, _ in _cimports(path) if m.startswith("babytris.big")]
        if found:
            offenders[path.name] = found
    assert not offenders, f"modules outside babytris/big import it: {offenders}"


def test_importing_babytris_and_its_claims_loads_no_big_module():
    code = (
        "import sys, babytris, babytris.claims.reproduce, babytris.claims.published, babytris.cli.commands, "
        "babytris.board; "
        "print(sorted(m for m in sys.modules if m.startswith('babytris.big')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("path", _big_files(".pyx"), ids=lambda p: p.name)
def test_every_compiled_module_has_a_stub(path):
    assert path.with_suffix(".pyi").exists(), f"{path.name} has no .pyi stub"


@pytest.mark.parametrize(
    "old", ["babytris.states", "babytris.tetris", "babytris.features", "babytris.fitted", "babytris.td"]
)
def test_old_module_paths_are_gone(old):
    """No compatibility shims (0.x): each name has one home."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
