"""What an export costs against the solve of the same game (issue 15, part 4):
building the explicit model, writing Storm's DRN, PRISM's three files and
QuantEcon's arrays, each timed interleaved with a solve (medians of 5), at
4x4 and 4x5.  ``extra_info`` records the seconds, the ratio to the solve, the
model's size and the bytes written.  No target: the figures are reported in
bench/README.md (writing text is Python work, the solve compiled)."""

from __future__ import annotations

import os

import pytest
from timing import interleaved_medians

import babytris

SIZES = {"4x4": (4, 4), "4x5": (4, 5)}


def _exports(solution, folder):
    return {
        "explicit_model": lambda: babytris.explicit_model(solution),
        "to_drn": lambda: babytris.to_drn(solution, os.path.join(folder, "g.drn")),
        "to_prism": lambda: babytris.to_prism(solution, os.path.join(folder, "g")),
        "to_quantecon": lambda: babytris.to_quantecon(solution),
    }


@pytest.mark.parametrize("export", ["explicit_model", "to_drn", "to_prism", "to_quantecon"])
@pytest.mark.parametrize("size", sorted(SIZES))
def test_export_against_solve(benchmark, tmp_path, size, export):
    if export == "to_quantecon":
        pytest.importorskip("scipy")
    width, height = SIZES[size]
    rules = babytris.Rules(width=width, height=height)
    solution = babytris.solve(rules)
    call = _exports(solution, str(tmp_path))[export]

    export_seconds, solve_seconds = interleaved_medians(call, lambda: babytris.solve(rules), rounds=5)
    model = babytris.explicit_model(solution)
    written = sum(p.stat().st_size for p in tmp_path.iterdir())
    benchmark.group = f"export against solve, {size}"
    benchmark.extra_info.update(
        size=size,
        export=export,
        export_seconds=export_seconds,
        solve_seconds=solve_seconds,
        export_over_solve=export_seconds / solve_seconds,
        states=model.n_states,
        choices=model.n_choices,
        branches=model.n_branches,
        bytes_written=written,
    )
    benchmark.pedantic(call, rounds=1)
