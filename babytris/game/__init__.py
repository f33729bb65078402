"""The game's data: Rules (validated), pieces, boards, bags and the argument checks.

Imports nothing else of babytris.
"""
