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
``fails``
    babytris measures the opposite of a qualitative claim;
``not reproduced``
    babytris cannot compute the number in the source's setup; ``why`` says
    what is missing;
``calibrated``
    a parameter the source does not give was chosen to match this very
    number, so agreeing is no evidence.

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
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from .registry import (
    AGREES,
    CALIBRATED,
    CLAIMS,
    DIFFERS,
    FAILS,
    NOT_REPRODUCED,
    PROGRAMS,
    SOURCES,
    WITHIN_NOISE,
    Reproduction,
)

__all__ = [
    "claim_names",
    "markdown_table",
    "merge_record",
    "reproduce",
    "summary",
    "summary_lines",
    "write_table",
]


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


#: The verdicts in the order a summary counts them.
VERDICTS = (AGREES, WITHIN_NOISE, DIFFERS, FAILS, NOT_REPRODUCED, CALIBRATED)


def summary(results: Sequence[Reproduction]) -> dict[str, dict[str, int]]:
    """The rows' verdicts counted apart for the source documents' claims
    (``"documents"``) and for the cross-checks against programs run here
    (``"programs"``, sources in :data:`~babytris.claims.registry.PROGRAMS`):
    ``{kind: {verdict: rows}}``, every verdict of :data:`VERDICTS` present."""
    counts = {kind: dict.fromkeys(VERDICTS, 0) for kind in ("documents", "programs")}
    for r in results:
        counts["programs" if r.source in PROGRAMS else "documents"][r.verdict] += 1
    return counts


def summary_lines(results: Sequence[Reproduction]) -> list[str]:
    """:func:`summary` as two lines of text, the documents' claims first."""
    named = {"documents": "claims of the source documents", "programs": "cross-checks against programs run here"}
    lines = []
    for kind, counts in summary(results).items():
        total = sum(counts.values())
        shown = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
        lines.append(f"{total} {named[kind]}: {shown}")
    return lines


#: The markers in docs/results.md between which :func:`write_table` writes.
BEGIN = "<!-- reproduce: begin (written by `babytris reproduce --write`) -->"
END = "<!-- reproduce: end -->"


def merge_record(results: Sequence[Reproduction], record: str | Path) -> list[Reproduction]:
    """Merge ``results`` into the JSON ``record`` of earlier runs (a row per
    claim, the newest kept; rows of claims no longer known dropped), write it
    back atomically, and return every row it holds, in table order."""
    from ..engine.writing import replace_atomically
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
    from ..engine.writing import replace_atomically

    path = Path(path)
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise ValueError(f"--write: {path} has no reproduce markers ({BEGIN} ... {END})")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    total = sum(r.seconds for r in results)
    took = (
        "\n"
        + ".\n".join(summary_lines(results))
        + f".\nMeasuring these {len(results)} rows took {total:,.0f} s in all on this machine (2 cores).\n"
    )
    new = head + BEGIN + "\n\n" + markdown_table(results) + took + "\n" + END + tail
    replace_atomically(path, lambda f: f.write(new.encode()))
