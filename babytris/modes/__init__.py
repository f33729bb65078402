"""The lean mode (no move table) and, in sharded/, the sharded solve over dask.

Imports the solvers and the layers below them; the lean mode's modules
import nothing from sharded/.
"""
