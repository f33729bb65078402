"""Solutions saved and loaded; a loaded file proves itself.

Imports the modes, the solvers and the layers below them.
"""
