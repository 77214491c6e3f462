"""Retraction, concern and erratum links kept at save time, and the statuses they resolve to on both sides.

Every citation read replaces the links it carries (CorrectionLink), then every stored article those links touch
is resolved again: the citation itself, and each paper its notices point at (now or before this version). So a
notice marks its paper whether the paper was stored before it or arrives after it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence

from django.db import transaction

from indexer.records import NOTICE_REF_TYPES, ArticleRecord, Correction, Notice
from webapp.corpus.models import Article, CorrectionLink
from webapp.corpus.retraction_status import retraction_state


def retractions_record_articles(*, records: Sequence[ArticleRecord]) -> None:
    """Links of articles just saved; a record the store refused (an older version than the stored one) is ignored."""
    stored = dict(Article.objects.filter(pmid__in=[record.pmid for record in records]).values_list("pmid", "version"))
    current = [record for record in records if record.version >= stored.get(record.pmid, record.version)]
    _replace_links({record.pmid: (record.corrections, record.cited_as) for record in current})


def retractions_record_notices(*, notices: Sequence[Notice]) -> None:
    """Links of notices that are not stored as articles (they have no abstract)."""
    _replace_links({notice.pmid: (notice.corrections, notice.citation) for notice in notices})


def retractions_forget(*, pmids: Sequence[str]) -> None:
    """Deleted citations: their links go, and the papers their notices pointed at are resolved without them."""
    with transaction.atomic():
        links = CorrectionLink.objects.filter(pmid__in=list(pmids))
        affected = set(links.exclude(ref_pmid="").values_list("ref_pmid", flat=True))
        links.delete()
        retractions_resolve(pmids=affected)


def retractions_resolve(*, pmids: Collection[str]) -> int:
    """Recompute the status and notices of these articles (those not stored are skipped); returns how many changed."""
    articles = list(
        Article.objects.filter(pmid__in=list(pmids)).only(
            "pmid", "publication_types", "retraction_status", "retraction_notices"
        )
    )
    stored = [article.pmid for article in articles]
    # In the order the entries were read, so that resolving again never reorders (and rewrites) a notices list.
    own = _grouped(CorrectionLink.objects.filter(pmid__in=stored).order_by("pk"), by="pmid")
    pointing_here = _grouped(
        CorrectionLink.objects.filter(ref_pmid__in=stored, ref_type__in=NOTICE_REF_TYPES).order_by("pk"), by="ref_pmid"
    )
    changed: list[Article] = []
    for article in articles:
        state = retraction_state(
            own=(_own_entry(link) for link in own[article.pmid]),
            pointing_here=(_pointing_entry(link) for link in pointing_here[article.pmid]),
            publication_types=article.publication_types or (),
        )
        notices = state.notices_json()
        if state.status != article.retraction_status or notices != article.retraction_notices:
            article.retraction_status, article.retraction_notices = state.status, notices
            changed.append(article)
    Article.objects.bulk_update(changed, ["retraction_status", "retraction_notices"])
    return len(changed)


def _replace_links(carried: dict[str, tuple[Iterable[Correction], str]]) -> None:
    if not carried:
        return
    with transaction.atomic():
        previous = _grouped(CorrectionLink.objects.filter(pmid__in=list(carried)).order_by("pk"), by="pmid")
        fresh = {
            pmid: [
                CorrectionLink(
                    pmid=pmid,
                    ref_type=entry.ref_type,
                    ref_pmid=entry.pmid[:32],
                    ref_source=entry.source,
                    cited_as=cited_as,
                )
                for entry in entries
            ]
            for pmid, (entries, cited_as) in carried.items()
        }
        # A citation read again unchanged keeps its rows: re-reading a file rewrites nothing.
        changed = [
            pmid for pmid in carried if [_key(link) for link in previous[pmid]] != [_key(link) for link in fresh[pmid]]
        ]
        CorrectionLink.objects.filter(pmid__in=changed).delete()
        CorrectionLink.objects.bulk_create([link for pmid in changed for link in fresh[pmid]])
        # Papers a notice pointed at before this version count too: a notice corrected to name another paper
        # must stop marking the first one.
        touched = [link for pmid in changed for link in (*previous[pmid], *fresh[pmid])]
        retractions_resolve(pmids=set(carried) | {link.ref_pmid for link in touched if link.ref_pmid})


def _key(link: CorrectionLink) -> tuple[str, str, str, str]:
    return (link.ref_type, link.ref_pmid, link.ref_source, link.cited_as)


def _grouped(links: Iterable[CorrectionLink], *, by: str) -> defaultdict[str, list[CorrectionLink]]:
    groups: defaultdict[str, list[CorrectionLink]] = defaultdict(list)
    for link in links:
        groups[getattr(link, by)].append(link)
    return groups


def _own_entry(link: CorrectionLink) -> Correction:
    return Correction(ref_type=link.ref_type, pmid=link.ref_pmid, source=link.ref_source)


def _pointing_entry(link: CorrectionLink) -> Correction:
    # Seen from the paper, the other citation is the notice: its PMID and how it is cited.
    return Correction(ref_type=link.ref_type, pmid=link.pmid, source=link.cited_as)
