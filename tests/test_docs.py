"""Documentation: the user guide's examples and every module's docstring
examples run (doctest), and every public name has a docstring saying what
it returns (and, for arrays, their dtype and shape).

Everything is imported from the installed package (``--import-mode=importlib``;
see conftest.py), never from the source tree.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from examples_runner import FENCE, shell_commands

import babytris

ROOT = Path(__file__).resolve().parent.parent
# Markdown files whose fenced examples run (test_markdown_examples); the guide runs as a doctest.
MARKDOWN = ["README.md", "docs/design.md", "docs/results.md", "docs/course.md", "bench/README.md"]
# Pages whose examples are doctests (outputs compared), with how many examples each must keep.
DOCTESTED = {"docs/guide.md": 100, "docs/course.md": 5}
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# Modules whose docstrings are not run, each with the reason.  Nothing else is left out.
NOT_IMPORTABLE = {"babytris.__main__": "importing it runs the command line (sys.exit(main()))"}
# Every module of the layers (the big-board wing's package, not its modules, as before the layers).
ALL_MODULES = {
    m.name for m in pkgutil.walk_packages(babytris.__path__, "babytris.") if not m.name.startswith("babytris.big.")
}
MODULES = ["babytris"] + sorted(ALL_MODULES - set(NOT_IMPORTABLE))
# Modules that have examples: losing them all would go unnoticed otherwise.
WITH_EXAMPLES = {
    "babytris",
    "babytris.game.board",
    "babytris.formats.env",
    "babytris.analysis.evaluate",
    "babytris.engine.stepped",
    "babytris.analysis.horizon",
    "babytris.solvers.match",
    "babytris.analysis.adaptive",
    "babytris.formats.export",
    "babytris.formats.interop",
    "babytris.files.persist",
    "babytris.draw.pictures",
    "babytris.analysis.rate",
    "babytris.analysis.tournament",
}
# Modules whose public functions and classes are documented beside babytris.__all__.
EXTRA_PUBLIC = ("babytris.formats.env", "babytris.draw.pictures", "babytris.engine.stepped", "babytris.engine.progress")


# --------------------------------------------------------------------------
# Examples run
# --------------------------------------------------------------------------


def test_the_package_is_the_installed_one():
    # The compiled core is importable, so this is a built package, not a bare source tree.
    assert Path(babytris.engine._core.__file__).suffix in (".so", ".pyd")


@pytest.mark.skipif(not (ROOT / "setup.py").exists(), reason="not run from a checkout")
def test_the_repository_root_imports_the_built_package(tmp_path):
    """Where the README's commands leave the reader, the source tree comes
    first on sys.path: the install copies the compiled modules beside their
    sources (setup.py), so the tree imports and runs (issue 19)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = "import babytris; print(babytris.__file__); print(round(babytris.solve(width=3, height=3).start_value, 6))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(ROOT / "babytris" / "__init__.py"), "11.75"]
    cli = [sys.executable, "-m", "babytris", "solve", "--width", "3", "--height", "3", "--json"]
    done = subprocess.run(cli, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["boards"] == 34


def test_excluded_modules_exist():
    assert set(NOT_IMPORTABLE) <= ALL_MODULES
    assert WITH_EXAMPLES <= set(MODULES)


def code_blocks(text: str) -> list[tuple[str, str, str | None, int]]:
    """``(language, code, skip reason or None, line)`` for each fenced block of a Markdown text."""
    return [(m["lang"], m["code"], m["skip"], text.count("\n", 0, m.start("code")) + 1) for m in FENCE.finditer(text)]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """Where the README's commands leave a reader: the repository root, whose
    source tree comes first on ``sys.path``.  A copy of the tree's package
    (with the compiled modules the install put beside their sources), so that
    the files the examples write land in the copy, not in the checkout.
    Returns ``(directory, copied)``: without a built tree (tests run from an
    sdist, say) nothing is copied and the examples use the installed package."""
    root = tmp_path_factory.mktemp("checkout")
    copied = any((ROOT / "babytris").glob("_core*.so")) or any((ROOT / "babytris").glob("_core*.pyd"))
    if copied:
        shutil.copytree(ROOT / "babytris", root / "babytris", ignore=shutil.ignore_patterns("__pycache__", "*.c"))
    return root, copied


@pytest.mark.parametrize("name", sorted(set(MARKDOWN) | set(DOCTESTED)))
def test_page_examples_run_from_the_repository_root(name, checkout):
    """Every fenced block of the page runs, in order, in one session, started
    in the repository root (a copy): ```python blocks executed, a doctested
    page's examples compared with their outputs, shell blocks' ``babytris ...``
    lines run as ``python -m babytris`` there (see tests/examples_runner.py).
    Only a block marked ``<!-- skip-test: reason -->`` is left out."""
    path = ROOT / name
    if not path.exists():
        pytest.skip(f"{name} does not exist")
    assert "doctest: +SKIP" not in path.read_text(encoding="utf-8")
    root, copied = checkout
    spec = root / f"spec-{name.replace('/', '-')}.json"
    page = {"name": name, "path": str(path), "doctest": name in DOCTESTED}
    spec.write_text(json.dumps({"pages": [page], "options": OPTIONS}))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    runner = [sys.executable, str(ROOT / "tests" / "examples_runner.py"), str(spec)]
    done = subprocess.run(runner, cwd=root, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if copied:  # the reader's tree, not the installed package, answered
        assert report["babytris"] == str(root / "babytris" / "__init__.py")
    (result,) = report["pages"]
    assert not result["failures"], "\n".join(result["failures"])
    if name in DOCTESTED:
        assert result["doctests"] > DOCTESTED[name], f"{name} lost its examples: {result['doctests']} run"
    assert result["ran"] or not result["blocks"], f"{name}: every code block is skipped"


def test_readme_is_short_and_starts_with_the_ci_command():
    """The README fits two screens, and its first code block holds the command `.ci/run` runs."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200, "README.md over 200 lines: move detail to docs/"
    ci = [
        line
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.startswith("python3 -m venv")
    ]
    assert ci, ".ci/run lost its test command"
    first_block = code_blocks(readme)[0][1]
    assert all(command in first_block.splitlines() for command in ci), (
        f"README's first code block must hold .ci/run's command exactly: {ci}"
    )


def test_markdown_block_parsing():
    text = (
        "intro\n<!-- skip-test: installs -->\n```bash\npip install .\n```\n"
        "```python\nx = 1\n```\n```bash\nbabytris solve --width 4  # a comment\n# only a comment\n```\n"
    )
    blocks = code_blocks(text)
    assert [(lang, skip) for lang, _, skip, _ in blocks] == [("bash", "installs"), ("python", None), ("bash", None)]
    assert blocks[1][1] == "x = 1\n" and blocks[1][3] == 7
    assert shell_commands(blocks[2][1]) == ["babytris solve --width 4"]


@pytest.mark.parametrize("name", MODULES)
def test_module_docstrings(name):
    module = importlib.import_module(name)
    skipped = [
        f"{test.name} line {example.lineno}"
        for test in doctest.DocTestFinder().find(module)
        for example in test.examples
        if example.options.get(doctest.SKIP)
    ]
    assert not skipped, f"examples skipped with +SKIP (make them run): {skipped}"
    result = doctest.testmod(module, optionflags=OPTIONS, report=False)
    assert result.failed == 0, f"{result.failed} of {name}'s {result.attempted} examples failed (see stdout)"
    if name in WITH_EXAMPLES:
        assert result.attempted > 0, f"{name} lost its examples"


# --------------------------------------------------------------------------
# Docstrings
# --------------------------------------------------------------------------

# A docstring says what a function returns if it has a "Returns:" section or
# says "returns ...", or if its summary describes the result: a noun phrase
# ("The board reflected left-right.", "Whether ...", "How much ...", "Index
# of ..."), a type ("int64 array ``(n,)``: ..."), or a ``label``: description.
# An imperative summary ("Play games.", "Parse rows.") says what it does, not
# what comes back, and needs a Returns section.
RETURNS = re.compile(r"(^|\n)\s*Returns:|\breturns\b")
NOUN_PHRASE = re.compile(r"(The|A|An|Each|Every|One|All|Whether|How|Number of|Index of|Row of)\b")
TYPE_LEAD = re.compile(r"(u?int\d+|float\d+|bool|str|tuple|dict|list|frozenset)\b")
LABEL_LEAD = re.compile(r"``[^`]+``:\s")
# An array's docstring names its dtype and its shape.
DTYPE = re.compile(r"\b(u?int\d+|float\d+|bool)\b")
SHAPE = re.compile(r"``\([^`]*\)``|\bshape\b")


def public_objects() -> dict[str, object]:
    """Every public name: babytris.__all__, and the functions and classes defined in EXTRA_PUBLIC."""
    out = {f"babytris.{name}": getattr(babytris, name) for name in babytris.__all__}
    for module_name in EXTRA_PUBLIC:
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if (
                not name.startswith("_")
                and (inspect.isclass(obj) or inspect.isfunction(obj))
                and (obj.__module__ == module_name)
            ):
                out[f"{module_name}.{name}"] = obj
    return out


PUBLIC = public_objects()


def members(cls: type):
    """``(name, function, is_property)`` for the public methods and properties a class defines itself."""
    for name, attr in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(attr, property):
            yield name, attr.fget, True
        elif isinstance(attr, (staticmethod, classmethod)):
            yield name, attr.__func__, False
        elif inspect.isfunction(attr):
            yield name, attr, False


def returns_value(func) -> bool:
    """Whether the function's own body returns something other than None, or yields."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0]
    for node in _own_nodes(tree):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            return True
    return False


def _own_nodes(tree: ast.AST):
    """The nodes of a function body, without those of nested functions, lambdas and classes."""
    stack = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def docstring_problems(qualname: str, func, is_property: bool = False) -> list[str]:
    """What a function's or property's docstring lacks (empty: nothing)."""
    doc = inspect.getdoc(func) if func.__doc__ else None
    if not doc:
        return [f"{qualname}: no docstring"]
    if not (is_property or returns_value(func)):
        return []
    problems = []
    summary = doc.split("\n\n")[0]
    if not (RETURNS.search(doc) or NOUN_PHRASE.match(summary) or TYPE_LEAD.match(summary) or LABEL_LEAD.match(summary)):
        problems.append(
            f"{qualname}: does not say what it returns (a Returns: section, or a summary "
            f"describing the result); summary: {summary[:60]!r}"
        )
    if "ndarray" in str(inspect.signature(func).return_annotation) and not (DTYPE.search(doc) and SHAPE.search(doc)):
        problems.append(f"{qualname}: returns an array; give its dtype and shape, e.g. int64 array ``(n_boards,)``")
    return problems


def dataclass_default_doc(cls: type) -> str | None:
    """The docstring @dataclass makes up for a class without one."""
    try:
        return cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
    except (TypeError, ValueError):
        return None


def data_is_documented(name: str) -> bool:
    """Whether a module-level constant has a ``#:`` comment above its assignment in some babytris module."""
    pattern = re.compile(rf"^#:.*\n(?:#:.*\n)*{re.escape(name)}\b[^\n=]*=", re.MULTILINE)
    sources = Path(babytris.__file__).parent.rglob("*.py")
    return any(pattern.search(path.read_text(encoding="utf-8")) for path in sources)


@pytest.mark.parametrize("qualname", sorted(PUBLIC))
def test_public_name_is_documented(qualname):
    obj = PUBLIC[qualname]
    problems: list[str] = []
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
        if not doc or doc == dataclass_default_doc(obj):
            problems.append(f"{qualname}: no class docstring")
        for name, func, is_property in members(obj):
            problems += docstring_problems(f"{qualname}.{name}", func, is_property)
    elif inspect.isfunction(obj):
        problems += docstring_problems(qualname, obj)
    else:
        if not data_is_documented(qualname.rsplit(".", 1)[1]):
            problems.append(f"{qualname}: a constant without a '#:' comment above its assignment")
    assert not problems, "\n".join(problems)


def test_the_docstring_check_can_fail():
    def imperative(x):
        """Play some games."""
        return x

    def described(x):
        """The games played."""
        return x

    def with_section(x):
        """Play some games.

        Returns:
            the points.
        """
        return x

    def procedure(x):
        """Play some games."""
        print(x)

    def array_without_shape(x) -> np.ndarray:  # noqa: F821
        """The points of each game."""
        return x

    def undocumented(x):
        return x

    assert docstring_problems("imperative", imperative)
    assert docstring_problems("array_without_shape", array_without_shape)
    assert docstring_problems("undocumented", undocumented)
    assert not docstring_problems("described", described)
    assert not docstring_problems("with_section", with_section)
    assert not docstring_problems("procedure", procedure)
    assert not data_is_documented("MIN_BOARDS_PER_THREAD_UNDOCUMENTED")
    assert data_is_documented("DEFAULT_MAX_MEMORY")
