"""Analyses of solved games: playouts, exact finite-horizon evaluation, tournaments, the
long-run rate, adaptive players and learned policies' regret.

Imports the files, modes, solvers and the layers below them.
"""
