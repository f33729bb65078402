"""Sizing a sharded solve before it runs: how many shards, how much memory
and traffic each worker has, and how long it should take, for boards too big
to try (4x9: about 7e9 boards), from rates measured on a smaller run.

The plan scales what a measured run (:class:`Rates`, from a
:class:`~babytris.modes.sharded.distributed.ShardedSolve` or its command-line record)
did per board to the target's forecast boards and moves
(:func:`~babytris.engine.enumeration.forecast_table`; counted, where small enough to search):

- **Memory per worker**: a shard's table and solver arrays as the single
  process estimates them (:func:`~babytris.engine.resources.table_bytes` for
  its share of the boards and moves), plus its ghosts (24 bytes for each board
  of another shard it reads: the board, its index, its value).  The shards are
  the workers, or more (a multiple) where one worker's share does not fit.
- **Traffic per round**: each round a shard sends the values others read,
  8 bytes a board read; the share of moves leaving a shard grows as
  ``1 - 1/k`` with ``k`` shards, so the measured bytes a board a round are
  scaled by that.
- **Time**: the measured seconds per board of the search and of one round,
  per worker, scaled to a worker's boards, times the measured rounds, plus
  each round's traffic at ``bandwidth``.  Exchanging layer by layer (the
  default), the rounds are the single solve's sweeps whatever the shards
  (34 at 4x7); they grow slowly with the board, which the plan does not
  model: an extrapolation, said so in :attr:`ShardPlan.why`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...engine.enumeration import FORECASTED_FROM_CELLS, enumerate_boards, forecast_table
from ...engine.resources import check_max_memory, format_bytes, table_bytes
from ...game.rules import Rules
from ...game.validation import check_int
from ...solvers.solve import solver_bytes_per_board

if TYPE_CHECKING:
    from .distributed import ShardedSolve

__all__ = ["GHOST_BYTES", "Rates", "ShardPlan", "plan_sharded"]

#: Bytes a shard holds per board of another shard that it reads: the board, its index and its value.
GHOST_BYTES = 24
#: The network's bytes per second assumed between two workers (10 GbE, as a cluster's usual floor).
DEFAULT_BANDWIDTH = 1.25e9


@dataclass(frozen=True)
class Rates:
    """What a measured sharded run did per board (:meth:`from_run`).

    Attributes:
        size: the measured run's ``"WxH"``; n_boards, n_shards: its boards and shards.
        search_seconds_per_board: its search's wall time over its boards, per worker's share.
        round_seconds_per_board: one round's median wall time over a shard's boards.
        rounds: the rounds it took.
        bytes_per_board_round: the median bytes sent in a round over its boards, scaled to
            ``1 - 1/k = 1`` (the share of moves leaving a shard with ``k`` shards).
    """

    size: str
    n_boards: int
    n_shards: int
    search_seconds_per_board: float
    round_seconds_per_board: float
    rounds: int
    bytes_per_board_round: float

    @classmethod
    def from_run(cls, run: ShardedSolve) -> Rates:
        """The rates of a sharded run (:func:`~babytris.modes.sharded.distributed.solve_sharded`'s result).

        Raises:
            ValueError: a run of one shard (it sends nothing: no traffic to scale) or of no rounds.
        """
        shards, boards = int(run.n_shards), int(run.boards_per_shard.sum())
        if shards < 2 or not len(run.round_seconds):
            raise ValueError(f"run: its rates need 2 shards or more and a round; it had {shards} and "
                             f"{len(run.round_seconds)}")  # fmt: skip
        share = int(run.boards_per_shard.max())
        r = run.shards.rules
        return cls(
            size=f"{r.width}x{r.height}",
            n_boards=boards,
            n_shards=shards,
            search_seconds_per_board=float(run.seconds["search"]) / share,
            round_seconds_per_board=float(np.median(run.round_seconds)) / share,
            rounds=len(run.round_seconds),
            bytes_per_board_round=float(np.median(run.round_bytes)) / boards / (1 - 1 / shards),
        )


@dataclass(frozen=True)
class ShardPlan:
    """A sharded solve sized before it runs (:func:`plan_sharded`).

    Attributes:
        rules: the game; n_boards, n_moves: its forecast boards and moves.
        workers, worker_memory: the cluster's (bytes each); n_shards: the shards (a multiple of the workers).
        shard_bytes: the largest shard's memory, ghosts included; worker_bytes: a worker's (its shards').
        round_bytes: the values sent in a round over the cluster; worker_round_bytes: each worker's.
        rounds: the rounds expected; seconds: ``{"search", "rounds", "traffic", "total"}`` expected.
        rates: what it scaled (:class:`Rates`); why: the assumptions, in words.
    """

    rules: Rules
    n_boards: int
    n_moves: int
    workers: int
    worker_memory: int
    n_shards: int
    shard_bytes: int
    worker_bytes: int
    round_bytes: int
    worker_round_bytes: int
    rounds: int
    seconds: dict[str, float]
    rates: Rates
    why: str

    def lines(self) -> list[str]:
        """The plan as text, one fact a line."""
        r = self.rules
        return [
            f"{r.width}x{r.height}: about {self.n_boards:,} boards and {self.n_moves:,} moves (forecast)",
            f"{self.workers} workers of {format_bytes(self.worker_memory)}: {self.n_shards} shards, "
            f"{format_bytes(self.worker_bytes)} a worker ({format_bytes(self.shard_bytes)} the largest shard)",
            f"traffic: {format_bytes(self.round_bytes)} a round over the cluster, "
            f"{format_bytes(self.worker_round_bytes)} in and out of each worker",
            f"time: about {self.seconds['total'] / 60:.0f} minutes (search {self.seconds['search']:.0f} s, "
            f"{self.rounds} rounds {self.seconds['rounds']:.0f} s, traffic {self.seconds['traffic']:.0f} s)",
            f"from: {self.why}",
        ]


def plan_sharded(
    rules: Rules,
    workers: int,
    worker_memory: int,
    rates: Rates,
    *,
    cores_per_worker: int = 1,
    bandwidth: float = DEFAULT_BANDWIDTH,
) -> ShardPlan:
    """Size a sharded solve of ``rules`` on ``workers`` workers of
    ``worker_memory`` bytes each, scaling ``rates`` (see the module).

    Args:
        cores_per_worker: the cores each worker sweeps with (the rates are per
            measured worker; their time is divided by this over the measured run's 1).
        bandwidth: bytes per second between two workers.

    Returns:
        a :class:`ShardPlan`.

    Raises:
        ValueError: an argument out of range, or a board the forecast cannot
            size, or no number of shards up to 64 per worker fits ``worker_memory``
            (naming the memory a worker would need).
    """
    workers = check_int("workers", workers, 1, 2**20)
    worker_memory = check_max_memory(worker_memory)
    cores_per_worker = check_int("cores_per_worker", cores_per_worker, 1, 4096)
    if not (isinstance(bandwidth, (int, float)) and 1 <= bandwidth < float("inf")):
        raise ValueError(f"bandwidth must be a finite number of bytes per second >= 1, got {bandwidth!r}")
    if rules.width * rules.height <= FORECASTED_FROM_CELLS:  # (small enough to count: seconds at most)
        table = enumerate_boards(rules)
        forecast: tuple[int, int] | None = (table.n_boards, table.n_moves)
    else:
        forecast = forecast_table(rules)
    if forecast is None:
        raise ValueError(f"rules: no forecast of the boards of {rules.width}x{rules.height} (a plain game is needed)")
    n_boards, n_moves = forecast
    per_board = solver_bytes_per_board(rules, "mpi", True)
    need = 0
    for per_worker in (1, 2, 4, 8, 16, 32, 64):
        shards = workers * per_worker
        boards, moves = -(-n_boards // shards), -(-n_moves // shards)
        remote = rates.bytes_per_board_round * (1 - 1 / shards) / 8  # (boards read from elsewhere, a board)
        shard = table_bytes(rules, boards, moves, per_board) + int(GHOST_BYTES * remote * boards)
        need = shard * per_worker
        if need <= worker_memory:
            break
    else:
        raise ValueError(
            f"worker_memory: {format_bytes(worker_memory)} holds no shard of {rules.width}x{rules.height} on "
            f"{workers} workers (64 shards a worker would need {format_bytes(need)} each); add workers or memory"
        )
    worker_boards = boards * per_worker
    round_bytes = int(rates.bytes_per_board_round * (1 - 1 / shards) * n_boards)
    worker_round = round_bytes // workers
    search = rates.search_seconds_per_board * worker_boards / cores_per_worker
    sweeping = rates.rounds * rates.round_seconds_per_board * worker_boards / cores_per_worker
    traffic = rates.rounds * 2 * worker_round / bandwidth  # (in and out)
    why = (
        f"rates measured at {rates.size} ({rates.n_boards:,} boards, {rates.n_shards} shards): "
        f"{rates.rounds} rounds, taken as the target's (the single solve's sweeps, exchanging by layer; they "
        f"grow slowly with the board), a round "
        f"{rates.round_seconds_per_board * 1e9:.1f} ns a board, {rates.bytes_per_board_round:.2f} bytes a board "
        f"sent at 1 - 1/k = 1; {bandwidth / 1e9:.2f} GB/s between workers"
    )
    seconds = {"search": search, "rounds": sweeping, "traffic": traffic, "total": search + sweeping + traffic}
    return ShardPlan(
        rules, n_boards, n_moves, workers, worker_memory, shards, shard, need, round_bytes, worker_round,
        rates.rounds, seconds, rates, why,
    )  # fmt: skip
