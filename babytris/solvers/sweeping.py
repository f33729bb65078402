"""Iterating Bellman sweeps to a fixed point: value iteration, modified
policy iteration, strategy iteration (games against the least valuable
piece), Aitken extrapolation, and the choice of threads."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..engine.resources import cpu_pressure, idle_cores

__all__ = [
    "modified_policy_iteration",
    "evaluate_policy",
    "steady_ratio",
    "strategy_iteration",
    "value_iteration",
    "ThreadTuner",
    "Progress",
    "History",
    "ValuesBefore",
    "RoundState",
]

#: ``progress(iteration, residual)``, called after each optimality sweep.
Progress = Callable[[int, float], None]


class Sweeps(Protocol):
    """What the methods below sweep with: a :class:`_sweep.Sweeper`, or a :class:`ThreadTuner` over one."""

    def greedy_sweep(self, V_prev: np.ndarray | None = None, W_prev: np.ndarray | None = None, /) -> float:
        """One optimality sweep; returns its residual (the largest change of a board's value)."""

    def evaluation_sweep(self, changes: np.ndarray | None = None, /) -> float:
        """One sweep evaluating the recorded policy; returns its residual
        (``changes``, float32, if given, receives each board's change)."""


class Threaded(Sweeps, Protocol):
    """Sweeps that run on ``n_threads``: a :class:`_sweep.Sweeper`, or the lean mode's."""

    n_threads: int


class ThreadTuner:
    """A :class:`_sweep.Sweeper` (or another :class:`Threaded` sweeper) whose sweeps run on one thread, or on
    ``n_threads`` where these were clearly faster for that kind of sweep.

    Threads share a layer of a sweep and meet at its end; on a machine
    whose cores are busy elsewhere, a thread that loses its core holds up
    the others for a scheduler time slice at every layer, and a threaded
    sweep can take several times as long as one thread's.  So one thread is
    the default: after the first timed sweep of a kind the tuner times up to
    :attr:`PROBES` threaded sweeps (the answer does not depend on the
    threads) and keeps the threads as soon as one took under :attr:`MARGIN`
    of one thread's time, else goes back to one thread; a
    kept threaded sweep that later takes over twice one thread's time (the
    machine got busy) sends that kind back to one thread for good.  Sweeps
    under :attr:`MIN_SECONDS` on one thread stay there: threads cannot pay
    for their start and barriers.  The first sweep, untimed, runs on the
    threads only if it first touches ``first_touches`` bytes, at least
    :attr:`THREADED_FIRST_TOUCHES`, and the cores are free; so does the
    first sweep recording a jump's direction (it first touches its array).
    Greedy and evaluation sweeps run the same layers between the same
    barriers: where the evaluation's probe kept the threads, greedy sweeps,
    which do more work between the barriers, take them without a one-thread
    sweep of their own (:attr:`SIBLINGS`).

    The probe itself is what a busy machine makes costly (one threaded
    sweep can take many times one thread's), so it waits until the cores
    are free: until the tasks runnable on the machine besides this one
    (:func:`~babytris.engine.resources.idle_cores`) leave ``n_threads`` cores idle.  While
    other processes keep the cores busy, the solve never leaves one thread.
    With that guard, sweeps down to a third of a millisecond are worth a
    probe (on 2 cores, 4x5's evaluation sweeps of 0.7 ms take 0.42 ms on two
    threads: its solve by default takes 0.83-0.94 of one thread's).
    """

    #: Threads are kept only if a threaded sweep takes under this share of one thread's.
    MARGIN = 0.8
    #: Threaded sweeps timed at most before one thread is kept.  The first pays for
    #: waking the workers, asleep since their last work, and for the second core's
    #: cold caches: on 4x5 after another process's run (the naive C benchmark's
    #: setting) the first two threaded evaluation sweeps took 0.60-0.69 ms, one
    #: thread 0.50-0.62 ms and the later threaded ones 0.34-0.45 ms.
    PROBES = 3
    #: A kind of sweep, and the kind whose kept threads it takes at once: both go through the
    #: same layers, meeting at the same barriers, and the first does more work between them
    #: (every move, not the chosen one), so threads that paid for the second pay for it too.
    #: Its one thread's time (for the stall test) is estimated by the second's speed-up.  Its
    #: probe's one-thread reference cost 4x7 0.27-0.30 s for a greedy sweep of 0.15-0.16 s on two
    #: threads, and 4x5 1.6-1.7 ms for one of 1.0 ms.  (Not the other way: an evaluation sweep
    #: may be too short for threads where a greedy one is not.)
    SIBLINGS = {"greedy": "evaluation"}
    #: One-thread sweeps shorter than this are never tried on more threads.
    MIN_SECONDS = 3e-4
    #: The first sweep (untimed: it pays for the first touches of the values
    #: and moves chosen, mapped beforehand where Linux can, see ``_types.populate``)
    #: runs on the threads, where the cores are free, if it first touches this
    #: many bytes or more; smaller tables' first sweeps are too short to pay for
    #: waking the workers.  On 4x7 (1 GB) its sweep took 1.33 s where one thread
    #: took 2.44 s; on 4x5 (5 MB) solves in a loop took 38.0-39.6 ms
    #: with it against 39.5-40.6 ms (4 interleaved runs of 15).  Before the pages
    #: were mapped beforehand the threads' faults fought: the same first sweep
    #: took 13.7 ms on two threads and 6.3 ms on one, and 4x5 solves 53-56 ms.
    THREADED_FIRST_TOUCHES = 2**22
    #: Cores found busy are not looked at again for this long where the tasks waited for the
    #: CPUs (every core busy), or where it cannot be told: see :meth:`_cores_free`.
    BUSY_SECONDS = 0.05
    #: The tasks waited for the CPUs if some did for this share of the time since the tuner's
    #: last reading of the CPU pressure (:func:`~babytris.engine.resources.cpu_pressure`): as it
    #: started, or at its last busy look.
    STALLED_SHARE = 0.25
    #: Cores found busy where the tasks did not wait (a task of a moment, or fewer busy cores
    #: than threads) are not looked at again for this long, twice as long after each busy look
    #: in a row, up to :attr:`BUSY_SECONDS`.  A kernel thread's blip held the probes off for a
    #: whole 4x5 solve: in the naive C benchmark's setting, solves took 44.6-45.6 ms with every
    #: hold at 50 ms, 41.1 ms with holds from 2 ms and 42.6 ms from 5 ms (medians of 40,
    #: interleaved), where never looking took 42.9-43.5 ms.
    FIRST_SHORT_HOLD = 0.002

    def __init__(self, sweeper: Threaded, n_threads: int, first_touches: int = 0) -> None:
        self.sweeper = sweeper
        self.n_threads = n_threads
        self._first_touches = first_touches
        # Per kind of sweep: one thread's last time, the setting kept, and whether the threads were tried.
        self._one: dict[str, float] = {}
        self._kept: dict[str, int] = {}
        self._tried: dict[str, bool] = {}
        self._probes: dict[str, int] = {}
        self._speedup: dict[str, float] = {}  # one thread's time over the threads' in the probe that kept them
        self._untimed = 1  # the first sweep pays for first touches of fresh memory
        self._recorded = False  # whether an evaluation sweep has recorded a jump's direction
        self._busy_until = 0.0  # (perf_counter) cores found busy count as busy until then
        self._short_hold = self.FIRST_SHORT_HOLD  # the next hold where the tasks did not wait
        # (perf_counter, cpu_pressure()) at the last reading: one as the tuner starts gives its
        # first busy look a window to measure the waits over.  Only where the first sweep may run
        # on the threads: a smaller table's sweeps seldom last long enough to try them, and its
        # solves would pay for the reading's system calls each time (its first busy look, if any,
        # finds no reading and holds for BUSY_SECONDS).
        self._pressure: tuple[float, int] | None = None
        if n_threads > 1 and first_touches >= self.THREADED_FIRST_TOUCHES:
            self._stalled_share()

    def greedy_sweep(self, V_prev: np.ndarray | None = None, W_prev: np.ndarray | None = None, /) -> float:
        return self._timed("greedy", self.sweeper.greedy_sweep, (V_prev, W_prev))

    def evaluation_sweep(self, changes: np.ndarray | None = None, /) -> float:
        if changes is not None and not self._recorded:
            # The first sweep recording a jump's direction first touches its pages (143 MB at 4x7:
            # it took twice a sweep's time, and sent the threads back for good as a stall).
            self._recorded = True
            self._untimed += 1
        return self._timed("evaluation", self.sweeper.evaluation_sweep, (changes,))

    def timed(self, kind: str, work: Callable[[], float]) -> float:
        """``work()``, which runs on the sweeper's ``n_threads``, tuned as
        the sweeps are, by the times of earlier work of the same ``kind``
        (the opponent's steps of strategy iteration); returns its result."""
        return self._timed(kind, work, ())

    def _choose(self, kind: str) -> int:
        self._kept.setdefault(kind, 1)
        self._tried.setdefault(kind, self.n_threads == 1)
        if self._untimed and self.n_threads > 1 and self._first_touches >= self.THREADED_FIRST_TOUCHES:
            # (a look that finds the cores busy here holds no later probe off)
            return self.n_threads if idle_cores(self.n_threads) == self.n_threads else 1
        if not self._tried[kind] and self._sibling_speedup(kind) is not None:
            return self.n_threads
        if not self._tried[kind] and self._one.get(kind, 0.0) >= self.MIN_SECONDS and self._cores_free():
            return self.n_threads
        return self._kept[kind]

    def _sibling_speedup(self, kind: str) -> float | None:
        """The speed-up of the threads for the sibling of ``kind``
        (:attr:`SIBLINGS`) where they are kept for it; else None."""
        sibling = self.SIBLINGS.get(kind)
        if sibling is None or self._kept.get(sibling, 1) == 1:
            return None
        return self._speedup.get(sibling)

    def _cores_free(self) -> bool:
        """Whether ``n_threads`` cores are idle now (True where the load cannot
        be read).  Cores found busy are taken as busy for a while: each look
        is a dozen system calls, and on a machine whose every core is busy a
        system call is where a thread loses its core (looking before every
        sweep made 4x5 solves 13% slower under load; looking every 20 ms, 4x5
        minimax solves under load took 1.02-1.04 of one thread's time, every
        50 ms 1.00-1.02, every 100 ms 1.01-1.03: 3 runs of 60 solves each).
        So the hold is :attr:`BUSY_SECONDS` where the tasks waited for the
        CPUs (:attr:`STALLED_SHARE`) or that cannot be told, and short where
        they did not (:attr:`FIRST_SHORT_HOLD`): a look costs little on a core
        of one's own."""
        now = time.perf_counter()
        if now < self._busy_until:
            return False
        if idle_cores(self.n_threads) == self.n_threads:
            self._short_hold = self.FIRST_SHORT_HOLD
            return True
        stalled = self._stalled_share()
        hold = self.BUSY_SECONDS if stalled is None or stalled >= self.STALLED_SHARE else self._short_hold
        self._short_hold = min(2 * self._short_hold, self.BUSY_SECONDS)
        self._busy_until = now + hold
        return False

    def _stalled_share(self) -> float | None:
        """The share of the time since the last reading of the CPU pressure
        (:func:`~babytris.engine.resources.cpu_pressure`) during which some task
        waited for a CPU; None where it cannot be read, or at the first reading."""
        total, now = cpu_pressure(), time.perf_counter()
        last, self._pressure = self._pressure, None if total is None else (now, total)
        if last is None or total is None or now <= last[0] or total < last[1]:
            return None
        return min((total - last[1]) / 1e6 / (now - last[0]), 1.0)

    def _timed(self, kind: str, sweep, args) -> float:
        threads = self._choose(kind)
        self.sweeper.n_threads = threads
        started = time.perf_counter()
        residual = sweep(*args)
        seconds = time.perf_counter() - started
        if self._untimed:
            self._untimed -= 1
        elif threads == 1:
            self._one[kind] = seconds
        elif not self._tried[kind] and (speedup := self._sibling_speedup(kind)) is not None:
            self._one[kind] = seconds * speedup  # (taken from the sibling: no probe)
            self._tried[kind], self._kept[kind] = True, threads
        elif not self._tried[kind]:  # a probe, against one thread's last sweep
            self._probes[kind] = self._probes.get(kind, 0) + 1
            faster = seconds < self.MARGIN * self._one[kind]
            self._tried[kind] = faster or self._probes[kind] >= self.PROBES
            self._kept[kind] = threads if faster else 1
            if faster:
                self._speedup[kind] = self._one[kind] / seconds
        elif seconds > 2 * self._one[kind]:  # stalled: the machine got busy
            self._kept[kind] = 1
        return residual


@dataclass
class RoundState:
    """Where :func:`modified_policy_iteration` stands before a greedy sweep:
    with the board values, all it needs to go on as if it had not stopped
    (the changes a jump follows are recorded afresh in each round)."""

    #: The greedy sweeps' residuals so far, and the evaluation sweeps after each.
    residuals: list[float] = field(default_factory=list)
    evaluations: list[int] = field(default_factory=list)
    #: Jumps missed (a greedy residual above the one before, after a jump), and whether it still jumps.
    missed: int = 0
    accelerate: bool = True
    #: Whether the last round ended with a jump.
    jumped: bool = False


def modified_policy_iteration(
    sweeper: Sweeps,
    board_values: np.ndarray,
    tol: float,
    max_iter: int,
    eval_sweeps: int,
    *,
    accelerate: bool,
    progress: Progress | None = None,
    linear: bool = True,
    evaluations: list[int] | None = None,
    changes: np.ndarray | None = None,
    resume: RoundState | None = None,
    on_round: Callable[[RoundState], None] | None = None,
) -> list[float]:
    """Greedy sweeps, each followed (until converged) by up to ``eval_sweeps``
    sweeps evaluating its policy; returns the greedy sweeps' residuals
    (``evaluations``, if given, gets the evaluation sweeps after each).

    Evaluation sweeps update the board values W only (a greedy sweep derives
    V from them), so a greedy residual measures the change since the last
    greedy sweep, evaluations included.  Evaluating a fixed policy is a
    linear iteration, so with ``accelerate`` its residuals soon fall by a
    steady ratio and one Aitken jump of W (see :func:`value_iteration`) ends
    the evaluation early.  A greedy residual above the one before, after a
    jump, counts as a miss; after ``MAX_MISSED_JUMPS`` evaluations run plain.
    ``linear=False`` says the evaluation sweeps still choose (the opponent
    in a zero-sum game, see :attr:`babytris.solvers.roles.Roles.policy_iteration`):
    their residuals need not fall by a steady ratio, and no jump is made.
    ``changes``: room for a jump's direction (float32 zeros, one per board), if
    the caller has some; else it is allocated here.  ``resume``: go on from
    where an earlier run stood (with ``board_values`` as it left them; its
    residuals count towards ``max_iter`` and are returned, its evaluations
    go to ``evaluations``); ``on_round(state)`` is called before each greedy
    sweep, where the run could stop and be resumed (a checkpoint).
    """
    state = resume if resume is not None else RoundState(accelerate=accelerate and linear)
    accelerate = state.accelerate and linear
    residuals: list[float] = list(state.residuals)
    if evaluations is not None:
        evaluations[:] = state.evaluations
    if changes is not None and (changes.dtype != np.float32 or changes.shape != board_values.shape):
        raise ValueError(
            f"changes must be float32, one per board ({board_values.size}), got {changes.dtype} {changes.shape}"
        )
    if accelerate and changes is None:
        # (zeros: the boards no sweep visits, with no move, keep their value through a jump)
        changes = np.zeros(board_values.size, dtype=np.float32)
    missed = state.missed
    jumped = state.jumped
    while len(residuals) < max_iter:
        if on_round is not None:
            rounds = list(evaluations) if evaluations is not None else []
            on_round(RoundState(list(residuals), rounds, missed, accelerate, jumped))
        if _greedy_round(sweeper, residuals, tol, max_iter, progress, evaluations):
            break  # (after the last greedy sweep, values and policy stay as it left them)
        if jumped and residuals[-1] > residuals[-2]:
            missed += 1
            accelerate = missed < MAX_MISSED_JUMPS
        swept, jumped = evaluate_policy(sweeper, board_values, tol, eval_sweeps, accelerate=accelerate, changes=changes)
        if evaluations is not None:
            evaluations[-1] += swept
    return residuals


def evaluate_policy(
    sweeper: Sweeps,
    board_values: np.ndarray,
    tol: float,
    eval_sweeps: int,
    *,
    accelerate: bool,
    changes: np.ndarray | None,
) -> tuple[int, bool]:
    """The evaluation sweeps after one greedy sweep of :func:`modified_policy_iteration`
    (also each shard's, :mod:`babytris.modes.sharded.distributed`): up to ``eval_sweeps``, ended
    early by one changing no board value by more than ``tol`` or, with ``accelerate``,
    by an Aitken jump of ``board_values`` along ``changes`` (float32, one per board).

    Returns:
        ``(sweeps run, whether it jumped)``.
    """
    evaluation: list[float] = []
    for _ in range(eval_sweeps):
        # (changes are recorded in float32: not where they may pass its range)
        record = accelerate and len(evaluation) >= 2 and evaluation[-1] < MAX_RECORDED_CHANGE
        evaluation.append(sweeper.evaluation_sweep(changes if record else None))
        if evaluation[-1] <= tol:
            break  # evaluated as finely as the answer needs
        ratio = steady_ratio(evaluation)
        if record and ratio is not None and changes is not None:
            _jump_along(ratio, board_values, changes)
            return len(evaluation), True
    return len(evaluation), False


class Response(Protocol):
    """The opponent's side of :func:`strategy_iteration`: a
    :class:`_strategy.OpponentResponse`."""

    def start(self) -> None:
        """Give on each board the least valuable piece by the state values."""

    def evaluate(self) -> None:
        """Evaluate the pieces given exactly (the board values W)."""

    def step(self, margin: float, /) -> int:
        """Evaluate the pieces given exactly and improve them; returns how many boards changed piece."""


#: A round of :func:`strategy_iteration` must bring the greedy residual
#: below this share of the round before's...
SHORT_ROUND_GAIN = 0.9
#: ... or it counts as a miss; after this many, every round runs to the
#: opponent's best response...
FULL_ROUNDS_AFTER = 3
#: ... after this many, a round that missed evaluates by sweeps alone (the
#: others by one exact evaluation)...
SWEEPS_ONLY_AFTER = 6
#: ... and after this many, every round does.
EXACT_GIVEN_UP_AFTER = 12
#: An opponent changes piece only to one worth less by this share (times 1 + the value's size).
STEP_MARGIN = 1e-12
#: At most this many exact evaluations of the opponent a round.
MAX_STEPS = 100
#: The first round evaluates by this many sweeps alone, no exact evaluation.
FIRST_ROUND_SWEEPS = 2


def strategy_iteration(
    sweeper: Sweeps,
    response: Response,
    tol: float,
    max_iter: int,
    eval_sweeps: int,
    *,
    sweeps_alone: int | None = None,
    progress: Progress | None = None,
    evaluations: list[int] | None = None,
) -> list[float]:
    """Strategy iteration for a game whose opponent gives the least valuable
    piece; returns the greedy sweeps' residuals (``evaluations``, if given,
    gets the opponent's exact evaluations and the evaluation sweeps after
    each).  ``sweeps_alone``: the evaluation sweeps of a round once the
    exact evaluations are given up (default: ``eval_sweeps``; at least one);
    the sweeps of a round stop early once one changes no value by more than
    ``tol``, as modified policy iteration's do.

    Each round improves the player's moves by a greedy sweep (its residual
    is the stopping test, as for the other methods), then improves the
    opponent against them by Howard's policy iteration with exact
    evaluations (:class:`_strategy.OpponentResponse`: with both sides'
    choices fixed each board leads to one board, so the values solve in
    one walk), then runs ``eval_sweeps`` evaluation sweeps of the player's
    moves with the opponent choosing.  Run to the opponent's best response
    in every round, this is the strategy iteration of A. J. Hoffman and
    R. M. Karp, "On nonterminating stochastic games", Management Science 12
    (1966) 359-370, which reaches the optimal strategies after finitely
    many rounds from any start (for perfect-information games like this one
    at a fixed discount, in strongly polynomially many: T. D. Hansen,
    P. B. Miltersen and U. Zwick, "Strategy iteration is strongly polynomial
    for 2-player turn-based stochastic games with a constant discount
    factor", J. ACM 60 (2013) 1).

    Far from the answer the opponent's best response to moves about to
    change is mostly wasted: the first round, whose moves come from values
    of zero, evaluates by :data:`FIRST_ROUND_SWEEPS` sweeps alone (on 4x4-4x6
    at discount 0.9, and on 4x5 at 0.5-0.99, as fast or faster than an exact
    evaluation: 4x6 1.35x -> 1.30x the random-piece solve), and rounds stop
    the opponent after one exact evaluation while each greedy residual falls below
    :data:`SHORT_ROUND_GAIN` times the one before (no improvement follows it:
    the evaluation sweeps choose the pieces anew, and the next greedy sweep
    notes them; 4x6 1.30x -> 1.21x).  A round that misses
    counts; after :data:`FULL_ROUNDS_AFTER` misses every round runs to the
    best response (at most :data:`MAX_STEPS` evaluations).  Exact
    evaluations land within rounding of the answer, not on the fixed point
    of the sweeps' own rounding, which a ``tol`` below the values' last
    digits needs: after :data:`SWEEPS_ONLY_AFTER` misses a round that missed
    evaluates by ``eval_sweeps`` sweeps alone, the others by one exact
    evaluation (in long games, where the best responses gain little a round
    and the misses run out while the player's moves still change, the sweeps
    settle the moves and one exact evaluation then ends the tail that sweeps
    alone took hundreds of rounds over: 40 bag games that reach 6 misses, on
    3x4-5x4 boards at discount 0.99-0.999, take 1062 rounds in all against
    ``mpi``'s 6237, at most 223, and 3.0 s against 47 s),
    and after :data:`EXACT_GIVEN_UP_AFTER` misses every round evaluates by
    ``sweeps_alone`` sweeps alone (modified policy iteration's number, from
    :func:`babytris.solve`), which is J. van der Wal's generalized policy
    iteration (see :attr:`~babytris.solvers.roles.Roles.policy_iteration`), proven
    to converge from any start for a fixed number of sweeps a round (the
    early stop only shortens a round whose sweeps change nothing beyond
    ``tol``, as in ``mpi``).  So the run ends: the misses are counted and at
    most :data:`EXACT_GIVEN_UP_AFTER` come before van der Wal's iteration
    takes over, and between two misses each round takes the residual below
    :data:`SHORT_ROUND_GAIN` times the one before, so no stretch without a
    miss goes on forever.  This bounds nothing useful about the number of
    rounds: a miss may raise the residual tenfold or more.  (Cut-short
    rounds alone, both sides' choices evaluated together as Pollatschek and
    Avi-Itzhak did, may cycle: with one evaluation sweep a round, 4x5 at
    discount 0.99 had not converged after 1000.)
    """
    residuals: list[float] = []
    misses = 0
    while len(residuals) < max_iter:
        if _greedy_round(sweeper, residuals, tol, max_iter, progress, evaluations):
            break
        missed = len(residuals) > 1 and not residuals[-1] < SHORT_ROUND_GAIN * residuals[-2]
        misses += missed
        steps = _exact_steps(misses, missed)
        alone = sweeps_alone if sweeps_alone is not None and misses >= EXACT_GIVEN_UP_AFTER else eval_sweeps
        sweeps = eval_sweeps if steps else max(alone, 1)
        if len(residuals) == 1:
            steps, sweeps = 0, FIRST_ROUND_SWEEPS
        taken = 0
        if steps:
            response.start()
        if steps == 1:  # (the sweeps that follow choose the pieces anew: no improvement)
            taken = 1
            _step(sweeper, response, improve=False)
        while taken < steps:
            taken += 1
            if _step(sweeper, response) == 0:
                break
        swept = 0
        while swept < sweeps:
            swept += 1
            if sweeper.evaluation_sweep() <= tol:
                break
        if evaluations is not None:
            evaluations[-1] += taken + swept
    return residuals


def _exact_steps(misses: int, missed: bool) -> int:
    """The exact evaluations a round of :func:`strategy_iteration` may run,
    after ``misses`` misses (``missed``: whether its greedy sweep was one)."""
    if misses < FULL_ROUNDS_AFTER:
        return 1
    if misses < SWEEPS_ONLY_AFTER:
        return MAX_STEPS
    return 0 if missed or misses >= EXACT_GIVEN_UP_AFTER else 1


def _greedy_round(
    sweeper: Sweeps,
    residuals: list[float],
    tol: float,
    max_iter: int,
    progress: Progress | None,
    evaluations: list[int] | None,
) -> bool:
    """One greedy sweep, its residual appended to ``residuals`` (and a 0 to
    ``evaluations``, for the evaluations after it) and reported; returns
    whether the run ends after it (converged, or out of sweeps)."""
    residuals.append(sweeper.greedy_sweep())
    if evaluations is not None:
        evaluations.append(0)
    if progress is not None:
        progress(len(residuals), residuals[-1])
    return residuals[-1] <= tol or len(residuals) == max_iter


def _step(sweeper: Sweeps, response: Response, *, improve: bool = True) -> int:
    """One evaluation and improvement of the opponent (``improve=False``:
    the evaluation alone; returns 0), on the threads the tuner picks for
    such steps if ``sweeper`` is a :class:`ThreadTuner`."""

    def work() -> float:
        if improve:
            return response.step(STEP_MARGIN)
        response.evaluate()
        return 0

    if isinstance(sweeper, ThreadTuner):
        return int(sweeper.timed("response" if improve else "exact", work))
    return int(work())


# Extrapolate when the last two residual ratios agree this closely...
RATIO_AGREEMENT = 0.02
# ... and at most once every this many sweeps.
EXTRAPOLATION_GAP = 3
# Jumps that may raise the residual before acceleration is given up.
MAX_MISSED_JUMPS = 3


class History(Protocol):
    """What an Aitken jump needs of the sweep before it: the arrays to hand
    :meth:`Sweeps.greedy_sweep` to record it, and the jump itself; a sweep
    is recorded only after one that changed no value by ``max_change`` or more."""

    max_change: float

    def buffers(self) -> tuple[np.ndarray, np.ndarray]:
        """The two arrays the recording sweep is given."""

    def jump(self, ratio: float) -> None:
        """``V += ratio / (1 - ratio) * (the recorded sweep's change)``, in place."""


class ValuesBefore:
    """The default :class:`History`: copies of the state and board values,
    which the recording sweep overwrites with the values it found."""

    max_change = math.inf

    def __init__(self, values: np.ndarray, board_values: np.ndarray) -> None:
        # (copies: the states no sweep visits, with no move, keep their value through a jump)
        self.now = (values, board_values)
        self.before = (values.copy(), board_values.copy())

    def buffers(self) -> tuple[np.ndarray, np.ndarray]:
        return self.before

    def jump(self, ratio: float) -> None:
        _jump(ratio, (self.now[0], self.before[0]), (self.now[1], self.before[1]))


def value_iteration(
    sweeper: Sweeps,
    values: np.ndarray,
    board_values: np.ndarray,
    tol: float,
    max_iter: int,
    *,
    accelerate: bool,
    progress: Progress | None = None,
    history: History | None = None,
    period: int = 1,
) -> list[float]:
    """Greedy sweeps until one changes no value by more than ``tol``.

    With ``accelerate``, once the residual shrinks by a steady ratio ``r`` per
    sweep (one slow mode dominates the error), jump ahead along the last
    change: ``V += r / (1 - r) * (V - V_before)`` (Aitken extrapolation).  A
    jump after which the residual grows counts as a miss; after
    ``MAX_MISSED_JUMPS`` misses acceleration is off for good, so the run ends
    as plain value iteration would, after a few wasted sweeps at most.
    A jump is never the last step: the loop stops only on a sweep's residual,
    the plain value iteration's test.  ``history`` records the sweep before a
    jump (default: :class:`ValuesBefore`, copies of ``values`` and
    ``board_values``).

    ``period``: jump along the change over this many sweeps, with the ratio
    to that power.  Synchronous (Jacobi) sweeps need the game's period (its
    number of layers, see :func:`~babytris.engine.transitions.layers`): their error
    keeps modes that turn sign or cycle from sweep to sweep (cell counts step
    round the layers), which a one-sweep jump would blow up; every such mode
    returns to itself after a period.  In-place sweeps in layer order have none.
    """
    if isinstance(period, bool) or not isinstance(period, int) or period < 1:
        raise ValueError(f"period must be an integer >= 1, got {period!r}")
    residuals: list[float] = []
    if accelerate and history is None:
        history = ValuesBefore(values, board_values)
    last_jump = -EXTRAPOLATION_GAP
    missed = 0
    recorded = -1  # the sweep that recorded the history of a jump to come, -1: none
    while len(residuals) < max_iter:
        # Record the sweep only if a jump may follow it: recording costs a
        # fifth of a sweep.
        record = (
            accelerate
            and history is not None
            and recorded < 0
            and len(residuals) + 1 - last_jump >= EXTRAPOLATION_GAP
            and (steady_ratio(residuals) is not None)
            and residuals[-1] < history.max_change
        )
        if record and history is not None:
            residuals.append(sweeper.greedy_sweep(*history.buffers()))
            recorded = len(residuals)
        else:
            residuals.append(sweeper.greedy_sweep())
        if progress is not None:
            progress(len(residuals), residuals[-1])
        if residuals[-1] <= tol:
            break
        if accelerate and len(residuals) == last_jump + 1 and residuals[-1] > residuals[-2]:
            missed += 1  # the jump overshot: the error is not one steady mode (yet)
            accelerate = missed < MAX_MISSED_JUMPS
        ratio = steady_ratio(residuals)
        if recorded > 0 and len(residuals) == recorded + period - 1:
            if ratio is not None and len(residuals) < max_iter and history is not None:
                history.jump(ratio**period)
                last_jump = len(residuals)
            recorded = -1
    return residuals


def steady_ratio(residuals: list[float]) -> float | None:
    """The ratio of the last two residuals if it matches the one before (and is < 0.99)."""
    if len(residuals) < 3 or min(residuals[-3:-1]) <= 0:
        return None
    r0, r1, r2 = residuals[-3:]
    ratio, previous = r2 / r1, r1 / r0
    return ratio if ratio < 0.99 and abs(ratio - previous) <= RATIO_AGREEMENT * ratio else None


#: Modified policy iteration jumps only after an evaluation sweep changed no
#: board value by this much: the jump's direction is kept in float32 (max
#: 3.4e38), and the sweep recorded changes no value by more than the one before
#: (games with such values, 1e30 and more, converge without jumps).
MAX_RECORDED_CHANGE = 1e30

#: Boards per slice of :func:`_jump_along` (its float32 scratch: 4 MiB).
JUMP_SLICE = 2**20


def _jump_along(ratio: float, values: np.ndarray, changes: np.ndarray) -> None:
    """Aitken step along the recorded sweep's ``changes`` (float32):
    ``values += ratio / (1 - ratio) * changes``, in place, slice by slice (no
    temporary the size of the values).  ``changes`` stays as it is: every
    recorded sweep writes each board it visits, and the others hold 0."""
    step = np.float32(ratio / (1.0 - ratio))  # (the changes are float32-exact only, so is their product)
    for first in range(0, values.size, JUMP_SLICE):
        part = slice(first, first + JUMP_SLICE)
        values[part] += changes[part] * step


def _jump(ratio: float, *pairs: tuple[np.ndarray, np.ndarray]) -> None:
    """Aitken step for each ``(now, before)`` pair: ``now += ratio / (1 -
    ratio) * (now - before)``, in place; ``before`` is used as scratch and
    left equal to ``now``, so that entries the sweeps never record (states
    with no move, worth a game-over value that need not be 0) stay put."""
    step = ratio / (1.0 - ratio)
    for now, before in pairs:
        np.subtract(now, before, out=before)
        before *= step
        now += before
        np.copyto(before, now)
