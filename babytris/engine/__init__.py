"""The compiled engine (_core.pyx: placement, drop, clear and the search, the rules once), its
shared .pxd files, the move table (Transitions), the enumeration, memory and threads, and
one game stepped by hand.

Imports babytris.game only.
"""
