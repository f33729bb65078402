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
from babytris.engine._moves import dropped_placements
from babytris.engine.placements import engine
from babytris.engine.resources import STORED_PLACEMENTS
from babytris.engine.transitions import TableError, Transitions

enumeration = importlib.import_module("babytris.engine.enumeration")


def read_at_once(read, n_threads: int = 4) -> list:
    """What ``read()`` returns to each of ``n_threads`` threads started at once."""
    import threading

    seen: list = []
    threads = [threading.Thread(target=lambda: seen.append(read())) for _ in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return seen


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


def test_a_solve_numbers_its_chosen_moves_only_when_its_policy_is_read(monkeypatch):
    from babytris.results.solution import ChosenMoves

    rules = Rules(width=4, height=5)
    t = dropping(rules, monkeypatch)
    solution = babytris.solve_transitions(t)
    stored = babytris.solve(rules)
    held = solution.__dict__["_policy"]
    assert isinstance(held, ChosenMoves) and held.rows.shape == stored.policy.shape
    assert solution.nbytes == stored.nbytes - stored.transitions.placement.nbytes  # (no numbering to count it)
    assert isinstance(solution.__dict__["_policy"], ChosenMoves)
    assert np.array_equal(solution.policy, stored.policy)
    assert solution.__dict__["_policy"] is solution.policy  # (numbered once, then held)
    assert not t.placement_stored  # (the solve dropped its chosen moves only)
    assert np.array_equal(solution.values, stored.values)
    assert solution.best_action(int(stored.boards[5]), 1) == stored.best_action(int(stored.boards[5]), 1)


def test_readers_of_a_policy_at_once_share_one_array(monkeypatch):
    import pickle

    solution = babytris.solve_transitions(dropping(Rules(width=4, height=4), monkeypatch))
    again = pickle.loads(pickle.dumps(solution))  # (the moves not yet numbered travel as they are)
    seen = read_at_once(lambda: solution.policy)
    assert len(seen) == 4 and all(array is seen[0] for array in seen)
    assert np.array_equal(again.policy, seen[0]) and np.array_equal(seen[0], babytris.solve(solution.rules).policy)


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
    with pytest.raises(ValueError, match="not the ones the engine drops|not a move of its state"):
        dropped_placements(engine(other), t.boards, t.offsets, np.full(t.n_states, 2, dtype=np.int16))
    with pytest.raises(ValueError, match=r"moves\[0\] = 99 is not a move of its state: must be in \[-1, \d+\)"):
        dropped_placements(engine(rules), t.boards, t.offsets, np.full(t.n_states, 99, dtype=np.int16))
    with pytest.raises(ValueError, match=r"offsets must hold len\(boards\) \* n_pieces \+ 1 = 25,955 entries"):
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


def test_a_table_of_other_rules_is_refused_when_its_chosen_moves_are_numbered(monkeypatch):
    """A table the engine would not build for its rules (here: the combo
    objective's moves under plain rules) is refused, not numbered wrongly."""
    combo = dropping(Rules(width=4, height=4, objective="combo", start=0b0111_0111), monkeypatch)
    plain = Rules(width=4, height=4, start=0b0111_0111)
    t = Transitions(plain, combo.boards, combo.layer_starts, combo.offsets, combo.next_board, combo.lines, None, 0.0)  # type: ignore[arg-type]
    counts = np.diff(t.offsets)
    with pytest.raises(ValueError, match="not the ones the engine drops"):
        t.chosen_placements(np.where(counts > 0, 0, -1))
    with pytest.raises(ValueError, match="not the ones the engine drops"):
        _ = t.placement


def test_one_state_or_a_rate_drops_again_only_what_it_reads(monkeypatch):
    rules = Rules(width=4, height=5)
    stored = babytris.solve(rules)
    t = dropping(rules, monkeypatch)
    solution = babytris.solve_transitions(t)
    for state in (0, 1, 777, t.n_states - 1):
        assert np.array_equal(t.state_placements(state), stored.transitions.state_placements(state))
    assert solution.action_values(0, 0) == stored.action_values(0, 0)
    assert not t.placement_stored
    small = Rules(width=4, height=4)
    rate = babytris.long_run_rate(dropping(small, monkeypatch))
    assert np.array_equal(rate.policy, babytris.long_run_rate(small).policy)


def test_readers_at_once_share_one_array(monkeypatch):
    t = dropping(Rules(width=4, height=5), monkeypatch)
    seen = read_at_once(lambda: t.placement)
    assert len(seen) == 4 and all(array is seen[0] for array in seen)


def test_a_game_past_the_moves_a_table_holds_is_refused_before_the_search(monkeypatch):
    from babytris import MemoryLimitError

    # (4x8 is forecast from 4x4 and 4x5: about 1.4e9 moves, under the real limit)
    monkeypatch.setattr(enumeration, "MAX_MOVES", 10**6)
    with pytest.raises(MemoryLimitError, match=r"4x8: about [\d,]+ moves: a move table holds at most .*forecast"):
        babytris.enumerate_boards(Rules(width=4, height=8), max_memory=2**45)
