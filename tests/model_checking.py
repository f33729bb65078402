"""Storm's answer to an exported model, shared by the export tests (needs stormpy)."""

from __future__ import annotations

import math


def storm_start_value(stormpy, model) -> float:
    """``Rmax=? [ F "done" ]`` at the model's initial state, by Storm's sound value iteration to 1e-10."""
    env = stormpy.Environment()
    settings = env.solver().min_max()
    settings.method = type(settings.method).SOUND_VALUE_ITERATION  # a guaranteed precision
    settings.precision = type(settings.precision)("1/10000000000")
    prop = stormpy.parse_properties('Rmax=? [ F "done" ]')[0]
    result = stormpy.model_checking(model, prop, environment=env, only_initial_states=True)
    (init,) = model.initial_states
    value = result.get_value(init)
    assert math.isfinite(value)
    return value
