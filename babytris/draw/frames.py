"""Game frames as RGB images in plain numpy (no matplotlib): the board, the
piece to place, the score and each candidate move's value, for the
Gymnasium environment's ``rgb_array`` and for film strips and animations
of a whole game (:func:`game_frames`).

>>> import babytris
>>> from babytris.draw.frames import frame
>>> image = frame(babytris.Rules(width=4, height=4), board=0b0111, piece=1, score=3, cell_pixels=8)
>>> image.shape, image.dtype
((32, 60, 3), dtype('uint8'))
"""

from __future__ import annotations

import base64
import html
import io
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from ..engine.writing import replace_atomically
from ..game.pieces import Placement
from ..game.rules import Rules
from ..game.svg import _FONT, EMPTY_RGB, FILLED_RGB, GRID_RGB, PIECE_RGB, TEXT_RGB, score_text
from ..game.validation import check_int

if TYPE_CHECKING:
    from ..engine.stepped import Game
    from ..results.solution import Solution
    from ..solvers.match import Match

__all__ = [
    "frame",
    "candidate_moves",
    "game_frames",
    "film_strip",
    "save_gif",
    "save_png",
    "save_html",
]


def frame(
    rules: Rules,
    board: int,
    piece: int | None,
    score: float,
    cell_pixels: int = 16,
    candidates: Sequence[tuple[int, float, bool]] | None = None,
) -> np.ndarray:
    """One frame: the board (``cell_pixels`` per cell, grid lines), then a
    panel on its right with the piece to place (rotation 0; none when the
    game is over: ``piece=None``) and the score under it.  With
    ``candidates``, ``(board after, value, chosen)`` for each move of the
    piece, a row of small boards under it: each move's board after and its
    value, the chosen one framed in the piece's colour.

    Returns:
        uint8 array ``(rows, columns, 3)``: ``rows`` at least ``height *
        cell_pixels``; the board fills the top-left ``height * cell_pixels``
        by ``width * cell_pixels``.
    """
    image = _state_frame(rules, board, piece, score, cell_pixels)
    if not candidates:
        return image
    return _stack(image, _candidate_row(rules, candidates, cell_pixels, image.shape[1]))


def _candidate_row(
    rules: Rules, candidates: Sequence[tuple[int, float, bool]], cell_pixels: int, width: int
) -> np.ndarray:
    """Small boards after each move with their values under them, wrapped to ``width`` pixels."""
    s = max(2, int(cell_pixels) // 3)
    px = max(1, s // 2)
    w, h = rules.width, rules.height
    tiles = []
    for after, value, chosen in candidates:
        cells = np.array([[(after >> (r * w + c)) & 1 for c in range(w)] for r in reversed(range(h))], dtype=bool)
        mini = _cells(cells, FILLED_RGB, s)
        text = _text(f"{float(value):.1f}", px)
        tile = np.zeros((h * s + text.shape[0] + 3 * px + 4, max(w * s, text.shape[1]) + 4, 3), dtype=np.uint8)
        tile[:] = EMPTY_RGB
        if chosen:
            tile[:] = PIECE_RGB
            tile[2:-2, 2:-2] = EMPTY_RGB
        tile[2 : 2 + h * s, 2 : 2 + w * s] = mini
        ty = 2 + h * s + px
        tile[ty : ty + text.shape[0], 2 : 2 + text.shape[1]][text] = TEXT_RGB
        tiles.append(tile)
    gap = max(1, s // 2)
    per_row = max(1, (width + gap) // (tiles[0].shape[1] + gap))
    return film_strip(tiles, per_row=per_row, gap=gap)


def _stack(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """``top`` above ``bottom``, both left-aligned, on the empty colour."""
    out = np.empty((top.shape[0] + bottom.shape[0], max(top.shape[1], bottom.shape[1]), 3), dtype=np.uint8)
    out[:] = EMPTY_RGB
    out[: top.shape[0], : top.shape[1]] = top
    out[top.shape[0] :, : bottom.shape[1]] = bottom
    return out


def _state_frame(rules: Rules, board: int, piece: int | None, score: float, cell_pixels: int) -> np.ndarray:
    """:func:`frame` without candidates."""
    s = int(cell_pixels)
    w, h = rules.width, rules.height
    cells = np.array([[(board >> (r * w + c)) & 1 for c in range(w)] for r in reversed(range(h))], dtype=bool)
    left = _cells(cells, FILLED_RGB, s)
    text = _text(score_text(score), max(1, s // 4))
    shape = None if piece is None else rules.pieces[piece].cells
    shape_cells = np.zeros((0, 0), dtype=bool)
    if shape is not None:
        sw, sh = 1 + max(x for x, _ in shape), 1 + max(y for _, y in shape)
        shape_cells = np.zeros((sh, sw), dtype=bool)
        for x, y in shape:
            shape_cells[sh - 1 - y, x] = True
    # The panel fits every piece of the rules (rotation 0) and the score.
    wide = max(1 + max(x for x, _ in p.cells) for p in rules.pieces)
    tall = max(1 + max(y for _, y in p.cells) for p in rules.pieces)
    m = max(1, s // 4)  # margins
    panel_w = max(wide * s, text.shape[1]) + 2 * m
    panel_h = max(h * s, m + tall * s + m + text.shape[0] + m)
    image = np.empty((panel_h, w * s + panel_w, 3), dtype=np.uint8)
    image[:] = EMPTY_RGB
    image[h * s :, : w * s] = (0, 0, 0)
    image[: h * s, : w * s] = left
    x0, y0 = w * s + m, m
    if shape_cells.size:
        drawn = _cells(shape_cells, PIECE_RGB, s, background=None)
        image[y0 : y0 + drawn.shape[0], x0 : x0 + drawn.shape[1]] = np.where(
            drawn.any(axis=2, keepdims=True), drawn, image[y0 : y0 + drawn.shape[0], x0 : x0 + drawn.shape[1]]
        )
    ty = m + tall * s + m
    image[ty : ty + text.shape[0], x0 : x0 + text.shape[1]] = np.where(
        text[..., None], np.array(TEXT_RGB, np.uint8), image[ty : ty + text.shape[0], x0 : x0 + text.shape[1]]
    )
    return image


def candidate_moves(solution: Solution, game: Game, chosen: Placement | str | None) -> list[tuple[int, float, bool]]:
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
    placements: int = 20,
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
    ``placements`` placements, or when the piece fits nowhere).

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
    placements = check_int("placements", placements, 1, 10_000)
    if opponent is not None and (opponent.rules != rules or opponent.opponent_policy is None):
        raise ValueError("opponent: a Solution of the same rules solved with an opponent (its piece choices)")
    if match is None:
        match = Match.played(opponent if opponent is not None else policy)
    game = match.stepped_game(seed=seed)
    frames = []
    while not game.over and game.placements < placements:
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
    (``pip install '.[plot]'``: matplotlib brings it).  Returns the path."""
    if not frames:
        raise ValueError("frames: give at least one frame")
    if not (isinstance(seconds_per_frame, (int, float)) and 0.01 <= seconds_per_frame <= 60):
        raise ValueError(f"seconds_per_frame must be in [0.01, 60], got {seconds_per_frame!r}")
    image = _pillow()
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
    image = _pillow().fromarray(np.asarray(picture, dtype=np.uint8))
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


def _pillow():
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("writing images needs Pillow: pip install 'babytris[plot]' (matplotlib brings it)") from None
    return Image


def _padded(picture: np.ndarray, height: int, width: int) -> np.ndarray:
    """``picture`` on a black canvas of ``height`` x ``width`` (frames of one GIF share a size)."""
    out = np.zeros((height, width, 3), dtype=np.uint8)
    out[: picture.shape[0], : picture.shape[1]] = picture
    return out


def _cells(cells: np.ndarray, colour: tuple[int, int, int], s: int, background=EMPTY_RGB) -> np.ndarray:
    """A grid of cells (bool, top row first) as pixels, with grid lines; black
    where empty when ``background`` is None."""
    empty = np.array(background if background is not None else (0, 0, 0), np.uint8)
    colours = np.where(cells[..., None], np.array(colour, np.uint8), empty)
    image = np.repeat(np.repeat(colours, s, axis=0), s, axis=1)
    lines = np.zeros(image.shape[:2], dtype=bool)
    lines[::s, :] = True  # along the top and left edge of each cell
    lines[:, ::s] = True
    if background is None:  # on the piece's own cells only
        lines &= np.repeat(np.repeat(cells, s, axis=0), s, axis=1)
    image[lines] = GRID_RGB
    return image


def _text(text: str, px: int) -> np.ndarray:
    """``text`` in the 3x5 font, each font pixel ``px`` pixels, one font column between glyphs (bool)."""
    glyphs = [np.array([[bit == "1" for bit in row] for row in _FONT[ch]]) for ch in text]
    spaced = []
    for i, g in enumerate(glyphs):
        spaced.append(g)
        if i < len(glyphs) - 1:
            spaced.append(np.zeros((5, 1), dtype=bool))
    bits = np.hstack(spaced)
    return np.repeat(np.repeat(bits, px, axis=0), px, axis=1)
