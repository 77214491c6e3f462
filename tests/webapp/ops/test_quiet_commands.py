"""Commands print what the person running them needs: no django-axes banner at every start, no tokenizer warning
about abstracts longer than the model's window (they are only counted, to be cut into chunks)."""

from __future__ import annotations

import json
import logging
from io import StringIO
from pathlib import Path

import pytest
from axes.apps import AppConfig as AxesConfig
from django.core.management import call_command

from indexer.embedder import SentenceTransformerEmbedder
from webapp.corpus import engines
from webapp.corpus.models import Article

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

TOKENIZER_WARNING = "Token indices sequence length is longer than the specified maximum"
TOKENIZER_WINDOW = 256  # MiniLM's window: its tokenizer warns about any text longer than this


def test_the_axes_banner_is_not_logged_but_axes_warnings_are(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(AxesConfig, "initialized", False)  # as at the start of a fresh manage.py process
    with caplog.at_level(logging.INFO):
        AxesConfig.initialize()
        logging.getLogger("axes.apps").warning("a warning axes has")
    messages = [record.getMessage() for record in caplog.records]
    assert not any("AXES: BEGIN" in message for message in messages)
    assert "a warning axes has" in messages


@pytest.mark.django_db
def test_ingesting_an_abstract_longer_than_the_tokenizer_window_prints_no_warning(
    own_index: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A fresh model: its tokenizer warns at most once per process, so one loaded earlier may have warned already.
    embedder = SentenceTransformerEmbedder()
    monkeypatch.setattr(engines, "embedder", lambda: embedder)
    abstract = " ".join(f"Patients in cohort {n} received metformin and their glucose fell." for n in range(80))
    corpus = tmp_path / "long.jsonl"
    corpus.write_text(json.dumps({"pmid": "777", "title": "A long abstract.", "abstract": abstract}) + "\n")
    capfd.readouterr()
    # transformers logs to its own stderr handler and does not propagate: listen on its logger too.
    transformers_logger = logging.getLogger("transformers")
    transformers_logger.addHandler(caplog.handler)
    try:
        call_command("ingest", str(corpus), "--no-progress", stdout=StringIO())
    finally:
        transformers_logger.removeHandler(caplog.handler)

    printed = capfd.readouterr()
    assert TOKENIZER_WARNING not in printed.out + printed.err + caplog.text
    assert embedder.token_lengths([abstract])[0] > TOKENIZER_WINDOW  # counted after, so it could not warn first
    assert Article.objects.filter(pmid="777").exists()
