"""`manage.py fetch_pubmed_demo` against a real local HTTP server that plays NCBI's efetch, never the real one."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from django.core.management import CommandError, call_command

from indexer.jsonl_reader import read_jsonl
from indexer.pubmed_efetch import EfetchSource, prepare_demo
from indexer.pubmed_xml import read_pubmed_xml
from indexer.records import ReadStats

# PMID: (title, abstract). 40000009 is asked for but the server has no record of it (deleted upstream).
ARTICLES = {
    "40000001": ("Aspirin after myocardial infarction.", "Aspirin lowered the rate of a second infarction."),
    "40000002": ("Statins and memory", "Statins did not change memory scores over five years."),
    "40000003": ("Zinc for the common cold.", "Zinc lozenges shortened colds by one day."),
    "40000004": ("Metformin in type 2 diabetes.", "Metformin lowered HbA1c by 1.2 points."),
    "40000005": ("Vitamin D and fractures.", "Vitamin D did not prevent fractures."),
}
TARGETS = {
    "pubmed/xml/pubmed-demo.xml.gz": ["40000001", "40000002", "40000003"],
    "bioasq/benchmark/corpus.jsonl.gz": ["40000004", "40000005", "40000009"],
}


def article_xml(pmid: str) -> str:
    title, abstract = ARTICLES[pmid]
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID>'
        f"<Article><Journal><Title>J Test</Title><JournalIssue><PubDate><Year>2020</Year></PubDate></JournalIssue>"
        f"</Journal><ArticleTitle>{title}</ArticleTitle><Abstract><AbstractText>{abstract}</AbstractText></Abstract>"
        f"</Article></MedlineCitation></PubmedArticle>"
    )


class Efetch(BaseHTTPRequestHandler):
    """efetch.fcgi: the PubmedArticleSet for the POSTed ids, or the next armed fault."""

    server: EfetchServer

    def do_POST(self) -> None:
        form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        ids = form["id"][0].split(",")
        self.server.requests.append((self.path, form))
        fault = self.server.faults.pop(0) if self.server.faults else "ok"
        body = (
            '<?xml version="1.0"?>\n<PubmedArticleSet>'
            + "".join(article_xml(pmid) for pmid in ids if pmid in ARTICLES)
            + "</PubmedArticleSet>\n"
        ).encode()
        status = 200
        if fault.startswith("status:"):
            status, body = int(fault.split(":")[1]), b"Bad Request"
        elif fault == "truncate":
            body = body[: len(body) // 2]
        elif fault == "error-page":
            body = b"<eFetchResult><ERROR>Cannot retrieve the ids</ERROR></eFetchResult>"
        self.send_response(status)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        pass


class EfetchServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Efetch)
        self.requests: list[tuple[str, dict[str, list[str]]]] = []
        self.faults: list[str] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/entrez/eutils/"


@pytest.fixture
def server() -> Iterator[EfetchServer]:
    running = EfetchServer()
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    yield running
    running.shutdown()
    running.server_close()


@pytest.fixture
def pmids(tmp_path: Path) -> Path:
    path = tmp_path / "pmids.json"
    path.write_text(json.dumps(TARGETS))
    return path


def fetch(server: EfetchServer, pmids: Path, out: Path) -> str:
    written: list[str] = []

    class Out:
        def write(self, text: str) -> None:
            written.append(text)

        def flush(self) -> None:
            pass

    call_command(
        "fetch_pubmed_demo",
        "--out", str(out), "--base-url", server.base_url, "--pmids", str(pmids), "--batch-size", "2", "--pause", "0",
        stdout=Out(),
    )  # fmt: skip
    return "".join(written)


def files_under(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file())


def test_it_fetches_in_batches_and_writes_the_files_as_the_shared_folder_holds_them(
    server: EfetchServer, pmids: Path, tmp_path: Path
) -> None:
    out = tmp_path / "data"

    said = fetch(server, pmids, out)

    # Three PMIDs in batches of two, then three more: four POSTs to efetch, each for PubMed XML.
    assert [(path, form["id"][0]) for path, form in server.requests] == [
        ("/entrez/eutils/efetch.fcgi", "40000001,40000002"),
        ("/entrez/eutils/efetch.fcgi", "40000003"),
        ("/entrez/eutils/efetch.fcgi", "40000004,40000005"),
        ("/entrez/eutils/efetch.fcgi", "40000009"),
    ]
    assert {(form["db"][0], form["retmode"][0]) for _, form in server.requests} == {("pubmed", "xml")}
    assert files_under(out) == [out / "bioasq/benchmark/corpus.jsonl.gz", out / "pubmed/xml/pubmed-demo.xml.gz"]
    # What ingest_demo reads them with: the PubMed XML parser and the BEIR-shaped JSON lines reader.
    xml = list(read_pubmed_xml(out / "pubmed/xml/pubmed-demo.xml.gz", ReadStats()))
    assert [(record.pmid, record.title, record.year) for record in xml] == [
        ("40000001", "Aspirin after myocardial infarction.", 2020),
        ("40000002", "Statins and memory", 2020),
        ("40000003", "Zinc for the common cold.", 2020),
    ]
    with gzip.open(out / "bioasq/benchmark/corpus.jsonl.gz", "rt") as lines:
        assert [json.loads(line) for line in lines] == [
            {"pmid": "40000004", "text": "Metformin in type 2 diabetes. Metformin lowered HbA1c by 1.2 points."},
            {
                "pmid": "40000005",
                "text": "Vitamin D and fractures. Vitamin D did not prevent fractures.",
            },
        ]
    assert [record.pmid for record in read_jsonl(out / "bioasq/benchmark/corpus.jsonl.gz", ReadStats())] == [
        "40000004",
        "40000005",
    ]
    assert "1 PMIDs came back without an abstract or not at all" in said
    assert "40000009" in said


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("status:400", "answered HTTP 400"),
        ("truncate", "malformed or truncated XML"),
        ("error-page", "sent <eFetchResult>, not a PubmedArticleSet: 'Cannot retrieve the ids'"),
    ],
)
def test_a_bad_reply_stops_it_with_the_reason_and_writes_nothing(
    server: EfetchServer, pmids: Path, tmp_path: Path, fault: str, reason: str
) -> None:
    out = tmp_path / "data"
    # The first file's two batches arrive whole; the second file's first batch is the bad one.
    server.faults = ["ok", "ok", fault]

    with pytest.raises(CommandError, match="nothing was written") as raised:
        fetch(server, pmids, out)

    assert reason in str(raised.value)
    assert len(server.requests) == 3
    assert files_under(out) == []  # not even the first file, which had arrived whole


def test_a_busy_server_is_asked_again_and_the_run_completes(server: EfetchServer, tmp_path: Path) -> None:
    server.faults = ["status:503", "status:429"]
    waits: list[float] = []

    prepared = prepare_demo(
        {"pubmed/xml/a.xml.gz": ["40000001"]},
        tmp_path / "data",
        source=EfetchSource(base_url=server.base_url, pause=0, backoff=0.5),
        sleep=waits.append,
    )

    assert prepared.files == {"pubmed/xml/a.xml.gz": 1}
    assert waits == [0.5, 1.0]  # exponential backoff between the three tries
    assert len(server.requests) == 3


def test_a_server_that_stays_busy_is_a_transient_failure(server: EfetchServer, tmp_path: Path) -> None:
    server.faults = ["status:503"] * 4

    with pytest.raises(Exception, match="failed 4 times; last: HTTP 503") as raised:
        prepare_demo(
            {"pubmed/xml/a.xml.gz": ["40000001"]},
            tmp_path / "data",
            source=EfetchSource(base_url=server.base_url, pause=0, retries=3),
            sleep=lambda seconds: None,
        )

    assert getattr(raised.value, "transient", False) is True
    assert files_under(tmp_path / "data") == []
