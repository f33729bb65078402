"""Helpers for tests that start child processes."""

import signal


def as_at_a_terminal() -> None:
    """``preexec_fn`` giving the child Ctrl-C's default action, as at a
    terminal: a shell without job control starts background commands with
    SIGINT ignored, and Python then installs no KeyboardInterrupt handler, so
    an interrupt test run under ``... &`` would see the work run on."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
