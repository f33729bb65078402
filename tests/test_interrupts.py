"""Ctrl-C stops any long compiled loop within about a second (issue 18): the
loops look for signals every millisecond or so and their callers raise
KeyboardInterrupt.  Each case below would run for minutes uninterrupted."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from children import as_at_a_terminal

LONG_WORK = {
    # 10**9 exact backups of the 4x4 chain (once ignored Ctrl-C for over 30 s)
    "horizon values": "s = babytris.solve(width=4, height=4); print('ready', flush=True); "
    "babytris.expected_points(s, n_placements=10**9, exact=True)",
    # the search of 4x7's 35.7 million boards
    "enumeration": "print('ready', flush=True); "
    "babytris.enumerate_boards(babytris.Rules(width=4, height=7), max_memory=2**34)",
    # relative value iteration that never meets its tolerance
    "long-run rate": "t = babytris.enumerate_boards(babytris.Rules(width=4, height=6)); print('ready', flush=True); "
    "babytris.long_run_rate(t, tol=1e-300, max_iter=10**7)",
    # the lean mode's search of 4x8's half a billion boards, and its sweeps (one layer: 5x4)
    "lean search": "print('ready', flush=True); babytris.solve_lean(width=4, height=8, max_memory=2**34)",
    "lean sweeps": "babytris.solve_lean(width=4, height=4); print('ready', flush=True); "
    "babytris.solve_lean(width=4, height=6, discount=0.999999, tol=1e-300, max_iter=10**6)",
    # sweeps that never meet their tolerance (at discount 0.9 the values settle
    # bit for bit, residual 0, within a second: so a discount near 1)
    "sweeps": "t = babytris.enumerate_boards(babytris.Rules(width=4, height=6)); print('ready', flush=True); "
    "babytris.solve_transitions(t, discount=0.999999, tol=1e-300, max_iter=10**6)",
}


@pytest.mark.long
@pytest.mark.parametrize("work", sorted(LONG_WORK))
def test_ctrl_c_stops_long_compiled_work(work, tmp_path):
    p = subprocess.Popen(
        [sys.executable, "-c", "import babytris; " + LONG_WORK[work]],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_at_a_terminal,
    )  # (not the source tree)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # well into the compiled loop
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
    finally:
        p.kill()
    # Python ends on an unhandled KeyboardInterrupt by the signal itself
    assert p.returncode == -signal.SIGINT, err
    assert "KeyboardInterrupt" in err and "SystemError" not in err, err
