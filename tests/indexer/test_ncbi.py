"""Tests for the NCBI PubMed fetcher against a real local HTTP server that can misbehave on demand."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from indexer.errors import IndexerError
from indexer.ncbi import (
    BASELINE_URL,
    UPDATES_URL,
    ChecksumMismatchError,
    DownloadError,
    NcbiSource,
    RemoteFile,
    TransientDownloadError,
    default_client,
    download,
    fetch_md5,
    list_files,
    parse_md5,
    remote_file,
)
from tests.ncbi_server import (
    BASELINE,
    BASELINE_EXCERPTS,
    UPDATES,
    NcbiTestServer,
    publish_excerpts,
    serve_ncbi,
)
from tests.support import free_port

FIRST = "pubmed26n0001.xml.gz"  # the 650 kB MEDLINE excerpt: big enough to cut mid-transfer
SECOND = "pubmed26n0002.xml.gz"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[NcbiTestServer]:
    with serve_ncbi(tmp_path / "site") as running:
        yield running


@pytest.fixture
def published(server: NcbiTestServer) -> dict[str, bytes]:
    return publish_excerpts(server, BASELINE, BASELINE_EXCERPTS)


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5.0) as opened:
        yield opened


@pytest.fixture
def sleeps() -> list[float]:
    """Stands in for time.sleep: records each backoff instead of waiting."""
    return []


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    return tmp_path / "downloads"


def md5_of(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def fetch(
    server: NcbiTestServer,
    client: httpx.Client,
    dest: Path,
    sleeps: list[float],
    name: str,
    expected_md5: str,
    retries: int = 5,
) -> Path:
    remote = remote_file(server.url(BASELINE), name)
    return download(remote, dest, client=client, expected_md5=expected_md5, retries=retries, sleep=sleeps.append)


# --- listing and md5 sidecars ------------------------------------------------------------------------------


def test_the_listing_keeps_only_pubmed_files_sorted_by_name(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client
) -> None:
    folder = server.root / BASELINE
    for noise in ("README.txt", "stats.html", "pubmed26n0003.xml", "pubmed26n12.xml.gz", "pubmed26n0004.xml.gz.part"):
        (folder / noise).write_text("not a PubMed file\n")
    (folder / "old").mkdir()

    files = list_files(server.url(BASELINE), client=client)

    assert [remote.name for remote in files] == sorted(published)
    first = files[0]
    assert first == RemoteFile(
        name=FIRST, url=server.url(BASELINE) + FIRST, md5_url=server.url(BASELINE) + FIRST + ".md5"
    )


def test_a_source_lists_its_folder_with_or_without_a_trailing_slash(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client
) -> None:
    publish_excerpts(server, UPDATES, {"pubmed26n1335.xml.gz": "pubmed-29768149.xml"})
    baseline = NcbiSource(server.url(BASELINE).rstrip("/"))

    assert [remote.name for remote in baseline.list_files(client=client)] == sorted(published)
    assert [remote.name for remote in NcbiSource(server.url(UPDATES)).list_files(client=client)] == [
        "pubmed26n1335.xml.gz"
    ]
    assert NcbiSource.baseline().base_url == BASELINE_URL
    assert NcbiSource.updates().base_url == UPDATES_URL


def test_the_listing_retries_a_busy_server(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, sleeps: list[float]
) -> None:
    server.fail_next("baseline", count=1, status=503)

    files = list_files(server.url(BASELINE), client=client, sleep=sleeps.append)

    assert len(files) == len(published)
    assert sleeps == [1.0]


@pytest.mark.parametrize(
    "sidecar",
    [
        "MD5(pubmed26n0001.xml.gz)= 0123456789ABCDEF0123456789abcdef\n",
        "0123456789abcdef0123456789ABCDEF  pubmed26n0001.xml.gz\n",
        "0123456789abcdef0123456789abcdef *pubmed26n0001.xml.gz",
        "0123456789abcdef0123456789abcdef\n",
    ],
    ids=["openssl", "md5sum", "md5sum-binary", "bare"],
)
def test_it_parses_the_md5_sidecar_formats(sidecar: str) -> None:
    assert parse_md5(sidecar, name=FIRST) == "0123456789abcdef0123456789abcdef"


@pytest.mark.parametrize(
    "sidecar",
    ["MD5(pubmed26n0002.xml.gz)= 0123456789abcdef0123456789abcdef", "not a digest", "0123456789abcdef", ""],
)
def test_a_sidecar_for_another_file_or_without_a_digest_is_rejected(sidecar: str) -> None:
    with pytest.raises(DownloadError) as raised:
        parse_md5(sidecar, name=FIRST)
    assert not raised.value.transient


@pytest.mark.parametrize("md5_format", ["openssl", "md5sum", "bare"])
def test_it_fetches_the_published_md5(server: NcbiTestServer, client: httpx.Client, md5_format: str) -> None:
    data = b"PubMed bytes"
    server.publish(BASELINE, FIRST, data, md5_format=md5_format)

    assert fetch_md5(remote_file(server.url(BASELINE), FIRST), client=client) == md5_of(data)


# --- downloads -------------------------------------------------------------------------------------------


def test_a_clean_download_verifies_the_md5(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    remote = remote_file(server.url(BASELINE), FIRST)
    expected = fetch_md5(remote, client=client)

    path = download(remote, dest, client=client, expected_md5=expected, sleep=sleeps.append)

    assert path == dest / FIRST
    assert path.read_bytes() == published[FIRST]
    assert not (dest / f"{FIRST}.part").exists()
    assert server.ranges_for(FIRST) == [None]
    assert sleeps == []


def test_an_already_verified_file_is_not_downloaded_again(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    expected = md5_of(published[SECOND])
    fetch(server, client, dest, sleeps, SECOND, expected)

    again = fetch(server, client, dest, sleeps, SECOND, expected)

    assert again.read_bytes() == published[SECOND]
    assert len(server.requests_for(SECOND)) == 1


def test_a_present_file_with_the_wrong_md5_is_downloaded_again(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    dest.mkdir()
    (dest / SECOND).write_bytes(b"an older or damaged copy")

    path = fetch(server, client, dest, sleeps, SECOND, md5_of(published[SECOND]))

    assert path.read_bytes() == published[SECOND]
    assert server.ranges_for(SECOND) == [None]


def test_it_resumes_a_truncated_transfer_with_a_range_request(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    server.truncate_next(FIRST, after_bytes=100_000)

    path = fetch(server, client, dest, sleeps, FIRST, md5_of(published[FIRST]))

    assert path.read_bytes() == published[FIRST]
    assert server.ranges_for(FIRST) == [None, "bytes=100000-"]
    assert sleeps == [1.0]


def test_a_resumed_transfer_cut_again_keeps_resuming_while_it_makes_progress(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    # Six cuts with retries=3: each attempt grows the part, so a flaky link does not exhaust the retries.
    server.truncate_next(FIRST, after_bytes=50_000, count=6)

    path = fetch(server, client, dest, sleeps, FIRST, md5_of(published[FIRST]), retries=3)

    assert path.read_bytes() == published[FIRST]
    assert server.ranges_for(FIRST) == [None] + [f"bytes={50_000 * n}-" for n in range(1, 7)]


def test_a_stalled_transfer_times_out_and_resumes(
    server: NcbiTestServer, published: dict[str, bytes], dest: Path, sleeps: list[float]
) -> None:
    server.truncate_next(FIRST, after_bytes=100_000, stall=3.0)

    with httpx.Client(timeout=0.3) as impatient:
        path = fetch(server, impatient, dest, sleeps, FIRST, md5_of(published[FIRST]))

    assert path.read_bytes() == published[FIRST]
    assert server.ranges_for(FIRST) == [None, "bytes=100000-"]


def test_a_server_ignoring_range_still_yields_a_correct_file(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    server.truncate_next(FIRST, after_bytes=100_000)
    server.ignore_range(FIRST)

    path = fetch(server, client, dest, sleeps, FIRST, md5_of(published[FIRST]))

    assert path.read_bytes() == published[FIRST]
    assert server.ranges_for(FIRST) == [None, "bytes=100000-"]


def test_a_part_left_by_a_killed_run_is_resumed(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    dest.mkdir()
    (dest / f"{FIRST}.part").write_bytes(published[FIRST][:123_456])

    path = fetch(server, client, dest, sleeps, FIRST, md5_of(published[FIRST]))

    assert path.read_bytes() == published[FIRST]
    assert server.ranges_for(FIRST) == ["bytes=123456-"]
    assert not (dest / f"{FIRST}.part").exists()


def test_a_whole_part_left_before_the_rename_is_verified_without_a_body(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    dest.mkdir()
    (dest / f"{FIRST}.part").write_bytes(published[FIRST])

    path = fetch(server, client, dest, sleeps, FIRST, md5_of(published[FIRST]))

    assert path.read_bytes() == published[FIRST]
    assert server.ranges_for(FIRST) == [f"bytes={len(published[FIRST])}-"]


def test_a_damaged_part_is_discarded_and_downloaded_from_zero(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    dest.mkdir()
    (dest / f"{FIRST}.part").write_bytes(b"\0" * 1000)

    path = fetch(server, client, dest, sleeps, FIRST, md5_of(published[FIRST]))

    assert path.read_bytes() == published[FIRST]
    assert server.ranges_for(FIRST) == ["bytes=1000-", None]


@pytest.mark.parametrize("status", [503, 500, 429])
def test_it_retries_a_busy_server_twice_then_succeeds(
    server: NcbiTestServer,
    published: dict[str, bytes],
    client: httpx.Client,
    dest: Path,
    sleeps: list[float],
    status: int,
) -> None:
    server.fail_next(FIRST, count=2, status=status)

    path = fetch(server, client, dest, sleeps, FIRST, md5_of(published[FIRST]))

    assert path.read_bytes() == published[FIRST]
    assert len(server.requests_for(FIRST)) == 3
    assert sleeps == [1.0, 2.0]  # exponential backoff


def test_a_retry_after_header_lengthens_the_backoff(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    server.fail_next(FIRST, count=1, status=429, retry_after=7)

    fetch(server, client, dest, sleeps, FIRST, md5_of(published[FIRST]))

    assert sleeps == [7.0]


def test_a_server_that_stays_down_raises_a_transient_error(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    server.fail_next(FIRST, count=None, status=503)

    with pytest.raises(TransientDownloadError) as raised:
        fetch(server, client, dest, sleeps, FIRST, md5_of(published[FIRST]), retries=4)

    assert raised.value.transient
    assert isinstance(raised.value, IndexerError)
    assert len(server.requests_for(FIRST)) == 4
    assert sleeps == [1.0, 2.0, 4.0]
    assert not (dest / FIRST).exists()


def test_an_unreachable_server_raises_a_transient_error(client: httpx.Client, dest: Path, sleeps: list[float]) -> None:
    remote = remote_file(f"http://127.0.0.1:{free_port()}/pubmed/baseline/", FIRST)

    with pytest.raises(TransientDownloadError) as raised:
        download(remote, dest, client=client, expected_md5="0" * 32, retries=2, sleep=sleeps.append)

    assert "ConnectError" in str(raised.value)
    assert sleeps == [1.0]


def test_a_persistently_corrupted_file_raises_after_the_retries(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    server.corrupt(FIRST)
    expected = md5_of(published[FIRST])

    with pytest.raises(ChecksumMismatchError) as raised:
        fetch(server, client, dest, sleeps, FIRST, expected, retries=3)

    error = raised.value
    assert isinstance(error, DownloadError)
    assert not error.transient
    assert FIRST in str(error)
    assert expected in str(error)
    assert error.actual != expected
    assert error.actual in str(error)
    assert server.ranges_for(FIRST) == [None, None, None]  # every attempt starts over from byte zero
    assert not (dest / FIRST).exists()
    assert not (dest / f"{FIRST}.part").exists()


def test_a_file_corrupted_once_is_downloaded_again(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    server.corrupt(FIRST, count=1)

    path = fetch(server, client, dest, sleeps, FIRST, md5_of(published[FIRST]))

    assert path.read_bytes() == published[FIRST]
    assert server.ranges_for(FIRST) == [None, None]


def test_a_missing_file_raises_at_once(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    with pytest.raises(DownloadError) as raised:
        fetch(server, client, dest, sleeps, "pubmed26n0999.xml.gz", "0" * 32)

    assert not raised.value.transient
    assert "404" in str(raised.value)
    assert len(server.requests_for("pubmed26n0999.xml.gz")) == 1
    assert sleeps == []
    assert list(dest.iterdir()) == []


def test_a_forbidden_file_raises_at_once(
    server: NcbiTestServer, published: dict[str, bytes], client: httpx.Client, dest: Path, sleeps: list[float]
) -> None:
    server.fail_next(FIRST, count=None, status=403)

    with pytest.raises(DownloadError) as raised:
        fetch(server, client, dest, sleeps, FIRST, md5_of(published[FIRST]))

    assert not raised.value.transient
    assert len(server.requests_for(FIRST)) == 1


def test_a_missing_md5_sidecar_raises_at_once(server: NcbiTestServer, client: httpx.Client) -> None:
    server.publish(BASELINE, FIRST, b"data", md5_format="none")

    with pytest.raises(DownloadError) as raised:
        fetch_md5(remote_file(server.url(BASELINE), FIRST), client=client)

    assert not raised.value.transient


def test_the_default_client_names_itself_and_follows_redirects(
    server: NcbiTestServer, published: dict[str, bytes], dest: Path
) -> None:
    with default_client() as client:
        # The folder URL without its slash makes the server redirect, as NCBI's Apache does.
        response = client.get(server.url(BASELINE).rstrip("/"))
        path = download(
            remote_file(server.url(BASELINE), SECOND), dest, client=client, expected_md5=md5_of(published[SECOND])
        )

    assert response.status_code == 200
    assert path.read_bytes() == published[SECOND]
    assert all(seen.user_agent and seen.user_agent.startswith("VeriMed/") for seen in server.requests)
