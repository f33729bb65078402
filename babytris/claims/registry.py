"""The claims' registry: the verdicts, the sources, and the decorator that
registers each claim (:func:`claim`) with what it measures.  The claims'
modules (published, report, traces) register into it; reproduce.py runs them."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "AGREES",
    "CALIBRATED",
    "CLAIMS",
    "DIFFERS",
    "FAILS",
    "NOISE_SIGMAS",
    "NOT_REPRODUCED",
    "PROGRAMS",
    "SOURCES",
    "WITHIN_NOISE",
    "Claim",
    "Measurement",
    "Reproduction",
    "claim",
]

AGREES = "agrees"
WITHIN_NOISE = "within noise"
DIFFERS = "differs"
NOT_REPRODUCED = "not reproduced"
#: babytris measures the opposite of a qualitative claim.
FAILS = "fails"
#: babytris's setup was chosen to match this very figure (a parameter the source does not give): not evidence.
CALIBRATED = "calibrated"

#: Short name of each source document -> its citation.
SOURCES = {
    "slides": "Ergin & Grousson, *Baby Tetris* (course project slides, 2026)",
    "report": "Ergin & Grousson, *Baby Tetris First Part Report* (2025)",
    "c4w": "ImpleLee, *c4w* Method.md (4-wide combo MDP)",
    "bodoia": "Bodoia & Puranik, *Applying Reinforcement Learning to Competitive Tetris* (Stanford)",
    "pirnay": "Pirnay & Arabagi, *Temporal Difference Learning in the Tetris Game* (2009)",
    "mdptetris": "Thiery & Scherrer, *mdptetris* (brunoscherrer/mdptetris, src/value_iteration.c; it publishes "
    "no value: its program built and run here)",
}

#: Sources whose figures are a program's run here, not a document's: their rows cross-check babytris
#: against that program and are counted apart from the documents' claims.
PROGRAMS = frozenset({"mdptetris"})

#: Standard deviations of the source's noise a published figure may lie from babytris's.
NOISE_SIGMAS = 3.0


@dataclass(frozen=True)
class Measurement:
    """What babytris measures for a claim.

    Attributes:
        value: the number (or text) comparable with the published one.
        verdict: :data:`AGREES`, :data:`WITHIN_NOISE`, :data:`DIFFERS`,
            :data:`NOT_REPRODUCED`, :data:`FAILS` or :data:`CALIBRATED`.
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
