"""Argument checks shared by the fast solvers and their reference twins."""

from __future__ import annotations

import math

import numpy as np
from typing import Any

from .rules import Rules

__all__ = ["make_rules", "check_solver_args", "solver_method", "check_int", "check_number", "METHODS", "OPPONENTS"]

#: "vi": value iteration; "mpi": modified policy iteration (a greedy sweep,
#: then sweeps evaluating its policy).  Both Gauss-Seidel, in place.
METHODS = ("vi", "mpi")

#: Who picks the next piece: "random" (drawn with the rules' probabilities),
#: "minimax" (an opponent picking the piece worst for an optimal player),
#: "minavg" (an opponent picking the piece worst for a player placing at random)
#: or "gaps" (an opponent maximising the holes such a player creates).
OPPONENTS = ("random", "minimax", "minavg", "gaps")


def check_int(name: str, value: object, low: int, high: int) -> None:
    """Raise ValueError naming ``name`` unless ``value`` is an int in [low, high] (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")


def check_number(name: str, value: object, low: float, high: float, *, open_high: bool = False) -> None:
    """Raise ValueError naming ``name`` unless ``value`` is a real number in
    [low, high] (or [low, high) with ``open_high``); NaN and bools refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            low <= value < high if open_high else low <= value <= high):
        raise ValueError(f"{name} must be a number in [{low}, {high}{')' if open_high else ']'}, got {value!r}")


def make_rules(rules: Rules | None, rule_fields: dict[str, Any]) -> Rules:
    """``rules`` as given, or built from keyword fields (``width=4, height=5``)."""
    if rules is None:
        return Rules(**rule_fields)
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be a babytris.Rules, got {type(rules).__name__}")
    if rule_fields:
        raise TypeError(f"pass either rules or rule fields, not both (got {', '.join(rule_fields)})")
    return rules


def check_solver_args(
    discount: object, tol: object, max_iter: object, method: object, eval_sweeps: object, accelerate: object = True,
    *, undiscounted: bool = False,
) -> None:
    """Raise ``ValueError`` naming the first argument outside its range.
    ``undiscounted``: discount 1 is allowed (the combo objective, whose games end)."""
    top = 1.0 if undiscounted else float(np.nextafter(1.0, 0.0))
    if not isinstance(discount, (int, float)) or isinstance(discount, bool) or not 0.0 <= discount <= top:
        interval = "[0, 1] (1: the expected combo length)" if undiscounted else "[0, 1)"
        raise ValueError(f"discount must be a number in {interval}, got {discount!r}")
    if not isinstance(tol, (int, float)) or isinstance(tol, bool) or not (tol > 0 and math.isfinite(tol)):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or not 1 <= max_iter <= 10**7:
        raise ValueError(f"max_iter must be an integer in [1, 10**7], got {max_iter!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    if isinstance(eval_sweeps, bool) or not isinstance(eval_sweeps, int) or not 0 <= eval_sweeps <= 10**4:
        raise ValueError(f"eval_sweeps must be an integer in [0, 10**4], got {eval_sweeps!r}")
    if not isinstance(accelerate, bool):
        raise ValueError(f"accelerate must be True or False, got {accelerate!r}")


def solver_method(roles: Any, method: object) -> str:
    """The method to use for resolved :class:`~babytris.roles.Roles`:
    ``method``, or by default "mpi" where one side optimises against a fixed
    or random other, else "vi"; raises ``ValueError`` for a method they cannot use."""
    if method is None:
        method = "mpi" if roles.single_agent else "vi"
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    if method == "mpi" and not roles.single_agent:
        # Policy-iteration variants can cycle in two-player games, and a random
        # player has no policy to evaluate; value iteration is safe.
        raise ValueError(
            f"method 'mpi' needs one side fixed or random and the other optimising; use method='vi' "
            f"with opponent={roles.opponent!r}, player={roles.player!r}"
        )
    return method  # type: ignore[return-value]
