"""Dataclass fields computed on first read: one mechanism for
``Transitions.placement`` (a big table's placement numbers, dropped again by
the engine) and ``Solution.policy`` (a big table's chosen moves, numbered)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["as_held", "lazy_field"]


def as_held(obj: Any, name: str) -> Any:
    """Field ``name`` of ``obj`` as held, without computing it."""
    return obj.__dict__["_" + name]


def lazy_field(cls: type, name: str, pending: Callable[[Any], bool], compute: Callable[[Any, Any], Any]) -> None:
    """Make the dataclass field ``name`` of ``cls`` a property whose held
    value ``v``, while ``pending(v)``, is replaced on first read by
    ``compute(obj, v)``; the doc is ``compute``'s.  The class's
    ``__init__`` sets the field through ``object.__setattr__``, which the
    property's setter serves, so constructors, readers and mypy see one
    field.  One computation at a time for each field (a lock): readers at
    once share one result."""
    key = "_" + name
    lock = threading.Lock()

    def get(obj: Any) -> Any:
        value = obj.__dict__[key]
        if pending(value):
            with lock:
                value = obj.__dict__[key]
                if pending(value):
                    value = compute(obj, value)
                    obj.__dict__[key] = value
        return value

    def put(obj: Any, value: Any) -> None:
        obj.__dict__[key] = value

    get.__doc__ = compute.__doc__  # (the property's, and its getter's, for help() and the docs' checks)
    setattr(cls, name, property(get, put))
