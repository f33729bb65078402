"""`babytris reproduce`: the published numbers recomputed in their sources' setups (the fast subset)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import babytris
from babytris.big.playouts import play_greedy
from babytris.big.tetris import Tetris
from babytris.claims import reproduce
from babytris.claims.published import TABLE_1
from babytris.claims.registry import AGREES, CALIBRATED, CLAIMS, DIFFERS, FAILS, NOT_REPRODUCED, WITHIN_NOISE
from babytris.cli import commands as cli


@pytest.fixture(scope="module")
def fast():
    return {r.name: r for r in reproduce.reproduce(fast=True)}


def test_every_fast_claim_names_a_known_source_and_says_why(fast):
    slow = {c.name for c in CLAIMS if not c.fast}
    assert set(fast) == set(reproduce.claim_names()) - slow
    assert slow == {f"pirnay-td-{what}-{k}k" for what in ("lines", "explored") for k in (10, 300, 700)} | {
        f"bodoia-table1-{name}-{what}" for name in TABLE_1 for what in ("fitted", "weights")
    } | {
        "bodoia-lookahead-2-previews",
        "bodoia-lookahead-above-half",
        "bodoia-lookahead-2-step-no-weights",
        "bodoia-lookahead-3-step-no-weights",
        "bodoia-preliminary-avg-diff",
        "bodoia-preliminary-i-col-height",
        "bodoia-preliminary-i-col-diff",
        "bodoia-ranking-fitted",
        "mdptetris-total-lines-5x5",
        "slides-vi-trace-4x5-0.1",
        "slides-vi-trace-4x5-0.9",
    }
    for r in fast.values():
        assert r.source in reproduce.SOURCES
        assert r.verdict in (AGREES, WITHIN_NOISE, DIFFERS, FAILS, NOT_REPRODUCED)
        assert r.why


@pytest.mark.parametrize(
    ("name", "exact"),
    [("slides-score-4x4-0.9", 11_087.0), ("slides-score-4x5-0.9", 13_293.9)],
)
def test_slides_scores_are_the_exact_expectation_and_within_one_games_noise(fast, name, exact):
    r = fast[name]
    assert r.measured == pytest.approx(exact, abs=0.05)
    assert r.verdict == WITHIN_NOISE


def test_slides_scores_follow_the_exact_horizon_value(fast):
    s = babytris.solve(width=4, height=4, discount=0.1, tol=1e-8)
    assert fast["slides-score-4x4-0.1"].measured == round(babytris.expected_points(s, n_placements=10_000), 1)
    assert fast["slides-score-4x4-0.1"].published == 7632


@pytest.mark.parametrize(("m", "n"), [(4, 4), (5, 4), (6, 4)])
def test_block_drop_counts_differ_from_the_papers_formula_by_the_boards_that_never_occur(fast, m, n):
    r = fast[f"bodoia-block-drop-states-{m}x{n}"]
    assert r.published == m**n + 1
    assert r.measured == m**n - (m - 1) ** n + 1
    assert r.verdict == DIFFERS


def test_block_drop_policy_and_c4w_counts_agree(fast):
    assert fast["bodoia-block-drop-policy"].verdict == AGREES
    assert fast["bodoia-block-drop-policy"].measured == "columns 0, 1, 2, 3, 0, 1, 2, 3"
    assert (fast["c4w-residues"].measured, fast["c4w-residues"].verdict) == (40, AGREES)
    assert (fast["c4w-residues-soft"].measured, fast["c4w-residues-soft"].verdict) == (40, AGREES)
    assert "the same residues as its hard drops, with 183 moves against 180" in fast["c4w-residues-soft"].why
    assert (fast["c4w-fields-with-hold"].measured, fast["c4w-fields-with-hold"].verdict) == (280, AGREES)
    states = fast["c4w-states-hold-6-previews"]
    assert (states.measured, states.verdict) == (32_941_720, AGREES)


def test_reachable_rows_of_a_drawn_hold_never_include_an_empty_or_locked_slot():
    t = babytris.enumerate_boards(babytris.Rules(width=4, height=4, hold=True, hold_start="drawn"))
    reached = t.reachable()
    assert set(np.unique(t.slots[reached]).tolist()) == {1, 2}  # I or L held, free
    assert reached.sum() == 12_978 * 2  # every board, with either piece held
    empty_start = babytris.enumerate_boards(babytris.Rules(width=4, height=4, hold=True))
    assert empty_start.reachable().sum() == empty_start.n_boards


def test_table_cells_escape_the_column_bar():
    row = reproduce.Reproduction("x", "c4w", "a |F| b", 1, 2.5, AGREES, "why | not", "cmd", 0.0)
    table = reproduce.markdown_table([row])
    assert "a \\|F\\| b" in table and "why \\| not" in table and "| 2.5 |" in table


def test_table_1_rows_play_the_published_vectors(fast):
    # the constant agent ties everywhere: with ties broken at random it is random play
    constant = fast["bodoia-table1-constant-published-weights"].measured
    random_play = play_greedy(Tetris(width=10, height=20), None, n_games=2000, seed=13).mean_placements
    assert constant == pytest.approx(random_play, abs=1.0)
    assert fast["bodoia-table1-mh-nh-published-weights"].verdict == WITHIN_NOISE
    assert fast["bodoia-table1-max-height-published-weights"].verdict == WITHIN_NOISE
    # the paper's best pair lives far longer than any single feature, here as there
    assert (
        fast["bodoia-table1-mh-nh-published-weights"].measured
        > 2 * fast["bodoia-table1-max-height-published-weights"].measured / 1.2
    )


def test_random_ties_make_a_constant_value_random_play():
    """A constant value ties every placement: the first of them always is a
    fixed policy, a random one among them is uniformly random play."""
    t = Tetris(width=10, height=20)
    random_play = play_greedy(t, None, n_games=4000, seed=5)
    at_random = play_greedy(t, [1.0], (), n_games=4000, seed=6, ties="random")
    first = play_greedy(t, [1.0], (), n_games=4000, seed=6)
    se = random_play.placements.std() / 4000**0.5
    assert abs(at_random.mean_placements - random_play.mean_placements) < 4 * se * 2**0.5
    assert abs(first.mean_placements - random_play.mean_placements) > 8 * se
    with pytest.raises(ValueError, match="ties must be"):
        play_greedy(t, [0.0], (), ties="sometimes")


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="unknown claim 'nope'"):
        reproduce.reproduce(["nope"])
    with pytest.raises(ValueError, match="not one string"):
        reproduce.reproduce("c4w-residues")


def test_cli_lists_runs_and_prints_json(capsys):
    assert cli.main(["reproduce", "--list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in reproduce.claim_names())
    assert cli.main(["reproduce", "c4w-residues", "bodoia-block-drop-states-4x4", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["bodoia-block-drop-states-4x4", "c4w-residues"]
    assert {"name", "source", "published", "measured", "verdict", "why", "command"} <= set(rows[0])
    assert (rows[0]["published"], rows[0]["measured"]) == (257, 176)
    assert cli.main(["reproduce", "nope"]) == 2


def test_write_replaces_only_the_marked_table(tmp_path, capsys):
    page = tmp_path / "results.md"
    page.write_text(f"# Results\n\nbefore\n\n{reproduce.BEGIN}\nold table\n{reproduce.END}\n\nafter\n")
    assert cli.main(["reproduce", "c4w-residues", "--write", str(page), "--quiet"]) == 0
    text = page.read_text()
    assert text.startswith("# Results\n\nbefore\n\n") and text.endswith("\n\nafter\n")
    assert "old table" not in text and "| ImpleLee | `c4w-residues` |" in text
    unmarked = tmp_path / "plain.md"
    unmarked.write_text("no markers\n")
    assert cli.main(["reproduce", "c4w-residues", "--write", str(unmarked)]) == 2
    assert unmarked.read_text() == "no markers\n"
    assert cli.main(["reproduce", "c4w-residues", "--write", str(tmp_path / "missing.md")]) == 2
    capsys.readouterr()


def test_a_record_keeps_the_newest_row_of_each_claim(tmp_path, capsys):
    page = tmp_path / "results.md"
    page.write_text(f"{reproduce.BEGIN}\n{reproduce.END}\n")
    record = tmp_path / "record.json"
    assert cli.main(["reproduce", "c4w-residues", "--record", str(record), "--quiet"]) == 0
    assert cli.main(["reproduce", "bodoia-block-drop-states-4x4", "--record", str(record), "--write", str(page)]) == 0
    rows = json.loads(record.read_text())
    assert [r["name"] for r in rows] == ["bodoia-block-drop-states-4x4", "c4w-residues"]  # table order
    assert "`c4w-residues`" in page.read_text() and "`bodoia-block-drop-states-4x4`" in page.read_text()
    record.write_text("[{]")
    assert cli.main(["reproduce", "c4w-residues", "--record", str(record)]) == 2
    assert record.read_text() == "[{]"
    capsys.readouterr()


def test_the_slides_table_replayed_as_the_course_program_plays(fast):
    """Deterministic games (a policy against a piece-choosing opponent) score
    the same every time: every such published cell is matched to the point,
    the max-min row's too; Rand cells lie within the program's own noise."""
    from babytris.claims.slides_table import SLIDES_TABLE

    cells = {n: r for n, r in fast.items() if n.startswith("slides-table-")}
    assert len(cells) == 35
    for row, (_, published) in SLIDES_TABLE.items():
        for column, value in zip(("minmax", "minavg", "gapavg"), published[1:4]):
            cell = cells[f"slides-table-{row}-{column}"]
            assert (cell.measured, cell.verdict) == (value, AGREES), (row, column)
            assert "babytris's own solves" in cell.why
        assert cells[f"slides-table-{row}-rand"].verdict == WITHIN_NOISE, row
        least = cells[f"slides-table-{row}-min"]
        assert least.verdict == (WITHIN_NOISE if row == "w-0-1-4-1.5" else AGREES), row
    # the cells an L first would move, and babytris's own tie rule beside
    minmax = cells["slides-table-w-0-1-4-1.5-minmax"]
    assert "with an L first it gives 7,500" in minmax.why and "(ties to its first placement) give 7,500" in minmax.why
    assert "with an L first it gives 11,250" in cells["slides-table-w-10-0-3-1-minavg"].why
    # the max-min player's Rand is one game; babytris's own max-min player scores 42 more on average
    maxmin = cells["slides-table-maxmin-rand"]
    assert maxmin.measured == pytest.approx(10_670.32, abs=0.01) and "one game" in maxmin.why
    assert "give 10,712.01 expected" in maxmin.why
    assert "another version" not in maxmin.why and "another way" not in minmax.why


def test_tied_share_counts_states_with_several_best_moves():
    from babytris.claims.slides_table import tied_share

    s = babytris.solve(width=3, height=4, opponent="minimax", discount=0.9, tol=1e-12)
    tied = live = 0
    for board in s.boards:
        for piece in ("I", "L"):
            q = np.array(list(s.action_values(int(board), piece).values()))
            if q.size:
                live += 1
                tied += int(np.sum(q >= q.max() - 1e-9) > 1)
    assert tied_share(s) == pytest.approx(tied / live) and 0 < tied < live


def test_no_holes_regret_rows_give_the_exact_solutions_bound(fast):
    """ZMDP's gap is not babytris's to rerun: the rows say so, with the same
    game's certified optimum beside the paper's figure."""
    for name, figure in (
        ("bodoia-no-holes-regret-5x4", "above 0.5"),
        ("bodoia-no-holes-regret-6x4", "above 4"),
        ("bodoia-no-holes-regret-6x4-2-pieces", "above 1"),
    ):
        r = fast[name]
        assert (r.published, r.verdict) == (figure, NOT_REPRODUCED)
        assert r.measured.startswith("regret <= ") and float(r.measured.split("<= ")[1]) < 1e-6
        assert "ZMDP" in r.why and "discount 0.9 assumed" in r.why
    assert "5.803" in fast["bodoia-no-holes-regret-5x4"].why  # the optimum's start value
    assert "21 pairs" in fast["bodoia-no-holes-regret-6x4-2-pieces"].why


def test_resampling_row_shows_each_rounds_weights(fast):
    r = fast["bodoia-resampling-0.3"]
    assert r.published == "no significant change" and r.verdict in (FAILS, WITHIN_NOISE)
    assert r.measured.count("(") == 2 and " -> " in r.measured
    assert ("more than 3 standard errors" in r.why) == (r.verdict == FAILS)


def test_lookahead_rows_measure_in_a_short_run(monkeypatch):
    """The slow look-ahead rows' measures, on fewer and shorter games."""
    from babytris.claims import bodoia

    monkeypatch.setattr(bodoia, "LOOKAHEAD_GAMES", 3)
    monkeypatch.setattr(bodoia, "LOOKAHEAD_HORIZON", 40)
    (row,) = [c for c in CLAIMS if c.name == "bodoia-lookahead-2-previews"]
    m = row.measure(False)
    lost = int(m.value.split(" of ")[0])
    assert m.value == f"{lost} of 3 games lost within 40" and m.verdict in (DIFFERS, WITHIN_NOISE)
    assert "Table 1's MH-NH-NC vector" in m.why
    (above,) = [c for c in CLAIMS if c.name == "bodoia-lookahead-above-half"]
    high = above.measure(False)  # (the same games, played once)
    games = bodoia._two_preview_games()
    assert high.value == f"{games.above_half.sum() / games.placements.sum():.1%} of placements"
    assert high.verdict in (AGREES, NOT_REPRODUCED) and "stood above 10 of the 20 rows" in high.why
    assert (high.verdict == NOT_REPRODUCED) == bool(games.lost.any())
    monkeypatch.setattr(bodoia, "RANDOM_GAMES", 2000)
    monkeypatch.setattr(bodoia, "_random_play", {})
    m = bodoia._no_weights(1, 40)(False)
    assert m.verdict in (FAILS, WITHIN_NOISE) and "ties at random" in m.why and "random placements" in m.why
    assert (m.verdict == FAILS) == ("the opposite of the claim" in m.why)


#: mdptetris's data/pieces4.dat: each tetromino's first orientation (rows top first) and its
#: number of orientations, which mdptetris makes by turning the piece a quarter at a time.
MDPTETRIS_PIECES = (
    (("X", "X", "X", "X"), 2),
    (("XX", "XX"), 1),
    (("X ", "XX", "X "), 4),
    ((" X", "XX", "X "), 2),
    (("X ", "XX", " X"), 2),
    (("X  ", "XXX"), 4),
    (("XXX", "X  "), 4),
)


def _mdptetris_value_iteration(width: int, height: int) -> float:
    """mdptetris's src/value_iteration.c in numpy, on every grid of ``width x height`` cells:
    each piece dropped straight down from above in each orientation and column, a point a line,
    a piece ending above the top row worth 0 (game over, no line cleared), the pieces' mean,
    synchronous sweeps at gamma 1 until no value moves by more than 1e-13.  Returns the empty
    grid's value."""
    full = (1 << width) - 1
    orientations = []
    for picture, count in MDPTETRIS_PIECES:
        cells = {(x, len(picture) - 1 - r) for r, row in enumerate(picture) for x, ch in enumerate(row) if ch == "X"}
        shapes = []
        for _ in range(count):
            shapes.append(cells)
            top = max(y for _, y in cells)
            cells = {(y, top - x) for x, y in cells}  # a quarter turn
            cells = {(x - min(a for a, _ in cells), y - min(b for _, b in cells)) for x, y in cells}
        rows_of = [[sum(1 << x for x, y in s if y == r) for r in range(1 + max(y for _, y in s))] for s in shapes]
        orientations.append(rows_of)
    n_grids = 1 << (width * height)
    moves = []  # per piece: (next grid, lines) arrays, shape (n_grids, n_moves); -1: game over
    for rows_of in orientations:
        table = []
        for piece_rows in rows_of:
            piece_width = max(r.bit_length() for r in piece_rows)
            for column in range(width - piece_width + 1):
                shifted = [r << column for r in piece_rows]
                after = np.empty(n_grids, dtype=np.int64)
                lines = np.zeros(n_grids, dtype=np.int64)
                for grid in range(n_grids):
                    rows = [(grid >> (width * r)) & full for r in range(height)] + [0] * len(shifted)
                    bottom = height
                    while bottom > 0 and not any(rows[bottom - 1 + i] & p for i, p in enumerate(shifted)):
                        bottom -= 1
                    if bottom + len(shifted) > height:
                        after[grid] = -1
                        continue
                    for i, p in enumerate(shifted):
                        rows[bottom + i] |= p
                    kept = [r for r in rows[:height] if r != full]
                    lines[grid] = height - len(kept)
                    kept += [0] * (height - len(kept))
                    after[grid] = sum(r << (width * i) for i, r in enumerate(kept))
                table.append((after, lines))
        moves.append(table)
    values = np.zeros(n_grids)
    while True:
        new = np.zeros(n_grids)
        for table in moves:
            best = np.full(n_grids, -1.0)
            for after, lines in table:
                best = np.maximum(best, np.where(after >= 0, lines + values[np.maximum(after, 0)], 0.0))
            new += best
        new /= len(moves)
        delta = np.abs(new - values).max()
        values = new
        if delta <= 1e-13:
            return float(values[0])


@pytest.mark.parametrize(("width", "height"), [(4, 3), (3, 4)])
def test_mdptetris_rules_give_babytris_values(width, height):
    """Its rules replayed on every grid (a piece ending above the top row a move worth 0, an I
    standing taller than the board too) give babytris's total at discount 1, where such a piece
    is no move."""
    s = babytris.solve(
        width=width, height=height, pieces="tetrominoes", line_scores=(0, 1, 2, 3, 4), discount=1, tol=1e-13
    )
    assert _mdptetris_value_iteration(width, height) == pytest.approx(s.start_value, abs=1e-10)


def test_mdptetris_row_agrees_with_its_run(fast):
    from babytris.claims.mdptetris import MDPTETRIS_RUNS

    r = fast["mdptetris-total-lines-4x5"]
    assert r.source == "mdptetris" and r.published == MDPTETRIS_RUNS[(4, 5)][0] == 12.50655387079807
    assert (r.verdict, r.measured) == (AGREES, pytest.approx(12.50655387079807, abs=1e-11))
    assert "2^20 grids 342 times" in r.why and "37,427 boards" in r.why


def test_summary_counts_program_cross_checks_apart(capsys):
    rows = [
        reproduce.Reproduction("a", "slides", "q", 1, 1, AGREES, "w", "c", 0.0),
        reproduce.Reproduction("b", "bodoia", "q", 1, 2, DIFFERS, "w", "c", 0.0),
        reproduce.Reproduction("c", "mdptetris", "q", 1, 1, AGREES, "w", "c", 0.0),
    ]
    rows.append(reproduce.Reproduction("d", "bodoia", "q", 1, 1, CALIBRATED, "w", "c", 0.0))
    counts = reproduce.summary(rows)
    assert counts["documents"] == {AGREES: 1, WITHIN_NOISE: 0, DIFFERS: 1, FAILS: 0, NOT_REPRODUCED: 0, CALIBRATED: 1}
    assert counts["programs"] == {AGREES: 1, WITHIN_NOISE: 0, DIFFERS: 0, FAILS: 0, NOT_REPRODUCED: 0, CALIBRATED: 0}
    assert reproduce.summary_lines(rows) == [
        "3 claims of the source documents: 1 agrees, 0 within noise, 1 differs, 0 fails, 0 not reproduced, "
        "1 calibrated",
        "1 cross-checks against programs run here: 1 agrees, 0 within noise, 0 differs, 0 fails, 0 not reproduced, "
        "0 calibrated",
    ]
    assert cli.main(["reproduce", "c4w-residues", "mdptetris-total-lines-4x5", "--summary", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["documents"][AGREES] == 1 and printed["programs"][AGREES] == 1
    assert sum(printed["documents"].values()) + sum(printed["programs"].values()) == 2


def test_table_1_rows_that_cannot_test_the_fit_say_so(monkeypatch):
    """A constant value is random play, one feature's moves follow its sign: such
    fitted rows say so; the constant weight, which babytris's loss was chosen to
    match, is calibrated, not evidence."""
    from babytris.claims import published, table_1_fit

    rng = np.random.default_rng(0)
    lifespans = rng.normal(40, 20, (5, 100))
    monkeypatch.setitem(table_1_fit._fitted_agents, (), (np.full((5, 1), -13.7), lifespans))
    monkeypatch.setitem(
        table_1_fit._fitted_agents, ("covers",), (np.array([[12.0, -1.0]] * 4 + [[12.0, 0.5]]), lifespans)
    )
    monkeypatch.setitem(
        table_1_fit._fitted_agents, ("max_height", "holes"), (np.array([[8.0, -0.4, -0.7]] * 5), lifespans)
    )
    constant = published._table_1_fitted((), 25.8, (-13.8,))(False)
    assert "random play, whatever the fit" in constant.why
    covers = published._table_1_fitted(("covers",), 40.5, (12.6, -1.0))(False)
    assert "depend only on its weight's sign (not the same in all 5 agents)" in covers.why
    pair = published._table_1_fitted(("max_height", "holes"), 126.0, (8.2, -0.4, -0.7))(False)
    assert "sign" not in pair.why and "random play" not in pair.why
    weight = published._table_1_weights((), (-13.8,))(False)
    assert weight.verdict == CALIBRATED and "chosen to reproduce this weight: not evidence" in weight.why
    assert published._table_1_weights(("covers",), (12.6, -1.0))(False).verdict in (WITHIN_NOISE, DIFFERS)


def test_table_1_published_weights_play_one_tie_rule(fast):
    """Every published-weights row plays ties at random (the paper's constant agent
    is random play), the first placement's figure beside."""
    for name in TABLE_1:
        r = fast[f"bodoia-table1-{name}-published-weights"]
        assert "with ties at random, the rule the paper's own rows imply" in r.why
        assert "ties to the first placement it lives" in r.why
    assert "tests the tie rule, not a fitted weight" in fast["bodoia-table1-constant-published-weights"].why
    assert "tests the sign" in fast["bodoia-table1-num-covers-published-weights"].why
    assert fast["bodoia-table1-num-covers-published-weights"].verdict == DIFFERS  # (under the one rule)


def test_bodoias_qualitative_claims(fast):
    terminal = fast["bodoia-random-samples-terminal-vs-lines"]
    assert terminal.verdict == AGREES and float(terminal.measured.split()[0]) > 5
    ranking = fast["bodoia-ranking-published-weights"]
    assert (ranking.measured, ranking.verdict) == ("Max-Height best; MH-NH and MH-NC better than NH-NC", AGREES)
    assert ranking.measured == ranking.published  # (the measured column in the claim's words)
    assert fast["bodoia-preliminary-max-diff"].verdict == NOT_REPRODUCED


def test_a_ranking_read_the_other_way_fails():
    from babytris.claims.bodoia_features import _ranking_measured, _ranking_verdict

    errors = dict.fromkeys(("max-height", "num-holes", "num-covers", "mh-nh", "mh-nc", "nh-nc"), 0.1)
    paper = {"max-height": 56.8, "num-holes": 47.7, "num-covers": 40.5, "mh-nh": 126.0, "mh-nc": 72.1, "nh-nc": 42.0}
    assert _ranking_verdict(paper, errors)[0] == AGREES
    assert _ranking_verdict({**paper, "mh-nh": 38.3, "mh-nc": 30.8, "nh-nc": 50.4}, errors)[0] == FAILS
    mixed = _ranking_verdict({**paper, "mh-nc": 30.8, "nh-nc": 50.4}, errors)
    assert mixed[0] == DIFFERS and "do not both beat" in mixed[1]
    # a difference inside the noise decides nothing: pairs 0.3 above NH-NC, 3 errors of 0.1 each apart
    close = _ranking_verdict({**paper, "mh-nh": 42.3, "mh-nc": 42.3}, errors)
    assert close[0] == WITHIN_NOISE and "do not both beat" in close[1]
    assert _ranking_verdict({**paper, "mh-nh": 42.5, "mh-nc": 42.5}, errors)[0] == AGREES
    near = _ranking_verdict({**paper, "num-holes": 56.7}, errors)
    assert near[0] == WITHIN_NOISE and "max-height (not beyond the noise)" in near[1]
    # the measured column names both parts: the best single feature can hold while the pairs fail
    assert _ranking_measured({**paper, "mh-nh": 38.3, "mh-nc": 30.8, "nh-nc": 50.4}) == (
        "Max-Height best; MH-NH and MH-NC worse than NH-NC"
    )
    assert _ranking_measured({**paper, "num-holes": 60.0, "mh-nc": 30.8, "nh-nc": 50.4}) == (
        "Num-Holes best; MH-NH and MH-NC not both better than NH-NC"
    )


def test_counting_claims(fast):
    from babytris.claims.counts import _grids_without_a_full_row

    assert _grids_without_a_full_row(2, 3) == 3**3 and _grids_without_a_full_row(3, 2) == 7**2
    grids = fast["bodoia-count-grids-10x20"]
    assert grids.verdict == AGREES and grids.measured == f"2^200; {1023**20:.3e}"
    assert (fast["pirnay-table-4-tetris"].measured, fast["pirnay-table-4-tetris"].verdict) == (
        "200; 7; 10^60.2",
        AGREES,
    )
    estimate = fast["pirnay-training-estimate"]
    assert estimate.verdict == DIFFERS and estimate.measured.startswith("3.01 times") and "not 30" in estimate.why


def test_c4w_mirror_images_and_groups_share_v():
    import types

    from babytris.claims import c4w

    assert c4w._c4w_mirror(True).verdict == AGREES
    groups = c4w._c4w_groups(True)
    assert groups.verdict == AGREES and "29,400 states fall in 1,404 groups" in groups.why
    s = babytris.solve(c4w._c4w_rules(1), discount=0.9, tol=1e-12)
    assert c4w.mirror_gaps(s).max() < 1e-9
    # a value changed in one state shows in it and in its mirror image
    values = s.values.copy()
    t = s.transitions
    row = t.board_index(int(t.boards[5]), t.queue_of(5), None if t.slots[5] == 0 else int(t.slots[5]) - 1)
    values[row, 3] += 1.0  # (piece 3, the S: its image is a Z)
    gaps = c4w.mirror_gaps(types.SimpleNamespace(transitions=t, values=values))
    assert (gaps > 0.5).sum() == 2 and gaps[row, 3] > 0.5


def test_lookahead_games_count_placements_above_half_the_board():
    from babytris.big.fitted import LinearValue
    from babytris.big.lookahead import play_lookahead

    tetris = Tetris(width=4, height=8, line_scores=(0, 1, 2, 3, 4))
    tall = LinearValue(("max_height",), np.array([0.0, 1.0]), 4)  # (a value that likes tall stacks)
    flat = LinearValue(("max_height",), np.array([0.0, -1.0]), 4)
    high = play_lookahead(tetris, tall, loss=100.0, preview=0, n_games=3, max_placements=30, seed=1)
    low = play_lookahead(tetris, flat, loss=100.0, preview=0, n_games=3, max_placements=30, seed=1)
    assert (high.above_half > 0).all() and (high.above_half <= high.placements).all()
    assert high.above_half.sum() / high.placements.sum() > low.above_half.sum() / low.placements.sum()


def test_rarely_above_half_is_judged_only_on_games_like_the_papers():
    """'Rarely' gives no number: a lost game means the paper's agent (it never lost) is not
    reproduced, whatever the share; with none lost, only most placements above half fail it."""
    from babytris.big.lookahead import LookaheadGames
    from babytris.claims.bodoia import _above_half_verdict

    def games(placements, lost, above_half):
        return LookaheadGames(
            np.array(placements), np.zeros(len(placements), np.int64), np.array(lost), np.array(above_half), 0.0
        )

    some_lost = _above_half_verdict(games([3000, 800], [False, True], [30, 770]))
    assert (some_lost.value, some_lost.verdict) == ("21.1% of placements", NOT_REPRODUCED)
    assert "in the 1 games not lost, after 1.0% of their placements" in some_lost.why
    assert "1 of these 2 games were lost" in some_lost.why
    seldom = _above_half_verdict(games([3000, 3000], [False, False], [200, 100]))
    assert (seldom.value, seldom.verdict) == ("5.0% of placements", AGREES)
    often = _above_half_verdict(games([3000, 3000], [False, False], [1700, 1600]))
    assert (often.value, often.verdict) == ("55.0% of placements", FAILS)
