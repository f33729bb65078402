"""solve(): optimal play against randomly drawn pieces, by value iteration."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import numpy as np

from ..engine.enumeration import enumerate_boards
from ..engine.placements import most_moves
from ..engine.progress import ProgressBars
from ..engine.resources import DEFAULT_MAX_MEMORY, resolve_n_jobs
from ..engine.reward import Reward
from ..engine.transitions import Transitions, layers
from ..game.rules import Rules
from ..game.validation import (
    METHODS,
    check_bool,
    check_solver_args,
    check_type,
    default_eval_sweeps,
    solver_method,
)
from ..results.solution import ChosenMoves, Solution, tie_slack
from . import _greedy, _strategy, _sweep, sweep_arrays
from .match import Match
from .minimize import Partition, partition_for
from .roles import MOVES_BEST, PIECES_BEST, PIECES_RANDOM, PIECES_WORST, Opponent, Player, Roles, resolve
from .roles import OPPONENT_MODELS as OPPONENTS
from .sweep_arrays import (
    SolverSettings,
    SweepArrays,
    Sweeps,
    quotient_sweeper,
    sweeps_for,
)
from .sweeping import Progress, ThreadTuner, modified_policy_iteration, strategy_iteration, value_iteration
from .termination import check_games_end, longest_games
from .ties import break_ties, check_ties

__all__ = ["solve", "solve_transitions", "METHODS", "OPPONENTS", "Progress"]


# Bytes the solver allocates per (board, piece) state: value (float64), move
# (int16), the placement numbers (int16); and with accelerated value
# iteration the value before a sweep (float64).
SOLVER_BYTES_PER_STATE = 8 + 2 + 2
ACCELERATED_VI_BYTES_PER_STATE = 8
# ... and per board: its value, its place in the live list; with acceleration
# its value before a sweep (value iteration) or its change in a sweep (float32,
# modified policy iteration).
SOLVER_BYTES_PER_BOARD = 8 + 4
ACCELERATED_BYTES_PER_BOARD = {"vi": 8, "jacobi": 8, "mpi": 4}


def solve(
    rules: Rules | Match | None = None,
    /,
    *,
    discount: float = 0.9,
    tol: float = 1e-8,
    max_iter: int = 1000,
    opponent: Opponent = "random",
    player: Player | None = None,
    reward: Reward | None = None,
    method: str | None = None,
    accelerate: bool | None = None,
    eval_sweeps: int | None = None,
    n_jobs: int | None = None,
    max_memory: int = DEFAULT_MAX_MEMORY,
    progress: Progress | bool | None = None,
    minimize: bool = False,
    ties: str = "first",
    tie_seed: int | None = None,
    **rule_fields: Any,
) -> Solution:
    """Exact values and policies of a game between a player placing pieces
    and whoever gives them.

    Solves ``V(b, p) = max_a [points(a) + discount * U(b')]`` over every
    (board, piece) reachable from the empty board, with ``V = 0`` where piece
    ``p`` fits nowhere (game over; ``-reward.loss`` with a loss), and ``U(b) = sum_q prob(q) V(b, q)``
    (``opponent="random"``) or ``U(b) = min_q V(b, q)`` (``"minimax"``: the
    opponent gives the piece worst for the player, who plays the robust,
    max-min policy).  With ``"minavg"`` the player places uniformly at random
    (``V`` is the mean over the placements, not the max) and the opponent
    gives the piece that minimises that player's score; with ``"gaps"`` the
    opponent maximises the expected discounted number of holes such a player
    creates (``V`` counts holes after less holes before each placement).

    A given policy fixes a side: ``opponent=`` a Solution or an int array of
    piece indices ``(n_boards,)`` gives the player's best response to it;
    ``player=`` a Solution or placement numbers ``(n_boards, n_pieces)`` gives
    the opponent's best response (``opponent="minimax"``) or, against random
    pieces, the policy's exact discounted value.

    Args:
        rules: a :class:`Rules` (or give its fields as keywords instead,
            e.g. ``solve(width=4, height=5)``), or a :class:`~babytris.Match`
            carrying the player, opponent and reward too (then give none of
            them, nor rule fields, as keywords).
        discount: in [0, 1], 1 for the expected total reward until game over
            (with the combo objective, the expected combo length): accepted
            where every play of both sides ends with probability one (else
            :class:`~babytris.solvers.termination.GamesDoNotEnd`, a
            ``ValueError`` with the rows that prove it), and bounded by the
            games' length (:attr:`Solution.longest_game`).
        opponent: ``"random"`` (default), ``"minimax"``, ``"minavg"``,
            ``"gaps"``, or a given opponent (see :mod:`babytris.solvers.roles`).
        player: ``"optimal"`` (default; ``"random"`` for ``"minavg"`` and
            ``"gaps"``), ``"random"``, or a given policy.
        reward: a :class:`Reward` weighting lines, height, points and holes
            (the robust-player study), cells filled and a cost for losing
            (:mod:`babytris.solvers.models`); default: points.
        tol: stop once a Bellman optimality sweep changes no value by more
            than ``tol`` (> 0).
        max_iter: at most this many optimality sweeps (>= 1).
        method: ``"mpi"`` (default when one side is fixed or random; ``"vi"``
            for a player placing at random or a given player against an
            optimising opponent): modified policy iteration, each optimality
            sweep followed by up to ``eval_sweeps`` cheaper sweeps evaluating
            its greedy policy (against ``"minimax"``, the player's moves, with
            the opponent still choosing: van der Wal's generalized policy
            iteration, see :attr:`~babytris.solvers.roles.Roles.policy_iteration`);
            ``"strategy"`` (default for an optimal player against
            ``"minimax"`` at a discount below 1): strategy iteration, each
            optimality sweep followed by the opponent's exact evaluation and
            improvement and ``eval_sweeps`` evaluation sweeps (Hoffman and
            Karp, see :func:`~babytris.solvers.sweeping.strategy_iteration`);
            ``"vi"``: value iteration.  All three
            sweep in place (Gauss-Seidel: a sweep reads the values it has
            already updated), largest boards first.  ``"jacobi"``: value
            iteration as textbooks write it, synchronous: each sweep reads
            only the values of the sweep before (three to four times the
            sweeps of ``"vi"`` at discount 0.9).  All stop on the same test, so all are within about
            ``tol * discount / (1 - discount)`` of the exact values (the
            proven bound of each result: :attr:`Solution.error_bound`).
        accelerate: extrapolate along the slowest mode once residuals fall
            by a steady ratio (Aitken); about halves the work.  (Not within
            the evaluation sweeps of a game, which are not linear.)  Default
            None: on, but for ``method="jacobi"``, which runs as textbooks
            write it unless asked (``accelerate=True``).
        eval_sweeps: policy-evaluation sweeps per iteration for ``"mpi"`` (>= 0;
            default: more the longer the horizon, ``0.25 / (1 - discount)``
            kept in [4, 40], see :func:`babytris.game.validation.default_eval_sweeps`)
            and ``"strategy"`` (default 2, 4 above discount 0.9:
            :func:`babytris.game.validation.default_strategy_sweeps`; once strategy
            iteration gives up its exact evaluations, after 12 missed rounds,
            its rounds run ``"mpi"``'s default number instead, see
            :func:`babytris.solvers.sweeping.strategy_iteration`).
        n_jobs: threads (default: every core, less those other processes
            keep busy) searching the boards and building the move table and,
            where the rules layer the boards (see :func:`~babytris.engine.transitions.sweep_order`),
            sharing each layer of a sweep; the result does not depend on it.
        max_memory: refuse, with :class:`~babytris.MemoryLimitError`, work
            needing more bytes than this (default 8 GiB).
        progress: True draws progress bars on stderr (tqdm; boards found
            while enumerating, then the residual's way down to ``tol``) when
            stderr is a terminal and the work takes over a second; or a
            callable, called after each optimality sweep as
            ``progress(iteration, residual)``.
        minimize: solve the quotient by state-partition minimization
            (:func:`babytris.minimize`: states that must share a value merged),
            spread its values back and finish on the full game with the same
            stopping test (as a rule one greedy sweep, which records the moves).
            Named opponent and player models only.
        ties: which of equally good moves (and pieces, for an optimising
            opponent) the policies take: ``"first"`` (default: the lowest
            placement number or piece index), ``"last"`` or ``"random"``
            (drawn with ``tie_seed``); see :mod:`babytris.solvers.ties`.  The values
            do not depend on it; what a policy scores against another side
            may.
        tie_seed: the seed of ``ties="random"``, in [0, 2**63).

    Returns:
        :class:`Solution` with ``values`` of shape ``(n_boards, n_pieces)``.
    """
    match = Match.asked(rules, rule_fields, player, opponent, reward)
    rules, player, opponent, reward = match.rules, match.player, match.opponent, match.reward
    _check_progress(progress)  # before the search, which may take a while
    check_ties(ties, tie_seed)
    roles = resolve(None, opponent, player, reward)
    method = solver_method(roles, method, discount)
    accelerate = default_accelerate(method, accelerate)
    check_solver_args(discount, tol, max_iter, method, eval_sweeps, accelerate, undiscounted=True)
    per_board = solver_bytes_per_board(rules, method, bool(accelerate))
    if roles.reward is not None or roles.opponent == "gaps":
        # A reward per move (at most every placement legal) and per state.
        per_board += 8 * (most_moves(rules) + rules.n_pieces)
    with _progress_bars(progress) as bars:
        transitions = match.table
        if transitions is None:
            transitions = enumerate_boards(
                rules,
                max_memory=max_memory,
                n_jobs=n_jobs,
                solver_bytes_per_board=per_board,
                progress=None if bars is None else bars.enumerated,
            )
        return solve_transitions(
            transitions,
            discount=discount,
            tol=tol,
            max_iter=max_iter,
            opponent=opponent,
            player=player,
            reward=reward,
            method=method,
            accelerate=accelerate,
            eval_sweeps=eval_sweeps,
            n_jobs=n_jobs,
            progress=progress if bars is None else bars,
            minimize=minimize,
            ties=ties,
            tie_seed=tie_seed,
        )


def default_accelerate(method: str, accelerate: bool | None) -> bool | None:
    """``accelerate`` as given, or by default (None) on but for ``"jacobi"``:
    synchronous value iteration is the textbook method, plain unless asked."""
    return method != "jacobi" if accelerate is None else accelerate


def solver_bytes_per_board(rules: Rules, method: str, accelerate: bool, n_boards: int | None = None) -> int:
    """Bytes the solver allocates per board beside the move table (points
    only: a weighted reward adds its per-move rewards); given ``n_boards``,
    those of a table that size, which modified policy iteration may solve
    keeping board values alone (see :data:`~babytris.solvers.sweep_arrays.BOARD_VALUES_ONLY_STATES`)."""
    P = rules.n_pieces
    if method == "mpi" and n_boards is not None and n_boards * P > sweep_arrays.BOARD_VALUES_ONLY_STATES:
        # While sweeping: the board values, and with one piece (no room in the values' and moves'
        # pages) the jump's changes, the chosen moves' cache and the sweep order; after: state values
        # and moves, with the board values (while the values are written) or the placement numbers.
        sweeping = 8 + (0 if P >= 2 else 4 + 5 * P + 4)
        return max(sweeping, 8 * P + 2 * P + max(8, 2 * P))
    accelerated = method in ("vi", "jacobi") and accelerate
    per_state = SOLVER_BYTES_PER_STATE + (ACCELERATED_VI_BYTES_PER_STATE if accelerated else 0)
    history = ACCELERATED_BYTES_PER_BOARD.get(method, 0) if accelerate else 0
    synchronous = 8 if method == "jacobi" else 0  # the board values of the sweep before
    # strategy iteration: the opponent's piece per board, where it leads, its reward, a walk's scratch
    strategy = _strategy.OpponentResponse.bytes_per_board() if method == "strategy" else 0
    return per_state * P + SOLVER_BYTES_PER_BOARD + history + synchronous + strategy


def solve_transitions(
    transitions: Transitions,
    *,
    discount: float = 0.9,
    tol: float = 1e-8,
    max_iter: int = 1000,
    opponent: Opponent = "random",
    player: Player | None = None,
    reward: Reward | None = None,
    method: str | None = None,
    accelerate: bool | None = None,
    eval_sweeps: int | None = None,
    n_jobs: int | None = None,
    progress: Progress | ProgressBars | bool | None = None,
    minimize: bool = False,
    ties: str = "first",
    tie_seed: int | None = None,
) -> Solution:
    """:func:`solve` on an already enumerated game graph (skips the search);
    ``progress`` may also be a :class:`~babytris.engine.progress.ProgressBars`.

    Returns:
        :class:`Solution` with ``values`` of shape ``(n_boards, n_pieces)``, as :func:`solve`.
    """
    check_type("transitions", transitions, Transitions, "a babytris.Transitions (from enumerate_boards)")
    roles = Match(transitions.rules, player, opponent, reward, transitions).roles()
    method = solver_method(roles, method, discount)
    accelerate = default_accelerate(method, accelerate)
    discount, tol, max_iter, eval_sweeps, accelerate = check_solver_args(
        discount, tol, max_iter, method, eval_sweeps, accelerate, undiscounted=True
    )
    minimize = check_bool("minimize", minimize)
    ties, tie_seed = check_ties(ties, tie_seed)
    _check_progress(progress)
    with _progress_bars(progress) as bars:
        told: Progress | None = progress if callable(progress) and not isinstance(progress, ProgressBars) else None
        if bars is not None:
            told = lambda iteration, residual: bars.swept(iteration, residual, tol)  # noqa: E731
        settings = SolverSettings(method, float(discount), tol, max_iter, eval_sweeps, accelerate, n_jobs, told)
        solution = _solve(transitions, roles, settings, minimize=minimize)
    return break_ties(solution, ties, tie_seed)


def _check_progress(progress: object) -> None:
    if not (progress is None or isinstance(progress, (bool, ProgressBars)) or callable(progress)):
        raise ValueError(f"progress must be True, False, None or a callable(iteration, residual), got {progress!r}")


@contextmanager
def _progress_bars(progress: object) -> Iterator[ProgressBars | None]:
    """The bars to draw: new ones for ``progress=True`` (closed at the end),
    the ones given, or None (no bars: None, False or a callable)."""
    if isinstance(progress, ProgressBars):
        yield progress
    elif progress is True:
        with ProgressBars() as bars:
            yield bars
    else:
        yield None


def _solve(
    transitions: Transitions,
    roles: Roles,
    settings: SolverSettings,
    *,
    minimize: bool = False,
    warm: tuple[np.ndarray, np.ndarray, list[float]] | None = None,
) -> Solution:
    """solve_transitions() once its arguments are checked (``minimize``:
    solve the quotient first, see :func:`_solve_quotient`; ``warm``:
    state values, board values and the residuals of sweeps already run
    elsewhere, to go on from, as :func:`babytris.modes.sharded.distributed.solve_sharded` does).

    Returns:
        :class:`Solution`, its moves the first best within the tie slack.
    """
    started = time.perf_counter()
    longest = _longest_game(transitions, roles, settings)
    sweeps = sweeps_for(transitions, roles, settings, can_drop_states=warm is None and not minimize)
    partition: Partition | None = None
    residuals: list[float] = []
    evaluations: list[int] = []  # evaluation sweeps after each greedy one (modified policy iteration)
    if warm is not None:
        sweeps.values[:], sweeps.board_values[:], residuals = warm[0].ravel(), warm[1], list(warm[2])
    if minimize:
        # Solve the quotient and spread its values over the game; the sweeps
        # of the full game below then record the moves and apply the same
        # stopping test as without minimizing (one sweep, as a rule).
        partition, residuals = _solve_quotient(transitions, roles, settings, sweeps, evaluations)
    done = len(residuals)
    progress = settings.progress
    told = None if progress is None else (lambda iteration, residual: progress(done + iteration, residual))
    residuals += _iterate(
        sweeps.arrays(),
        settings.method,
        settings.tol,
        max(1, settings.max_iter - done),
        settings.eval_sweeps,
        settings.accelerate,
        told,
        settings.n_jobs,
        roles.single_agent,
        len(layers(transitions.rules)),  # (cell counts step round the layers: synchronous sweeps' modes cycle so)
        evaluations,
        sweeps_alone=default_eval_sweeps(settings.discount),
    )
    evaluations += [0] * (len(residuals) - len(evaluations))  # (value iteration: none)
    residual = residuals[-1] if residuals else 0.0
    threads = cast(_sweep.Sweeper, sweeps.sweeper).n_threads
    tied = roles.moves == MOVES_BEST and residual <= settings.tol
    slack = _settle_moves(transitions, sweeps, settings, tied=tied, residual=residual, longest=longest)
    values, moves = sweeps.values.reshape(transitions.n_boards, transitions.rules.n_pieces), sweeps.policy
    del sweeps  # (the board values, freed before the placement numbers: the solution keeps none of them)
    placement = _placements(transitions, moves, threads, settings.n_jobs)
    return Solution(
        rules=transitions.rules,
        discount=settings.discount,
        values=values,
        policy=placement,
        iterations=len(residuals),
        residual=residual,
        converged=residual <= settings.tol,
        residuals=np.array(residuals),
        evaluation_sweeps=np.array(evaluations, dtype=np.int32),
        transitions=transitions,
        opponent=roles.opponent,
        player=roles.player,
        opponent_policy=_opponent_policy(roles, values, slack, transitions),
        opening_row=roles.opening_row,
        reward=roles.reward,
        method=settings.method,
        accelerated=bool(settings.accelerate) and settings.method != "strategy",
        tol=settings.tol,
        max_iter=settings.max_iter,
        seconds={"enumerate": transitions.seconds, "solve": time.perf_counter() - started},
        partition=partition,
        longest_game=longest,
    )


def _longest_game(transitions: Transitions, roles: Roles, settings: SolverSettings) -> float | None:
    """At discount 1 (the total reward until game over): refuse a game some
    play never ends (:class:`~babytris.solvers.termination.GamesDoNotEnd`),
    else return the proven bound on the expected number of placements until
    game over that bounds the values' error; None where discounted."""
    if settings.discount < 1.0:
        return None
    drawn = roles.pieces == PIECES_RANDOM
    moves, fixed = roles.moves, roles.fixed_move  # (a random or given player's own games)
    check_games_end(transitions, drawn=drawn, moves=moves, fixed_move=fixed)
    n_threads = resolve_n_jobs(settings.n_jobs)
    return float(
        longest_games(transitions, drawn=drawn, n_threads=n_threads, moves=moves, fixed_move=fixed).max(initial=0.0)
    )


def _solve_quotient(
    transitions: Transitions,
    roles: Roles,
    settings: SolverSettings,
    sweeps: Sweeps,
    evaluations: list[int],
) -> tuple[Partition, list[float]]:
    """Solve the quotient of the game under its coarsest partition for
    ``roles`` and spread its values over ``sweeps``' arrays; returns the
    partition and the quotient's residuals."""
    partition = partition_for(transitions, roles)
    quotient = quotient_sweeper(partition, sweeps.scores, sweeps.probs, settings.discount, sweeps.modes, sweeps.chance)
    residuals = _iterate(
        quotient,
        settings.method,
        settings.tol,
        settings.max_iter,
        settings.eval_sweeps,
        settings.accelerate,
        settings.progress,
        settings.n_jobs,
        roles.single_agent,
        len(layers(transitions.rules)),
        evaluations,
        sweeps_alone=default_eval_sweeps(settings.discount),
    )
    sweeps.values[:] = partition.expand(np.asarray(quotient.values)).ravel()  # (flat: group * P + piece)
    sweeps.board_values[:] = quotient.board_values[partition.board_labels]
    return partition, residuals


def _settle_moves(
    transitions: Transitions,
    sweeps: Sweeps,
    settings: SolverSettings,
    *,
    tied: bool,
    residual: float,
    longest: float | None,
) -> float:
    """End the sweeps: free their scratch, write the state values and moves
    where the sweeps kept board values alone, and (``tied``: the best moves,
    converged) make each move the first within the tie slack of its best
    (``longest``: the games' length bound, undiscounted).

    Which of several equally good moves the sweeps recorded depends on the
    rounding along the way (the method, the threads); the first of those
    within what the values can tell apart makes the policy depend on the
    game alone.  The passes take the threads of the last sweep, which the
    tuner chose by the load (a look of their own would cost a dozen system
    calls, each a point where a busy machine takes the core away).

    Returns:
        The tie slack (0.0 where not converged).
    """
    sweeper = cast(_sweep.Sweeper, sweeps.sweeper)
    threads, converged = sweeper.n_threads, residual <= settings.tol
    if not sweeps.boards_only:
        slack = tie_slack(settings.discount, residual, sweeps.values, longest) if converged else 0.0
        if tied:
            sweeper.first_best_moves(slack)
        sweeps.sweeper = None
        return slack
    # (the sweeps' scratch lies in the values' and moves' pages: the sweeper goes first)
    sweeps.sweeper = sweeps.changes = None
    del sweeper
    table = (
        transitions.offsets,
        transitions.next_board,
        transitions.lines,
        sweeps.scores,
        sweeps.board_values,
        settings.discount,
    )
    _greedy.state_values(*table, sweeps.values, dead_value=sweeps.dead, policy=sweeps.policy, n_threads=threads)
    slack = tie_slack(settings.discount, residual, sweeps.values, longest) if converged else 0.0
    if tied:
        _greedy.first_best_moves(*table, sweeps.policy, slack, best=sweeps.values, n_threads=threads)
    return slack


def _placements(transitions: Transitions, moves: np.ndarray, threads: int, n_jobs: int | None) -> np.ndarray:
    """The policy's placement numbers from each state's move (its offset in
    its row), shaped ``(n_boards, n_pieces)``: read off the table where it
    holds them, else numbered when the policy is first read."""
    shape = (transitions.n_boards, transitions.rules.n_pieces)
    if transitions.placement_stored:
        return transitions.chosen_placements(moves.reshape(shape), threads).reshape(shape)
    return cast(np.ndarray, ChosenMoves(moves.reshape(shape), resolve_n_jobs(n_jobs)))


def _iterate(
    arrays: SweepArrays,
    method: str,
    tol: float,
    max_iter: int,
    eval_sweeps: int,
    accelerate: bool,
    progress: Progress | None,
    n_jobs: int | None,
    linear: bool,
    period: int = 1,
    evaluations: list[int] | None = None,
    *,
    sweeps_alone: int | None = None,
) -> list[float]:
    """Run ``method`` on ``arrays``' sweeper to ``tol``; returns the greedy
    residuals (``linear``: whether evaluation sweeps are, see
    :func:`~babytris.solvers.sweeping.modified_policy_iteration`; ``period``: the
    game's layers, over which synchronous sweeps jump; ``evaluations``, if
    given, gets the evaluation sweeps after each greedy one; ``sweeps_alone``:
    strategy iteration's evaluation sweeps a round once it gives up its exact
    evaluations, see :func:`~babytris.solvers.sweeping.strategy_iteration`)."""
    tuned = ThreadTuner(arrays.sweeper, resolve_n_jobs(n_jobs), arrays.first_touches)
    if method == "strategy":
        return strategy_iteration(
            tuned,
            _strategy.OpponentResponse(arrays.sweeper),
            tol,
            max_iter,
            eval_sweeps,
            sweeps_alone=sweeps_alone,
            progress=progress,
            evaluations=evaluations,
        )
    if method == "mpi":
        return modified_policy_iteration(
            tuned,
            arrays.board_values,
            tol,
            max_iter,
            eval_sweeps,
            accelerate=accelerate,
            progress=progress,
            linear=linear,
            evaluations=evaluations,
            changes=arrays.changes,
        )
    if arrays.values is None:  # (boards_only is for modified policy iteration alone)
        raise ValueError(f"method={method!r} sweeps state values: give them")
    return value_iteration(
        tuned,
        arrays.values,
        arrays.board_values,
        tol,
        max_iter,
        accelerate=accelerate,
        progress=progress,
        period=period if method == "jacobi" else 1,
    )


def _opponent_policy(roles: Roles, values: np.ndarray, slack: float, transitions: Transitions) -> np.ndarray | None:
    """The piece the opponent gives on each board (the first of those within
    ``slack`` of the least or most valuable, among those a bag holds), None if drawn."""
    if roles.pieces not in (PIECES_WORST, PIECES_BEST):
        return roles.piece_choice
    chances = np.ascontiguousarray(transitions.draw_chances()) if transitions.bags is not None else None
    return _strategy.chosen_pieces(np.ascontiguousarray(values), slack, roles.pieces == PIECES_WORST, chances)
