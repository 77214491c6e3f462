"""`manage.py evaluate retrieval`: reading the inputs, building the throw-away index, then one run."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from indexer.errors import IndexerError
from webapp.corpus import engines
from webapp.ops.evaluate_retrieval import build_summary, evaluate_retrieval, read_corpus, read_qrels, read_questions
from webapp.ops.evaluation_index import build_evaluation_index

Write = Callable[[str], None]


def _default_index_dir(corpus: list[Path]) -> Path:
    # One folder per corpus so that BioASQ and SciFact runs do not rebuild each other's index.
    name = hashlib.sha256("\0".join(str(path.resolve()) for path in corpus).encode()).hexdigest()[:12]
    return settings.VAR_DIR / "eval" / f"retrieval-{name}"


def retrieval_command(options: dict[str, Any], write: Write) -> dict[str, Any]:
    corpus: list[Path] = options["corpus"]
    for path in [*corpus, options["questions"], options["qrels"]]:
        if not path.exists():
            raise CommandError(f"{path} does not exist")
    try:
        questions = read_questions(options["questions"])
        qrels = read_qrels(options["qrels"])
        write(f"reading {len(corpus)} corpus file(s)…")
        records, parse_seconds = read_corpus(corpus)
        if not records:
            raise CommandError("the corpus holds no documents with an abstract")
        embedder = engines.embedder()
        directory: Path = options.get("index_dir") or _default_index_dir(corpus)
        write(f"indexing {len(records):,} documents into {directory} (reused when already built)…")
        index = build_evaluation_index(records, directory, embedder)
        try:
            result = evaluate_retrieval(
                records=records,
                questions=questions,
                qrels=qrels,
                index=index,
                embedder=embedder,
                write=write,
                lexical_weights=options.get("lexical_weights") or (),
            )
        finally:
            index.close()
    except IndexerError as exc:
        raise CommandError(str(exc)) from exc
    result["build"] = build_summary(index, parse_seconds=parse_seconds)
    result["embedding_model"] = embedder.model_id
    result["corpus"] = [str(path) for path in corpus]
    return result
