"""The package version, a leaf every layer may read (the package's own __init__ imports them all)."""

#: The package version (PEP 440).
__version__ = "0.1.0"
