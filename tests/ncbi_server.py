"""A real local HTTP server that imitates NCBI's PubMed download site, with knobs to make it misbehave.

It serves a folder the test fills (`pubmed/baseline/`, `pubmed/updatefiles/`, ...) with Apache-style
directory listings, honours `Range: bytes=N-` with 206 answers, and records every request it sees so a test
can check that a client really resumed. Faults are armed per file name and consumed by the next requests:

    with serve_ncbi(tmp_path / "site") as server:
        publish_excerpts(server, BASELINE, BASELINE_EXCERPTS)
        server.truncate_next("pubmed26n0001.xml.gz", after_bytes=100_000)
        source_url = server.url(BASELINE)
"""

from __future__ import annotations

import gzip
import hashlib
import html
import re
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from tests.support import shared_data_dir

BASELINE = "pubmed/baseline"
UPDATES = "pubmed/updatefiles"
# Real excerpts from the shared data under NCBI's names: an old MEDLINE sample, a plain current-format article
# (gzipped on publishing), and the pmparser samples of the 2026 baseline and update files.
BASELINE_EXCERPTS: Mapping[str, str] = {
    "pubmed26n0001.xml.gz": "medline16n0902_sample.xml.gz",
    "pubmed26n0002.xml.gz": "pubmed-29768149.xml",
    "pubmed26n1334.xml.gz": "pmparser/tests_testthat_pubmed_sample_baseline_pubmed26n1334.xml.gz",
}
UPDATE_EXCERPTS: Mapping[str, str] = {
    "pubmed26n1335.xml.gz": "pmparser/tests_testthat_pubmed_sample_updatefiles_pubmed26n1335.xml.gz",
}
_GZIP_MAGIC = b"\x1f\x8b"
_RANGE_RE = re.compile(r"^bytes=(?P<start>\d+)-(?P<end>\d*)$")


@dataclass(frozen=True)
class SeenRequest:
    method: str
    path: str
    range: str | None
    user_agent: str | None

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]


class NcbiTestServer:
    """The server's state: its folder, armed faults and the request log. Use it through `serve_ncbi`."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        # Per file name: how many more requests get the fault; None means every request from now on.
        self._failures: dict[str, tuple[int | None, int, float | None]] = {}
        self._truncations: dict[str, tuple[int | None, int, float]] = {}
        self._corruptions: dict[str, int | None] = {}
        self._ignore_range: dict[str, int | None] = {}
        self._seen: list[SeenRequest] = []
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), _Handler)
        self._httpd.ncbi = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/"

    def url(self, directory: str = "") -> str:
        """The URL of a served folder, with the trailing slash NCBI's listings use."""
        directory = directory.strip("/")
        return self.base_url + (quote(directory) + "/" if directory else "")

    # --- content -------------------------------------------------------------------------------------------

    def publish(self, directory: str, name: str, data: bytes, *, md5_format: str = "openssl") -> Path:
        """Serve `data` as `directory/name` with an md5 sidecar in `md5_format` (openssl, md5sum, bare or none)."""
        folder = self.root / directory.strip("/")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_bytes(data)
        digest = hashlib.md5(data, usedforsecurity=False).hexdigest()
        sidecars = {"openssl": f"MD5({name})= {digest}\n", "md5sum": f"{digest}  {name}\n", "bare": f"{digest}\n"}
        if md5_format != "none":
            (folder / f"{name}.md5").write_text(sidecars[md5_format])
        return path

    # --- faults --------------------------------------------------------------------------------------------

    def fail_next(
        self, name: str, count: int | None = 1, *, status: int = 503, retry_after: float | None = None
    ) -> None:
        """Answer the next `count` requests for `name` with `status` instead of the file (None: all of them)."""
        with self._lock:
            self._failures[name] = (count, status, retry_after)

    def truncate_next(self, name: str, *, after_bytes: int, count: int | None = 1, stall: float = 0.0) -> None:
        """Announce the full Content-Length, send only `after_bytes` of the body, then close the connection.

        With `stall`, hold the connection silent that many seconds first, the way a hung transfer looks.
        """
        with self._lock:
            self._truncations[name] = (count, after_bytes, stall)

    def corrupt(self, name: str, count: int | None = None) -> None:
        """Serve `name` with flipped bytes so its md5 no longer matches the sidecar."""
        with self._lock:
            self._corruptions[name] = count

    def ignore_range(self, name: str, count: int | None = None) -> None:
        """Answer requests for `name` with the whole file and 200, whatever Range they carry."""
        with self._lock:
            self._ignore_range[name] = count

    # --- observation ---------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[SeenRequest]:
        with self._lock:
            return list(self._seen)

    def requests_for(self, name: str) -> list[SeenRequest]:
        return [seen for seen in self.requests if seen.name == name]

    def ranges_for(self, name: str) -> list[str | None]:
        """The Range header of each request for `name`, in order (None where it asked for the whole file)."""
        return [seen.range for seen in self.requests_for(name)]

    # --- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # --- serving (called on the handler's thread) ----------------------------------------------------------

    def _respond(self, handler: _Handler) -> None:
        path = unquote(urlsplit(handler.path).path)
        seen = SeenRequest(handler.command, path, handler.headers.get("Range"), handler.headers.get("User-Agent"))
        with self._lock:
            self._seen.append(seen)
        failure = self._take_failure(seen.name)
        if failure is not None:
            status, retry_after = failure
            extra = {"Retry-After": str(int(retry_after))} if retry_after is not None else {}
            _send(handler, status, f"injected failure {status}\n".encode(), "text/plain", extra)
            return
        target = (self.root / path.lstrip("/")).resolve()
        if not target.is_relative_to(self.root) or not target.exists():
            _send(handler, 404, b"not found\n", "text/plain")
        elif target.is_dir() and not path.endswith("/"):
            _send(handler, 301, b"", "text/plain", {"Location": quote(path) + "/"})
        elif target.is_dir():
            _send(handler, 200, _listing(target, path).encode(), "text/html; charset=utf-8")
        else:
            self._serve_file(handler, target, seen)

    def _serve_file(self, handler: _Handler, target: Path, seen: SeenRequest) -> None:
        data = target.read_bytes()
        if _take(self._lock, self._corruptions, seen.name):
            data = _flip_middle_byte(data)
        content_type = "text/plain" if target.name.endswith(".md5") else "application/x-gzip"
        total, status, start = len(data), 200, 0
        extra = {"Accept-Ranges": "bytes", "Last-Modified": _http_date(target)}
        wanted = _RANGE_RE.match(seen.range or "")
        if wanted is not None and not _take(self._lock, self._ignore_range, seen.name):
            start = int(wanted["start"])
            if start >= total:
                _send(handler, 416, b"", "text/plain", {"Content-Range": f"bytes */{total}"})
                return
            end = min(int(wanted["end"]) if wanted["end"] else total - 1, total - 1)
            data, status = data[start : end + 1], 206
            extra["Content-Range"] = f"bytes {start}-{end}/{total}"
        truncation = self._take_truncation(seen.name)
        if truncation is None or truncation[0] >= len(data):
            _send(handler, status, data, content_type, extra)
            return
        cut, stall = truncation
        _send_headers(handler, status, len(data), content_type, extra)
        handler.wfile.write(data[:cut])
        handler.wfile.flush()
        time.sleep(stall)
        # Closing with the body short of Content-Length is what a dropped transfer looks like to the client.
        handler.close_connection = True

    def _take_failure(self, name: str) -> tuple[int, float | None] | None:
        with self._lock:
            armed = self._failures.get(name)
            if armed is None:
                return None
            count, status, retry_after = armed
            if count is not None:
                if count <= 1:
                    del self._failures[name]
                else:
                    self._failures[name] = (count - 1, status, retry_after)
            return status, retry_after

    def _take_truncation(self, name: str) -> tuple[int, float] | None:
        with self._lock:
            armed = self._truncations.get(name)
            if armed is None:
                return None
            count, after_bytes, stall = armed
            if count is not None:
                if count <= 1:
                    del self._truncations[name]
                else:
                    self._truncations[name] = (count - 1, after_bytes, stall)
            return after_bytes, stall


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # Clients drop connections mid-body on purpose (unread error pages, cut transfers); that is not a failure.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Idle keep-alive connections give up soon, so no handler thread outlives a test for long.
    timeout = 5

    def do_GET(self) -> None:
        self.server.ncbi._respond(self)  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: object) -> None:
        """Keep the test output quiet; the request log is on the server object."""


@contextmanager
def serve_ncbi(root: Path) -> Iterator[NcbiTestServer]:
    """Run an `NcbiTestServer` over `root` on a free local port for the duration of the block."""
    server = NcbiTestServer(root)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def excerpt_bytes(relative: str) -> bytes:
    """A real PubMed excerpt from the shared data, gzip-compressed as NCBI serves every file."""
    data = (shared_data_dir() / "pubmed" / "xml" / relative).read_bytes()
    return data if data.startswith(_GZIP_MAGIC) else gzip.compress(data, mtime=0)


def publish_excerpts(server: NcbiTestServer, directory: str, excerpts: Mapping[str, str]) -> dict[str, bytes]:
    """Publish each `{ncbi_name: shared_data_path}` excerpt with an md5 sidecar; returns the bytes served."""
    published = {}
    for name, relative in excerpts.items():
        data = excerpt_bytes(relative)
        server.publish(directory, name, data)
        published[name] = data
    return published


def _take(lock: threading.Lock, armed: dict[str, int | None], name: str) -> bool:
    """Consume one use of a fault armed for `name`; whether it applies to this request."""
    with lock:
        if name not in armed:
            return False
        count = armed[name]
        if count is not None:
            if count <= 1:
                del armed[name]
            else:
                armed[name] = count - 1
        return True


def _flip_middle_byte(data: bytes) -> bytes:
    if not data:
        return data
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]


def _send(
    handler: _Handler, status: int, body: bytes, content_type: str, extra: Mapping[str, str] | None = None
) -> None:
    _send_headers(handler, status, len(body), content_type, extra or {})
    handler.wfile.write(body)


def _send_headers(handler: _Handler, status: int, length: int, content_type: str, extra: Mapping[str, str]) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(length))
    for key, value in extra.items():
        handler.send_header(key, value)
    handler.end_headers()


def _listing(folder: Path, url_path: str) -> str:
    """An Apache-style index page like NCBI's, sort links and parent link included."""
    rows = ['<a href="?C=N;O=D">Name</a>  <a href="?C=M;O=A">Last modified</a>  <a href="?C=S;O=A">Size</a>', "<hr>"]
    rows.append(f'<a href="{html.escape(url_path.rstrip("/").rsplit("/", 1)[0] + "/")}">Parent Directory</a>')
    for entry in sorted(folder.iterdir()):
        name = entry.name + ("/" if entry.is_dir() else "")
        modified = datetime.fromtimestamp(entry.stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M")
        size = "-" if entry.is_dir() else str(entry.stat().st_size)
        rows.append(f'<a href="{quote(name)}">{html.escape(name)}</a>  {modified}  {size}')
    title = html.escape(f"Index of {url_path}")
    body = "\n".join(rows)
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1><pre>{body}</pre></body></html>\n"


def _http_date(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")
