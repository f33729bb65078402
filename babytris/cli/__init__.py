"""The command line, `babytris ...`: one place builds the game from the same options on
every subcommand.

Imports every other layer.
"""

from .commands import main

__all__ = ["main"]
