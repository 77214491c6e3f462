"""How fast a researcher's library takes in papers: uploading (reading and storing) and indexing (both search legs).

    .venv/bin/python benchmarks/library_indexing.py --json var/benchmarks/library-indexing.json

The papers are typeset at run time with reportlab (tests/indexer/pdf_samples.py) from real text, as the library's
browser test makes them (tests/e2e/test_library.py): --papers papers, each from its own group of
--records-per-paper PubMedQA PQA-L records, every other one in two columns under a running header, 2-4 pages each.

Two stages, one after the other, each paper on its own as the product handles it:
- `upload`: `webapp.library.services.document_upload` as the upload page calls it: the PDF read by `read_pdf` in its
  PDFium child process, cut into passages, stored with its file in one transaction, and the indexing task queued on
  the embedded broker. Its `reading` share is the reader alone (`read_full_text`).
- `indexing`: `webapp.library.indexing.document_index` as the worker's task runs it: every passage into the library's
  lexical and vector legs, embedded by the configured embedder. Its `embedding` share is the embedder's alone;
  `writing` is both legs' writes. The embedder is loaded and both indexes are opened before the clock starts
  (reported as `load_s`); closing them (which flushes the vector shard) is `close_s`.

No LLM is involved: the times are absolute seconds of reading, storing, embedding and writing. Everything is written
into a temporary VERIMED_VAR_DIR (its own SQLite database, broker and indexes), so nothing real is touched; only
the model cache (ONNX exports) is the configured one, so that a run does not export the embedder again.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.indexer.pdf_samples import library_papers  # noqa: E402
from tests.support import shared_data_dir  # noqa: E402

Result = TypeVar("Result")


@dataclass(frozen=True)
class Paper:
    name: str
    pdf: bytes
    pages: int


@dataclass
class Clock:
    """Seconds spent in one wrapped call, summed over the run."""

    seconds: float = 0.0
    calls: int = 0

    def wrap(self, work: Callable[..., Result]) -> Callable[..., Result]:
        def timed(*args: Any, **kwargs: Any) -> Result:
            started = time.perf_counter()
            try:
                return work(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1

        return timed


@dataclass
class Stage:
    seconds: float = 0.0
    papers: int = 0
    pages: int = 0
    passages: int = 0
    per_paper: list[float] = field(default_factory=list)


def papers(data_dir: Path, count: int, per_paper: int) -> list[Paper]:
    """The library browser test's papers (tests/indexer/pdf_samples.py `library_papers`)."""
    return [
        Paper(name=name, pdf=paper.pdf, pages=paper.pages)
        for name, paper in library_papers(data_dir, count, per_paper=per_paper)
    ]


def machine() -> dict[str, object]:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next((line.split(":", 1)[1].strip() for line in lscpu.splitlines() if "Model name" in line), "")
    except OSError:
        model = ""
    return {"cpu": model, "cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}


def set_up_django(var_dir: Path, model_cache: Path) -> None:
    """Django on a fresh VERIMED_VAR_DIR: settings read the environment once, so it is set before they load."""
    os.environ["VERIMED_VAR_DIR"] = str(var_dir)
    os.environ["VERIMED_MODEL_CACHE"] = str(model_cache)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", "--noinput", verbosity=0)


def run(corpus: list[Paper]) -> dict[str, Any]:
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from indexer.full_text_files import read_full_text
    from indexer.library_records import library_add
    from webapp.corpus.engines import embedder
    from webapp.library import indexing, services
    from webapp.library.engines import library_lexical_index, library_vector_index, release_library_engines
    from webapp.library.models import Passage

    owner = get_user_model().objects.create_user("bench-researcher")
    reading, embedding, adding = Clock(), Clock(), Clock()
    # The stages' shares, timed where the product calls them (module globals, so the services see the wrappers).
    services.__dict__["read_full_text"] = reading.wrap(read_full_text)
    indexing.__dict__["library_add"] = adding.wrap(library_add)

    upload = Stage()
    document_ids: list[int] = []
    for paper in corpus:
        started = time.perf_counter()
        document = services.document_upload(owner=owner, filename=paper.name, data=paper.pdf).document
        elapsed = time.perf_counter() - started
        upload.seconds += elapsed
        upload.per_paper.append(elapsed)
        upload.papers += 1
        upload.pages += paper.pages
        upload.passages += Passage.objects.filter(document=document).count()
        document_ids.append(document.pk)

    started = time.perf_counter()
    model = embedder()
    model.embed(["warming up the embedder"])
    library_lexical_index()
    library_vector_index()
    load_seconds = time.perf_counter() - started
    model.embed = embedding.wrap(model.embed)  # type: ignore[method-assign]

    index = Stage()
    for document_id, paper in zip(document_ids, corpus, strict=True):
        started = time.perf_counter()
        indexing.document_index(document_id=document_id)
        elapsed = time.perf_counter() - started
        index.seconds += elapsed
        index.per_paper.append(elapsed)
        index.papers += 1
        index.pages += paper.pages
        index.passages += Passage.objects.filter(document_id=document_id).count()
    indexed = library_lexical_index().count()
    started = time.perf_counter()
    release_library_engines()
    close_seconds = time.perf_counter() - started
    assert indexed == index.passages, f"the lexical leg holds {indexed} passages of {index.passages}"

    engines = settings.VERIMED.engines
    writing = adding.seconds - embedding.seconds  # library_add embeds, then writes both legs
    return {
        "machine": machine(),
        "papers": len(corpus),
        "pages": sum(paper.pages for paper in corpus),
        "passages": upload.passages,
        "engines": {
            "lexical": engines.lexical_backend,
            "vectors": engines.vector_backend,
            "embedder": f"{engines.embedding_model} ({engines.embedding_backend})",
            "torch_threads": engines.torch_threads,
        },
        "upload": _summary(upload, {"reading_s": reading.seconds}),
        "indexing": _summary(index, {"embedding_s": embedding.seconds, "writing_s": writing}),
        "load_s": round(load_seconds, 2),
        "close_s": round(close_seconds, 2),
    }


def _summary(stage: Stage, shares: dict[str, float]) -> dict[str, float]:
    ordered = sorted(stage.per_paper)
    return {
        "seconds": round(stage.seconds, 2),
        **{name: round(seconds, 2) for name, seconds in shares.items()},
        "papers_per_s": round(stage.papers / stage.seconds, 2),
        "pages_per_s": round(stage.pages / stage.seconds, 2),
        "passages_per_s": round(stage.passages / stage.seconds, 1),
        "s_per_paper_median": round(ordered[len(ordered) // 2], 3),
        "s_per_paper_max": round(ordered[-1], 3),
    }


def print_table(report: dict[str, Any]) -> None:
    print(f"{report['papers']} papers, {report['pages']} pages, {report['passages']} passages")
    header = ["stage", "seconds", "of which", "papers/s", "pages/s", "passages/s", "s/paper median / max"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for stage in ("upload", "indexing"):
        cell = report[stage]
        shares = ", ".join(f"{name[:-2]} {value}" for name, value in cell.items() if name in SHARES)
        print(
            f"| {stage} | {cell['seconds']} | {shares} | {cell['papers_per_s']} | {cell['pages_per_s']} | "
            f"{cell['passages_per_s']} | {cell['s_per_paper_median']} / {cell['s_per_paper_max']} |"
        )
    print(f"embedder load and index open: {report['load_s']} s; closing both indexes: {report['close_s']} s")
    print(f"engines: {json.dumps(report['engines'])}")
    print(f"machine: {json.dumps(report['machine'])}")


SHARES = ("reading_s", "embedding_s", "writing_s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=20)
    parser.add_argument("--records-per-paper", type=int, default=6)
    parser.add_argument(
        "--model-cache",
        type=Path,
        default=Path(os.environ.get("VERIMED_MODEL_CACHE", ROOT / "var" / "models")),
        help="where the embedder's ONNX export is kept (the configured cache by default)",
    )
    parser.add_argument("--json", type=Path, default=Path("var/benchmarks/library-indexing.json"))
    options = parser.parse_args()
    corpus = papers(shared_data_dir(), options.papers, options.records_per_paper)
    with tempfile.TemporaryDirectory(prefix="verimed-library-bench-") as var_dir:
        set_up_django(Path(var_dir), options.model_cache.resolve())
        report = run(corpus)
    print_table(report)
    options.json.parent.mkdir(parents=True, exist_ok=True)
    options.json.write_text(json.dumps(report, indent=2))
    print(f"wrote {options.json}")


if __name__ == "__main__":
    main()
