"""Closed, labelled flags as verifier training data: one self-contained file that `train_verifier --extra FILE`
reads (`verifier.reviewed_flags`: claim, abstract, the reviewer's label and the flag's ids on each line), and the same
lines in the SciFact format `verifier.datasets.read_scifact_pairs` reads: a claims file (one line per flag and cited
abstract) and the corpus of the abstracts those lines cite."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db.models import Prefetch

from indexer.sentences import sentence_texts
from verifier.reviewed_flags import reviewed_row
from verifier.verdicts import CONTRADICT, SUPPORT
from webapp.corpus.models import Article
from webapp.qa.models import AnswerSentence, CitationVerdict
from webapp.review.models import Flag


@dataclass(frozen=True)
class TrainingExport:
    claims: tuple[dict[str, Any], ...]
    corpus: tuple[dict[str, Any], ...]
    rows: tuple[dict[str, Any], ...]  # the `train_verifier --extra` file: one line per claims line, self-contained


def _exportable_flags() -> list[Flag]:
    citations = Prefetch("sentence__citations", queryset=CitationVerdict.objects.order_by("position"))
    return list(
        Flag.objects.exclude(status=Flag.Status.OPEN)
        # Only a reviewer's own label is a training label: never the verifier's (an UNCLEAR verdict is no label).
        .filter(reviewer_label__in=Flag.Label.values)
        .select_related("sentence", "claim", "question")
        .prefetch_related(citations)
        .order_by("pk")
    )


def _pmids(flag: Flag, sentence: AnswerSentence) -> list[str]:
    """The abstract the flag names, else every abstract the sentence cites: the reviewer judged against those."""
    if flag.pmid:
        return [flag.pmid]
    return list(dict.fromkeys(citation.pmid for citation in sentence.citations.all()))


def _flagged_text(flag: Flag) -> str:
    """The sentence, or the one claim of it a deep check's claim flag names (webapp/deepcheck): the reviewer's label
    is about that claim, not about the sentence's other claims."""
    claim = getattr(flag, "claim", None)  # the reverse of ClaimFlag.flag: absent for a sentence's own flag
    return str(claim.claim_text) if claim is not None else flag.sentence.display_text


def flag_training_export() -> TrainingExport:
    flags = _exportable_flags()
    wanted = {pmid for flag in flags for pmid in _pmids(flag, flag.sentence)}
    articles = Article.objects.in_bulk(sorted(wanted), field_name="pmid")
    claims: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    used: dict[str, Article] = {}
    for flag in flags:
        evidence_of = {citation.pmid: citation.evidence_sentences for citation in flag.sentence.citations.all()}
        for pmid in _pmids(flag, flag.sentence):
            article = articles.get(pmid)
            if article is None:
                continue  # a cited PMID that is not in the corpus has no abstract to train on
            used.setdefault(pmid, article)
            evidence: dict[str, list[dict[str, Any]]] = {}
            sentences = sorted({int(index) for index in evidence_of.get(pmid, [])})
            if flag.reviewer_label in (SUPPORT, CONTRADICT):
                evidence[pmid] = [{"label": flag.reviewer_label, "sentences": sentences}]
            claims.append(
                {
                    "id": f"flag-{flag.pk}",
                    "claim": _flagged_text(flag),
                    "cited_doc_ids": [pmid],
                    "evidence": evidence,
                }
            )
            rows.append(
                reviewed_row(
                    flag_id=flag.pk,
                    question_id=flag.question_id,
                    question=flag.question.text,
                    sentence_position=flag.sentence.position,
                    claim=_flagged_text(flag),
                    doc_id=pmid,
                    title=article.title,
                    sentences=sentence_texts(article.abstract),
                    label=flag.reviewer_label,
                    evidence_sentences=sentences,
                )
            )
    corpus = tuple(
        {"doc_id": pmid, "title": article.title, "abstract": sentence_texts(article.abstract)}
        for pmid, article in used.items()
    )
    return TrainingExport(claims=tuple(claims), corpus=corpus, rows=tuple(rows))


def json_lines(records: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def flag_export_write(
    *, output_path: Path | None = None, claims_path: Path | None = None, corpus_path: Path | None = None
) -> TrainingExport:
    """Writes the files given: the `train_verifier --extra` file (`output_path`) and/or the SciFact pair."""
    export = flag_training_export()
    for path, records in ((output_path, export.rows), (claims_path, export.claims), (corpus_path, export.corpus)):
        if path is not None:
            path.write_text(json_lines(records), encoding="utf-8")
    return export
