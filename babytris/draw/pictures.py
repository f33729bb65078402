"""Pictures: boards as text and as figures, a policy's move on a board, convergence plots.

The text function needs nothing beyond babytris.  A board's figure is its
SVG (:func:`babytris.game.svg.board_svg`: the one drawing, as in Jupyter
and the frames) rendered by :func:`babytris.draw.frames.rasterise` and shown
in a matplotlib Axes; the plots are matplotlib's own.  Both need matplotlib
(``pip install 'babytris[plot]'``, which brings the ``draw`` extra too),
imported only when a drawing function is called.  Drawing uses matplotlib's
object-oriented API: pass ``ax=`` to draw into an Axes of your own (e.g.
from ``matplotlib.pyplot.subplots``), or leave it out to get a new
:class:`matplotlib.figure.Figure` that pyplot does not track (nothing to
close; save it with :func:`save` or ``ax.figure.savefig``).  Nothing here
calls ``show()``.

>>> from babytris import Board, Placement
>>> from babytris.draw.pictures import board_text
>>> board = Board.from_rows(["....", "#...", "##.#"])
>>> print(board_text(board, Placement("I", 1, 2, 4)))  # I upright in column 2
..@.
#.@.
##@#
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..game.board import EMPTY, FILLED, Board
from ..game.drop import landing
from ..game.pieces import Placement
from ..game.rules import Rules
from ..game.svg import COLORS, board_svg
from .frames import rasterise

__all__ = [
    "PIECE",
    "board_text",
    "draw_board",
    "draw_move",
    "landing_cells",
    "plot_convergence",
    "plot_regret",
    "save",
]

#: Character of the dropped piece's cells in :func:`board_text`.
PIECE = "@"

# Inches per cell of a board drawn on a new figure, and the pixels per cell of its picture.
CELL_INCHES = 0.4
CELL_PIXELS = 40

# savefig metadata that keeps the bytes of a file the same from run to run.
STABLE_METADATA = {".png": {"Software": None}, ".svg": {"Date": None, "Creator": None}}


def landing_cells(board: Board | int, placement: Placement, *, rules: Rules | None = None) -> frozenset:
    """The cells where ``placement``'s piece comes to rest on ``board``.

    The piece falls from above the board, one row at a time, until the row
    below is blocked (so it cannot pass under an overhang), as the engine
    drops it; a soft placement (its ``row`` set, ``Rules(moves="soft")``)
    rests at its row instead.  Line clears are not applied.

    Args:
        board: a :class:`Board`, or its bits when ``rules`` is given.
        placement: a :class:`Placement` of one of the rules' pieces.
        rules: the rule set numbering the placements; default: the board's
            size with the placement's piece alone (catalogue pieces).

    Returns:
        frozenset of ``(col, row)`` cells, row 0 at the bottom.

    Raises:
        ValueError: for a board of another size than the rules, a placement
            that is not one of the rules' moves, or one that would come to
            rest with a cell above the top row.
    """
    board, rules = _board_and_rules(board, rules, placement)
    return landing(board, placement, rules)


def board_text(board: Board | int, placement: Placement | None = None, *, rules: Rules | None = None) -> str:
    """The board as text, top row first: ``#`` filled, ``.`` empty, and with
    ``placement`` the dropped piece's landing cells (:func:`landing_cells`) as ``@``.

    Returns:
        str of ``height`` lines of ``width`` characters joined by newlines.
    """
    board, rules = _board_and_rules(board, rules, placement)
    piece = landing(board, placement, rules) if placement is not None else frozenset()
    return "\n".join(
        "".join(PIECE if (c, r) in piece else FILLED if board.filled(c, r) else EMPTY for c in range(board.width))
        for r in reversed(range(board.height))
    )


def draw_board(
    board: Board | int,
    *,
    ax: Any = None,
    placement: Placement | None = None,
    rules: Rules | None = None,
    title: str | None = None,
    colors: Mapping[str, Any] | None = None,
) -> Any:
    """Draw the board, and ``placement``'s piece where it lands.

    The picture is the board's SVG (:func:`babytris.game.svg.board_svg`,
    :data:`~babytris.game.svg.COLORS`), rendered and shown by ``ax.imshow``
    over ``(0, width) x (0, height)``: cell ``(col, row)`` is the unit square
    with its lower-left corner at ``(col, row)``, row 0 at the bottom.  The
    dropped piece's cells are in the piece colour, and the rows it fills
    (the rows it clears) are struck through by a bar.

    Args:
        board: a :class:`Board`, or its bits when ``rules`` is given.
        ax: the Axes to draw into; default: a new Figure sized to the board.
        placement: a :class:`Placement` to show landed (:func:`landing_cells`).
        rules: the rule set numbering the placements (see :func:`landing_cells`).
        title: the Axes title.
        colors: overrides of :data:`babytris.game.svg.COLORS` (keys
            ``"filled"``, ``"piece"``, ``"empty"``, ``"cleared"``, ``"grid"``,
            ``"background"``, ``"text"``), any matplotlib colour.

    Returns:
        the :class:`matplotlib.axes.Axes` drawn into; its one image
        (``ax.images[0]``) is the picture, uint8 ``(height * 40, width * 40, 3)``.

    Raises:
        ValueError: as :func:`landing_cells`, or for an unknown colour key.
        ImportError: without matplotlib, resvg-py or Pillow.
    """
    board, rules = _board_and_rules(board, rules, placement)
    piece = landing(board, placement, rules) if placement is not None else frozenset()
    _matplotlib()
    palette = _palette(colors)
    image = rasterise(board_svg(board, landing=piece, cell=CELL_PIXELS, colors=palette))
    if ax is None:
        ax = _new_axes(CELL_INCHES * board.width + 0.5, CELL_INCHES * board.height + (0.7 if title else 0.4))
    ax.imshow(image, extent=(0, board.width, 0, board.height), interpolation="nearest")
    ax.set_xlim(0, board.width)
    ax.set_ylim(0, board.height)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_color("#808080")
    if title is not None:
        ax.set_title(title, fontsize=9)
    return ax


def draw_move(
    solution: Any,
    board: Board | int,
    piece: int | str,
    *,
    preview: Sequence = (),
    held: int | str | None = None,
    ax: Any = None,
    title: str | None = None,
    colors: Mapping[str, str] | None = None,
) -> Any:
    """Draw the policy's best move for ``piece`` on ``board``, titled with the state's value.

    The move is ``solution.best_action(board, piece, preview, held)``, drawn
    by :func:`draw_board`; the default title names it and gives
    ``solution.value(...)``, the optimal expected discounted score of the
    state (with the pieces previewed and held, if any).  A hold
    (``"hold"``) or no move at all (game over) is drawn as the bare board,
    and the title says so.

    Args:
        solution: a :class:`~babytris.Solution` with a player policy.
        board: a :class:`Board` of the rules' size, or its bits.
        piece: the piece to place, by index or name.
        preview: the next ``rules.preview`` pieces; ``held``: the held piece.
        ax, colors: as :func:`draw_board`; ``title`` replaces the default.

    Returns:
        the :class:`matplotlib.axes.Axes` drawn into.

    Raises:
        ValueError: for a board of another size, an unknown piece, a bad
            preview or a solution whose player places at random (as
            :meth:`Solution.best_action`); ``KeyError`` for an unreachable board.
        ImportError: without matplotlib.
    """
    rules = solution.rules
    board, _ = _board_and_rules(board, rules, None)
    move = solution.best_action(board, piece, preview, held)
    value = solution.value(board, piece, preview, held)
    name = rules.pieces[rules.piece_index(piece)].name
    if title is None:
        if isinstance(move, Placement):
            what = f"{move.piece}: rotation {move.rotation}, column {move.column}"
        else:
            what = f"{name}: hold" if move == "hold" else f"{name}: no move (game over)"
        context = [f"next {', '.join(rules.pieces[rules.piece_index(q)].name for q in preview)}"] if preview else []
        context += [f"held {rules.pieces[rules.piece_index(held)].name}"] if held is not None else []
        title = f"{what}\n{', '.join(context + [f'value {value:.4g}'])}"
    return draw_board(
        board, ax=ax, placement=move if isinstance(move, Placement) else None, rules=rules, title=title, colors=colors
    )


def plot_convergence(
    *runs: Any,
    labels: Sequence[str] | None = None,
    ax: Any = None,
    tol: float | None = None,
    title: str | None = None,
    every_sweep: bool = False,
) -> Any:
    """Plot the residual of each greedy sweep on a log axis, one line per run.

    A greedy sweep is one Bellman optimality sweep; modified policy iteration
    runs cheaper evaluation sweeps between them, which the x axis counts
    only with ``every_sweep=True`` (each greedy residual then stands at its
    sweep's number among all sweeps).  A residual of 0 (exact convergence)
    has no place on a log axis and is left out of the line (the data keep it).

    Args:
        runs: :class:`~babytris.Solution` objects (their ``residuals``) or 1-D
            arrays of residuals, each non-empty, finite and >= 0.
        labels: one legend label per run; default: a Solution's method and
            sweep count, ``"run i"`` for an array.
        ax: the Axes to draw into; default: a new Figure.
        tol: a tolerance to draw as a horizontal dashed line; default: each
            distinct ``tol`` of the Solutions given (none for arrays alone).
        title: the Axes title.
        every_sweep: count evaluation sweeps on the x axis too (Solutions
            only: an array of residuals does not say where they fell).

    Returns:
        the :class:`matplotlib.axes.Axes` drawn into; its lines are
        ``ax.lines[:len(runs)]`` in the order given, with x data the sweep
        numbers 1, 2, ... (with ``every_sweep``, among all sweeps) and y
        data the residuals.

    Raises:
        ValueError: with no run, an empty or malformed residual array, a
            labels count other than the runs', or a tol that is not > 0.
        ImportError: without matplotlib.
    """
    if not runs:
        raise ValueError("runs: give at least 1 Solution or residual array")
    if not isinstance(every_sweep, bool):
        raise ValueError(f"every_sweep must be True or False, got {every_sweep!r}")
    series, tols = [], []
    for i, run in enumerate(runs, start=1):
        steps = None
        if hasattr(run, "residuals") and hasattr(run, "tol"):
            # (which runs took Aitken jumps: the label says so, as two runs of one method may differ by that alone)
            accelerated = getattr(run, "accelerated", None)
            name = run.method + ("" if accelerated is None else " + Aitken" if accelerated else " plain")
            residuals, default = np.asarray(run.residuals, dtype=np.float64), f"{name}, {run.iterations} sweeps"
            tols.append(float(run.tol))
            if every_sweep:
                if getattr(run, "evaluation_sweeps", None) is None:
                    raise ValueError(f"every_sweep: run {i} does not record its evaluation sweeps (an older file)")
                evaluations = np.asarray(run.evaluation_sweeps, dtype=np.int64)
                # greedy sweep i is sweep i + (evaluation sweeps before it) among all
                steps = np.arange(1, residuals.size + 1) + np.concatenate(([0], np.cumsum(evaluations)[:-1]))
                default = f"{name}, {run.iterations + int(evaluations.sum())} sweeps in all"
        else:
            if every_sweep:
                raise ValueError(f"every_sweep: run {i} is an array of residuals; give Solutions")
            try:
                residuals = np.asarray(run, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(
                    f"runs: run {i} must be a Solution or an array of residuals, got {type(run).__name__}"
                ) from None
            default = f"run {i}"
        if residuals.ndim != 1 or residuals.size == 0:
            raise ValueError(f"runs: run {i} must hold a 1-D array of at least 1 residual, got shape {residuals.shape}")
        if not (np.all(np.isfinite(residuals)) and np.all(residuals >= 0)):
            raise ValueError(f"runs: run {i}'s residuals must be finite and >= 0")
        series.append((residuals, default, steps))
    if labels is not None:
        labels = list(labels)
        if len(labels) != len(runs) or not all(isinstance(s, str) for s in labels):
            raise ValueError(f"labels must be {len(runs)} strings (one per run), got {labels!r}")
    if tol is not None:
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (math.isfinite(tol) and tol > 0):
            raise ValueError(f"tol must be a finite number > 0 or None, got {tol!r}")
        tols = [float(tol)]
    _matplotlib()
    if ax is None:
        ax = _new_axes(5.0, 3.2)
    for (residuals, _, steps), label in zip(series, labels or [d for _, d, _ in series]):
        x = np.arange(1, residuals.size + 1) if steps is None else steps
        ax.plot(x, residuals, marker=".", markersize=3, linewidth=1.2, label=label)
    for t in sorted(set(tols)):
        ax.axhline(t, color="#808080", linestyle="--", linewidth=0.9, label=f"tol = {t:g}")
    ax.set_yscale("log")
    xlabel = "sweep (greedy and evaluation)" if every_sweep else "greedy sweep"
    return _finish(ax, xlabel, "residual (largest change)", title, legend_size=8)


def plot_regret(results: Mapping[str, Any], *, ax: Any = None, title: str | None = None) -> Any:
    """Plot EXP3's regret against the best fixed policy after each placement,
    one line per opponent, and Auer et al.'s bound ``2 sqrt(e - 1) sqrt(t K ln
    K)`` (times the reward scale) as a dashed line for reference.

    Args:
        results: ``{opponent name: Exp3Result}`` (see
            :func:`babytris.analysis.adaptive.exp3_study`), at least one.
        ax: the Axes to draw into; default: a new Figure.
        title: the Axes title.

    Returns:
        the :class:`matplotlib.axes.Axes` drawn into; ``ax.lines[i]`` is the
        i-th result's regret curve, the last line the bound.
    """
    if not results:
        raise ValueError("results: give at least 1 Exp3Result")
    _matplotlib()
    if ax is None:
        ax = _new_axes(6.0, 3.6)
    for name, result in results.items():
        ax.plot(np.arange(1, result.n_placements + 1), result.regret_curve(), linewidth=1.2, label=name)
    first = next(iter(results.values()))
    steps = np.arange(1, first.n_placements + 1)
    ax.plot(steps, first.bound_curve(), color="#808080", linestyle="--", linewidth=0.9, label="Auer et al.'s bound")
    return _finish(ax, "placement", "regret (points)", title, legend_size=7)


def _finish(ax: Any, xlabel: str, ylabel: str, title: str | None, *, legend_size: float) -> Any:
    """Label, grid and legend of a plot's Axes, as every plot here has them; returns ``ax``."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
    ax.legend(fontsize=legend_size)
    if title is not None:
        ax.set_title(title, fontsize=10)
    return ax


def save(figure: Any, path: str | Path, *, dpi: float = 100) -> Path:
    """Write a Figure (or an Axes' figure) to a ``.png`` or ``.svg`` file,
    the same bytes on every run (no date or software version stamped in).

    Returns:
        the :class:`~pathlib.Path` written.

    Raises:
        ValueError: for another suffix (use ``figure.savefig`` for other
            formats) or a dpi that is not > 0.
        ImportError: without matplotlib.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in STABLE_METADATA:
        raise ValueError(f"path must end in .png or .svg, got {path.name!r}")
    if isinstance(dpi, bool) or not isinstance(dpi, numbers.Real) or not (math.isfinite(dpi) and dpi > 0):
        raise ValueError(f"dpi must be a finite number > 0, got {dpi!r}")
    _matplotlib()
    import matplotlib

    figure = getattr(figure, "figure", figure)  # an Axes draws on its figure
    with matplotlib.rc_context({"svg.hashsalt": "babytris"}):  # stable element ids in SVG
        figure.savefig(path, dpi=dpi, metadata=STABLE_METADATA[suffix])
    return path


# --------------------------------------------------------------------------


def _board_and_rules(
    board: Board | int, rules: Rules | None, placement: Placement | None
) -> tuple[Board, Rules | None]:
    """``board`` as a Board, and the rules ``placement`` is numbered by (None without either)."""
    if rules is not None and not isinstance(rules, Rules):
        raise ValueError(f"rules must be a babytris.Rules or None, got {type(rules).__name__}")
    if placement is not None and not isinstance(placement, Placement):
        raise ValueError(f"placement must be a babytris.Placement or None, got {placement!r}")
    if isinstance(board, Board):
        if rules is not None and (board.width, board.height) != (rules.width, rules.height):
            raise ValueError(f"board is {board.width}x{board.height}, the rules are {rules.width}x{rules.height}")
    elif isinstance(board, (int, np.integer)) and not isinstance(board, bool):
        if rules is None:
            raise ValueError("board: give a Board, or rules for its size with an int board")
        board = Board(int(board), rules.width, rules.height)
    else:
        raise ValueError(f"board must be a babytris.Board (or an int with rules), got {type(board).__name__}")
    if rules is None and placement is not None:
        moves = "hard" if placement.row is None else "soft"
        rules = Rules(width=board.width, height=board.height, pieces=(placement.piece,), moves=moves)
    return board, rules


def _palette(colors: Mapping[str, Any] | None) -> dict[str, str] | None:
    """``colors`` as SVG colours (any matplotlib colour given), unknown keys refused."""
    if colors is None:
        return None
    unknown = set(colors) - set(COLORS)
    if unknown:
        raise ValueError(f"colors: unknown keys {sorted(unknown)}; known are {', '.join(COLORS)}")
    from matplotlib.colors import to_hex

    return {name: to_hex(colour) for name, colour in colors.items()}


def _matplotlib() -> Any:
    """matplotlib's ``Figure``, or ImportError naming the extra to install."""
    try:
        import matplotlib  # noqa: F401  (first: a blocked matplotlib fails here, not on a cached submodule)
        from matplotlib.figure import Figure
    except ImportError as err:
        raise ImportError("babytris.draw.pictures needs matplotlib to draw: pip install 'babytris[plot]'") from err
    return Figure


def _new_axes(width: float, height: float) -> Any:
    """The Axes of a new Figure (not tracked by pyplot) of ``width`` x ``height`` inches."""
    Figure = _matplotlib()
    return Figure(figsize=(width, height), layout="constrained").add_subplot()
