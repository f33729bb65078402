"""Every published number in its source's setup: `babytris reproduce`.

Imports every layer below the command line, and babytris.big.
"""
