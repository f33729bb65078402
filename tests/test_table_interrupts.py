"""Ctrl-C in a policy table (issue 47): ``Solution.policy_table``, ``policy_array``
and ``--policy-csv`` at 4x6 (5 million states, 2.3 s in one numpy pass, more in
the CSV writer, none of which looked for signals) are built in slices and
answer between two.  Each child repeats the work until the signal comes."""

from __future__ import annotations

import signal
import sys
import time

import pytest
from children import start

import babytris

WORK = {
    "policy_array": "from babytris.results.tables import policy_array as work",
    "policy_table": "from babytris.results.tables import policy_table as work",
    "policy csv": "from babytris.results.tables import write_policy_csv; work = lambda s: write_policy_csv(s, 'p.csv')",
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("tables") / "4x6.npz"
    babytris.solve(width=4, height=6).save(path)
    return path


@pytest.mark.long
@pytest.mark.parametrize("delay", [0.1, 0.5, 1.2])
@pytest.mark.parametrize("work", sorted(WORK))
def test_ctrl_c_stops_a_policy_table(saved, work, delay, tmp_path):
    code = (
        f"import babytris; {WORK[work]}; s = babytris.load({str(saved)!r}, verify=False); "
        "print('ready', flush=True); any(work(s) is None for _ in iter(int, 1))"
    )
    p = start([sys.executable, "-c", code], tmp_path)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(delay)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        latency = time.monotonic() - sent
    finally:
        p.kill()
    assert p.returncode == -signal.SIGINT and err.rstrip().endswith("KeyboardInterrupt"), err
    assert {path.name for path in tmp_path.iterdir()} <= {"p.csv"}  # (no temporary file left: the CSV whole, or none)
    # 0.04-0.11 s measured on 2 cores under a load of 8 (the slices take tens of milliseconds); the
    # unsliced policy_array answered after 2.8 s there.  Issue 47's bound, the process's exit included.
    assert latency < 0.5, latency
