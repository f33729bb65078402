"""The one geometry and palette of babytris's pictures (the colours, a 3x5
digit font, the score's text), and boards, games and solutions drawing
themselves in Jupyter: SVG written by hand (no matplotlib), as python-chess
draws its boards.  It sits here, below the data classes, so that their
display hooks read it; babytris.draw's rasters and plots take their colours
from it.  Numbers are drawn in a 3x5 block font (rectangles, no text), so a
picture renders the same everywhere.

>>> import babytris
>>> svg = babytris.Board.from_rows(["#..."], height=4)._repr_svg_()
>>> svg.startswith("<svg") and svg.count("<rect") > 16
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .board import Board

__all__ = ["board_svg", "score_text", "Picture", "EMPTY_RGB", "FILLED_RGB", "PIECE_RGB", "GRID_RGB", "TEXT_RGB"]

# Colours: empty cell, filled cell, the piece to place, grid lines, the score.
EMPTY_RGB = (24, 24, 32)
FILLED_RGB = (70, 140, 230)
PIECE_RGB = (240, 160, 40)
GRID_RGB = (60, 60, 72)
TEXT_RGB = (230, 230, 230)

# A 3x5 pixel font for the score: each glyph five rows of three bits, top row first.
_FONT = {
    "0": ("111", "101", "101", "101", "111"),
    "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"),
    "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"),
    "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"),
    "7": ("111", "001", "010", "010", "010"),
    "8": ("111", "101", "111", "101", "111"),
    "9": ("111", "101", "111", "001", "111"),
    ".": ("000", "000", "000", "000", "010"),
    "-": ("000", "000", "111", "000", "000"),
}


def score_text(score: float) -> str:
    """A score as every picture writes it: an integer without decimals, else one decimal."""
    value = float(score)
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


#: The default side of a cell, in SVG pixels.
CELL = 20


class Picture:
    """An SVG picture that Jupyter displays (``_repr_svg_``); ``str()`` is the SVG text."""

    def __init__(self, svg: str) -> None:
        self.svg = svg

    def _repr_svg_(self) -> str:
        return self.svg

    def __str__(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return f"<Picture: SVG, {len(self.svg):,} characters>"


def board_svg(
    board: Board,
    *,
    landing: Iterable[tuple[int, int]] = (),
    piece: Iterable[tuple[int, int]] | None = None,
    score: float | None = None,
    cell: int = CELL,
) -> str:
    """SVG of ``board``: filled cells, the ``landing`` cells (col, row) of a
    move in the piece colour, and beside the board, if given, the ``piece``
    to place (its cells) and the ``score``.  Returns the SVG text."""
    w, h, s = board.width, board.height, int(cell)
    landed = set(landing)
    shapes: list[str] = []
    for row in range(h):
        for col in range(w):
            colour = PIECE_RGB if (col, row) in landed else FILLED_RGB if board.filled(col, row) else EMPTY_RGB
            shapes.append(_rect(col * s, (h - 1 - row) * s, s, s, colour, stroke=True))
    width, height = w * s, h * s
    if piece is not None or score is not None:
        m = max(1, s // 4)
        x0, y = width + m, m
        cells = list(piece or ())
        if cells:
            top = max(y_ for _, y_ in cells)
            for x_, y_ in cells:
                shapes.append(_rect(x0 + x_ * s, y + (top - y_) * s, s, s, PIECE_RGB, stroke=True))
            y += (top + 1) * s + m
            width = max(width, x0 + (1 + max(x_ for x_, _ in cells)) * s + m)
        if score is not None:
            px = max(1, s // 4)
            shapes += _digits(score_text(score), x0, y, px)
            width = max(width, x0 + 4 * px * len(score_text(score)) + m)
            y += 5 * px + m
        height = max(height, y)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="{_hex(EMPTY_RGB)}"/>' + "".join(shapes) + "</svg>"
    )


def _rect(x: int, y: int, w: int, h: int, colour: tuple[int, int, int], stroke: bool = False) -> str:
    line = f' stroke="{_hex(GRID_RGB)}" stroke-width="1"' if stroke else ""
    return f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{_hex(colour)}"{line}/>'


def _digits(text: str, x: int, y: int, px: int) -> list[str]:
    out = []
    for i, ch in enumerate(text):
        for r, bits in enumerate(_FONT[ch]):
            for c, bit in enumerate(bits):
                if bit == "1":
                    out.append(_rect(x + (4 * i + c) * px, y + r * px, px, px, TEXT_RGB))
    return out


def _hex(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)
