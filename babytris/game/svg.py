"""The one drawing of babytris: its palette, its geometry (the cell, the
panel beside the board, the row of candidate moves under it) and its
pictures as SVG, with numbers as real ``<text>`` in one font family.
Jupyter shows the SVG (a Game and a Solution draw themselves from here, as
python-chess draws its boards; a Board, which knows no drawing, is drawn by
:func:`board_picture` and registered here with Jupyter's SVG display);
``babytris.draw`` makes every raster (the environment's frames, film strips,
GIFs, pages, matplotlib's board figures) by rendering this SVG, so there is
one picture of a state.  It reads the game's data (boards, rules, where a
piece lands) and sits just above it, below the engine's and the results'
classes, so that their display hooks read it.

>>> import babytris
>>> svg = board_svg(babytris.Board.from_rows(["#..."], height=4))
>>> svg.startswith("<svg") and svg.count("<rect") > 16
True
>>> game = babytris.Game(babytris.Rules(width=4, height=4), seed=0)
>>> ">0</text>" in frame_svg(game.rules, game.board, game.piece, game.score)  # the score, as text
True
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING

from .board import Board
from .drop import landing
from .pieces import Placement
from .validation import check_int

if TYPE_CHECKING:
    from .rules import Rules

__all__ = [
    "board_picture",
    "board_svg",
    "frame_svg",
    "score_text",
    "Picture",
    "COLORS",
    "CELL",
    "FONT_FAMILY",
    "BACKGROUND_RGB",
    "EMPTY_RGB",
    "FILLED_RGB",
    "PIECE_RGB",
    "GRID_RGB",
    "TEXT_RGB",
    "CLEARED_RGB",
]

# The palette: outside the board, an empty cell, a filled one, the piece (to
# place, or landed), the grid lines, the numbers, the bar through cleared rows.
BACKGROUND_RGB = (0, 0, 0)
EMPTY_RGB = (24, 24, 32)
FILLED_RGB = (70, 140, 230)
PIECE_RGB = (240, 160, 40)
GRID_RGB = (60, 60, 72)
TEXT_RGB = (230, 230, 230)
CLEARED_RGB = (220, 60, 50)


def _hex(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


#: The palette by name, as SVG colours; ``colors=`` overrides any of them.
COLORS: Mapping[str, str] = {
    "background": _hex(BACKGROUND_RGB),
    "empty": _hex(EMPTY_RGB),
    "filled": _hex(FILLED_RGB),
    "piece": _hex(PIECE_RGB),
    "grid": _hex(GRID_RGB),
    "text": _hex(TEXT_RGB),
    "cleared": _hex(CLEARED_RGB),
}

#: The numbers' font: DejaVu Sans where it is (the rasters load it by name),
#: else the viewer's sans-serif.
FONT_FAMILY = "DejaVu Sans, Verdana, sans-serif"

#: The default side of a cell, in SVG pixels.
CELL = 20

# Geometry, in fractions of a cell: the margins around the panel, the width of
# a digit (DejaVu Sans: 0.636 em; every character is given one), the height of
# the digits above the baseline (0.73 em), the bar through a cleared row.
MARGIN = 0.25
CHAR_EM = 0.64
DIGIT_EM = 0.75
CLEARED_BAR = 0.14


def score_text(score: float) -> str:
    """A score as every picture writes it: an integer without decimals, else one decimal."""
    value = float(score)
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


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
    cell: int = CELL,
    colors: Mapping[str, str] | None = None,
) -> str:
    """SVG of ``board`` (``cell`` pixels a cell, row 0 at the bottom): its
    filled cells, and the ``landing`` cells (col, row) of a move in the piece
    colour with a bar through each row they fill (the rows it clears).
    ``colors`` overrides :data:`COLORS` by name.  Returns the SVG text."""
    drawing = _Drawing(_palette(colors))
    s = check_int("cell", cell, 2, 1024)
    width, height = drawing.board(0, 0, int(board.bits), board.width, board.height, s, frozenset(landing))
    return drawing.svg(width, height)


def board_picture(board: Board, placement: Placement | None = None, *, rules: Rules | None = None) -> Picture:
    """A :class:`Picture` of ``board``, with ``placement``'s landing cells in
    the piece colour if given (numbered by ``rules``; see
    :func:`babytris.game.drop.landing`) and the rows it fills struck
    through; Jupyter displays it (it was ``Board.show``: CHANGELOG.md).  Returns the Picture."""
    landed = frozenset() if placement is None else landing(board, placement, rules)
    return Picture(board_svg(board, landing=landed))


def frame_svg(
    rules: Rules,
    board: int,
    piece: int | None,
    score: float,
    *,
    cell: int = 16,
    candidates: Sequence[tuple[int, float, bool]] | None = None,
) -> str:
    """SVG of one state of a game under ``rules``: the board (``cell`` pixels
    a cell) at the top left; on its right a panel as wide as every piece of
    the rules needs, with ``piece`` (an index; None once the game is over)
    and the score under it; and, with ``candidates`` (``(board after, value,
    chosen)`` for each move of the piece), a row of small boards under them,
    each move's board after with its value, the chosen one framed in the
    piece colour (wrapped to the width above).  The panel keeps room for a
    score of four characters, so that the frames of a game share a size.
    Returns the SVG text."""
    drawing = _Drawing(COLORS)
    w, h, s = rules.width, rules.height, check_int("cell", cell, 2, 1024)
    width, height = drawing.board(0, 0, int(board), w, h, s, frozenset())
    cells = () if piece is None else rules.pieces[piece].cells
    pw, ph = drawing.panel(width, cells, score, s, _extent([p.cells for p in rules.pieces]), ("0000",))
    width, height = width + pw, max(height, ph)
    if candidates:
        cw, ch = drawing.candidates(height, width, rules, candidates, s)
        width, height = max(width, cw), height + ch
    return drawing.svg(width, height)


# --------------------------------------------------------------------------


def _palette(colors: Mapping[str, str] | None) -> dict[str, str]:
    palette = dict(COLORS)
    if colors is not None:
        unknown = set(colors) - set(COLORS)
        if unknown:
            raise ValueError(f"colors: unknown keys {sorted(unknown)}; known are {', '.join(COLORS)}")
        palette.update({name: escape(str(colour)) for name, colour in colors.items()})
    return palette


def _extent(shapes: Sequence[Sequence[tuple[int, int]]]) -> tuple[int, int]:
    """Columns and rows that hold each of ``shapes`` (0, 0 for none)."""
    if not shapes:
        return 0, 0
    return max(1 + max(x for x, _ in s) for s in shapes), max(1 + max(y for _, y in s) for s in shapes)


def _text_size(cell: int) -> int:
    """Font size of the score beside a board of ``cell`` pixels a cell."""
    return max(4, int(cell))


def _text_box(text: str, size: int) -> tuple[int, int]:
    """Room ``text`` takes at font ``size``: ``(width, height)`` in pixels (digits, '.', '-')."""
    return math.ceil(CHAR_EM * size * len(text)), math.ceil(DIGIT_EM * size)


def _panel_size(wide: int, tall: int, s: int, texts: Sequence[str]) -> tuple[int, int]:
    """The panel beside a board: room for a piece ``wide`` x ``tall`` cells and the widest of ``texts``."""
    m = max(1, round(MARGIN * s))
    text_w, text_h = max(_text_box(t, _text_size(s)) for t in texts)
    return max(wide * s, text_w) + 2 * m, m + tall * s + (m if tall else 0) + text_h + m


class _Drawing:
    """SVG elements in the palette, placed on whole pixels (so a rasteriser
    gives each cell's centre its exact colour)."""

    def __init__(self, palette: Mapping[str, str]) -> None:
        self.palette = palette
        self.parts: list[str] = []

    def rect(self, x: int, y: int, w: int, h: int, colour: str) -> None:
        self.parts.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{self.palette[colour]}"/>')

    def text(self, x: int, y: int, size: int, text: str) -> None:
        """``text`` with the top of its digits at ``y``."""
        baseline = y + math.ceil(DIGIT_EM * size)
        self.parts.append(
            f'<text x="{x}" y="{baseline}" font-size="{size}" fill="{self.palette["text"]}">{escape(text)}</text>'
        )

    def cell(self, x: int, y: int, s: int, colour: str) -> None:
        """A cell with its grid lines on its top and left edges."""
        self.rect(x, y, s, s, "grid")
        self.rect(x + 1, y + 1, s - 1, s - 1, colour)

    def board(
        self, x: int, y: int, bits: int, w: int, h: int, s: int, landed: frozenset[tuple[int, int]]
    ) -> tuple[int, int]:
        """The board at ``(x, y)``, the landed cells in the piece colour and a
        bar through each row they fill; returns its ``(width, height)``."""
        for row in range(h):
            top = y + (h - 1 - row) * s
            for col in range(w):
                filled = bits >> (row * w + col) & 1
                self.cell(x + col * s, top, s, "piece" if (col, row) in landed else "filled" if filled else "empty")
            if landed and all((c, row) in landed or bits >> (row * w + c) & 1 for c in range(w)):
                bar = max(1, round(CLEARED_BAR * s))
                self.rect(x, top + (s - bar) // 2, w * s, bar, "cleared")
        return w * s, h * s

    def panel(
        self,
        x: int,
        cells: Sequence[tuple[int, int]],
        score: float | None,
        s: int,
        extent: tuple[int, int],
        more_texts: Sequence[str] = (),
    ) -> tuple[int, int]:
        """The panel right of ``x``: the piece's ``cells`` at the top, in a
        space of ``extent`` (columns, rows), and the score under it; returns
        its ``(width, height)``, room for the score or any of ``more_texts``."""
        m = max(1, round(MARGIN * s))
        wide, tall = extent
        if cells:
            top = max(y_ for _, y_ in cells)
            for cx, cy in cells:
                self.cell(x + m + cx * s, m + (top - cy) * s, s, "piece")
        texts = [*more_texts]
        if score is not None:
            text = score_text(score)
            texts.append(text)
            self.text(x + m, m + tall * s + (m if tall else 0), _text_size(s), text)
        return _panel_size(wide, tall, s, texts or [""])

    def candidates(
        self, y: int, width: int, rules: Rules, candidates: Sequence[tuple[int, float, bool]], s: int
    ) -> tuple[int, int]:
        """Each move's board after and its value, small, in rows under ``y``
        that fit ``width``; returns their ``(width, height)`` (with the gap above)."""
        w, h = rules.width, rules.height
        t = max(2, s // 3)  # a small cell
        gap, border, size = max(1, t // 2), 2, 2 * t + 2
        texts = [f"{float(value):.1f}" for _, value, _ in candidates]
        text_w, text_h = max(_text_box(text, size) for text in texts)
        tile_w = max(w * t, text_w + 1) + 2 * border
        tile_h = h * t + gap + text_h + gap + 1 + 2 * border
        per_row = max(1, (width + gap) // (tile_w + gap))
        for i, ((after, _, chosen), text) in enumerate(zip(candidates, texts)):
            r, c = divmod(i, per_row)
            tx, ty = c * (tile_w + gap), y + gap + r * (tile_h + gap)
            if chosen:
                self.rect(tx, ty, tile_w, tile_h, "piece")
                self.rect(tx + border, ty + border, tile_w - 2 * border, tile_h - 2 * border, "background")
            self.board(tx + border, ty + border, int(after), w, h, t, frozenset())
            self.text(tx + border + 1, ty + border + h * t + gap, size, text)
        n_rows = -(-len(candidates) // per_row)
        used = min(per_row, len(candidates))
        return used * tile_w + (used - 1) * gap, gap + n_rows * (tile_h + gap) - gap

    def svg(self, width: int, height: int) -> str:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="{FONT_FAMILY}">'
            f'<rect x="0" y="0" width="{width}" height="{height}" fill="{self.palette["background"]}"/>'
            + "".join(self.parts)
            + "</svg>"
        )


def display_boards_in(shell: object) -> None:
    """Tell an IPython ``shell`` to display every Board as its SVG (IPython's
    own registry, ``formatters["image/svg+xml"].for_type``): the board type
    has no display hook of its own, so that the game's data imports no drawing."""
    shell.display_formatter.formatters["image/svg+xml"].for_type(Board, board_svg)  # type: ignore[attr-defined]


def _running_ipython() -> object | None:
    """The IPython shell this process runs in (a Jupyter kernel's), else None."""
    ipython = sys.modules.get("IPython")  # loaded before any cell runs, where there is a shell
    return ipython.get_ipython() if ipython is not None else None


if (_shell := _running_ipython()) is not None:
    display_boards_in(_shell)
