"""Moved to :mod:`babytris.big.td`; this name stays importable.

Import from ``babytris.big.td`` (or ``babytris.big``) in new code.
"""

from .big.td import TDResult, ValueNetwork, td_lambda

__all__ = [
    "ValueNetwork",
    "TDResult",
    "td_lambda",
]
