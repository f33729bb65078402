"""The board's HTTP server: the standard library's threading server over
:func:`babytris.board.api.answer` and the page's three packaged files.

Sound by construction: the static files are read from the package once, at
start, and served by name from that table (no path reaches the file system,
so none can traverse it); a bad request is a 400 with a one-line JSON reason,
an unknown path a 404; every answer forbids other hosts to the page
(Content-Security-Policy ``default-src 'self'``); bound to loopback, the
server answers only requests addressed to a loopback name (a web page
elsewhere cannot reach it by DNS rebinding), and its API refuses what a
browser marks as sent by another site's page (``Sec-Fetch-Site: cross-site``).
Each request runs on its own
thread, so several tabs are served at once.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from ..game.validation import ArgumentTypeError, check_int
from .analyst import Analyst
from .api import NoSuchPath, answer

__all__ = ["BoardServer", "STATIC_FILES", "is_loopback", "static_files"]

#: The page's files, in babytris/board/static/, with their media types.
STATIC_FILES = {
    "index.html": "text/html; charset=utf-8",
    "board.js": "text/javascript; charset=utf-8",
    "board.css": "text/css; charset=utf-8",
}

#: Every answer's headers beside its type: nothing from another host, no sniffing, no caching of live answers.
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
}


def static_files() -> dict[str, bytes]:
    """The page's files as the package ships them, by name."""
    folder = resources.files(__package__).joinpath("static")
    return {name: folder.joinpath(name).read_bytes() for name in STATIC_FILES}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine's loopback."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BoardServer(ThreadingHTTPServer):
    """The board's server for ``analyst`` on ``(host, port)``: ``"127.0.0.1"`` serves this
    machine only (``babytris board``'s default, with port 8765); port 0 takes any free one.

    Attributes:
        url: the page's address (``http://host:port/``).
    """

    daemon_threads = True  # (an open tab's connection does not hold the command's exit)
    block_on_close = False

    def __init__(self, analyst: Analyst, host: str, port: int) -> None:
        if not isinstance(analyst, Analyst):
            raise ArgumentTypeError(f"analyst must be a babytris.board.Analyst, got {type(analyst).__name__}")
        if not isinstance(host, str) or not host:
            raise ValueError(f"host must be an address or a name (a non-empty text), got {host!r}")
        port = check_int("port", port, 0, 65535)
        self.analyst = analyst
        self.files = static_files()
        self.loopback = is_loopback(host)
        if ":" in host:  # (an IPv6 address, ::1 or ::, needs its family: the server's default is IPv4)
            self.address_family = socket.AF_INET6
        super().__init__((host.strip("[]"), port), _Handler)
        name = host if ":" not in host else f"[{host.strip('[]')}]"
        self.url = f"http://{name}:{self.server_address[1]}/"


class _Handler(BaseHTTPRequestHandler):
    server: BoardServer
    timeout = 30  # (a connection left idle this long is closed: it holds a thread)
    protocol_version = "HTTP/1.1"
    # (headers and body go out in two writes: with Nagle's algorithm the body then waited for the
    # client's delayed ACK, 40 ms an answer on a kept-alive connection; 1 ms without)
    disable_nagle_algorithm = True

    def do_GET(self) -> None:  # noqa: N802  (http.server's name)
        path, _, query = self.path.partition("?")  # (not urlsplit: it reads '//x/...' as a host)
        if self.server.loopback and not is_loopback(_host_name(self.headers.get("Host", ""))):
            self._send(403, _json({"error": "this board answers requests to 127.0.0.1 or localhost only"}))
            return
        if path.startswith("/api/"):
            if self.headers.get("Sec-Fetch-Site") == "cross-site":  # (a browser's word: scripts send none)
                # (another site's page cannot read the answers, but could keep the board busy: solves, answers)
                self._send(
                    403, _json({"error": "the board's API answers its own page and scripts, not another site's"})
                )
                return
            self._api(path, query.partition("#")[0])
            return
        name = "index.html" if path == "/" else path.removeprefix("/static/")
        if name not in STATIC_FILES or path not in ("/", f"/static/{name}"):
            self._send(404, _json({"error": f"no such file {path[:80]!r}"}))
            return
        self._send(200, self.server.files[name], STATIC_FILES[name])

    def _refuse(self) -> None:
        """Any method but GET: 405, in JSON like every other refusal (http.server's default is a 501 page)."""
        self.close_connection = True  # (a body it sent is not read)
        self._send(405, _json({"error": f"{self.command} is not served here: the board answers GET only"}))

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _refuse  # noqa: N815  (http.server's names)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a malformed request line, a line or headers too long, an
        HTTP version it does not speak) in one line of JSON like every other; a method it has no
        handler for is a 405 like any method but GET (its defaults: an HTML page, a 501)."""
        if code == HTTPStatus.NOT_IMPLEMENTED:
            self._refuse()
            return
        self.close_connection = True
        reason = message or self.responses.get(code, (HTTPStatus.BAD_REQUEST.phrase,))[0]
        self._send(code, _json({"error": _line(ValueError(reason))}))

    def _api(self, path: str, query: str) -> None:
        try:
            params = parse_qs(query, keep_blank_values=True, strict_parsing=False, max_num_fields=20)
            body, status = _json(answer(self.server.analyst, path, params)), 200
        except NoSuchPath as err:
            body, status = _json({"error": _line(err)}), 404
        except (ValueError, KeyError, MemoryError) as err:  # (a refused solve of an opponent too)
            body, status = _json({"error": _line(err)}), 400
        except Exception as err:  # a fault of babytris's, not of the request: said in one line, logged
            print(f"babytris board: {type(err).__name__} on {path}: {err}", file=sys.stderr)
            body, status = _json({"error": f"internal error ({type(err).__name__}); see the server's log"}), 500
        self._send(status, body)

    def _send(self, status: int, body: bytes, media: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        for name, value in HEADERS.items():
            self.send_header(name, value)
        if status == HTTPStatus.METHOD_NOT_ALLOWED:  # (RFC 9110: a 405 names the methods served)
            self.send_header("Allow", "GET")
        self.end_headers()
        if self.command != "HEAD":  # (a HEAD answer has the headers alone)
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # (quiet: the command prints its URL only)
        pass


def _host_name(host: str) -> str:
    """The name in a Host header, without the port."""
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _line(err: BaseException) -> str:
    text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    return " ".join(text.split())[:400] or type(err).__name__


def _json(body: dict[str, Any]) -> bytes:
    return json.dumps(body, allow_nan=False, separators=(",", ":")).encode()
