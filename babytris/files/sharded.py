"""A sharded solve read back from its directory (``solve_sharded(..., out=DIR)``),
and proved as a loaded Solution is (:mod:`babytris.files.proof`).

:func:`load_sharded` checks the manifest's settings, and, unless asked not to
(``verify=False``), reads every shard and recomputes what the directory
reports: each shard's boards are its own (sorted, owned by it by the split,
on the board), the start board is there, and the engine's moves from every
board (``babytris.modes._shard.expand``, the rules' own) lead only to boards
some shard holds; one Bellman backup of the saved values (the solver's
compiled :func:`~babytris.solvers._greedy.state_values`) moves none by more
than the manifest's residual allows, which gives the certified
:attr:`ShardedValues.error_bound`; each saved move is greedy in the values
within the tie slack.  Cost: one expansion of every board (an enumeration's
work) and one backup, with every shard in memory at once.
"""

from __future__ import annotations

import json
import os

import numpy as np

from ..engine import _moves
from ..engine.placements import canonical_boards, engine, placement_table
from ..engine.resources import resolve_n_jobs
from ..game.pieces import Placement
from ..game.rules import Rules
from ..game.validation import check_bool, check_int, check_number
from ..modes import _shard
from ..modes.distributed import OPPONENTS, SHARDED_FORMAT, SHARDED_VERSION, SPLITS, shard_digest, shard_of
from ..results.solution import tie_slack
from ..solvers import _greedy
from .errors import SolutionFileError

__all__ = ["ShardedValues", "load_sharded"]

#: Rounding allowed per backup, in ulps of the largest value (as for a loaded Solution).
ULPS = 16


class ShardedValues:
    """A sharded solve saved to a directory (``solve_sharded(..., out=DIR)``):
    lookups open only the shard that owns the board (and keep it open).

    Attributes:
        rules, discount, opponent, split, n_shards, iterations, residual, converged: from the manifest.
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
        if (
            not isinstance(manifest, dict)
            or manifest.get("format") != SHARDED_FORMAT
            or manifest.get("format_version") != SHARDED_VERSION
        ):
            raise SolutionFileError(manifest_path, "format", f"not a {SHARDED_FORMAT} version {SHARDED_VERSION}")
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
            tol = manifest["tol"]
            if self.converged != (self.residual <= check_number("tol", tol, 0.0)):
                raise ValueError(f"converged is {self.converged} with residual {self.residual:g} and tol {tol:g}")
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
        self._digests = manifest.get("digests")
        self._shards: dict[int, dict[str, np.ndarray]] = {}
        self.error_bound: float | None = None
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
        if k not in self._shards:
            name = os.path.join(self.path, f"shard-{k}.npz")
            try:
                with open(name, "rb") as f:
                    if f.read(2) != b"PK":  # (numpy would read another file as a pickle, and advise unpickling it)
                        raise ValueError("not a numpy .npz archive")
                with np.load(name, allow_pickle=False) as data:
                    arrays = {key: data[key] for key in ("boards", "values", "policy")}
            except FileNotFoundError as err:  # (a shard missing: the folder, not a file, is at fault)
                raise ValueError(f"{name!r}: not a readable shard of a sharded solve ({err})") from None
            except (OSError, ValueError, KeyError) as err:
                raise SolutionFileError(name, None, f"not a readable shard of a sharded solve ({err})") from None
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
            self._shards[k] = arrays
        return self._shards[k]

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
        owners = shard_of(boards, self.n_shards, self.split, rules.width)
        if np.any(owners != k):
            i = int(np.flatnonzero(owners != k)[0])
            raise SolutionFileError(name, "boards", f"board {int(boards[i])} belongs to shard {int(owners[i])}")

    def _prove(self) -> None:
        """Recompute what the directory reports (see :func:`load_sharded`)."""
        rules, P, g = self.rules, self.rules.n_pieces, self.discount
        shards = [self._shard(k) for k in range(self.n_shards)]
        probs = np.asarray(rules.probabilities, dtype=np.float64)
        scores = np.asarray(rules.line_scores, dtype=np.float64)
        # Every board's value before its piece, the shards one after another.
        values = [s["values"].reshape(-1, P) for s in shards]
        if self.opponent == "minimax":  # (the least valuable piece of those that can come)
            board_values = np.concatenate([np.where(probs > 0, v, np.inf).min(axis=1) for v in values])
        else:
            board_values = np.concatenate([v @ probs for v in values])
        firsts = np.cumsum([0] + [len(s["boards"]) for s in shards])
        if firsts[-1] >= 2**31:
            raise ValueError(f"{self.path!r}: {firsts[-1]:,} boards: too many to prove in one process (verify=False)")
        start = canonical_boards(np.array([rules.start], dtype=np.uint64), rules)
        self._where(start, firsts, "the start board")
        largest = max((float(np.abs(s["values"]).max()) for s in shards if s["values"].size), default=0.0)
        rounding = ULPS * np.finfo(np.float64).eps * largest
        # The saved values are those of the last round's greedy sweep, which read board values
        # that were at most its residual away (a round that converged sweeps no more).
        allowed = g * self.residual + rounding
        slack = (tie_slack(g, self.residual, np.array([largest])) if self.converged else 0.0) + 2 * g * self.residual
        moved = 0.0
        drop, threads = engine(rules), resolve_n_jobs(None)
        for k, shard in enumerate(shards):
            name = os.path.join(self.path, f"shard-{k}.npz")
            offsets, after, lines, placement = _shard.expand(drop, shard["boards"], threads)
            next_board = self._where(after, firsts, f"a move of shard {k}")
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

    def _where(self, boards: np.ndarray, firsts: np.ndarray, what: str) -> np.ndarray:
        """The index of each of ``boards`` (uint64) among all the shards' boards (int32);
        refuses a board no shard holds."""
        owners = shard_of(boards, self.n_shards, self.split, self.rules.width)
        out = np.empty(len(boards), dtype=np.int32)
        for k in range(self.n_shards):
            mine = owners == k
            held = self._shards[k]["boards"]
            at = np.searchsorted(held, boards[mine])
            found = at < len(held)
            found[found] = held[at[found]] == boards[mine][found]
            if not found.all():
                board = int(boards[mine][np.flatnonzero(~found)[0]])
                raise SolutionFileError(
                    os.path.join(self.path, f"shard-{k}.npz"),
                    "boards",
                    f"{what} reaches board {board}, which this shard, its owner, does not hold",
                )
            out[mine] = firsts[k] + at
        return out

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

    def _state(self, board: int, piece: int | str) -> tuple[dict[str, np.ndarray], int, int]:
        bits = np.array([int(board)], dtype=np.uint64)
        p = self.rules.piece_index(piece)
        shard = self._shard(int(shard_of(bits, self.n_shards, self.split, self.rules.width)[0]))
        i = int(np.searchsorted(shard["boards"], bits[0]))
        if i >= len(shard["boards"]) or shard["boards"][i] != bits[0]:
            raise KeyError(f"board {int(board)} is not reachable from the start under these rules")
        return shard, i * self.rules.n_pieces + p, p

    def value(self, board: int, piece: int | str) -> float:
        """The value of placing ``piece`` on ``board`` (bits), as :meth:`Solution.value`."""
        shard, s, _ = self._state(board, piece)
        return float(shard["values"][s])

    def best_action(self, board: int, piece: int | str) -> Placement | None:
        """An optimal :class:`~babytris.Placement`, or None at game over, as :meth:`Solution.best_action`."""
        shard, s, p = self._state(board, piece)
        number = int(shard["policy"][s])
        return None if number < 0 else placement_table(self.rules).placements[p][number]

    @property
    def start_value(self) -> float:
        """The start board's value before its first piece (drawn, or the minimax opponent's)."""
        start = int(canonical_boards(np.array([self.rules.start], dtype=np.uint64), self.rules)[0])
        values = np.array([self.value(start, p) for p in range(self.rules.n_pieces)])
        if self.opponent == "minimax":
            return float(values.min())
        return float(values @ np.asarray(self.rules.probabilities))


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
