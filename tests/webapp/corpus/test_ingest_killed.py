"""`manage.py ingest` killed with SIGKILL half-way through a file, then run again, leaves exactly the PMIDs of the
file in the database, the lexical index and the vector index: no duplicate, no gap.

Real processes, real engines (SQLite, tantivy, qdrant-edge, MiniLM). The comparison is against the same file
ingested once without interruption.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import tantivy
from django.conf import settings

from tests.support import REPO, shared_data_dir

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

ABSTRACTS = 64
BATCH = 8


def _corpus(target: Path) -> list[str]:
    """The first abstracts of the shared BioASQ corpus that have text: what the ingest must end up holding."""
    pmids: list[str] = []
    with (
        gzip.open(shared_data_dir() / "bioasq" / "benchmark" / "corpus.jsonl.gz", "rt") as source,
        target.open("w") as out,
    ):
        for line in source:
            record = json.loads(line)
            if not (record.get("text") or "").strip():
                continue
            out.write(line)
            pmids.append(str(record["pmid"]))
            if len(pmids) == ABSTRACTS:
                break
    return pmids


def _env(var_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "webapp.settings",
        "VERIMED_VAR_DIR": str(var_dir),
        "VERIMED_MODEL_CACHE": str(settings.VERIMED.paths.model_cache),
    }


def _manage(*args: str) -> list[str]:
    return [sys.executable, "manage.py", *args]


def _ingest(var_dir: Path, corpus: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        _manage("ingest", "--no-progress", "--batch-size", str(BATCH), str(corpus)),
        cwd=REPO, env=_env(var_dir), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


def _prepared(var_dir: Path) -> Path:
    done = subprocess.run(_manage("migrate", "--noinput"), cwd=REPO, env=_env(var_dir), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return var_dir / "db.sqlite3"


def _rows(database: Path) -> tuple[int, int]:
    with sqlite3.connect(database, timeout=30) as connection:
        stored, embedded = connection.execute(
            "SELECT count(*), coalesce(sum(embedded), 0) FROM corpus_article"
        ).fetchone()
    return int(stored), int(embedded)


def _database_pmids(database: Path) -> Counter[str]:
    with sqlite3.connect(database, timeout=30) as connection:
        return Counter(row[0] for row in connection.execute("SELECT pmid FROM corpus_article WHERE embedded = 1"))


def _lexical_pmids(var_dir: Path) -> Counter[str]:
    [folder] = (var_dir / "index").glob("tantivy-*")
    index = tantivy.Index.open(str(folder))
    searcher = index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), limit=ABSTRACTS * 3).hits
    return Counter(searcher.doc(address)["pmid"][0] for _, address in hits)


def _vector_points(var_dir: Path) -> int:
    code = "from webapp.corpus import engines; print(engines.vector_index().count()); engines.release_engines()"
    done = subprocess.run(_manage("shell", "-c", code), cwd=REPO, env=_env(var_dir), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.strip().splitlines()[-1])


def test_an_ingest_killed_half_way_completes_on_rerun_without_duplicates_or_gaps(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    expected = _corpus(corpus)
    killed_dir, clean_dir = tmp_path / "killed", tmp_path / "clean"
    database = _prepared(killed_dir)

    running = _ingest(killed_dir, corpus)
    deadline = time.monotonic() + 600
    seen: list[tuple[int, int]] = []
    while True:
        assert running.poll() is None, f"the ingest finished before it could be killed; rows seen: {seen[-20:]}"
        assert time.monotonic() < deadline, "the ingest made no progress"
        stored, embedded = _rows(database)
        seen.append((stored, embedded))
        if BATCH <= embedded < stored // 2:
            break  # stored, and part-way through embedding
        time.sleep(0.2)
    running.send_signal(signal.SIGKILL)
    running.wait()
    stored, embedded = _rows(database)
    assert embedded < ABSTRACTS, "the kill should leave articles still to embed"

    rerun = _ingest(killed_dir, corpus)
    _, errors = rerun.communicate(timeout=900)
    assert rerun.returncode == 0, errors.decode()[-2000:]

    _prepared(clean_dir)
    clean = _ingest(clean_dir, corpus)
    _, errors = clean.communicate(timeout=900)
    assert clean.returncode == 0, errors.decode()[-2000:]

    # The reader may skip a record (no abstract once the title is split off): the clean run says what a file holds.
    wanted = _database_pmids(clean_dir / "db.sqlite3")
    assert set(wanted) <= set(expected)
    assert len(wanted) > ABSTRACTS * 0.9
    assert _database_pmids(database) == wanted
    assert _lexical_pmids(killed_dir) == wanted == _lexical_pmids(clean_dir)  # each PMID exactly once
    # Point ids derive from (PMID, chunk number): equal counts with the uninterrupted run mean the same points.
    assert _vector_points(killed_dir) == _vector_points(clean_dir)
