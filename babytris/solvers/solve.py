"""solve(): optimal play against randomly drawn pieces, by value iteration."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ..engine.enumeration import enumerate_boards
from ..engine.placements import most_moves
from ..engine.progress import ProgressBars
from ..engine.resources import DEFAULT_MAX_MEMORY, resolve_n_jobs
from ..engine.reward import Reward
from ..engine.transitions import Transitions, independent_layers, layers, sweep_order
from ..game.bags import bag_chances
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
from . import _greedy, _strategy, _sweep
from .match import Match
from .minimize import Partition
from .minimize import minimize as minimize_states
from .roles import MOVES_BEST, PIECES_BEST, PIECES_WORST, Opponent, Player, Roles, resolve
from .roles import OPPONENT_MODELS as OPPONENTS
from .sweeping import Progress, ThreadTuner, modified_policy_iteration, strategy_iteration, value_iteration
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
#: Tables of at most this many states have their evaluation sweeps read the
#: chosen moves from a cache of 5 bytes a state (at most 80 MiB: left out of
#: the memory estimates), which spares them a random load a move
#: (:meth:`_sweep.Sweeper.cache_chosen_moves`).
CHOSEN_MOVES_STATES = 2**24
#: Modified policy iteration over tables of more states than this, in the
#: common games (the best move, points, pieces drawn or the least valuable
#: given), keeps the board values alone while it sweeps, and writes the state
#: values once, from the converged board values, after the sweep order and
#: the jump's changes are freed (:func:`babytris.solvers._greedy.state_values`): 8
#: bytes a state less at the sweeps' peak.  (Smaller tables keep the state
#: values through the sweeps: one pass less.)
BOARD_VALUES_ONLY_STATES = 2**24


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
        discount: in [0, 1); 1 is allowed with the combo objective (the
            expected combo length: the solve converges if every combo ends, as
            it does when some piece sequence breaks it from every board).
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
    check_solver_args(discount, tol, max_iter, method, eval_sweeps, accelerate, undiscounted=rules.objective == "combo")
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
    keeping board values alone (see :data:`BOARD_VALUES_ONLY_STATES`)."""
    P = rules.n_pieces
    if method == "mpi" and n_boards is not None and n_boards * P > BOARD_VALUES_ONLY_STATES:
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
        discount, tol, max_iter, method, eval_sweeps, accelerate, undiscounted=transitions.rules.objective == "combo"
    )
    minimize = check_bool("minimize", minimize)
    ties, tie_seed = check_ties(ties, tie_seed)
    _check_progress(progress)
    with _progress_bars(progress) as bars:
        told: Progress | None = progress if callable(progress) and not isinstance(progress, ProgressBars) else None
        if bars is not None:
            told = lambda iteration, residual: bars.swept(iteration, residual, tol)  # noqa: E731
        solution = _solve(
            transitions,
            roles,
            method,
            float(discount),
            tol,
            max_iter,
            eval_sweeps,
            accelerate,
            n_jobs,
            told,
            minimize,
            (opponent, player, reward),
        )
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
    method: str,
    discount: float,
    tol: float,
    max_iter: int,
    eval_sweeps: int,
    accelerate: bool,
    n_jobs: int | None,
    progress: Progress | None,
    minimize: bool,
    given: tuple,
    warm: tuple[np.ndarray, np.ndarray, list[float]] | None = None,
) -> Solution:
    """solve_transitions() once its arguments are checked (``given``: the
    opponent, player and reward as passed, for the minimization; ``warm``:
    state values, board values and the residuals of sweeps already run
    elsewhere, to go on from, as :func:`babytris.modes.distributed.solve_sharded` does)."""
    opponent, player, reward = given
    rules = transitions.rules
    n, n_pieces = transitions.n_boards, rules.n_pieces
    started = time.perf_counter()
    scores = np.asarray(rules.line_scores, dtype=np.float64)
    probs = np.asarray(rules.probabilities, dtype=np.float64)
    dead = roles.dead_value(rules)
    chance = None
    if transitions.bags is not None:  # the chances depend on each node's bag: P per bag
        chance, probs = transitions.bags.astype(np.int32), bag_chances(rules).ravel()
    modes: dict[str, Any] = dict(
        pieces=roles.pieces,
        moves=roles.moves,
        piece_choice=roles.piece_choice,
        fixed_move=roles.fixed_move,
        dead_value=dead,
        synchronous=method == "jacobi",
    )
    with np.errstate(over="ignore", invalid="ignore"):  # huge weights are refused just below, with their size
        move_reward = roles.move_rewards(transitions)
    check_value_range(scores, move_reward, dead, discount)
    boards_only = (
        method == "mpi"
        and transitions.n_states > BOARD_VALUES_ONLY_STATES
        and roles.pieces in (_sweep.PIECES_RANDOM, PIECES_WORST)
        and roles.moves == MOVES_BEST
        and move_reward is None
        and warm is None
        and not minimize
    )
    values, board_values = _initial_values(transitions.offsets, n_pieces, dead, states=not boards_only)
    # (with boards_only the state values and the moves are written once the sweeps are done, the
    # moves noted meanwhile in the sweeper's cache: till then their arrays are pages never
    # touched, which hold no memory)
    policy = np.empty(n * n_pieces, dtype=np.int16) if boards_only else np.full(n * n_pieces, -1, dtype=np.int16)
    # The state values' and moves' pages, written only once the sweeps are done, hold the sweeps'
    # scratch till then where there is room (P >= 2): the sweep order (4 bytes a live board) in the
    # moves', a jump's direction (4 bytes a board, zeros as allocated) and the chosen moves' cache
    # (5 bytes a state) in the values': 595 MB touched once, not twice, at 4x7.
    room_for_order = boards_only and n_pieces >= 2
    order_room = policy[: len(policy) // 2 * 2].view(np.int32) if room_for_order else None  # (n * P // 2 >= n)
    order, layer_starts = sweep_order(transitions, order_room)
    changes = room = None
    if boards_only and 4 + 5 * n_pieces <= 8 * n_pieces:
        changes = values.view(np.float32)[:n]
        room = values.view(np.uint8)[4 * n :]
    period = len(layers(rules))  # cell counts step round the layers: synchronous sweeps' modes cycle so
    sweeper = _sweep.Sweeper(
        transitions.offsets,
        transitions.next_board,
        transitions.lines,
        scores,
        probs,
        float(discount),
        None if boards_only else values,
        board_values,
        None if boards_only else policy,
        order,
        layer_starts,
        **modes,
        chance=chance,
        move_reward=move_reward,
        independent_layers=independent_layers(transitions),
        chosen_room=room,
    )
    if method in ("mpi", "strategy") and transitions.n_states <= CHOSEN_MOVES_STATES:
        sweeper.cache_chosen_moves()
    partition, residuals = None, []
    sweeps_alone = default_eval_sweeps(discount)  # (strategy iteration's, once it gives up exact evaluations)
    evaluations: list[int] = []  # evaluation sweeps after each greedy one (modified policy iteration)
    if warm is not None:
        values[:], board_values[:], residuals = warm[0].ravel(), warm[1], list(warm[2])
    if minimize:
        # Solve the quotient and spread its values over the game; the sweeps
        # of the full game below then record the moves and apply the same
        # stopping test as without minimizing (one sweep, as a rule).
        partition = minimize_states(transitions, opponent=opponent, player=player, reward=reward)
        quotient = _quotient_sweeper(partition, scores, probs, float(discount), modes, chance)
        residuals = _iterate(
            quotient,
            method,
            tol,
            max_iter,
            eval_sweeps,
            accelerate,
            progress,
            n_jobs,
            roles.single_agent,
            period,
            evaluations,
            sweeps_alone=sweeps_alone,
        )
        values[:] = partition.expand(np.asarray(quotient.values)).ravel()  # (flat quotient values: group * P + piece)
        board_values[:] = quotient.board_values[partition.board_labels]
    done = len(residuals)
    # (what the first sweep touches first: the values and the moves chosen, 5 bytes a state in the cache)
    fresh = board_values.nbytes + (5 * len(policy) if boards_only else values.nbytes + policy.nbytes)
    told = None if progress is None else (lambda iteration, residual: progress(done + iteration, residual))
    residuals += _iterate(
        _Arrays(sweeper, None if boards_only else values, board_values, fresh, changes),
        method,
        tol,
        max(1, max_iter - done),
        eval_sweeps,
        accelerate,
        told,
        n_jobs,
        roles.single_agent,
        period,
        evaluations,
        sweeps_alone=sweeps_alone,
    )
    evaluations += [0] * (len(residuals) - len(evaluations))  # (value iteration: none)
    iterations = len(residuals)
    residual = residuals[-1] if residuals else 0.0
    # Which of several equally good moves the sweeps recorded depends on the
    # rounding along the way (the method, the threads); once converged, take
    # the first of those within what the values can tell apart, so that the
    # policy depends on the game alone.  The passes after the sweeps take the threads of the last
    # sweep, which the tuner chose by the load (a look of their own would cost a dozen system
    # calls, each a point where a busy machine takes the core away).
    threads = sweeper.n_threads
    tied = roles.moves == MOVES_BEST and residual <= tol
    if boards_only:
        del sweeper, order, order_room, changes, room  # (the sweeps' scratch: room for the values and moves)
        table = (transitions.offsets, transitions.next_board, transitions.lines, scores, board_values, discount)
        _greedy.state_values(*table, values, dead_value=dead, policy=policy, n_threads=threads)
        slack = tie_slack(float(discount), residual, values) if residual <= tol else 0.0
        if tied:
            _greedy.first_best_moves(*table, policy, slack, best=values, n_threads=threads)
        del table
    else:
        slack = tie_slack(float(discount), residual, values) if residual <= tol else 0.0
        if tied:
            sweeper.first_best_moves(slack)
        del sweeper, order
    del board_values  # (the solution keeps none of these: freed before its placement numbers)
    values = values.reshape(n, n_pieces)
    # The policy holds each move's offset in its row; report the placement number (a table that
    # does not hold them numbers the moves when the policy is first read).
    moves = policy.reshape(n, n_pieces)
    if transitions.placement_stored:
        placement = transitions.chosen_placements(moves, threads).reshape(n, n_pieces)
    else:
        placement = cast(np.ndarray, ChosenMoves(moves, resolve_n_jobs(n_jobs)))
    return Solution(
        rules=rules,
        discount=float(discount),
        values=values,
        policy=placement,
        iterations=iterations,
        residual=residual,
        converged=residual <= tol,
        residuals=np.array(residuals),
        evaluation_sweeps=np.array(evaluations, dtype=np.int32),
        transitions=transitions,
        opponent=roles.opponent,
        player=roles.player,
        opponent_policy=_opponent_policy(roles, values, slack, transitions),
        opening_row=roles.opening_row,
        reward=roles.reward,
        method=method,
        accelerated=bool(accelerate) and method != "strategy",
        tol=float(tol),
        max_iter=int(max_iter),
        seconds={"enumerate": transitions.seconds, "solve": time.perf_counter() - started},
        partition=partition,
    )


#: The largest value a solve may reach: far below float64's 1.8e308, so that
#: the sums of a sweep (probabilities times values) cannot overflow.
MAX_VALUE = 1e300


def check_value_range(scores: np.ndarray, move_reward: np.ndarray | None, dead: float, discount: float) -> None:
    """Refuse rewards so large that the values would overflow float64 (they
    would run every sweep and end as inf or NaN): a placement earns at most
    ``r`` = the largest line score plus the largest reward, so every value is
    at most ``r / (1 - discount)`` in size (``r`` times the longest game when
    undiscounted, where the objective is a combo of unit scores)."""
    with np.errstate(over="ignore", invalid="ignore"):
        largest = float(np.max(np.abs(scores))) + (
            0.0 if move_reward is None else float(np.max(np.abs(move_reward), initial=0.0))
        )
        bound = max(largest, abs(dead)) / (1.0 - discount) if discount < 1.0 else max(largest, abs(dead))
    if not (np.isfinite(bound) and bound <= MAX_VALUE):
        raise ValueError(
            f"line_scores and reward weights are too large: a placement may earn {largest:.3g} and the values "
            f"could reach {bound:.3g} at discount {discount}, beyond {MAX_VALUE:.0e} (float64 overflows at 1.8e308); "
            "scale the scores and weights down"
        )


@dataclass
class _Arrays:
    """A sweeper with the arrays it updates."""

    sweeper: _sweep.Sweeper
    values: np.ndarray | None  # (None: board values only, see BOARD_VALUES_ONLY_STATES)
    board_values: np.ndarray
    first_touches: int  # bytes the first sweep writes first (the values, the moves chosen)
    changes: np.ndarray | None = None  # room for a jump's direction (modified policy iteration)


def _iterate(
    arrays: _Arrays,
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


def _initial_values(
    offsets: np.ndarray, n_pieces: int, dead: float, *, states: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Starting state and board values (flat, and per board): 0, but ``dead``
    for the states with no move, and for the boards with no move at all (the
    sweeps never visit those); ``states=False`` leaves the state values 0
    (a solve keeping board values alone writes them all at its end)."""
    values = np.zeros(len(offsets) - 1)
    board_values = np.zeros(values.size // n_pieces)
    if dead:
        no_move = np.diff(offsets) == 0
        if states:
            values[no_move] = dead
        board_values[no_move.reshape(-1, n_pieces).all(axis=1)] = dead
    return values, board_values


def _quotient_sweeper(
    partition: Partition,
    scores: np.ndarray,
    probs: np.ndarray,
    discount: float,
    modes: dict,
    chance: np.ndarray | None = None,
) -> _Arrays:
    """A sweeper over the quotient game: board groups, one row per (group, piece).
    One layer, swept from the last group to the first (a group's members need
    not share a cell count, and groups are numbered in board order, so moves
    that clear nothing mostly lead to later groups)."""
    n, n_pieces = partition.n_board_classes, partition.transitions.rules.n_pieces
    values, board_values = _initial_values(partition.offsets, n_pieces, modes["dead_value"])
    live = np.flatnonzero(np.diff(partition.offsets[::n_pieces]) > 0).astype(np.int32)[::-1].copy()
    policy = np.full(n * n_pieces, -1, dtype=np.int16)
    sweeper = _sweep.Sweeper(
        partition.offsets,
        partition.next_board,
        partition.lines,
        scores,
        probs,
        discount,
        values,
        board_values,
        policy,
        live,
        np.array([0, live.size], dtype=np.int64),
        **modes,
        chance=None if chance is None else chance[partition.representatives].copy(),
        move_reward=partition.move_reward,
    )
    return _Arrays(sweeper, values, board_values, values.nbytes + board_values.nbytes + policy.nbytes)


def _opponent_policy(roles: Roles, values: np.ndarray, slack: float, transitions: Transitions) -> np.ndarray | None:
    """The piece the opponent gives on each board (the first of those within
    ``slack`` of the least or most valuable, among those a bag holds), None if drawn."""
    if roles.pieces not in (PIECES_WORST, PIECES_BEST):
        return roles.piece_choice
    chances = np.ascontiguousarray(transitions.draw_chances()) if transitions.bags is not None else None
    return _strategy.chosen_pieces(np.ascontiguousarray(values), slack, roles.pieces == PIECES_WORST, chances)
