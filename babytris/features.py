"""Moved to :mod:`babytris.big.features`; this name stays importable.

Import from ``babytris.big.features`` (or ``babytris.big``) in new code.
"""

from .big.features import (
    BOARD_FEATURES,
    cells,
    column_heights,
    column_transitions,
    column_transitions_open_top,
    covers,
    eroded_cells,
    feature_matrix,
    height_differences,
    holes,
    landing_height,
    max_height,
    row_transitions,
    rows_from_bits,
    well_runs,
    wells,
)

__all__ = [
    "BOARD_FEATURES",
    "cells",
    "column_heights",
    "covers",
    "eroded_cells",
    "feature_matrix",
    "height_differences",
    "holes",
    "landing_height",
    "max_height",
    "row_transitions",
    "column_transitions",
    "column_transitions_open_top",
    "rows_from_bits",
    "well_runs",
    "wells",
]
