"""Pictures: boards as text and figures, the policy's move on a board, convergence plots."""

from __future__ import annotations

import dataclasses
import importlib
import sys
import xml.etree.ElementTree as ET

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

import babytris  # noqa: E402
from babytris import Board, Placement, Rules  # noqa: E402
from babytris.draw.pictures import board_text, draw_board, draw_move, landing_cells, plot_convergence, save  # noqa: E402
from babytris.engine.placements import engine, placement_table  # noqa: E402
from babytris.game.svg import CLEARED_RGB, COLORS  # noqa: E402

RULES = Rules(width=4, height=4)
BOARD = Board.from_rows(["....", "....", "#...", "##.#"])  # reachable: two L's, rows of 3 and 1


def cells_of(bits: int, width: int = 4) -> frozenset:
    return frozenset((i % width, i // width) for i in range(bits.bit_length()) if bits >> i & 1)


def drawn(ax, kind: str) -> frozenset:
    """The (col, row) cells of the picture in ``kind``'s colour (of babytris.game.svg.COLORS),
    each read a quarter of a cell below its top (clear of the bar through a cleared row)."""
    image = np.asarray(ax.images[0].get_array())
    left, right, bottom, top = ax.images[0].get_extent()
    width, height = int(right - left), int(top - bottom)
    s = image.shape[0] // height
    assert image.shape == (height * s, width * s, 3) and s == 40
    colour = tuple(int(matplotlib.colors.to_hex(COLORS[kind])[i : i + 2], 16) for i in (1, 3, 5))
    return frozenset(
        (c, r)
        for r in range(height)
        for c in range(width)
        if tuple(int(v) for v in image[(height - 1 - r) * s + s // 4, c * s + s // 2]) == colour
    )


def struck(ax) -> int:
    """How many rows the bar of a cleared row strikes through (read at each row's middle, column 0)."""
    image = np.asarray(ax.images[0].get_array())
    s = 40
    return sum(tuple(int(v) for v in image[r * s + s // 2, s // 2]) == CLEARED_RGB for r in range(image.shape[0] // s))


def cleared(cells: frozenset, height: int = 4, width: int = 4) -> int:
    """The bits of ``cells`` once their full rows are removed and the rows above fall."""
    kept = [r for r in range(height) if not all((c, r) in cells for c in range(width))]
    return sum(1 << (kept.index(r) * width + c) for c, r in cells if r in kept)


def placement_of(rules: Rules, piece: int, k: int) -> Placement:
    return placement_table(rules).placements[piece][k]


# --------------------------------------------------------------------------
# Landing cells: the engine's drop
# --------------------------------------------------------------------------


def test_landing_equals_the_engine_on_reachable_boards(transitions_4x4):
    """Every move of a spread of reachable boards: the landed cells are the engine's
    board after less the board where nothing clears, and give the engine's board
    after once the rows they fill are cleared; the placements the engine refuses
    are refused."""
    eng = engine(RULES)
    checked = 0
    for bits in transitions_4x4.boards[:: len(transitions_4x4.boards) // 150]:
        board = Board(int(bits), 4, 4)
        for p in range(RULES.n_pieces):
            legal = {k: (after, lines) for k, after, lines in eng.successors(int(bits), p)}
            for k, placement in enumerate(placement_table(RULES).placements[p]):
                if k not in legal:
                    with pytest.raises(ValueError, match="does not fit"):
                        landing_cells(board, placement, rules=RULES)
                    continue
                cells = landing_cells(board, placement, rules=RULES)
                after, lines = legal[k]
                assert len(cells) == 3 and not cells & cells_of(board.bits)
                if lines == 0:
                    assert cells == cells_of(after ^ board.bits)
                full = [r for r in range(4) if all((c, r) in cells or board.filled(c, r) for c in range(4))]
                assert len(full) == lines
                assert cleared(cells | cells_of(board.bits)) == after
                checked += 1
    assert checked > 400


def test_landing_stops_on_an_overhang():
    board = Board.from_rows(["....", "#...", "....", "...."])  # column 0 covered at row 2
    upright_i = placement_of(RULES, 0, 2)  # rotation 1, column 0
    assert (upright_i.rotation, upright_i.column) == (1, 0)
    with pytest.raises(ValueError, match="above the top row"):
        landing_cells(board, upright_i)
    flat_i = placement_of(RULES, 0, 0)
    assert landing_cells(board, flat_i) == {(0, 3), (1, 3), (2, 3)}


def test_board_text():
    assert board_text(BOARD) == str(BOARD)
    flat_i = placement_of(RULES, 0, 1)  # I flat at column 1: lands on row 1, over the "##.#" row
    assert board_text(BOARD, flat_i) == "....\n....\n#@@@\n##.#"
    assert board_text(BOARD.bits, flat_i, rules=RULES) == board_text(BOARD, flat_i)


# --------------------------------------------------------------------------
# Drawing a board and a move
# --------------------------------------------------------------------------


@pytest.mark.parametrize("bits", [0, BOARD.bits, 0b0111_1011_0111_0110])
def test_draw_board_draws_each_cell(bits):
    board = Board(bits, 4, 4)
    ax = draw_board(board, title="a board")
    assert drawn(ax, "filled") == cells_of(bits) and len(drawn(ax, "filled")) == board.count()
    assert len(drawn(ax, "empty")) == 16 - board.count()
    assert not drawn(ax, "piece")
    assert ax.get_title() == "a board"


def test_draw_board_highlights_the_engine_landing():
    """For a placement that clears no row the highlighted cells are the engine's board after less the board."""
    eng = engine(RULES)
    for p in range(RULES.n_pieces):
        for k, after, lines in eng.successors(BOARD.bits, p):
            ax = draw_board(BOARD, placement=placement_of(RULES, p, k), rules=RULES)
            piece = drawn(ax, "piece")
            assert drawn(ax, "filled") == cells_of(BOARD.bits)
            assert len(drawn(ax, "empty")) == 16 - BOARD.count() - 3
            assert struck(ax) == lines
            if lines == 0:
                assert piece == cells_of(after ^ BOARD.bits)


def test_any_board_size_without_rules():
    assert board_text(Board(1, 2, 1)) == "#."
    assert len(drawn(draw_board(Board(1, 1, 1)), "filled")) == 1  # no tromino fits, none needed
    tall = Board.from_rows(["..", "..", "..", "#."])
    assert landing_cells(tall, Placement("I", 1, 1, 1)) == {(1, 0), (1, 1), (1, 2)}  # rules: 2x4, the I alone


def test_draw_board_into_a_given_axes_and_colours():
    fig = Figure()
    left, right = fig.subplots(1, 2)
    assert draw_board(BOARD, ax=right, colors={"filled": "black"}) is right
    assert not left.images and len(right.images) == 1
    image = np.asarray(right.images[0].get_array())
    assert tuple(int(v) for v in image[3 * 40 + 20, 20]) == (0, 0, 0)  # cell (0, 0), filled: black


def test_draw_board_is_the_svg_rendered():
    """The figure's picture is the board's SVG, the one drawing of Jupyter and the frames."""
    from babytris.draw.frames import rasterise
    from babytris.game.svg import board_svg

    move = placement_of(RULES, 0, 1)
    ax = draw_board(BOARD, placement=move, rules=RULES)
    expected = rasterise(board_svg(BOARD, landing=landing_cells(BOARD, move, rules=RULES), cell=40))
    assert np.array_equal(np.asarray(ax.images[0].get_array()), expected)
    assert tuple(ax.images[0].get_extent()) == (0, 4, 0, 4)


def test_draw_move_highlights_the_best_action(solution_4x4):
    for piece in ("I", "L"):
        move = solution_4x4.best_action(BOARD, piece)
        ax = draw_move(solution_4x4, BOARD, piece)
        assert drawn(ax, "piece") == landing_cells(BOARD, move, rules=RULES)
        assert drawn(ax, "filled") == cells_of(BOARD.bits)
        title = ax.get_title()
        assert f"rotation {move.rotation}, column {move.column}" in title
        assert f"value {solution_4x4.value(BOARD, piece):.4g}" in title
        assert max(solution_4x4.action_values(BOARD, piece).values()) == pytest.approx(
            solution_4x4.value(BOARD, piece), abs=1e-8
        )


def test_draw_move_at_game_over(solution_4x4):
    rows, pieces = np.nonzero(solution_4x4.policy < 0)
    board = Board(int(solution_4x4.boards[rows[0]]), 4, 4)
    ax = draw_move(solution_4x4, board, int(pieces[0]))
    assert "game over" in ax.get_title()
    assert not drawn(ax, "piece") and len(drawn(ax, "filled")) == board.count()


def test_draw_move_with_a_preview():
    solution = babytris.solve(width=4, height=4, preview=1)
    for seen in ("I", "L"):
        move = solution.best_action(BOARD, "L", (seen,))
        ax = draw_move(solution, BOARD, "L", preview=(seen,))
        assert drawn(ax, "piece") == landing_cells(BOARD, move)
        assert ax.get_title().endswith(f"next {seen}, value {solution.value(BOARD, 'L', (seen,)):.4g}")


# --------------------------------------------------------------------------
# Convergence plots
# --------------------------------------------------------------------------


def test_plot_convergence_one_line_per_run(transitions_4x4):
    runs = [
        babytris.solve_transitions(transitions_4x4, method=m, accelerate=a)
        for m, a in (("vi", True), ("vi", False), ("mpi", True))
    ]
    extra = np.array([1.0, 0.1, 0.0])
    ax = plot_convergence(*runs, extra, labels=["vi", "vi plain", "mpi", "given"])
    assert ax.get_yscale() == "log"
    for line, run in zip(ax.lines, runs + [None]):
        ys = extra if run is None else run.residuals
        np.testing.assert_array_equal(line.get_ydata(), ys)
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, len(ys) + 1))
    assert [line.get_label() for line in ax.lines[:4]] == ["vi", "vi plain", "mpi", "given"]
    (tol_line,) = ax.lines[4:]  # one tolerance shared by the three solutions
    assert set(tol_line.get_ydata()) == {runs[0].tol}
    assert len(runs[1].residuals) > len(runs[0].residuals)  # acceleration saves sweeps


def test_plot_convergence_default_labels(solution_4x4):
    ax = plot_convergence(solution_4x4, [0.5, 0.25], tol=1e-3)
    labels = [line.get_label() for line in ax.lines]
    assert labels == [f"{solution_4x4.method} + Aitken, {solution_4x4.iterations} sweeps", "run 2", "tol = 0.001"]


# --------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------


def test_png_and_svg_files(tmp_path, solution_4x4):
    ax = draw_move(solution_4x4, BOARD, "L")
    png = save(ax, tmp_path / "board.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = save(ax.figure, tmp_path / "board.svg")
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg") and b"<svg" in svg.read_bytes()
    # Same bytes again: no date or version stamped in, stable SVG ids.
    assert save(ax, tmp_path / "again.png").read_bytes() == png.read_bytes()
    assert save(ax, tmp_path / "again.svg").read_bytes() == svg.read_bytes()
    conv = save(plot_convergence([1.0, 1e-3, 1e-9]), tmp_path / "conv.png")
    assert conv.read_bytes()[:4] == b"\x89PNG"


# --------------------------------------------------------------------------
# Without matplotlib, and bad inputs
# --------------------------------------------------------------------------


def test_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.delitem(sys.modules, "babytris.draw.pictures")
    pictures = importlib.import_module("babytris.draw.pictures")  # importing needs no matplotlib
    assert pictures.board_text(BOARD) == str(BOARD)
    for draw in (lambda: pictures.draw_board(BOARD), lambda: pictures.plot_convergence([1.0])):
        with pytest.raises(ImportError, match=r"pip install 'babytris\[plot\]'"):
            draw()


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: draw_board(Board(0, 4, 5), rules=RULES), "board is 4x5, the rules are 4x4"),
        (lambda: draw_board(3), "rules for its size"),
        (lambda: draw_board("####"), "board must be"),
        (lambda: draw_board(BOARD, rules="4x4"), "rules must be"),
        (lambda: draw_board(BOARD, placement=(0, 1)), "placement must be"),
        (lambda: draw_board(BOARD, placement=Placement("O", 0, 0, 0), rules=RULES), "not in these rules"),
        (lambda: draw_board(BOARD, placement=Placement("I", 0, 1, 0), rules=RULES), "is not a move"),
        (lambda: draw_board(BOARD, placement=Placement("I", 0, 0, 7), rules=RULES), "is not a move"),
        (lambda: draw_board(BOARD, colors={"piece": "red", "wall": "blue"}), "colors: unknown keys"),
        (lambda: plot_convergence(), "at least 1"),
        (lambda: plot_convergence(np.array([])), "run 1 must hold a 1-D array"),
        (lambda: plot_convergence([1.0], [[1.0, 0.5]]), "run 2 must hold a 1-D array"),
        (lambda: plot_convergence([1.0, -0.5]), "finite and >= 0"),
        (lambda: plot_convergence([1.0, np.nan]), "finite and >= 0"),
        (lambda: plot_convergence(["a"]), "run 1 must be"),
        (lambda: plot_convergence([1.0], labels=["a", "b"]), "labels must be 1 strings"),
        (lambda: plot_convergence([1.0], tol=0), "tol must be"),
        (lambda: save(Figure(), "board.pdf"), "must end in .png or .svg"),
        (lambda: save(Figure(), "board.png", dpi=0), "dpi must be"),
    ],
)
def test_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_draw_move_checks_the_board(solution_4x4):
    with pytest.raises(ValueError, match="board is 4x5"):
        draw_move(solution_4x4, Board(0, 4, 5), "I")
    with pytest.raises(ValueError, match="piece"):
        draw_move(solution_4x4, BOARD, "O")


def test_plot_convergence_can_count_every_sweep(transitions_4x4):
    mpi = babytris.solve_transitions(transitions_4x4, method="mpi")
    vi = babytris.solve_transitions(transitions_4x4, method="vi")
    ax = plot_convergence(mpi, vi, every_sweep=True)
    x = ax.lines[0].get_xdata()
    evaluations = mpi.evaluation_sweeps
    assert x[0] == 1 and x[-1] == mpi.iterations + evaluations.sum()
    assert np.all(np.diff(x) == 1 + evaluations[:-1])  # each greedy sweep after its evaluations
    assert ax.lines[1].get_xdata().tolist() == list(range(1, vi.iterations + 1))
    assert ax.get_xlabel() == "sweep (greedy and evaluation)"
    with pytest.raises(ValueError, match="every_sweep: run 1 is an array of residuals"):
        plot_convergence([0.5, 0.25], every_sweep=True)
    with pytest.raises(ValueError, match="every_sweep must be True or False"):
        plot_convergence(mpi, every_sweep="yes")
    older = dataclasses.replace(mpi, evaluation_sweeps=None)
    with pytest.raises(ValueError, match="does not record its evaluation sweeps"):
        plot_convergence(older, every_sweep=True)
