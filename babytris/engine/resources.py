"""What a solve may use: the memory budget, the estimate of the bytes a board
costs, the refusal of work that would not fit, and the number of threads."""

from __future__ import annotations

import math
import os

from ..game.rules import Rules
from ..game.validation import is_int
from .placements import most_moves

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "MIN_BOARDS_PER_THREAD",
    "MemoryLimitError",
    "STORED_PLACEMENTS",
    "estimate_bytes_per_board",
    "table_bytes",
    "resolve_n_jobs",
    "idle_cores",
    "runnable_elsewhere",
    "cpu_pressure",
    "check_max_memory",
    "gib_to_bytes",
    "format_bytes",
]

#: Default memory budget of a solve: 8 GiB, a third of the 24 GiB machine.
DEFAULT_MAX_MEMORY = 8 * 2**30

# Below this many boards per thread, starting threads costs more than it saves.
MIN_BOARDS_PER_THREAD = 50_000

# Bytes per move in the table: next board (int32), rows cleared (uint8), placement (uint16).
MOVE_BYTES = 4 + 1 + 2
# Bytes per state in the table: its offset (int32).
OFFSET_BYTES = 4
# Bytes per move of a placement number (uint16), which a big table does not store.
PLACEMENT_BYTES = 2

#: A table of hard drops with more moves than this drops its pieces again
#: for ``Transitions.placement`` when first read (64 MiB of uint16: from 4x7
#: on) rather than storing the numbers while it is built: a solve reads only
#: its chosen moves' numbers, dropped again per state (4x7: 194 MB less at
#: the peak).
STORED_PLACEMENTS = 2**25
# Bytes per board the numbering by layers holds while the table is built, at
# most: with the hash map, the boards regrouped (uint64), each one's new number
# (int32) and layer (uint8); a bitmap writes the boards by layer in place and
# holds the numbers alone, or from 27 cells on none (_layers.bitmap_layered).
LAYER_BYTES = 8 + 4 + 1


class MemoryLimitError(MemoryError):
    """The work would need more memory than ``max_memory`` allows.

    ``boards_found``: where a search of the reachable boards stopped at the
    budget, how many it had found (so at least that many are reachable);
    else None."""

    def __init__(self, *args: object, boards_found: int | None = None) -> None:
        super().__init__(*args)
        self.boards_found = boards_found


def estimate_bytes_per_board(rules: Rules, solver_bytes_per_board: int = 0) -> int:
    """Upper bound of the bytes one reachable board costs at the peak: its key,
    its map slots, its rows of the table with every placement legal, and what
    the solver keeps for it."""
    n_moves = most_moves(rules)
    return 8 + 4 * 16 + OFFSET_BYTES * rules.n_pieces + MOVE_BYTES * n_moves + LAYER_BYTES + solver_bytes_per_board


def table_bytes(
    rules: Rules, n_boards: int, n_moves: int, solver_bytes_per_board: int = 0, *, placements: bool | None = None
) -> int:
    """Bytes a table-mode solve of ``rules`` holds at its peak, given its
    boards, moves and what the solver keeps per board: the table (boards,
    offsets, moves) plus, while it is built, the layering's temporaries and
    the index of the boards (a bitmap over every board up to 30 cells where
    that is smaller than the hash map, else the map), or, while solving, the solver's arrays.  ``placements``:
    whether the table holds its placement numbers (default: as the
    enumeration builds it, not past :data:`STORED_PLACEMENTS` moves of hard
    drops without previews, hold or bags)."""
    cells = rules.width * rules.height
    index = 16 * 2 ** max(10, (2 * n_boards - 1).bit_length())  # the hash map
    if cells <= 30:  # the bitmap, unless the map is smaller (the search takes the map where the bitmap won't fit)
        index = min(index, 12 * 2**cells // 64)
    # (soft moves' numbers come from their search, and node tables derive theirs: both hold them)
    stored = rules.moves == "soft" or rules.node_tables or n_moves <= STORED_PLACEMENTS
    stored = stored if placements is None else placements
    table = n_boards * (8 + OFFSET_BYTES * rules.n_pieces) + (MOVE_BYTES - (0 if stored else PLACEMENT_BYTES)) * n_moves
    return table + max(LAYER_BYTES * n_boards + index, solver_bytes_per_board * n_boards)


def resolve_n_jobs(n_jobs: object) -> int:
    """Threads to use: ``None`` or -1 for every core, else an integer >= 1."""
    cores = os.cpu_count() or 1
    if n_jobs is None or n_jobs == -1:
        return cores
    if not (is_int(n_jobs) and 1 <= n_jobs <= 1024):
        raise ValueError(f"n_jobs must be None, -1 or an integer in [1, 1024], got {n_jobs!r}")
    return int(n_jobs)


def runnable_elsewhere() -> int | None:
    """Tasks runnable on the machine now besides this process's: the
    running count of Linux's ``/proc/loadavg`` less this process's running
    threads (at least the caller); None where it cannot be read.  (It counts
    the whole machine's tasks, or in a container the host's, as
    ``os.cpu_count()`` counts the host's cores.)  This process's own
    threads are left out because OpenMP's workers spin for a while after a
    parallel region: counted, they made a solve that had just run threads
    see its own cores as busy and stay on one thread."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            running = int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(running - _own_running_threads(), 0)


def _own_running_threads() -> int:
    """This process's threads in the running state (at least 1: the caller)."""
    count = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:  # (the thread has ended)
            continue
        # The state follows the command name, which is in parentheses and may hold any character.
        state = stat.rfind(")") + 2
        count += stat[state : state + 1] == "R"
    return max(count, 1)


def idle_cores(threads: int) -> int:
    """``threads``, or fewer if other tasks keep some of the machine's cores
    busy now (at least 1): threads that share a core with another process
    wait for it at every barrier (a 4x5 enumeration on two threads took 3x
    one thread's time with a spinning process per core)."""
    if threads <= 1:
        return threads  # (nothing to look at: the answer is 1 however busy the machine is)
    others = runnable_elsewhere()
    if others:
        # A second look: a task runnable for an instant (a kernel worker, or a thread of
        # ours between its spin and its sleep, running in one count and not the other)
        # is no load.  After another process's run, one look in 30 saw one.
        again = runnable_elsewhere()
        others = others if again is None else min(others, again)
    if others is None:
        return threads
    return max(1, min(threads, (os.cpu_count() or 1) - others))


#: Linux's pressure stall information for the CPUs (kernel 4.20 and later, where enabled).
CPU_PRESSURE = "/proc/pressure/cpu"


def cpu_pressure() -> int | None:
    """Microseconds since boot during which some task waited for a CPU: the
    ``total`` of the ``some`` line of Linux's ``/proc/pressure/cpu``; None
    where it cannot be read.  (System-wide, the kernel weighs each CPU's
    stall time by its busy time; this process's own threads' waits count
    too.)  Its growth over a window, unlike the count of running tasks, which
    a task of a moment fills (a kernel thread's blip), measures how long tasks
    waited: with a spinning process per core of 2 it grew by 0.50-0.54 of
    every 5 ms window of 12 while this process ran one thread, with one such
    process by 0 in 9 of 12 windows (0.02-0.27 in the others), idle by 0."""
    try:
        with open(CPU_PRESSURE, encoding="ascii") as f:
            for line in f:
                fields = line.split()
                if fields and fields[0] == "some":
                    return next(int(field[6:]) for field in fields if field.startswith("total="))
    except (OSError, ValueError, StopIteration):
        pass
    return None


def gib_to_bytes(gib: float, option: str = "--max-memory") -> int:
    """``gib`` GiB in bytes, for a command-line ``option`` in [1/1024, 2**33) GiB; ``ValueError`` otherwise."""
    if not (math.isfinite(gib) and 2**-10 <= gib < 2**33):
        raise ValueError(f"{option} must be a number of GiB in [1/1024, 2**33), got {gib}")
    return int(gib * 2**30)


def check_max_memory(max_memory: object) -> int:
    """``max_memory`` as an int of bytes in [2**20, 2**63); ``ValueError`` otherwise."""
    if not (is_int(max_memory) and 2**20 <= max_memory < 2**63):
        raise ValueError(f"max_memory must be an integer number of bytes in [2**20, 2**63), got {max_memory!r}")
    return int(max_memory)


def format_bytes(n: float) -> str:
    """Bytes as GiB, or MiB below 1 GiB."""
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"
