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


@dataclass
class ReadStats:
    """What a reader saw in one file, filled in while it streams: records yielded and citations skipped.

    Mutable on purpose: the reader is a generator, so the caller reads the totals after consuming it.
    """

    articles: int = 0
    skipped_without_abstract: int = 0
    deleted_pmids: list[str] = field(default_factory=list)
