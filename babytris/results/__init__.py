"""What a solve gives: the Solution (values, policies, lookups) and its policy tables.

Imports babytris.game and babytris.engine.
"""
