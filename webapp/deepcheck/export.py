"""A finished deep check as it is exported with its answer (the Markdown export, webapp/pages/exports.py): each cited
sentence's deep verdict and its claims, each with its verdict and the papers that decided it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from webapp.deepcheck.models import DeepCheck
from webapp.qa.models import Question
from webapp.review.display import VERDICT_DISPLAY

# The answer's verdicts read as everywhere else (webapp/review/display.py), plus the deep check's own.
DEEP_VERDICT_LABELS = {
    **{verdict: words for verdict, (_, words) in VERDICT_DISPLAY.items()},
    "PARTIAL": "Partly supported",
    "SUPPORT_ELSEWHERE": "Supported by another paper",
    "CONTRADICT_ELSEWHERE": "Contradicted by another paper",
}
DECIDING = ("SUPPORT", "CONTRADICT")


@dataclass(frozen=True)
class ExportedClaim:
    text: str
    verdict: str
    sources: tuple[tuple[str, bool], ...]  # (PMID, cited by the sentence) of each abstract that decided it


@dataclass(frozen=True)
class ExportedDeepSentence:
    number: int  # from 1
    verdict: str
    note: str  # why the sentence was checked whole
    claims: tuple[ExportedClaim, ...]


@dataclass(frozen=True)
class ExportedDeepCheck:
    extractor: str
    verifier: str
    sentences: tuple[ExportedDeepSentence, ...]


def exported_deep_check(*, question: Question) -> ExportedDeepCheck | None:
    """The question's finished deep check; None when it has none (never run, running, failed or stopped)."""
    check = DeepCheck.objects.filter(question=question, status=DeepCheck.Status.DONE).first()
    if check is None or not check.tree:
        return None
    sentences = tuple(
        ExportedDeepSentence(
            number=int(sentence["position"]) + 1,
            verdict=str(sentence["verdict"]),
            note="" if sentence["from_model"] else str(sentence["note"]),
            claims=tuple(
                ExportedClaim(
                    text=str(claim["text"]),
                    verdict=str(claim["verdict"]),
                    sources=tuple(
                        (str(evidence["pmid"]), bool(evidence["cited"]))
                        for evidence in claim["evidence"]
                        if evidence["label"] in DECIDING
                    ),
                )
                for claim in sentence["claims"]
            ),
        )
        for sentence in check.tree["sentences"]
        if sentence["claims"]
    )
    return ExportedDeepCheck(
        extractor=str(check.models_used.get("extractor", "")),
        verifier=str(check.models_used.get("verifier", "")),
        sentences=sentences,
    )


def deep_check_markdown(
    deep: ExportedDeepCheck | None, *, escape: Callable[[str], str], label: Callable[[str], str]
) -> list[str]:
    """Markdown lines for the export; `escape` makes untrusted text (claims are model output) inert Markdown."""
    if deep is None:
        return []
    credits = "; ".join(
        part
        for part in (
            f"claims by {escape(deep.extractor)}" if deep.extractor else "",
            f"verdicts by {escape(deep.verifier)}" if deep.verifier else "",
        )
        if part
    )
    lines = ["", "## Deep check", ""]
    lines += [
        "*Each cited sentence split into claims"
        + (f" ({credits})" if credits else "")
        + ". A sentence is supported only when every claim is supported by an abstract it cites.*",
        "",
    ]
    for sentence in deep.sentences:
        line = f"- Sentence {sentence.number} — **{_label(sentence.verdict, escape)}**"
        if sentence.note:
            line += f" (checked as one claim: {escape(sentence.note)})"
        lines.append(line)
        for claim in sentence.claims:
            sources = ", ".join(
                escape(label(pmid)) + ("" if cited else " (not cited)") for pmid, cited in claim.sources
            )
            lines.append(
                f"  - {escape(claim.text)} — **{_label(claim.verdict, escape)}**" + (f" ({sources})" if sources else "")
            )
    if not deep.sentences:
        lines.append("No sentence cites an abstract: there were no claims to check.")
    return lines


def _label(verdict: str, escape: Callable[[str], str]) -> str:
    return DEEP_VERDICT_LABELS.get(verdict) or escape(verdict)
