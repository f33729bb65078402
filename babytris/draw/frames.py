"""Game frames as RGB images: each one :func:`babytris.game.svg.frame_svg`'s
picture of a state (the board, the piece to place, the score and each
candidate move's value) rendered by resvg and read by Pillow (``pip install
'babytris[draw]'``), for the Gymnasium environment's ``rgb_array`` and for
film strips, GIFs and pages of a whole game (:func:`game_frames`).  The
numbers are set in DejaVu Sans, loaded from one file when one is found
(:func:`font_files`), so a frame is drawn the same on every run; nothing is
fetched.

>>> import babytris
>>> from babytris.draw.frames import frame
>>> image = frame(babytris.Rules(width=4, height=4), board=0b0111, piece=1, score=3, cell_pixels=8)
>>> image.shape, image.dtype
((32, 60, 3), dtype('uint8'))
"""

from __future__ import annotations

import base64
import html
import importlib.util
import io
import os
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

import numpy as np

from ..engine.writing import replace_atomically
from ..game.pieces import Placement
from ..game.rules import Rules
from ..game.svg import BACKGROUND_RGB, frame_svg
from ..game.validation import check_int

if TYPE_CHECKING:
    from ..engine.stepped import Game
    from ..results.solution import Solution
    from ..solvers.match import Match

__all__ = [
    "frame",
    "rasterise",
    "font_files",
    "ActionValues",
    "candidate_moves",
    "game_frames",
    "film_strip",
    "save_gif",
    "save_png",
    "save_html",
]

#: Where DejaVu Sans is looked for, in order: the system's copy (Debian and
#: Ubuntu, Fedora, older Fedora and CentOS, Arch, FreeBSD), then matplotlib's.
DEJAVU_SANS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/local/share/fonts/dejavu/DejaVuSans.ttf",
)


def frame(
    rules: Rules,
    board: int,
    piece: int | None,
    score: float,
    cell_pixels: int = 16,
    candidates: Sequence[tuple[int, float, bool]] | None = None,
) -> np.ndarray:
    """One frame: :func:`babytris.game.svg.frame_svg`'s picture rendered.
    The board (``cell_pixels`` per cell, grid lines), then a panel on its
    right with the piece to place (rotation 0; none when the game is over:
    ``piece=None``) and the score under it.  With ``candidates``, ``(board
    after, value, chosen)`` for each move of the piece, rows of small boards
    under them: each move's board after and its value, the chosen one framed
    in the piece's colour.

    Returns:
        uint8 array ``(rows, columns, 3)``: ``rows`` at least ``height *
        cell_pixels``; the board fills the top-left ``height * cell_pixels``
        by ``width * cell_pixels``.

    Raises:
        ImportError: without resvg-py or Pillow (the ``draw`` extra).
    """
    return rasterise(frame_svg(rules, board, piece, score, cell=cell_pixels, candidates=candidates))


def rasterise(svg: str) -> np.ndarray:
    """An SVG picture (of :mod:`babytris.game.svg`) rendered by resvg, its
    numbers in :func:`font_files`' font.

    Returns:
        uint8 array ``(height, width, 3)``, RGB, one pixel per SVG pixel.

    Raises:
        ImportError: without resvg-py or Pillow (the ``draw`` extra).
    """
    resvg = _module("resvg_py")
    image = _module("PIL.Image")
    files = font_files()
    fonts: dict[str, Any] = {"skip_system_fonts": True, "font_files": list(files)} if files else {}
    png = resvg.svg_to_bytes(svg_string=svg, shape_rendering="crisp_edges", **fonts)
    with image.open(io.BytesIO(bytes(png))) as picture:
        return np.asarray(picture.convert("RGB"))


@lru_cache(maxsize=1)
def font_files() -> tuple[str, ...]:
    """The font file the rasters load: DejaVu Sans, the first of
    :data:`DEJAVU_SANS` there, else matplotlib's copy (found, not imported).

    Returns:
        tuple of one path, or empty when none is found: resvg then searches
        the system's fonts for the SVG's families (its generic sans-serif last).
    """
    spec = importlib.util.find_spec("matplotlib")
    folders = (spec.submodule_search_locations or []) if spec is not None else []
    bundled = [os.path.join(p, "mpl-data", "fonts", "ttf", "DejaVuSans.ttf") for p in folders]
    return tuple(path for path in [*DEJAVU_SANS, *bundled] if os.path.isfile(path))[:1]


class ActionValues(Protocol):
    """What :func:`candidate_moves` reads: a Solution, or a LeanSolution (its moves valued on demand)."""

    def action_values(
        self, board: int, piece: int, preview: Sequence, held: Any, locked: bool, bag_left: Any
    ) -> dict: ...


def candidate_moves(
    solution: ActionValues, game: Game, chosen: Placement | str | None
) -> list[tuple[int, float, bool]]:
    """Every move of the piece to place in ``game`` as ``(board after, value,
    is chosen)``, the value ``points + discount * value after`` from
    ``solution.action_values``, for :func:`frame`'s ``candidates``."""
    values = solution.action_values(game.board, game.piece, game.preview, game.held, game.locked, game.bag_left)
    return [(m.board, float(values[m.placement]), m.placement == chosen) for m in game.moves()]


def game_frames(
    solution: Solution | Match,
    *,
    opponent: Solution | None = None,
    seed: int = 0,
    n_placements: int = 20,
    cell_pixels: int = 16,
    candidates: bool = True,
) -> list[np.ndarray]:
    """The frames of one game of ``solution``'s policy, for :func:`film_strip`,
    :func:`save_gif` or :func:`save_html`.

    The pieces are drawn at random (from the bag, with a bag) or, given an
    ``opponent`` (a Solution solved with an opponent, e.g. ``"minimax"``;
    default: ``solution``'s own when it has one), given by its piece
    choices.  ``solution`` may be a :class:`~babytris.Match` instead: its
    player (a Solution) against its opponent (a Solution's piece choices, or
    random pieces).  Each frame shows the state before a placement (board, piece,
    score) and, with ``candidates``, every move's board after and value, the
    policy's move framed; the last shows where the game stopped (after
    ``n_placements`` placements, or when the piece fits nowhere).

    Returns:
        a list of uint8 arrays ``(rows, columns, 3)``, one per state.
    """
    from ..results.solution import Solution
    from ..solvers.match import Match

    match = solution if isinstance(solution, Match) else None
    if match is not None and opponent is not None:
        raise ValueError("opponent: a Match carries its opponent; give it in the Match, not again")
    policy = solution if match is None else match.player
    if not isinstance(policy, Solution):
        raise ValueError("solution: a Solution, or a Match whose player is one (its policy draws the game)")
    rules = policy.rules
    if policy.player != "optimal":
        raise ValueError(f"solution: its player is {policy.player!r}; game_frames needs an optimal policy")
    n_placements = check_int("n_placements", n_placements, 1, 10_000)
    if opponent is not None and (opponent.rules != rules or opponent.opponent_policy is None):
        raise ValueError("opponent: a Solution of the same rules solved with an opponent (its piece choices)")
    if match is None:
        match = Match.played(opponent if opponent is not None else policy)
    game = match.stepped_game(seed=seed)
    frames = []
    while not game.over and game.placements < n_placements:
        move = policy.best_action(game.board, game.piece, game.preview, game.held, game.locked, game.bag_left)
        if move is None:
            break
        shown = candidate_moves(policy, game, move) if candidates else None
        frames.append(frame(rules, game.board, game.piece, game.score, cell_pixels, shown))
        game.place(move)
    frames.append(frame(rules, game.board, None if game.over else game.piece, game.score, cell_pixels))
    return frames


def film_strip(frames: Sequence[np.ndarray], per_row: int = 8, gap: int = 4) -> np.ndarray:
    """Frames side by side, ``per_row`` to a row, ``gap`` black pixels between
    them: uint8 array (one image), for a report."""
    if not frames:
        raise ValueError("frames: give at least one frame")
    if isinstance(per_row, bool) or not isinstance(per_row, int) or per_row < 1:
        raise ValueError(f"per_row must be an integer >= 1, got {per_row!r}")
    fh = max(f.shape[0] for f in frames)
    fw = max(f.shape[1] for f in frames)
    n_rows = (len(frames) + per_row - 1) // per_row
    n_cols = min(per_row, len(frames))
    strip = np.zeros((n_rows * fh + (n_rows - 1) * gap, n_cols * fw + (n_cols - 1) * gap, 3), dtype=np.uint8)
    for i, f in enumerate(frames):
        r, c = divmod(i, per_row)
        y, x = r * (fh + gap), c * (fw + gap)
        strip[y : y + f.shape[0], x : x + f.shape[1]] = f
    return strip


def save_gif(frames: Sequence[np.ndarray], path: str, seconds_per_frame: float = 0.5) -> Path:
    """Write the frames as an animated GIF (looping), atomically; needs Pillow
    (``pip install 'babytris[draw]'``).  Returns the path."""
    if not frames:
        raise ValueError("frames: give at least one frame")
    if not (isinstance(seconds_per_frame, (int, float)) and 0.01 <= seconds_per_frame <= 60):
        raise ValueError(f"seconds_per_frame must be in [0.01, 60], got {seconds_per_frame!r}")
    image = _module("PIL.Image")
    height = max(f.shape[0] for f in frames)
    width = max(f.shape[1] for f in frames)
    pictures = [image.fromarray(_padded(f, height, width)) for f in frames]

    def write(f: IO[bytes]) -> None:
        pictures[0].save(
            f, format="GIF", save_all=True, append_images=pictures[1:], duration=int(seconds_per_frame * 1000), loop=0
        )

    replace_atomically(path, write)
    return Path(path)


def save_png(picture: np.ndarray, path: str) -> Path:
    """Write one RGB image (a frame or a :func:`film_strip`) as PNG, atomically; needs Pillow."""
    image = _module("PIL.Image").fromarray(np.asarray(picture, dtype=np.uint8))
    replace_atomically(path, lambda f: image.save(f, format="PNG"))
    return Path(path)


def save_html(frames: Sequence[np.ndarray], path: str, title: str = "babytris", seconds_per_frame: float = 0.5) -> Path:
    """Write a self-contained HTML page showing the frames as an animation
    (an animated GIF inline, no script, nothing fetched), atomically."""
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as folder:
        gif = save_gif(frames, os.path.join(folder, "game.gif"), seconds_per_frame)
        buffer.write(gif.read_bytes())
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    page = (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>\n'
        f'<body style="background:#181820;color:#e6e6e6;font-family:sans-serif">\n'
        f'<h1 style="font-size:1.1em">{html.escape(title)}</h1>\n'
        f'<img alt="{html.escape(title)}" style="image-rendering:pixelated" '
        f'src="data:image/gif;base64,{data}">\n</body></html>\n'
    )
    replace_atomically(path, lambda f: f.write(page.encode("utf-8")))
    return Path(path)


def _module(name: str) -> Any:
    """The optional module ``name`` (resvg-py's or Pillow's), or ImportError naming the extra."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        package = "Pillow" if name.startswith("PIL") else "resvg-py"
        raise ImportError(f"drawing pictures needs {package}: pip install 'babytris[draw]'") from err


def _padded(picture: np.ndarray, height: int, width: int) -> np.ndarray:
    """``picture`` on a canvas of ``height`` x ``width`` in the background colour (frames of one GIF share a size)."""
    out = np.empty((height, width, 3), dtype=np.uint8)
    out[:] = BACKGROUND_RGB
    out[: picture.shape[0], : picture.shape[1]] = picture
    return out
