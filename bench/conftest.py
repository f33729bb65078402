"""Shared set-up of the benchmark suite: the ``slow`` marker, the installed-package
guard, the helpers' folder on sys.path, and peak-memory measurement in fresh processes.

Run from the repository root with ``python -m pytest bench --benchmark-only``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# ``python -m pytest`` puts the working directory first on sys.path; from the
# repository root that is the unbuilt source tree, whose ``babytris`` has no
# compiled ``_core`` and would shadow the installed package.  Benchmarks must
# time the installed build, so drop the root before anything imports babytris.
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != REPO]
sys.path.insert(0, str(REPO / "bench"))  # the suite's helpers (timing.py)

import babytris  # noqa: E402  (after the sys.path fix above)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: takes many seconds (4x6, 5x5, the pure-Python reference, the 4x5 tournament)"
    )
    core = Path(babytris.engine._core.__file__).resolve()
    if (REPO / "babytris") in core.parents or core.suffix not in (".so", ".pyd"):
        raise pytest.UsageError(
            f"babytris.engine._core is {core}, not an installed compiled module; run `pip install .` first"
        )


# --- peak memory ---------------------------------------------------------------------------

#: Run in a fresh interpreter: import, reset the kernel's peak-RSS mark, note the
#: resident size, run ``{op}``, print (peak - resident before) in bytes.  Only the
#: operation counts: neither the interpreter nor the import (whose transient
#: peak can hide a small operation entirely) nor this process.
#:
#: Why not ``ru_maxrss`` of the child (``RUSAGE_CHILDREN`` or ``os.wait4``): a child
#: starts as a fork of its parent, and the kernel counts the parent's resident
#: pages copied at fork into the child's peak, so a child spawned by a pytest
#: process holding 500 MiB reports a peak of >= 500 MiB whatever it runs.
#: ``RUSAGE_CHILDREN`` is moreover the largest peak of every child ever waited for.
CHILD = """
import re, babytris, babytris.reference
def kib(key):
    with open("/proc/self/status") as f:
        return int(re.search(key + r":\\s+(\\d+) kB", f.read()).group(1))
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset VmHWM (the peak RSS) to the current RSS
before = kib("VmRSS")
{op}
print((kib("VmHWM") - before) * 1024)
"""

OPERATIONS = {
    "solve": "babytris.solve(width={w}, height={h}, discount=0.9, tol=1e-8)",
    "enumerate_boards": "babytris.enumerate_boards(babytris.Rules(width={w}, height={h}))",
    "solve_lean": "babytris.solve_lean(width={w}, height={h}, discount=0.9, tol=1e-8)",
    "reference.solve": "babytris.reference.solve(width={w}, height={h}, discount=0.9, tol=1e-8)",
}


def peak_bytes(operation: str, width: int, height: int) -> int:
    """Peak resident memory that ``operation`` (a key of :data:`OPERATIONS`) adds
    on ``width`` x ``height``, measured in a fresh interpreter (Linux only).

    The child runs in an empty directory so that it, too, imports the installed
    package and not the source tree.
    """
    code = CHILD.format(op=OPERATIONS[operation].format(w=width, h=height))
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"peak memory of {operation} {width}x{height} failed:\n{done.stderr}")
    return int(done.stdout.split()[-1])


class PeakRSS:
    """:func:`peak_bytes` in MiB, cached per (operation, size); None off Linux."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, int, int], float] = {}

    def mib(self, operation: str, width: int, height: int) -> float | None:
        if not os.path.exists("/proc/self/clear_refs"):
            return None
        key = (operation, width, height)
        if key not in self._cache:
            self._cache[key] = round(peak_bytes(operation, width, height) / 2**20, 1)
        return self._cache[key]


@pytest.fixture(scope="session")
def peak_rss() -> PeakRSS:
    return PeakRSS()


@pytest.fixture(scope="session")
def naive(tmp_path_factory):
    """``bench/naive_vi.c`` compiled with ``cc -O2``: Baby Tetris solved as a plain C
    program would (``naive_vi WIDTH HEIGHT DISCOUNT TOL`` prints boards, sweeps,
    start value and its seconds); skips the test without a C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler for bench/naive_vi.c")
    binary = tmp_path_factory.mktemp("naive") / "naive_vi"
    subprocess.run([compiler, "-O2", "-o", str(binary), str(Path(__file__).with_name("naive_vi.c"))], check=True)
    return binary
