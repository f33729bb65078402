"""Old home of the enumeration, kept so that old imports keep working.

The contents now live in one module per reason to change:
:mod:`babytris.enumeration` (the search), :mod:`babytris.transitions` (the
move table), :mod:`babytris.placements` (the engine's tables) and
:mod:`babytris.resources` (memory budget and threads).
"""

from .enumeration import enumerate_boards, with_previews
from .placements import (
    PlacementTable,
    canonical_boards,
    engine,
    lost_board,
    mirror_boards,
    mirror_rows,
    placement_table,
)
from .resources import (
    DEFAULT_MAX_MEMORY,
    LAYER_BYTES,
    MIN_BOARDS_PER_THREAD,
    MOVE_BYTES,
    MemoryLimitError,
    estimate_bytes_per_board,
    resolve_n_jobs,
)
from .transitions import HOLD_MOVE, Transitions, independent_layers, layers, sweep_order

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "HOLD_MOVE",
    "LAYER_BYTES",
    "MIN_BOARDS_PER_THREAD",
    "MOVE_BYTES",
    "MemoryLimitError",
    "PlacementTable",
    "Transitions",
    "canonical_boards",
    "engine",
    "enumerate_boards",
    "estimate_bytes_per_board",
    "independent_layers",
    "layers",
    "lost_board",
    "mirror_boards",
    "mirror_rows",
    "placement_table",
    "resolve_n_jobs",
    "sweep_order",
    "with_previews",
]
