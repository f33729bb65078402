"""The 4-wide combo well (c4w): the fields with three residual cells and the
seven tetrominoes, with hold and previews, counted as c4w's study counts them."""

from __future__ import annotations

import numpy as np

from .registry import AGREES, DIFFERS, Measurement, claim

# --------------------------------------------------------------------------------------------
# c4w: the 4-wide combo well
# --------------------------------------------------------------------------------------------


@claim(
    "c4w-residues",
    "c4w",
    "fields |F| with 3 residual cells, no hold, no preview",
    40,
    "babytris.enumerate_boards(babytris.Rules(width=4, height=5, pieces='tetrominoes', objective='combo', "
    "start=babytris.Board.from_rows(['#.##'], height=5))).n_boards",
)
def _c4w_residues(fast: bool) -> Measurement:
    import babytris

    rules = babytris.Rules(
        width=4, height=5, pieces="tetrominoes", objective="combo", start=babytris.Board.from_rows(["#.##"], height=5)
    )
    t = babytris.enumerate_boards(rules)
    return Measurement(
        t.n_boards,
        AGREES if t.n_boards == 40 else DIFFERS,
        "3-cell residues reached from one of them by hard drops that clear a row",
    )


@claim(
    "c4w-residues-soft",
    "c4w",
    "fields |F| with 3 residual cells, no hold, no preview (pieces moved before they lock)",
    40,
    "babytris.enumerate_boards(babytris.Rules(width=4, height=5, pieces='tetrominoes', objective='combo', "
    "start=babytris.Board.from_rows(['#.##'], height=5), moves='soft')).n_boards",
)
def _c4w_residues_soft(fast: bool) -> Measurement:
    import babytris

    start = babytris.Board.from_rows(["#.##"], height=5)
    tables = {
        moves: babytris.enumerate_boards(
            babytris.Rules(width=4, height=5, pieces="tetrominoes", objective="combo", start=start, moves=moves)
        )
        for moves in ("soft", "hard")
    }
    soft, hard = tables["soft"], tables["hard"]
    same = np.array_equal(soft.boards, hard.boards)
    return Measurement(
        soft.n_boards,
        AGREES if soft.n_boards == 40 else DIFFERS,
        "c4w's placements come from a rotation system the user enters (its rs_builder), which lets a piece "
        "move and turn before it locks, with the game's wall kicks; babytris's soft moves (no kicks) reach "
        f"{'the same residues as' if same else 'other residues than'} its hard drops, with {soft.n_moves} moves "
        f"against {hard.n_moves}",
    )


def _c4w_rules(preview: int):
    import babytris

    return babytris.Rules(
        width=4,
        height=5,
        pieces="tetrominoes",
        objective="combo",
        start=babytris.Board.from_rows(["#.##"], height=5),
        preview=preview,
        hold=True,
        hold_start="drawn",
    )


@claim(
    "c4w-fields-with-hold",
    "c4w",
    "|F| with one hold: (residue, held piece) pairs, the slot never empty",
    280,
    "t = babytris.enumerate_boards(rules)  # 4x5 combo well, tetrominoes, hold=True, hold_start='drawn'; "
    "then the rows play reaches from t.start_nodes()",
)
def _c4w_fields_with_hold(fast: bool) -> Measurement:
    import babytris

    t = babytris.enumerate_boards(_c4w_rules(0))
    reached = t.reachable()
    assert t.slots is not None  # (a hold table)
    slots = np.unique(t.slots[reached])
    return Measurement(
        int(reached.sum()),
        AGREES if reached.sum() == 280 and slots.tolist() == list(range(1, 8)) else DIFFERS,
        "(residue, held piece) rows reached from the drawn start (hold_start='drawn'): only slots holding a "
        "piece, free to swap, occur",
    )


@claim(
    "c4w-states-hold-6-previews",
    "c4w",
    "states F x Q with one hold and 6 previews (|Q| = 7^6)",
    32_941_720,
    "reached (residue, held) rows of the drawn-hold table x 7^6 sequences; rows per sequence checked by "
    "search for 1-3 previews",
)
def _c4w_states_hold_6_previews(fast: bool) -> Measurement:
    import babytris

    fields = int(babytris.enumerate_boards(_c4w_rules(0)).reachable().sum())
    checked = []
    for preview in (1, 2) if fast else (1, 2, 3):
        t = babytris.enumerate_boards(_c4w_rules(preview))
        rows = int(t.reachable().sum())
        # c4w's sequence holds the piece to place and the previews: 7^(preview + 1) per field
        checked.append(rows * 7 == fields * 7 ** (preview + 1))
    count = fields * 7**6
    return Measurement(
        count,
        AGREES if count == 32_941_720 and all(checked) else DIFFERS,
        f"{fields} fields x 7^6: c4w's 6-piece sequence is the piece to place and 5 previews; with "
        f"{', '.join(str(k) for k in range(1, len(checked) + 1))} previews the search reaches every "
        "(field, sequence) pair (the table for 5 previews, 70 million states, is not built)",
    )


#: c4w's mirror map of the pieces (J, L, S, Z, I, O, T -> L, J, Z, S, I, O, T), by babytris's names.
MIRRORED = {"I4": "I4", "O": "O", "T": "T", "S": "Z", "Z": "S", "J": "L4", "L4": "J"}


def mirror_gaps(solution) -> np.ndarray:
    """How far each state's value lies from its mirror image's, the field
    mirrored and every piece (in hand, previewed, held) mapped as c4w maps
    them: float64 ``(n_boards, n_pieces)``, the row order of ``solution.values``."""
    t = solution.transitions
    rules = t.rules
    names = [p.name for p in rules.pieces]
    swap = np.array([names.index(MIRRORED[name]) for name in names])
    n = rules.n_pieces
    mirrored_rows = np.empty(t.n_boards, dtype=np.int64)
    for row in range(t.n_boards):
        board = int(t.boards[row])
        flipped = 0
        for r in range(rules.height):
            bits = (board >> (r * rules.width)) & ((1 << rules.width) - 1)
            flipped |= int(f"{bits:0{rules.width}b}"[::-1], 2) << (r * rules.width)
        queue = tuple(int(swap[p]) for p in t.queue_of(row)) or None
        slot = int(t.slots[row]) if t.slots is not None else 0
        held = None if slot == 0 else int(swap[(slot - 1) % n])
        mirrored_rows[row] = t.board_index(flipped, queue, held, locked=slot > n)
    return np.abs(solution.values - solution.values[mirrored_rows][:, swap])


@claim(
    "c4w-mirror-symmetry-hold-previews",
    "c4w",
    "V of a state and of its mirror image (field mirrored; J<->L, S<->Z in hand, hold and previews), "
    "one hold and two previews",
    "the same",
    "s = babytris.solve(rules, discount=0.9)  # 4x5 combo well, tetrominoes, hold=True, hold_start='drawn', "
    "preview=2; babytris.claims.c4w.mirror_gaps(s).max()",
)
def _c4w_mirror(fast: bool) -> Measurement:
    import babytris

    solution = babytris.solve(_c4w_rules(2), discount=0.9, tol=1e-12)
    gaps = mirror_gaps(solution)
    worst = float(gaps.max())
    return Measurement(
        f"largest gap {worst:.1e}",
        AGREES if worst <= 1e-9 else DIFFERS,
        f"every one of the {solution.values.size:,} (field, held, queue, piece) states of the drawn-hold table with "
        f"two previews, solved at discount 0.9 to 1e-12 (c4w's V counts combos undiscounted), against its mirror "
        "image: babytris's placements are hard drops of every orientation, a mirror-symmetric set, so c4w's "
        "caveat (the I's asymmetric SRS rotation) does not arise; rules.mirror=True, which merges the two, is "
        "refused with hold and previews, so the states are compared one by one",
    )


@claim(
    "c4w-groups-share-v",
    "c4w",
    "V within each group of the minimization's partition, one hold and one preview",
    "members of a group always have the same V",
    "s = babytris.solve(rules, discount=0.9); p = babytris.minimize(s.transitions)  # hold, preview=1; "
    "the spread of s.values within each of p.labels' groups",
)
def _c4w_groups(fast: bool) -> Measurement:
    import babytris

    solution = babytris.solve(_c4w_rules(1), discount=0.9, tol=1e-12)
    partition = babytris.minimize(solution.transitions)
    labels, values = partition.labels.ravel(), solution.values.ravel()
    low = np.full(partition.n_classes, np.inf)
    high = np.full(partition.n_classes, -np.inf)
    np.minimum.at(low, labels, values)
    np.maximum.at(high, labels, values)
    spread = float((high - low).max())
    return Measurement(
        f"largest spread {spread:.1e}",
        AGREES if spread <= 1e-9 else DIFFERS,
        f"the {values.size:,} states fall in {partition.n_classes:,} groups (babytris.minimize, c4w's splitting "
        f"from one group); the values of a solve to 1e-12 spread at most {spread:.1e} within a group",
    )
