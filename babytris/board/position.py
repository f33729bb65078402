"""A position's short text form, for URLs and scripts: parsed, checked against the rules, and written back.

The form is fields joined by ``;``, each present exactly when the rules have it::

    ROWS;PIECE[;QUEUE][;HOLD][;BAG]

- ``ROWS``: the board's rows, top first, joined by ``/``, ``#`` filled and
  ``.`` empty (as ``babytris solve --start`` and :meth:`Board.from_rows`);
  rows left out at the top are empty, so ``....`` is an empty 4-wide board.
- ``PIECE``: the name of the piece to place (``I``, ``L``, ``T``, ...).
- ``QUEUE``: with previews (``rules.preview``), the pieces in sight after it,
  next first, joined by ``,``.
- ``HOLD``: with hold, the held piece's name or ``-`` (the slot empty); a
  ``!`` after the name: it was just put there (locked: no swap now).
- ``BAG``: with a bag (``rules.randomizer == "bag"``), the pieces left in
  it once the pieces in sight were dealt, joined by ``,`` (the full bag
  again once the last draw emptied it, as :attr:`Game.bag_left` says).

>>> from babytris import Rules
>>> rules = Rules(width=4, height=5, preview=1, hold=True)
>>> p = parse_position("#..#/##.#;L;I;-", rules)
>>> p.board, p.piece, p.queue, p.held, p.locked
(155, 1, (0,), None, False)
>>> position_text(p, rules)
'#..#/##.#;L;I;-'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["Layout", "Position", "parse_position", "position_text", "MAX_TEXT"]


class Layout(Protocol):
    """What the text form reads of a game: a :class:`~babytris.Rules`, or the
    big boards' stand-in for one (:mod:`babytris.board.estimates`)."""

    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def piece_names(self) -> tuple[str, ...]: ...
    @property
    def preview(self) -> int: ...
    @property
    def hold(self) -> bool: ...
    @property
    def randomizer(self) -> str: ...
    @property
    def bag_copies(self) -> int: ...


#: The longest position text taken (a 64-cell board with a long queue is under 200 characters).
MAX_TEXT = 1000


@dataclass(frozen=True)
class Position:
    """A state of a game, as a :class:`~babytris.Game` holds it between placements.

    Attributes:
        board: the board's bits (bit ``row * width + col``, row 0 at the bottom).
        piece: the index of the piece to place.
        queue: with previews, the pieces in sight after it (indices, next first), else ``()``.
        held: with hold, the held piece's index or None.
        locked: with hold, whether the held piece was just put there.
        bag: with a bag, the piece indices left in it (sorted), else None.
    """

    board: int
    piece: int
    queue: tuple[int, ...] = ()
    held: int | None = None
    locked: bool = False
    bag: tuple[int, ...] | None = None


def _fields(rules: Layout) -> list[str]:
    """The names of the fields the rules' text form has, in order."""
    return (
        ["rows", "piece"]
        + (["queue"] if rules.preview else [])
        + (["hold"] if rules.hold else [])
        + (["bag"] if rules.randomizer == "bag" else [])
    )


def _piece(rules: Layout, field: str, name: str) -> int:
    if name not in rules.piece_names:
        raise ValueError(f"position: {field} {name!r} is not a piece of these rules ({', '.join(rules.piece_names)})")
    return rules.piece_names.index(name)


def _board(rules: Layout, text: str) -> int:
    rows = text.split("/")
    if len(rows) > rules.height or any(len(row) != rules.width or set(row) - {"#", "."} for row in rows):
        raise ValueError(
            f"position: rows must be at most {rules.height} rows of {rules.width} '#' or '.' joined by '/', "
            f"got {text[:80]!r}"
        )
    # (the bits of any size of board, as Board.from_rows lays out those of up to 64 cells)
    return sum(
        1 << (r * rules.width + c) for r, row in enumerate(reversed(rows)) for c, cell in enumerate(row) if cell == "#"
    )


def parse_position(text: object, rules: Layout) -> Position:
    """The :class:`Position` ``text`` writes in the form above, for ``rules``.

    Raises:
        ValueError: naming the field that is malformed (``position: ...``),
            in one line.  Whether the position can be reached in a game is
            the solution's to say, not this parser's.
    """
    if not isinstance(text, str) or not text or len(text) > MAX_TEXT:
        raise ValueError(f"position must be a text of 1 to {MAX_TEXT} characters, got {str(text)[:80]!r}")
    names = _fields(rules)
    parts = text.split(";")
    if len(parts) != len(names):
        raise ValueError(f"position: these rules take {len(names)} fields ({';'.join(names)}), got {len(parts)}")
    given = dict(zip(names, parts))
    board = _board(rules, given["rows"])
    piece = _piece(rules, "piece", given["piece"])
    queue: tuple[int, ...] = ()
    if rules.preview:
        queue = tuple(_piece(rules, "queue piece", name) for name in given["queue"].split(","))
        if len(queue) != rules.preview:
            raise ValueError(f"position: queue must name {rules.preview} pieces (rules.preview), got {len(queue)}")
    held, locked = None, False
    if rules.hold and given["hold"] != "-":
        name = given["hold"]
        locked = name.endswith("!")
        held = _piece(rules, "hold", name.removesuffix("!"))
    bag = None
    if rules.randomizer == "bag":
        bag = tuple(sorted(_piece(rules, "bag piece", name) for name in given["bag"].split(",") if name))
        too_many = [p for p in set(bag) if bag.count(p) > rules.bag_copies]
        if too_many or not bag:
            raise ValueError(
                f"position: bag must hold 1 to {rules.bag_copies} of a piece (rules.bag_copies) and not be empty, "
                f"got {given['bag']!r}"
            )
    return Position(board, piece, queue, held, locked, bag)


def position_text(position: Position, rules: Layout) -> str:
    """``position`` in the text form (the empty rows on top left out, one row kept)."""
    w = rules.width
    rows = ["".join("#" if position.board >> (r * w + c) & 1 else "." for c in range(w)) for r in range(rules.height)]
    rows.reverse()  # (top first)
    while len(rows) > 1 and "#" not in rows[0]:
        rows = rows[1:]
    names = rules.piece_names
    parts = ["/".join(rows), names[position.piece]]
    if rules.preview:
        parts.append(",".join(names[p] for p in position.queue))
    if rules.hold:
        parts.append("-" if position.held is None else names[position.held] + ("!" if position.locked else ""))
    if rules.randomizer == "bag":
        parts.append(",".join(names[p] for p in sorted(position.bag or ())))
    return ";".join(parts)
