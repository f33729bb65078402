"""Games and solutions draw themselves in Jupyter as SVG; boards are drawn by
the drawing module (the board type knows no drawing).  Rendered here by a
real SVG renderer (resvg, as every raster of babytris is) and compared with
stored pictures and with the colours each cell must have."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import babytris
from babytris import Board, Rules
from babytris.draw.frames import rasterise
from babytris.engine.stepped import Game
from babytris.game import svg
from babytris.game.svg import CELL, CLEARED_RGB, EMPTY_RGB, FILLED_RGB, PIECE_RGB, board_picture, board_svg

pytest.importorskip("resvg_py", reason="the SVG tests render with resvg-py (the draw extra)")
Image = pytest.importorskip("PIL.Image")

DATA = Path(__file__).parent / "data"
LEDGE = Board.from_rows(["##..", "#..."], height=4)


def rendered(svg: str) -> np.ndarray:
    return rasterise(svg)


def centre(image: np.ndarray, col: int, row: int, height: int = 4) -> tuple[int, ...]:
    """The colour at the middle of cell (col, row), row 0 at the bottom."""
    return tuple(int(v) for v in image[(height - 1 - row) * CELL + CELL // 2, col * CELL + CELL // 2])


def pictures() -> dict[str, str]:
    soft = babytris.solve(Rules(width=4, height=4, moves="soft"))
    game = Game(Rules(width=4, height=4), seed=3)
    for _ in range(5):
        game.place(game.moves()[0].placement)
    return {
        "board": board_svg(LEDGE),
        "move": board_picture(LEDGE, soft.best_action(LEDGE, "L"), rules=soft.rules)._repr_svg_(),
        "game": game._repr_svg_(),
    }


@pytest.mark.parametrize("name", ["board", "move", "game"])
def test_pictures_match_the_stored_ones(name):
    image = rendered(pictures()[name])
    stored = np.asarray(Image.open(DATA / f"svg_{name}.png").convert("RGB"))
    assert image.shape == stored.shape
    assert np.abs(image.astype(int) - stored.astype(int)).mean() < 1.0  # the same picture, up to antialiasing


def test_each_cell_has_its_colour():
    board = rendered(pictures()["board"])
    assert centre(board, 0, 0) == FILLED_RGB and centre(board, 1, 1) == FILLED_RGB
    assert centre(board, 1, 0) == EMPTY_RGB and centre(board, 3, 3) == EMPTY_RGB
    move = rendered(pictures()["move"])  # the tuck under the overhang: (1, 0), (2, 0), (2, 1)
    assert [centre(move, c, r) for c, r in ((1, 0), (2, 0), (2, 1))] == [PIECE_RGB] * 3
    game = rendered(pictures()["game"])
    assert game.shape[1] > 4 * CELL  # a panel beside the board
    panel = game[:, 4 * CELL :]
    assert (panel == PIECE_RGB).all(axis=2).any() and (panel.min(axis=2) >= 120).any()  # the piece, the score


def test_numbers_are_text_and_boards_have_none():
    game = Game(Rules(width=4, height=4), seed=3)
    game.place(game.moves()[0].placement)
    svg = game._repr_svg_()
    assert svg.count("<text") == 1 and f">{game.score:g}</text>" in svg and "font-family=" in svg
    assert "<text" not in board_svg(LEDGE)


def test_a_move_strikes_through_the_rows_it_clears():
    board = Board.from_rows(["#.##", "#.##"], height=4)
    upright = babytris.Placement("I", 1, 1, 3)  # rotation 1, column 1: fills both rows
    image = rendered(board_picture(board, upright)._repr_svg_())
    for row in (0, 1):
        assert centre(image, 0, row) == CLEARED_RGB  # the bar through the row's middle
        assert tuple(int(v) for v in image[(3 - row) * CELL + 3, CELL + CELL // 2]) == PIECE_RGB
    assert centre(image, 1, 2) == PIECE_RGB and centre(image, 1, 3) == EMPTY_RGB
    image = rendered(board_svg(board, colors={"filled": "#ff0000"}))
    assert centre(image, 0, 0) == (255, 0, 0)
    with pytest.raises(ValueError, match="colors: unknown keys"):
        board_svg(board, colors={"wall": "#000000"})


def test_a_solution_shows_its_summary_and_start_board():
    html = babytris.solve(width=4, height=4)._repr_html_()
    assert html.startswith("<div>") and "start_value=9.118607" in html and "<svg" in html
    assert "&lt;Solution" in html  # escaped


def test_the_picture_object():
    picture = board_picture(LEDGE)
    assert str(picture) == picture._repr_svg_() == board_svg(LEDGE)
    assert "SVG" in repr(picture)


class _Formatter:
    def __init__(self) -> None:
        self.printers: dict[type, object] = {}

    def for_type(self, typ: type, func: object) -> None:
        self.printers[typ] = func


class _Shell:
    """The part of an IPython shell that display_boards_in uses (IPython's
    ``display_formatter.formatters[mime].for_type``)."""

    def __init__(self) -> None:
        self.display_formatter = type("DisplayFormatter", (), {})()
        self.display_formatter.formatters = {"image/svg+xml": _Formatter(), "text/plain": _Formatter()}


def test_jupyter_draws_a_board_that_knows_no_drawing():
    assert not hasattr(Board, "_repr_svg_") and not hasattr(Board, "show")
    shell = _Shell()
    svg.display_boards_in(shell)
    printers = shell.display_formatter.formatters["image/svg+xml"].printers
    assert list(printers) == [Board] and printers[Board](LEDGE) == board_svg(LEDGE)
    assert shell.display_formatter.formatters["text/plain"].printers == {}
    assert svg._running_ipython() is None  # (no IPython here: nothing was registered at import)
