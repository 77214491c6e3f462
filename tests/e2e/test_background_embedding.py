"""The stack's background embedder with the real worker: articles stored while the site runs (`make run` stores the
demo corpus this way) are found by keyword search at once, the answer page says how much of the corpus semantic
search covered, and the low-priority embedder process embeds them while the worker that holds the vector index
writes them in, with nothing stopped."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import RunningStack, shot, sign_in, stop_question

pytestmark = pytest.mark.profiles("embedded")

NEW_ARTICLES = [
    {
        "pmid": "99000101",
        "title": "Quorvalimab in refractory gout",
        "abstract": "Quorvalimab lowered serum urate in 80 adults with refractory gout over 12 weeks.",
    },
    {
        "pmid": "99000102",
        "title": "Quorvalimab and kidney function",
        "abstract": "Kidney function was unchanged in adults given quorvalimab for gout.",
    },
]
PENDING = "from webapp.corpus.models import Article; print(Article.objects.filter(embedded=False).count())"


@contextmanager
def embedder_paused(stack: RunningStack) -> Iterator[None]:
    """Freeze the embedder process (SIGSTOP), so that articles stay pending while the test looks at them."""
    pid = int((stack.var_dir / "run" / "embedder.pid").read_text())
    os.killpg(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(pid, signal.SIGCONT)


def _pending(stack: RunningStack) -> int:
    counted = stack.manage("shell", "-c", PENDING)
    assert counted.returncode == 0, counted.stderr[-3000:]
    return int(counted.stdout.split()[-1])  # after the shell's own notice of what it imported


def test_articles_stored_while_the_stack_runs_are_searchable_at_once_and_embedded_in_the_background(
    stack: RunningStack, page: Page
) -> None:
    status = stack.manage("stack", "status")
    assert "embedder running" in " ".join(status.stdout.split()), status.stdout
    corpus = stack.var_dir / "late-articles.jsonl"
    corpus.write_text("".join(json.dumps(article) + "\n" for article in NEW_ARTICLES), encoding="utf-8")

    with embedder_paused(stack):
        stored = stack.manage("ingest", "--no-progress", "--defer-embedding", str(corpus))
        assert stored.returncode == 0, stored.stderr[-3000:]
        assert "2 articles wait to be embedded" in stored.stdout
        assert _pending(stack) == 2

        sign_in(page, stack, "researcher")
        page.get_by_label("Your biomedical question").fill("Does quorvalimab lower serum urate in gout?")
        page.get_by_role("button", name="Ask").click()
        # Keyword search finds the new abstract before it has a vector, and the page says what semantic search saw.
        source = page.locator("#sources li.source").filter(has_text="Quorvalimab in refractory gout")
        expect(source).to_have_count(1, timeout=240_000)
        note = page.locator("#semantic-coverage-note")
        expect(note).to_be_visible()
        expect(note).to_contain_text(re.compile(r"Semantic search covered 9\d% of the indexed abstracts"))
        shot(page, "semantic-coverage-note")
        stop_question(page)

    deadline = time.monotonic() + 180
    while (pending := _pending(stack)) and time.monotonic() < deadline:
        time.sleep(2)
    assert pending == 0, "the background embedder and the worker did not embed the new articles in 3 minutes"
    log = (stack.var_dir / "log" / "embedder.log").read_text()
    assert "background embedder ready" in log
    assert "articles/s" in log, log[-2000:]  # it reported a batch it embedded
    assert not list((stack.var_dir / "index" / "embedding-inbox").glob("*.npz")), "a batch was left unwritten"
