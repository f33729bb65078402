"""The Chromium that drives the board's page headless (the browser tests in
tests/, the page's timing in bench/): one rule for finding it, one message
where it is missing."""

from __future__ import annotations

import os
import shutil

__all__ = ["MISSING", "find_chromium"]

#: Why the browser checks are skipped where :func:`find_chromium` finds none.
MISSING = "no Chromium found (apt-get install chromium, or BABYTRIS_CHROMIUM=/path/to/chrome)"


def find_chromium() -> str | None:
    """The path of the Chromium to launch: ``$BABYTRIS_CHROMIUM`` where set,
    else ``chromium`` or ``chromium-browser`` on the PATH (Debian's and
    Ubuntu's names); None where there is none."""
    return os.environ.get("BABYTRIS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
