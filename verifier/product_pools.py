"""Which abstracts may make product-shaped verifier pairs: training-split documents for training, dev-split documents
for the dev set, and never a document of the other side or of the BioASQ retrieval benchmark.

A document is the abstract a split's claims cite. Ids are per corpus, and the same abstract can sit in two corpora
under two ids (HealthVer and CovidFact share COVID-19 papers), so a document is also held out when any of its longer
sentences appears, normalised, in a held-out document. The SciFact test claims name no documents, so a SciFact
abstract is used only where a training claim cites it: the test's documents stay unseen.

The benchmark's own corpus (`corpus.jsonl.gz`, the gold and hard-negative abstracts of its questions) and its PubMed
distractors are held out. Its other distractors are the SciFact corpus under `S2:` ids, kept out of the benchmark's
questions' gold sets; the SciFact documents training claims cite stay usable, as they are for the gold training.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from verifier.datasets import DEV_SPLITS, TRAIN_SPLITS, ClaimDocumentPair, Split, read_split
from verifier.product_pairs import SourceDocument, finding_sentences

BENCHMARK_FILES = ("bioasq/benchmark/corpus.jsonl.gz", "bioasq/benchmark/distractors.jsonl.gz")
_KEY_MIN_CHARS = 60  # shorter sentences ("Results were similar.") recur across unrelated abstracts


@dataclass(frozen=True)
class Pools:
    training: list[SourceDocument]
    dev: list[SourceDocument]


def sentence_key(sentence: str) -> str | None:
    key = re.sub(r"[^a-z0-9]+", "", sentence.lower())
    return key if len(key) >= _KEY_MIN_CHARS else None


def sentence_keys(sentences: Iterable[str]) -> set[str]:
    # Split again by punctuation alone, as the benchmark's texts are, so that both sides are cut the same way.
    return {key for sentence in sentences for key in map(sentence_key, rough_sentences(sentence)) if key}


def rough_sentences(text: str) -> list[str]:
    """Sentences by end punctuation alone: enough to find a shared sentence, and 12,000 abstracts split in seconds
    where the product's sentence splitter takes minutes."""
    return re.split(r"(?<=[.!?])\s+", text)


def benchmark_sentence_keys(data_root: Path) -> set[str]:
    """The benchmark corpus's and its PubMed distractors' sentences (the SciFact `S2:` distractors aside)."""
    keys: set[str] = set()
    for name in BENCHMARK_FILES:
        for record in _json_lines(data_root / name):
            if str(record.get("pmid", "")).startswith("S2:"):
                continue
            keys |= sentence_keys(rough_sentences(str(record.get("text", ""))))
    return keys


def cited_documents(pairs: Sequence[ClaimDocumentPair], corpus: str) -> dict[tuple[str, str], SourceDocument]:
    """Each cited abstract once, keyed by (corpus, id), with the finding sentences its claims' rationales mark. Its
    id is qualified by its corpus folder ("healthver:57"), since two corpora reuse ids."""
    rationales: dict[tuple[str, str], list[int]] = {}
    documents = {}
    for pair in pairs:
        key = (corpus, pair.document.doc_id)
        qualified = f"{corpus.split('/')[0]}:{pair.document.doc_id}"
        documents[key] = replace(pair.document, doc_id=qualified)
        rationales.setdefault(key, []).extend(pair.rationale)
    return {
        key: SourceDocument(document=document, findings=finding_sentences(document, sorted(set(rationales[key]))))
        for key, document in documents.items()
    }


def product_pools(data_root: Path) -> Pools:
    """The training and dev abstracts, each side disjoint from the other (by id and by sentence) and from the
    benchmark; abstracts with no finding sentence are left out of both."""
    training = _split_documents(data_root, TRAIN_SPLITS)
    dev = _split_documents(data_root, DEV_SPLITS)
    benchmark = benchmark_sentence_keys(data_root)
    dev_keys = {key for source in dev.values() for key in sentence_keys(source.document.sentences)}
    training_keys = {key for source in training.values() for key in sentence_keys(source.document.sentences)}
    not_for_training, not_for_dev = dev_keys | benchmark, training_keys | benchmark
    kept_training = [
        source
        for key, source in training.items()
        if key not in dev and not sentence_keys(source.document.sentences) & not_for_training
    ]
    kept_dev = [
        source
        for key, source in dev.items()
        if key not in training and not sentence_keys(source.document.sentences) & not_for_dev
    ]
    return Pools(
        training=[source for source in kept_training if source.findings],
        dev=[source for source in kept_dev if source.findings],
    )


def _split_documents(data_root: Path, splits: Sequence[Split]) -> dict[tuple[str, str], SourceDocument]:
    # Keyed by the corpus file: SciFact's train and dev claims cite one corpus, so an id is the same abstract.
    documents: dict[tuple[str, str], SourceDocument] = {}
    for split in splits:
        documents.update(cited_documents(read_split(data_root, split), split.corpus))
    return documents


def _json_lines(path: Path) -> Iterator[dict[str, object]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)
