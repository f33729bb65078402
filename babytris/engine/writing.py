"""Files written safely, by every writer of babytris (saves, tables, pictures,
exports, the claims' record): atomically (a temporary file beside the target,
flushed and renamed over it), and only as regular files (an empty path, a
device, a FIFO or a socket is refused before anything is written; a symlink's
target is replaced, the link kept).  Low in the layers, so that each layer
writes the same way.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from typing import IO, Any

__all__ = ["WriteTargetError", "check_write_target", "replace_atomically"]


def replace_atomically(path: str | os.PathLike, write: Callable[[IO[bytes]], Any], *, field: str = "path") -> None:
    """Call ``write`` on a new temporary file beside ``path``, flush it to disk,
    and rename it onto ``path`` (``os.replace``, atomic): ``path`` holds the
    old file or the new one, never a part.  On any failure, interrupts
    included, the temporary file is removed and ``path`` left as it was.

    Every babytris writer goes through here, so writes touch only regular
    files: a symlink is followed and its target replaced (``latest.npz ->
    run.npz`` stays a link, to the new file); a device, FIFO, socket or
    directory is refused before anything is written, with a
    :class:`WriteTargetError` (a ``ValueError``) naming ``field``, as is an
    empty path (a directory: ``IsADirectoryError``).  A system error (a
    read-only folder, a full disk) names ``path``, never the temporary file.
    Returns None."""
    target = check_write_target(path, field=field)
    shown = os.fsdecode(os.fspath(path))
    folder, name = os.path.split(target)
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    except OSError as err:  # (a read-only folder, say: the user's path is named, not the file never made)
        raise _naming(err, shown) from None
    try:
        with os.fdopen(handle, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
            os.chmod(temporary, _new_file_mode(target))
        os.replace(temporary, target)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(err, OSError):
            raise _naming(err, shown, temporary) from None
        raise
    _sync_directory(folder)


def _naming(err: OSError, path: str, temporary: str | None = None) -> OSError:
    """``err`` naming the user's ``path`` where it named the ``temporary`` file
    beside it (None: any file; the temporary one was never made), or none: as
    ``open(path, "wb")`` would have failed.  The same type and errno."""
    if err.errno is None or (temporary is not None and err.filename not in (None, temporary)):
        return err
    return type(err)(err.errno, err.strerror, path)


class WriteTargetError(ValueError):
    """A path babytris will not write to: empty, or not a regular file (a
    device, FIFO, socket or directory); ``field`` names the option or argument."""

    def __init__(self, field: str, path: str, problem: str) -> None:
        self.field, self.path = field, path
        super().__init__(f"{field}: cannot write to {path!r}: {problem} (give the path of a regular file)")


def check_write_target(path: str | os.PathLike, *, field: str = "path") -> str:
    """The absolute path a writer replaces for ``path``: the path itself, or
    the final target of a symlink; raises :class:`WriteTargetError` naming
    ``field`` if ``path`` is empty or names anything but a regular file or
    nothing (a device, FIFO or socket; a directory: ``IsADirectoryError``).
    Returns the path."""

    name = os.fspath(path)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if not name:
        raise WriteTargetError(field, name, "the path is empty")
    target = os.path.realpath(name)  # a symlink: its target (a dangling one: the file it names)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    except NotADirectoryError:
        raise WriteTargetError(field, name, "a part of the path is not a directory") from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"cannot save to {name!r}: it is a directory")
    if not stat.S_ISREG(mode):
        kind = (
            "a character device"
            if stat.S_ISCHR(mode)
            else "a block device"
            if stat.S_ISBLK(mode)
            else "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "not a regular file"
        )
        raise WriteTargetError(field, name, f"it is {kind}")
    return target


def _new_file_mode(target: str) -> int:
    """The permissions the saved file gets: the old file's, or those a plain
    ``open(path, "w")`` would give (0o666 less the umask; mkstemp's are 0o600)."""
    with contextlib.suppress(OSError):
        return os.stat(target).st_mode & 0o7777
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _sync_directory(folder: str) -> None:
    """Flush the directory entry of a rename to disk, where the system allows
    (POSIX; Windows cannot open a directory)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    with contextlib.suppress(OSError):
        handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)
