"""The compiled engine (_drop.pxd: placement, drop and clear, the rules once; _core.pyx: the
search, and the table on given boards), its shared .pxd files, the move table (Transitions),
the enumeration, memory and threads, and one game stepped by hand.

Imports babytris.game only.
"""
