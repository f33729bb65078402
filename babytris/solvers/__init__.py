"""Who plays and when, resolved once (roles, Match), rewards, tie rules, the sweeps
(_sweep.pyx, nogil) and solve(); minimization and the seed models.

Imports babytris.game, babytris.engine and babytris.results.
"""
