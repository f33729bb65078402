"""Argument checks: the one place that decides what an integer, a number or a
flag is, so every entry point accepts the same values (numpy scalars included)
and refuses the rest with the same kind of message.

Each ``check_*`` returns the value as a plain Python ``int``, ``float`` or
``bool`` (so a ``np.int64`` width never leaks into a dataclass or a C call) or
raises ``ValueError`` (or the subclass given as ``error``) naming the argument
and the allowed range.  This module imports nothing from the rest of babytris,
so every layer, the rules included, can use it (building Rules from an
entry point's fields is :func:`babytris.game.rules.make_rules`).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, TypeGuard

import numpy as np

__all__ = [
    "METHODS",
    "ArgumentTypeError",
    "check_type",
    "check_bool",
    "check_int",
    "check_number",
    "check_solver_args",
    "default_eval_sweeps",
    "default_strategy_sweeps",
    "is_int",
    "is_number",
    "solver_method",
]

#: "vi": value iteration, Gauss-Seidel (in place: a sweep reads the values it
#: has already updated); "mpi": modified policy iteration (a greedy sweep,
#: then sweeps evaluating its policy), Gauss-Seidel too; "jacobi": value
#: iteration, synchronous (each sweep reads only the values of the sweep before).
METHODS = ("vi", "mpi", "jacobi", "strategy")


class ArgumentTypeError(ValueError, TypeError):
    """An argument of the wrong type.  A ``ValueError`` like every other bad
    argument to babytris (one ``except`` catches them all), and a ``TypeError``
    as Python's own functions raise."""


def check_type(name: str, value: object, types: type | tuple[type, ...], expected: str) -> None:
    """Raise :class:`ArgumentTypeError` unless ``value`` is an instance of ``types``;
    ``expected`` says in words what is wanted (e.g. ``"a babytris.Rules"``)."""
    if not isinstance(value, types):
        raise ArgumentTypeError(f"{name} must be {expected}, got {type(value).__name__}")


def is_int(value: object) -> TypeGuard[int]:
    """Whether ``value`` is an integer: ``int`` or a numpy integer, not a bool.
    (Typed as ``int``: numpy integers compare and convert as ints do.)"""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def is_number(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a real number: an integer as :func:`is_int`, or a
    Python or numpy float (NaN included; bools are not numbers here)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_int(
    name: str,
    value: object,
    low: int,
    high: int | None = None,
    *,
    high_text: str | None = None,
    error: type[ValueError] = ValueError,
) -> int:
    """``value`` as an ``int`` if it is an integer in [low, high] (high None:
    no upper bound); else raise ``error`` naming ``name`` and the range.
    ``high_text`` spells the upper bound in the message (``"2**63"``)."""
    if is_int(value) and low <= value and (high is None or value <= high):
        return int(value)
    if high is None:
        raise error(f"{name} must be an integer >= {low}, got {value!r}")
    raise error(f"{name} must be an integer in [{low}, {high_text or high}], got {value!r}")


def check_number(
    name: str,
    value: object,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    open_low: bool = False,
    open_high: bool = False,
    error: type[ValueError] = ValueError,
) -> float:
    """``value`` as a finite ``float`` in the interval from ``low`` to ``high``
    (closed unless ``open_low`` / ``open_high``); else raise ``error`` naming
    ``name`` and the interval.  NaN, infinities and bools are refused."""
    if is_number(value):
        x = float(value)
        if math.isfinite(x) and (low < x if open_low else low <= x) and (x < high if open_high else x <= high):
            return x
    raise error(f"{name} must be {_interval(low, high, open_low, open_high)}, got {value!r}")


def _interval(low: float, high: float, open_low: bool, open_high: bool) -> str:
    if math.isinf(low) and math.isinf(high):
        return "a finite number"
    if math.isinf(high):
        return f"a finite number {'>' if open_low else '>='} {low:g}"
    if math.isinf(low):
        return f"a finite number {'<' if open_high else '<='} {high:g}"
    return f"a number in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"


def check_bool(name: str, value: object, *, error: type[ValueError] = ValueError) -> bool:
    """``value`` as a ``bool`` if it is ``True``/``False`` or a numpy bool; else raise."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise error(f"{name} must be True or False, got {value!r}")


def check_solver_args(
    discount: object,
    tol: object,
    max_iter: object,
    method: object,
    eval_sweeps: object,
    accelerate: object = True,
    *,
    undiscounted: bool = False,
) -> tuple[float, float, int, int, bool]:
    """The solver's arguments as ``(discount, tol, max_iter, eval_sweeps,
    accelerate)`` in plain Python types (``eval_sweeps`` None: the default
    for the discount, :func:`default_eval_sweeps`); raises ``ValueError``
    naming the first one outside its range.  ``undiscounted``: discount 1 is allowed (the
    total reward until game over; the solve then checks that every game ends)."""
    if not (is_number(discount) and 0.0 <= discount <= 1.0 and (undiscounted or discount < 1.0)):
        interval = "[0, 1] (1: the total reward until game over, where every game ends)" if undiscounted else "[0, 1)"
        raise ValueError(f"discount must be a number in {interval}, got {discount!r}")
    if not (is_number(tol) and tol > 0 and math.isfinite(tol)):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    max_iter = check_int("max_iter", max_iter, 1, 10**7, high_text="10**7")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    if eval_sweeps is None:
        eval_sweeps = (default_strategy_sweeps if method == "strategy" else default_eval_sweeps)(float(discount))
    eval_sweeps = check_int("eval_sweeps", eval_sweeps, 0, 10**4, high_text="10**4")
    accelerate = check_bool("accelerate", accelerate)
    return float(discount), float(tol), max_iter, eval_sweeps, accelerate


def default_strategy_sweeps(discount: float) -> int:
    """Evaluation sweeps after the opponent's exact evaluation in each round
    of strategy iteration (:func:`babytris.solvers.sweeping.strategy_iteration`), by
    default: 2 up to discount 0.9, 4 above.  Measured on 4x5 minimax solves
    (medians of 3, default threads): at 0.9, 1, 2 and 4 sweeps took 36, 34
    and 41 ms (4x4: 4.5, 3.0, 3.9 ms; 4x6: 0.60 s with 1, 0.67 s with 2); at
    0.95, 78, 48 and 50 ms; at 0.99, 109, 107 and 79 ms (72 ms with 6)."""
    return 2 if discount <= 0.9 else 4


def default_eval_sweeps(discount: float) -> int:
    """Evaluation sweeps per greedy sweep of modified policy iteration, by
    default: ``0.25 / (1 - discount)``, rounded, kept in [4, 40]; 4 when
    undiscounted (the combo objective, whose games end soon: their horizon
    is not the discount's).  An evaluation sweep costs a third to a half of
    a greedy one, and the longer the horizon, the more of them a policy is
    worth before the next improvement.  Measured on one thread (4x4-4x6,
    random pieces and minimax; 6 was the default before): at discount 0.9, 4
    took 0.78-0.93 of 6's time; at 0.95, 4-6 were within 8% of each other
    and 8 up to 12% slower; at 0.99, 10-40 took 0.48 of 6's time on 4x5 with
    random pieces (24 greedy sweeps against 50) and 0.95 with minimax; at
    0.999, 4x4 converged in 207 greedy sweeps with 40 against 799 with 6.
    Undiscounted combos (4x5, tetrominoes, hold, preview 3): 4 took 0.84 of
    6's time, 40 took 2.3 times it."""
    if discount >= 1.0:
        return 4
    return min(40, max(4, round(0.25 / (1.0 - discount))))


def solver_method(roles: Any, method: object, discount: object = 0.9) -> str:
    """The method to use for resolved :class:`~babytris.solvers.roles.Roles`:
    ``method``, or by default "strategy" for a best-move player against an
    opponent giving the least valuable piece at a discount below 1 (see
    :attr:`~babytris.solvers.roles.Roles.strategy_iteration`), "mpi" where policy
    iteration applies (:attr:`~babytris.solvers.roles.Roles.policy_iteration`), else
    "vi"; raises ``ValueError`` for a method they cannot use."""
    discounted = is_number(discount) and float(discount) < 1.0
    if method is None:
        method = "strategy" if roles.strategy_iteration and discounted else "mpi" if roles.policy_iteration else "vi"
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    if method == "strategy" and not (roles.strategy_iteration and discounted):
        raise ValueError(
            "method 'strategy' needs an optimising player against opponent='minimax' (or another opponent giving "
            f"the least valuable piece) and a discount below 1; got opponent={roles.opponent!r}, "
            f"player={roles.player!r}, discount={discount!r}: use method='mpi' or 'vi'"
        )
    if method == "mpi" and not roles.policy_iteration:
        # A random player has no policy to evaluate, and evaluating a policy
        # of each side at once may cycle; value iteration is safe.
        raise ValueError(
            f"method 'mpi' needs an optimising player against drawn, given or least-valuable pieces, or a given "
            f"player against drawn or given pieces; use method='vi' with opponent={roles.opponent!r}, "
            f"player={roles.player!r}"
        )
    return str(method)
