"""What the trust costs (issue 18): the check every move table passes once
(``babytris.engine.transitions.check_table``, run when a ``Transitions`` is built)
against a full solve of the same table, 4x5.  Target: under 5% of the solve.

``test_table_check`` times the check alone; ``test_solve_of_the_table`` the
solve; ``test_check_share`` times both interleaved in one run (medians of 9)
and records their ratio in ``extra_info["check_over_solve"]``, failing above
the target.
"""

from __future__ import annotations

import pytest
from timing import interleaved_medians

import babytris
from babytris.engine.transitions import check_table

TARGET = 0.05


@pytest.fixture(scope="module")
def table_4x5():
    return babytris.enumerate_boards(babytris.Rules(width=4, height=5))


def test_table_check(benchmark, table_4x5):
    benchmark.extra_info.update(size="4x5", n_moves=table_4x5.n_moves)
    benchmark.pedantic(check_table, args=(table_4x5,), rounds=20, warmup_rounds=2)


def test_solve_of_the_table(benchmark, table_4x5):
    benchmark.extra_info.update(size="4x5", n_moves=table_4x5.n_moves)
    benchmark.pedantic(babytris.solve_transitions, args=(table_4x5,), rounds=5, warmup_rounds=1)


def test_check_share(benchmark, table_4x5):
    check, solve = interleaved_medians(
        lambda: check_table(table_4x5), lambda: babytris.solve_transitions(table_4x5), rounds=9
    )
    ratio = check / solve
    benchmark.extra_info.update(size="4x5", check_seconds=check, solve_seconds=solve, check_over_solve=ratio)
    benchmark.pedantic(check_table, args=(table_4x5,), rounds=1)
    assert ratio < TARGET, f"the table check takes {ratio:.1%} of a 4x5 solve (target < {TARGET:.0%})"
