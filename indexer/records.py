"""Article records as they cross the boundary between readers, indexes and the database."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MeshHeading:
    descriptor: str
    major_topic: bool = False
    qualifiers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Author:
    """A personal author (`name` as "Last Initials") or a group (`collective`), as PubMed lists them."""

    name: str
    collective: bool = False
    affiliations: tuple[str, ...] = ()
    orcid: str = ""


@dataclass(frozen=True)
class Correction:
    """One `CommentsCorrections` entry that bears on trusting a paper: a retraction, an expression of concern or an
    erratum, seen from the side that carries it (`RetractionIn` on the paper, `RetractionOf` on the notice).

    `pmid` is the other citation's; PubMed sometimes gives only `source`, the other citation as it prints it.
    """

    ref_type: str  # PubMed's RefType, one of `CORRECTION_REF_TYPES`
    pmid: str
    source: str


# Paper side first, notice side second; every other RefType (CommentOn, Cites, UpdateOf...) is left unread.
CORRECTION_REF_TYPES = (
    "RetractionIn",
    "ExpressionOfConcernIn",
    "ErratumIn",
    "RetractionOf",
    "ExpressionOfConcernFor",
    "ErratumFor",
)
# The entries a notice carries: each points at the paper the notice is about.
NOTICE_REF_TYPES = frozenset({"RetractionOf", "ExpressionOfConcernFor", "ErratumFor"})


def cited_as(title: str, journal: str, pub_date: str) -> str:
    """A citation in one line, as a paper shows a notice about it: "Retraction: X. BMC Cancer. 2025 Jan 3"."""
    parts = (part.strip() for part in (title, journal, pub_date))
    return " ".join(part if part.endswith((".", "?", "!")) else f"{part}." for part in parts if part)


@dataclass(frozen=True)
class Notice:
    """A retraction, expression-of-concern or erratum notice read without an abstract: never indexed, yet it still
    marks the papers its `corrections` point at. `citation` is how a marked paper shows it ("title. journal. date")."""

    pmid: str
    citation: str
    corrections: tuple[Correction, ...]


@dataclass(frozen=True)
class ArticleRecord:
    """One citation with an abstract, normalised from any input format.

    `pmid` is a string because some corpora use non-numeric ids (e.g. `S2:123` in the BioASQ distractors).
    `version` is PubMed's PMID Version: a later version of a citation replaces an earlier one, never the reverse.
    """

    pmid: str
    title: str
    abstract: str
    journal: str = ""
    year: int | None = None
    authors: tuple[Author, ...] = ()
    mesh: tuple[MeshHeading, ...] = field(default_factory=tuple)
    version: int = 1
    journal_iso: str = ""
    volume: str = ""
    issue: str = ""
    pages: str = ""
    # The date as the journal printed it ("2000 Spring", "1998 Dec-1999 Jan"); `year` is its first year.
    pub_date: str = ""
    publication_types: tuple[str, ...] = ()
    language: str = ""
    doi: str = ""
    pmc: str = ""
    corrections: tuple[Correction, ...] = ()
    # The researcher whose library holds it (a passage of a paper they uploaded); empty for PubMed and every other
    # public corpus. Owned records live in the library's own indexes, searched only with their owner's filter.
    owner: str = ""

    @property
    def text(self) -> str:
        """Title and abstract as one passage: what the lexical and dense indexes see."""
        if not self.title:
            return self.abstract
        separator = " " if self.title.endswith((".", "?", "!")) else ". "
        return f"{self.title}{separator}{self.abstract}"

    @property
    def author_names(self) -> tuple[str, ...]:
        return tuple(author.name for author in self.authors)

    @property
    def cited_as(self) -> str:
        return cited_as(self.title, self.journal_iso or self.journal, self.pub_date)


@dataclass
class ReadStats:
    """What a reader saw in one file, filled in while it streams: records yielded and citations skipped.

    Mutable on purpose: the reader is a generator, so the caller reads the totals after consuming it.
    """

    articles: int = 0
    skipped_without_abstract: int = 0
    deleted_pmids: list[str] = field(default_factory=list)
    # Notices skipped for want of an abstract (most are): the caller hands them to the sink after the records.
    notices: list[Notice] = field(default_factory=list)
