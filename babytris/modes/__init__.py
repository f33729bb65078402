"""The lean mode (no move table) and the sharded solve over dask.

Imports the solvers and the layers below them.
"""
