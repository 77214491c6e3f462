"""Fetching PubMed baseline and update files from NCBI: listing, md5 sidecars, resumable verified downloads.

NCBI publishes each `pubmedYYnNNNN.xml.gz` next to a `.md5` sidecar. A download streams into `<name>.part`,
resumes with a Range request after a cut connection or a killed run, retries transient failures with
exponential backoff, and only becomes `<name>` (atomically renamed) once its md5 matches the sidecar's.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx

from indexer.errors import IndexerError

log = logging.getLogger(__name__)

BASELINE_URL = "https://ftp.ncbi.nlm.nih.gov/pubmed/baseline/"
UPDATES_URL = "https://ftp.ncbi.nlm.nih.gov/pubmed/updatefiles/"
USER_AGENT = "VeriMed/0.1 (PubMed file sync)"

FILE_NAME_RE = re.compile(r"^pubmed\d{2}n\d{4}\.xml\.gz$")
PART_SUFFIX = ".part"
_CHUNK_BYTES = 1 << 20
_MD5_HEX = r"[0-9a-fA-F]{32}"
# The three sidecar layouts: openssl's `MD5(name)= hex` (what NCBI writes), md5sum's `hex  name`, a bare digest.
_MD5_OPENSSL_RE = re.compile(rf"^MD5\s*\((?P<name>[^)]*)\)\s*=\s*(?P<hex>{_MD5_HEX})$")
_MD5_SUM_RE = re.compile(rf"^(?P<hex>{_MD5_HEX})\s+\*?(?P<name>\S+)$")
_MD5_BARE_RE = re.compile(rf"^(?P<hex>{_MD5_HEX})$")
_CONTENT_RANGE_RE = re.compile(r"^bytes\s+(?P<start>\d+)-(?P<end>\d+)/(?P<total>\d+|\*)$")

Sleep = Callable[[float], None]


class DownloadError(IndexerError):
    """A fetch from NCBI failed in a way retrying will not fix (404, forbidden, persistent md5 mismatch)."""


class ChecksumMismatchError(DownloadError):
    """The downloaded bytes never matched the published md5, even after fresh downloads."""

    def __init__(self, name: str, expected: str, actual: str, attempts: int) -> None:
        super().__init__(f"{name}: md5 mismatch after {attempts} attempts: expected {expected}, got {actual}")
        self.name = name
        self.expected = expected
        self.actual = actual


class TransientDownloadError(DownloadError):
    """NCBI stayed unreachable or overloaded through every retry; trying again later may succeed."""

    transient = True


@dataclass(frozen=True)
class RemoteFile:
    """One published PubMed file and the address of its md5 sidecar."""

    name: str
    url: str
    md5_url: str


@dataclass(frozen=True)
class NcbiSource:
    """A directory of PubMed files on NCBI's server (or a mirror of it, such as the tests' local server)."""

    base_url: str

    def __post_init__(self) -> None:
        # Relative names resolve against the directory only when its URL ends with a slash.
        object.__setattr__(self, "base_url", _directory_url(self.base_url))

    @classmethod
    def baseline(cls) -> NcbiSource:
        return cls(BASELINE_URL)

    @classmethod
    def updates(cls) -> NcbiSource:
        return cls(UPDATES_URL)

    def list_files(self, *, client: httpx.Client) -> list[RemoteFile]:
        return list_files(self.base_url, client=client)

    def remote_file(self, name: str) -> RemoteFile:
        return remote_file(self.base_url, name)


def default_client(*, timeout: float = 60.0, user_agent: str = USER_AGENT) -> httpx.Client:
    """A client for NCBI: bounded connect and read waits so a stalled transfer fails and gets resumed."""
    return httpx.Client(
        timeout=httpx.Timeout(timeout, connect=15.0),
        follow_redirects=True,
        headers={"User-Agent": user_agent},
    )


def remote_file(base_url: str, name: str) -> RemoteFile:
    url = _directory_url(base_url) + name
    return RemoteFile(name=name, url=url, md5_url=url + ".md5")


def list_files(
    base_url: str, *, client: httpx.Client, retries: int = 3, backoff: float = 1.0, sleep: Sleep = time.sleep
) -> list[RemoteFile]:
    """The PubMed files a directory listing links to, sorted by name; sidecars, pages and other files are skipped."""
    base_url = _directory_url(base_url)
    html = _get_text(base_url, client=client, retries=retries, backoff=backoff, sleep=sleep)
    names = {name for name in (_link_name(href) for href in _hrefs(html)) if FILE_NAME_RE.match(name)}
    return [remote_file(base_url, name) for name in sorted(names)]


def fetch_md5(
    remote: RemoteFile, *, client: httpx.Client, retries: int = 3, backoff: float = 1.0, sleep: Sleep = time.sleep
) -> str:
    """The md5 NCBI publishes for `remote`, as 32 lowercase hex digits."""
    text = _get_text(remote.md5_url, client=client, retries=retries, backoff=backoff, sleep=sleep)
    return parse_md5(text, name=remote.name)


def parse_md5(text: str, *, name: str | None = None) -> str:
    """The digest in an md5 sidecar; a sidecar naming a different file than `name` is rejected."""
    line = text.strip()
    for pattern in (_MD5_OPENSSL_RE, _MD5_SUM_RE, _MD5_BARE_RE):
        match = pattern.match(line)
        if match is None:
            continue
        named = match.groupdict().get("name")
        if name is not None and named is not None and Path(named).name != name:
            raise DownloadError(f"md5 sidecar for {name} names another file: {named!r}")
        return match["hex"].lower()
    raise DownloadError(f"unrecognised md5 sidecar{f' for {name}' if name else ''}: {line[:100]!r}")


def file_md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def download(
    remote: RemoteFile,
    dest_dir: Path,
    *,
    client: httpx.Client,
    expected_md5: str,
    retries: int = 5,
    backoff: float = 1.0,
    max_backoff: float = 60.0,
    sleep: Sleep = time.sleep,
) -> Path:
    """Download `remote` into `dest_dir` and return the verified file's path.

    `retries` bounds the failed attempts in a row: an attempt that grows the `.part` file past anything seen
    before is progress on a flaky link and resets the count; md5 mismatches always count.
    """
    expected = parse_md5(expected_md5)
    dest_dir.mkdir(parents=True, exist_ok=True)
    final = dest_dir / remote.name
    part = dest_dir / (remote.name + PART_SUFFIX)
    if _verified(final, expected):
        part.unlink(missing_ok=True)
        return final
    failures = 0
    high_water = _size(part)
    while True:
        try:
            _transfer(remote, part, client=client)
            return _promote(part, final, expected)
        except _BadChecksumError as exc:
            failures += 1
            if failures >= retries:
                raise ChecksumMismatchError(remote.name, expected, exc.actual, failures) from None
            delay = _delay(backoff, failures, max_backoff)
            log.warning("%s: md5 mismatch (got %s), downloading again in %.1fs", remote.name, exc.actual, delay)
        except _RetryableError as exc:
            if _size(part) > high_water:
                high_water = _size(part)
                failures = 0
            failures += 1
            if failures >= retries:
                raise TransientDownloadError(f"{remote.name}: gave up after {failures} failed attempts: {exc}") from exc
            delay = max(_delay(backoff, failures, max_backoff), min(exc.retry_after or 0.0, max_backoff))
            log.warning("%s: %s; retrying in %.1fs from byte %d", remote.name, exc, delay, _size(part))
        sleep(delay)


class _RetryableError(Exception):
    """A failure worth another attempt: network trouble, a cut body, 5xx or 429."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _BadChecksumError(Exception):
    def __init__(self, actual: str) -> None:
        super().__init__(actual)
        self.actual = actual


def _transfer(remote: RemoteFile, part: Path, *, client: httpx.Client) -> None:
    """Bring `part` up to the whole remote body, appending to what an earlier attempt left behind."""
    offset = _size(part)
    # identity: Range offsets and md5 must refer to the file's own bytes, never to a re-encoded stream.
    headers = {"Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    try:
        with client.stream("GET", remote.url, headers=headers) as response:
            if response.status_code == 416 and offset:
                # Nothing past our end: the part is already whole (a run killed before the rename) or oversized.
                # The md5 check decides which.
                return
            _check_status(response, remote.url)
            append, total = _plan_write(response, offset, part)
            _write_body(response, part, append=append, total=total)
    except httpx.UnsupportedProtocol as exc:
        raise DownloadError(f"{remote.url}: {exc}") from exc
    except httpx.TransportError as exc:
        raise _RetryableError(f"{type(exc).__name__}: {exc}") from exc


def _plan_write(response: httpx.Response, offset: int, part: Path) -> tuple[bool, int | None]:
    """Whether to append to `part`, and the size the whole file must reach."""
    if response.status_code == 206:
        content_range = _CONTENT_RANGE_RE.match(response.headers.get("Content-Range", "").strip())
        if content_range is None or int(content_range["start"]) != offset:
            # A range other than the one asked for cannot be stitched onto the part safely.
            part.unlink(missing_ok=True)
            raise _RetryableError(
                f"unexpected Content-Range {response.headers.get('Content-Range')!r} for byte {offset}"
            )
        total = content_range["total"]
        return True, None if total == "*" else int(total)
    if response.status_code == 200:
        # The server ignored Range (or none was sent): the body is the whole file, so start over.
        return False, _content_length(response)
    raise DownloadError(f"{response.url}: unexpected HTTP {response.status_code}")


def _write_body(response: httpx.Response, part: Path, *, append: bool, total: int | None) -> None:
    with part.open("ab" if append else "wb") as handle:
        # No chunk_size: httpx would buffer up to it, and a cut connection would lose the buffered bytes.
        for chunk in response.iter_raw():
            handle.write(chunk)
        handle.flush()
        os.fsync(handle.fileno())
        size = handle.tell()
    # httpx usually reports a short body itself; this also catches servers that misreport.
    if total is not None and size < total:
        raise _RetryableError(f"transfer cut short at {size} of {total} bytes")


def _promote(part: Path, final: Path, expected: str) -> Path:
    actual = file_md5(part)
    if actual != expected:
        # Corrupt bytes may sit anywhere in the part, so resuming cannot repair it: start from zero.
        part.unlink()
        raise _BadChecksumError(actual)
    os.replace(part, final)
    return final


def _check_status(response: httpx.Response, url: str) -> None:
    status = response.status_code
    if status == 429 or status >= 500:
        raise _RetryableError(f"HTTP {status} from {url}", retry_after=_retry_after(response))
    if status >= 400:
        raise DownloadError(f"HTTP {status} from {url}")


def _get_text(url: str, *, client: httpx.Client, retries: int, backoff: float, sleep: Sleep) -> str:
    """A small GET (listing, sidecar) with the same retry policy as downloads."""
    failures = 0
    while True:
        try:
            try:
                response = client.get(url)
            except httpx.UnsupportedProtocol as exc:
                raise DownloadError(f"{url}: {exc}") from exc
            except httpx.TransportError as exc:
                raise _RetryableError(f"{type(exc).__name__}: {exc}") from exc
            _check_status(response, url)
            if response.status_code != 200:
                raise DownloadError(f"{url}: unexpected HTTP {response.status_code}")
            return response.text
        except _RetryableError as exc:
            failures += 1
            if failures >= retries:
                raise TransientDownloadError(f"{url}: gave up after {failures} failed attempts: {exc}") from exc
            sleep(max(_delay(backoff, failures, 60.0), min(exc.retry_after or 0.0, 60.0)))


class _LinkCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs.extend(value for key, value in attrs if key == "href" and value)


def _hrefs(html: str) -> list[str]:
    collector = _LinkCollector()
    collector.feed(html)
    collector.close()
    return collector.hrefs


def _link_name(href: str) -> str:
    """The file name a link points at, whether written relative, rooted or absolute."""
    return unquote(urlsplit(href).path.rsplit("/", 1)[-1])


def _directory_url(url: str) -> str:
    return url if url.endswith("/") else url + "/"


def _verified(path: Path, expected: str) -> bool:
    if not path.is_file():
        return False
    if file_md5(path) == expected:
        return True
    log.warning("%s: present but its md5 does not match; downloading it again", path)
    path.unlink()
    return False


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _content_length(response: httpx.Response) -> int | None:
    value = response.headers.get("Content-Length", "")
    return int(value) if value.isdigit() else None


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "").strip()
    return float(value) if value.isdigit() else None


def _delay(backoff: float, failures: int, max_backoff: float) -> float:
    return float(min(backoff * 2 ** (failures - 1), max_backoff))
