"""Fetching PubMed records by PMID from NCBI's E-utilities (efetch), and preparing the demo corpus from them.

`manage.py fetch_pubmed_demo` uses it to rebuild the demo slice that `manage.py ingest_demo` reads, on a machine that
is online but has no copy of the shared data folder. Each reply must be a whole `PubmedArticleSet`: an HTTP error, an
NCBI error page or a truncated or malformed body stops the run with the reason. Everything is written into a staging
folder first and moved into place only when every batch has arrived, so a failed run leaves no partial output.
"""

from __future__ import annotations

import gzip
import json
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
from lxml import etree

from indexer.ncbi import DownloadError, TransientDownloadError, default_client
from indexer.pubmed_xml import read_pubmed_xml
from indexer.records import ArticleRecord, ReadStats

EUTILS_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
# NCBI's advice for efetch: up to 200 ids a request, and no more than three requests a second without an API key.
BATCH_SIZE = 200
PAUSE_SECONDS = 0.34
TOOL = "verimed"
_TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})

Sleep = Callable[[float], None]


@dataclass(frozen=True)
class EfetchSource:
    """Where efetch is asked (NCBI, or a mirror such as the tests' local server), and how politely."""

    base_url: str = EUTILS_URL
    api_key: str = ""
    batch_size: int = BATCH_SIZE
    pause: float = PAUSE_SECONDS
    retries: int = 3
    backoff: float = 1.0

    @property
    def efetch_url(self) -> str:
        return self.base_url.rstrip("/") + "/efetch.fcgi"


def efetch_articles(
    pmids: Sequence[str], *, source: EfetchSource, client: httpx.Client, sleep: Sleep = time.sleep
) -> list[bytes]:
    """The `PubmedArticle` elements efetch returns for `pmids`, serialised, in batches of `source.batch_size`."""
    articles: list[bytes] = []
    for start in range(0, len(pmids), source.batch_size):
        if start:
            sleep(source.pause)
        body = _post(pmids[start : start + source.batch_size], source=source, client=client, sleep=sleep)
        articles.extend(_articles(body, url=source.efetch_url))
    return articles


def _post(batch: Sequence[str], *, source: EfetchSource, client: httpx.Client, sleep: Sleep) -> bytes:
    # POST: a GET with 200 ids in the query runs past what some proxies accept.
    data = {"db": "pubmed", "retmode": "xml", "id": ",".join(batch), "tool": TOOL}
    if source.api_key:
        data["api_key"] = source.api_key
    for attempt in range(source.retries + 1):
        try:
            response = client.post(source.efetch_url, data=data)
        except httpx.TransportError as error:
            problem = f"{type(error).__name__}: {error}"
        else:
            if response.status_code == 200:
                return response.content
            problem = f"HTTP {response.status_code}"
            if response.status_code not in _TRANSIENT_STATUS:
                raise DownloadError(f"efetch at {source.efetch_url} answered {problem}: {response.text[:200]!r}")
        if attempt < source.retries:
            sleep(source.backoff * 2**attempt)
    raise TransientDownloadError(f"efetch at {source.efetch_url} failed {source.retries + 1} times; last: {problem}")


def _articles(body: bytes, *, url: str) -> list[bytes]:
    try:
        root = etree.fromstring(body, parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as error:
        raise DownloadError(f"efetch at {url} sent malformed or truncated XML ({len(body)} bytes): {error}") from error
    if root.tag != "PubmedArticleSet":
        # NCBI reports a bad request as an <eFetchResult><ERROR> page with status 200.
        detail = " ".join(str(text) for text in root.itertext()).strip()[:200]
        raise DownloadError(f"efetch at {url} sent <{root.tag}>, not a PubmedArticleSet: {detail!r}")
    return [etree.tostring(element) for element in root.iterchildren("PubmedArticle")]


def demo_pmids(path: Path) -> dict[str, list[str]]:
    """The demo slice's PMIDs by the file they make, relative to a data folder (webapp/corpus/demo_pmids.json)."""
    loaded = json.loads(path.read_text(encoding="utf-8"))
    return {str(target): [str(pmid) for pmid in pmids] for target, pmids in loaded.items()}


@dataclass(frozen=True)
class PreparedDemo:
    files: dict[str, int]  # each file written, relative to the output folder, and its record count
    missing: list[str]  # PMIDs NCBI returned no record with an abstract for (deleted or without an abstract)


def prepare_demo(
    targets: Mapping[str, Sequence[str]],
    out_dir: Path,
    *,
    source: EfetchSource,
    client: httpx.Client | None = None,
    sleep: Sleep = time.sleep,
) -> PreparedDemo:
    """Fetch every target's PMIDs and write it the shipped way: `*.xml.gz` as a PubMed XML file, `*.jsonl.gz` as
    BEIR-shaped lines `{"pmid", "text": "Title. Abstract"}` (the BioASQ benchmark's corpus). Nothing appears under
    `out_dir` unless every target was fetched whole."""
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(out_dir) / f".fetching-{time.time_ns()}"
    owned = client is None
    http = client or default_client()
    try:
        files: dict[str, int] = {}
        missing: list[str] = []
        for target, pmids in targets.items():
            if not target.endswith((".xml.gz", ".jsonl.gz")):
                raise DownloadError(f"{target}: a demo file is .xml.gz or .jsonl.gz")
            staged = staging / target
            staged.parent.mkdir(parents=True, exist_ok=True)
            fetched = staged if target.endswith(".xml.gz") else staged.with_name(staged.name + ".xml.gz")
            _write_xml(fetched, efetch_articles(pmids, source=source, client=http, sleep=sleep))
            records = _read(fetched)
            if fetched != staged:
                _write_jsonl(staged, records)
                fetched.unlink()
            files[target] = len(records)
            found = {record.pmid for record in records}
            missing.extend(pmid for pmid in pmids if pmid not in found)
        for target in files:  # every batch arrived: move the files into place, each rename atomic
            final = Path(out_dir) / target
            final.parent.mkdir(parents=True, exist_ok=True)
            (staging / target).replace(final)
        return PreparedDemo(files=files, missing=missing)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if owned:
            http.close()


def _write_xml(path: Path, articles: Sequence[bytes]) -> None:
    with gzip.open(path, "wb") as out:
        out.write(b'<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>\n')
        for article in articles:
            out.write(article)
            out.write(b"\n")
        out.write(b"</PubmedArticleSet>\n")


def _read(path: Path) -> list[ArticleRecord]:
    # Through the ingest's own parser: what it cannot read here, ingest_demo could not read either.
    return list(read_pubmed_xml(path, ReadStats()))


def _write_jsonl(path: Path, records: Sequence[ArticleRecord]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for record in records:
            title = record.title.strip()
            text = f"{title} {record.abstract}" if title.endswith((".", "?", "!")) else f"{title}. {record.abstract}"
            out.write(json.dumps({"pmid": record.pmid, "text": text.strip()}) + "\n")
