"""CI: the README as a new user meets it, on a plain install (no extras).

In a copy of the working tree (its files, not .venv or build/; the compiled
modules' cache, build/babytris-cache, is shared, so nothing compiles again):

1. the README's first command, as written (a fresh ``.venv`` with ``pip install .``
   and the default solve);
2. a check that no optional extra came with it (else the run would prove nothing);
3. every example of the README, in that copy's root where the first command
   leaves the reader, by tests/examples_runner.py (the runner tests/test_docs.py
   uses): its Python blocks, and its shell blocks' ``babytris ...`` lines;
4. the one it skips because it serves until Ctrl-C, ``babytris board``: its page
   and files as the package ships them, its API, and Ctrl-C stopping it.

The commands are read from README.md, so they cannot drift from it.  Run from
the repository root: ``python3 .ci/plain_install.py``; exits 1 naming what failed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from examples_runner import FENCE, shell_commands  # noqa: E402  (the parser the docs' test uses)

#: Modules of the optional extras (pyproject.toml); none may come with a plain install.
EXTRA_MODULES = ("resvg_py", "PIL", "matplotlib", "scipy", "stormpy", "quantecon", "pandas", "gymnasium", "dask")


def first_command(readme: str) -> str:
    """The README's first command: the first line of its first code block that is not a comment."""
    first_block = next(FENCE.finditer(readme))["code"]
    return shell_commands(first_block)[0]


def copy_tree(target: Path) -> None:
    """The working tree's files (tracked, and new ones git does not ignore) into ``target``,
    with build/babytris-cache a link to this tree's."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # (a file deleted but not yet committed is listed too)
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    cache = ROOT / "build" / "babytris-cache"
    cache.mkdir(parents=True, exist_ok=True)
    (target / "build").mkdir(exist_ok=True)
    (target / "build" / "babytris-cache").symlink_to(cache, target_is_directory=True)


def main() -> int:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = first_command(readme)
    with tempfile.TemporaryDirectory(prefix="babytris-plain-") as folder:
        copy = Path(folder) / "babytris"
        copy_tree(copy)
        started = time.perf_counter()
        print(f"plain install: {command}", flush=True)
        if subprocess.run(["bash", "-c", command], cwd=copy).returncode != 0:
            print(f"plain install: the README's first command failed: {command}", file=sys.stderr)
            return 1
        python = copy / ".venv" / "bin" / "python"
        probe = "import importlib.util as u, sys; print(' '.join(m for m in sys.argv[1:] if u.find_spec(m)))"
        extras = subprocess.run([python, "-c", probe, *EXTRA_MODULES], capture_output=True, text=True, check=True)
        if extras.stdout.strip():
            print(f"plain install: extras came with `pip install .`: {extras.stdout.strip()}", file=sys.stderr)
            return 1
        installed = time.perf_counter() - started
        spec = copy / "plain-install-spec.json"
        spec.write_text(
            json.dumps(
                {"pages": [{"name": "README.md", "path": str(copy / "README.md"), "doctest": False}], "options": 0}
            )
        )
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        runner = [python, str(copy / "tests" / "examples_runner.py"), str(spec)]
        done = subprocess.run(runner, cwd=copy, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"plain install: the README's examples did not run:\n{done.stderr[-4000:]}", file=sys.stderr)
            return 1
        (page,) = json.loads(done.stdout.strip().splitlines()[-1])["pages"]
        if page["failures"]:
            print("plain install: README examples failed:\n" + "\n".join(page["failures"]), file=sys.stderr)
            return 1
        print(
            f"plain install: the first command in {installed:.0f} s, then the README's {page['ran']} example blocks "
            f"in {time.perf_counter() - started - installed:.0f} s, without any extra",
            flush=True,
        )
        failure = serve_board(copy / ".venv" / "bin" / "babytris", env)
        if failure:
            print(f"plain install: babytris board: {failure}", file=sys.stderr)
            return 1
        print("plain install: babytris board served its page, files and API, and stopped on Ctrl-C", flush=True)
    return 0


#: The board's page and files (babytris/board/static/), as the package must ship them.
BOARD_FILES = {"/": "index.html", "/static/board.js": "board.js", "/static/board.css": "board.css"}


def serve_board(command: Path, env: dict[str, str]) -> str | None:
    """Run ``babytris board`` as installed, fetch its page, files and API, stop it with Ctrl-C;
    what went wrong, or None."""
    board = subprocess.Popen(
        [command, "board", "--width", "4", "--height", "4", "--port", "0", "--no-browser", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # (a background job's is ignored)
    )
    try:
        url = json.loads(board.stdout.readline())["url"]
        for path, name in BOARD_FILES.items():
            with urllib.request.urlopen(url.rstrip("/") + path, timeout=30) as answer:
                if answer.read() != (ROOT / "babytris" / "board" / "static" / name).read_bytes():
                    return f"{path} is not the tree's babytris/board/static/{name}"
        with urllib.request.urlopen(url + "api/position?pos=....%3BL", timeout=30) as answer:
            if not json.loads(answer.read())["moves"]:
                return "/api/position answered no move on the empty board"
        board.send_signal(signal.SIGINT)
        if board.wait(timeout=5) != 130:
            return f"Ctrl-C: exit status {board.returncode}, not 130"
    except Exception as err:  # (any failure is reported, with the board's own words)
        board.kill()
        return f"{type(err).__name__}: {err}; its stderr: {board.communicate()[1][-2000:]}"
    return None


if __name__ == "__main__":
    sys.exit(main())
