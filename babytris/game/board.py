"""Board: a packed bitboard with its dimensions, for people (parsing, text, mirroring).

Hot code works on the raw ``int`` (bit ``row * width + col``, row 0 at the
bottom); ``Board`` is the friendly wrapper and converts with ``int(board)``.
It knows no drawing: :mod:`babytris.game.svg` draws it (and Jupyter
displays it from there), as the drawing reads the data and not the reverse.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .validation import check_int, is_int

__all__ = ["Board"]

FILLED = "#"
EMPTY = "."


class Board:
    """An immutable ``width`` x ``height`` board.

    >>> b = Board.from_rows(["#...", "##.#"])
    >>> int(b), b.width, b.height
    (27, 4, 2)
    >>> b.mirror().rows()
    ['...#', '#.##']

    (``print(b.mirror())`` draws the same rows one per line.)
    """

    __slots__ = ("bits", "width", "height")

    bits: int
    width: int
    height: int

    def __init__(self, bits: int = 0, width: int = 4, height: int = 4) -> None:
        width = check_int("width", width, 1)
        height = check_int("height", height, 1)
        if width * height > 64:
            raise ValueError(f"width * height must be <= 64, got {width} * {height}")
        if not is_int(bits):
            raise ValueError(f"bits must be an integer, got {bits!r}")
        bits = int(bits)
        if not 0 <= bits < (1 << (width * height)):
            raise ValueError(f"bits must be in [0, 2**{width * height}) for a {width}x{height} board, got {bits}")
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "width", width)
        object.__setattr__(self, "height", height)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Board is immutable")

    @classmethod
    def from_rows(cls, rows: Sequence[str], *, height: int | None = None) -> Board:
        """A board parsed from rows drawn top row first, ``#`` filled and ``.`` empty.

        ``height`` pads with empty rows on top (default: ``len(rows)``).
        """
        if isinstance(rows, str):
            raise ValueError(f"rows must be a list of strings, one per row (top first), got the string {rows!r}")
        rows = list(rows)
        if not all(isinstance(r, str) for r in rows):
            raise ValueError(f"rows must be strings of {FILLED!r} and {EMPTY!r}, got {rows!r}")
        if not rows:
            raise ValueError("rows must hold at least 1 row")
        width = len(rows[0])
        if any(len(r) != width for r in rows):
            raise ValueError(f"rows must all have the same length, got lengths {[len(r) for r in rows]}")
        height = len(rows) if height is None else height
        if height < len(rows):
            raise ValueError(f"height must be >= the number of rows ({len(rows)}), got {height}")
        bits = 0
        for r, text in enumerate(reversed(rows)):
            for c, ch in enumerate(text):
                if ch == FILLED:
                    bits |= 1 << (r * width + c)
                elif ch != EMPTY:
                    raise ValueError(f"rows may hold only {FILLED!r} and {EMPTY!r}, got {ch!r}")
        return cls(bits, width, height)

    @classmethod
    def from_cells(cls, cells: Iterable[tuple[int, int]], width: int = 4, height: int = 4) -> Board:
        """A board with the given ``(col, row)`` cells filled."""
        bits = 0
        for c, r in cells:
            if not (0 <= c < width and 0 <= r < height):
                raise ValueError(f"cell ({c}, {r}) is outside a {width}x{height} board")
            bits |= 1 << (r * width + c)
        return cls(bits, width, height)

    def filled(self, col: int, row: int) -> bool:
        """Whether cell (``col``, ``row``) is filled; row 0 is the bottom."""
        if not (0 <= col < self.width and 0 <= row < self.height):
            raise ValueError(f"cell ({col}, {row}) is outside the {self.width}x{self.height} board")
        return bool(self.bits >> (row * self.width + col) & 1)

    def rows(self) -> list[str]:
        """The board as strings, top row first."""
        return [
            "".join(FILLED if self.filled(c, r) else EMPTY for c in range(self.width))
            for r in reversed(range(self.height))
        ]

    def mirror(self) -> Board:
        """The board reflected left-right."""
        return Board.from_rows([row[::-1] for row in self.rows()])

    def column_heights(self) -> list[int]:
        """The height of each column, left to right: 1 + the row of its
        highest filled cell (0 when empty)."""
        heights = []
        for c in range(self.width):
            h = 0
            for r in range(self.height):
                if self.filled(c, r):
                    h = r + 1
            heights.append(h)
        return heights

    def count(self) -> int:
        """Number of filled cells."""
        return bin(self.bits).count("1")

    def __int__(self) -> int:
        return self.bits

    __index__ = __int__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return (self.bits, self.width, self.height) == (other.bits, other.width, other.height)

    def __hash__(self) -> int:
        return hash((self.bits, self.width, self.height))

    def __str__(self) -> str:
        return "\n".join(self.rows())

    def __repr__(self) -> str:
        return f"Board.from_rows({self.rows()!r})"
