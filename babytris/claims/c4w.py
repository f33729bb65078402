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
