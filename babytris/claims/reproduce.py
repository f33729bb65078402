"""Every published number babytris can compute, recomputed in its source's own setup.

Each :class:`Claim` is one number a source publishes (a state count, a score,
a lifespan, a parameter), with the source's setup written into the code that
recomputes it.  :func:`reproduce` runs claims and returns one
:class:`Reproduction` each: what was published, what babytris measures, and a
verdict:

``agrees``
    equal, or equal to the precision the source prints;
``within noise``
    the source's number comes from random play and babytris's exact (or
    many-game) figure lies within three standard deviations of the source's
    own sampling noise, computed in the source's setup;
``differs``
    not equal; ``why`` says what differs (a formula that counts states that
    never occur, another game, another procedure);
``not reproduced``
    babytris cannot compute the number in the source's setup; ``why`` says
    what is missing.

``babytris reproduce --list`` names the claims, ``babytris reproduce NAME...``
runs some, ``--fast`` the quick ones (CI runs these); ``--record JSON``
keeps the newest row of each claim across runs and ``--write FILE``
rewrites the table between the markers of a page with them:

    babytris reproduce --record docs/data/reproduce.json --write docs/results.md
  The sources
are the documents in the project's ``shared/papers`` folder (see
:data:`SOURCES`).
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "AGREES",
    "CLAIMS",
    "DIFFERS",
    "NOT_REPRODUCED",
    "SOURCES",
    "WITHIN_NOISE",
    "Claim",
    "Measurement",
    "Reproduction",
    "claim_names",
    "markdown_table",
    "merge_record",
    "reproduce",
    "write_table",
]

AGREES = "agrees"
WITHIN_NOISE = "within noise"
DIFFERS = "differs"
NOT_REPRODUCED = "not reproduced"

#: Short name of each source document -> its citation.
SOURCES = {
    "slides": "Ergin & Grousson, *Baby Tetris* (course project slides, 2026)",
    "report": "Ergin & Grousson, *Baby Tetris First Part Report* (2025)",
    "c4w": "ImpleLee, *c4w* Method.md (4-wide combo MDP)",
    "bodoia": "Bodoia & Puranik, *Applying Reinforcement Learning to Competitive Tetris* (Stanford)",
    "pirnay": "Pirnay & Arabagi, *Temporal Difference Learning in the Tetris Game* (2009)",
}

#: Standard deviations of the source's noise a published figure may lie from babytris's.
NOISE_SIGMAS = 3.0


@dataclass(frozen=True)
class Measurement:
    """What babytris measures for a claim.

    Attributes:
        value: the number (or text) comparable with the published one.
        verdict: :data:`AGREES`, :data:`WITHIN_NOISE` or :data:`DIFFERS`.
        why: one sentence: how it was measured, and what differs if it does.
    """

    value: float | int | str
    verdict: str
    why: str


@dataclass(frozen=True)
class Claim:
    """A number a source publishes, and how babytris recomputes it.

    Attributes:
        name: the claim's name on the command line.
        source: a key of :data:`SOURCES`.
        quantity: what the number is, in the source's setup.
        published: the number as the source prints it.
        command: Python that recomputes it from a fresh interpreter.
        fast: whether it takes under a few seconds (CI runs these).
        measure: ``measure(fast) -> Measurement``; ``fast`` asks for fewer games.
    """

    name: str
    source: str
    quantity: str
    published: float | int | str
    command: str
    fast: bool
    measure: Callable[[bool], Measurement] = field(repr=False)


@dataclass(frozen=True)
class Reproduction:
    """One claim recomputed: the claim's fields, then ``measured``, ``verdict``,
    ``why`` and ``seconds`` (wall time of the measurement)."""

    name: str
    source: str
    quantity: str
    published: float | int | str
    measured: float | int | str
    verdict: str
    why: str
    command: str
    seconds: float

    def to_dict(self) -> dict:
        """A JSON-ready dict of every field (numbers stay numbers)."""
        return {key: _plain(value) for key, value in vars(self).items()}

    @classmethod
    def from_dict(cls, data: dict) -> Reproduction:
        """The inverse of :meth:`to_dict` (a null measurement reads as NaN)."""
        fields = {name: data[name] for name in cls.__dataclass_fields__}
        if fields["measured"] is None:
            fields["measured"] = math.nan
        return cls(**fields)


def _plain(value: object) -> object:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


CLAIMS: list[Claim] = []


def claim(name: str, source: str, quantity: str, published: float | int | str, command: str, *, fast: bool = True):
    """Register the decorated ``measure(fast)`` as claim ``name``."""

    def register(measure: Callable[[bool], Measurement]) -> Callable[[bool], Measurement]:
        if any(c.name == name for c in CLAIMS):
            raise ValueError(f"claim {name!r} registered twice")
        CLAIMS.append(Claim(name, source, quantity, published, command, fast, measure))
        return measure

    return register


def claim_names() -> list[str]:
    """The names of every claim, in table order."""
    from . import published as _claims  # noqa: F401  (registers the claims)

    return [c.name for c in CLAIMS]


def reproduce(names: Iterable[str] | None = None, *, fast: bool = False, progress: bool = False) -> list[Reproduction]:
    """Recompute claims: ``names`` (None: all; with ``fast``, only the quick
    ones, each with fewer games).

    Returns:
        list of :class:`Reproduction`, in table order.

    Raises:
        ValueError: naming an unknown claim, with the known names.
    """
    from . import published as _claims  # noqa: F401  (registers the claims)

    if names is None:
        chosen = [c for c in CLAIMS if c.fast or not fast]
    else:
        if isinstance(names, str):
            raise ValueError(f"names: a list of claim names, not one string; got {names!r}")
        names = list(names)
        unknown = [n for n in names if n not in claim_names()]
        if unknown:
            raise ValueError(f"names: unknown claim {unknown[0]!r}; `babytris reproduce --list` names them all")
        chosen = [c for c in CLAIMS if c.name in names]
    out = []
    for c in chosen:
        started = time.perf_counter()
        m = c.measure(fast)
        seconds = time.perf_counter() - started
        if progress:
            print(f"{c.name}: {m.verdict} ({seconds:.1f} s)", file=sys.stderr, flush=True)
        row = Reproduction(c.name, c.source, c.quantity, c.published, m.value, m.verdict, m.why, c.command, seconds)
        out.append(row)
    return out


def _cell(value: float | int | str) -> str:
    """A table cell: numbers as given (grouped thousands), ``|`` escaped."""
    if isinstance(value, str):
        return value.replace("|", "\\|")
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    return "—" if not math.isfinite(value) else f"{value:,}"


def markdown_table(results: Sequence[Reproduction]) -> str:
    """The results as a markdown table: source, claim, quantity, published,
    babytris, verdict (and why), each row's command below the table."""
    lines = [
        "| source | claim | quantity | published | babytris | verdict |",
        "|---|---|---|---:|---:|---|",
    ]
    for r in results:
        source = SOURCES[r.source].split(",")[0]
        lines.append(
            f"| {source} | `{r.name}` | {_cell(r.quantity)} | {_cell(r.published)} | {_cell(r.measured)} "
            f"| **{r.verdict}**: {_cell(r.why)} |"
        )
    lines.append("")
    lines.append("Each row reruns with `babytris reproduce NAME`; in Python:")
    lines.append("")
    lines.append("```text")
    lines.extend(f"{r.name}: {r.command}" for r in results)
    lines.append("```")
    return "\n".join(lines) + "\n"


#: The markers in docs/results.md between which :func:`write_table` writes.
BEGIN = "<!-- reproduce: begin (written by `babytris reproduce --write`) -->"
END = "<!-- reproduce: end -->"


def merge_record(results: Sequence[Reproduction], record: str | Path) -> list[Reproduction]:
    """Merge ``results`` into the JSON ``record`` of earlier runs (a row per
    claim, the newest kept; rows of claims no longer known dropped), write it
    back atomically, and return every row it holds, in table order."""
    from ..files.persist import replace_atomically
    from . import published as _claims  # noqa: F401  (registers the claims)

    record = Path(record)
    rows = {}
    if record.exists():
        try:
            rows = {row["name"]: Reproduction.from_dict(row) for row in json.loads(record.read_text())}
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"--record: {record} is not a reproduce record ({err})") from err
    rows.update({r.name: r for r in results})
    merged = [rows[name] for name in claim_names() if name in rows]
    text = json.dumps([r.to_dict() for r in merged], indent=1, allow_nan=False) + "\n"
    replace_atomically(record, lambda f: f.write(text.encode()))
    return merged


def write_table(results: Sequence[Reproduction], path: str | Path) -> None:
    """Replace the text between :data:`BEGIN` and :data:`END` in ``path``
    with :func:`markdown_table` and the rows' total time (atomically: a
    temporary file, then a rename)."""
    from ..files.persist import replace_atomically

    path = Path(path)
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise ValueError(f"--write: {path} has no reproduce markers ({BEGIN} ... {END})")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    total = sum(r.seconds for r in results)
    took = f"\n{len(results)} claims; measuring them took {total:,.0f} s in all on this machine (2 cores).\n"
    new = head + BEGIN + "\n\n" + markdown_table(results) + took + "\n" + END + tail
    replace_atomically(path, lambda f: f.write(new.encode()))
