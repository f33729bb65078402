"""Type stubs for the big-board playout kernels (babytris/big/_playout.pyx).

The module defines no Python names: its C functions (policies, games, the
batch methods' per-board work) are cimported by ``babytris.big._engine``.
"""
