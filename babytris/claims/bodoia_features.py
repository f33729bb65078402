"""Bodoia & Puranik's qualitative claims about features and sampling, for :mod:`babytris.reproduce`.

In the paper's setup (10x20, the seven tetrominoes drawn uniformly, Table 1's
fit: 1,000 random-play states, discount 0.9, weights from zero until none
moves by 0.01; babytris's reward, one point a line and a loss of 50, which
the paper does not give; agents place where the fitted value of the board
after the placement is largest, ties at random):

- **preliminary features**: "Only the features Max-Height, Num-Holes, and
  Num-Covers led to better than random performance" (Avg-Diff and Max-Diff
  not), and the per-column feature sets i-Col-Height and i-Col-Diff "performed
  no better than random play";
- **sampling**: random play "clears lines rarely but loses often, and thus
  the set of sampled states contains many more examples of terminal states
  than of line clearances";
- **ranking**: "Max-Height seems to be the most informative feature since it
  gives the best single-feature performance and the two feature pairs that
  use it perform better than the third", measured with the paper's own
  vectors and with babytris's fit.

A qualitative claim babytris measures the opposite of **fails**.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .registry import AGREES, DIFFERS, FAILS, NOISE_SIGMAS, NOT_REPRODUCED, WITHIN_NOISE, Measurement, claim
from .table_1_fit import TABLE_1_FIT

__all__ = ["PRELIMINARY"]

#: The preliminary feature sets babytris can fit: row -> (the paper's name, babytris's features).
#: Avg-Diff is the mean absolute difference of neighbouring heights: babytris's ``bumpiness`` is
#: their sum, the same ranking of boards (and so the same greedy player) once fitted with its own weight.
PRELIMINARY = {
    "avg-diff": ("Avg-Diff", ("bumpiness",)),
    "i-col-height": ("i-Col-Height", ("heights",)),
    "i-col-diff": ("i-Col-Diff", ("differences",)),
}
AGENTS, GAMES_PER_AGENT, RANDOM_GAMES = 5, 100, 20_000


def _tetris():
    from ..big.tetris import Tetris

    return Tetris(width=10, height=20, line_scores=(0, 1, 2, 3, 4))


_random: dict[str, Any] = {}


def _random_play() -> Any:
    """Random placements' games on 10x20, played once a process."""
    if "games" not in _random:
        from ..big.playouts import play_greedy

        _random["games"] = play_greedy(_tetris(), None, n_games=RANDOM_GAMES, seed=13)
    return _random["games"]


def _fitted_lifespans(features: tuple[str, ...]) -> np.ndarray:
    """Table 1's procedure for ``features``: 5 agents fitted and each played
    100 games (ties at random): lifespans ``(5, 100)``."""
    from ..big.fitted import fitted_value_iteration
    from ..big.playouts import play_greedy

    tetris = _tetris()
    spans = []
    for agent in range(AGENTS):
        fit = fitted_value_iteration(tetris, features, **TABLE_1_FIT, seed=agent)
        games = play_greedy(
            tetris, list(fit.value.weights), features, n_games=GAMES_PER_AGENT, seed=100 + agent, ties="random"
        )
        spans.append(games.placements)
    return np.array(spans, dtype=np.float64)


def _preliminary(name: str, features: tuple[str, ...]):
    def measure(fast: bool) -> Measurement:
        spans = _fitted_lifespans(features)
        base = _random_play().placements
        se = math.hypot(spans.mean(axis=1).std(ddof=1) / math.sqrt(AGENTS), base.std(ddof=1) / math.sqrt(len(base)))
        off = (spans.mean() - base.mean()) / se
        verdict = FAILS if off > 3 else WITHIN_NOISE if abs(off) <= 3 else AGREES
        return Measurement(
            round(float(spans.mean()), 1),
            verdict,
            f"Table 1's fit with {name} ({', '.join(features)}) and a constant, 5 agents x 100 games, ties at "
            f"random: {spans.mean():.1f} placements against random placements' {base.mean():.1f} "
            f"({len(base):,} games), {off:+.1f} standard errors"
            + ("; better than random play, the opposite of the claim" if off > 3 else ""),
        )

    return measure


for _row, (_name, _features) in PRELIMINARY.items():
    claim(
        f"bodoia-preliminary-{_row}",
        "bodoia",
        f"lifespan of the fitted {_name} agent (the feature and a constant) against random play's, 10x20",
        "no better than random play",
        f"fitted_value_iteration(Tetris(width=10, height=20, line_scores=(0, 1, 2, 3, 4)), {_features}, "
        "n_samples=1000, discount=0.9, loss=50, tol=0.01, seed=agent) for 5 agents; play_greedy(..., "
        "n_games=100, ties='random')  # babytris.big.fitted",
        fast=False,
    )(_preliminary(_name, _features))


@claim(
    "bodoia-preliminary-max-diff",
    "bodoia",
    "lifespan of the fitted Max-Diff agent (the feature and a constant) against random play's, 10x20",
    "no better than random play",
    "none: babytris's big-board engine has no maximum height difference feature",
)
def _max_diff(fast: bool) -> Measurement:
    return Measurement(
        "—",
        NOT_REPRODUCED,
        "babytris's big-board features (babytris.big.tetris.FEATURES) have the differences of neighbouring "
        "heights and their sum, not their maximum",
    )


@claim(
    "bodoia-random-samples-terminal-vs-lines",
    "bodoia",
    "terminal states against line clearances met in random play (the fit's samples), 10x20",
    "many more terminal states than line clearances",
    "g = play_greedy(Tetris(width=10, height=20), None, n_games=20_000); g.n_games / g.lines.sum()"
    "  # babytris.big.playouts",
)
def _terminal_vs_lines(fast: bool) -> Measurement:
    games = _random_play()
    lost, lines = int(games.games_over), int(games.lines.sum())
    ratio = lost / lines
    return Measurement(
        f"{ratio:.1f} to 1",
        AGREES if ratio > 3 else DIFFERS,
        f"{games.n_games:,} games of random placements: {lost:,} end lost, {lines:,} rows cleared in all "
        f"({games.total_placements:,} placements), so at most {lines:,} placements clear a line: terminal "
        f"states outnumber line clearances at least {ratio:.1f} to 1",
    )


# --------------------------------------------------------------------------------------------
# the ranking: Max-Height the best single feature, the pairs with it better than the third
# --------------------------------------------------------------------------------------------

SINGLES = ("max-height", "num-holes", "num-covers")
PAIRS = ("mh-nh", "mh-nc", "nh-nc")


#: The paper's names of the single features, for the measured column.
PAPER_NAMES = {"max-height": "Max-Height", "num-holes": "Num-Holes", "num-covers": "Num-Covers"}


def _ranking_measured(means: dict[str, float]) -> str:
    """Both parts of the claim as measured, in the published column's words (one part may hold, the other not)."""
    best_single = max(SINGLES, key=lambda n: means[n])
    pairs = [means["mh-nh"] > means["nh-nc"], means["mh-nc"] > means["nh-nc"]]
    order = "better than" if all(pairs) else "worse than" if not any(pairs) else "not both better than"
    return f"{PAPER_NAMES[best_single]} best; MH-NH and MH-NC {order} NH-NC"


def _ranking_verdict(means: dict[str, float], errors: dict[str, float]) -> tuple[str, str]:
    """The claim's two parts read from lifespans: ``(verdict, what was found)``.

    A lifespan beats another only by more than NOISE_SIGMAS of their combined
    standard errors; the claim agrees when both parts hold so, fails when the
    pairs with max height both lose so (the opposite of its reason), is within
    noise when no part is contradicted beyond the noise, and differs otherwise."""

    def beats(a: str, b: str) -> bool:
        return means[a] - means[b] > NOISE_SIGMAS * math.hypot(errors[a], errors[b])

    best_single = max(SINGLES, key=lambda n: means[n])
    shown = ", ".join(f"{n} {means[n]:.1f} ± {errors[n]:.1f}" for n in (*SINGLES, *PAIRS))
    others = [n for n in SINGLES if n != "max-height"]
    first = all(beats("max-height", n) for n in others)
    first_beaten = any(beats(n, "max-height") for n in others)
    second = beats("mh-nh", "nh-nc") and beats("mh-nc", "nh-nc")
    second_beaten = any(beats("nh-nc", pair) for pair in ("mh-nh", "mh-nc"))
    opposite = beats("nh-nc", "mh-nh") and beats("nh-nc", "mh-nc")
    if first and second:
        verdict = AGREES
    elif opposite:
        verdict = FAILS
    elif not (first_beaten or second_beaten):
        verdict = WITHIN_NOISE
    else:
        verdict = DIFFERS
    found = (
        f"{shown}: the best single feature is {best_single}"
        + ("" if first or first_beaten else " (not beyond the noise)")
        + "; the pairs with max height "
        + ("both beat" if second else "both lose to" if opposite else "do not both beat")
        + f" holes and covers (comparisons beyond {NOISE_SIGMAS:g} standard errors)"
    )
    return verdict, found


@claim(
    "bodoia-ranking-published-weights",
    "bodoia",
    "Max-Height the best single feature and its pairs better than NH-NC, Table 1's own vectors played, 10x20",
    "Max-Height best; MH-NH and MH-NC better than NH-NC",
    "play_greedy(Tetris(width=10, height=20), weights, features, n_games=20_000, ties='random') per Table 1 row",
)
def _ranking_published(fast: bool) -> Measurement:
    from ..big.playouts import play_greedy
    from ..big.tetris import Tetris
    from .table_1_fit import TABLE_1

    means, errors = {}, {}
    for name in (*SINGLES, *PAIRS):
        features, _, weights = TABLE_1[name]
        games = play_greedy(
            Tetris(width=10, height=20),
            list(weights),
            features,
            n_games=2000 if fast else 20_000,
            seed=13,
            ties="random",
        )
        means[name] = games.mean_placements
        errors[name] = float(np.std(games.placements, ddof=1) / math.sqrt(games.n_games))
    verdict, found = _ranking_verdict(means, errors)
    return Measurement(
        _ranking_measured(means),
        verdict,
        f"the paper's mean vectors played with ties at random, mean lifespans ± standard errors: {found}",
    )


@claim(
    "bodoia-ranking-fitted",
    "bodoia",
    "Max-Height the best single feature and its pairs better than NH-NC, babytris's fit (Table 1's rows), 10x20",
    "Max-Height best; MH-NH and MH-NC better than NH-NC",
    "the agents of the bodoia-table1-*-fitted rows (babytris.claims.table_1_fit._agents)",
    fast=False,
)
def _ranking_fitted(fast: bool) -> Measurement:
    from .table_1_fit import TABLE_1, _agents

    means, errors = {}, {}
    for name in (*SINGLES, *PAIRS):
        _, spans = _agents(TABLE_1[name][0])
        means[name] = float(spans.mean())
        errors[name] = float(spans.mean(axis=1).std(ddof=1) / math.sqrt(AGENTS))
    verdict, found = _ranking_verdict(means, errors)
    return Measurement(
        _ranking_measured(means),
        verdict,
        f"babytris's fitted agents (5 x 100 games each, one point a line, loss 50): {found}"
        + ("; babytris's fit gives max height a positive weight beside holes or covers" if verdict == FAILS else ""),
    )
