"""`manage.py evaluate verification|evidence`: loading the data, the models and the peers, then one run each."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.management.base import CommandError

from generator.llm import LLMSettings, OpenAICompatibleLLM
from generator.serve import served_model
from verifier.datasets import ClaimDocumentPair, DatasetFormatError, read_pairs, read_training_pairs
from verifier.evidence_finders import evidence_finder_for
from verifier.evidence_model import EvidenceTagger, late_fusion_features
from verifier.llm_judge import LlmJudge
from verifier.vectors import SentenceVectors
from webapp.corpus import engines
from webapp.ops.evaluate_verification import Peer, run_evidence, run_verification

Write = Callable[[str], None]


def _pairs(options: dict[str, Any]) -> list[ClaimDocumentPair]:
    claims: Path = options["claims"]
    corpus: Path | None = options.get("corpus")
    for path in (claims, corpus):
        if path is not None and not path.exists():
            raise CommandError(f"{path} does not exist")
    try:
        pairs = read_pairs(claims, corpus, options.get("format") or "scifact")
    except DatasetFormatError as error:
        raise CommandError(str(error)) from error
    if not pairs:
        raise CommandError(f"{claims} holds no (claim, document) pairs")
    return pairs


def verification_command(options: dict[str, Any], write: Write) -> dict[str, Any]:
    from verifier.cross_encoder import CrossEncoderVerifier

    pairs = _pairs(options)
    labels = [label.strip() for label in options["labels"].split(",")] if options.get("labels") else None
    classifier = CrossEncoderVerifier.load(options["model"], labels=labels)
    peers = [
        Peer(name=Path(folder).name, classifier=CrossEncoderVerifier.load(folder), whole_abstract=_reads_whole(folder))
        for folder in options.get("peer") or []
    ]
    vectors = SentenceVectors(engines.embedder())
    write(f"{len(pairs)} pairs; embedding their sentences…")
    vectors.add_pairs(pairs)
    training = read_training_pairs(settings.VERIMED_DATA_DIR)
    train_labels = [pair.label for pair in training]
    serving: AbstractContextManager[str | None] = nullcontext(None)
    if options["judge_pairs"] and options.get("serve_judge"):
        write(f"serving {options['serve_judge']} with llama.cpp for the LLM judge…")
        serving = served_model(options["serve_judge"], cache=settings.VERIMED_MODEL_CACHE, n_ctx=4096)
    with serving as served_url:
        judge = None
        if options["judge_pairs"]:
            judge = LlmJudge(
                OpenAICompatibleLLM(
                    LLMSettings(
                        base_url=served_url or settings.VERIMED_LLM_BASE_URL,
                        model=options.get("serve_judge") or settings.VERIMED_LLM_MODEL,
                        api_key=settings.VERIMED_LLM_API_KEY,
                        timeout_seconds=settings.VERIMED_LLM_TIMEOUT_SECONDS,
                    )
                )
            )
        return {
            "claims": str(options["claims"]),
            **run_verification(
                pairs,
                classifier=classifier,
                finder=evidence_finder_for(Path(settings.VERIMED_EVIDENCE_MODEL), vectors),
                evidence_sentences=options["evidence_sentences"],
                train_labels=train_labels,
                judge=judge,
                judge_pairs=options["judge_pairs"],
                progress=write,
                peers=peers,
                training_documents={pair.document.doc_id for pair in training},
            ),
        }


def _reads_whole(folder: str) -> bool:
    """Whether a checkpoint was trained on whole abstracts (its training.json says so); a foreign one is read the
    way the product reads by default, on evidence sentences."""
    summary = Path(folder) / "training.json"
    if not summary.exists():
        return False
    return bool(json.loads(summary.read_text()).get("config", {}).get("input_mode") == "abstract")


def evidence_command(options: dict[str, Any], write: Write) -> dict[str, Any]:
    pairs = [pair for pair in _pairs(options) if pair.rationale and pair.document.sentences]
    if not pairs:
        raise CommandError(f"{options['claims']} has no pairs with rationale sentences")
    vectors = SentenceVectors(engines.embedder())
    write(f"{len(pairs)} (claim, document) pairs with rationales; embedding their sentences…")
    vectors.add_pairs(pairs)
    late_folder: Path = options["late_fusion"]
    if not (late_folder / "config.json").exists():
        raise CommandError(f"no LateFusion tagger in {late_folder}: run manage.py train_evidence")

    def late(pair: ClaimDocumentPair) -> np.ndarray:
        return late_fusion_features(vectors.vector(pair.claim), vectors.matrix(pair.document.sentences))

    taggers: dict[str, tuple[EvidenceTagger, Callable[[ClaimDocumentPair], np.ndarray]]] = {
        "late_fusion": (EvidenceTagger.load(late_folder), late)
    }
    early_folder: Path = options["early_fusion"]
    if (early_folder / "config.json").exists():
        from verifier.cross_encoder import CrossEncoderVerifier

        encoder = CrossEncoderVerifier.load(settings.VERIMED_VERIFIER_MODEL, max_length=128, batch_size=64)

        def early(pair: ClaimDocumentPair) -> np.ndarray:
            # Per document, as at question time, so claims/s includes the cross-encoder's reading.
            return encoder.pair_features([(pair.claim, sentence) for sentence in pair.document.sentences])

        taggers["early_fusion"] = (EvidenceTagger.load(early_folder), early)
    else:
        write(f"no EarlyFusion tagger in {early_folder}; it is left out")

    def cosine(pair: ClaimDocumentPair) -> list[float]:
        return [float(v) for v in vectors.matrix(pair.document.sentences) @ vectors.vector(pair.claim)]

    training = {pair.document.doc_id for pair in read_training_pairs(settings.VERIMED_DATA_DIR)}
    return {
        "claims": str(options["claims"]),
        **run_evidence(pairs, taggers=taggers, cosine=cosine, main="late_fusion", training_documents=training),
    }
