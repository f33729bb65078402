"""The analysis board without a browser: the position's text form, the JSON
API's answers against the solution's own values and the Game's moves, and
the server's soundness (400 with a one-line reason, no path outside the
package, loopback only, several requests at once)."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import babytris
from babytris import Game, Rules
from babytris.board import Analyst, BoardServer, Position, parse_position, position_text
from babytris.board.analyst import MARKS, mark
from babytris.board.api import answer
from babytris.board.server import static_files


@pytest.fixture(scope="module")
def solution():
    return babytris.solve(width=4, height=5)


@pytest.fixture(scope="module")
def analyst(solution):
    return Analyst(solution, max_memory=2**30)


@pytest.fixture(scope="module")
def server(analyst):
    board = BoardServer(analyst, "127.0.0.1", 0)
    thread = threading.Thread(target=board.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield board
    board.shutdown()
    board.server_close()


def get(server, path, host=None, **params):
    """(status, JSON body or bytes, headers) of a GET at the server."""
    url = server.url.rstrip("/") + path + (f"?{urlencode(params)}" if params else "")
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, body, headers = response.status, response.read(), response.headers
    except urllib.error.HTTPError as err:
        status, body, headers = err.code, err.read(), err.headers
    if headers.get("Content-Type") == "application/json":
        return status, json.loads(body), headers
    return status, body, headers


# ---- the text form ----


@pytest.mark.parametrize(
    "fields, text",
    [
        ({}, "#..#/##.#;L"),
        ({"preview": 2}, "....;I;L,I"),
        ({"hold": True}, "#.../##..;L;I!"),
        ({"hold": True, "preview": 1}, "....;L;I;-"),
        ({"randomizer": "bag", "bag_copies": 2}, "....;L;I,I,L"),
    ],
)
def test_a_position_text_reads_back_as_written(fields, text):
    rules = Rules(width=4, height=5, **fields)
    assert position_text(parse_position(text, rules), rules) == text


def test_the_text_form_fields():
    rules = Rules(width=4, height=5, preview=1, hold=True)
    p = parse_position("#..#/##.#;L;I;I!", rules)
    assert p == Position(board=0b1001_1011, piece=1, queue=(0,), held=0, locked=True)
    assert position_text(Position(0, 0, (1,)), rules) == "....;I;L;-"  # (the empty rows on top left out)
    assert parse_position("..../..../..../..../....;I;L;-", rules).board == 0


@pytest.mark.parametrize(
    "text, words",
    [
        ("#..#", "these rules take 2 fields (rows;piece), got 1"),
        ("#..#;L;I", "these rules take 2 fields"),
        ("#.#;L", "rows must be at most 5 rows of 4 '#' or '.'"),
        ("#..x;L", "rows must be"),
        ("..../..../..../..../..../....;L", "rows must be at most 5 rows"),
        ("....;T", "piece 'T' is not a piece of these rules (I, L)"),
        ("", "position must be a text of 1 to 1000 characters"),
        ("." * 2000, "position must be a text of 1 to 1000 characters"),
    ],
)
def test_a_malformed_text_names_its_field(text, words):
    with pytest.raises(ValueError, match="position") as err:
        parse_position(text, Rules(width=4, height=5))
    assert words in str(err.value) and "\n" not in str(err.value)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 2**20 - 1),
    st.integers(0, 1),
    st.lists(st.integers(0, 1), min_size=2, max_size=2),
    st.one_of(st.none(), st.integers(0, 1)),
    st.booleans(),
)
def test_every_position_reads_back_from_its_text(bits, piece, queue, held, locked):
    rules = Rules(width=4, height=5, preview=2, hold=True)
    position = Position(bits, piece, tuple(queue), held, locked and held is not None)
    assert parse_position(position_text(position, rules), rules) == position


def test_a_bag_text_holds_what_the_bag_can():
    rules = Rules(width=4, height=4, randomizer="bag")
    with pytest.raises(ValueError, match=r"bag must hold 1 to 1 of a piece \(rules.bag_copies\)"):
        parse_position("....;L;I,I", rules)
    with pytest.raises(ValueError, match="bag must hold"):
        parse_position("....;L;", rules)


# ---- the answers, against the solution ----


def test_every_move_has_the_solutions_value_and_regret(analyst, solution):
    position = parse_position("#.../##..;L", solution.rules)
    answer_ = analyst.analysis(position)
    values = {f"{p.piece}-{p.index}": v for p, v in solution.action_values(position.board, "L").items()}
    assert {m["id"]: m["value"] for m in answer_["moves"]} == values
    assert answer_["value"] == solution.value(position.board, "L") == max(values.values())
    best = max(values.values())
    for m in answer_["moves"]:
        assert m["regret"] == (0.0 if best - m["value"] <= solution.tie_slack else best - m["value"])
        assert m["mark"] == mark(m["regret"])
    (chosen,) = [m for m in answer_["moves"] if m["best"]]
    assert chosen["id"] == f"L-{solution.best_action(position.board, 'L').index}"
    assert [m["regret"] for m in answer_["moves"]] == sorted(m["regret"] for m in answer_["moves"])
    assert answer_["chances"] == {"I": 0.5, "L": 0.5}


def test_the_marks_and_their_thresholds():
    assert [mark(r) for r in (0.0, 0.099, 0.1, 0.29, 0.3, 0.99, 1.0, 5.0)] == ["", "", "?!", "?!", "?", "?", "??", "??"]
    assert [sign for _, sign in MARKS] == ["??", "?", "?!"]


def test_the_moves_land_where_the_game_lands_them(analyst, solution):
    position = parse_position("#.../##..;I", solution.rules)
    game = Game(solution.rules)
    game.board, game.piece = position.board, 0
    moves = {f"I-{m.placement.index}": m for m in game.moves()}
    answered = analyst.analysis(position)["moves"]
    assert {m["id"] for m in answered} == set(moves)
    for m in answered:
        cells = sum(1 << (r * 4 + c) for c, r in m["cells"])
        assert cells & position.board == 0 and bin(cells).count("1") == 3
        assert (m["points"], m["lines"]) == (moves[m["id"]].points, moves[m["id"]].lines)
    (clear,) = [m for m in answered if m["lines"]]  # the flat I on the bottom row's gap... one move clears
    assert clear["points"] == 1.0


def test_a_play_is_the_games_placement_then_the_drawn_piece(analyst, solution):
    first = analyst.play(parse_position("....;L", solution.rules), "L-0", opponent="random", seed=7, ply=0)
    again = analyst.play(parse_position("....;L", solution.rules), "L-0", opponent="random", seed=7, ply=0)
    assert first == again  # (one seed and ply, one piece)
    game = Game(solution.rules)
    game.piece = 1
    game.place(0)
    assert first["position"] == position_text(
        Position(game.board, solution.rules.piece_index(first["came"])), solution.rules
    )
    drawn = {
        analyst.play(parse_position("....;L", solution.rules), "L-0", opponent="random", seed=7, ply=k)["came"]
        for k in range(20)
    }
    assert drawn == {"I", "L"}
    by_hand = analyst.play(parse_position("....;L", solution.rules), "L-0", opponent="random", seed=0, ply=0, piece=0)
    assert by_hand["came"] == "I"


def test_an_opponent_answers_with_its_solutions_piece(analyst, solution):
    robust = babytris.solve(width=4, height=5, opponent="minimax")
    position = parse_position("#.../##..;L", solution.rules)
    for m in analyst.analysis(position, opponent="minimax")["moves"]:
        played = analyst.play(position, m["id"], opponent="minimax", seed=0, ply=0)
        board = parse_position(played["position"], solution.rules).board
        assert m["answer"] == played["came"] == robust.piece_policy(board)


def test_the_opponents_and_the_second_player_break_ties_by_the_boards_rule():
    last = Analyst(babytris.solve(width=4, height=5, ties="last"), max_memory=2**30)
    robust = babytris.solve(width=4, height=5, opponent="minimax", ties="last")
    first = babytris.solve(width=4, height=5, opponent="minimax")
    tied = [int(b) for b in robust.boards[:20_000] if robust.piece_policy(int(b)) != first.piece_policy(int(b))]
    assert len(tied) > 100  # (the rule decides: else this test could not fail)
    for board in tied[:200]:
        given = last.opponents.piece("minimax", Position(board, 0), (), seed=0, ply=0)
        assert last.rules.piece_names[given] == robust.piece_policy(board)
    moved = [int(b) for b in robust.boards[:400] if robust.best_action(int(b), "L") != first.best_action(int(b), "L")]
    assert len(moved) > 10
    for board in moved:  # (the robust player's move: its ties broken by the same rule)
        summary = last.analysis(Position(board, 1), compare="minimax")["compare"]
        assert summary["theirs"] == f"L-{robust.best_action(board, 'L').index}"


def test_two_players_side_by_side(analyst, solution):
    robust = babytris.solve(width=4, height=5, opponent="minimax")
    position = parse_position("....;L", solution.rules)
    answered = analyst.analysis(position, compare="minimax")
    theirs = robust.best_action(0, "L")
    assert answered["compare"]["theirs"] == f"L-{theirs.index}"
    for m in answered["moves"]:
        assert (
            m["compare"]
            == robust.action_values(0, "L")[next(p for p in robust.action_values(0, "L") if f"L-{p.index}" == m["id"])]
        )
    mine = next(m for m in answered["moves"] if m["best"])
    other = next(m for m in answered["moves"] if m["id"] == answered["compare"]["theirs"])
    assert answered["compare"]["theirs_costs_here"] == other["regret"]
    assert answered["compare"]["mine_costs_there"] == pytest.approx(max(0.0, other["compare"] - mine["compare"]))


@pytest.mark.parametrize(
    "fields",
    [
        {"preview": 1},
        {"hold": True},
        {"randomizer": "bag"},
        {"mirror": True},
        {"moves": "soft"},
        {"hold": True, "preview": 1},
        {"top_out": True},
        {"objective": "combo", "discount": 1.0, "start": 0b1000_0001},  # (a placement must clear a row)
        {"pieces": ["tetrominoes"], "height": 5},
    ],
)
def test_every_game_plays_through_the_api_with_the_solutions_values(fields):
    solution = babytris.solve(**{"width": 4, "height": 4, **fields})
    analyst = Analyst(solution, max_memory=2**30)
    game = Game(solution.rules, seed=3)
    pos = position_text(
        Position(
            game.board,
            game.piece,
            tuple(game.queue),
            game.held,
            game.locked,
            None if game.bag_left is None else tuple(sorted(game.bag_left)),
        ),
        solution.rules,
    )
    for ply in range(8):
        answered = answer(analyst, "/api/position", {"pos": [pos]})
        if answered["over"]:
            break
        p = parse_position(pos, solution.rules)
        held = p.held if solution.rules.hold else None
        assert answered["value"] == solution.value(p.board, p.piece, p.queue, held, p.locked, p.bag)
        move = answered["moves"][ply % len(answered["moves"])]["id"]
        pos = answer(analyst, "/api/play", {"pos": [pos], "move": [move], "ply": [str(ply)]})["position"]
    assert ply >= 1 and (ply >= 3 or fields.get("objective") == "combo")


def test_a_move_that_tops_out_is_marked_lost():
    solution = babytris.solve(width=4, height=4, top_out=True)
    moves = Analyst(solution, max_memory=2**30).analysis(parse_position(".#../###./##..;I", solution.rules))["moves"]
    assert [(m["id"], m["loses"]) for m in moves] == [("I-5", False)] + [(f"I-{k}", True) for k in range(5)]
    assert moves[1]["cells"] == [[0, 3], [1, 3], [2, 3]] and moves[2]["cells"] == [[1, 3], [2, 3], [3, 3]]
    assert moves[3]["cells"] == []  # (resting above the top row: no cell on the board)
    assert all(m["value"] == 0.0 and m["mark"] == "??" for m in moves[1:])


def test_a_lean_solve_is_read_as_the_table(analyst, solution):
    from babytris.board.on_demand import LeanView

    lean = Analyst(LeanView(babytris.solve_lean(width=4, height=5)), max_memory=2**30)
    for text in ("....;L", "#.../##..;I", "#..#/##.#;L"):
        position = parse_position(text, solution.rules)
        mine, table = lean.analysis(position), analyst.analysis(position)
        assert mine["value"] == pytest.approx(table["value"], abs=2 * solution.error_bound)
        assert {m["id"]: m["value"] for m in mine["moves"]} == pytest.approx(
            {m["id"]: m["value"] for m in table["moves"]}, abs=2 * solution.error_bound
        )
        assert [m["id"] for m in mine["moves"] if m["best"]] == [m["id"] for m in table["moves"] if m["best"]]
    assert lean.opponents.available == ("random",) and answer(lean, "/api/game", {})["result"] == "lean"
    with pytest.raises(ValueError, match="compare: a lean solve holds one player's board values"):
        lean.analysis(parse_position("....;L", solution.rules), compare="minimax")
    with pytest.raises(ValueError, match="no game of these rules reaches"):
        lean.analysis(parse_position("####;L", solution.rules))


def test_a_sharded_solve_is_read_as_the_table(analyst, solution, tmp_path):
    distributed = pytest.importorskip("distributed", reason="dask.distributed not installed (pip install '.[dask]')")
    from babytris.board.on_demand import ShardedView

    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        babytris.solve_sharded(solution.rules, client, out=tmp_path / "shards")
    sharded = Analyst(ShardedView(babytris.load_sharded(tmp_path / "shards")), max_memory=2**30)
    for text in ("....;L", "#.../##..;I"):
        position = parse_position(text, solution.rules)
        mine, table = sharded.analysis(position), analyst.analysis(position)
        assert mine["value"] == pytest.approx(table["value"], abs=1e-7)
        assert {m["id"]: m["value"] for m in mine["moves"]} == pytest.approx(
            {m["id"]: m["value"] for m in table["moves"]}, abs=1e-7
        )
        assert [m["id"] for m in mine["moves"] if m["best"]] == [m["id"] for m in table["moves"] if m["best"]]
    assert answer(sharded, "/api/game", {})["result"] == "sharded"


def test_a_position_in_jupyter(solution):
    from babytris.board import PositionView
    from babytris.game.svg import COLORS

    view = PositionView(solution, "#.../##..;L")
    html = view._repr_html_()
    values = solution.action_values(parse_position("#.../##..;L", solution.rules).board, "L")
    for placement, value in values.items():
        assert f"<td>L-{placement.index}</td><td>{value:.4f}</td>" in html
    assert html.count(f'fill="{COLORS["piece"]}"') == 3  # the best move landed: its three cells
    assert repr(view) == f"<PositionView '#.../##..;L': 12 moves, value {max(values.values()):.4f}>"


def test_the_whole_board_in_jupyter(solution):
    from babytris.board import BoardFrame

    frame = BoardFrame(solution, "#.../##..;L")
    try:
        assert frame.url.endswith("/?pos=%23...%2F%23%23..%3BL") and frame.url.startswith("http://127.0.0.1:")
        assert frame._repr_html_().startswith(f'<iframe src="{frame.url}"')
        with urllib.request.urlopen(frame.url, timeout=10) as response:
            assert response.read() == static_files()["index.html"]
    finally:
        frame.close()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(frame.url, timeout=2)
    with pytest.raises(ValueError, match="position: piece 'T' is not a piece"):
        BoardFrame(solution, "....;T")
    with pytest.raises(ValueError, match=r"width must be an integer in \[1, 100000\], got '80%'"):
        BoardFrame(solution, width="80%")  # (the iframe's size in pixels: it was written into the page unchecked)


def test_bad_arguments_are_refused_by_name(analyst, solution):
    import numpy as np

    with pytest.raises(ValueError, match="solution must be a babytris.Solution"):
        Analyst("4x5.npz", max_memory=2**30)
    with pytest.raises(ValueError, match=r"max_memory must be an integer number of bytes in \[2\*\*20, 2\*\*63\)"):
        Analyst(solution, max_memory=10)
    with pytest.raises(ValueError, match=r"port must be an integer in \[0, 65535\], got 70000"):
        BoardServer(analyst, "127.0.0.1", 70000)
    with pytest.raises(ValueError, match="analyst must be a babytris.board.Analyst"):
        BoardServer(solution, "127.0.0.1", 0)
    with pytest.raises(ValueError, match="host must be an address"):
        BoardServer(analyst, "", 0)
    board = BoardServer(analyst, "127.0.0.1", np.int64(0))  # (numpy scalars taken)
    assert board.server_address[1] > 0
    board.server_close()
    assert Analyst(solution, max_memory=np.int64(2**30)).rules == solution.rules


def test_a_solution_whose_values_are_not_the_players_is_refused():
    with pytest.raises(ValueError, match="solution: the board shows an optimal player's values"):
        Analyst(babytris.solve(width=3, height=3, opponent="gaps"), max_memory=2**30)


# ---- the server ----


def test_the_page_and_its_files_come_from_the_package(server):
    files = static_files()
    for path, name in [("/", "index.html"), ("/static/board.js", "board.js"), ("/static/board.css", "board.css")]:
        status, body, headers = get(server, path)
        assert status == 200 and body == files[name] and len(body) > 500
        assert headers["Content-Security-Policy"].startswith("default-src 'self'")
    assert b"http" not in files["index.html"].replace(b"http://www.w3.org/2000/svg", b"")  # no other host named


@pytest.mark.parametrize(
    "path",
    [
        "/static/../server.py",
        "/static/%2e%2e/server.py",
        "/static/..%2fserver.py",
        "/../../etc/passwd",
        "/static/",
        "/board.js",
        "/static/board.js/x",
        "/static/BOARD.JS",
        "/api/nothing",
        "/static/board.js%00",
    ],
)
def test_no_path_reaches_outside_the_pages_files(server, path):
    status, body, _ = get(server, path)
    assert status == 404 and set(body) == {"error"}


@pytest.mark.parametrize(
    "params, words",
    [
        ({}, "pos is missing"),
        ({"pos": "#####;L"}, "position: rows must be"),
        ({"pos": "..../####;L"}, "position: no game of these rules reaches '####;L'"),
        ({"pos": "....;L", "opponent": "nobody"}, "opponent must be one of random, minimax, minavg, gaps here"),
        ({"pos": "....;L", "compare": "gaps"}, "compare must be random or minimax"),
        ({"pos": "....;L", "seed": "1"}, "unknown parameter 'seed'; this path takes pos, opponent, compare"),
    ],
)
def test_a_bad_position_request_is_a_400_with_one_line(server, params, words):
    status, body, _ = get(server, "/api/position", **params)
    assert status == 400 and words in body["error"] and "\n" not in body["error"]


@pytest.mark.parametrize(
    "params, words",
    [
        ({"pos": "....;L", "move": "I-0"}, "move must be one of the legal moves here (L-0, L-1"),
        ({"pos": "....;L"}, "move is missing"),
        ({"pos": "....;L", "move": "L-0", "seed": "-1"}, "seed must be an integer in [0, 2**53 - 1]"),
        ({"pos": "....;L", "move": "L-0", "seed": "9" * 30}, "seed must be an integer"),
        ({"pos": "....;L", "move": "L-0", "ply": "x"}, "ply must be an integer in [0, 10**9]"),
        ({"pos": "....;L", "move": "L-0", "piece": "T"}, "piece must be one of I, L"),
        ({"pos": "....;L", "move": "L-0", "piece": "I", "opponent": "random"}, "piece and opponent conflict"),
    ],
)
def test_a_bad_play_is_a_400_with_one_line(server, params, words):
    status, body, _ = get(server, "/api/play", **params)
    assert status == 400 and words in body["error"], body


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40), st.sampled_from(["/api/position", "/api/play", "/api/start"]))
def test_no_text_makes_a_500(server, text, path):
    status, body, _ = get(server, path, pos=text, move=text, seed=text)
    assert status in (200, 400) and isinstance(body, dict), body


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "HEAD", "OPTIONS"])
def test_only_get_is_served(server, method):
    request = urllib.request.Request(server.url + "api/game", method=method, data=b"x" if method != "HEAD" else None)
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 405 and err.value.headers["Allow"] == "GET"
    if method != "HEAD":
        assert json.loads(err.value.read()) == {"error": f"{method} is not served here: the board answers GET only"}


def raw(server, request: bytes) -> tuple[int | None, dict]:
    """The status and JSON body of ``request`` sent as it is (what urllib will not send); the
    status None where the request line names no HTTP version the server reads (an HTTP/0.9
    answer: the body alone)."""
    with socket.create_connection(server.server_address[:2], timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    if not answer.startswith(b"HTTP/"):
        return None, json.loads(answer)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"Content-Type: application/json" in head, head
    return int(head.split()[1]), json.loads(body)


@pytest.mark.parametrize(
    "request_line, status, words",
    [
        (b"BREW /api/game HTTP/1.1", 405, "BREW is not served here"),
        (b"GET /api/game HTTP/1.1 more", None, "Bad request version"),
        (b"GET /api/game HTTP/2.0", None, "Invalid HTTP version"),
        (b"GET /api/game HTTP/1.1\r\nHost: localhost\r\nX-Long: " + b"x" * 70_000, 431, "Line too long"),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1", 414, "Request-URI Too Long"),
    ],
)
def test_a_request_http_server_refuses_is_refused_in_json_too(server, request_line, status, words):
    code, body = raw(server, request_line + b"\r\n\r\n")
    assert code == status and words in body["error"], body


def test_a_request_to_another_host_name_is_refused(server):
    status, body, _ = get(server, "/api/game", host="attacker.example:80")
    assert status == 403 and "127.0.0.1 or localhost only" in body["error"]
    assert get(server, "/api/game", host=f"localhost:{server.server_address[1]}")[0] == 200


def test_another_sites_page_cannot_make_the_board_work(server):
    def status(path, site):
        request = urllib.request.Request(server.url.rstrip("/") + path, headers={"Sec-Fetch-Site": site})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as err:
            assert json.loads(err.read())["error"].startswith("the board's API answers its own page"), path
            return err.code

    assert status("/api/position?pos=....%3BL&compare=minimax", "cross-site") == 403
    assert status("/api/game", "cross-site") == 403
    assert status("/api/game", "same-origin") == status("/api/game", "same-site") == status("/api/game", "none") == 200
    assert status("/", "cross-site") == 200  # (the page itself may be shown in another site's iframe: a notebook)


def test_the_ipv6_loopback_is_served_as_loopback(analyst):
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError as err:
        pytest.skip(f"no IPv6 loopback on this machine: {err}")
    board = BoardServer(analyst, "::1", 0)
    threading.Thread(target=board.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        assert board.url == f"http://[::1]:{board.server_address[1]}/"
        assert get(board, "/api/game")[0] == 200  # (Host: [::1]:port, a loopback name)
        assert get(board, "/api/game", host="attacker.example")[0] == 403
    finally:
        board.shutdown()
        board.server_close()


def test_several_tabs_at_once(server, solution):
    texts = ["....;L", "....;I", "#.../##..;L", "#.../##..;I"] * 4
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda t: get(server, "/api/position", pos=t), texts))
    for text, (status, body, _) in zip(texts, answers):
        p = parse_position(text, solution.rules)
        assert status == 200 and body["value"] == solution.value(p.board, p.piece)


def test_the_game_description_is_the_librarys(server, solution):
    from babytris.game.svg import CELL, COLORS

    status, body, _ = get(server, "/api/game")
    assert status == 200
    assert body["palette"] == dict(COLORS) and body["cell"] == CELL
    assert body["start_value"] == solution.start_value and body["estimate"] is False
    assert [p["name"] for p in body["pieces"]] == ["I", "L"]
    status, start, _ = get(server, "/api/start", seed=5)
    assert status == 200 and start["position"] in ("....;I", "....;L")


# ---- boards too big to solve: a feature player's evaluations, labelled estimates ----


def test_a_big_board_shows_dellacherie_evaluations_as_estimates():
    import numpy as np

    from babytris.big import Tetris
    from babytris.board.estimates import DELLACHERIE, EstimateAnalyst

    tetris = Tetris(width=10, height=20)
    analyst = EstimateAnalyst(tetris)
    position = parse_position("#........./##.#######;T", analyst.layout)
    answered = answer(analyst, "/api/position", {"pos": ["#........./##.#######;T"]})
    after = tetris.afterstates(tetris.board(["#.........", "##.#######"]), "T")
    evaluations = tetris.feature_matrix(after, DELLACHERIE[0]) @ np.asarray(DELLACHERIE[1])
    names = [f"T-{int(k)}" for k in after.placement]
    assert {m["id"]: m["value"] for m in answered["moves"]} == dict(zip(names, evaluations.tolist()))
    (best,) = [m for m in answered["moves"] if m["best"]]
    assert best["id"] == names[int(np.argmax(evaluations))] and answered["value"] == evaluations.max()
    assert all(m["mark"] == "" for m in answered["moves"])  # (the marks' thresholds are points)
    for m, k in ((m, names.index(m["id"])) for m in answered["moves"]):
        landed = sum(1 << (r * 10 + c) for c, r in m["cells"])
        assert landed & position.board == 0 and len(m["cells"]) == 4 and m["lines"] == int(after.lines[k])
    played = answer(analyst, "/api/play", {"pos": ["#........./##.#######;T"], "move": [best["id"]], "seed": ["3"]})
    k = names.index(best["id"])
    board = parse_position(played["position"], analyst.layout).board
    assert board == sum(int(r) << (i * 10) for i, r in enumerate(after.rows[k]))
    assert played["lines"] == int(after.lines[k]) == 1 and played["points"] == 1.0
    game = answer(analyst, "/api/game", {})
    assert (game["estimate"], game["result"], game["counts"], game["player"]) == (
        True,
        "estimate",
        "evaluation",
        "dellacherie",
    )
    assert (game["width"], game["height"], game["opponents"], game["compare"]) == (10, 20, ["random"], [])
    with pytest.raises(ValueError, match="compare: a big board has one player"):
        answer(analyst, "/api/position", {"pos": ["..........;T"], "compare": ["minimax"]})
    with pytest.raises(ValueError, match="position: rows: row 0 is full"):
        answer(analyst, "/api/position", {"pos": ["##########;T"]})


def test_a_lean_solve_against_minimax_gives_its_own_opponents_pieces():
    import numpy as np

    from babytris.board.on_demand import LeanView
    from babytris.board.position import Position

    table = babytris.solve(width=4, height=5, opponent="minimax")
    lean = Analyst(LeanView(babytris.solve_lean(width=4, height=5, opponent="minimax")), max_memory=2**30)
    assert lean.opponents.available == ("random", "solution")
    for b in np.random.default_rng(3).choice(table.n_boards, 40, replace=False):
        board = int(table.boards[b])
        after = Position(board, 0, (), None, False, None)
        given = lean.opponents.piece("solution", after, (), seed=0, ply=1)
        assert table.rules.pieces[given].name == table.piece_policy(board)
    start = lean.opponents.start("solution", seed=0)
    assert start.board == table.rules.start and table.rules.pieces[start.piece].name == table.piece_policy(start.board)
