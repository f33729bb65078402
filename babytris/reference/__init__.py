"""The pure-Python twin of every solver, the test oracle: readable and slow.

Imports babytris.game only (an oracle shares no code with its subject).
"""

from .game import *  # noqa: F403
from .solvers import *  # noqa: F403
from .termination import *  # noqa: F403
