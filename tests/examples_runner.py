"""Run the examples of Markdown pages as a reader would, in a fresh process
started in the current directory: ``python examples_runner.py SPEC.json``.

The spec is ``{"pages": [{"name": ..., "path": ..., "doctest": bool}], "options": int}``.
Each page's fenced blocks run in order, in one namespace: ```python blocks
are executed (or, on a doctested page, the page runs as a doctest, outputs
compared, and its other python blocks are executed), shell blocks run their
``babytris ...`` lines as ``python -m babytris ...`` here.  A block after
``<!-- skip-test: reason -->`` is left out.  Prints one JSON object: where
``babytris`` was imported from and, per page, the blocks run and the
failures (each with its page and line).  The test (tests/test_docs.py) runs
it from a copy of the repository root, where the source tree comes first
on ``sys.path``, as it does for a reader who stays there.
"""

from __future__ import annotations

import doctest
import io
import json
import os
import re
import subprocess
import sys
import traceback
from contextlib import redirect_stdout

FENCE = re.compile(
    r"^(?:<!-- skip-test: (?P<skip>[^>]*?) -->\n)?```(?P<lang>[\w-]*)\n(?P<code>.*?)^```\s*$", re.MULTILINE | re.DOTALL
)
SHELL = ("bash", "sh", "console", "shell")
CLI_TIMEOUT = 120


def shell_commands(code: str) -> list[str]:
    """The commands of a shell block: its lines without comments and blank lines."""
    lines = (line.split(" #")[0].strip() for line in code.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def run_page(name: str, path: str, doctested: bool, options: int) -> dict:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    failures: list[str] = []
    ran, doctests = 0, None
    namespace: dict = {"__name__": "__docs__"}
    env = dict(os.environ, MPLBACKEND="Agg")
    for match in FENCE.finditer(text):
        lang, code, skip = match["lang"], match["code"], match["skip"]
        where = f"{name} line {text.count(chr(10), 0, match.start('code')) + 1}"
        if skip is not None:
            if not skip.strip():
                failures.append(f"{where}: a skip-test marker needs a reason")
            continue
        if lang == "python" and code.lstrip().startswith(">>>"):
            if not doctested:
                failures.append(f"{where}: a doctest block in a page that does not run as a doctest")
            ran += 1
        elif lang == "python":
            try:
                exec(compile(code, where, "exec"), namespace)
            except Exception:
                failures.append(f"{where}: {traceback.format_exc(limit=3)}")
            ran += 1
        elif lang in SHELL:
            commands = shell_commands(code)
            others = [c for c in commands if not c.startswith("babytris ")]
            if others:
                failures.append(f"{where}: only `babytris ...` commands run; mark the block skip-test: {others}")
            for command in commands:
                done = subprocess.run(
                    [sys.executable, "-m", "babytris", *command.split()[1:]],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=CLI_TIMEOUT,
                )
                if done.returncode != 0:
                    failures.append(f"{where}: `{command}` exited {done.returncode}\n{done.stderr}")
            ran += 1
    if doctested:
        report = io.StringIO()
        with redirect_stdout(report):
            result = doctest.testfile(path, module_relative=False, optionflags=options, raise_on_error=False)
        doctests = result.attempted
        if result.failed:
            failures.append(
                f"{name}: {result.failed} of {result.attempted} doctest examples failed\n{report.getvalue()}"
            )
    return {"name": name, "ran": ran, "blocks": len(FENCE.findall(text)), "doctests": doctests, "failures": failures}


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    sys.path.insert(0, os.getcwd())  # (a script's own folder comes first otherwise: the reader's is the cwd)
    import babytris

    pages = [run_page(p["name"], p["path"], p["doctest"], spec["options"]) for p in spec["pages"]]
    print(json.dumps({"babytris": babytris.__file__, "pages": pages}))


if __name__ == "__main__":
    main()
