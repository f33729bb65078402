"""Tournaments: player policies against opponents, in exact expected points
over n placements, with playout means beside them as a check.

>>> import babytris
>>> table = babytris.standard_tournament(width=4, height=4, n_placements=1000, n_games=20)
>>> print(table)
player              random  minimax 0.1  minavg 0.1  gaps 0.1  minimax 0.9  minavg 0.9  gaps 0.9    min  worst case
optimal            1,106.9        999.0       999.0     999.0        998.0       999.0     997.0  997.0       997.0
random                 2.3          0.6         0.6       1.0          0.6         0.4       1.7    0.4         0.4
max-min            1,069.6        999.0     1,000.0     999.0        999.0       999.0     999.0  999.0       997.0
max-min 0/0/3/0    1,069.6        999.0     1,000.0     999.0        999.0       999.0     999.0  999.0       997.0
max-min 0/0/1/1    1,075.8        999.0     1,000.0     999.0        999.0       999.0     999.0  999.0       997.0
max-min 10/0/3/1     819.1        997.0       997.0     750.0        749.0       749.0     749.0  749.0       748.0
max-min 10/0/4/0     921.8        999.0       999.0     999.0        749.0       749.0     998.0  749.0       748.0
max-min 0/1/4/1.5    883.5        997.0       997.0     750.0        749.0       874.0     749.0  749.0       748.0
max-min 0/2/1/1        2.4          0.0         1.0       0.0          2.0         0.0       0.0    0.0         0.0
expected points of 1,000 placements (exact); playouts of 20 games agree: the largest gap ... within 4.06 (...); ...
>>> table.setup_text()
"rules: Rules(width=4, height=4, ...); timing: preview=0: each piece chosen after the placement ...; ties: first ..."
"""

from __future__ import annotations

import csv
import html
import io
import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from ..engine.enumeration import enumerate_boards
from ..engine.reward import Reward
from ..engine.transitions import Transitions
from ..game.rules import Rules, make_rules
from ..game.validation import check_int, check_type, is_number
from ..results.solution import Solution
from ..solvers.match import Match
from ..solvers.roles import BEST_RESPONSE
from ..solvers.solve import solve_transitions, solver_bytes_per_board
from .evaluate import MAX_GAMES, MAX_PLACEMENTS, Opponent, Player, expected_points, play

__all__ = ["Tournament", "tournament", "standard_tournament", "STANDARD_REWARDS", "AGREEMENT_CONFIDENCE"]

#: The playout check's confidence: under agreement (each playout mean an unbiased estimate of its
#: exact value, errors normal), every pair's gap stays within the threshold with this chance.
AGREEMENT_CONFIDENCE = 0.99

#: Reward weightings of the robust-player study (lines, height, score, gaps).
STANDARD_REWARDS = (
    Reward(lines=0, height=0, score=3, gaps=0),
    Reward(lines=0, height=0, score=1, gaps=1),
    Reward(lines=10, height=0, score=3, gaps=1),
    Reward(lines=10, height=0, score=4, gaps=0),
    Reward(lines=0, height=1, score=4, gaps=1.5),
    Reward(lines=0, height=2, score=1, gaps=1),
)


@dataclass(frozen=True, repr=False)
class Tournament:
    """Expected points of each player (rows) against each opponent (columns).

    Attributes:
        players, opponents: the names, in order.
        expected: float64 array ``(n_players, n_opponents)``: exact expected
            points of ``n_placements`` placements from the empty board.
        playout_mean, playout_stderr: float64 arrays of the same shape: the
            mean points of ``n_games`` played games and its standard error
            (NaN where no games were played).
        n_placements, n_games: as given.
        seconds: wall time of the whole tournament (solves included when built
            by :func:`standard_tournament`).
        worst_case: float64 array ``(n_players,)``: each player's expected
            points against the true worst case, an opponent who knows its
            policy and how many placements are left
            (:func:`~babytris.expected_points` with ``opponent="best_response"``;
            with hold it gives the next piece again after a hold); at most
            :attr:`worst`, the least over the listed opponents.
        ties: each player's tie rule (:mod:`babytris.solvers.ties`: ``"first"``,
            ``"last"``, ``"random seed N"``), ``""`` for a player given as
            an array or placing at random.
        rules: the game's rules (its timing: ``rules.preview``, the pieces
            known before a placement; see :meth:`timing_text`).

    Every output (``str``, :meth:`to_markdown`, ``_repr_html_``,
    :meth:`to_records` and so CSV and JSON) records the rules, the timing
    and the tie rules, and the text ones the playout check
    (:meth:`check_text`: its threshold stated).
    """

    players: tuple[str, ...]
    opponents: tuple[str, ...]
    expected: np.ndarray
    playout_mean: np.ndarray
    playout_stderr: np.ndarray
    n_placements: int
    n_games: int
    seconds: float
    worst_case: np.ndarray
    ties: tuple[str, ...] = ()
    rules: Rules | None = None

    @property
    def worst(self) -> np.ndarray:
        """float64 array ``(n_players,)``: each player's least expected points over the opponents."""
        return self.expected.min(axis=1)

    @property
    def largest_gap(self) -> float:
        """The largest |playout mean - exact| in standard errors (the check; see
        :meth:`check_text`); infinite where a pair with no spread at all (a
        deterministic game) missed its exact value beyond rounding."""
        gap = np.abs(self.playout_mean - self.expected)
        exact = gap <= 1e-9 * np.maximum(1.0, np.abs(self.expected))
        with np.errstate(invalid="ignore", divide="ignore"):
            z = np.where(exact, 0.0, gap / self.playout_stderr)
        z = z[~np.isnan(z)]
        return float(z.max()) if z.size else 0.0

    @property
    def agreement_threshold(self) -> float:
        """The largest gap, in standard errors, that the playouts of every checked
        pair stay within at :data:`AGREEMENT_CONFIDENCE` when they agree with the
        exact values: the two-sided quantile of Student's t with ``n_games - 1``
        degrees of freedom (each standard error is itself estimated from the games)
        at ``AGREEMENT_CONFIDENCE ** (1 / pairs)`` (Sidak's correction, for the
        pairs with a nonzero standard error): 2.58 for one pair of many games,
        3.40 for 15, 4.05 for 15 pairs of 20 games.  Returns a float."""
        pairs = max(1, int(np.count_nonzero(np.isfinite(self.playout_stderr) & (self.playout_stderr > 0))))
        return student_t_quantile(0.5 + AGREEMENT_CONFIDENCE ** (1 / pairs) / 2, max(1, self.n_games - 1))

    @property
    def playouts_agree(self) -> bool:
        """Whether :attr:`largest_gap` is within :attr:`agreement_threshold`."""
        return self.largest_gap <= self.agreement_threshold

    def check_text(self) -> str:
        """The playout check in words, its threshold stated: whether the largest gap is within it. Returns a str."""
        if self.n_games < 2:
            return "no playout check (fewer than 2 games a pair)"
        gap, z = self.largest_gap, self.agreement_threshold
        return (
            f"playouts of {self.n_games:,} games {'agree' if self.playouts_agree else 'DISAGREE'}: the largest gap "
            f"from the exact value is {gap:.1f} standard errors, {'within' if self.playouts_agree else 'over'} "
            f"{z:.2f} (every pair within it with {AGREEMENT_CONFIDENCE:.0%} confidence where they agree)"
        )

    def timing_text(self) -> str:
        """The timing in words: when the pieces are known (``rules.preview``, and the hold slot)."""
        if self.rules is None:
            return "timing not recorded"
        r = self.rules
        when = (
            "each piece chosen after the placement before it"
            if r.preview == 0
            else f"each piece chosen {r.preview} placement{'s' if r.preview > 1 else ''} ahead, known before them"
        )
        return f"preview={r.preview}: {when}" + ("; with hold" if r.hold else "")

    def setup_text(self) -> str:
        """The rules, the timing and the tie rules in one line, as every text output states them. Returns a str."""
        return f"rules: {self.rules!r}; timing: {self.timing_text()}; ties: {self.ties_text()}"

    def ties_text(self) -> str:
        """The players' tie rules in a few words: one rule for all, or each player's."""
        named = {rule for rule in self.ties if rule}
        if len(named) <= 1:
            return f"{named.pop() if named else 'none'} (every player with a policy)"
        return ", ".join(f"{p} {rule}" for p, rule in zip(self.players, self.ties) if rule)

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per (player, opponent): the names, exact and playout figures,
        the player's ``worst_case`` and tie rule, the timing (``preview``) and
        the ``rules`` (their repr)."""
        return [
            {
                "player": player,
                "opponent": opponent,
                "expected": float(self.expected[i, j]),
                "playout_mean": float(self.playout_mean[i, j]),
                "playout_stderr": float(self.playout_stderr[i, j]),
                "n_placements": self.n_placements,
                "n_games": self.n_games,
                "worst_case": float(self.worst_case[i]),
                "ties": self.ties[i] if self.ties else "",
                "preview": None if self.rules is None else self.rules.preview,
                "rules": repr(self.rules),
            }
            for i, player in enumerate(self.players)
            for j, opponent in enumerate(self.opponents)
        ]

    def to_csv(self, path: str | os.PathLike | None = None) -> str:
        """The records as CSV text (a header line, then one line per pair);
        with ``path``, also written there, atomically (a regular file only)."""
        out = io.StringIO()
        records = self.to_records()
        writer = csv.DictWriter(out, fieldnames=list(records[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
        text = out.getvalue()
        if path is not None:
            from ..engine.writing import replace_atomically

            replace_atomically(path, lambda f: f.write(text.encode("utf-8")))
        return text

    def to_pandas(self) -> Any:
        """The records as a pandas ``DataFrame``, one row per (player, opponent)
        (``pip install 'babytris[table]'``)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("Tournament.to_pandas needs pandas: pip install 'babytris[table]'") from None
        return pandas.DataFrame.from_records(self.to_records())

    def _repr_html_(self) -> str:
        """The exact table as HTML, for Jupyter: players down, opponents across, ``min`` and ``worst case``."""
        head = ["player", *self.opponents, "min", "worst case"]
        cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
        rows = [f"<tr>{cells}</tr>"]
        for i, player in enumerate(self.players):
            values = [*self.expected[i], self.worst[i], self.worst_case[i]]
            tds = "".join(f'<td style="text-align:right">{v:,.1f}</td>' for v in values)
            rows.append(f"<tr><th>{html.escape(player)}</th>{tds}</tr>")
        caption = (
            f"expected points of {self.n_placements:,} placements (exact); {self.check_text()}; {self.setup_text()}"
        )
        return f"<table><caption>{html.escape(caption)}</caption>{''.join(rows)}</table>"

    def to_markdown(self) -> str:
        """The exact table as Markdown, with ``min`` (over the columns) and ``worst case`` columns,
        and under it a paragraph: the playout check, the rules, the timing and the tie rules."""
        head = ["player", *self.opponents, "min", "worst case"]
        lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
        for i, player in enumerate(self.players):
            cells = [f"{v:,.1f}" for v in self.expected[i]] + [f"{self.worst[i]:,.1f}", f"{self.worst_case[i]:,.1f}"]
            lines.append("| " + " | ".join([player, *cells]) + " |")
        lines += [
            "",
            f"Expected points of {self.n_placements:,} placements (exact); {self.check_text()}; {self.setup_text()}.",
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        head = ["player", *self.opponents, "min", "worst case"]
        rows = [
            [p, *(f"{v:,.1f}" for v in self.expected[i]), f"{self.worst[i]:,.1f}", f"{self.worst_case[i]:,.1f}"]
            for i, p in enumerate(self.players)
        ]
        widths = [max(len(r[k]) for r in [head, *rows]) for k in range(len(head))]

        def fmt(r: list[str]) -> str:
            return "  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths)))

        text = [fmt(head), *map(fmt, rows)]
        text.append(
            f"expected points of {self.n_placements:,} placements (exact); {self.check_text()}; worst case: the "
            f"pieces chosen, knowing the policy and the placements left, to leave the fewest points; "
            f"{self.setup_text()}; {self.seconds:.2f} s"
        )
        return "\n".join(text)

    def __repr__(self) -> str:
        return (
            f"<Tournament {len(self.players)} players x {len(self.opponents)} opponents, "
            f"n_placements={self.n_placements:,}, n_games={self.n_games:,}>"
        )


def tournament(
    game: Transitions | Match,
    players: Mapping[str, Player],
    opponents: Mapping[str, Opponent],
    *,
    n_placements: int = 10_000,
    n_games: int = 100,
    seed: int = 0,
    n_jobs: int | None = None,
) -> Tournament:
    """Every player against every opponent on ``game``'s boards.

    Args:
        game: the move table (:class:`Transitions`) all policies were solved
            on, or a :class:`~babytris.Match` of those rules with no sides of
            its own (each pair is played as ``Match.of(game, player, opponent)``).
        players: name -> ``"random"``, a :class:`Solution` (its policy) or
            placement numbers ``(n_boards, n_pieces)``.
        opponents: name -> ``"random"``, a :class:`Solution` solved against an
            opponent (its piece choices) or piece indices ``(n_boards,)``.
        n_placements: placements counted, from the empty board.
        n_games: games played per pair as a check (0: none).
        seed: the playouts' seed; pair (i, j) uses ``seed + i * n_opponents + j``.

    Returns:
        :class:`Tournament`.
    """
    if isinstance(game, Match):
        if game.given("player") is not None or game.given("opponent") is not None or game.reward is not None:
            raise ValueError("game: a tournament crosses the players and opponents given; give a Match without sides")
        game = game.transitions
    check_type("game", game, Transitions, "a babytris.Transitions (from enumerate_boards) or a Match")
    if not players or not opponents:
        raise ValueError("tournament: give at least one player and one opponent")
    _check_counts(n_placements, n_games)
    started = time.perf_counter()
    shape = (len(players), len(opponents))
    expected, mean, stderr = np.empty(shape), np.full(shape, np.nan), np.full(shape, np.nan)
    worst_case = np.array(
        [expected_points(Match.of(game, p, BEST_RESPONSE), n_placements=n_placements) for p in players.values()]
    )
    for i, player in enumerate(players.values()):
        for j, opponent in enumerate(opponents.values()):
            match = Match.of(game, player, opponent)
            expected[i, j] = expected_points(match, n_placements=n_placements)
            if n_games:
                games = play(
                    match,
                    n_placements=n_placements,
                    n_games=n_games,
                    seed=seed + i * shape[1] + j,
                    n_jobs=n_jobs,
                )
                mean[i, j], stderr[i, j] = games.mean, games.stderr
    return Tournament(
        tuple(players),
        tuple(opponents),
        expected,
        mean,
        stderr,
        n_placements,
        n_games,
        time.perf_counter() - started,
        worst_case,
        tuple(_ties_of(player) for player in players.values()),
        game.rules,
    )


def standard_tournament(
    rules: Rules | None = None,
    /,
    *,
    discount: float = 0.9,
    opponent_discounts: tuple[float, ...] = (0.1, 0.9),
    rewards: tuple[Reward, ...] = STANDARD_REWARDS,
    n_placements: int = 10_000,
    n_games: int = 100,
    seed: int = 0,
    n_jobs: int | None = None,
    ties: str = "first",
    tie_seed: int | None = None,
    **rule_fields: Any,
) -> Tournament:
    """The Baby Tetris study's table: players solved with ``discount`` against
    opponents solved with each of ``opponent_discounts``.

    Players: ``optimal`` (best against random pieces), ``random`` (uniform
    placements), ``max-min`` (best against the minimax opponent), and one
    max-min player per reward weighting in ``rewards``.  Opponents: random
    pieces, and for each opponent discount the ``minimax`` (worst piece for an
    optimal player), ``minavg`` (worst for a random player) and ``gaps`` (most
    holes from a random player) opponents.  Every side breaks ties by
    ``ties`` (with ``tie_seed``; see :mod:`babytris.solvers.ties`).
    """
    rules = make_rules(rules, rule_fields)
    _check_counts(n_placements, n_games)
    for d in opponent_discounts:  # (checked up front, and named as the caller named them)
        if not (is_number(d) and 0.0 <= d <= 1.0):
            raise ValueError(f"opponent_discounts: each must be a number in [0, 1], got {d!r}")
    started = time.perf_counter()
    # Every player's and opponent's solution is kept to the end: its values and moves (float64 and
    # int16 per state) and its board values, on top of one solve's own arrays (refused before the search).
    n_solutions = 2 + len(rewards) + 3 * len(opponent_discounts)
    kept = n_solutions * (10 * rules.n_pieces + 8) + solver_bytes_per_board(rules, "vi", True)
    t = enumerate_boards(rules, n_jobs=n_jobs, solver_bytes_per_board=kept)
    tied: dict[str, Any] = dict(n_jobs=n_jobs, ties=ties, tie_seed=tie_seed)
    players: dict[str, Player] = {
        "optimal": solve_transitions(t, discount=discount, **tied),
        "random": "random",
        "max-min": solve_transitions(t, discount=discount, opponent="minimax", **tied),
    }
    for r in rewards:
        name = f"max-min {r.lines:g}/{r.height:g}/{r.score:g}/{r.gaps:g}"
        players[name] = solve_transitions(t, discount=discount, opponent="minimax", reward=r, **tied)
    opponents: dict[str, Opponent] = {"random": "random"}
    for d in opponent_discounts:
        for model in ("minimax", "minavg", "gaps"):
            opponents[f"{model} {d:g}"] = solve_transitions(t, discount=d, opponent=model, **tied)
    table = tournament(t, players, opponents, n_placements=n_placements, n_games=n_games, seed=seed, n_jobs=n_jobs)
    return Tournament(
        table.players,
        table.opponents,
        table.expected,
        table.playout_mean,
        table.playout_stderr,
        n_placements,
        n_games,
        time.perf_counter() - started,
        table.worst_case,
        table.ties,
        table.rules,
    )


def student_t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile (``0.5 <= p < 1``) of Student's t with ``df`` degrees of
    freedom: exact for 1 and 2, else the normal quantile corrected by the
    Cornish-Fisher series in ``1/df`` (Abramowitz & Stegun 26.7.5, four terms:
    within 0.2% of the exact value from ``df = 10`` up to ``p = 0.99999``;
    below, short of it by up to 20% at 3, so that a check of so few games
    errs towards a disagreement).  Returns a float."""
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    x = NormalDist().inv_cdf(p)
    terms = (
        (x**3 + x) / 4,
        (5 * x**5 + 16 * x**3 + 3 * x) / 96,
        (3 * x**7 + 19 * x**5 + 17 * x**3 - 15 * x) / 384,
        (79 * x**9 + 776 * x**7 + 1482 * x**5 - 1920 * x**3 - 945 * x) / 92160,
    )
    return x + sum(term / df ** (k + 1) for k, term in enumerate(terms))


def _ties_of(player: Player) -> str:
    """The tie rule a player's moves were chosen by, in words ("" where it has none of its own)."""
    if not isinstance(player, Solution) or player.player != "optimal":
        return ""
    return f"random seed {player.tie_seed}" if player.ties == "random" else player.ties


def _check_counts(n_placements: object, n_games: object) -> None:
    check_int("n_placements", n_placements, 1, MAX_PLACEMENTS, high_text="10**9")
    check_int("n_games", n_games, 0, MAX_GAMES, high_text="10**7")
