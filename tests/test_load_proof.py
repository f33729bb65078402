"""A loaded result proves itself (issue 38): each forgery the issue lists is
refused with a SolutionFileError naming what differs, even with the file's
SHA-256 digests recomputed, as a forger would; ``verify=False`` loads it,
marked unverified in the repr and the command line's ``--json``."""

import dataclasses
import json
import re
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

import babytris
from babytris.files import tie_rule
from babytris.files.persist import SolutionFileError
from babytris.results.saving import digests


def _contents(path):
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """4x4 solutions saved (drawn pieces, the minimax opponent) and their contents."""
    folder = tmp_path_factory.mktemp("proof")
    out = {}
    for name, options in (("random", {}), ("minimax", {"opponent": "minimax"})):
        path = folder / f"{name}.npz"
        babytris.solve(width=4, height=4, **options).save(path)
        out[name] = _contents(path)
    return folder, out


def forged(folder, contents, name="forged.npz", meta=None, rules=None, **arrays):
    """``contents`` with ``meta`` settings, ``rules`` fields and ``arrays`` replaced, and every
    digest recomputed (so that the digests alone cannot catch the forgery)."""
    fields = json.loads(str(contents["meta"]))
    fields.update(meta or {})
    fields["rules"] = {**fields["rules"], **(rules or {})}
    out = {key: value for key, value in contents.items() if key != "meta"}
    out.update(arrays)
    fields.pop("digests", None)
    fields["digests"] = digests(fields, out)
    path = folder / name
    np.savez_compressed(path, meta=np.array(json.dumps(fields)), **out)
    return path


def _refused(path, field, words=None):
    with pytest.raises(SolutionFileError, match=words) as info:
        babytris.load(path)
    assert info.value.field == field, str(info.value)
    assert str(path) in str(info.value)
    return str(info.value)


def test_a_genuine_file_is_verified(files, tmp_path):
    solution = babytris.solve(width=4, height=4)
    solution.save(tmp_path / "s.npz")
    loaded = babytris.load(tmp_path / "s.npz")
    assert loaded.verified and repr(loaded) == repr(solution)
    assert (loaded.converged, loaded.error_bound, loaded.tie_slack) == (
        solution.converged,
        solution.error_bound,
        solution.tie_slack,
    )


@pytest.mark.parametrize(
    "change",
    [
        lambda v: 2 * v,  # issue 38: start 18.24 instead of 9.12, "converged, error <= 9.4e-10"
        lambda v: -v,
        lambda v: np.full_like(v, 1e300),
        lambda v: v * 1e300,
        lambda v: v + np.where(np.arange(v.size).reshape(v.shape) == 4321, 5.0, 0.0),
        lambda v: v + 1e-6,  # a shift the form cannot see, beyond the claimed residual
    ],
    ids=["doubled", "negated", "1e300", "times 1e300", "one +5", "all +1e-6"],
)
def test_edited_values_are_refused(files, change):
    folder, contents = files
    values = change(contents["random"]["solution_values"])
    message = _refused(forged(folder, contents["random"], solution_values=values), "solution_values")
    assert "one Bellman sweep over them moves state" in message and "the saved residual" in message


@pytest.mark.parametrize(
    "meta, rules",
    [
        ({"discount": 0.5}, None),
        (None, {"line_scores": [0.0, 1.0, 3.0, 7.0]}),
        (None, {"probabilities": [0.6, 0.4]}),
        ({"residual": 1e-12, "converged": True}, None),  # a tighter claim than the values hold
    ],
    ids=["discount 0.5", "line scores", "probabilities", "residual"],
)
def test_edited_settings_are_refused(files, meta, rules):
    folder, contents = files
    saved = contents["random"]
    arrays = {}
    if meta and "residual" in meta:
        arrays["solution_residuals"] = np.concatenate([saved["solution_residuals"][:-1], [meta["residual"]]])
    _refused(forged(folder, saved, meta=meta, rules=rules, **arrays), "solution_values")


def test_the_opponent_changed_to_minimax_is_refused(files):
    folder, contents = files
    saved = contents["random"]
    values = saved["solution_values"]
    # with the piece choices a minimax solve of these values would make, so that the form is whole
    pieces = np.argmin(values, axis=1).astype(np.int16)
    path = forged(folder, saved, meta={"opponent": "minimax"}, solution_opponent_policy=pieces)
    _refused(path, "solution_values")


def test_the_opponents_policy_flipped_is_refused(files):
    folder, contents = files
    saved = contents["minimax"]
    flipped = (1 - saved["solution_opponent_policy"]).astype(np.int16)
    message = _refused(forged(folder, saved, solution_opponent_policy=flipped), "solution_opponent_policy")
    assert "not its best choice" in message


def test_other_legal_moves_are_refused(files):
    # issue 38: play then scored 2.8 a game instead of 221
    folder, contents = files
    saved = contents["random"]
    table = babytris.load(forged(folder, saved)).transitions
    counts = np.diff(table.offsets)
    policy = np.full(table.n_states, -1, dtype=np.int16)
    for s in np.flatnonzero(counts > 0):  # each state's last legal move
        policy[s] = table.placement[table.offsets[s + 1] - 1]
    policy = policy.reshape(saved["solution_policy"].shape)
    assert not np.array_equal(policy, saved["solution_policy"])
    message = _refused(forged(folder, saved, solution_policy=policy), "solution_policy")
    assert "not greedy within the tie slack" in message


@pytest.mark.parametrize("rules", [{"mirror": True}, {"moves": "soft"}], ids=["mirror", "soft"])
def test_edited_rule_flags_are_refused(files, rules):
    folder, contents = files
    with pytest.raises(SolutionFileError) as info:
        babytris.load(forged(folder, contents["random"], rules=rules))
    assert info.value.field is not None and info.value.field.startswith("table_"), str(info.value)


def test_an_edited_table_is_refused(files):
    folder, contents = files
    saved = contents["random"]
    swapped = saved["table_next_board"].copy()
    swapped[[100, 101]] = swapped[[101, 100]]
    assert swapped[100] != swapped[101]
    _refused(
        forged(folder, saved, table_next_board=swapped),
        "table_next_board",
        r"\[100\] is .* where the rules' own table \(re-derived\) has",
    )
    # without digests, as files saved before they were kept: read, and compared entry by entry
    fields = json.loads(str(saved["meta"]))
    del fields["digests"]
    old = {**saved, "meta": np.array(json.dumps(fields)), "table_next_board": swapped}
    np.savez_compressed(folder / "old.npz", **old)
    _refused(folder / "old.npz", "table_next_board", r"\[100\] is .* where the rules' own table \(re-derived\) has")
    lines = saved["table_lines"].copy()
    lines[np.flatnonzero(lines == 0)[7]] = 1
    _refused(forged(folder, saved, table_lines=lines), "table_lines")


def test_offsets_that_do_not_hold_the_rules_moves_are_refused(files):
    # The proof writes the rules' moves at the file's offsets (no count of its own): a move taken
    # from one row into the next (the total kept) is refused, naming the offset, by a load and by
    # the proof of a file loaded unverified.
    from babytris.files import proof

    folder, contents = files
    saved = contents["random"]
    offsets = saved["table_offsets"].copy()
    s = next(i for i in range(500, len(offsets)) if offsets[i] - offsets[i - 1] >= 2)
    offsets[s] -= 1
    path = forged(folder, saved, name="offsets.npz", table_offsets=offsets)
    words = rf"\[{s:,}\] is {offsets[s]} where the rules' own table \(re-derived\) has {offsets[s] + 1}"
    _refused(path, "table_offsets", words)
    unverified = babytris.load(path, verify=False)
    with pytest.raises(SolutionFileError, match=words) as info:
        proof.prove(path, unverified)
    assert info.value.field == "table_offsets"


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_forged_member_appended_is_refused(files, tmp_path):
    # issue 38: the second member of a name won; here its digest is the metadata's too
    folder, contents = files
    saved = contents["random"]
    doubled = forged(folder, saved, name="doubled.npz", solution_values=2 * saved["solution_values"])
    with zipfile.ZipFile(doubled) as archive:
        second = archive.read("solution_values.npy")
    path = tmp_path / "appended.npz"
    with zipfile.ZipFile(forged(folder, saved)) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            out.writestr(info.filename, src.read(info) if info.filename != "meta.npy" else _meta_of(doubled))
        out.writestr("solution_values.npy", second)
    with pytest.raises(SolutionFileError, match="appears twice"):
        babytris.load(path)


def _meta_of(path):
    with zipfile.ZipFile(path) as archive:
        return archive.read("meta.npy")


def test_verify_false_loads_a_forgery_marked_unverified(files):
    folder, contents = files
    saved = contents["random"]
    path = forged(folder, saved, solution_values=2 * saved["solution_values"])
    loaded = babytris.load(path, verify=False)
    assert not loaded.verified and "UNVERIFIED" in repr(loaded)
    with pytest.raises(ValueError, match="verify must be"):
        babytris.load(path, verify="no")


def test_the_command_line_refuses_a_forgery_and_marks_an_unverified_load(files):
    folder, contents = files
    saved = contents["random"]
    path = forged(folder, saved, name="cli.npz", solution_values=2 * saved["solution_values"])

    def play(*options):
        command = [sys.executable, "-m", "babytris", "play", "--solution", str(path), "--placements", "2", "--json"]
        return subprocess.run([*command, *options], capture_output=True, text=True, timeout=120)

    refused = play()
    assert refused.returncode == 6 and "solution_values" in refused.stderr and not refused.stdout
    trusted = play("--no-verify")
    assert trusted.returncode == 0, trusted.stderr
    assert json.loads(trusted.stdout)["verified"] is False
    genuine = forged(folder, saved, name="cli.npz")
    assert genuine == path
    assert json.loads(play().stdout)["verified"] is True


def test_an_opening_that_is_not_the_opponents_best_is_refused(tmp_path):
    # with previews an optimising opponent chooses the opening queue; ties="last" keeps its choice in the file
    solution = babytris.solve(width=3, height=4, preview=1, opponent="minimax", ties="last")
    path = tmp_path / "opening.npz"
    solution.save(path)
    assert babytris.load(path).opening_row == solution.opening_row is not None
    rows, _ = solution.transitions.start_nodes()
    worth = solution.board_values[rows]
    worst = int(rows[np.argmax(worth)])  # the opening best for the player
    assert worth.max() > worth.min() + 1e-6
    contents = _contents(path)
    message = _refused(forged(tmp_path, contents, meta={"opening_row": worst}), "opening_row")
    assert "not the minimax opponent's best opening" in message


@pytest.mark.parametrize(
    "fields",
    [{"preview": 1, "hold": True}, {"height": 5, "preview": 2}, {"height": 5, "randomizer": "bag"}],
    ids=["4x4 preview and hold", "4x5 two previews", "4x5 bag"],
)
def test_genuine_files_of_node_tables_load_verified(tmp_path, fields):
    # once refused: the boards' size bound counted each board once, not once per node, and the
    # re-derivation's memory budget left out the nodes' expansion
    solution = babytris.solve(**{"width": 4, "height": 4, **fields})
    solution.save(tmp_path / "s.npz")
    loaded = babytris.load(tmp_path / "s.npz")
    assert loaded.verified and loaded.start_value == solution.start_value
    np.testing.assert_array_equal(loaded.values, solution.values)


def test_a_table_on_other_boards_is_refused_naming_the_board(files):
    # the proof builds the rules' table on the file's boards: they must be exactly the reachable ones
    folder, contents = files
    boards = contents["random"]["table_boards"]
    twice = boards.copy()
    twice[-1] = boards[7]
    _refused(
        forged(folder, contents["random"], table_boards=twice), "table_boards", rf"board {boards[7]} is listed twice"
    )
    stray = boards.copy()
    stray[-1] = np.uint64(2**15 + 1)  # (no play reaches it: a cell at the top with the bottom row's first)
    assert stray[-1] not in set(boards.tolist())
    _refused(
        forged(folder, contents["random"], table_boards=stray), "table_boards", "the boards are not the rules' own"
    )


@pytest.mark.parametrize("rules", [{"height": 6}, {"width": 5, "height": 6}], ids=["4x6", "5x6"])
def test_a_small_file_claiming_big_rules_is_refused_quickly(files, rules):
    # the search may hold only what the file's table could need: not a big game's search
    folder, contents = files
    path = forged(folder, contents["random"], rules=rules)
    started = time.perf_counter()
    words = r"board \d+ has a move to a board not in the table: the boards are not the rules. own"
    _refused(path, "table_boards", words)
    assert time.perf_counter() - started < 2.0


def test_a_genuine_file_too_big_for_max_memory_is_a_memory_refusal_not_a_corrupt_file(tmp_path):
    # proving a file rebuilds its table: a budget it does not fit is the reader's limit, said so
    path = tmp_path / "s.npz"
    solution = babytris.solve(width=4, height=5)
    solution.save(path)
    with pytest.raises(babytris.MemoryLimitError, match=r"proving its table of 182,101 rows .*verify=False"):
        babytris.load(path, max_memory=2**20)
    assert not babytris.load(path, max_memory=2**20, verify=False).verified  # (no table rebuilt)
    assert babytris.load(path, max_memory=2**30).verified
    with pytest.raises(ValueError, match="max_memory"):
        babytris.load(path, max_memory=-1)


def test_the_command_line_proves_a_file_within_its_max_memory(tmp_path):
    path = tmp_path / "s.npz"
    babytris.solve(width=4, height=5).save(path)
    run = [sys.executable, "-m", "babytris", "play", "--solution", str(path), "--placements", "1"]
    refused = subprocess.run([*run, "--max-memory", "0.001"], capture_output=True, text=True, cwd=tmp_path)
    assert refused.returncode == 3 and "raise max_memory" in refused.stderr, refused.stderr
    assert subprocess.run(run, capture_output=True, text=True, cwd=tmp_path).returncode == 0


# --- The tie rule a file claims (issue 47) ----------------------------------------------------------

RELABELLED = [
    # (the solve's options, the rule it broke ties by, the rule the file claims; the words of the refusal)
    (dict(), ("last", None), ("first", None), "takes placement 1 where an earlier tied move, placement 0"),
    (dict(), ("first", None), ("last", None), "takes placement 0 where a later tied move, placement 1"),
    (dict(), ("random", 3), ("random", 4), "where another tied move"),
    (dict(), ("random", 3), ("first", None), "where an earlier tied move"),
    (dict(hold=True), ("last", None), ("first", None), "where an earlier tied move"),
    (dict(randomizer="bag"), ("random", 5), ("last", None), "where a later tied move"),
    (dict(opponent="minimax"), ("last", None), ("first", None), "where an earlier tied move"),
    (dict(opponent="minavg"), ("last", None), ("first", None), "the minavg opponent gives piece 'L' where the rule"),
    (dict(opponent="gaps"), ("first", None), ("last", None), "the gaps opponent gives piece 'I' where the rule"),
]


@pytest.mark.parametrize(("options", "solved", "claimed", "words"), RELABELLED)
def test_a_relabelled_tie_rule_is_refused(tmp_path, options, solved, claimed, words):
    solution = babytris.solve(width=4, height=4, **options, ties=solved[0], tie_seed=solved[1])
    solution.save(tmp_path / "genuine.npz")
    loaded = babytris.load(tmp_path / "genuine.npz")
    assert (loaded.ties, loaded.tie_seed) == solved and loaded.verified
    # saved by save() itself: every digest is the file's own, only the label lies
    dataclasses.replace(solution, ties=claimed[0], tie_seed=claimed[1]).save(tmp_path / "relabelled.npz")
    claim = f"the file claims ties={claimed[0]!r}, but "
    message = _refused(tmp_path / "relabelled.npz", "ties", re.escape(claim))
    assert words in message
    assert babytris.load(tmp_path / "relabelled.npz", verify=False).ties == claimed[0]  # (the form alone: as said)


def test_an_opening_row_not_the_claimed_rules_is_refused(tmp_path):
    # S and Z are mirror images: the two opening queues tie, and the rule picks one
    rules = babytris.Rules(width=4, height=4, pieces=("S", "Z"), preview=1)
    first = babytris.solve(rules, opponent="minavg")
    last = babytris.solve(rules, opponent="minavg", ties="last")
    assert first.opening_row is None and list(first.opening()[0]) == [0] and last.opening_row == 1
    # the first rule's pieces, the last rule's opening row, claimed as the first rule's
    dataclasses.replace(first, opening_row=1).save(tmp_path / "opening.npz")
    message = _refused(tmp_path / "opening.npz", "ties", "the file claims ties='first', but the minavg opponent")
    assert "opens with start row 1 where the rule takes the tied start row 0" in message
    last.save(tmp_path / "last.npz")
    assert babytris.load(tmp_path / "last.npz").opening_row == 1


# A solve stopped before it converged has no tie slack: its moves tie for sure only with their twins (the same
# reward and board after), and its opponent's pieces where the player can place none of them.
UNCONVERGED = [
    # (the solve's options, the rule it broke ties by, the rule the file claims; the words of the refusal)
    (dict(), ("last", None), ("first", None), "where an earlier move with its reward and board after"),
    (dict(), ("first", None), ("last", None), "where a later move with its reward and board after"),
    (dict(), ("random", 3), ("random", 4), "where another move with its reward and board after"),
    (dict(hold=True), ("last", None), ("first", None), "where an earlier move with its reward and board after"),
    (dict(opponent="minimax"), ("last", None), ("first", None), "where an earlier move with its reward"),
    (dict(opponent="minavg"), ("last", None), ("first", None), "the minavg opponent gives piece 'L' where the rule"),
]


@pytest.mark.parametrize(("options", "solved", "claimed", "words"), UNCONVERGED)
@pytest.mark.parametrize("sweeps", [1, 3])
def test_an_unconverged_files_tie_rule_is_checked_on_its_sure_ties(tmp_path, options, solved, claimed, words, sweeps):
    solution = babytris.solve(width=4, height=4, **options, ties=solved[0], tie_seed=solved[1], max_iter=sweeps)
    assert not solution.converged and solution.tie_slack == 0.0
    solution.save(tmp_path / "genuine.npz")
    loaded = babytris.load(tmp_path / "genuine.npz")
    assert (loaded.ties, loaded.tie_seed, loaded.converged) == (*solved, False) and loaded.verified
    dataclasses.replace(solution, ties=claimed[0], tie_seed=claimed[1]).save(tmp_path / "relabelled.npz")
    message = _refused(tmp_path / "relabelled.npz", "ties", re.escape(f"the file claims ties={claimed[0]!r}, but "))
    assert words in message


def test_the_tie_checks_in_slices_refuse_the_same_first_state(tmp_path, monkeypatch):
    solution = babytris.solve(width=4, height=4, ties="last", max_iter=1)
    dataclasses.replace(solution, ties="first").save(tmp_path / "relabelled.npz")
    whole = _refused(tmp_path / "relabelled.npz", "ties", "but state 19 .* where an earlier move with its reward")
    monkeypatch.setattr(tie_rule, "SLICE_STATES", 7)
    assert _refused(tmp_path / "relabelled.npz", "ties", "where an earlier move") == whole
    monkeypatch.undo()
    converged = babytris.solve(width=4, height=4, ties="random", tie_seed=3)
    dataclasses.replace(converged, tie_seed=5).save(tmp_path / "random.npz")
    whole = _refused(tmp_path / "random.npz", "ties", "but state 19 .* where another tied move")
    monkeypatch.setattr(tie_rule, "SLICE_STATES", 7)
    assert _refused(tmp_path / "random.npz", "ties", "where another tied move") == whole


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_the_policys_pass_agrees_with_numpy_over_the_table(transitions_4x4, threads):
    """:func:`_greedy.chosen_rows`, the proof's one pass over the chosen moves: their rows,
    the most one falls short of its state's best, and the first move tied before one."""
    from babytris.solvers import _greedy
    from babytris.solvers.roles import policy_rows

    t = transitions_4x4
    scores = np.asarray(t.rules.line_scores, dtype=np.float64)
    W = np.round(np.random.default_rng(5).random(t.n_boards) * 8) / 4  # (coarse: many ties)
    q = scores[t.lines] + 0.9 * W[t.next_board]
    sizes = np.diff(t.offsets)
    live = np.flatnonzero(sizes)
    best = np.zeros(t.n_states)
    best[live] = np.maximum.reduceat(q, t.offsets[:-1][live])
    hint = np.full(t.n_states, -1, dtype=np.int16)
    _greedy.state_values(t.offsets, t.next_board, t.lines, scores, W, 0.9, np.empty(t.n_states), policy=hint)
    # a random legal move in each state: the hint's where the draw says so
    draw = np.random.default_rng(6).random(t.n_states)
    rows = np.where(draw < 0.5, hint, np.floor(draw * np.maximum(sizes, 1)).astype(np.int16) % np.maximum(sizes, 1))
    rows = np.where(sizes > 0, rows, -1).astype(np.int16)
    policy = t.chosen_placements(rows)
    table = (t.offsets, t.next_board, t.lines, scores, W, 0.9, t.placement)
    found = np.full(t.n_states, 7, dtype=np.int16)
    unknown, short, at, tied_at, tied_move = _greedy.chosen_rows(
        *table, policy, hint, best, found, sure=0.3, n_threads=threads
    )
    assert unknown == -1 and np.array_equal(found, rows)
    assert np.array_equal(policy_rows(t, policy.reshape(t.n_boards, -1)), rows)  # (the engine's own lookup agrees)
    other = np.flatnonzero((rows != hint) & (rows >= 0))
    shorts = best[other] - q[t.offsets[other] + rows[other]]
    assert shorts.max() > 0.5  # (the draw took moves far from the best)
    assert short == shorts.max() and at == other[np.argmax(shorts)]
    earlier = [s for s in live if (q[t.offsets[s] : t.offsets[s] + rows[s]] >= best[s] - 0.3).any()]
    assert tied_at == earlier[0]
    assert tied_move == np.flatnonzero(q[t.offsets[tied_at] :] >= best[tied_at] - 0.3)[0]
    # with no slack nothing is looked for before the chosen moves; every move the hint's: nothing falls short
    assert _greedy.chosen_rows(*table, policy, hint, best, found, n_threads=threads)[3:] == (-1, -1)
    hinted = t.chosen_placements(hint)
    assert _greedy.chosen_rows(*table, hinted, hint, best, found, sure=0.3)[:3] == (-1, -np.inf, -1)
    # a placement not in its row, or one where the row is empty: the first such state
    wrong = policy.copy()
    wrong[[live[40], live[90]]] = 999
    assert _greedy.chosen_rows(*table, wrong, hint, best, found, n_threads=threads)[0] == live[40]
    dead = np.flatnonzero(sizes == 0)[0]
    wrong[dead] = 0
    assert _greedy.chosen_rows(*table, wrong, hint, best, found, n_threads=threads)[0] == min(dead, live[40])
    # a hint outside the row is no hint: the move is looked for along the row
    far = np.where(draw < 0.5, 40, -7).astype(np.int16)
    again = _greedy.chosen_rows(*table, policy, far, best, found, sure=0.3, n_threads=threads)
    assert again[3:] == (tied_at, tied_move)
    assert np.array_equal(found, rows)
    with pytest.raises(ValueError, match="chosen_rows: hint must have one entry per state"):
        _greedy.chosen_rows(*table, policy, hint[1:], best, found)


@pytest.mark.parametrize("options", [dict(), dict(max_iter=3), dict(discount=0.5), dict(opponent="minimax")])
def test_the_proofs_slacks_are_the_solutions_own(options):
    """The values' size read once for every check: the tie slack the Solution reports, bit for bit."""
    solution = babytris.solve(width=4, height=4, **options)
    slacks = tie_rule.slacks_of(solution)
    assert slacks.tie_slack == solution.tie_slack
    assert slacks.largest == np.abs(solution.values).max() > 0
    eps = np.finfo(np.float64).eps
    assert slacks.sure == solution.tie_slack - tie_rule.MARGIN_ULPS * eps * slacks.largest
    assert (slacks.tie_slack > 0) == solution.converged
