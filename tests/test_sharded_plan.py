"""Sizing a sharded solve from a measured run (babytris.modes.sharded.plan): the
plan of the measured size gives back what the run measured, and 4x9 is sized
or refused by its memory."""

from __future__ import annotations

import numpy as np
import pytest

from babytris import Rules

distributed = pytest.importorskip("distributed", reason="dask.distributed not installed (pip install '.[dask]')")
from babytris.modes.sharded.distributed import solve_sharded  # noqa: E402
from babytris.modes.sharded.plan import Rates, plan_sharded  # noqa: E402

GIB = 2**30


@pytest.fixture(scope="module")
def run():
    """4x5 sharded over 2 workers (threads: the rates' arithmetic, not the processes, is tested here)."""
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c,
        distributed.Client(c) as client,
    ):
        return solve_sharded(Rules(width=4, height=5), client)


def test_the_plan_of_the_measured_run_gives_back_its_measurements(run):
    rates = Rates.from_run(run)
    assert (rates.size, rates.n_boards, rates.n_shards, rates.rounds) == ("4x5", 182_101, 2, len(run.round_seconds))
    plan = plan_sharded(Rules(width=4, height=5), 2, 8 * GIB, rates)
    assert plan.n_boards == 182_101 and plan.n_shards == 2  # (the forecast searches boards this small)
    assert plan.round_bytes == pytest.approx(np.median(run.round_bytes), rel=1e-6)
    largest = run.boards_per_shard.max()
    expected = np.median(run.round_seconds) * len(run.round_seconds) * (-(-182_101 // 2)) / largest
    assert plan.seconds["rounds"] == pytest.approx(expected, rel=1e-6)
    assert plan.seconds["search"] == pytest.approx(run.seconds["search"] * (-(-182_101 // 2)) / largest, rel=1e-6)
    assert plan.worker_bytes <= 8 * GIB and plan.shard_bytes == plan.worker_bytes


def test_4x9_is_sized_on_a_cluster_and_refused_on_too_little(run):
    rates = Rates.from_run(run)
    plan = plan_sharded(Rules(width=4, height=9), 32, 24 * GIB, rates, cores_per_worker=8)
    assert 6e9 < plan.n_boards < 8e9  # (about 7e9: the forecast from the smaller boards)
    assert plan.n_shards % 32 == 0 and plan.worker_bytes <= 24 * GIB
    assert plan.round_bytes > 0 and plan.seconds["total"] > plan.seconds["rounds"] > 0
    text = "\n".join(plan.lines())
    assert "4x9: about 7," in text and "32 workers of 24.00 GiB" in text and "rates measured at 4x5" in text
    with pytest.raises(ValueError, match="worker_memory: 1.00 GiB holds no shard of 4x9 on 4 workers"):
        plan_sharded(Rules(width=4, height=9), 4, GIB, rates)
    with pytest.raises(ValueError, match=r"workers must be"):
        plan_sharded(Rules(width=4, height=9), 0, GIB, rates)


def test_the_command_line_plans_on_its_cluster_from_a_smaller_board(capsys):
    import json

    from babytris.cli import commands as cli

    argv = ["solve", "--width", "4", "--height", "5", "--scheduler", "local:2", "--plan", "4x4", "--json"]
    assert cli.main(argv) == cli.EXIT_OK
    record = json.loads(capsys.readouterr().out)
    assert record["n_boards"] == 182_101 and record["workers"] == 2 and record["n_shards"] == 2
    assert record["rates"]["size"] == "4x4" and record["rates"]["n_boards"] == 12_978
    assert record["rules"]["height"] == 5 and record["worker_bytes"] <= record["worker_memory"]
    for bad, words in (("4x5", "must be smaller than the one planned"), ("4by4", "a board as WxH")):
        assert cli.main([*argv[:-2], bad]) == cli.EXIT_BAD_ARGUMENTS
        assert "--plan: " in (err := capsys.readouterr().err) and words in err
    assert cli.main(["solve", "--width", "4", "--height", "5", "--plan", "4x4"]) == cli.EXIT_BAD_ARGUMENTS
    assert "--plan: give --scheduler ADDRESS too" in capsys.readouterr().err
