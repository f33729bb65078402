"""A lean solution read back from its file (:meth:`LeanSolution.save`), and proved.

What the file reports is recomputed, not believed, within the memory of the
solve that wrote it and streaming (no array is held twice):

1. **The boards are the rules' own**: the lean search runs again from the
   saved rules and its bitmap must equal the file's, which is read a slice
   at a time beside it (a board the file holds that play does not reach, or
   one it lacks, is named).
2. **The values are this game's, as close as claimed**: one Bellman backup
   of every board from the saved values, written nowhere
   (``LeanSweeper.bellman_residual``), may move none by more than
   ``discount * residual`` (plus 16 ulps of the largest value), which proves
   :attr:`~babytris.LeanSolution.error_bound` as for a table file
   (:mod:`babytris.files.proof`); a board where no piece fits must be worth 0.
3. **The policy**: the file holds none.  Moves and the opponent's pieces are
   computed on demand from the proved values, the first of those tied (the
   tie rule ``"first"``, the only one the file may claim).

Before that the form is checked as :func:`babytris.load` checks a table
file's: the members (each once, their declared sizes against what the
rules allow, every member read whole against its zip CRC), the SHA-256 of
each array and of the metadata (they catch damage, not a forger), the
settings' types and ranges, finite values.  Cost: one search, one reading of
the file and one greedy sweep's work (no evaluation sweeps, no second one).
"""

from __future__ import annotations

import json
import os
import zipfile
from typing import IO, Any, NoReturn

import numpy as np

from ..engine.placements import engine
from ..engine.resources import (
    DEFAULT_MAX_MEMORY,
    MemoryLimitError,
    check_max_memory,
    format_bytes,
    idle_cores,
    resolve_n_jobs,
)
from ..engine.transitions import layers
from ..game.rules import Rules
from ..game.validation import ArgumentTypeError, check_bool, check_int, check_number
from ..modes import _lean
from ..modes.lean import LEAN_KEPT, LEAN_OPPONENTS, LeanPlan, LeanSolution, lean_bytes, lean_rules_problem
from ..modes.lean_saving import (
    LEAN_FORMAT,
    LEAN_FORMAT_VERSION,
    LEAN_MEMBERS,
    LEAN_SETTINGS,
    SLICE_BYTES,
    digest_start,
    meta_digest,
)
from ..results.saving import FORMAT as TABLE_FORMAT
from .errors import SolutionFileError
from .persist import HEADER_BYTES, META_BYTES
from .proof import ULPS  # (the rounding allowed per backup: one convention for every proof)

__all__ = ["load_lean"]


def load_lean(
    path: str | bytes | os.PathLike,
    *,
    rules: Rules | None = None,
    verify: bool = True,
    max_memory: int = DEFAULT_MAX_MEMORY,
) -> LeanSolution:
    """Read a lean solution written by :meth:`LeanSolution.save`, and prove it
    (see :mod:`babytris.files.lean`).

    Args:
        path: the file (a ``str``, ``bytes`` or ``os.PathLike``).
        rules: if given, the rules the file must have been solved for.
        verify: False skips the search and the sweep (the form, the zip CRCs
            and the digests are checked still): the solution is then marked
            ``verified=False``.
        max_memory: the most the proof may hold (bytes; default 8 GiB): the
            search's two bitmaps, then the bitmap, its ranks and the values.

    Returns:
        the :class:`~babytris.LeanSolution`.

    Raises:
        SolutionFileError: (a ``ValueError``) the file is damaged, edited or
            inconsistent, or fails a recomputation (naming the file, the
            field and what differs).
        ValueError: not a lean solution file (a table file: :func:`babytris.load`),
            another format version, or solved for other ``rules``.
        MemoryLimitError: proving it would take more than ``max_memory``.
        OSError: the file cannot be opened.
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise ArgumentTypeError(f"path must be a file path (str, bytes or os.PathLike), got {type(path).__name__}")
    name = os.fsdecode(os.fspath(path))
    verify = check_bool("verify", verify)
    max_memory = check_max_memory(max_memory)
    with open(name, "rb") as f:
        if not f.read(4).startswith(b"PK"):
            raise ValueError(f"{name!r} is not a babytris lean solution file (numpy .npz): it is not a zip archive")
    try:
        with zipfile.ZipFile(name) as archive:
            return _Reader(name, archive, rules, verify, max_memory).solution()
    except zipfile.BadZipFile as err:
        raise SolutionFileError(name, None, f"not a readable numpy .npz archive ({err})") from None


class _Reader:
    """One lean file's reading and proof, member by member."""

    def __init__(self, path: str, archive: zipfile.ZipFile, rules: Rules | None, verify: bool, max_memory: int):
        self.path, self.archive, self.verify, self.max_memory = path, archive, verify, max_memory
        self.infos: dict[str, zipfile.ZipInfo] = {}
        unknown = []
        for info in archive.infolist():
            key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if key in self.infos:
                self.fail(key, f"member {info.filename!r} appears twice in the archive")
            self.infos[key] = info
            if key not in ("meta", *LEAN_MEMBERS):
                unknown.append((key, info.filename))
        if "meta" not in self.infos:
            raise ValueError(f"{path!r} is not a babytris lean solution file: no metadata")
        self.meta = self._meta()  # (first: a table file is named as one)
        for key, member in unknown:
            self.fail(key, f"not a member a lean solution file holds ({member!r})")
        saved = self.meta.get("digests")
        if not (isinstance(saved, dict) and set(saved) == {"meta", *LEAN_MEMBERS}):
            self.fail("digests", f"must name each member and the metadata, got {saved!r}")
        self.digests: dict[str, Any] = saved
        if meta_digest(self.meta) != saved["meta"]:  # (damage is named as such before what it broke)
            self.fail("meta", "its SHA-256 differs: the file was changed after it was saved")
        self.settings = _settings(self, self.meta)
        if rules is not None and rules != self.settings["rules"]:
            raise ValueError(f"{path!r} was solved for {self.settings['rules']!r}, not for {rules!r}")
        for key in LEAN_MEMBERS:
            if key not in self.infos:
                self.fail(key, "missing from the file")

    def fail(self, field: str | None, problem: str) -> NoReturn:
        raise SolutionFileError(self.path, field, problem)

    def _meta(self) -> dict:
        info = self.infos["meta"]
        if info.file_size > HEADER_BYTES + META_BYTES:
            self.fail("meta", f"declares {info.file_size:,} bytes; metadata takes at most {META_BYTES:,}")
        try:
            with self.archive.open(info) as f:
                meta = json.loads(str(np.lib.format.read_array(f, allow_pickle=False)))
        except (ValueError, RecursionError, OSError, zipfile.BadZipFile) as err:
            self.fail("meta", f"not readable metadata ({err})")
        found = meta.get("format") if isinstance(meta, dict) else meta
        if found == TABLE_FORMAT:
            raise ValueError(f"{self.path!r} holds a table solution (Solution.save): read it with babytris.load")
        if found != LEAN_FORMAT:
            raise ValueError(f"{self.path!r} is not a babytris lean solution file (format {found!r})")
        if meta.get("format_version") != LEAN_FORMAT_VERSION:
            raise ValueError(
                f"{self.path!r} has lean format version {meta.get('format_version')!r}; this babytris reads "
                f"version {LEAN_FORMAT_VERSION} (load it with the babytris that wrote it, "
                f"{meta.get('babytris_version')!r})"
            )
        return meta

    def solution(self) -> LeanSolution:
        s = self.settings
        rules = s["rules"]
        table = self._table()
        if table.n_boards != s["n_boards"]:
            self.fail("n_boards", f"{s['n_boards']:,}, where the bitmap holds {table.n_boards:,} boards")
        values = np.empty(table.n_boards)
        self._read("board_values", values, finite=True)
        residuals = np.empty(s["iterations"])
        self._read("residuals", residuals, finite=True)
        if np.any(residuals < 0):
            self.fail("residuals", "values below 0")
        if residuals.size and residuals[-1] != s["residual"]:
            self.fail("residual", f"{s['residual']!r}, not the last of the residuals, {residuals[-1]!r}")
        solution = LeanSolution(
            rules=rules,
            discount=s["discount"],
            opponent=s["opponent"],
            board_values=values,
            table=table,
            iterations=s["iterations"],
            residual=s["residual"],
            converged=s["converged"],
            residuals=residuals,
            tol=s["tol"],
            method=s["method"],
            evaluations=s["evaluations"],
            plan=s["plan"],
            seconds=s["seconds"],
            resumed=s["resumed"],
            verified=self.verify,
        )
        if self.verify:
            self._prove_values(solution)
        return solution

    def _table(self) -> Any:
        """The bitmap's table: the rules' own, searched again and matched with the
        file's a slice at a time (verify), or the file's believed."""
        rules = self.settings["rules"]
        words = max(1, 2 ** (rules.width * rules.height) // 64)
        need = max(16 * words, lean_bytes(rules, self.settings["n_boards"], False, "none"))
        if need > self.max_memory:
            raise MemoryLimitError(
                f"{self.path!r}: proving its {self.settings['n_boards']:,} boards would take {format_bytes(need)}, "
                f"over max_memory={format_bytes(self.max_memory)}; raise max_memory"
            )
        max_boards = max(1, (self.max_memory - 12 * words) // 8)
        start = int(rules.start)
        threads = resolve_n_jobs(None)
        if not self.verify:
            bits = np.empty(words, dtype=np.uint64)
            self._read("bits", bits)
            try:
                return _lean.LeanTable(engine(rules), start, max_boards, threads, given=bits)
            except ValueError as err:
                self.fail("bits", str(err))
        table = _lean.LeanTable(engine(rules), start, max_boards, idle_cores(threads))
        if table.status == -4:
            raise KeyboardInterrupt
        if table.status == -2:
            self.fail("bits", f"the rules reach over {table.n_boards:,} boards, more than the file's")
        if table.status != 0:
            raise MemoryError(f"the lean search ran out of memory after {table.n_boards:,} boards")
        self._read("bits", np.empty(0, dtype=np.uint64), own=table.bits)
        return table

    def _read(self, key: str, into: np.ndarray, *, finite: bool = False, own: np.ndarray | None = None) -> None:
        """Read member ``key`` into ``into`` a slice at a time, its digest and
        zip CRC checked; ``finite``: each value finite; ``own``: compare it
        with this array (the rules' own) instead of keeping it."""
        shape = (into.size,) if own is None else own.shape
        info = self.infos[key]
        nbytes = int(np.prod(shape)) * LEAN_MEMBERS[key].itemsize
        if info.file_size > HEADER_BYTES + nbytes:
            self.fail(key, f"declares {info.file_size:,} bytes, over the {nbytes:,} the rules and the settings allow")
        try:
            with self.archive.open(info) as f:
                h = self._header(f, key, shape)
                differs = self._slices(f, key, h, into, finite, own)
                if f.read(1):
                    self.fail(key, "runs on past its shape")
        except (zipfile.BadZipFile, EOFError, OSError) as err:
            self.fail(key, f"the member is damaged ({err})")
        if h.hexdigest() != self.digests[key]:
            self.fail(key, "its SHA-256 differs: the file was changed after it was saved")
        if differs is not None:
            self.fail(key, differs)

    def _header(self, f: IO[bytes], key: str, shape: tuple[int, ...]) -> Any:
        try:
            version = np.lib.format.read_magic(f)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            found, fortran, dtype = read(f)
        except ValueError as err:
            self.fail(key, f"not a .npy array ({err})")
        if found != shape or fortran or dtype != LEAN_MEMBERS[key]:
            self.fail(key, f"{found} {dtype}, where the rules and the settings make it {shape} {LEAN_MEMBERS[key]}")
        return digest_start(dtype, shape)

    def _slices(
        self, f: IO[bytes], key: str, h: Any, into: np.ndarray, finite: bool, own: np.ndarray | None
    ) -> str | None:
        """The member's data, a slice at a time, into ``into`` or against ``own``;
        returns where it differs from ``own`` (None: nowhere, or no ``own``)."""
        total = into if own is None else own
        step = max(1, SLICE_BYTES // total.itemsize)
        buffer = np.empty(min(step, total.size), dtype=total.dtype) if own is not None else None
        differs = None
        for first in range(0, total.size, step):
            part = into[first : first + step] if buffer is None else buffer[: min(step, total.size - first)]
            view = part.view(np.uint8).data
            if f.readinto(view) != view.nbytes:  # type: ignore[attr-defined]
                self.fail(key, "ends early: the file was cut short")
            h.update(view)
            if finite and not np.isfinite(part).all():
                self.fail(key, f"not all finite (index {first + int(np.flatnonzero(~np.isfinite(part))[0]):,})")
            if own is not None and differs is None and not np.array_equal(part, own[first : first + len(part)]):
                differs = _board_difference(part, own[first : first + len(part)], first)
        return differs

    def _prove_values(self, solution: LeanSolution) -> None:
        rules = solution.rules
        sweeper = _lean.LeanSweeper(
            solution.table,
            solution.board_values,
            np.asarray(rules.line_scores, dtype=np.float64),
            np.asarray(rules.probabilities, dtype=np.float64),
            float(solution.discount),
            np.asarray(layers(rules), dtype=np.int64),
            combine=0 if solution.opponent == "random" else 1,
            n_threads=idle_cores(resolve_n_jobs(None)),
            keep="none",
        )
        moved, at = sweeper.bellman_residual()
        values = solution.board_values
        largest = float(max(abs(values.max()), abs(values.min()))) if values.size else 0.0
        allowed = solution.discount * solution.residual + ULPS * float(np.finfo(np.float64).eps) * largest
        if not moved <= allowed:
            board = _board_of(solution.table, at)
            self.fail(
                "board_values",
                f"one Bellman sweep over them moves board index {at:,} (board {board}) by {moved:.3g} (from "
                f"{values[at]:.6g}), where the saved residual {solution.residual:.3g} allows at most {allowed:.3g} "
                f"at discount {solution.discount}: they are not the values of these rules, discount and opponent, "
                "solved as far as claimed",
            )


def _board_of(table: Any, index: int) -> int:
    """The reachable board of index ``index`` (the bitmap's ``index``-th set bit)."""
    w = int(np.searchsorted(table.ranks, index, side="right")) - 1
    word = int(table.bits[w])
    for _ in range(index - int(table.ranks[w])):
        word &= word - 1
    return w * 64 + (word & -word).bit_length() - 1


def _board_difference(read: np.ndarray, own: np.ndarray, first: int) -> str:
    """The first board where the file's bitmap words ``read`` differ from the rules' own."""
    w = int(np.flatnonzero(read != own)[0])
    diff = int(read[w]) ^ int(own[w])
    bit = (diff & -diff).bit_length() - 1
    board = (first + w) * 64 + bit
    if (int(read[w]) >> bit) & 1:
        return f"board {board} is in the file but play never reaches it (the rules' own boards, searched again)"
    return f"board {board} is reachable (the rules' own boards, searched again) but missing from the file"


def _settings(reader: _Reader, meta: dict) -> dict[str, Any]:
    """The metadata's settings, each checked for its type and range; raises :class:`SolutionFileError`."""
    missing = [name for name in LEAN_SETTINGS if name not in meta]
    if missing:
        reader.fail(missing[0], "missing from the metadata")
    out: dict[str, Any] = {}

    def check(name: str, test: Any) -> None:
        try:
            out[name] = test(meta[name])
        except (TypeError, ValueError, KeyError, AttributeError) as err:
            reader.fail(name, str(err))

    check("rules", Rules.from_json)
    check("discount", lambda v: check_number("discount", v, 0.0, 1.0, open_high=True))
    check("opponent", lambda v: _one_of("opponent", v, LEAN_OPPONENTS))
    check("n_boards", lambda v: check_int("n_boards", v, 1, 2**32))
    check("iterations", lambda v: check_int("iterations", v, 0, 10**7, high_text="10**7"))
    check("residual", lambda v: check_number("residual", v, 0.0))
    check("converged", lambda v: check_bool("converged", v))
    check("tol", lambda v: check_number("tol", v, 0.0, open_low=True))
    check("method", lambda v: _one_of("method", v, ("mpi", "vi")))
    check("evaluations", lambda v: check_int("evaluations", v, 0))
    check("plan", _plan)
    check("resumed", lambda v: check_int("resumed", v, 0, out["iterations"]))
    check("seconds", _seconds)
    check("ties", lambda v: _one_of("ties", v, ("first",)))
    problem = lean_rules_problem(out["rules"])
    if problem is not None:
        reader.fail("rules", problem)
    if out["converged"] != (out["residual"] <= out["tol"]):
        reader.fail("converged", f"{out['converged']} with residual {out['residual']:g} and tol {out['tol']:g}")
    if out["plan"].method != out["method"]:
        reader.fail("method", f"{out['method']!r}, where the plan kept {out['plan'].keep!r} ({out['plan'].method})")
    return out


def _one_of(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if not (isinstance(value, str) and value in allowed):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def _plan(value: object) -> LeanPlan:
    if not (isinstance(value, dict) and set(value) == {"keep", "accelerate", "bytes", "why"}):
        raise ValueError(f"plan must hold keep, accelerate, bytes and why, got {value!r}")
    if not isinstance(value["why"], str):
        raise ValueError(f"plan why must be text, got {value['why']!r}")
    return LeanPlan(
        keep=_one_of("plan keep", value["keep"], LEAN_KEPT),
        accelerate=check_bool("plan accelerate", value["accelerate"]),
        bytes=check_int("plan bytes", value["bytes"], 0),
        why=value["why"],
    )


def _seconds(value: object) -> dict[str, float]:
    if not isinstance(value, dict):
        raise ValueError(f"seconds must be a dict of timings, got {value!r}")
    return {str(key): check_number(f"seconds[{key!r}]", time, 0.0) for key, time in value.items()}
