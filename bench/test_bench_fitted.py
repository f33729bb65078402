"""Benchmarks of the approximate methods (issue 6).

``test_fitted_iteration_10x20``: one fitted value iteration on 10x20 Tetris
as Bodoia & Puranik set it up (1,000 boards from random play, the paper's
three features, discount 0.9): targets over every afterstate of every
piece, then least squares; ``extra_info["iterations"]`` and the time per
iteration (from the median round).  ``test_fitted_baby_4x5``: the same
algorithm on the enumerated 4x5 Baby Tetris table, with the exact regret's
policy extraction.  ``test_td_games_10x20``: TD(lambda) games per second
with the paper's network, compiled (babytris.big._td) and in numpy (the
reference loop, the same games: compare the two medians of one run).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import babytris  # noqa: E402
from babytris.big import fitted, td  # noqa: E402
from babytris.big.tetris import Tetris  # noqa: E402

FEATURES = ("max_height", "holes", "covers")


def test_fitted_iteration_10x20(benchmark):
    tetris = Tetris(width=10, height=20, line_scores=(0, 1, 2, 3, 4))
    result = benchmark(fitted.fitted_value_iteration, tetris, FEATURES, n_samples=1000, loss=20, seed=0)
    iterations = result.iterations[0]
    benchmark.extra_info["iterations"] = iterations
    benchmark.extra_info["seconds_per_iteration"] = benchmark.stats.stats.median / iterations
    assert result.converged


def test_fitted_baby_4x5(benchmark):
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=5))

    def fit_and_extract():
        result = fitted.fitted_value_iteration(t, FEATURES, n_samples=1000, seed=0)
        return result, fitted.greedy_policy(t, result.value)

    result, policy = benchmark(fit_and_extract)
    benchmark.extra_info["iterations"] = result.iterations[0]
    assert (policy >= -1).all()


@pytest.mark.parametrize("engine, games", [("compiled", 2000), ("numpy", 200)])
def test_td_games_10x20(benchmark, engine, games):
    tetris = Tetris(width=10, height=20)
    result = benchmark.pedantic(
        td.td_lambda,
        args=(tetris,),
        kwargs=dict(n_games=games, report_every=games, engine=engine),
        rounds=3,
        iterations=1,
    )
    benchmark.extra_info["games_per_second"] = games / benchmark.stats.stats.median
    benchmark.extra_info["placements_per_game"] = float(result.placements_per_game[-1])
    assert np.isfinite(result.network.w2).all()
