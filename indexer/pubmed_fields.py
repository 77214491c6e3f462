"""Field extraction for one PubMed/MEDLINE citation: what a researcher filters or cites by.

The streaming and error handling live in `indexer.pubmed_xml`; this module only reads one parsed element.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lxml import etree

from indexer.records import (
    CORRECTION_REF_TYPES,
    NOTICE_REF_TYPES,
    ArticleRecord,
    Author,
    Correction,
    MeshHeading,
    Notice,
    cited_as,
)

# PubMed marks structured-abstract parts it could not classify this way; the label carries no meaning.
_MEANINGLESS_LABELS = frozenset({"UNLABELLED", "UNASSIGNED"})
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_ORCID_URL = re.compile(r"^https?://(?:www\.)?orcid\.org/", re.IGNORECASE)
_ORCID = re.compile(r"(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dX])", re.IGNORECASE)


def citation_record(pmid: str, citation: etree._Element, pubmed_data: etree._Element | None) -> ArticleRecord | None:
    """The record for a `MedlineCitation` and its `PubmedData` sibling (absent in the legacy MEDLINE layout).

    None when the citation has no abstract: a title alone is not worth indexing.
    """
    article = citation.find("Article")
    abstract = _abstract(article) if article is not None else ""
    if article is None or not abstract:
        return None
    issue = article.find("Journal/JournalIssue")
    iso_abbreviation = flat_text(article.find("Journal/ISOAbbreviation"))
    return ArticleRecord(
        pmid=pmid,
        version=_version(citation.find("PMID")),
        title=flat_text(article.find("ArticleTitle")) or flat_text(article.find("VernacularTitle")),
        abstract=abstract,
        journal=flat_text(article.find("Journal/Title")) or iso_abbreviation,
        journal_iso=iso_abbreviation,
        volume=flat_text(issue.find("Volume")) if issue is not None else "",
        issue=flat_text(issue.find("Issue")) if issue is not None else "",
        pages=_pages(article),
        pub_date=_printed_date(article.find("Journal/JournalIssue/PubDate")),
        year=_year(article, pubmed_data),
        authors=_authors(article),
        mesh=_mesh_headings(citation),
        publication_types=_texts(article.iterfind("PublicationTypeList/PublicationType")),
        language=flat_text(article.find("Language")),
        doi=_doi(article, pubmed_data),
        pmc=_article_id(pubmed_data, "pmc"),
        corrections=corrections(citation),
    )


def citation_notice(pmid: str, citation: etree._Element) -> Notice | None:
    """The notice a citation without an abstract is, if it points at a paper (RetractionOf, ErratumFor,
    ExpressionOfConcernFor); None for any other citation."""
    pointing = tuple(entry for entry in corrections(citation) if entry.ref_type in NOTICE_REF_TYPES)
    if not pointing:
        return None
    article = citation.find("Article")
    if article is None:
        return Notice(pmid=pmid, citation="", corrections=pointing)
    title = flat_text(article.find("ArticleTitle")) or flat_text(article.find("VernacularTitle"))
    journal = flat_text(article.find("Journal/ISOAbbreviation")) or flat_text(article.find("Journal/Title"))
    pub_date = _printed_date(article.find("Journal/JournalIssue/PubDate"))
    return Notice(pmid=pmid, citation=cited_as(title, journal, pub_date), corrections=pointing)


def corrections(citation: etree._Element) -> tuple[Correction, ...]:
    """The retraction, concern and erratum entries of `CommentsCorrectionsList`, in file order, without repeats."""
    found: dict[tuple[str, str, str], Correction] = {}
    for entry in citation.iterfind("CommentsCorrectionsList/CommentsCorrections"):
        ref_type = entry.get("RefType") or ""
        if ref_type not in CORRECTION_REF_TYPES:
            continue
        # Some entries name the other citation only by its RefSource: that still says the paper was corrected.
        correction = Correction(
            ref_type=ref_type, pmid=flat_text(entry.find("PMID")), source=flat_text(entry.find("RefSource"))
        )
        if correction.pmid or correction.source:
            found.setdefault((ref_type, correction.pmid, correction.source), correction)
    return tuple(found.values())


def flat_text(element: etree._Element | None) -> str:
    """All text under `element` with inline markup (<i>, <sup>, ...) dropped and whitespace collapsed."""
    if element is None:
        return ""
    # lxml-stubs type itertext() as str | bytes; text parsed from a document is always str.
    text = "".join(chunk for chunk in element.itertext() if isinstance(chunk, str))
    return " ".join(text.split())


def normalise_orcid(value: str) -> str:
    """The bare `0000-0000-0000-000X` form of an ORCID iD given bare, as a URL, or without dashes; "" if malformed.

    A truncated or mistyped iD is dropped rather than kept: it would point at nobody, or at someone else.
    """
    match = _ORCID.fullmatch(_ORCID_URL.sub("", "".join(value.split())))
    return "-".join(match.groups()).upper() if match else ""


def _version(pmid: etree._Element | None) -> int:
    # PubMed writes Version="1" for almost every citation and omits it in older files; a non-number is no version.
    raw = (pmid.get("Version") if pmid is not None else None) or "1"
    return int(raw) if raw.isdigit() and int(raw) > 0 else 1


def _abstract(article: etree._Element) -> str:
    parts: list[str] = []
    for part in article.iterfind("Abstract/AbstractText"):
        text = flat_text(part)
        if not text:
            continue
        label = " ".join((part.get("Label") or "").split())
        parts.append(f"{label}: {text}" if label and label not in _MEANINGLESS_LABELS else text)
    return " ".join(parts)


def _pages(article: etree._Element) -> str:
    medline_pages = flat_text(article.find("Pagination/MedlinePgn"))
    if medline_pages:
        return medline_pages
    start = flat_text(article.find("Pagination/StartPage"))
    end = flat_text(article.find("Pagination/EndPage"))
    return f"{start}-{end}" if start and end and end != start else start


def _printed_date(pub_date: etree._Element | None) -> str:
    """The issue date as citations print it: "2019 Mar 5", "2000 Spring", or a MedlineDate ("1998 Dec-1999 Jan")."""
    if pub_date is None:
        return ""
    medline_date = flat_text(pub_date.find("MedlineDate"))
    if medline_date:
        return medline_date
    month = _month_name(flat_text(pub_date.find("Month")))
    # A day means nothing without its month; a season stands in for the month in quarterly journals.
    day = flat_text(pub_date.find("Day")).lstrip("0") if month else ""
    parts = (flat_text(pub_date.find("Year")), month or flat_text(pub_date.find("Season")), day)
    return " ".join(part for part in parts if part)


def _month_name(month: str) -> str:
    # Most PubDates spell the month ("Mar"), some give its number ("03"); print both the same way.
    if month.isdigit() and 1 <= int(month) <= len(_MONTHS):
        return _MONTHS[int(month) - 1]
    return month


def _year(article: etree._Element, pubmed_data: etree._Element | None) -> int | None:
    candidates = [
        flat_text(article.find("Journal/JournalIssue/PubDate/Year")),
        # Free-form ranges such as "1998 Dec-1999 Jan": the first year is when the issue started.
        flat_text(article.find("Journal/JournalIssue/PubDate/MedlineDate")),
        *(flat_text(year) for year in article.iterfind("ArticleDate/Year")),
    ]
    if pubmed_data is not None:
        # When the journal gave no usable date, the day PubMed listed the citation is the best estimate left.
        candidates.append(flat_text(pubmed_data.find("History/PubMedPubDate[@PubStatus='pubmed']/Year")))
    for candidate in candidates:
        match = _YEAR.search(candidate)
        if match:
            return int(match.group(1))
    return None


def _authors(article: etree._Element) -> tuple[Author, ...]:
    # ValidYN="N" marks a name the publisher listed in error; PubMed keeps it only for the record.
    listed = (_author(element) for element in article.iterfind("AuthorList/Author") if element.get("ValidYN") != "N")
    return tuple(author for author in listed if author is not None)


def _author(element: etree._Element) -> Author | None:
    personal_name = _personal_name(element)
    name = personal_name or flat_text(element.find("CollectiveName"))
    if not name:
        return None
    return Author(
        name=name,
        collective=not personal_name,
        # Affiliation directly under Author is the pre-2015 layout; AffiliationInfo allows several.
        affiliations=_texts([*element.iterfind("AffiliationInfo/Affiliation"), *element.iterfind("Affiliation")]),
        orcid=_orcid(element),
    )


def _personal_name(author: etree._Element) -> str:
    last_name = flat_text(author.find("LastName"))
    if not last_name:
        return ""
    initials = flat_text(author.find("Initials"))
    if initials:
        return f"{last_name} {initials}"
    fore_name = flat_text(author.find("ForeName"))
    return f"{fore_name} {last_name}" if fore_name else last_name


def _orcid(author: etree._Element) -> str:
    for identifier in author.iterfind("Identifier[@Source='ORCID']"):
        orcid = normalise_orcid(flat_text(identifier))
        if orcid:
            return orcid
    return ""


def _mesh_headings(citation: etree._Element) -> tuple[MeshHeading, ...]:
    headings: list[MeshHeading] = []
    for heading in citation.iterfind("MeshHeadingList/MeshHeading"):
        descriptor = heading.find("DescriptorName")
        name = flat_text(descriptor)
        if descriptor is None or not name:
            continue
        qualifiers = [
            (flat_text(qualifier), qualifier.get("MajorTopicYN") == "Y")
            for qualifier in heading.iterfind("QualifierName")
        ]
        headings.append(
            MeshHeading(
                descriptor=name,
                # "Mast Cells/immunology*" makes the heading a major topic as much as "Mast Cells*" does.
                major_topic=descriptor.get("MajorTopicYN") == "Y" or any(major for _name, major in qualifiers),
                qualifiers=tuple(qualifier for qualifier, _major in qualifiers if qualifier),
            )
        )
    return tuple(headings)


def _doi(article: etree._Element, pubmed_data: etree._Element | None) -> str:
    doi = _article_id(pubmed_data, "doi")
    if doi:
        return doi
    # The legacy MEDLINE layout has no PubmedData; there the publisher's DOI is only in ELocationID.
    for location in article.iterfind("ELocationID[@EIdType='doi']"):
        if location.get("ValidYN") != "N" and flat_text(location):
            return flat_text(location)
    return ""


def _article_id(pubmed_data: etree._Element | None, id_type: str) -> str:
    if pubmed_data is None:
        return ""
    # Only PubmedData's own ArticleIdList: the ones under ReferenceList identify the cited works.
    for article_id in pubmed_data.iterfind("ArticleIdList/ArticleId"):
        if article_id.get("IdType") == id_type and flat_text(article_id):
            return flat_text(article_id)
    return ""


def _texts(elements: Iterable[etree._Element]) -> tuple[str, ...]:
    return tuple(text for text in (flat_text(element) for element in elements) if text)
