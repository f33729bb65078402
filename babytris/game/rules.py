"""Rules of a Baby Tetris game: board size, pieces, line scores, piece probabilities."""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .board import Board
from .pieces import CATALOGUE, GROUPS, Piece, piece
from .validation import ArgumentTypeError, check_bool, check_int, is_int

__all__ = [
    "Rules",
    "RulesError",
    "PieceSpec",
    "OBJECTIVES",
    "MOVES",
    "RANDOMIZERS",
    "check_line_scores",
    "check_probabilities",
    "make_rules",
    "piece_repr",
    "resolve_pieces",
]

#: A piece given by catalogue name, as a Piece, or as (x, y) cells.
PieceSpec = str | Piece | Sequence[Sequence[int]]

MAX_CELLS = 64  # a board is one uint64

#: What a game scores: points per placement, or the length of a combo.
OBJECTIVES = ("points", "combo")
#: How the hold slot starts: empty, or filled by the first piece drawn.
HOLD_STARTS = ("empty", "drawn")
#: How a piece moves before it locks: hard-dropped from above (Baby Tetris),
#: or also moved down, left, right and turned on the board (tucks and slides).
MOVES = ("hard", "soft")
#: The most previewed pieces (the states grow as n_pieces ** preview).
MAX_PREVIEW = 8
#: How the next piece is chosen by chance: independent draws with the
#: probabilities, or dealt from a shuffled bag of every piece (see babytris.game.bags).
RANDOMIZERS = ("iid", "bag")
#: The most copies of each piece in a bag, and the most bag contents a game may have.
MAX_BAG_COPIES = 16
MAX_BAGS = 2**16


class RulesError(ValueError):
    """Invalid rules; the message names the field and the allowed range."""


def _triangular(n: int) -> float:
    return n * (n + 1) / 2


@dataclass(frozen=True, eq=True)
class Rules:
    """A rule set.  Every field is validated; bad values raise :class:`RulesError`.

    Args:
        width: columns, >= 1.
        height: rows, >= 1, with ``width * height <= 64``.
        pieces: catalogue names (``"I"``, ``"L"``, ``"I4"``, ``"O"``, ``"T"``,
            ``"S"``, ``"Z"``, ``"J"``, ``"L4"``), a group name (``"trominoes"``,
            ``"tetrominoes"``), :class:`Piece` objects, or ``(x, y)`` cell lists.
            Default: the Baby Tetris trominoes I and L.
        line_scores: points for clearing 0, 1, 2, ... rows with one placement;
            needs an entry for as many rows as the tallest piece spans
            (with ``no_holes``, as the board has: the cells filled under a
            piece can complete rows below it).
            Default: triangular numbers 0, 1, 3, 6, 10, ... up to that length.
        probabilities: chance of each piece being next, each > 0, summing to 1.
            Default: uniform.
        start: the board the game starts on, a :class:`Board` or its bits
            (bit ``row * width + col``), with no full row.  Default: empty.
        objective: ``"points"`` (default: ``line_scores`` per placement) or
            ``"combo"``: one point per placement that clears a row, and a
            placement that clears none ends the game, so the value is the
            expected length of the combo.  Under ``"combo"`` a placement that
            clears nothing is not a move of the game (a piece that can only
            clear nothing ends it), and ``line_scores`` are ``(0, 1, 1, ...)``.
        preview: how many pieces after the one to place the player sees, in
            [0, MAX_PREVIEW].  A state is then the board, the piece to place
            and the queue; each placement draws one new piece onto the queue's end.
        hold: the player may put the piece to place on hold, once per piece:
            with a piece held, place that one instead (the piece to place is
            held); with the slot empty, hold the piece and place the next
            one, a step of its own that places nothing.
        hold_start: with ``hold``, how the game starts: ``"empty"`` (the
            slot empty; the default) or ``"drawn"`` (the first piece drawn
            fills the slot before play, so the slot is never empty, as in
            c4w's combo study; start values average over that piece).
        mirror: merge every board with its mirror image before enumerating
            (a board stands for the lesser of the two): the game is the same
            with the pieces mirrored, so their values are too.  Needs a piece
            set closed under mirroring with mirrored pieces equally likely, a
            board at most 16 wide, and (unless every piece is its own mirror
            image, as I and L are) no preview and no hold.
        no_holes: boards are column heights only: a landed piece fills
            every empty cell under it in its columns, then full rows are
            cleared (the cells filled count toward them).  The start board
            must have no hole.  ``Reward(new_holes=...)`` weighs the cells filled.
        top_out: the game is lost as soon as a column reaches the top row:
            a placement that leaves a cell in the top row after its clears,
            or would rest above the board, is a move to the lost board
            (:func:`~babytris.engine.placements.lost_board`, the top row full, where
            nothing is a move) that clears no row.  Every placement is then a
            move, and live boards keep their top row empty (the start board
            too).  ``Reward(loss=...)`` charges the move that tops out.  Not
            with the combo objective.
        moves: ``"hard"`` (default: the piece is turned and shifted above the
            board, then hard-dropped, so it cannot pass under an overhang) or
            ``"soft"``: it may also move down, left, right and turn a quarter
            (keeping the bottom-left corner of its bounding box; no wall
            kicks) inside the board, and locks wherever it cannot move down;
            each distinct board after the lock (and its rows cleared) is one
            move (see :class:`Placement` for its number).  Not with ``mirror``
            (the turns are not mirror-symmetric).
        randomizer: ``"iid"`` (default: each piece drawn independently with
            ``probabilities``) or ``"bag"``: pieces are dealt from a shuffled
            bag holding every piece ``bag_copies`` times, refilled when empty
            (the 7-bag of modern Tetris has ``bag_copies=1``), so what is
            left in the bag is part of the state (see :mod:`babytris.game.bags`).
            A bag deals every piece equally often: ``probabilities`` must be
            left uniform.
        bag_copies: with ``randomizer="bag"``, the copies of each piece in a
            bag, in [1, 16], with at most 65,536 contents a bag can have
            (``(bag_copies + 1) ** n_pieces - 1``).

    ``Rules`` is immutable and hashable; ``pieces``, ``line_scores`` and
    ``probabilities`` are stored as tuples.
    """

    width: int = 4
    height: int = 4
    # The fields hold the validated forms; the constructor (typed below) accepts more.
    pieces: tuple[Piece, ...] = field(default=("trominoes",))  # type: ignore[arg-type]
    line_scores: tuple[float, ...] = None  # type: ignore[assignment]
    probabilities: tuple[float, ...] = None  # type: ignore[assignment]
    start: int = 0
    objective: str = "points"
    preview: int = 0
    hold: bool = False
    mirror: bool = False
    no_holes: bool = False
    top_out: bool = False
    hold_start: str = "empty"
    moves: str = "hard"
    randomizer: str = "iid"
    bag_copies: int = 1

    if TYPE_CHECKING:  # what the constructor accepts (the dataclass stores the validated forms)

        def __init__(
            self,
            width: int = 4,
            height: int = 4,
            pieces: str | Iterable[PieceSpec] = ("trominoes",),
            line_scores: Iterable[float] | None = None,
            probabilities: Iterable[float] | None = None,
            start: int | Board = 0,
            objective: str = "points",
            preview: int = 0,
            hold: bool = False,
            mirror: bool = False,
            no_holes: bool = False,
            top_out: bool = False,
            hold_start: str = "empty",
            moves: str = "hard",
            randomizer: str = "iid",
            bag_copies: int = 1,
        ) -> None: ...

    def __post_init__(self) -> None:
        width = _positive_int("width", self.width)
        height = _positive_int("height", self.height)
        preview = check_int("preview", self.preview, 0, MAX_PREVIEW, error=RulesError)
        flags = {
            name: check_bool(name, getattr(self, name), error=RulesError)
            for name in ("hold", "mirror", "no_holes", "top_out")
        }
        for name, flag in flags.items():
            object.__setattr__(self, name, flag)
        if width * height > MAX_CELLS:
            raise RulesError(
                f"width * height must be <= {MAX_CELLS} (a board is one 64-bit integer); "
                f"got {width} * {height} = {width * height}"
            )
        pieces = resolve_pieces(self.pieces)
        for p in pieces:
            if not any(_fits(shape, width, height) for shape in p.orientations()):
                raise RulesError(f"pieces: piece {p.name!r} fits a {width}x{height} board in no rotation")
        # Rows one placement can clear: the tallest orientation that fits.
        tallest = max(1 + max(y for _, y in s) for p in pieces for s in p.orientations() if _fits(s, width, height))
        if self.no_holes:
            tallest = height  # filling under a piece can complete rows below it too
        if self.objective not in OBJECTIVES:
            raise RulesError(f"objective must be one of {', '.join(map(repr, OBJECTIVES))}, got {self.objective!r}")
        if self.objective == "combo":
            if self.line_scores is not None:
                raise RulesError(
                    "line_scores: the combo objective scores 1 per placement that clears a row; leave line_scores unset"
                )
            line_scores = (0.0,) + (1.0,) * tallest
        else:
            line_scores = check_line_scores(self.line_scores, tallest, self.no_holes)
        given_probabilities = self.probabilities is not None
        probabilities = check_probabilities(self.probabilities, len(pieces))
        bag_copies = self._check_randomizer(len(pieces), probabilities, given_probabilities)
        start = _start(self.start, width, height)
        if self.hold_start not in HOLD_STARTS:
            raise RulesError(f"hold_start must be one of {', '.join(map(repr, HOLD_STARTS))}, got {self.hold_start!r}")
        if self.moves not in MOVES:
            raise RulesError(f"moves must be one of {', '.join(map(repr, MOVES))}, got {self.moves!r}")
        if self.moves == "soft" and self.mirror:
            raise RulesError("mirror: soft moves turn about a corner, which is not mirror-symmetric; use moves='hard'")
        if self.hold_start != "empty" and not self.hold:
            raise RulesError(f"hold_start={self.hold_start!r} needs hold=True")
        if self.top_out and self.objective == "combo":
            raise RulesError(
                "top_out: the combo objective ends at a placement that clears nothing; "
                "use objective='points' with top_out"
            )
        if self.no_holes and _holes(start, width, height):
            raise RulesError("start must have no hole with no_holes (an empty cell under a filled one)")
        if self.top_out and start >> ((height - 1) * width):
            raise RulesError(
                f"start must have its top row (row {height - 1}) empty with top_out: a board reaching it is lost"
            )
        object.__setattr__(self, "width", width)
        object.__setattr__(self, "height", height)
        object.__setattr__(self, "pieces", pieces)
        object.__setattr__(self, "line_scores", line_scores)
        object.__setattr__(self, "probabilities", probabilities)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "preview", preview)
        object.__setattr__(self, "bag_copies", bag_copies)
        if self.mirror:
            self._check_mirror()

    def _check_randomizer(self, n_pieces: int, probabilities: tuple[float, ...], given: bool) -> int:
        if self.randomizer not in RANDOMIZERS:
            raise RulesError(f"randomizer must be one of {', '.join(map(repr, RANDOMIZERS))}, got {self.randomizer!r}")
        copies = check_int("bag_copies", self.bag_copies, 1, MAX_BAG_COPIES, error=RulesError)
        if self.randomizer != "bag":
            if copies != 1:
                raise RulesError(f"bag_copies={copies} needs randomizer='bag'")
            return copies
        if given and max(probabilities) - min(probabilities) > 1e-12:
            raise RulesError(
                "probabilities: a bag deals every piece equally often; leave probabilities unset with randomizer='bag'"
            )
        if (copies + 1) ** n_pieces - 1 > MAX_BAGS:
            raise RulesError(
                f"bag_copies: a bag of {n_pieces} pieces x {copies} copies has {(copies + 1) ** n_pieces - 1:,} "
                f"contents, more than {MAX_BAGS:,}; use fewer copies or pieces"
            )
        return copies

    @property
    def n_pieces(self) -> int:
        """The number of pieces."""
        return len(self.pieces)

    @property
    def queues(self) -> int:
        """How many queues of known pieces a board can carry: ``n_pieces ** preview``."""
        return self.n_pieces**self.preview

    @property
    def bags(self) -> int:
        """How many contents the bag can have (see :mod:`babytris.game.bags`):
        ``(bag_copies + 1) ** n_pieces - 1`` with ``randomizer="bag"``, else 1."""
        return (self.bag_copies + 1) ** self.n_pieces - 1 if self.randomizer == "bag" else 1

    @property
    def node_tables(self) -> bool:
        """Whether a row of the move table is more than a board: with
        previews, hold or a bag it is a node (board, bag, queue, hold slot)."""
        return bool(self.preview or self.hold or self.randomizer == "bag")

    @property
    def nodes_per_board(self) -> int:
        """The number of rows of the move table per board: ``bags * queues * hold_slots``."""
        return self.bags * self.queues * self.hold_slots

    @property
    def hold_slots(self) -> int:
        """The number of states of the hold slot: 1 without hold; else empty,
        or a piece held free or held locked (just put there): ``2 * n_pieces + 1``."""
        return 2 * self.n_pieces + 1 if self.hold else 1

    @property
    def cells(self) -> int:
        """Number of cells on the board."""
        return self.width * self.height

    @property
    def piece_names(self) -> tuple[str, ...]:
        """The pieces' names, in order (a tuple of str)."""
        return tuple(p.name for p in self.pieces)

    def piece_index(self, which: int | str | Piece) -> int:
        """Index of a piece given by index, name or Piece; raises ``ValueError`` if absent."""
        if isinstance(which, bool):
            raise ValueError(f"piece must be an index or a name, got {which!r}")
        if isinstance(which, numbers.Integral):
            which = int(which)
            if not 0 <= which < self.n_pieces:
                raise ValueError(f"piece index must be in [0, {self.n_pieces - 1}], got {which}")
            return which
        name = which.name if isinstance(which, Piece) else which
        for i, p in enumerate(self.pieces):
            if p.name == name:
                return i
        raise ValueError(f"piece {name!r} is not in these rules (pieces: {', '.join(self.piece_names)})")

    def mirror_map(self) -> tuple[int, ...] | None:
        """``m[i]``: index of the mirror image of piece i, or None if the set is not mirror-closed."""
        out = []
        for p in self.pieces:
            image = p.mirror().cells
            match = [j for j, q in enumerate(self.pieces) if q.same_shape(image)]
            if not match:
                return None
            out.append(match[0])
        return tuple(out)

    def _check_mirror(self) -> None:
        images = self.mirror_map()
        if images is None:
            raise RulesError("mirror: the pieces are not closed under mirroring (add the mirror images)")
        if any(abs(self.probabilities[i] - self.probabilities[j]) > 1e-12 for i, j in enumerate(images)):
            raise RulesError("mirror: a piece and its mirror image must be equally likely")
        if self.width > 16:
            raise RulesError(f"mirror: boards at most 16 wide, got width {self.width}")
        if any(i != j for i, j in enumerate(images)) and self.node_tables:
            raise RulesError("mirror: with pieces that are not their own mirror image, no preview, no hold and no bag")

    def to_json(self) -> dict:
        """The rules as a JSON-ready dict of their fields (pieces by name and
        cells), as saved files keep them; :meth:`from_json` reads it back."""
        return {
            "width": self.width,
            "height": self.height,
            "pieces": [{"name": p.name, "cells": [list(c) for c in p.cells]} for p in self.pieces],
            "line_scores": None if self.objective == "combo" else list(self.line_scores),
            "probabilities": list(self.probabilities),
            "start": self.start,
            "objective": self.objective,
            "preview": self.preview,
            "hold": self.hold,
            "mirror": self.mirror,
            "no_holes": self.no_holes,
            "top_out": self.top_out,
            "hold_start": self.hold_start,
            "moves": self.moves,
            "randomizer": self.randomizer,
            "bag_copies": self.bag_copies,
        }

    @classmethod
    def from_json(cls, fields: object) -> Rules:
        """The :class:`Rules` of a dict :meth:`to_json` wrote, validated as
        any Rules are (``ValueError`` naming the field)."""
        if not isinstance(fields, dict):
            raise ValueError(f"rules must be a dict of Rules fields, got {fields!r}")
        fields = dict(fields)
        fields["pieces"] = [Piece(p["name"], tuple(tuple(c) for c in p["cells"])) for p in fields["pieces"]]
        return cls(**fields)

    def __repr__(self) -> str:
        pieces = ", ".join(piece_repr(p) for p in self.pieces)
        scores = "" if self.objective == "combo" else f"line_scores={self.line_scores!r}, "
        extra = "".join(
            f", {name}={value!r}"
            for name, value, default in (
                ("start", self.start, 0),
                ("objective", self.objective, "points"),
                ("preview", self.preview, 0),
                ("hold", self.hold, False),
                ("mirror", self.mirror, False),
                ("no_holes", self.no_holes, False),
                ("top_out", self.top_out, False),
                ("hold_start", self.hold_start, "empty"),
                ("moves", self.moves, "hard"),
                ("randomizer", self.randomizer, "iid"),
                ("bag_copies", self.bag_copies, 1),
            )
            if value != default
        )
        return (
            f"Rules(width={self.width}, height={self.height}, pieces=({pieces},), "
            f"{scores}probabilities={self.probabilities!r}{extra})"
        )


def make_rules(rules: Rules | None, rule_fields: dict[str, Any]) -> Rules:
    """``rules`` as given, or built from keyword fields (``width=4, height=5``):
    an entry point's ``rules=None, **rule_fields``.  Returns the Rules."""
    if rules is None:
        unknown = [name for name in rule_fields if name not in _RULE_FIELDS]
        if unknown:  # (the caller's own options were taken already: this names the entry point's keywords)
            raise ArgumentTypeError(
                f"unexpected keyword {unknown[0]!r}: neither an option here nor a field of Rules "
                f"({', '.join(_RULE_FIELDS)})"
            )
        return Rules(**rule_fields)
    if not isinstance(rules, Rules):
        raise ArgumentTypeError(f"rules must be a babytris.Rules, got {type(rules).__name__}")
    if rule_fields:
        raise ArgumentTypeError(f"pass either rules or rule fields, not both (got {', '.join(rule_fields)})")
    return rules


#: The fields Rules takes, as keywords of every entry point's ``**rule_fields``.
_RULE_FIELDS = tuple(inspect.signature(Rules).parameters)


def piece_repr(p: Piece) -> str:
    """The piece as it is written in a pasteable ``Rules(...)`` repr: its catalogue name, cells or ``Piece(...)``."""
    # Catalogue pieces by name, unnamed custom ones by their cells; a custom
    # piece with a name of its own as Piece(...), which keeps it.
    if CATALOGUE.get(p.name) == p:
        return repr(p.name)
    if Piece.from_cells(p.cells) == p:
        return repr(list(p.cells))
    return repr(p)


def _positive_int(name: str, value: object) -> int:
    return check_int(name, value, 1, MAX_CELLS, error=RulesError)


def _fits(shape, width: int, height: int) -> bool:
    return max(x for x, _ in shape) < width and max(y for _, y in shape) < height


def resolve_pieces(spec: object) -> tuple[Piece, ...]:
    """The pieces a ``pieces=`` spec names (names, groups, Pieces or cell lists),
    checked: at least one, distinct shapes."""
    if isinstance(spec, str):
        spec = (spec,)
    if not isinstance(spec, Iterable):
        raise RulesError(f"pieces must be a sequence of piece names, Pieces or cell lists, got {spec!r}")
    out: list[Piece] = []
    for item in spec:
        if isinstance(item, str) and item in GROUPS:
            out.extend(piece(name) for name in GROUPS[item])
        else:
            try:
                out.append(piece(item))
            except ValueError as err:
                raise RulesError(str(err)) from None
    if not out:
        raise RulesError("pieces must name at least 1 piece")
    if len(out) > 255:
        raise RulesError(f"pieces: at most 255 pieces, got {len(out)}")
    names = [p.name for p in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RulesError(f"pieces: each piece must appear once; repeated: {', '.join(dupes)}")
    for i, p in enumerate(out):
        for q in out[:i]:
            if q.same_shape(p.cells):
                raise RulesError(f"pieces: {q.name!r} and {p.name!r} are the same shape")
    return tuple(out)


def _finite_floats(name: str, values: object) -> tuple[float, ...]:
    if isinstance(values, (str, bytes)):
        raise RulesError(f"{name} must be a sequence of numbers, got the string {values!r}")
    try:
        out = tuple(float(v) for v in values)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise RulesError(f"{name} must be a sequence of numbers, got {values!r}") from None
    if not all(math.isfinite(v) for v in out):
        raise RulesError(f"{name} must be finite numbers, got {values!r}")
    return out


def check_line_scores(values: object, tallest: int, no_holes: bool = False) -> tuple[float, ...]:
    """``line_scores`` checked (finite, an entry for 0..``tallest`` rows), as floats; ``None``: 0, 1, 3, 6, ..."""
    if values is None:
        return tuple(_triangular(n) for n in range(tallest + 1))
    out = _finite_floats("line_scores", values)
    if len(out) < tallest + 1:
        why = (
            "with no_holes a placement can clear every row"
            if no_holes
            else "the tallest piece can clear {tallest} rows at once"
        )
        raise RulesError(
            f"line_scores needs at least {tallest + 1} entries (0..{tallest} lines: {why.format(tallest=tallest)}), "
            f"got {len(out)}"
        )
    return out


def check_probabilities(values: object, n: int) -> tuple[float, ...]:
    """``probabilities`` of ``n`` pieces checked (each in (0, 1], summing to 1), as floats; ``None``: uniform."""
    if values is None:
        return tuple(1.0 / n for _ in range(n))
    out = _finite_floats("probabilities", values)
    if len(out) != n:
        raise RulesError(f"probabilities needs one entry per piece ({n}), got {len(out)}")
    if not all(0.0 < v <= 1.0 for v in out):
        raise RulesError(f"probabilities must each be in (0, 1], got {out}")
    if abs(math.fsum(out) - 1.0) > 1e-9:
        raise RulesError(f"probabilities must sum to 1 (within 1e-9), got sum {math.fsum(out)!r}")
    return out


def _holes(board: int, width: int, height: int) -> int:
    """Empty cells under a filled cell of their column."""
    count = 0
    for col in range(width):
        covered = False
        for row in reversed(range(height)):
            filled = (board >> (row * width + col)) & 1
            count += covered and not filled
            covered = covered or bool(filled)
    return count


def _start(value: object, width: int, height: int) -> int:
    cells = width * height
    if isinstance(value, Board):
        if (value.width, value.height) != (width, height):
            raise RulesError(f"start is a {value.width}x{value.height} board, the rules are {width}x{height}")
        value = value.bits
    if isinstance(value, bool) or not is_int(value) or not 0 <= value < 2**cells:
        raise RulesError(f"start must be a board: an integer in [0, 2**{cells}), got {value!r}")
    value = int(value)
    row = (1 << width) - 1
    full = [r for r in range(height) if (value >> (r * width)) & row == row]
    if full:
        raise RulesError(f"start must have no full row (it would have been cleared); row {full[0]} is full")
    return value
