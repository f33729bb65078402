"""Boards, games and solutions draw themselves in Jupyter as SVG: rendered
here by a real SVG renderer (resvg) and compared with stored pictures and
with the colours each cell must have."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import babytris
from babytris import Board, Rules
from babytris.engine.stepped import Game
from babytris.game.svg import CELL, EMPTY_RGB, FILLED_RGB, PIECE_RGB, TEXT_RGB

resvg = pytest.importorskip("resvg_py", reason="the SVG tests render with resvg-py (a test extra)")
Image = pytest.importorskip("PIL.Image")

DATA = Path(__file__).parent / "data"
LEDGE = Board.from_rows(["##..", "#..."], height=4)


def rendered(svg: str) -> np.ndarray:
    png = resvg.svg_to_bytes(svg_string=svg)
    return np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGB"))


def centre(image: np.ndarray, col: int, row: int, height: int = 4) -> tuple[int, ...]:
    """The colour at the middle of cell (col, row), row 0 at the bottom."""
    return tuple(int(v) for v in image[(height - 1 - row) * CELL + CELL // 2, col * CELL + CELL // 2])


def pictures() -> dict[str, str]:
    soft = babytris.solve(Rules(width=4, height=4, moves="soft"))
    game = Game(Rules(width=4, height=4), seed=3)
    for _ in range(5):
        game.place(game.moves()[0].placement)
    return {
        "board": LEDGE._repr_svg_(),
        "move": LEDGE.show(soft.best_action(LEDGE, "L"), rules=soft.rules)._repr_svg_(),
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
    assert (panel == PIECE_RGB).all(axis=2).any() and (panel == TEXT_RGB).all(axis=2).any()


def test_a_solution_shows_its_summary_and_start_board():
    html = babytris.solve(width=4, height=4)._repr_html_()
    assert html.startswith("<div>") and "start_value=9.118607" in html and "<svg" in html
    assert "&lt;Solution" in html  # escaped


def test_the_picture_object():
    picture = LEDGE.show()
    assert str(picture) == picture._repr_svg_() == LEDGE._repr_svg_()
    assert "SVG" in repr(picture)
