"""Helpers for tests that start child processes."""

import signal
import subprocess


def as_at_a_terminal() -> None:
    """``preexec_fn`` giving the child Ctrl-C's default action, as at a
    terminal: a shell without job control starts background commands with
    SIGINT ignored, and Python then installs no KeyboardInterrupt handler, so
    an interrupt test run under ``... &`` would see the work run on."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(argv: list[str], cwd) -> subprocess.Popen:
    """``argv`` started in ``cwd`` (not the source tree: the child imports the
    installed package) with its stdout and stderr piped as text, and Ctrl-C's
    default action (:func:`as_at_a_terminal`)."""
    return subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_at_a_terminal
    )
