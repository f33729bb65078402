"""Pictures: boards, games and solutions as SVG, frames and plots.

Imports the analysis and the layers below it; not babytris.formats.
"""
