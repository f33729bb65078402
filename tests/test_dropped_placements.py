"""Placement numbers dropped again when read (``Transitions.placement`` of big
tables of hard drops) equal the ones the enumeration stores, and a solve on
such a table reads only its chosen moves' numbers."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import small_rules

import babytris
from babytris import Rules
from babytris._moves import dropped_placements
from babytris.placements import engine
from babytris.resources import STORED_PLACEMENTS
from babytris.transitions import TableError, Transitions

enumeration = importlib.import_module("babytris.enumeration")


def dropping(rules: Rules, monkeypatch) -> Transitions:
    """``rules``' table built as a big one is: placement numbers left to drop again."""
    with monkeypatch.context() as m:
        m.setattr(enumeration, "STORED_PLACEMENTS", 0)
        return babytris.enumerate_boards(rules)


def test_only_tables_past_the_threshold_drop_their_pieces_again(monkeypatch):
    rules = Rules(width=4, height=5)
    stored = babytris.enumerate_boards(rules)
    assert stored.placement_stored and stored.n_moves <= STORED_PLACEMENTS
    t = dropping(rules, monkeypatch)
    assert not t.placement_stored
    assert t.nbytes == stored.nbytes - stored.placement.nbytes  # (494,910 moves: 989,820 bytes less)
    assert np.array_equal(t.placement, stored.placement)
    assert t.placement_stored and not t.placement.flags.writeable and t.nbytes == stored.nbytes


@given(rules=small_rules(variants=True))
@settings(max_examples=60, deadline=None)
def test_dropped_numbers_equal_the_stored_ones(rules):
    stored = babytris.enumerate_boards(rules)
    if rules.moves == "soft":  # (numbered by their search: always stored)
        with pytest.raises(ValueError, match="soft moves are numbered by their search"):
            dropped_placements(engine(rules), stored.boards, stored.offsets)
        return
    numbers = dropped_placements(engine(rules), stored.boards, stored.offsets, n_threads=2)
    assert numbers.dtype == np.uint16 and np.array_equal(numbers, stored.placement)
    rng = np.random.default_rng(len(stored.boards))
    counts = np.diff(stored.offsets)
    moves = np.where(counts > 0, (rng.random(stored.n_states) * counts).astype(np.int16), -1).astype(np.int16)
    chosen = dropped_placements(engine(rules), stored.boards, stored.offsets, moves)
    numbered = np.append(stored.placement.astype(np.int16), -1)  # (-1 for the states without a move)
    expected = numbered[np.where(moves >= 0, stored.offsets[:-1] + moves, stored.n_moves)]
    assert chosen.dtype == np.int16 and np.array_equal(chosen, expected)


def test_a_solve_reads_only_the_chosen_moves_numbers(monkeypatch):
    rules = Rules(width=4, height=5)
    t = dropping(rules, monkeypatch)
    solution = babytris.solve_transitions(t)
    assert not t.placement_stored  # (the solve dropped its chosen moves only)
    stored = babytris.solve(rules)
    assert np.array_equal(solution.policy, stored.policy)
    assert np.array_equal(solution.values, stored.values)


def test_a_saved_table_that_drops_again_loads_with_its_numbers(monkeypatch, tmp_path):
    rules = Rules(width=4, height=4)
    solution = babytris.solve_transitions(dropping(rules, monkeypatch))
    solution.save(tmp_path / "s.npz")
    loaded = babytris.load(tmp_path / "s.npz")
    assert loaded.transitions.placement_stored
    assert np.array_equal(loaded.transitions.placement, babytris.enumerate_boards(rules).placement)


def test_tables_the_engine_did_not_build_are_refused(monkeypatch):
    rules = Rules(width=4, height=4)
    t = dropping(rules, monkeypatch)
    other = Rules(width=4, height=4, top_out=True)  # (the same pieces, more moves)
    with pytest.raises(ValueError, match="not the ones the engine drops"):
        dropped_placements(engine(other), t.boards, t.offsets)
    with pytest.raises(ValueError, match="fewer moves than the table lists|not a move of its state"):
        dropped_placements(engine(other), t.boards, t.offsets, np.full(t.n_states, 2, dtype=np.int16))
    with pytest.raises(ValueError, match="moves\\[0\\] = 99 is not a move of its state"):
        dropped_placements(engine(rules), t.boards, t.offsets, np.full(t.n_states, 99, dtype=np.int16))
    with pytest.raises(ValueError, match="one entry per"):
        dropped_placements(engine(rules), t.boards[:-1], t.offsets)
    # Node tables (previews, hold, bags) derive their numbers from the plain table's: they must hold them.
    nodes = babytris.enumerate_boards(Rules(width=4, height=4, preview=1))
    with pytest.raises(TableError, match="placement: missing"):
        Transitions(
            nodes.rules,
            nodes.boards,
            nodes.layer_starts,
            nodes.offsets,
            nodes.next_board,
            nodes.lines,
            None,  # type: ignore[arg-type]
            0.0,
            queues=nodes.queues,
        )
