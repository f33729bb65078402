"""What each round of the sharded solve runs (:mod:`babytris.modes.sharded.distributed`),
decided by the client from the global residuals alone: with the exchange
after every sweep, which sweep and whether it jumps (:class:`SweepSchedule`);
with rounds of modified policy iteration, when the rounds jump (:class:`RoundJumps`)."""

from __future__ import annotations

from ...solvers.sweeping import MAX_MISSED_JUMPS, MAX_RECORDED_CHANGE, steady_ratio
from .shard import ROUND_PERIOD

__all__ = ["ROUND_GAP", "RoundJumps", "SweepSchedule"]

#: Rounds between two jumps: the residuals after a jump must show a steady ratio again.
ROUND_GAP = 3 * ROUND_PERIOD


class SweepSchedule:
    """What each round of ``exchange="sweep"`` runs: modified policy
    iteration as :func:`babytris.solvers.sweeping.modified_policy_iteration`
    runs it, one sweep a round: a greedy sweep, then up to ``eval_sweeps``
    evaluation sweeps, ended early by one changing no value by more than
    ``tol`` or by an Aitken jump once the global evaluation residuals fall
    by a steady ratio (taken as one more evaluation sweep begins, so that
    every greedy sweep reads ghosts equal to their owners' values).  A
    greedy residual above the one before, after a jump, counts as a miss,
    and after :data:`MAX_MISSED_JUMPS` the evaluations run plain, as the
    single solve's do (between shards the error may also turn round
    every sweep, which a jump along one sweep's changes overshoots).  The
    solve stops after a greedy sweep: within ``tol``, or the ``max_iter``-th."""

    def __init__(self, eval_sweeps: int, tol: float, accelerate: bool) -> None:
        self.eval_sweeps, self.tol, self.accelerate = eval_sweeps, tol, accelerate
        self.recorded = False
        self.greedy = 0  # (greedy sweeps so far, the one running counted)
        self.evaluation: list[float] = []  # (this policy's evaluation residuals; None: a greedy sweep next)
        self.is_greedy, self.ratio, self.jumped = True, 0.0, False
        self.missed, self.after_jump, self.last_greedy = 0, False, float("inf")

    def next(self, resumed: bool) -> tuple[bool, float, bool]:
        """``(greedy, jump, record)`` of the next round (``resumed``: the round
        of the checkpoint gone back to, run again as it was)."""
        if not resumed:
            self.is_greedy = self.greedy == 0 or self._evaluated()
            self.greedy += self.is_greedy
            if self.is_greedy:
                self.after_jump = self.jumped
                self.evaluation, self.ratio, self.jumped = [], 0.0, False
        if self.is_greedy:
            return True, 0.0, False
        e = self.evaluation
        self.recorded = self.accelerate and len(e) >= 2 and e[-1] < MAX_RECORDED_CHANGE and not self.ratio
        self.jumped = bool(self.ratio)
        return False, self.ratio, self.recorded

    def _evaluated(self) -> bool:
        """Whether this policy's evaluation is over (a greedy sweep next)."""
        e = self.evaluation
        return self.jumped or (len(e) >= self.eval_sweeps and not self.ratio) or bool(e and e[-1] <= self.tol)

    def swept(self, residual: float) -> None:
        """Note the round's global residual."""
        if self.is_greedy:
            if self.after_jump and residual > self.last_greedy:
                self.missed += 1
                self.accelerate = self.accelerate and self.missed < MAX_MISSED_JUMPS
            self.last_greedy = residual
            return
        self.evaluation.append(residual)
        ratio = steady_ratio(self.evaluation) if self.recorded else None
        self.ratio = ratio if ratio is not None and residual > self.tol else 0.0

    def done(self, residuals: list[float], max_iter: int, tol: float) -> bool:
        """Whether the solve stops: after a greedy sweep within ``tol``, or the ``max_iter``-th."""
        return bool(residuals) and self.is_greedy and (residuals[-1] <= tol or self.greedy >= max_iter)


class RoundJumps:
    """When the rounds jump: once the global residuals fall by a steady
    ratio (the Aitken test of :func:`babytris.solvers.sweeping.value_iteration`),
    at most once every few rounds, and not after :data:`MAX_MISSED_JUMPS`
    jumps the residual rose after."""

    def __init__(self) -> None:
        self.last = -ROUND_GAP
        self.missed = 0

    def done(self, residuals: list[float], max_iter: int, tol: float) -> bool:
        """Whether the solve stops: a round within ``tol``, or the ``max_iter``-th."""
        return len(residuals) >= max_iter or (bool(residuals) and residuals[-1] <= tol)

    def ratio(self, residuals: list[float]) -> float:
        """The ratio to jump by before the next round (0.0: no jump)."""
        if len(residuals) > 1 and self.last == len(residuals) - 1 and residuals[-1] > residuals[-2]:
            self.missed += 1
        ratio = steady_ratio(residuals[::-ROUND_PERIOD][::-1])
        if ratio is None or self.missed >= MAX_MISSED_JUMPS or len(residuals) - self.last < ROUND_GAP:
            return 0.0
        self.last = len(residuals)
        return ratio
