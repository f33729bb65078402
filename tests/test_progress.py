"""Progress reports: the enumeration's counters and the tqdm bars of a solve."""

import io

import numpy as np
import pytest

import babytris
from babytris.engine.progress import ProgressBars, polling


def test_enumeration_reports_counts_up_to_the_total():
    seen = []
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=5), progress=lambda f, e: seen.append((f, e)))
    assert seen[-1] == (t.n_boards, t.n_boards) == (182_101, 182_101)
    found = [f for f, _ in seen]
    assert found == sorted(found)
    assert all(e <= f for f, e in seen)


@pytest.mark.long
def test_enumeration_reports_through_the_hash_map_too():
    # 3x11 has 33 cells: past the bitmap, the search keeps a hash map.
    seen = []
    t = babytris.enumerate_boards(babytris.Rules(width=3, height=11), progress=lambda f, e: seen.append((f, e)))
    assert seen[-1] == (t.n_boards, t.n_boards)


def test_progress_must_be_callable():
    with pytest.raises(ValueError, match="progress"):
        babytris.enumerate_boards(babytris.Rules(width=3, height=3), progress=5)
    with pytest.raises(ValueError, match="progress"):
        babytris.solve(width=3, height=3, progress="yes")


def test_polling_without_a_callback_starts_nothing():
    with polling(None) as counts:
        assert counts is None


def test_bars_draw_enumeration_and_sweeps():
    out = io.StringIO()
    with ProgressBars(enabled=True, delay=0, file=out, leave=True, mininterval=0) as bars:
        solution = babytris.solve(width=4, height=4, progress=bars, method="vi")
    text = out.getvalue()
    assert "enumerate: 13.0k boards" in text and "12,978 expanded" in text
    assert f"sweep {solution.iterations}," in text and "solve: 100%" in text


def test_bars_stay_silent_when_disabled_or_not_a_terminal(capsys):
    out = io.StringIO()
    with ProgressBars(enabled=False, delay=0, file=out) as bars:
        babytris.solve(width=4, height=4, progress=bars)
    assert out.getvalue() == ""
    babytris.solve(width=4, height=4, progress=True)  # stderr is captured: not a terminal
    assert capsys.readouterr().err == ""
    assert not ProgressBars(file=io.StringIO()).enabled


def test_sweep_callback_still_sees_every_sweep():
    residuals = []
    solution = babytris.solve(width=4, height=4, progress=lambda i, r: residuals.append(r))
    assert np.array_equal(residuals, solution.residuals)
