"""What a re-check compares: the state of an answer's checks, and the differences between two states.

A state holds the verdict of each (sentence, cited PMID), the retraction status of each cited paper and the newly
retrieved abstracts already reported as contradicting a sentence. A re-check stores its state; the next one reports
only what differs from it, so a change is told once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

NONE = "none"  # Article.Retraction.NONE


def verdict_key(position: int, pmid: str) -> str:
    return f"{position}:{pmid}"


def _position(key: str) -> int:
    return int(key.split(":", 1)[0])


@dataclass(frozen=True)
class AnswerState:
    verdicts: Mapping[str, str] = field(default_factory=dict)  # verdict_key(position, pmid) -> label
    retraction: Mapping[str, str] = field(default_factory=dict)  # cited PMID -> Article.Retraction value
    contradicting: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # PMID -> sentence positions told

    def to_json(self) -> dict[str, Any]:
        return {
            "verdicts": dict(self.verdicts),
            "retraction": dict(self.retraction),
            "contradicting": {pmid: list(positions) for pmid, positions in self.contradicting.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AnswerState:
        return cls(
            verdicts=dict(data.get("verdicts", {})),
            retraction=dict(data.get("retraction", {})),
            contradicting={pmid: tuple(positions) for pmid, positions in data.get("contradicting", {}).items()},
        )


@dataclass(frozen=True)
class Contradiction:
    """A newly retrieved abstract the verifier labels CONTRADICT (above its Unclear threshold) against a sentence."""

    pmid: str
    sentence: int
    confidence: float | None


@dataclass(frozen=True)
class VerdictChange:
    sentence: int
    sentence_text: str
    pmid: str
    before: str
    after: str
    kind: Literal["verdict"] = "verdict"


@dataclass(frozen=True)
class RetractionChange:
    pmid: str
    title: str
    before: str
    after: str
    notices: tuple[Mapping[str, str], ...]  # {ref_type, pmid, source}, as the article lists them
    kind: Literal["retraction"] = "retraction"


@dataclass(frozen=True)
class ContradictionChange:
    pmid: str
    title: str
    sentence: int
    sentence_text: str
    confidence: float | None
    kind: Literal["contradiction"] = "contradiction"


Change = VerdictChange | RetractionChange | ContradictionChange


@dataclass(frozen=True)
class Reading:
    """The texts a change is told with: the answer's sentences by position, and titles and notices by PMID."""

    sentences: Mapping[int, str]
    titles: Mapping[str, str]
    notices: Mapping[str, Sequence[Mapping[str, str]]]


def answer_changes(
    *, previous: AnswerState, current: AnswerState, found: Iterable[Contradiction], reading: Reading
) -> list[Change]:
    """What differs in `current` from `previous`: verdicts that moved (only where there was one before: an answer
    verified without verdicts gains them silently), cited papers whose status moved, and contradictions not told
    before. `current.contradicting` is ignored; `found` is this check's."""
    changes: list[Change] = []
    for key, after in current.verdicts.items():
        before = previous.verdicts.get(key)
        if before is not None and before != after:
            position, pmid = _position(key), key.split(":", 1)[1]
            text = reading.sentences.get(position, "")
            changes.append(VerdictChange(sentence=position, sentence_text=text, pmid=pmid, before=before, after=after))
    for pmid, after in current.retraction.items():
        before = previous.retraction.get(pmid, NONE)
        if before != after:
            notices = tuple(dict(notice) for notice in reading.notices.get(pmid, ()))
            title = reading.titles.get(pmid, "")
            changes.append(RetractionChange(pmid=pmid, title=title, before=before, after=after, notices=notices))
    for item in found:
        if item.sentence in previous.contradicting.get(item.pmid, ()):
            continue
        changes.append(
            ContradictionChange(
                pmid=item.pmid,
                title=reading.titles.get(item.pmid, ""),
                sentence=item.sentence,
                sentence_text=reading.sentences.get(item.sentence, ""),
                confidence=item.confidence,
            )
        )
    return changes


def next_state(*, previous: AnswerState, current: AnswerState, found: Iterable[Contradiction]) -> AnswerState:
    """`current` with every contradiction told so far, this check's included: none is told twice."""
    told = {pmid: set(positions) for pmid, positions in previous.contradicting.items()}
    for item in found:
        told.setdefault(item.pmid, set()).add(item.sentence)
    contradicting = {pmid: tuple(sorted(positions)) for pmid, positions in sorted(told.items())}
    return AnswerState(verdicts=current.verdicts, retraction=current.retraction, contradicting=contradicting)


def changes_json(changes: Iterable[Change]) -> list[dict[str, Any]]:
    """As stored and served: plain JSON (lists, not tuples), the kind first."""
    loaded: list[dict[str, Any]] = json.loads(json.dumps([{"kind": c.kind, **asdict(c)} for c in changes]))
    return loaded


SUMMARY_CHARS = 300  # Recheck.summary's length
STATUS_WORDS = {
    "retracted": "retracted",
    "concern": "under an expression of concern",
    "corrected": "corrected",
    "notice": "a notice",
    NONE: "no longer flagged",
}


def changes_summary(changes: Sequence[Change]) -> str:
    """One line for the notification and the re-check's heading."""
    if not changes:
        return "Nothing changed."
    parts = [
        f"PMID {change.pmid} {STATUS_WORDS.get(change.after, change.after)}"
        for change in changes
        if isinstance(change, RetractionChange)
    ]
    verdicts = sum(isinstance(change, VerdictChange) for change in changes)
    if verdicts:
        parts.append(f"{verdicts} verdict{'s' if verdicts != 1 else ''} changed")
    contradicting = len({change.pmid for change in changes if isinstance(change, ContradictionChange)})
    if contradicting:
        parts.append(f"{contradicting} new contradicting abstract{'s' if contradicting != 1 else ''}")
    summary = "; ".join(parts) + "."
    return summary if len(summary) <= SUMMARY_CHARS else summary[: SUMMARY_CHARS - 1] + "…"
