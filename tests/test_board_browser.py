"""The analysis board in a real browser: Playwright for Python driving headless
Chromium (Debian's ``chromium``; .ci/run installs it).  The page's values are
the solution's, its board is the library's drawing, play, stepping back,
branches and a reload from the URL keep the game, no request leaves
127.0.0.1 and the console shows no error; the suite's screenshot of the page
is docs/board.png (the guide's section on the board shows it).

Skipped, saying why, where Playwright or a Chromium is missing."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

import babytris
from babytris import Board
from babytris.board import Analyst, BoardServer, parse_position
from babytris.board.chromium import MISSING, find_chromium
from babytris.game.svg import board_svg

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed: pip install '.[test]'")
CHROMIUM = find_chromium()
if CHROMIUM is None:
    pytest.skip(f"{MISSING}: the board's browser tests are skipped", allow_module_level=True)
expect = sync_api.expect

DOCS = Path(__file__).resolve().parent.parent / "docs"
RECT = re.compile(r'<rect x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)" fill="(#[0-9a-f]{6})"')


@pytest.fixture(scope="module")
def solution():
    return babytris.solve(width=4, height=5)


@pytest.fixture(scope="module")
def server(solution):
    board = BoardServer(Analyst(solution, max_memory=2**30), "127.0.0.1", 0)
    thread = threading.Thread(target=board.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield board
    board.shutdown()
    board.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, server, tmp_path):
    """A fresh tab whose every request and console error is kept (checked at the end of each test)."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, accept_downloads=True)
    tab = context.new_page()
    tab.requests, tab.errors = [], []
    tab.on("request", lambda r: tab.requests.append(r.url))
    tab.on("console", lambda m: tab.errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: tab.errors.append(str(e)))
    yield tab
    origin = server.url.rstrip("/")
    elsewhere = [u for u in tab.requests if not u.startswith((origin + "/", "data:", "blob:", "file:"))]
    assert not elsewhere, f"requests left 127.0.0.1: {elsewhere}"
    assert not tab.errors, f"console errors: {tab.errors}"
    context.close()


def open_board(page, url):
    page.goto(url)
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    return page


def row(page, move):
    return page.locator(f"#moves tbody tr[data-move='{move}'] td")


def rects(svg: str) -> list[tuple]:
    return RECT.findall(svg)


def test_a_placements_value_is_the_solutions_and_its_ghost_the_librarys_drawing(page, server, solution):
    open_board(page, server.url + "?pos=%23...%2F%23%23..%3BL")  # (#.../##..;L)
    board = parse_position("#.../##..;L", solution.rules).board
    values = solution.action_values(board, "L")
    for placement, value in values.items():
        cells = row(page, f"L-{placement.index}")
        assert cells.nth(4).inner_text() == f"{value:.3f}"
        assert cells.nth(5).inner_text() == f"{max(values.values()) - value:.3f}".replace("-0.000", "0.000")
    best = solution.best_action(board, "L")
    expect(page.locator("#moves tbody tr.best")).to_have_attribute("data-move", f"L-{best.index}")
    drawn = rects(page.locator("#board").evaluate("svg => svg.outerHTML"))
    assert drawn == rects(board_svg(Board(board, 4, 5)))  # the same cells, geometry and palette
    page.locator(f"#moves tbody tr[data-move='L-{best.index}']").hover()
    ghost = rects(page.locator("#board").evaluate("svg => svg.outerHTML"))
    from babytris.game.drop import landing

    landed = landing(Board(board, 4, 5), best, solution.rules)
    assert ghost == rects(board_svg(Board(board, 4, 5), landing=landed))


def test_play_step_back_branch_and_reload(page, server, solution):
    open_board(page, server.url + "?pos=....%3BL&seed=1")
    page.locator("#moves tbody tr").first.click()
    expect(page.locator("#movelist li")).to_have_count(1)
    page.locator("#moves tbody tr").first.click()
    expect(page.locator("#movelist li")).to_have_count(2)
    second = _replayed(page)
    text = page.url
    played = dict(re.findall(r"([a-z]+)=([^&]*)", text))
    assert played["moves"].count(".") == 2 and played["pos"] == "....%3BL"
    # the value shown is the solution's at the position the moves reach
    summary = page.locator("#summary").inner_text()
    last = parse_position(_replayed(page), solution.rules)
    name = solution.rules.piece_names[last.piece]
    assert f"value {solution.value(last.board, name):.3f}" in summary
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#movelist a.current")).to_have_count(0)  # (at the start: no move is current)
    other = page.locator("#moves tbody tr").nth(3)
    other_id = other.get_attribute("data-move")
    other.click()  # a branch: the game played before stays
    expect(page.locator("#movelist .branch")).to_have_count(1)
    page.locator("#movelist .branch a").click()
    expect(page.locator("#movelist a.current")).to_have_text(re.compile(r"^L-0"))
    page.keyboard.press("ArrowRight")
    assert _replayed(page) == second
    page.locator("#chart circle").first.click()  # the chart's first point: the start
    expect(page.locator("#board")).to_have_attribute("data-position", "....;L")
    page.locator("#chart circle").last.click()
    expect(page.locator("#board")).to_have_attribute("data-position", second)
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("#movelist li")).to_have_count(2)
    assert _replayed(page) == second and other_id != "L-0"


def test_the_value_charts_scale_and_each_points_numbers(page, server, solution):
    open_board(page, server.url + "?pos=....%3BL&moves=L-0.L")
    after = parse_position("#.../##..;L", solution.rules)
    value, start = solution.value(after.board, "L"), solution.value(0, "L")
    top = max(1, value, start)
    expect(page.locator("#chart text.scale")).to_have_text([str(round(top, 2)), "0"])
    expect(page.locator("#chart circle title")).to_have_text(
        [f"placement 0: value {start:.3f}, score 0", f"placement 1: value {value:.3f}, score 0"]
    )


def _replayed(page) -> str:
    """The position the board shows (its text form)."""
    return page.locator("#board").get_attribute("data-position")


def test_a_url_with_an_illegal_move_stops_the_game_there(page, server):
    open_board(page, server.url + "?pos=....%3BL&moves=L-0.I_L-99.I")
    expect(page.locator("#error")).to_contain_text("move must be one of the legal moves here")
    expect(page.locator("#movelist li")).to_have_count(1)
    expect(page.locator("#board")).to_have_attribute("data-position", "#.../##..;I")  # (L-0, then I came)
    assert page.errors == ["Failed to load resource: the server responded with a status of 400 (Bad Request)"]
    page.errors.clear()  # (the refused move's 400, logged by the browser: expected)


def test_the_opponents_answer_and_the_second_player(page, server, solution):
    robust = babytris.solve(width=4, height=5, opponent="minimax")
    open_board(page, server.url + "?pos=%23...%2F%23%23..%3BL&opponent=minimax&compare=minimax")
    board = parse_position("#.../##..;L", solution.rules).board
    theirs = robust.action_values(board, "L")
    game = babytris.Game(solution.rules)
    for placement, value in theirs.items():
        cells = row(page, f"L-{placement.index}")
        assert cells.nth(6).inner_text() == f"{value:.3f}"
        game.board, game.piece = board, 1
        game.place(placement)
        assert cells.nth(7).inner_text() == robust.piece_policy(game.board)
    comparison = page.locator("#comparison").inner_text()
    assert "minimax" in comparison


def test_the_editor_sets_up_a_board_and_names_what_no_game_reaches(page, server, solution):
    open_board(page, server.url + "?pos=....%3BI")
    page.locator("#edit").click()
    cells = page.locator("#board rect.cell")
    for col in range(4):  # a full bottom row: no game leaves one
        page.locator(f"#board rect.cell[data-row='0'][data-col='{col}']").click()
    page.locator("#apply").click()
    expect(page.locator("#error")).to_contain_text("position: no game of these rules reaches '####;I'")
    assert page.errors == ["Failed to load resource: the server responded with a status of 400 (Bad Request)"]
    page.errors.clear()  # (the browser logs the refused board's 400 as a failed load: that one is expected)
    page.locator("#board rect.cell[data-row='0'][data-col='3']").click()
    page.locator("#apply").click()
    expect(page.locator("#summary")).to_contain_text(f"value {solution.value(0b0111, 'I'):.3f}")
    expect(page.locator("#error")).to_be_hidden()
    assert _replayed(page) == "###.;I" and cells.count() == 20


def test_the_game_saves_as_one_file_that_needs_no_server(page, server, browser, tmp_path):
    open_board(page, server.url + "?pos=....%3BL&seed=2")
    page.locator("#moves tbody tr").first.click()
    expect(page.locator("#movelist li")).to_have_count(1)
    with page.expect_download() as download:
        page.locator("#save").click()
    path = tmp_path / "game.html"
    download.value.save_as(path)
    text = path.read_text()
    assert 'src="/static/' not in text and 'href="/static/' not in text and "<style>" in text
    offline = browser.new_page()
    offline_requests = []
    offline.on("request", lambda r: offline_requests.append(r.url))
    open_board(offline, path.as_uri())
    expect(offline.locator("#movelist li")).to_have_count(1)
    expect(offline.locator("#moves tbody tr")).not_to_have_count(0)
    assert all(u.startswith(("file:", "data:", "blob:")) for u in offline_requests), offline_requests
    offline.close()


def test_the_screenshot_of_the_guide(page, server):
    open_board(page, server.url + "?pos=....%3BL&seed=4&compare=minimax")
    for ply, k in enumerate((0, 2, 1)):
        page.locator("#moves tbody tr").nth(k).click()
        expect(page.locator("#movelist li")).to_have_count(ply + 1)
    page.locator("#moves tbody tr").nth(2).hover()
    page.screenshot(path=str(DOCS / "board.png"))
    assert (DOCS / "board.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def hold_server():
    """A board of 4x4 with a preview of one piece and hold."""
    board = BoardServer(
        Analyst(babytris.solve(width=4, height=4, preview=1, hold=True), max_memory=2**30), "127.0.0.1", 0
    )
    thread = threading.Thread(target=board.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield board
    board.shutdown()
    board.server_close()


def test_hold_the_queue_pieces_by_hand_and_the_keys(browser, hold_server):
    tab = browser.new_page()
    errors = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    open_board(tab, hold_server.url + "?pos=....%3BL%3BI%3B-&opponent=hand")
    expect(tab.locator("#panel figcaption")).to_have_text(["to place L", "next I", "held -"])
    by_hand = "next piece: given by hand (drawn at random it would be I 50%, L 50%)"
    expect(tab.locator("#summary")).to_contain_text(by_hand)
    tab.select_option("#hand", "L")
    tab.locator("#moves tbody tr[data-move='hold']").click()  # L goes on hold, I comes, L (by hand) joins the queue
    expect(tab.locator("#board")).to_have_attribute("data-position", "....;I;L;L!")
    expect(tab.locator("#panel figcaption")).to_have_text(["to place I", "next L", "held (locked) L"])
    assert tab.locator("#moves tbody tr[data-move='hold']").count() == 0  # (the slot is full)
    tab.keyboard.press("ArrowDown")
    second = tab.locator("#moves tbody tr").nth(1).get_attribute("data-move")
    tab.keyboard.press("Enter")
    expect(tab.locator("#movelist li")).to_have_count(2)
    expect(tab.locator("#movelist a.current")).to_have_text(re.compile(f"^{second} .*→ L"))
    tab.keyboard.press("ArrowLeft")
    tab.keyboard.press("ArrowLeft")
    expect(tab.locator("#board")).to_have_attribute("data-position", "....;L;I;-")
    tab.keyboard.press("ArrowRight")
    expect(tab.locator("#board")).to_have_attribute("data-position", "....;I;L;L!")
    assert not errors, errors
    tab.close()


def test_the_board_in_a_notebooks_iframe(browser, solution):
    from babytris.board import BoardFrame

    frame = BoardFrame(solution, "#.../##..;L")
    tab = browser.new_page()
    try:
        tab.set_content(f"<p>a notebook's output</p>{frame._repr_html_()}")
        inside = tab.frame_locator("iframe")
        expect(inside.locator("body")).to_have_attribute("data-ready", "true")
        best = solution.best_action(parse_position("#.../##..;L", solution.rules).board, "L")
        expect(inside.locator("#moves tbody tr.best")).to_have_attribute("data-move", f"L-{best.index}")
    finally:
        tab.close()
        frame.close()


def test_a_board_too_big_to_solve_with_its_estimates(browser):
    from babytris.board.estimates import EstimateAnalyst

    analyst = EstimateAnalyst.of_game(10, 20)
    board = BoardServer(analyst, "127.0.0.1", 0)
    threading.Thread(target=board.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    tab = browser.new_page()
    errors = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        open_board(tab, board.url + "?pos=..........%3BT&seed=1")
        expect(tab.locator("#rules")).to_contain_text("too big to solve; Dellacherie's feature-based player")
        expect(tab.locator("#moves thead th").nth(4)).to_have_text("evaluation")
        expect(tab.locator("#marks")).to_have_text("none here (an evaluation is not points)")
        assert tab.locator("#board rect.cell").count() == 200
        best = analyst.analysis(parse_position("..........;T", analyst.layout))["moves"][0]
        expect(tab.locator("#moves tbody tr.best")).to_have_attribute("data-move", best["id"])
        assert row(tab, best["id"]).nth(4).inner_text() == f"{best['value']:.3f}"
        tab.locator("#moves tbody tr.best").click()
        expect(tab.locator("#movelist li")).to_have_count(1)
        assert tab.locator("#board").get_attribute("data-position").startswith(".")
        assert not errors, errors
    finally:
        tab.close()
        board.shutdown()
        board.server_close()


def test_a_solution_against_minimax_is_played_against_its_own_opponent(browser):
    robust = babytris.solve(width=4, height=5, opponent="minimax")
    board = BoardServer(Analyst(robust, max_memory=2**30), "127.0.0.1", 0)
    threading.Thread(target=board.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    tab = browser.new_page()
    errors = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        open_board(tab, board.url + "?pos=%23...%2F%23%23..%3BL")  # (no model in the URL: the values' own)
        expect(tab.locator("#opponent")).to_have_value("solution")
        expect(tab.locator("#summary")).to_contain_text("the solution's own (minimax) opponent's answer")
        position = parse_position("#.../##..;L", robust.rules)
        best = robust.best_action(position.board, "L")
        game = babytris.Game(robust.rules)
        game.board, game.piece = position.board, 1
        game.place(best)
        expect(row(tab, f"L-{best.index}").nth(6)).to_have_text(robust.piece_policy(game.board))
        open_board(tab, board.url + "?pos=%23...%2F%23%23..%3BL&opponent=random")  # (a model the URL names)
        expect(tab.locator("#opponent")).to_have_value("random")
        expect(tab.locator("#summary")).to_contain_text("next piece drawn: I 50%, L 50%")
        assert not errors, errors
    finally:
        tab.close()
        board.shutdown()
        board.server_close()
