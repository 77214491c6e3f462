"""The whole embedded stack, started the way `make run` starts it: site, Celery worker and LLM server processes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

from tests.support import REPO, TEST_LLM_MODEL, free_port, shared_data_dir

# Two BioASQ dev questions; their gold abstracts plus some others form the test corpus.
QUESTIONS = (
    "What is the mode of action of everolimus?",
    "Is lambrolizumab effective for treatment of patients with melanoma ?",
)
OTHER_ABSTRACTS = 150


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """Keep each phase's report on the test item, so fixtures can tell in teardown whether the test failed."""
    report: pytest.TestReport = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@dataclass(frozen=True)
class RunningStack:
    url: str
    env: dict[str, str]
    var_dir: Path
    gold_pmids: dict[str, list[str]]

    def manage(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=REPO, env=self.env, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip


def _write_corpus(target: Path) -> dict[str, list[str]]:
    """A small JSONL corpus from the shared BioASQ benchmark: the gold abstracts of QUESTIONS and some others."""
    benchmark = shared_data_dir() / "bioasq" / "benchmark"
    questions = [json.loads(line) for line in (benchmark / "questions_dev.jsonl").open()]
    gold = {q["body"]: q["gold_pmids"] for q in questions if q["body"] in QUESTIONS}
    wanted = {pmid for pmids in gold.values() for pmid in pmids}
    others = 0
    with gzip.open(benchmark / "corpus.jsonl.gz", "rt") as source, target.open("w") as out:
        for line in source:
            pmid = json.loads(line)["pmid"]
            if pmid in wanted or others < OTHER_ABSTRACTS:
                others += pmid not in wanted
                out.write(line)
    return gold


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    var_dir = tmp_path_factory.mktemp("stack")
    corpus = var_dir / "corpus.jsonl"
    gold = _write_corpus(corpus)
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "webapp.settings",
        "VERIMED_VAR_DIR": str(var_dir),
        "VERIMED_MODEL_CACHE": str(settings.VERIMED_MODEL_CACHE),
        "VERIMED_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
        "VERIMED_LLM_MODEL": TEST_LLM_MODEL,
    }
    running = RunningStack(url=f"http://127.0.0.1:{port}", env=env, var_dir=var_dir, gold_pmids=gold)
    pubmed_xml = shared_data_dir() / "pubmed" / "xml" / "pubmed-29768149.xml"
    # The same preparation `make run` does, on a small corpus.
    for command in (
        ("migrate", "--noinput"),
        ("collectstatic", "--noinput"),
        ("ingest", "--no-progress", str(corpus), str(pubmed_xml)),
    ):
        done = running.manage(*command)
        assert done.returncode == 0, done.stderr[-3000:]
    started = running.manage("stack", "start", "--port", str(port))
    if started.returncode != 0:
        logs = "\n".join(f"--- {log.name}\n{log.read_text()[-2000:]}" for log in (var_dir / "log").glob("*.log"))
        running.manage("stack", "stop")
        raise RuntimeError(f"stack did not start: {started.stderr}\n{logs}")
    yield running
    running.manage("stack", "stop")
