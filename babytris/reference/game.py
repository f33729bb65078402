"""The game for the pure-Python twin (:mod:`babytris.reference`): boards as
sets of filled ``(col, row)`` cells, rotations, the hard drop, line clears,
the lost board, the search for reachable boards (and preview/hold nodes),
and the rewards of a move.  It reads only the rules' data; it shares no code
with the compiled engine it is the oracle of.
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache
from itertools import product
from typing import Any

from ..game.pieces import Placement
from ..game.rules import Rules

__all__ = [
    "orientations",
    "moves",
    "reachable_boards",
    "holes",
    "max_height",
    "move_reward",
    "nodes",
    "node_moves",
    "board_of",
    "canonical",
    "land",
    "lost_board",
    "filled_cells",
    "dead_value",
    "to_cells",
    "to_int",
    "start_chance",
    "draw_chance",
    "bags",
    "bag_after",
    "reachable_nodes",
    "Cells",
]

Cells = frozenset  # of (col, row)


def orientations(cells) -> list[tuple[tuple[int, int], ...]]:
    """Distinct quarter-turn orientations, rotation 0 first, each normalised and sorted."""

    def normal(cs):
        min_x = min(x for x, _ in cs)
        min_y = min(y for _, y in cs)
        return tuple(sorted(((x - min_x, y - min_y) for x, y in cs), key=lambda c: (c[1], c[0])))

    found = []
    shape = normal(cells)
    for _ in range(4):
        if shape not in found:
            found.append(shape)
        shape = normal([(y, -x) for x, y in shape])  # clockwise quarter turn
    return found


@lru_cache(maxsize=256)
def _orientations(cells) -> tuple:
    return tuple(orientations(cells))


def to_cells(board: int, width: int, height: int) -> Cells:
    return frozenset((c, r) for r in range(height) for c in range(width) if board >> (r * width + c) & 1)


def to_int(cells: Cells, width: int) -> int:
    return sum(1 << (r * width + c) for c, r in cells)


def moves(rules: Rules, board: int, piece: int) -> list[tuple[Placement, int, int]]:
    """Legal moves of piece index ``piece`` on ``board``: ``[(placement, next_board, rows_cleared)]``.

    The piece starts above the board and falls one row at a time until the
    next row down is blocked; a move is legal when every cell then lies inside
    the board.  With ``rules.no_holes`` every empty cell under a filled one
    is then filled.  Full rows are removed and the rows above fall by one.
    Under the combo objective a placement that clears no row is not a move.
    With ``rules.top_out`` every placement is a move, but one that lies
    outside the board or leaves a cell in the top row leads to the lost board
    (:func:`lost_board`) clearing no row, and the lost board has no move.
    With ``rules.mirror`` the board after is the lesser of it and its mirror image.
    With ``rules.moves == "soft"`` see :func:`soft_moves`.
    """
    if rules.moves == "soft":
        return soft_moves(rules, board, piece)
    out = []
    number = 0
    filled = to_cells(board, rules.width, rules.height)
    for rotation, shape in enumerate(orientations(rules.pieces[piece].cells)):
        if 1 + max(y for _, y in shape) > rules.height:
            continue
        for column in range(rules.width - max(x for x, _ in shape)):
            landed = land(rules, board, piece, rotation, column, filled)
            if landed is not None:
                out.append((Placement(rules.pieces[piece].name, rotation, column, number), landed[0], landed[1]))
            number += 1
    return out


def soft_moves(rules: Rules, board: int, piece: int) -> list[tuple[Placement, int, int]]:
    """Legal moves of piece index ``piece`` on ``board`` when it may move
    down, left, right and turn before it locks: ``[(placement, next_board,
    rows_cleared)]``, as :func:`moves`.

    The piece starts wholly above the board in any orientation that fits
    the board's height and any column, and steps to a free position (cells
    inside the side walls, above the floor, on no filled cell; cells above
    the top row are free): one row down, one column left or right, or a
    quarter turn either way to the next or previous orientation with the
    same bottom-left corner.  It locks at every position it reaches from
    which it cannot step down; each is landed as :func:`land` lands a piece
    at that row, and each distinct (next board, rows cleared) is one move,
    numbered ``n * height + row`` for the n-th (orientation, column) of the
    piece by the lowest number that gives it.
    """
    width, height = rules.width, rules.height
    filled = to_cells(board, width, height)
    shapes = _orientations(rules.pieces[piece].cells)
    fits = [1 + max(y for _, y in shape) <= height for shape in shapes]
    numbering: dict[tuple[int, int], int] = {}
    for rotation, shape in enumerate(shapes):
        if fits[rotation]:
            for column in range(width - max(x for x, _ in shape)):
                numbering[rotation, column] = len(numbering)

    def free(rotation: int, column: int, row: int) -> bool:
        if (rotation, column) not in numbering or row < 0:
            return False
        return not any((column + x, row + y) in filled for x, y in shapes[rotation])

    seen = {(r, c, height) for r, c in numbering}
    todo = deque(seen)
    while todo:
        r, c, row = todo.popleft()
        steps = [(r, c, row - 1), (r, c - 1, row), (r, c + 1, row)]
        steps += [((r + 1) % len(shapes), c, row), ((r - 1) % len(shapes), c, row)]
        for step in steps:
            if step not in seen and free(*step):
                seen.add(step)
                todo.append(step)
    found: dict[tuple[int, int], Placement] = {}
    for r, c, row in sorted(seen, key=lambda p: (numbering[p[0], p[1]], p[2])):
        if row == height or free(r, c, row - 1):
            continue  # not at rest
        landed = land(rules, board, piece, r, c, filled, row=row)
        if landed is not None and landed[:2] not in found:
            number = numbering[r, c] * height + row
            found[landed[:2]] = Placement(rules.pieces[piece].name, r, c, number, row)
    return [(placement, after, rows) for (after, rows), placement in found.items()]


def lost_board(rules: Rules) -> int:
    """With ``rules.top_out``, where a placement that tops out leads: the top row full."""
    return to_int(frozenset((c, rules.height - 1) for c in range(rules.width)), rules.width)


def land(
    rules: Rules,
    board: int,
    piece: int,
    rotation: int,
    column: int,
    filled: Cells | None = None,
    row: int | None = None,
) -> tuple[int, int, int] | None:
    """Drop piece index ``piece`` in ``rotation`` with its left edge at
    ``column`` onto ``board`` (``filled``: its cells, if known; ``row``: the
    row its bottom locks at, if it was moved there, else where it falls to):
    ``(next_board, rows_cleared, cells_filled)`` (the cells ``rules.no_holes``
    fills), or None if that is not a move."""
    width, height = rules.width, rules.height
    if filled is None:
        filled = to_cells(board, width, height)
    if rules.top_out and any(r == height - 1 for _, r in filled):
        return None  # the game is lost
    shape = _orientations(rules.pieces[piece].cells)[rotation]
    if column < 0 or column + max(x for x, _ in shape) >= width:
        return None  # a cell off the side of the board
    if row is None:
        row = _rest_row(shape, column, filled, height)
    cells = {(column + x, row + y) for x, y in shape}
    if any(r >= height for _, r in cells):
        return (lost_board(rules), 0, 0) if rules.top_out else None
    after = set(filled) | cells
    n_filled = 0
    if rules.no_holes:
        top = [-1] * width
        for c, r in after:
            top[c] = max(top[c], r)
        for c in range(width):
            for r in range(top[c]):
                if (c, r) not in after:
                    after.add((c, r))
                    n_filled += 1
    full = [r for r in range(height) if all((c, r) in after for c in range(width))]
    kept = sorted(r for r in range(height) if r not in full)
    shifted = {(c, kept.index(r)) for c, r in after if r not in full}
    if not full and rules.objective == "combo":
        return None
    if rules.top_out and any(r == height - 1 for _, r in shifted):
        return lost_board(rules), 0, 0
    return canonical(rules, to_int(frozenset(shifted), width)), len(full), n_filled


def _rest_row(shape, column: int, filled, height: int) -> int:
    """The row the bottom of ``shape`` (dropped from fully above the board
    with its left edge at ``column``) comes to rest on."""
    row = height
    while row > 0 and not any((column + x, row - 1 + y) in filled for x, y in shape):
        row -= 1
    return row


def landed_board(rules: Rules, board: int, placement: Any) -> int:
    """``board`` with ``placement``'s piece landed and no row cleared yet
    (``board`` itself for ``"hold"``)."""
    if not isinstance(placement, Placement):
        return board
    piece = [p.name for p in rules.pieces].index(placement.piece)
    shape = _orientations(rules.pieces[piece].cells)[placement.rotation]
    filled = to_cells(board, rules.width, rules.height)
    row = _rest_row(shape, placement.column, filled, rules.height) if placement.row is None else placement.row
    return to_int(frozenset(filled | {(placement.column + x, row + y) for x, y in shape}), rules.width)


def filled_cells(rules: Rules, board: int, placement: Any) -> int:
    """The cells ``rules.no_holes`` fills when ``placement`` (a Placement, or
    ``"hold"``, which fills none) is made on ``board``."""
    if not isinstance(placement, Placement):
        return 0
    piece = [p.name for p in rules.pieces].index(placement.piece)
    landed = land(rules, board, piece, placement.rotation, placement.column, row=placement.row)
    return 0 if landed is None else landed[2]


def canonical(rules: Rules, board: int) -> int:
    """With ``rules.mirror``, the lesser of the board and its mirror image; else the board."""
    if not rules.mirror:
        return board
    width, height = rules.width, rules.height
    image = to_int(frozenset((width - 1 - c, r) for c, r in to_cells(board, width, height)), width)
    return min(board, image)


def reachable_boards(rules: Rules, start: int | None = None) -> list[int]:
    """Every board reachable from ``start`` (default: ``rules.start``), in
    breadth-first discovery order (pieces in rule order, moves in placement order)."""
    if start is None:
        start = canonical(rules, rules.start)
    seen = {start}
    order = [start]
    queue = deque([start])
    while queue:
        board = queue.popleft()
        for piece in range(len(rules.pieces)):
            for _, after, _ in moves(rules, board, piece):
                if after not in seen:
                    seen.add(after)
                    order.append(after)
                    queue.append(after)
    return order


def nodes(rules: Rules) -> list:
    """The rows of the game: the reachable boards, or with previews, hold or a
    bag every ``(board, queue)``, ``(board, queue, held, locked)`` with hold,
    and with a bag its contents last (``(board, queue, bag)`` or ``(board,
    queue, held, locked, bag)``, the bag a tuple of copies left per piece).
    The queue is a tuple of ``preview`` piece indices (the next to place first)."""
    boards = reachable_boards(rules)
    if not (rules.preview or rules.hold or rules.randomizer == "bag"):
        return boards
    n = len(rules.pieces)
    queues = list(product(range(n), repeat=rules.preview))
    # the hold slot: empty, a piece held, a piece just held (locked)
    slots = [(None, False)] + [(p, False) for p in range(n)] + [(p, True) for p in range(n)]
    rows: list[tuple] = [(b, q) for b in boards for q in queues]
    if rules.hold:
        rows = [(b, q, held, locked) for b, q in rows for held, locked in slots]
    if rules.randomizer == "bag":
        rows = [row + (bag,) for row in rows for bag in bags(rules)]
    return rows


def bags(rules: Rules) -> list[tuple[int, ...]]:
    """Every content a bag can have: copies left of each piece, not all 0."""
    n, copies = len(rules.pieces), rules.bag_copies
    return [c for c in product(range(copies + 1), repeat=n) if any(c)]


def draw_chance(rules: Rules, node, piece: int) -> float:
    """The chance that ``piece`` is drawn next at ``node``: its probability,
    or with a bag its share of the copies left."""
    if rules.randomizer != "bag":
        return rules.probabilities[piece]
    bag = node[-1]
    return bag[piece] / sum(bag)


def bag_after(rules: Rules, bag: tuple[int, ...], piece: int) -> tuple[int, ...]:
    """The bag left once ``piece`` is drawn from ``bag``, refilled if emptied."""
    left = tuple(c - (p == piece) for p, c in enumerate(bag))
    return left if any(left) else (rules.bag_copies,) * len(bag)


def node_moves(rules: Rules, node, drawn: int) -> list[tuple[Any, Any, int]]:
    """Moves once piece ``drawn`` comes to ``node``: ``[(placement, next node,
    rows cleared)]``.  Without previews the drawn piece is placed; with them
    the queue's first is, and the drawn piece joins the queue's end.  With
    hold (nodes ``(board, queue, held, locked)``), also the held piece's
    placements (a swap), or with the slot empty the move ``"hold"``.  With a
    bag, none if the bag holds no ``drawn``; the next nodes carry the bag left."""
    bagged = rules.randomizer == "bag"
    if not (rules.preview or rules.hold or bagged):
        return moves(rules, node, drawn)
    if draw_chance(rules, node, drawn) == 0:
        return []
    tail = (bag_after(rules, node[-1], drawn),) if bagged else ()
    board, queue = node[0], node[1]
    known = queue + (drawn,)
    rest = known[1:]
    if not rules.hold:
        return [(m, (after, rest) + tail, rows) for m, after, rows in moves(rules, board, known[0])]
    held, locked = node[2], node[3]
    out: list[tuple[Any, Any, int]] = [
        (m, (after, rest, held, False) + tail, rows) for m, after, rows in moves(rules, board, known[0])
    ]
    if locked:
        return out
    if held is None:  # put this one on hold and place the next: a step placing nothing
        out.append(("hold", (board, rest, known[0], True) + tail, 0))
    elif held != known[0]:  # swap: place the held piece, hold this one (the same piece: no swap)
        out += [(m, (after, rest, known[0], False) + tail, rows) for m, after, rows in moves(rules, board, held)]
    return out


def board_of(node) -> int:
    """The board of a row (a board, or a (board, queue, ...) node)."""
    return node[0] if isinstance(node, tuple) else node


def start_chance(rules: Rules, node) -> float:
    """The chance that a game starts at ``node``: on the start board, with
    the queue (and with ``hold_start="drawn"`` the held piece, drawn first)
    dealt before play, the bag then left, the hold slot otherwise empty."""
    if board_of(node) != canonical(rules, rules.start):
        return 0.0
    if not isinstance(node, tuple):
        return 1.0
    held, locked = (node[2], node[3]) if rules.hold else (None, False)
    drawn_hold = rules.hold and rules.hold_start == "drawn"
    if locked or (held is None) == drawn_hold:
        return 0.0
    bag = (rules.bag_copies,) * len(rules.pieces)
    chance = 1.0
    for p in ((held,) if drawn_hold else ()) + node[1]:
        chance *= draw_chance(rules, (bag,), p)
        if chance == 0:  # the bag holds no p: no deal gives this queue
            return 0.0
        bag = bag_after(rules, bag, p)
    if rules.randomizer == "bag" and bag != node[-1]:
        return 0.0
    return chance


def reachable_nodes(rules: Rules) -> set:
    """The nodes some play reaches from a start node, whatever pieces come
    (of positive chance): a breadth-first search over :func:`node_moves`."""
    all_nodes = nodes(rules)
    seen = {node for node in all_nodes if start_chance(rules, node) > 0}
    frontier = deque(seen)
    while frontier:
        node = frontier.popleft()
        for p in range(len(rules.pieces)):
            for _, after, _ in node_moves(rules, node, p):
                if after not in seen:
                    seen.add(after)
                    frontier.append(after)
    return seen


def holes(board: int, width: int, height: int) -> int:
    """Empty cells under a filled cell of their column."""
    filled = to_cells(board, width, height)
    return sum(
        1
        for c in range(width)
        for r in range(height)
        if (c, r) not in filled and any((c, above) in filled for above in range(r + 1, height))
    )


def max_height(board: int, width: int, height: int) -> int:
    """Highest filled row, counting from 1 (0 for the empty board)."""
    return max((r + 1 for _, r in to_cells(board, width, height)), default=0)


def move_reward(
    rules: Rules,
    board: int,
    after: int,
    rows: int,
    opponent: Any,
    reward: Any,
    filled: int = 0,
    placement: Any = None,
) -> float:
    """A move's reward: its points; with ``reward`` (a :class:`~babytris.Reward`)
    ``lines * rows + score * points - height * max_height(after) - gaps * holes(after)
    - new_holes * filled`` (``filled``: the cells ``rules.no_holes`` filled;
    with ``reward.before_clear``, height and holes of the board with
    ``placement``'s piece landed instead of ``after``); with
    ``opponent="gaps"`` the holes after it less the holes before.  A move
    that tops out (to the lost board) scores ``score * line_scores[0] - loss``
    (0 for ``"gaps"``)."""
    w, h = rules.width, rules.height
    lost = rules.top_out and after == lost_board(rules)
    if opponent == "gaps":
        return 0.0 if lost else float(holes(after, w, h) - holes(board, w, h))
    if lost:
        return rules.line_scores[0] if reward is None else reward.score * rules.line_scores[0] - reward.loss
    points = rules.line_scores[rows]
    if reward is None:
        return points
    measured = landed_board(rules, board, placement) if getattr(reward, "before_clear", False) else after
    return (
        reward.lines * rows
        + reward.score * points
        - reward.height * max_height(measured, w, h)
        - reward.gaps * holes(measured, w, h)
        - reward.new_holes * filled
    )


def dead_value(rules: Rules, reward: Any) -> float:
    """The value of a state whose piece has no move: ``-loss``, but 0 with
    ``rules.top_out`` (the move that lost paid it) or without a reward."""
    return 0.0 if reward is None or rules.top_out else -reward.loss
