"""A sharded solve read back from its directory (``solve_sharded(..., out=DIR)``),
and proved as a loaded Solution is (:mod:`babytris.files.proof`).

:func:`load_sharded` checks the manifest's settings, and, unless asked not to
(``verify=False``), reads every shard and recomputes what the directory
reports: each shard's boards are its own (sorted, owned by it by the split,
on the board), the start board is there, and the engine's moves from every
board (``babytris.modes.sharded._shard.expand``, the rules' own) lead only to boards
some shard holds; one Bellman backup of the saved values (the solver's
compiled :func:`~babytris.solvers._greedy.state_values`) moves none by more
than the manifest's residual allows, which gives the certified
:attr:`ShardedValues.error_bound`; each saved move is greedy in the values
within the tie slack.  Cost: one expansion of every board (an enumeration's
work) and one backup, one shard at a time: its memory is the shard proved,
its table and its ghosts' values, and one other shard's boards and values
while the ghosts it owns are read from its file (each file is read once to
check it, then once more per shard reading from it).  Lookups
(:class:`~babytris.modes.sharded.lookups.ShardLookups`: ``value``,
``best_action``, ``start_value``, ``play``, and ``played_game``, which
:func:`babytris.play` and :func:`babytris.evaluate` read) open only the
shards they ask.
"""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np

from ..engine import _moves
from ..engine.placements import canonical_boards, engine
from ..engine.resources import resolve_n_jobs
from ..game.rules import Rules
from ..game.validation import check_bool, check_int, check_number
from ..modes.sharded import _shard
from ..modes.sharded.distributed import OPPONENTS, SHARDED_FORMAT, SHARDED_VERSION
from ..modes.sharded.lookups import ShardLookups
from ..modes.sharded.owners import SPLITS, distinct, owner_digest, shard_of
from ..modes.sharded.shard import shard_digest
from ..results.solution import tie_slack
from ..solvers import _greedy
from .errors import SolutionFileError

__all__ = ["ShardedValues", "load_sharded"]

#: Rounding allowed per backup, in ulps of the largest value (as for a loaded Solution).
ULPS = 16


class ShardedValues(ShardLookups):
    """A sharded solve saved to a directory (``solve_sharded(..., out=DIR)``):
    lookups open only the shard that owns the board (and keep it open).

    Attributes:
        rules, discount, opponent, split, n_shards, iterations, residual, converged, tol: from the manifest.
        verified: whether the shards were proved on loading (see :func:`load_sharded`).
        error_bound: a proven bound on ``max |values - V*|`` from the proof's
            backup (``(largest change + rounding) / (1 - discount)``), or None
            (undiscounted, or not verified).
    """

    def __init__(self, path: str | os.PathLike, *, verify: bool = True) -> None:
        self.path = os.fspath(path)
        self.verified = check_bool("verify", verify)
        manifest_path = os.path.join(self.path, "manifest.json")
        try:
            with open(manifest_path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, ValueError) as err:  # (missing or unreadable: not a sharded solve's folder)
            raise ValueError(f"{self.path!r}: no readable manifest.json of a sharded solve ({err})") from None
        try:
            manifest = json.loads(text)
        except (ValueError, RecursionError) as err:
            raise SolutionFileError(manifest_path, None, f"not the JSON a sharded solve writes ({err})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != SHARDED_FORMAT:
            raise SolutionFileError(manifest_path, "format", f"not a {SHARDED_FORMAT} version {SHARDED_VERSION}")
        if manifest.get("format_version") != SHARDED_VERSION:
            raise ValueError(
                f"{manifest_path!r} has {SHARDED_FORMAT} version {manifest.get('format_version')!r}; this babytris "
                f'reads version {SHARDED_VERSION} (from version 3 "low_rows" deals the bottom rows\' patterns to the '
                "shards by their boards, where version 2 mixed them: an older directory's boards are not in the "
                "shards this one reads). Solve again, or load it with the babytris that wrote it"
            )
        try:
            self.rules = Rules.from_json(manifest["rules"])
            undiscounted = self.rules.objective == "combo"
            self.discount: float = check_number(
                "discount", manifest["discount"], 0.0, 1.0, open_low=True, open_high=not undiscounted
            )
            self.opponent: str = _one_of("opponent", manifest["opponent"], tuple(OPPONENTS))
            self.split: str = _one_of("split", manifest["split"], SPLITS)
            self.n_shards: int = check_int("n_shards", manifest["n_shards"], 1, 2**20)
            self.iterations: int = check_int("iterations", manifest["iterations"], 0, 2**40)
            self.residual: float = check_number("residual", manifest["residual"], 0.0, 2.0**1000)
            self.converged: bool = check_bool("converged", manifest["converged"])
            self.tol: float = check_number("tol", manifest["tol"], 0.0)
            if self.converged != (self.residual <= self.tol):
                raise ValueError(f"converged is {self.converged} with residual {self.residual:g} and tol {self.tol:g}")
        except (KeyError, TypeError) as err:
            raise SolutionFileError(manifest_path, None, f"missing or malformed field {err}") from None
        except ValueError as err:
            raise SolutionFileError(manifest_path, None, str(err)) from None
        if self.rules.preview or self.rules.hold or self.rules.randomizer == "bag" or self.rules.moves == "soft":
            raise SolutionFileError(
                manifest_path, "rules", "a sharded solve takes plain rules (no preview, hold, bag or soft moves)"
            )
        if self.rules.mirror:
            raise SolutionFileError(manifest_path, "rules", "a sharded solve saves no mirror-merged game")
        if manifest.get("owners") != owner_digest(self.rules, self.n_shards, self.split):
            raise SolutionFileError(
                manifest_path,
                "owners",
                "the shard owning each board is not the one this babytris deals it to (the table's digest "
                "differs): lookups would ask the wrong shard. Solve again, or load it with the babytris that wrote it",
            )
        self._digests = manifest.get("digests")
        self._shards: dict[int, dict[str, np.ndarray]] = {}
        self.error_bound: float | None = None
        self.tie_slack = 0.0  # (proved: the solve's, from the largest value; unverified: none believed)
        if self.verified:
            self._prove()

    def __repr__(self) -> str:
        r = self.rules
        status = "converged" if self.converged else "NOT converged"
        bound = "" if self.error_bound is None else f", error <= {self.error_bound:.1e}"
        trust = "" if self.verified else ", UNVERIFIED (loaded with verify=False)"
        return (
            f"<ShardedValues {r.width}x{r.height} discount={self.discount} opponent={self.opponent}: "
            f"{self.n_shards} shards ({self.split}) in {self.path!r}, {self.iterations} rounds, "
            f"residual={self.residual:.1e} {status}{bound}{trust}>"
        )

    def _shard(self, k: int) -> dict[str, np.ndarray]:
        """Shard ``k``'s arrays, read and checked on its first lookup, then kept."""
        if k not in self._shards:
            self._shards[k] = self._read(k)
        return self._shards[k]

    def _read(self, k: int) -> dict[str, np.ndarray]:
        """Shard ``k``'s boards, values and policy, their form, digest and owners checked."""
        name = self._name(k)
        arrays = self._arrays(k, ("boards", "values", "policy"))
        n, P = len(arrays["boards"]), self.rules.n_pieces
        if arrays["values"].shape != (n * P,) or arrays["policy"].shape != (n * P,):
            raise SolutionFileError(name, "values", f"values and policy must hold {n * P} entries, one per state")
        if not np.isfinite(arrays["values"]).all():
            raise SolutionFileError(name, "values", "not all finite")
        if self._digests is not None and (
            not isinstance(self._digests, list)
            or len(self._digests) != self.n_shards
            or self._digests[k] != shard_digest(arrays)
        ):
            raise SolutionFileError(name, None, "its SHA-256 differs from the manifest's: changed after saving")
        self._check_boards(name, k, arrays)
        return arrays

    def _n_boards(self, k: int) -> int:
        """Shard ``k``'s boards: its array's length, from the header alone where the shard is not open."""
        if k in self._shards:
            return len(self._shards[k]["boards"])
        name = self._name(k)
        try:
            with zipfile.ZipFile(name) as archive, archive.open("boards.npy") as f:
                version = np.lib.format.read_magic(f)
                header = (
                    np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                )
                shape, _, _ = header(f)
        except FileNotFoundError as err:
            raise ValueError(f"{name!r}: not a readable shard of a sharded solve ({err})") from None
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as err:
            raise SolutionFileError(name, "boards", f"not a readable shard of a sharded solve ({err})") from None
        if len(shape) != 1:
            raise SolutionFileError(name, "boards", f"shape {shape}, not one board a row")
        return int(shape[0])

    def _name(self, k: int) -> str:
        return os.path.join(self.path, f"shard-{k}.npz")

    def _arrays(self, k: int, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
        """The arrays ``keys`` of shard ``k``'s file, as stored."""
        name = self._name(k)
        try:
            with open(name, "rb") as f:
                if f.read(2) != b"PK":  # (numpy would read another file as a pickle, and advise unpickling it)
                    raise ValueError("not a numpy .npz archive")
            with np.load(name, allow_pickle=False) as data:
                return {key: data[key] for key in keys}
        except FileNotFoundError as err:  # (a shard missing: the folder, not a file, is at fault)
            raise ValueError(f"{name!r}: not a readable shard of a sharded solve ({err})") from None
        except (OSError, ValueError, KeyError) as err:
            raise SolutionFileError(name, None, f"not a readable shard of a sharded solve ({err})") from None

    def _check_boards(self, name: str, k: int, arrays: dict[str, np.ndarray]) -> None:
        """A shard's boards: uint64, ascending, on the board, each owned by shard ``k``;
        its values float64 and its policy int16."""
        boards, rules = arrays["boards"], self.rules
        dtypes = {"boards": np.uint64, "values": np.float64, "policy": np.int16}
        for key, dtype in dtypes.items():
            if arrays[key].dtype != dtype:
                raise SolutionFileError(name, key, f"dtype {arrays[key].dtype}, not {np.dtype(dtype)}")
        if len(boards) and (np.any(boards[1:] <= boards[:-1]) or int(boards[-1]) >> (rules.width * rules.height)):
            raise SolutionFileError(name, "boards", "not ascending, or a board with cells beyond the board")
        owners = shard_of(boards, self.n_shards, self.split, rules)
        if np.any(owners != k):
            i = int(np.flatnonzero(owners != k)[0])
            raise SolutionFileError(name, "boards", f"board {int(boards[i])} belongs to shard {int(owners[i])}")

    def _prove(self) -> None:
        """Recompute what the directory reports (see :func:`load_sharded`), one
        shard at a time: a first pass checks each shard's form and finds the
        largest value, a second backs up each shard's values over the table
        of its own boards and its ghosts, whose values it takes from their
        owners' files one at a time."""
        rules, P, g = self.rules, self.rules.n_pieces, self.discount
        start = canonical_boards(np.array([rules.start], dtype=np.uint64), rules)
        largest = 0.0
        for k in range(self.n_shards):
            shard = self._read(k)
            largest = max(largest, float(np.abs(shard["values"]).max(initial=0.0)))
            del shard
        owner = int(shard_of(start, self.n_shards, self.split, rules)[0])
        self._locate(owner, self._arrays(owner, ("boards",))["boards"], start, "the start board")
        rounding = ULPS * np.finfo(np.float64).eps * largest
        # The saved values are those of the last round's greedy sweep, which read board values
        # that were at most its residual away (a round that converged sweeps no more).
        allowed = g * self.residual + rounding
        slack = (tie_slack(g, self.residual, np.array([largest])) if self.converged else 0.0) + 2 * g * self.residual
        scores = np.asarray(rules.line_scores, dtype=np.float64)
        moved = 0.0
        drop, threads = engine(rules), resolve_n_jobs(None)
        for k in range(self.n_shards):
            name, shard = self._name(k), self._read(k)
            offsets, after, lines, placement = _shard.expand(drop, shard["boards"], threads)
            next_board, board_values = self._table(k, shard, after)
            backed_up = np.empty(len(shard["values"]))
            _greedy.state_values(offsets, next_board, lines, scores, board_values, g, backed_up, n_threads=threads)
            change = np.abs(backed_up - shard["values"])
            s = int(np.argmax(change)) if change.size else 0
            if change.size and not change[s] <= allowed:
                raise SolutionFileError(
                    name,
                    "values",
                    f"one Bellman sweep over them moves state {s:,} (board {int(shard['boards'][s // P])}, piece "
                    f"{rules.piece_names[s % P]!r}) by {change[s]:.3g}, where the manifest's residual "
                    f"{self.residual:.3g} allows at most {allowed:.3g} at discount {g}",
                )
            moved = max(moved, float(change[s]) if change.size else 0.0)
            self._check_policy(name, shard, offsets, next_board, lines, placement, board_values, backed_up, slack)
        self.error_bound = None if g >= 1.0 else (moved + rounding) / (1.0 - g)
        self.tie_slack = tie_slack(g, self.residual, np.array([largest])) if self.converged else 0.0

    def _board_values(self, values: np.ndarray) -> np.ndarray:
        """Each board's value before its piece, from its states' ``values`` (flat)."""
        values = values.reshape(-1, self.rules.n_pieces)
        probs = np.asarray(self.rules.probabilities, dtype=np.float64)
        if self.opponent == "minimax":  # (the least valuable piece of those that can come)
            return np.where(probs > 0, values, np.inf).min(axis=1)
        return values @ probs

    def _table(self, k: int, shard: dict[str, np.ndarray], after: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Shard ``k``'s moves' boards after (``after``, bits) as indices into its
        own boards then its ghosts, and those boards' values (each ghost's read
        from its owner's file, one other shard at a time)."""
        owners = shard_of(after, self.n_shards, self.split, self.rules)
        next_board = np.empty(len(after), dtype=np.int64)
        parts = [self._board_values(shard["values"])]
        base = len(shard["boards"])
        for j in range(self.n_shards):
            mine = owners == j
            if j == k:
                next_board[mine] = self._locate(k, shard["boards"], after[mine], f"a move of shard {k}")
                continue
            wanted = distinct(after[mine])
            if not len(wanted):
                continue
            other = self._arrays(j, ("boards", "values"))
            at = self._locate(j, other["boards"], wanted, f"a move of shard {k}")
            if other["values"].shape != (len(other["boards"]) * self.rules.n_pieces,):
                raise SolutionFileError(self._name(j), "values", "not one value per state")
            parts.append(self._board_values(other["values"])[at])
            del other
            next_board[mine] = base + np.searchsorted(wanted, after[mine])
            base += len(wanted)
        if base >= 2**31:
            raise ValueError(f"{self.path!r}: shard {k} and its ghosts hold {base:,} boards: too many to prove")
        return next_board.astype(np.int32), np.concatenate(parts)

    def _locate(self, k: int, held: np.ndarray, boards: np.ndarray, what: str) -> np.ndarray:
        """The index of each of ``boards`` (uint64, owned by shard ``k``) in ``held``,
        shard ``k``'s boards; refuses a board it does not hold."""
        at = np.searchsorted(held, boards)
        found = at < len(held)
        found[found] = held[at[found]] == boards[found]
        if not found.all():
            board = int(boards[np.flatnonzero(~found)[0]])
            raise SolutionFileError(
                self._name(k), "boards", f"{what} reaches board {board}, which this shard, its owner, does not hold"
            )
        return at

    def _check_policy(self, name, shard, offsets, next_board, lines, placement, board_values, best, slack) -> None:
        """Each saved move is one of its state's, and greedy in the values within ``slack``."""
        P = self.rules.n_pieces
        rows = np.empty(len(offsets) - 1, dtype=np.int16)
        bad = _moves.placement_rows(offsets, placement, shard["policy"].astype(np.int64), rows)
        if bad >= 0:
            raise SolutionFileError(name, "policy", f"state {bad:,}: placement {shard['policy'][bad]} is not its move")
        live = np.flatnonzero(rows >= 0)
        moves = offsets[live].astype(np.int64) + rows[live]
        scores = np.asarray(self.rules.line_scores, dtype=np.float64)
        worth = scores[lines[moves]] + self.discount * board_values[next_board[moves]]
        short = best[live] - worth
        allowed = slack + ULPS * np.finfo(np.float64).eps * float(np.abs(best).max(initial=0.0))
        if short.size and not short.max() <= allowed:
            s = int(live[np.argmax(short)])
            raise SolutionFileError(
                name,
                "policy",
                f"state {s:,} (board {int(shard['boards'][s // P])}, piece {self.rules.piece_names[s % P]!r}) "
                f"takes placement {shard['policy'][s]}, worth {worth[np.argmax(short)]:.6g}, where its best move is "
                f"worth {best[s]:.6g}: not greedy within the tie slack {allowed:.3g}",
            )

    def _rows(self, k: int, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        shard, P = self._shard(k), self.rules.n_pieces
        held = shard["boards"]
        at = np.minimum(np.searchsorted(held, boards), max(len(held) - 1, 0))
        found = held[at] == boards if len(held) else np.zeros(len(boards), dtype=bool)
        states = at[:, None] * P + np.arange(P)
        return found, shard["values"][states], shard["policy"][states]


def _one_of(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if not (isinstance(value, str) and value in allowed):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def load_sharded(path: str | os.PathLike, *, verify: bool = True) -> ShardedValues:
    """The sharded solve saved in directory ``path``, proved unless ``verify=False``.

    With ``verify`` (the default) every shard is read and what the directory
    reports is recomputed (see the module's notes): a shard that fails is
    refused with a :class:`~babytris.SolutionFileError` naming it, the array
    and what differs.  ``verify=False`` checks the manifest alone and opens
    each shard on its first lookup (checking its form and digest then); the
    result is marked unverified (``verified``, its repr).

    Returns:
        :class:`ShardedValues`.
    """
    return ShardedValues(path, verify=verify)
