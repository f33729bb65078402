"""What a file that is not a sound babytris solution raises: one error for
the form and the proof alike, below both (:mod:`~babytris.files.persist`,
:mod:`~babytris.files.proof`)."""

from __future__ import annotations

import os

__all__ = ["SolutionFileError"]


class SolutionFileError(ValueError):
    """A file :func:`~babytris.load` cannot read as a babytris solution; ``path`` is the
    file and ``field`` the array or setting at fault (None: the file as a whole)."""

    def __init__(self, path: str | os.PathLike, field: str | None, problem: str) -> None:
        self.path, self.field = os.fspath(path), field
        where = "" if field is None else f"{field}: "
        super().__init__(f"{self.path!r} is a corrupt babytris solution file: {where}{problem}")
