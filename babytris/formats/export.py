"""The game as files for probabilistic model checkers: Storm's explicit DRN
format (:func:`to_drn`) and PRISM's explicit files (:func:`to_prism`).

Model checkers compute total rewards, not discounted ones, so the export
turns the discounted game into an equivalent one of total reward
(:func:`explicit_model`): after each placement the game goes on with chance
``discount`` and ends with chance ``1 - discount``.  The points of a
placement are the reward of the state it leads to (an *afterstate*: the board
after it and the rows it cleared, before the next piece is drawn), so the
files need only state rewards.  The expected total reward from the state
labelled ``init`` until the state labelled ``done`` is the solve's
:attr:`~babytris.Solution.start_value`; in Storm's and PRISM's property
language, ``Rmax=? [ F "done" ]``.

>>> import babytris, os, tempfile
>>> solution = babytris.solve(width=3, height=3, discount=0.9, tol=1e-12)
>>> model = babytris.explicit_model(solution)
>>> model.n_states, model.n_choices     # start, 68 (board, piece) states, 44 afterstates, done
(114, 170)
>>> round(float(model.total_reward()[0]), 9), round(solution.start_value, 9)
(11.75, 11.75)
>>> folder = tempfile.mkdtemp()
>>> babytris.to_drn(solution, os.path.join(folder, "3x3.drn"))
>>> [os.path.basename(p) for p in babytris.to_prism(solution, os.path.join(folder, "3x3"))]
['3x3.tra', '3x3.lab', '3x3.srew']
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import numpy as np

from ..engine.transitions import HOLD_MOVE, Transitions
from ..engine.writing import replace_atomically
from ..game.validation import check_number
from ..results.solution import Solution
from ..solvers.match import Match
from ..solvers.roles import piece_chances
from ..solvers.solve import solve_transitions
from ..solvers.termination import check_games_end

__all__ = [
    "ExplicitModel",
    "ExportedGame",
    "check_opponent",
    "explicit_model",
    "exported_game",
    "to_drn",
    "to_prism",
    "game_table",
]

#: What each state's label names (PRISM declares "init" and "deadlock" first).
LABELS = ("init", "deadlock", "done", "over")
#: States (or moves, choices) per slice of an export's array work: a few milliseconds each, so that
#: Ctrl-C is answered between slices.
STATES_PER_SLICE = 1 << 15


def slices(n: int, size: int = STATES_PER_SLICE) -> Iterator[tuple[int, int]]:
    """``(lo, hi)`` for consecutive slices of ``range(n)`` of ``size`` (the last shorter)."""
    for lo in range(0, n, size):
        yield lo, min(n, lo + size)


@dataclass(frozen=True, eq=False)
class ExplicitModel:
    """An MDP of total reward, as model checkers read it.

    States are numbered: ``0`` the start (before the first piece is drawn);
    ``1 + s`` the game's state ``s`` (``board * n_pieces + piece``, as in
    :class:`~babytris.Transitions`); then the afterstates; last, ``done``
    (absorbing).  State ``i`` has choices ``choice_starts[i]:choice_starts[i
    + 1]``, choice ``c`` has branches ``branch_starts[c]:branch_starts[c +
    1]`` to ``targets`` with ``probabilities``.

    Attributes:
        discount: the discount the game's values count with.
        choice_starts: int64 ``(n_states + 1,)``.
        choice_names: str array ``(n_choices,)``: ``"start"``, ``"place<k>"``
            (placement number ``k``, see :func:`~babytris.placement_table`),
            ``"hold"``, ``"over"`` (the piece fits nowhere), ``"draw"``
            (from an afterstate) and ``"end"`` (the loop on ``done``).
        branch_starts: int64 ``(n_choices + 1,)``.
        targets: int64 ``(n_branches,)``.
        probabilities: float64 ``(n_branches,)``.
        state_rewards: float64 ``(n_states,)``: the points of the placement
            that led to an afterstate, 0 elsewhere.
        labels: ``{name: int64 array of states}`` for each of :data:`LABELS`
            (``"over"``: the game's states where the piece fits nowhere).
        afterstates: int64 ``(n_afterstates, 2)``: each afterstate's board
            (node) index and rows cleared.
    """

    discount: float
    choice_starts: np.ndarray
    choice_names: np.ndarray
    branch_starts: np.ndarray
    targets: np.ndarray
    probabilities: np.ndarray
    state_rewards: np.ndarray
    labels: dict[str, np.ndarray]
    afterstates: np.ndarray

    @property
    def n_states(self) -> int:
        return len(self.choice_starts) - 1

    @property
    def n_choices(self) -> int:
        return len(self.branch_starts) - 1

    @property
    def n_branches(self) -> int:
        return len(self.targets)

    def total_reward(self, tol: float = 1e-12) -> np.ndarray:
        """Each state's greatest expected total reward until ``done``, by
        value iteration (a check of the model, not a fast solver): float64
        ``(n_states,)``; entry 0 is the start value."""
        values = np.zeros(self.n_states)
        source = np.repeat(np.arange(self.n_choices), np.diff(self.branch_starts))
        while True:
            q = np.bincount(source, self.probabilities * values[self.targets], minlength=self.n_choices)
            new = self.state_rewards + np.maximum.reduceat(q, self.choice_starts[:-1])
            change = np.abs(new - values).max()
            values = new
            if change <= tol:
                return values


@dataclass(frozen=True, eq=False)
class ExportedGame:
    """What an export writes: the move table, the discount, and how the pieces
    come (:func:`babytris.solvers.roles.piece_chances`): ``chances`` ``(n_boards,
    n_pieces)``, the start rows and their weights."""

    table: Transitions
    discount: float
    chances: np.ndarray
    starts: np.ndarray
    start_weights: np.ndarray


def exported_game(
    game: Match | Transitions | Solution, discount: float | None = None, opponent: object = None
) -> ExportedGame:
    """The game an export writes: ``game``'s move table and discount (see
    :func:`game_table`) against ``opponent``: by default a Solution's own
    (its piece choices, where it was solved against an opponent, else drawn
    pieces), or drawn pieces for a table; else ``"random"``, a Solution solved
    against an opponent or a piece array ``(n_boards,)``.  A fixed opponent's
    game is the MDP its choices induce: its optimal value is the best
    response to them (against the minimax opponent, the max-min value).

    ``game`` may be a :class:`~babytris.Match` (then give no opponent): its
    table against its opponent, a named one (``"minimax"``, ``"minavg"``,
    ``"gaps"``) solved here at ``discount`` for its choices.
    """
    if isinstance(game, Match):
        if opponent is not None:
            raise ValueError("opponent: a Match carries its opponent; give it in the Match, not again")
        game.check_exportable(discount)
        opponent = game.opponent
        if isinstance(opponent, str) and opponent != "random":  # its choices, solved at the export's discount
            opponent = solve_transitions(game.transitions, discount=discount, opponent=opponent)  # type: ignore[arg-type]
        game = game.transitions
    check_opponent(opponent, own_allowed=True)
    table, discount = game_table(game, discount, own_opponent=opponent is None)
    if opponent is None:
        opponent = game if isinstance(game, Solution) and game.opponent_policy is not None else "random"
    chances, starts, weights = piece_chances(table, opponent)
    if discount >= 1.0:  # (the total reward until game over: finite only if every game ends, against these pieces)
        check_games_end(table, drawn=True, chances=chances)
    return ExportedGame(table, discount, chances, starts, weights)


def check_opponent(opponent: object, *, own_allowed: bool = False) -> None:
    """Refuse an opponent named by a word other than ``"random"`` (a fixed
    opponent's choices are exported, and a named model's depend on the
    discount it is solved at), or None unless ``own_allowed`` (the game's
    own opponent).  The message lists what is taken."""
    if (isinstance(opponent, str) and opponent != "random") or (opponent is None and not own_allowed):
        own = "None (the game's own opponent), " if own_allowed else ""
        raise ValueError(
            f"opponent: the export takes {own}'random' (drawn pieces), a Solution solved against an opponent "
            "(its piece choices: solve(..., opponent='minimax') for the minimax opponent's) or an int array "
            f"(n_boards,) of pieces, got {opponent!r}"
        )


def game_table(
    game: Transitions | Solution, discount: float | None = None, *, own_opponent: bool = True
) -> tuple[Transitions, float]:
    """The move table of ``game`` and the discount to export with (``discount``,
    or by default the one a solution was solved with), after checking that
    the game is one the exports express: an optimal player (whose values the
    exported MDP's optimum is; ``own_opponent=False``: any, when another
    opponent is exported), points as the reward, a discount in [0, 1] (1:
    the total reward until game over, where every game ends)."""
    table, solved_with = _table_and_discount(game, own_opponent)
    if discount is None:
        if solved_with is None:
            raise ValueError("discount: required to export a Transitions (a Solution brings its own)")
        discount = solved_with
    if table.rules.objective != "points":
        raise ValueError(f"export: objective={table.rules.objective!r} is not supported, only 'points'")
    return table, check_number("discount", discount, 0.0, 1.0)


def _table_and_discount(game: Transitions | Solution, own_opponent: bool) -> tuple[Transitions, float | None]:
    if isinstance(game, Solution):
        if own_opponent and game.player != "optimal":
            raise ValueError(
                f"export: the solution's player is {game.player!r}; the export is the MDP of an optimal player: "
                "give opponent=the solution (its piece choices) to export the game against it"
            )
        if game.reward is not None:
            raise ValueError("export: the solution counts a weighted reward; only points are exported")
        if game.partition is not None:
            raise ValueError("export: the solution is of a minimized game; export the game itself")
        return game.transitions, game.discount
    if isinstance(game, Transitions):
        return game, None
    raise ValueError(
        f"game must be a babytris.Solution or babytris.Transitions (from enumerate_boards), got {type(game).__name__}"
    )


def explicit_model(
    game: Match | Transitions | Solution, *, discount: float | None = None, opponent: object = None
) -> ExplicitModel:
    """The game as an MDP of total reward whose optimal value from state 0 is
    the discounted game's start value (see :mod:`babytris.formats.export`).

    Args:
        game: a :class:`~babytris.Solution` (an optimal player, points), a
            :class:`~babytris.Transitions`, or a :class:`~babytris.Match`
            (an optimal player against its opponent, see :func:`exported_game`).
            Previews, hold and bags are supported; the combo objective is not.
        discount: in [0, 1); default: the solution's (required for a table).
        opponent: who gives the pieces (see :func:`exported_game`): by
            default a Solution's own opponent, drawn pieces for a table.

    Returns:
        :class:`ExplicitModel`.
    """
    exported = exported_game(game, discount, opponent)
    table, discount = exported.table, exported.discount
    rules = table.rules
    n_pieces, n_states = rules.n_pieces, table.n_states
    scores = np.asarray(rules.line_scores, dtype=np.float64)
    offsets = table.offsets.astype(np.int64)
    counts = np.diff(offsets)
    dead = np.flatnonzero(counts == 0)
    # (the work over moves, afterstates and choices goes in slices of a few milliseconds each, so
    # that Ctrl-C is answered between them; no sort, no Python object per state)

    # Afterstates: one per (board after, rows cleared) pair some move makes, in that pair's order.
    max_lines = len(scores)
    made = np.zeros(table.n_boards * max_lines, dtype=bool)
    for lo, hi in slices(table.n_moves):
        made[table.next_board[lo:hi].astype(np.int64) * max_lines + table.lines[lo:hi]] = True
    pairs = np.flatnonzero(made)
    del made
    n_after = len(pairs)
    first_after = 1 + n_states
    done = first_after + n_after
    n_total = done + 1

    # Choices, state by state: the start's one, each state's moves (or "over"),
    # each afterstate's draw, done's loop.
    per_state = np.concatenate(([1], np.maximum(counts, 1), np.ones(n_after + 1, dtype=np.int64)))
    choice_starts = np.concatenate(([0], np.cumsum(per_state))).astype(np.int64)
    n_choices = int(choice_starts[-1])

    # Branches of each choice, in the same order.
    start_rows, start_chances = exported.starts, exported.start_weights
    start_targets = (1 + start_rows[:, None] * n_pieces + np.arange(n_pieces)).ravel()
    start_probs = (start_chances[:, None] * exported.chances[start_rows]).ravel()
    keep = start_probs > 0
    # An afterstate draws each piece its node's bag holds (every piece, with independent draws), or
    # goes to the piece a fixed opponent gives there; discounted, it ends with chance 1 - discount.
    draw_targets, draw_probs, draw_counts = [], [], []
    for lo, hi in slices(n_after):
        node = pairs[lo:hi] // max_lines
        chances = exported.chances[node]
        targets = 1 + node[:, None] * n_pieces + np.arange(n_pieces)
        ends = np.full((hi - lo, 1), done)
        if discount > 0:  # (undiscounted, an afterstate ends only where no piece fits: no branch to done)
            drawn = np.hstack((chances > 0, np.full((hi - lo, 1), discount < 1.0)))
            draw_targets.append(np.hstack((targets, ends))[drawn])
            draw_probs.append(np.hstack((discount * chances, np.full((hi - lo, 1), 1.0 - discount)))[drawn])
            draw_counts.append(drawn.sum(axis=1))
        else:
            draw_targets.append(ends.ravel())
            draw_probs.append(np.ones(hi - lo))
            draw_counts.append(np.ones(hi - lo, dtype=np.int64))
    # The game's states: a move leads to its afterstate; a dead state ends.  Each choice's name
    # (a placement's "place<k>", "hold", "over") from its code in the table of names used.
    used = np.zeros(HOLD_MOVE + 1, dtype=bool)
    for lo, hi in slices(table.n_moves):
        used[table.placement[lo:hi]] = True
    placements = np.flatnonzero(used)
    del used
    move_names = ["hold" if k == HOLD_MOVE else f"place{k}" for k in placements.tolist()]
    vocabulary = np.array(["start", "over", "draw", "end", *move_names])
    code_of = np.zeros(HOLD_MOVE + 1, dtype=np.int64)
    code_of[placements] = 4 + np.arange(len(placements))
    codes = np.empty(n_choices, dtype=np.int64)
    codes[0], codes[1 + n_choices - n_after - 2 :] = 0, 2
    codes[-1] = 3
    state_targets = np.empty(n_choices - n_after - 2, dtype=np.int64)
    for lo, hi in slices(n_states):
        first, last, m = choice_starts[1 + lo] - 1, choice_starts[1 + hi] - 1, slice(offsets[lo], offsets[hi])
        slots = np.repeat(choice_starts[1 + lo : 1 + hi] - 1 - offsets[lo:hi], counts[lo:hi]) + np.arange(
            m.start, m.stop
        )
        state_targets[first:last] = done
        codes[1 + first : 1 + last] = 1
        keys = table.next_board[m].astype(np.int64) * max_lines + table.lines[m]
        state_targets[slots] = first_after + np.searchsorted(pairs, keys)
        codes[1 + slots] = code_of[table.placement[m]]
    choice_names = np.empty(n_choices, dtype=vocabulary.dtype)
    for lo, hi in slices(n_choices):
        choice_names[lo:hi] = vocabulary[codes[lo:hi]]
    del codes

    branch_counts = np.concatenate(([keep.sum()], np.ones(len(state_targets), dtype=np.int64), *draw_counts, [1]))
    targets = np.concatenate((start_targets[keep], state_targets, *draw_targets, [done])).astype(np.int64)
    probabilities = np.concatenate((start_probs[keep], np.ones(len(state_targets)), *draw_probs, [1.0])).astype(
        np.float64
    )
    rewards = np.zeros(n_total)
    rewards[first_after:done] = scores[pairs % max_lines]
    return ExplicitModel(
        discount=float(discount),
        choice_starts=choice_starts,
        choice_names=choice_names,
        branch_starts=np.concatenate(([0], np.cumsum(branch_counts))).astype(np.int64),
        targets=targets,
        probabilities=probabilities,
        state_rewards=rewards,
        labels={
            "init": np.array([0]),
            "deadlock": np.array([], dtype=np.int64),
            "done": np.array([done]),
            "over": 1 + dead,
        },
        afterstates=np.stack((pairs // max_lines, pairs % max_lines), axis=1),
    )


def to_drn(
    game: Match | Transitions | Solution | ExplicitModel,
    path: str | os.PathLike,
    *,
    discount: float | None = None,
    opponent: object = None,
) -> None:
    """Write the game (see :func:`explicit_model`) to ``path`` in Storm's
    explicit DRN format, atomically: one reward model ``points`` (state
    rewards), labels ``init``, ``done``, ``over``, and each choice named.
    In Storm, ``Rmax=? [ F "done" ]`` at the initial state is the start value.
    ``game`` may be an :class:`ExplicitModel` already built; ``opponent`` as
    for :func:`explicit_model`.
    """
    model = _model(game, discount, opponent)
    replace_atomically(path, lambda f: _text(f, _drn_lines(model)))


def to_prism(
    game: Match | Transitions | Solution | ExplicitModel,
    stem: str | os.PathLike,
    *,
    discount: float | None = None,
    opponent: object = None,
) -> list[str]:
    """Write the game (see :func:`explicit_model`) as PRISM's explicit files
    ``STEM.tra`` (transitions, with each choice's action name), ``STEM.lab``
    (labels) and ``STEM.srew`` (state rewards), each atomically; load them
    with ``prism -importmodel STEM.tra,lab,srew -mdp`` and check
    ``Rmax=? [ F "done" ]``.  ``game`` may be an :class:`ExplicitModel` already
    built; ``opponent`` as for :func:`explicit_model`.

    Returns:
        The three paths written.
    """
    model = _model(game, discount, opponent)
    stem = os.fspath(stem)
    written = []
    for suffix, lines in (
        (".tra", _tra_lines(model)),
        (".lab", _lab_lines(model)),
        (".srew", _srew_lines(model)),
    ):
        replace_atomically(stem + suffix, functools.partial(_text, lines=lines))
        written.append(stem + suffix)
    return written


def _model(
    game: Match | Transitions | Solution | ExplicitModel, discount: float | None, opponent: object
) -> ExplicitModel:
    """``game`` as an explicit model: built, or as given (then ``discount`` must be None or its own)."""
    if not isinstance(game, ExplicitModel):
        return explicit_model(game, discount=discount, opponent=opponent)
    if opponent is not None:
        raise ValueError("opponent: the model is built already; give the opponent to explicit_model")
    if discount is not None and discount != game.discount:
        raise ValueError(f"discount: the model was built with {game.discount}, got {discount!r}")
    return game


def _text(f: IO[bytes], lines: Iterator[str]) -> None:
    for chunk in _chunks(lines):
        f.write(chunk.encode("ascii"))


def _chunks(lines: Iterator[str], size: int = 1 << 16) -> Iterator[str]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == size:
            yield "\n".join(batch) + "\n"
            batch = []
    if batch:
        yield "\n".join(batch) + "\n"


def _state_labels(model: ExplicitModel) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {}
    for name in LABELS:
        for state in model.labels[name].tolist():
            found.setdefault(state, []).append(name)
    return found


def _drn_lines(model: ExplicitModel) -> Iterator[str]:
    yield '// babytris: a discounted game as total reward until "done" (see babytris.formats.export)'
    yield f'// discount {model.discount!r}; start value: Rmax=? [ F "done" ] at the initial state'
    yield from ("@type: MDP", "@parameters", "", "@reward_models", "points")
    yield from ("@nr_states", str(model.n_states), "@nr_choices", str(model.n_choices), "@model")
    labels = _state_labels(model)
    for lo, cs, bs, targets, probs, names in _state_slices(model):
        rewards = model.state_rewards[lo : lo + len(cs) - 1].tolist()
        for i, reward in enumerate(rewards):
            state = lo + i
            tail = " " + " ".join(labels[state]) if state in labels else ""
            yield f"state {state} [{reward!r}]{tail}"
            for c in range(cs[i], cs[i + 1]):
                yield f"\taction {names[c]} [0]"
                for b in range(bs[c], bs[c + 1]):
                    yield f"\t\t{targets[b]} : {probs[b]!r}"


def _tra_lines(model: ExplicitModel) -> Iterator[str]:
    yield f"{model.n_states} {model.n_choices} {model.n_branches}"
    for lo, cs, bs, targets, probs, names in _state_slices(model):
        for i in range(len(cs) - 1):
            for local, c in enumerate(range(cs[i], cs[i + 1])):
                for b in range(bs[c], bs[c + 1]):
                    yield f"{lo + i} {local} {targets[b]} {probs[b]!r} {names[c]}"


def _state_slices(model: ExplicitModel) -> Iterator[tuple[int, list, list, list, list, list]]:
    """The model's arrays as lists, a slice of states at a time (whole, they
    would be converted in one long call): ``(first state, choice starts,
    branch starts, targets, probabilities, choice names)``, the starts
    counted from the slice's first choice and branch."""
    for lo, hi in slices(model.n_states):
        c0, c1 = int(model.choice_starts[lo]), int(model.choice_starts[hi])
        b0, b1 = int(model.branch_starts[c0]), int(model.branch_starts[c1])
        yield (
            lo,
            (model.choice_starts[lo : hi + 1] - c0).tolist(),
            (model.branch_starts[c0 : c1 + 1] - b0).tolist(),
            model.targets[b0:b1].tolist(),
            model.probabilities[b0:b1].tolist(),
            model.choice_names[c0:c1].tolist(),
        )


def _lab_lines(model: ExplicitModel) -> Iterator[str]:
    yield " ".join(f'{i}="{name}"' for i, name in enumerate(LABELS))
    labels = _state_labels(model)
    for state in sorted(labels):
        yield f"{state}: " + " ".join(str(LABELS.index(name)) for name in labels[state])


def _srew_lines(model: ExplicitModel) -> Iterator[str]:
    paid = np.flatnonzero(model.state_rewards)
    yield f"{model.n_states} {len(paid)}"
    for lo, hi in slices(len(paid)):
        for state, reward in zip(paid[lo:hi].tolist(), model.state_rewards[paid[lo:hi]].tolist()):
            yield f"{state} {reward!r}"
