"""Piece catalogue: polyominoes, their rotations and mirror images.

A piece is a set of cells ``(x, y)`` with ``x`` to the right and ``y`` up,
normalised so the lowest ``x`` and ``y`` are 0.  Its orientations are the
distinct results of turning it by quarter turns clockwise, in the order they
are first met starting from the shape as given: that order numbers the
``rotation`` of a :class:`~babytris.Placement`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .validation import is_int

Cell = tuple[int, int]
Shape = tuple[Cell, ...]

__all__ = ["Piece", "CATALOGUE", "GROUPS", "piece"]


def normalise(cells: Iterable[Cell]) -> Shape:
    """Shift cells so min x = min y = 0; return them sorted (row-major: y, then x)."""
    cells = list(cells)
    min_x = min(x for x, _ in cells)
    min_y = min(y for _, y in cells)
    return tuple(sorted(((x - min_x, y - min_y) for x, y in cells), key=lambda c: (c[1], c[0])))


def turn_clockwise(shape: Shape) -> Shape:
    """The shape turned a quarter turn clockwise: (x, y) -> (y, -x)."""
    return normalise((y, -x) for x, y in shape)


def mirror_shape(shape: Shape) -> Shape:
    """The shape reflected left-right."""
    return normalise((-x, y) for x, y in shape)


def _is_connected(shape: Shape) -> bool:
    cells = set(shape)
    seen = {shape[0]}
    stack = [shape[0]]
    while stack:
        x, y = stack.pop()
        for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if n in cells and n not in seen:
                seen.add(n)
                stack.append(n)
    return len(seen) == len(cells)


@dataclass(frozen=True)
class Piece:
    """A polyomino with a name.

    Attributes:
        name: label used in reprs and to pick a piece by name.
        cells: the shape in rotation 0, normalised, sorted by (y, x).
    """

    name: str
    cells: Shape

    @classmethod
    def from_cells(cls, cells: Iterable[Sequence[int]], name: str | None = None) -> Piece:
        """A piece built from ``(x, y)`` cells; raises ``ValueError`` unless they form a polyomino."""
        try:
            cells = [tuple(c) for c in cells]
            if any(len(c) != 2 or not all(is_int(x) for x in c) for c in cells):
                raise TypeError  # a float coordinate would be truncated silently by int()
            raw = [(int(c[0]), int(c[1])) for c in cells]
        except (TypeError, ValueError, IndexError):
            raise ValueError("pieces: a custom piece must be a sequence of (x, y) integer pairs") from None
        if not raw:
            raise ValueError("pieces: a custom piece needs at least 1 cell")
        if len(set(raw)) != len(raw):
            raise ValueError(f"pieces: custom piece {raw} repeats a cell")
        shape = normalise(raw)
        if not _is_connected(shape):
            raise ValueError(f"pieces: custom piece {raw} is not connected (cells must share edges)")
        return cls(name or _shape_name(shape), shape)

    @property
    def size(self) -> int:
        """Number of cells."""
        return len(self.cells)

    def orientations(self) -> tuple[Shape, ...]:
        """The distinct shapes under quarter turns, rotation 0 first: a tuple of
        shapes, each a tuple of ``(x, y)`` cells as :attr:`cells`."""
        out: list[Shape] = []
        shape = self.cells
        for _ in range(4):
            if shape not in out:
                out.append(shape)
            shape = turn_clockwise(shape)
        return tuple(out)

    def placed_shapes(self, width: int, height: int) -> list[tuple[int, int, Shape]]:
        """Every ``(rotation, column, shape)`` the piece can take on a
        ``width`` x ``height`` board, in the order that numbers its
        placements (rotation-major; a rotation taller than the board, or
        wider, has none): a list of tuples, ``column`` the shape's left edge."""
        out: list[tuple[int, int, Shape]] = []
        for rotation, shape in enumerate(self.orientations()):
            if 1 + max(y for _, y in shape) > height:
                continue
            out.extend((rotation, column, shape) for column in range(width - max(x for x, _ in shape)))
        return out

    def mirror(self) -> Piece:
        """The reflected piece (its name gets a ``'`` unless it is its own mirror)."""
        shape = mirror_shape(self.cells)
        if self.same_shape(shape):
            return self
        return Piece(self.name + "'", shape)

    def same_shape(self, shape: Shape) -> bool:
        """Whether ``shape`` is one of this piece's orientations."""
        return normalise(shape) in self.orientations()

    def __str__(self) -> str:
        width = 1 + max(x for x, _ in self.cells)
        height = 1 + max(y for _, y in self.cells)
        filled = set(self.cells)
        return "\n".join(
            "".join("#" if (x, y) in filled else "." for x in range(width)) for y in reversed(range(height))
        )


def _shape_name(shape: Shape) -> str:
    return "P" + "".join(f"{x}{y}" for x, y in shape)


def _from_picture(name: str, *rows: str) -> Piece:
    """A piece drawn top row first, '#' for a cell."""
    height = len(rows)
    cells = [(x, height - 1 - r) for r, row in enumerate(rows) for x, ch in enumerate(row) if ch == "#"]
    return Piece(name, normalise(cells))


#: Every named piece.  "I" and "L" are the Baby Tetris trominoes; the
#: tetrominoes whose letters clash carry their size ("I4", "L4").
CATALOGUE: dict[str, Piece] = {
    p.name: p
    for p in (
        _from_picture("I", "###"),
        _from_picture("L", "#.", "##"),
        _from_picture("I4", "####"),
        _from_picture("O", "##", "##"),
        _from_picture("T", ".#.", "###"),
        _from_picture("S", ".##", "##."),
        _from_picture("Z", "##.", ".##"),
        _from_picture("J", "#..", "###"),
        _from_picture("L4", "..#", "###"),
    )
}

#: Names of piece sets.
GROUPS: dict[str, tuple[str, ...]] = {
    "trominoes": ("I", "L"),
    "tetrominoes": ("I4", "O", "T", "S", "Z", "J", "L4"),
}


def piece(spec: str | Piece | Iterable[Sequence[int]]) -> Piece:
    """A :class:`Piece` from a catalogue name, a Piece, or ``(x, y)`` cells."""
    if isinstance(spec, Piece):
        return spec
    if isinstance(spec, str):
        try:
            return CATALOGUE[spec]
        except KeyError:
            names = ", ".join(CATALOGUE)
            raise ValueError(f"pieces: unknown piece {spec!r}; known names are {names}") from None
    return Piece.from_cells(spec)


@dataclass(frozen=True, repr=False)
class Placement:
    """A move: which piece, turned to which rotation, dropped with its left edge at which column.

    ``rotation`` indexes :meth:`Piece.orientations`; ``column`` is the leftmost
    column of the rotated piece.  ``index`` numbers the move among all
    (rotation, column) pairs of the piece, rotation-major.  With soft moves
    (``Rules(moves="soft")``) the piece locks where it was moved to:
    ``row`` is then the bottom row of the rotated piece and ``index``
    numbers (rotation, column, row) triples, ``index = n * height + row``
    for the n-th (rotation, column) pair; with hard drops ``row`` is None
    (the drop decides it).
    """

    piece: str
    rotation: int
    column: int
    index: int
    row: int | None = None

    def __repr__(self) -> str:
        row = "" if self.row is None else f", row={self.row!r}"
        return (
            f"Placement(piece={self.piece!r}, rotation={self.rotation!r}, column={self.column!r}, "
            f"index={self.index!r}{row})"
        )
