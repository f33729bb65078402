"""Frames: a state's SVG (babytris.game.svg.frame_svg) rendered by resvg into an
RGB array, and the film strips, GIFs and pages made of them."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import babytris
from babytris import Board, Rules
from babytris.draw.frames import (
    candidate_moves,
    film_strip,
    font_files,
    frame,
    game_frames,
    rasterise,
    save_gif,
    save_html,
    save_png,
)
from babytris.engine.stepped import Game
from babytris.game.svg import BACKGROUND_RGB, EMPTY_RGB, FILLED_RGB, PIECE_RGB, board_svg, frame_svg

Image = pytest.importorskip("PIL.Image")

RULES = Rules(width=4, height=4)
BOARD = Board.from_rows(["....", "....", "#...", "##.#"])


@pytest.fixture(scope="module")
def minimax_4x4():
    return babytris.solve(RULES, discount=0.9, opponent="minimax", tol=1e-10)


def centre(image: np.ndarray, col: int, row: int, cell: int, height: int = 4) -> tuple[int, ...]:
    """The colour at the middle of cell (col, row), row 0 at the bottom."""
    return tuple(int(v) for v in image[(height - 1 - row) * cell + cell // 2, col * cell + cell // 2])


def text_pixels(image: np.ndarray) -> np.ndarray:
    """bool array ``(rows, columns)``: the light grey of the text (antialiased), which no cell has."""
    return image.min(axis=2) >= 120


@pytest.mark.parametrize("cell", [8, 16, 23])
def test_a_frame_colours_each_cell_and_draws_the_piece(cell):
    image = frame(RULES, BOARD.bits, 1, 0, cell)  # the L to place
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[0] >= 4 * cell and image.shape[1] > 4 * cell
    for row in range(4):
        for col in range(4):
            assert centre(image, col, row, cell) == (FILLED_RGB if BOARD.filled(col, row) else EMPTY_RGB)
    m = max(1, round(cell / 4))
    for x, y in RULES.pieces[1].cells:  # the L in the panel, its top row at the margin
        top = max(yy for _, yy in RULES.pieces[1].cells)
        assert tuple(image[m + (top - y) * cell + cell // 2, 4 * cell + m + x * cell + cell // 2]) == PIECE_RGB
    over = frame(RULES, BOARD.bits, None, 0, cell)  # game over: no piece, the same size
    assert over.shape == image.shape and not (over == PIECE_RGB).all(axis=2).any()


def test_the_score_is_text_in_one_font():
    svg = frame_svg(RULES, BOARD.bits, 0, 12.5, cell=16)
    assert svg.count("<text") == 1 and ">12.5</text>" in svg and 'font-family="DejaVu Sans' in svg
    low, high = frame(RULES, BOARD.bits, 0, 3, 16), frame(RULES, BOARD.bits, 0, 12.5, 16)
    assert low.shape == high.shape  # room for four characters
    assert text_pixels(low).sum() > 10 and text_pixels(high).sum() > text_pixels(low).sum()
    differ = np.nonzero((low != high).any(axis=2))
    assert differ[0].min() >= 4 * 4 and differ[1].min() >= 4 * 16  # only the text changed, under the piece
    assert np.array_equal(high, frame(RULES, BOARD.bits, 0, 12.5, 16))  # the same pixels every time


def test_the_font_is_one_file_found_offline():
    files = font_files()
    if not files:
        pytest.skip("no DejaVu Sans on this machine: resvg searches the system's fonts")
    assert len(files) == 1 and files[0].endswith("DejaVuSans.ttf")


def test_frames_show_each_candidate_move_and_its_value(solution_4x4):
    game = Game(solution_4x4.rules, seed=3)
    best = solution_4x4.best_action(game.board, game.piece)
    shown = candidate_moves(solution_4x4, game, best)
    values = solution_4x4.action_values(game.board, game.piece)
    assert [v for _, v, _ in shown] == [values[m.placement] for m in game.moves()]
    assert [m.board for m in game.moves()] == [after for after, _, _ in shown]
    assert sum(chosen for _, _, chosen in shown) == 1
    (chosen_value,) = [v for _, v, chosen in shown if chosen]
    assert chosen_value == pytest.approx(max(values.values()), abs=1e-9)
    svg = frame_svg(solution_4x4.rules, game.board, game.piece, game.score, cell=8, candidates=shown)
    assert svg.count("<text") == 1 + len(shown) and f">{chosen_value:.1f}</text>" in svg
    plain = frame(solution_4x4.rules, game.board, game.piece, game.score, 8)
    with_moves = frame(solution_4x4.rules, game.board, game.piece, game.score, 8, shown)
    assert np.array_equal(with_moves[: plain.shape[0], : plain.shape[1]], plain)
    below = with_moves[plain.shape[0] :]
    assert (below == PIECE_RGB).all(axis=2).any()  # the chosen move is framed in the piece's colour
    assert text_pixels(below).any()  # values written under the moves
    frames = game_frames(solution_4x4, seed=3, n_placements=5, cell_pixels=8)
    assert len(frames) == 6 and np.array_equal(frames[0], with_moves)
    assert frames[-1].shape[0] == plain.shape[0]  # the last state: no move shown


def test_film_strip_gif_png_and_page(tmp_path, solution_4x4):
    frames = game_frames(solution_4x4, seed=1, n_placements=4, cell_pixels=8, candidates=False)
    assert len(frames) == 5
    strip = film_strip(frames, per_row=3, gap=2)
    fh, fw = frames[0].shape[:2]
    assert strip.shape == (2 * fh + 2, 3 * fw + 2 * 2, 3)
    assert np.array_equal(strip[:fh, :fw], frames[0]) and np.array_equal(strip[fh + 2 :, fw + 2 :][:fh, :fw], frames[4])
    gif = save_gif(frames, str(tmp_path / "game.gif"), seconds_per_frame=0.2)
    with Image.open(gif) as animation:
        assert animation.n_frames == 5 and animation.size == (fw, fh)
        animation.seek(4)
        last = np.asarray(animation.convert("RGB"))
    assert centre(last, 0, 0, 8) == centre(frames[4], 0, 0, 8)  # a palette of few colours: exact
    png = save_png(strip, str(tmp_path / "strip.png"))
    with Image.open(png) as picture:
        assert np.array_equal(np.asarray(picture.convert("RGB")), strip)
    page = save_html(frames, str(tmp_path / "game.html"), title="a <game>")
    text = page.read_text(encoding="utf-8")
    assert "a &lt;game&gt;" in text and "data:image/gif;base64," in text and "<script" not in text
    assert tuple(int(v) for v in strip[fh, 0]) == BACKGROUND_RGB  # the gaps


def test_play_writes_the_game_as_gif_html_and_film_strip(tmp_path, capsys):
    from babytris.cli import commands as cli

    gif, page, strip = tmp_path / "game.gif", tmp_path / "game.html", tmp_path / "strip.png"
    argv = ["play", "--placements", "6", "--delay", "0", "--gif", str(gif), "--html", str(page), "--strip", str(strip)]
    assert cli.main(argv) == 0
    capsys.readouterr()
    with Image.open(gif) as animation:
        assert animation.n_frames == 7  # the start, then each of the 6 placements
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "data:image/gif;base64," in text and "<script" not in text
    with Image.open(strip) as picture:
        assert picture.size[0] > picture.size[1]  # 7 frames side by side
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.gif", "game.html", "strip.png"]  # nothing else
    assert cli.main(["play", "--gif", str(tmp_path / "missing" / "g.gif")]) != 0
    assert "--gif: no directory" in capsys.readouterr().err


@pytest.mark.parametrize("module", ["resvg_py", "PIL.Image"])
def test_without_the_draw_extra(module, monkeypatch, tmp_path, capsys):
    from babytris.cli import commands as cli

    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=r"pip install 'babytris\[draw\]'"):
        frame(RULES, 0, 0, 0)
    gif = tmp_path / "game.gif"
    assert cli.main(["play", "--placements", "2", "--delay", "0", "--gif", str(gif)]) == cli.EXIT_MISSING_EXTRA
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'babytris[draw]'" in err and not gif.exists(), err


def test_rasterise_any_svg_of_the_module():
    image = rasterise(board_svg(Board.from_rows(["#."])))
    assert image.shape == (20, 40, 3) and centre(image, 0, 0, 20, 1) == FILLED_RGB


def test_saving_frames_checks_its_arguments(tmp_path):
    with pytest.raises(ValueError, match="give at least one frame"):
        save_gif([], str(tmp_path / "x.gif"))
    with pytest.raises(ValueError, match="seconds_per_frame must be in"):
        save_gif([np.zeros((4, 4, 3), np.uint8)], str(tmp_path / "x.gif"), seconds_per_frame=0)
    with pytest.raises(ValueError, match="per_row must be an integer >= 1"):
        film_strip([np.zeros((4, 4, 3), np.uint8)], per_row=0)
    with pytest.raises(ValueError, match="cell"):
        frame(RULES, 0, 0, 0, cell_pixels=1)


def test_game_frames_against_an_opponent_and_bad_arguments(solution_4x4, minimax_4x4):
    from babytris.draw.frames import game_frames

    frames = game_frames(solution_4x4, opponent=minimax_4x4, seed=0, n_placements=4, candidates=False)
    assert 2 <= len(frames) <= 5 and all(f.dtype == np.uint8 for f in frames)
    with pytest.raises(ValueError, match="opponent: a Solution of the same rules"):
        game_frames(solution_4x4, opponent=solution_4x4)
    with pytest.raises(ValueError, match="placements"):
        game_frames(solution_4x4, n_placements=0)
    held = game_frames(babytris.solve(width=3, height=4, hold=True), n_placements=6)  # a hold step is a frame too
    assert len(held) >= 7 and all(f.dtype == np.uint8 and f.ndim == 3 for f in held)
    # previews are drawn as played: the course timing against its minimax opponent
    course = babytris.solve(width=4, height=4, preview=1, opponent="minimax")
    assert 2 <= len(game_frames(course, n_placements=4)) <= 5
