"""A solved game as a table a report can use: one row per state, the board
drawn as text, the piece, the move the policy makes and the state's value.

>>> import babytris
>>> table = policy_array(babytris.solve(width=4, height=4))
>>> len(table), table.dtype.names[:6]
(25956, ('board', 'rows', 'piece', 'rotation', 'column', 'value'))
"""

from __future__ import annotations

import csv
from typing import IO, Any, Protocol

import numpy as np

from ..engine.placements import placement_table
from ..engine.transitions import HOLD_MOVE, Transitions
from ..engine.writing import replace_atomically
from ..game.bags import after_draw, describe_bag, full_bag
from ..game.rules import Rules

__all__ = ["Solved", "policy_table", "policy_array", "write_policy_csv"]


class Solved(Protocol):
    """What a policy table reads of a solved game: a :class:`~babytris.Solution`
    (whose module, above this one, gives it :meth:`~babytris.Solution.policy_table`)."""

    @property
    def rules(self) -> Rules: ...
    @property
    def transitions(self) -> Transitions: ...
    @property
    def boards(self) -> np.ndarray: ...
    @property
    def n_boards(self) -> int: ...
    @property
    def values(self) -> np.ndarray: ...
    @property
    def policy(self) -> np.ndarray: ...
    @property
    def opponent_policy(self) -> np.ndarray | None: ...
    @property
    def player(self) -> str: ...


def policy_array(solution: Solved, *, pieces: np.ndarray | str | None = None) -> np.ndarray:
    """The policy as a structured numpy array, one row per state (board-major,
    then pieces in ``rules.pieces`` order).

    Fields: ``board`` (uint64 bits), ``rows`` (the board's rows, top row
    first, joined by ``/``), ``piece`` (the name of the piece to place),
    ``rotation`` and ``column`` of the placement the policy makes (-1 where
    the piece fits nowhere, and for a hold move), ``value`` (the state's
    value, float64), ``placement`` (its number; -1: none); with soft moves
    ``row`` (the row it locks at); with previews ``queue`` (the pieces seen
    after it, next first, names joined by spaces); with hold ``held`` (the
    held piece's name, or empty), ``locked``, ``hold`` (the policy puts the
    piece on hold) and ``placed`` (the piece the move places: the held one
    after a swap; empty for a hold); with a bag ``bag_left`` (the pieces left
    in the bag once the pieces in sight were dealt, as ``Solution.value``
    takes them; empty when the last draw emptied it), and only the states
    whose piece the bag holds.

    Both sides: ``drawn`` (the piece that came to this row: without previews
    the piece to place, with them the queue's last) and ``chance`` (float64,
    the chance it comes: its probability, or with a bag its share of the bag;
    against an opponent 1.0 for the piece it gives and 0.0 for the others),
    and against an opponent ``gives`` (the piece it gives on this row, the
    same on each of the row's states).  A player placing at random (the
    ``"minavg"`` and ``"gaps"`` games) has no move: rotation, column and
    placement are -1.

    ``pieces`` names who gives the pieces, in place of the Solution's own
    opponent (None): ``"random"`` (drawn) or piece indices ``(n_boards,)``
    (what :meth:`babytris.Match.policy_table` passes for its opponent).
    """
    rules = solution.rules
    choices = solution.opponent_policy if pieces is None else None if isinstance(pieces, str) else pieces
    if isinstance(pieces, str) and pieces != "random":
        raise ValueError(f"pieces must be None, 'random' or piece indices (n_boards,), got {pieces!r}")
    if choices is not None and np.shape(choices) != (solution.n_boards,):
        raise ValueError(f"pieces must have shape (n_boards,) = ({solution.n_boards},), got {np.shape(choices)}")
    n, P = solution.n_boards, rules.n_pieces
    table = placement_table(rules)
    out = np.empty(n * P, dtype=_fields(rules, table.soft, choices is not None))
    step = max(1, SLICE_STATES // P)
    for start in range(0, n, step):  # (slices of boards: Ctrl-C is answered between them)
        _fill(out, solution, table, choices, start, min(start + step, n))
    t = solution.transitions
    if t.bags is not None:
        return _with_bag_left(out, rules, t.bags)
    return out


#: The states a slice of a policy table holds (tens of milliseconds of numpy each,
#: so that Ctrl-C is answered between two well within half a second).
SLICE_STATES = 2**16


def _fields(rules, soft: bool, gives: bool) -> list[tuple[str, Any]]:
    """The policy table's fields (see :func:`policy_array`)."""
    name = f"U{max(len(name) for name in rules.piece_names)}"
    fields: list[tuple[str, Any]] = [
        ("board", np.uint64),
        ("rows", f"U{rules.height * (rules.width + 1)}"),
        ("piece", name),
        ("rotation", np.int16),
        ("column", np.int16),
        ("value", np.float64),
        ("placement", np.int32),
        ("drawn", name),
        ("chance", np.float64),
    ]
    if gives:
        fields.append(("gives", name))
    if soft:
        fields.insert(5, ("row", np.int16))
    if rules.preview:
        fields.append(("queue", f"U{rules.preview * (1 + max(len(p) for p in rules.piece_names))}"))
    if rules.hold:
        fields += [("held", name), ("locked", bool), ("hold", bool), ("placed", name)]
    return fields


def _fill(out: np.ndarray, solution: Solved, table: Any, choices: np.ndarray | None, lo: int, hi: int) -> None:
    """The rows of boards ``lo:hi`` of :func:`policy_array`'s table ``out``."""
    rules, t = solution.rules, solution.transitions
    P = rules.n_pieces
    n = hi - lo
    part = out[lo * P : hi * P]
    numbers = solution.policy.reshape(-1)[lo * P : hi * P].astype(np.int64)
    if solution.player == "random":
        numbers = np.full(n * P, -1, dtype=np.int64)
    drawn = np.tile(np.arange(P), n)
    to_place = drawn
    hold = np.zeros(n * P, dtype=bool)
    if rules.preview and t.queues is not None:  # the queue's first piece is placed, the drawn one joins it
        to_place = np.repeat(t.queues[lo:hi] // P ** (rules.preview - 1), P)
    placed = to_place.copy()
    if rules.hold:  # placement numbers count over every piece; HOLD_MOVE puts the piece on hold
        hold = numbers == HOLD_MOVE
        some = (numbers >= 0) & ~hold
        placed = np.where(some, np.searchsorted(table.number_first, numbers, side="right") - 1, placed)
        numbers = np.where(some, numbers - table.number_first[np.clip(placed, 0, P - 1)], numbers)
    rotation, column, row = _placement_fields(table, placed, numbers, ~hold & (numbers >= 0))
    boards = solution.boards[lo:hi]
    part["board"] = np.repeat(boards, P)
    part["rows"] = np.repeat(board_rows(boards, rules.width, rules.height), P)
    names = np.asarray(rules.piece_names)
    part["piece"] = names[to_place]
    part["rotation"], part["column"] = rotation, column
    if table.soft:
        part["row"] = row
    part["value"] = solution.values.reshape(-1)[lo * P : hi * P]
    part["placement"] = (
        numbers.astype(np.int32)
        if solution.player == "random"
        else solution.policy.reshape(-1)[lo * P : hi * P].astype(np.int32)
    )
    part["drawn"] = names[drawn]
    if choices is None:
        part["chance"] = t.draw_chances(np.arange(lo, hi)).reshape(-1)
    else:
        gives = np.repeat(np.asarray(choices[lo:hi], dtype=np.int64), P)
        part["chance"] = (gives == drawn).astype(np.float64)
        part["gives"] = names[gives]
    if rules.preview and t.queues is not None:
        queues = np.repeat(t.queues[lo:hi], P)
        seen = [(queues // P ** (rules.preview - 1 - k)) % P for k in range(1, rules.preview)] + [drawn]
        queue = names[seen[0]]
        for d in seen[1:]:
            queue = np.char.add(np.char.add(queue, " "), names[d])
        part["queue"] = queue
    if rules.hold and t.slots is not None:
        slot = np.repeat(t.slots[lo:hi], P)
        held = np.where(slot > P, slot - P, slot) - 1  # -1: empty
        part["held"] = np.where(held >= 0, names[np.clip(held, 0, P - 1)], "")
        part["locked"] = slot > P
        part["hold"] = hold
        part["placed"] = np.where((numbers >= 0) & ~hold, names[np.clip(placed, 0, P - 1)], "")


def _with_bag_left(out: np.ndarray, rules, bags: np.ndarray) -> np.ndarray:
    """``out`` with a ``bag_left`` field, less the states whose piece the bag lacks
    (built in slices of :data:`SLICE_STATES`, as the table)."""
    P = rules.n_pieces
    after = after_draw(rules)[np.repeat(bags, P), np.tile(np.arange(P), len(bags))]
    keep = after >= 0
    text = np.array(["" if b == full_bag(rules) else describe_bag(rules, b) for b in range(rules.bags)])
    width = max(1, max(len(x) for x in text))
    fields = (out.dtype.descr or []) + [("bag_left", f"<U{width}")]
    kept = np.empty(int(keep.sum()), dtype=fields)
    done = 0
    for start in range(0, len(out), SLICE_STATES):
        mine = keep[start : start + SLICE_STATES]
        into = kept[done : done + int(mine.sum())]
        for name in out.dtype.names or ():
            into[name] = out[name][start : start + SLICE_STATES][mine]
        into["bag_left"] = text[after[start : start + SLICE_STATES][mine]]
        done += len(into)
    return kept


def policy_table(solution: Solved, *, pieces: np.ndarray | str | None = None) -> Any:
    """:func:`policy_array` as a pandas ``DataFrame`` when pandas is installed
    (``pip install 'babytris[table]'``), else the structured numpy array."""
    array = policy_array(solution, pieces=pieces)
    try:
        import pandas
    except ImportError:
        return array
    columns = {}
    for name in array.dtype.names or ():
        column = array[name]
        if column.dtype.kind == "U":  # (pandas holds text as Python strings: made in slices, for Ctrl-C)
            column = np.empty(len(array), dtype=object)
            for start in range(0, len(array), SLICE_STATES):
                column[start : start + SLICE_STATES] = array[name][start : start + SLICE_STATES]
        columns[name] = column
    frame = pandas.DataFrame(columns, copy=False)
    frame["board"] = frame["board"].astype("uint64")
    return frame


def write_policy_csv(solution: Solved, path: str) -> int:
    """Write :func:`policy_array` to ``path`` as CSV (a header, one line per
    state), atomically; returns the number of rows written."""
    array = policy_array(solution)
    names = list(array.dtype.names or ())

    def write(f: IO[bytes]) -> None:
        import io

        text = io.TextIOWrapper(f, encoding="utf-8", newline="")
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(names)
        for start in range(0, len(array), SLICE_STATES):  # (in slices: Ctrl-C is answered between them)
            rows = array[start : start + SLICE_STATES]
            writer.writerows(zip(*(rows[name].tolist() for name in names)))
        text.flush()
        text.detach()

    replace_atomically(path, write)
    return len(array)


def board_rows(boards: np.ndarray, width: int, height: int) -> np.ndarray:
    """Each board as text: its rows top first, ``#`` filled and ``.`` empty,
    joined by ``/`` (a str array, one per board)."""
    boards = np.asarray(boards, dtype=np.uint64)
    n, line = len(boards), width + 1
    chars = np.full((n, height * line), ord("/"), dtype=np.uint8)
    for r in range(height):
        for c in range(width):
            bit = (boards >> np.uint64(r * width + c)) & np.uint64(1)
            chars[:, (height - 1 - r) * line + c] = np.where(bit == 1, ord("#"), ord("."))
    text = chars[:, : height * line - 1].copy()  # no trailing separator
    return text.view(f"S{height * line - 1}").ravel().astype(str)


def _placement_fields(
    table: Any, piece: np.ndarray, number: np.ndarray, some: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rotation, column and (soft moves) row of each placement, -1 where there is none."""
    n_pieces = len(table.placements)
    width = max(len(mine) for mine in table.placements)
    rotation = np.full((n_pieces, width), -1, dtype=np.int16)
    column, row = rotation.copy(), rotation.copy()
    for p, mine in enumerate(table.placements):
        rotation[p, : len(mine)] = [m.rotation for m in mine]
        column[p, : len(mine)] = [m.column for m in mine]
        row[p, : len(mine)] = [-1 if m.row is None else m.row for m in mine]
    p, k = np.clip(piece, 0, n_pieces - 1), np.clip(number, 0, width - 1)
    return (np.where(some, rotation[p, k], -1), np.where(some, column[p, k], -1), np.where(some, row[p, k], -1))
