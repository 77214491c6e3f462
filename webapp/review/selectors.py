"""Read-side of flags: who sees which, the filtered queue, one flag with the abstracts it is about, agreement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from django.db.models import Count, F, Q, QuerySet

from indexer.sentences import split_sentences
from webapp.accounts.roles import REVIEWER, AnyUser, user_has_role
from webapp.corpus.models import Article
from webapp.review.models import Flag

ANY_STATUS = "all"


def flags_visible(*, user: AnyUser) -> QuerySet[Flag]:
    """Reviewers and admins see every flag, to work the queue; anyone else sees the flags they raised."""
    flags = Flag.objects.select_related("sentence", "flagged_by", "resolved_by").order_by("-created_at", "-pk")
    if user_has_role(user, REVIEWER):
        return flags
    if not user.is_authenticated:
        return flags.none()
    return flags.filter(flagged_by_id=user.pk)


@dataclass(frozen=True)
class FlagFilters:
    status: str = Flag.Status.OPEN  # ANY_STATUS for every status
    reason: str = ""
    verdict: str = ""  # the verifier's verdict when the flag was raised
    created_from: date | None = None
    created_to: date | None = None  # inclusive


def flags_filtered(*, filters: FlagFilters) -> QuerySet[Flag]:
    flags = Flag.objects.select_related("question", "sentence", "flagged_by", "resolved_by")
    if filters.status and filters.status != ANY_STATUS:
        flags = flags.filter(status=filters.status)
    if filters.reason:
        flags = flags.filter(reason=filters.reason)
    if filters.verdict:
        flags = flags.filter(verifier_verdict=filters.verdict)
    if filters.created_from:
        flags = flags.filter(created_at__date__gte=filters.created_from)
    if filters.created_to:
        flags = flags.filter(created_at__date__lte=filters.created_to)
    return flags.order_by("-created_at", "-pk")


def flag_get(*, flag_id: int) -> Flag:
    return Flag.objects.select_related("question", "sentence", "flagged_by", "resolved_by").get(pk=flag_id)


def flagged_sentence_positions(*, question_id: int) -> list[int]:
    """Positions of the sentences with an open flag, so the answer page marks them again after a reload."""
    positions = Flag.objects.filter(question_id=question_id, status=Flag.Status.OPEN).values_list(
        "sentence__position", flat=True
    )
    return sorted(set(positions))


@dataclass(frozen=True)
class VerdictAgreement:
    verdict: str  # the verifier's verdict
    closed: int
    labelled: int  # closed flags the reviewer gave a label; only these can confirm or overturn the verifier
    confirmed: int

    @property
    def share(self) -> float | None:
        return self.confirmed / self.labelled if self.labelled else None


@dataclass(frozen=True)
class AgreementFigures:
    open: int
    resolved: int
    dismissed: int
    per_verdict: tuple[VerdictAgreement, ...]

    @property
    def closed(self) -> int:
        return self.resolved + self.dismissed

    @property
    def labelled(self) -> int:
        return sum(row.labelled for row in self.per_verdict)

    @property
    def confirmed(self) -> int:
        return sum(row.confirmed for row in self.per_verdict)

    @property
    def share(self) -> float | None:
        return self.confirmed / self.labelled if self.labelled else None


def flag_agreement() -> AgreementFigures:
    """How often reviewers confirmed the verifier's verdict on the flags they closed, per verifier verdict."""
    by_status = {
        row["status"]: row["count"] for row in Flag.objects.order_by().values("status").annotate(count=Count("pk"))
    }
    rows = (
        Flag.objects.exclude(status=Flag.Status.OPEN)
        .values("verifier_verdict")
        .annotate(
            closed=Count("pk"),
            labelled=Count("pk", filter=~Q(reviewer_label="")),
            confirmed=Count("pk", filter=Q(reviewer_label=F("verifier_verdict"))),
        )
        .order_by("verifier_verdict")
    )
    return AgreementFigures(
        open=by_status.get(Flag.Status.OPEN, 0),
        resolved=by_status.get(Flag.Status.RESOLVED, 0),
        dismissed=by_status.get(Flag.Status.DISMISSED, 0),
        per_verdict=tuple(
            VerdictAgreement(
                verdict=row["verifier_verdict"],
                closed=row["closed"],
                labelled=row["labelled"],
                confirmed=row["confirmed"],
            )
            for row in rows
        ),
    )


@dataclass(frozen=True)
class Segment:
    text: str
    evidence: bool


@dataclass(frozen=True)
class CitedAbstract:
    pmid: str
    label: str
    confidence: float | None  # of `leaning`, which an UNCLEAR label hides
    leaning: str  # blank for NO_REFERENCE and rows from before it was stored
    flagged: bool  # the flag names this abstract
    article: Article | None  # None when the cited PMID is not in the corpus (never retrieved)
    evidence: tuple[str, ...]  # the evidence sentences' text
    segments: tuple[Segment, ...]  # the abstract, cut where the evidence starts and ends


@dataclass(frozen=True)
class FlagDetail:
    flag: Flag
    citations: tuple[CitedAbstract, ...]


def evidence_segments(text: str, spans: Sequence[Sequence[int]]) -> tuple[Segment, ...]:
    """`text` cut into plain and evidence pieces; overlapping or out-of-range spans are skipped, as on the answer
    page, so a stale offset never marks the wrong characters twice."""
    segments: list[Segment] = []
    cursor = 0
    for start, end in sorted((int(span[0]), int(span[1])) for span in spans if len(span) == 2):
        if start < cursor or end > len(text) or end <= start:
            continue
        if start > cursor:
            segments.append(Segment(text[cursor:start], evidence=False))
        segments.append(Segment(text[start:end], evidence=True))
        cursor = end
    if cursor < len(text):
        segments.append(Segment(text[cursor:], evidence=False))
    return tuple(segments)


def flag_detail(*, flag_id: int) -> FlagDetail:
    flag = flag_get(flag_id=flag_id)
    citations = list(flag.sentence.citations.all())
    articles = Article.objects.in_bulk([citation.pmid for citation in citations], field_name="pmid")
    cited: list[CitedAbstract] = []
    for citation in citations:
        article = articles.get(citation.pmid)
        sentences = split_sentences(article.abstract) if article else []
        indices = [index for index in citation.evidence_sentences if 0 <= index < len(sentences)]
        # Without character offsets the evidence sentences' own offsets mark the same text.
        spans = citation.evidence_spans or [[sentences[index].start, sentences[index].end] for index in indices]
        cited.append(
            CitedAbstract(
                pmid=citation.pmid,
                label=citation.label,
                confidence=citation.confidence,
                leaning=citation.leaning,
                flagged=citation.pmid == flag.pmid,
                article=article,
                evidence=tuple(sentences[index].text for index in indices),
                segments=evidence_segments(article.abstract, spans) if article else (),
            )
        )
    return FlagDetail(flag=flag, citations=tuple(cited))
