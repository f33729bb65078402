"""Other tools' formats: Storm, PRISM, QuantEcon, pymdptoolbox and the Gymnasium env.

Imports the analysis and the layers below it; not babytris.draw.
"""
