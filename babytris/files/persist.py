"""Saving and loading solutions: one numpy ``.npz`` file with the rules and
the solver's settings as JSON beside the arrays, versioned.

>>> import babytris, os, tempfile
>>> solution = babytris.solve(width=4, height=4)
>>> with tempfile.TemporaryDirectory() as folder:
...     solution.save(os.path.join(folder, "4x4.npz"))
...     loaded = babytris.load(os.path.join(folder, "4x4.npz"))
>>> loaded.start_value == solution.start_value
True
"""

from __future__ import annotations

import errno
import json
import os
import zipfile
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.resources import DEFAULT_MAX_MEMORY, MemoryLimitError, check_max_memory
from ..engine.reward import Reward
from ..engine.transitions import MAX_MOVES, TableError, Transitions, layers, too_many_moves
from ..game.rules import Rules
from ..game.validation import METHODS, ArgumentTypeError, check_bool, check_int, check_number
from ..modes.lean_saving import LEAN_FORMAT, LEAN_MEMBERS
from ..results.saving import (
    DTYPES,
    FORMAT,
    READABLE_VERSIONS,
    SETTINGS,
    SOLUTION_ARRAYS,
    TABLE_ARRAYS,
    digests,
)
from ..results.solution import Solution
from ..solvers.roles import MOVES_BEST, MOVES_FIXED, MOVES_MEAN, OPPONENT_MODELS, PLAYER_MODELS, policy_rows
from ..solvers.termination import GamesDoNotEnd, check_games_end, longest_games
from ..solvers.ties import check_ties
from .errors import SolutionFileError
from .proof import prove, rules_table

__all__ = ["load", "holds_lean_solution", "SolutionFileError"]


def _check_digests(path: str | os.PathLike, meta: dict, contents: dict[str, np.ndarray]) -> None:
    """Refuse a file whose arrays or metadata differ from the digests saved
    with them (files written before digests were kept have none)."""
    saved = meta.get("digests")
    if saved is None:
        return
    if not isinstance(saved, dict):
        raise SolutionFileError(path, "digests", f"must be an object, got {type(saved).__name__}")
    found = digests(meta, contents)
    for name in sorted(set(saved) | set(found)):
        if saved.get(name) != found.get(name):
            what = "missing" if name not in found else "not saved" if name not in saved else "differs"
            raise SolutionFileError(path, name, f"its SHA-256 {what}: the file was changed after it was saved")


def load(
    path: str | bytes | os.PathLike,
    *,
    rules: Rules | None = None,
    verify: bool = True,
    max_memory: int = DEFAULT_MAX_MEMORY,
) -> Solution:
    """Read a solution written by :meth:`Solution.save`, and prove it.

    What a file reports is recomputed, not believed
    (:mod:`babytris.files.proof`): the move table must be the one the engine
    derives from the saved rules (built on the saved boards, which must be
    exactly those play reaches, each once; each other member of the saved
    table is read and compared with it, and the rules' own arrays are
    kept); one Bellman sweep over the saved values,
    for the saved rules, discount, sides and reward, must move none by more
    than ``discount * residual`` (which proves :attr:`Solution.error_bound`);
    the policy must be greedy in those values within the tie slack, and an
    optimising opponent's pieces its best choice.  That costs under one
    enumeration and one sweep beside reading the file.  Before it, the
    file's form is checked: member names, count and declared sizes before
    anything is decompressed, every member read whole (its zip CRC), the
    SHA-256 of each array and of the metadata (saved beside them: they
    catch damage, not a forger, who would recompute them), the metadata's
    types and ranges, the arrays' dtypes and shapes against the rules,
    finite values, the table's ranges.

    Returns:
        the :class:`Solution`, with its move table (``solution.transitions``).

    Args:
        path: the file (a ``str``, ``bytes`` or ``os.PathLike``, as :func:`open` takes).
        rules: if given, the rules the file must have been solved for.
        verify: False skips the recomputation (the table's rebuild and the
            sweep; the form is checked still, every member read against its
            zip CRC and its digest): for speed, with a file one trusts.  The
            Solution is then marked ``verified=False``, which its repr and
            the command line's ``--json`` show.
        max_memory: the most the rebuilt table may take (bytes; default 8 GiB):
            a file solved with more needs as much to be proved.

    Raises:
        SolutionFileError: (a ``ValueError``) the file is not a babytris
            solution, is corrupt or inconsistent, fails a recomputation (the
            message names the file, the field and what differs), or is of
            another format version.
        ValueError: it was solved for other ``rules``.
        MemoryLimitError: proving its table would take more than ``max_memory``.
        OSError: the file cannot be opened (missing, a directory, no permission).
    """
    path = _file_path(path)
    verify = check_bool("verify", verify)
    max_memory = check_max_memory(max_memory)
    meta, contents = _read(path, max_memory=max_memory if verify else None)
    settings = _check_settings(path, meta)
    saved_rules = settings["rules"]
    _check_digests(path, meta, contents)
    _check_arrays(path, saved_rules, settings, contents)
    table_arrays: dict[str, Any] = {name: contents.get(f"table_{name}") for name in TABLE_ARRAYS}
    table_arrays["offsets"] = _narrow_offsets(path, contents["table_offsets"], len(contents["table_next_board"]))
    try:  # the table checks itself: boards, layers, offsets, next boards, lines, placements
        table = Transitions(saved_rules, seconds=settings["table_seconds"], **table_arrays)
    except TableError as err:
        raise SolutionFileError(path, f"table_{err.field}", err.problem) from None
    _check_solution(path, saved_rules, settings, contents, table)
    fields: dict[str, Any] = {name: settings[name] for name in SETTINGS if name != "table_seconds"}
    fields.update({name: contents.get(f"solution_{name}") for name in SOLUTION_ARRAYS})
    opening_row = _opening_row(path, meta, table, settings["opponent"])
    ties = _ties(path, meta)
    accelerated = meta.get("accelerated")
    if accelerated is not None and not isinstance(accelerated, bool):
        raise SolutionFileError(path, "accelerated", f"must be true, false or null, got {accelerated!r}")
    if rules is not None and rules != saved_rules:
        raise ValueError(f"{os.fspath(path)!r} was solved for {saved_rules!r}, not for {rules!r}")
    solution = Solution(
        transitions=table,
        opening_row=opening_row,
        ties=ties[0],
        tie_seed=ties[1],
        accelerated=accelerated,
        verified=verify,
        longest_game=_longest_game(path, table, settings, fields["policy"]) if verify else None,
        **fields,
    )
    if verify:
        prove(path, solution, table_proved=True, max_memory=max_memory)
    return solution


def _file_path(path: object) -> str:
    """``path`` (a ``str``, ``bytes`` or ``os.PathLike``, as :func:`open` takes) as a ``str``."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise ArgumentTypeError(f"path must be a file path (str, bytes or os.PathLike), got {type(path).__name__}")
    return os.fsdecode(os.fspath(path))


def _longest_game(path: str | os.PathLike, table: Transitions, settings: dict, policy: np.ndarray) -> float | None:
    """At discount 1, the bound on the games' length that bounds the values'
    error, recomputed from the table (never read from the file); a file
    whose game some play never ends (of its player: a random or given one's
    own moves) is refused.  None where discounted."""
    if settings["discount"] < 1.0:
        return None
    drawn = settings["opponent"] == "random"
    player: dict[str, Any] = {"moves": MOVES_BEST}
    if settings["player"] == "random":
        player = {"moves": MOVES_MEAN}
    elif settings["player"] == "given":
        player = {"moves": MOVES_FIXED, "fixed_move": policy_rows(table, policy, name="policy")}
    try:
        check_games_end(table, drawn=drawn, **player)
    except GamesDoNotEnd as err:
        raise SolutionFileError(path, "discount", str(err)) from None
    return float(longest_games(table, drawn=drawn, **player).max(initial=0.0))


def _matched_member(
    path: str | os.PathLike, key: str, read: np.ndarray, own: np.ndarray, saved_digest: object
) -> np.ndarray:
    """The rules' own array (re-derived) for the table member ``key``, once the
    member ``read`` from the file is shown to equal it; where it differs,
    refused, as damage where it also fails its saved digest (``saved_digest``;
    None: a file saved before digests were kept), else as not the rules' table."""
    own = np.ascontiguousarray(own, dtype=DTYPES[key])
    if read.dtype == own.dtype and read.shape == own.shape and np.array_equal(read, own):
        return own
    if saved_digest is not None and digests({}, {key: read})[key] != saved_digest:
        raise SolutionFileError(path, key, "its SHA-256 differs: the file was changed after it was saved")
    if read.dtype != own.dtype:
        raise SolutionFileError(path, key, f"dtype {read.dtype}, not {own.dtype}")
    if read.shape != own.shape:
        raise SolutionFileError(path, key, f"shape {read.shape}, where the rules' own table's is {own.shape}")
    i = int(np.flatnonzero(read != own)[0])
    raise SolutionFileError(path, key, f"[{i:,}] is {read[i]} where the rules' own table (re-derived) has {own[i]}")


def _opening_row(path: str | os.PathLike, meta: dict, table: Transitions, opponent: str) -> int | None:
    """The saved opening row of a given opponent: None, or one of the table's start rows
    (files written before it was kept have none)."""
    row = meta.get("opening_row")
    if row is None:
        return None
    starts = table.start_nodes()[0].tolist()
    chooses = ("given", "minimax", "best_response", "minavg", "gaps")  # (opponents that choose the opening)
    if (
        opponent not in chooses
        or isinstance(row, bool)
        or not isinstance(row, int)
        or row not in starts[1:] + starts[:1]
    ):
        raise SolutionFileError(path, "opening_row", f"{row!r} is not a start row {starts} of a choosing opponent")
    if len(starts) < 2:
        raise SolutionFileError(path, "opening_row", f"{row!r}: the game has one start row, nothing to choose")
    return row


def _ties(path: str | os.PathLike, meta: dict) -> tuple[str, int | None]:
    """The saved tie rule and seed (files written before they were kept: the solve's own, "first")."""
    try:
        return check_ties(meta.get("ties", "first"), meta.get("tie_seed"))
    except ValueError as err:
        raise SolutionFileError(path, "ties", str(err)) from None


def _narrow_offsets(path: str | os.PathLike, offsets: np.ndarray, n_moves: int) -> np.ndarray:
    """The file's int64 offsets as the table's int32, once each lies in
    ``[0, n_moves]`` (out of range, the cast would wrap one into range)."""
    if n_moves > MAX_MOVES:
        raise SolutionFileError(path, "table_next_board", too_many_moves(n_moves))
    outside = (offsets < 0) | (offsets > n_moves)
    if outside.any():
        bad = int(np.flatnonzero(outside)[0])
        raise SolutionFileError(
            path, "table_offsets", f"offsets[{bad}] = {offsets[bad]:,} lies outside [0, {n_moves:,}]"
        )
    return offsets.astype(np.int32)


#: The most bytes an array's .npy header takes in a file (numpy writes 128); every solution file's reader allows it.
HEADER_BYTES = 4096
#: The most bytes a solution file's metadata JSON may declare.
META_BYTES = 2**20


def _read(path: str | os.PathLike, *, max_memory: int | None = None) -> tuple[dict, dict[str, np.ndarray]]:
    """The metadata and the arrays of a solution file, its format checked.

    Every member is read whole (so each passes its zip CRC).  Reading is
    bounded: the members' names (each once), their count and the sizes they
    declare are checked against what the metadata's rules and the arrays
    already read imply before each is decompressed, so a hostile file (a zip
    bomb) is refused at the cost of its header.  ``max_memory`` (a verified
    load): the rules' own move table is built on the file's boards within it
    (:func:`~babytris.files.proof.rules_table`), each other table member
    read is compared with it, and the rules' arrays are returned in its place."""
    name = os.fspath(path)
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic == b"\x93NUMPY":
        raise ValueError(
            f"{name!r} is not a babytris solution file: it holds one numpy array (.npy), "
            f"not the .npz archive Solution.save writes"
        )
    if not magic.startswith(b"PK"):
        raise ValueError(f"{name!r} is not a babytris solution file (numpy .npz): it is not a zip archive")
    try:
        with zipfile.ZipFile(path) as archive:
            return _read_members(path, archive, max_memory)
    except (zipfile.BadZipFile, EOFError, KeyError, ValueError) as err:
        if isinstance(err, SolutionFileError) or str(err).startswith(repr(name)):
            raise
        raise SolutionFileError(path, None, f"not a readable numpy .npz archive ({err})") from None
    except OSError as err:
        # (the file opened above: an invalid seek is an offset the archive's directory got wrong, corruption;
        # other errors, a failing disk say, are the system's and pass through)
        if err.errno is not None and err.errno != errno.EINVAL:
            raise
        raise SolutionFileError(path, None, f"not a readable numpy .npz archive ({err})") from None
    except MemoryLimitError:
        raise
    except Exception as err:  # zlib.error for a damaged compressed array, among others
        raise SolutionFileError(path, None, f"not a readable numpy .npz archive ({err})") from None


def _read_members(
    path: str | os.PathLike, archive: zipfile.ZipFile, max_memory: int | None
) -> tuple[dict, dict[str, np.ndarray]]:
    """_read() on the open archive: the members, each checked before it is decompressed."""
    name = os.fspath(path)
    allowed = {"meta"} | {f"solution_{a}" for a in SOLUTION_ARRAYS} | {f"table_{a}" for a in TABLE_ARRAYS}
    if "meta.npy" not in archive.namelist():
        raise ValueError(f"{name!r} is not a babytris solution file: no readable metadata")
    infos: dict[str, zipfile.ZipInfo] = {}
    for info in archive.infolist():
        key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
        if key not in allowed:
            if key in LEAN_MEMBERS and _lean_format(archive):
                raise ValueError(f"{name!r} holds a lean solution (LeanSolution.save): read it with babytris.load_lean")
            raise SolutionFileError(path, key, f"not an array a solution file holds (member {info.filename!r})")
        if key in infos:
            raise SolutionFileError(path, key, f"member {info.filename!r} appears twice in the archive")
        infos[key] = info

    def member(key: str, most: int) -> np.ndarray:
        declared = infos[key].file_size
        if declared > HEADER_BYTES + most:
            raise SolutionFileError(
                path, key, f"declares {declared:,} bytes; the rules and the arrays read allow at most {most:,}"
            )
        try:
            with archive.open(infos[key]) as f:
                return np.lib.format.read_array(f, allow_pickle=False)
        except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as err:  # (a failed CRC is a BadZipFile)
            if isinstance(err, OSError) and err.errno is not None and err.errno != errno.EINVAL:
                raise
            raise SolutionFileError(path, key, f"the member is damaged ({err})") from None

    try:
        meta = json.loads(str(member("meta", META_BYTES)))
    except SolutionFileError:
        raise
    except RecursionError:
        raise SolutionFileError(path, "meta", "the metadata's JSON is nested too deeply") from None
    except ValueError:
        raise ValueError(f"{name!r} is not a babytris solution file: no readable metadata") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else meta
        raise ValueError(f"{name!r} is not a babytris solution file (format {found!r})")
    if meta.get("format_version") not in READABLE_VERSIONS:
        raise ValueError(
            f"{name!r} has format version {meta.get('format_version')!r}; this babytris reads "
            f"versions {', '.join(map(str, READABLE_VERSIONS))} (re-solve, or load it with the babytris that "
            f"wrote it, {meta.get('babytris_version')!r})"
        )
    settings = _check_settings(path, meta)
    rules, iterations = settings["rules"], settings["iterations"]
    for key in ("table_boards", "table_offsets"):
        if key not in infos:
            raise SolutionFileError(path, key, "missing from the file")
    nodes = rules.nodes_per_board if rules.node_tables else 1  # (each board once per node)
    contents = {"table_boards": member("table_boards", 8 * 2 ** (rules.width * rules.height) * nodes)}
    # (a row is a board, or with previews, hold or a bag a node: its states, one per piece)
    n_boards, n_pieces = len(contents["table_boards"]), rules.n_pieces
    if max_memory is not None:  # (the rules' own table, each member compared with it as it is read)
        own = rules_table(path, rules, contents["table_boards"], max_memory)
        saved = meta.get("digests")
        saved = saved if isinstance(saved, dict) else {}  # (their form is checked with the others')
        for array_name in TABLE_ARRAYS:
            key, array = f"table_{array_name}", getattr(own, array_name)
            if key == "table_boards" or (array is None and key not in infos):
                continue
            if array is None or key not in infos:
                raise SolutionFileError(path, key, "missing" if array is not None else "not expected with these rules")
            nbytes = len(array) * np.dtype(DTYPES[key]).itemsize
            contents[key] = _matched_member(path, key, member(key, nbytes), array, saved.get(key))
        n_states, n_moves = own.n_states, own.n_moves
    else:
        contents["table_offsets"] = member("table_offsets", 8 * (n_boards * n_pieces + 1))
        offsets = contents["table_offsets"]
        n_states = max(len(offsets) - 1, 0)
        n_moves = int(offsets[-1]) if len(offsets) and offsets.dtype.kind in "iu" else 0
    most = 8 * max(n_moves, n_states, n_boards * n_pieces, iterations + 1, 1)
    for key in infos:
        if key not in contents and key != "meta":
            contents[key] = member(key, most)
    return meta, contents


def holds_lean_solution(path: str | bytes | os.PathLike) -> bool:
    """Whether ``path`` is a zip archive whose metadata says it holds a lean
    solution (read it with :func:`babytris.load_lean`); False for anything
    else, which :func:`load` then reads or refuses with its reason."""
    try:
        with zipfile.ZipFile(os.fsdecode(path)) as archive:
            return _lean_format(archive)
    except (OSError, ValueError, zipfile.BadZipFile):
        return False


def _lean_format(archive: zipfile.ZipFile) -> bool:
    """Whether the archive's metadata says it is a lean solution file (:func:`babytris.load_lean` reads it)."""
    try:
        if archive.getinfo("meta.npy").file_size > HEADER_BYTES + META_BYTES:
            return False
        with archive.open("meta.npy") as f:
            meta = json.loads(str(np.lib.format.read_array(f, allow_pickle=False)))
    except (KeyError, ValueError, RecursionError, OSError, zipfile.BadZipFile, zlib.error):
        return False
    return isinstance(meta, dict) and meta.get("format") == LEAN_FORMAT


def _check_settings(path: str | os.PathLike, meta: dict) -> dict[str, Any]:
    """The metadata's settings, each checked for its type and range, as the
    values a :class:`Solution` takes; raises :class:`SolutionFileError`."""
    missing = [name for name in SETTINGS if name not in meta]
    if missing:
        raise SolutionFileError(path, missing[0], "missing from the metadata")

    def check(name: str, test: Callable[[Any], Any]) -> Any:
        try:
            return test(meta[name])
        except (TypeError, ValueError, KeyError, AttributeError) as err:
            raise SolutionFileError(path, name, str(err)) from None

    out: dict[str, Any] = {}
    out["rules"] = check("rules", Rules.from_json)
    out["discount"] = check("discount", lambda v: check_number("discount", v, 0.0, 1.0))  # (1: games must end)
    out["iterations"] = check("iterations", lambda v: check_int("iterations", v, 0))
    out["residual"] = check("residual", lambda v: check_number("residual", v, 0.0))
    out["converged"] = check("converged", lambda v: check_bool("converged", v))
    out["method"] = check("method", lambda v: _one_of("method", v, METHODS))
    out["tol"] = check("tol", lambda v: check_number("tol", v, 0.0, open_low=True))
    out["max_iter"] = check("max_iter", lambda v: check_int("max_iter", v, 1, 10**7, high_text="10**7"))
    out["seconds"] = check("seconds", _seconds)
    out["opponent"] = check("opponent", lambda v: _one_of("opponent", v, (*OPPONENT_MODELS, "best_response", "given")))
    out["player"] = check("player", lambda v: _one_of("player", v, (*PLAYER_MODELS, "given")))
    out["reward"] = check("reward", lambda v: None if v is None else Reward(**v))
    out["table_seconds"] = check("table_seconds", lambda v: check_number("table_seconds", v, 0.0))
    if out["converged"] != (out["residual"] <= out["tol"]):
        raise SolutionFileError(
            path, "converged", f"{out['converged']} with residual {out['residual']:g} and tol {out['tol']:g}"
        )
    return out


def _one_of(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if not (isinstance(value, str) and value in allowed):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def _seconds(value: object) -> dict[str, float]:
    if not isinstance(value, dict):
        raise ValueError(f"seconds must be a dict of timings, got {value!r}")
    return {str(key): check_number(f"seconds[{key!r}]", time, 0.0) for key, time in value.items()}


def _check_arrays(
    path: str | os.PathLike, rules: Rules, settings: dict[str, Any], contents: dict[str, np.ndarray]
) -> None:
    """Check the arrays' names, dtypes and shapes against the rules, the
    settings and one another (the ranges are checked by :class:`Transitions`
    and :func:`_check_solution`); raises :class:`SolutionFileError` naming
    the first array at fault."""

    def fail(name: str, problem: str) -> None:
        raise SolutionFileError(path, name, problem)

    unknown = sorted(set(contents) - set(DTYPES))
    if unknown:
        fail(unknown[0], "not an array a babytris solution holds")
    required = {
        "solution_values",
        "solution_policy",
        "solution_residuals",
        "table_boards",
        "table_layer_starts",
        "table_offsets",
        "table_next_board",
        "table_lines",
        "table_placement",
    }
    if rules.node_tables:  # node tables carry queues (all 0 without previews)
        required.add("table_queues")
    if rules.hold:
        required.add("table_slots")
    if rules.randomizer == "bag":
        required.add("table_bags")
    if settings["opponent"] != "random":
        required.add("solution_opponent_policy")
    for name in sorted(required - set(contents)):
        fail(name, "missing")
    optional = {"solution_evaluation_sweeps"}  # (files written before they were kept lack them)
    for name in sorted(set(contents) - required - optional):
        fail(name, f"not expected with these rules and opponent={settings['opponent']!r}")
    for name, array in contents.items():
        if array.dtype != DTYPES[name]:
            fail(name, f"dtype {array.dtype}, not {np.dtype(DTYPES[name])}")

    n, n_pieces = len(contents["table_boards"]), rules.n_pieces
    n_moves = len(contents["table_next_board"])
    shapes = {
        "table_boards": (n,),
        "table_layer_starts": (len(layers(rules)) + 1,),
        "table_offsets": (n * n_pieces + 1,),
        "table_next_board": (n_moves,),
        "table_lines": (n_moves,),
        "table_placement": (n_moves,),
        "table_queues": (n,),
        "table_slots": (n,),
        "table_bags": (n,),
        "solution_values": (n, n_pieces),
        "solution_policy": (n, n_pieces),
        "solution_residuals": (settings["iterations"],),
        "solution_evaluation_sweeps": (settings["iterations"],),
        "solution_opponent_policy": (n,),
    }
    for name, array in contents.items():
        if array.shape != shapes[name]:
            made_by = (
                f"the setting iterations = {settings['iterations']}"
                if name in ("solution_residuals", "solution_evaluation_sweeps")
                else f"the rules ({rules.width}x{rules.height}, {n_pieces} pieces) and the other arrays"
            )
            fail(name, f"shape {array.shape}, where {made_by} make it {shapes[name]}")


def _check_solution(
    path: str | os.PathLike, rules: Rules, settings: dict[str, Any], contents: dict[str, np.ndarray], table: Transitions
) -> None:
    """Check the solution's arrays against its (checked) move table: finite
    values and residuals, each policy entry one of its state's moves, piece
    choices in range; raises :class:`SolutionFileError` naming the array at fault."""

    def fail(name: str, problem: str) -> None:
        raise SolutionFileError(path, name, problem)

    n, n_pieces, n_moves = table.n_boards, rules.n_pieces, table.n_moves
    offsets, placement = table.offsets, table.placement
    steps = np.diff(offsets)
    if not np.all(np.isfinite(contents["solution_values"])):
        fail("solution_values", "not all finite")
    residuals = contents["solution_residuals"]
    if not (np.all(np.isfinite(residuals)) and np.all(residuals >= 0)):
        fail("solution_residuals", "not all finite and >= 0")
    if residuals.size and residuals[-1] != settings["residual"]:
        fail("residual", f"{settings['residual']!r}, not the last of solution_residuals, {residuals[-1]!r}")
    if "solution_evaluation_sweeps" in contents and np.any(contents["solution_evaluation_sweeps"] < 0):
        fail("solution_evaluation_sweeps", "values below 0")
    policy = contents["solution_policy"].ravel()
    has_move = steps > 0
    if np.any(policy < -1):
        fail("solution_policy", "values below -1")
    if np.any((policy >= 0) & ~has_move):
        # (the policy or the table was edited: which, the file cannot tell, so both are named)
        fail("solution_policy", "a placement where the state has no move (in table_offsets)")
    # Each chosen placement is one of its state's moves.
    matches = np.zeros(policy.size, dtype=bool)
    if n_moves:
        same = placement == np.repeat(policy, steps)
        matches[has_move] = np.logical_or.reduceat(same, offsets[:-1][has_move])
    if np.any((policy >= 0) & ~matches):
        fail("solution_policy", "a placement that is not one of its state's moves (table_offsets, table_placement)")
    if "solution_opponent_policy" in contents:
        choice = contents["solution_opponent_policy"]
        if n and not (0 <= choice.min() and choice.max() < n_pieces):
            fail("solution_opponent_policy", f"piece choices outside [0, {n_pieces})")
