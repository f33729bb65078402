"""What EXP3 costs against plain play (issue 15, part 3): ``exp3`` over two
experts for 10,000 placements of 4x4 (it also plays each expert alone, so
three runs of 10,000 placements, in Python) against ``babytris.play`` of one
game of 10,000 placements (compiled), interleaved, medians of 5; the ratio is
in ``extra_info["exp3_over_play"]``.  No target: reported in bench/README.md."""

from __future__ import annotations

from timing import interleaved_medians

import babytris
from babytris.analysis.adaptive import exp3


def test_exp3_against_play(benchmark):
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
    experts = {"optimal": babytris.solve_transitions(t), "max-min": babytris.solve_transitions(t, opponent="minimax")}

    run, play = interleaved_medians(
        lambda: exp3(t, experts, "random", n_placements=10_000),
        lambda: babytris.play(experts["optimal"], n_placements=10_000),
        rounds=5,
    )
    benchmark.group = "EXP3 against plain play, 4x4, 10,000 placements"
    benchmark.extra_info.update(exp3_seconds=run, play_seconds=play, exp3_over_play=run / play)
    benchmark.pedantic(exp3, args=(t, experts, "random"), kwargs={"n_placements": 10_000}, rounds=1)
