"""The citation format: one parser for every way models cite the abstracts they were given, and helpers around it.

The prompt asks for `PUBMED:<id>`, but models also write `PMID 123`, `PMIDs 1, 2 and 3`, `[PUBMED:1][PUBMED:2]`,
numbered references like `[1]` or `[2-4]` into the numbered context, and ids with a digit or two slipped.
`normalize_citations` finds all of them with the same regexes, resolves each reference against the ids the model was
shown (exactly, by index, or by repairing a slip of at most two edits when exactly one given id is that close) and
rewrites every citation group as ` (PUBMED:a; PUBMED:b)`. `cited_ids` and `strip_citations` read the same forms (all
but the numbered ones, which mean nothing without the list the model was shown), so they agree with the canonical
text: `cited_ids(normalize_citations(raw, given).text)` lists exactly the ids the references resolved to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz.distance import Levenshtein

# An id is a PMID, or an `S2:<corpus id>` for the Semantic Scholar documents some benchmark corpora carry. Digits
# are spelled [0-9] because \d would also take other scripts' digits, which no id has.
_PUBMED_ID = r"(?:S2:)?[0-9]{1,10}"
# A page of a document in the asker's own library: `DOC:<document id>:p<page>`. It carries its own keyword, so it
# needs no PUBMED before it (and one written before it by habit is read past).
_DOC_ID = r"DOC:[0-9]{1,10}:p[0-9]{1,5}"
# After a keyword the page's own keyword may be missing: `PUBMED:21:p1` is page 1 of document 21 written with the
# PubMed keyword the prompt's example shows (the 0.5B model wrote it so), and `<digits>:p<page>` is never a PMID.
_KEYED_DOC_ID = r"(?:DOC:)?[0-9]{1,10}:p[0-9]{1,5}"
_ID = rf"(?:{_KEYED_DOC_ID}|{_PUBMED_ID})"
DOC_CITATION_ID = re.compile(rf"{_DOC_ID}", re.IGNORECASE)
_KEYED_DOC_CITATION_ID = re.compile(_KEYED_DOC_ID, re.IGNORECASE)
# `PUBMED`, `PMID` or the plural `PMIDs` (but not the `PMID` + `S2:` of a glued `PMIDS2:1`), then an optional colon.
_PREFIX = r"\b(?:PUBMED|PMID(?:S(?!2:))?)\s*:?\s*"
# The trailing \b keeps an 11+ digit number (no PMID) from being read as its first ten digits, and a following
# `-3` marks a range of numbers, which no id is: `PMID 1-3` is left as written rather than cut in two.
_END = r"\b(?![-\u2013\u2014][0-9])"
_REFERENCE = rf"(?:{_PREFIX}{_ID}|(?:{_PREFIX})?\b{_DOC_ID}){_END}"
# After the first reference of a list the keyword is optional: `(PUBMED:1; 2)`, `PMIDs 1, 2 and 3`.
_ITEM = rf"(?:{_PREFIX})?{_ID}{_END}"
# Between references: `,`, `;`, `&`, `and` or `, and`.
_SEP = r"\s*(?:(?:[,;]\s*)?\band\b|[,;&])\s*"
# A bracketed group. Mismatched brackets, `(PUBMED:1]`, are a typo models make, not a reason to miss the group.
_BRACKETED = rf"[(\[]\s*{_REFERENCE}(?:{_SEP}{_ITEM})*\s*[)\]]"
# Where an unbracketed list may end: a keyword-less id there is a citation only if the list stops at punctuation,
# so that `PMID 5, 20 patients improved` cites 5 and not 20.
_LIST_END = r"(?=[ \t]*(?:[.,;:!?)\]\n]|$))"
# An unbracketed reference or list: `PUBMED:1`, `PUBMED:1, PUBMED:2`, `PMIDs 1, 2 and 3.`
_BARE = rf"{_REFERENCE}(?:{_SEP}{_REFERENCE})*(?:(?:{_SEP}{_ITEM})*{_SEP}{_ID}{_END}{_LIST_END})?"
# A numbered reference into the context: only in square brackets and only 1-3 digits, so `[2019]`, `[95% CI 1-2]`,
# `(3)` and `(n=20)` stay prose. `[2-4]` is a range, with a hyphen or an en or em dash.
_INDEX_ITEM = r"[0-9]{1,3}(?:\s*[-\u2013\u2014]\s*[0-9]{1,3})?"
_INDEX_GROUP = rf"\[\s*{_INDEX_ITEM}(?:{_SEP}{_INDEX_ITEM})*\s*\]"

# One reference with an explicit keyword, e.g. `PUBMED:123`, `PMID 123`, case-insensitive; group 1 is the id.
CITATION = re.compile(rf"{_PREFIX}({_ID}){_END}", re.IGNORECASE)
# A whole citation group as written in the text, e.g. `(PUBMED:1; PUBMED:2)`, `[PMID 3, 4]` or `PUBMED:5`.
CITATION_GROUP = re.compile(rf"{_BRACKETED}|{_BARE}", re.IGNORECASE)
_GROUP_OR_INDEX = re.compile(rf"(?P<ids>{_BRACKETED}|{_BARE})|(?P<index>{_INDEX_GROUP})", re.IGNORECASE)
# Each reference inside a matched group; the keyword is captured so that `written` can show it when it was there.
_ITEM_IN_GROUP = re.compile(rf"(?:{_PREFIX})?(?P<id>{_ID}){_END}", re.IGNORECASE)
_INDEX_IN_GROUP = re.compile(r"(?P<first>[0-9]{1,3})(?:\s*[-\u2013\u2014]\s*(?P<last>[0-9]{1,3}))?")
# Groups separated by nothing but spaces or one list separator are one group: `[PUBMED:1][PUBMED:2]`, `[1], [2]`,
# `[1] and PUBMED:2`. The same rule must hold whatever brackets the groups had, or normalising the canonical text
# (where every group is bracketed) could merge groups the first pass kept apart.
_JOIN = re.compile(r"[ \t]*(?:(?:[,;&]|(?:,[ \t]*)?and)[ \t]*)?", re.IGNORECASE)
_SPACE_BEFORE_PUNCTUATION = re.compile(r"[ \t]+(?=[.,;:!?])")
# The lookbehind starts a match only where a run of whitespace starts, so a long run is scanned once, not once per
# character (which took seconds on a 20,000-space answer).
_SPACES_BEFORE_PUNCTUATION = re.compile(r"(?<!\s)\s+([.,;:!?])")
_MAX_REPAIR_EDITS = 2

CitationHow = Literal["exact", "index", "repaired", "unmatched"]


@dataclass(frozen=True)
class CitationCheck:
    pmid: str
    retrieved: bool  # False means NO_REFERENCE: the model cited something it was not given


@dataclass(frozen=True)
class ResolvedCitation:
    written: str  # the reference as written: `PUBMED:1234567`, `PMID 12`, `2` (in `PMIDs 1, 2`); `[3]` for an index
    raw_id: str  # the id it names; for an index, the given id at that index, or the number if out of range
    pmid: str | None  # the given id it resolves to; None means NO_REFERENCE and is never linked
    how: CitationHow  # exact, index (`[n]` is the n-th given id), repaired (one given id within 2 edits), unmatched


@dataclass(frozen=True)
class NormalizedAnswer:
    raw_text: str  # exactly what the model wrote
    text: str  # every citation group rewritten as ` (PUBMED:a; PUBMED:b)`
    citations: tuple[ResolvedCitation, ...]  # one per written reference, in order, repeats kept

    @property
    def repaired(self) -> tuple[ResolvedCitation, ...]:
        return tuple(citation for citation in self.citations if citation.how == "repaired")

    @property
    def unmatched(self) -> tuple[ResolvedCitation, ...]:
        return tuple(citation for citation in self.citations if citation.how == "unmatched")


@dataclass(frozen=True)
class _Reference:
    written: str
    raw: str  # the id (upper-cased, for `s2:`) or, for an index reference, the number as written
    index: int | None  # the 1-based position for a `[n]` reference; None for an id


@dataclass(frozen=True)
class _Run:
    """Adjacent citation groups, to be replaced together by one canonical group."""

    start: int
    end: int
    references: tuple[_Reference, ...]


def _id_references(group: str) -> list[_Reference]:
    return [
        _Reference(written=match.group(0), raw=_raw_id(match.group("id")), index=None)
        for match in _ITEM_IN_GROUP.finditer(group)
    ]


def _raw_id(written: str) -> str:
    return canonical_doc_id(written) if _KEYED_DOC_CITATION_ID.fullmatch(written) else written.upper()


def _index_references(group: str) -> list[_Reference] | None:
    """The references of `[1, 3]` or `[2-4]`; None if a range runs backwards, which no numbered citation does."""
    references: list[_Reference] = []
    for match in _INDEX_IN_GROUP.finditer(group):
        written = f"[{match.group(0)}]"
        first, last = match.group("first"), match.group("last")
        if last is None:
            references.append(_Reference(written=written, raw=first, index=int(first)))
            continue
        if int(last) < int(first):
            return None
        references.extend(
            _Reference(written=written, raw=str(number), index=number) for number in range(int(first), int(last) + 1)
        )
    return references


def _runs(text: str, *, index_forms: bool) -> list[_Run]:
    pattern = _GROUP_OR_INDEX if index_forms else CITATION_GROUP
    runs: list[_Run] = []
    for match in pattern.finditer(text):
        if index_forms and match.group("index") is not None:
            found = _index_references(match.group(0))
            if found is None:
                continue
            references = found
        else:
            references = _id_references(match.group(0))
        if runs and _JOIN.fullmatch(text, runs[-1].end, match.start()):
            previous = runs.pop()
            runs.append(_Run(start=previous.start, end=match.end(), references=(*previous.references, *references)))
            continue
        runs.append(_Run(start=match.start(), end=match.end(), references=tuple(references)))
    return runs


def _resolve(reference: _Reference, given: Sequence[str], by_key: dict[str, str]) -> ResolvedCitation:
    written = reference.written
    if reference.index is not None:
        if 1 <= reference.index <= len(given):
            pmid = given[reference.index - 1]
            return ResolvedCitation(written=written, raw_id=pmid, pmid=pmid, how="index")
        return ResolvedCitation(written=written, raw_id=reference.raw, pmid=None, how="unmatched")
    raw = reference.raw
    if raw in by_key:
        return ResolvedCitation(written=written, raw_id=raw, pmid=by_key[raw], how="exact")
    # A slip is repaired only when it points at one given id: with two candidates any choice would be a guess.
    near = [
        pmid
        for key, pmid in by_key.items()
        if Levenshtein.distance(raw, key, score_cutoff=_MAX_REPAIR_EDITS) <= _MAX_REPAIR_EDITS
    ]
    if len(near) == 1:
        return ResolvedCitation(written=written, raw_id=raw, pmid=near[0], how="repaired")
    return ResolvedCitation(written=written, raw_id=raw, pmid=None, how="unmatched")


def citation_label(source_id: str) -> str:
    """How a source is shown to the model and cited in the canonical text: `PUBMED:<pmid>`, or a library page's own
    `DOC:<id>:p<page>`."""
    return canonical_doc_id(source_id) if DOC_CITATION_ID.fullmatch(source_id) else f"PUBMED:{source_id}"


def canonical_doc_id(source_id: str) -> str:
    """`doc:12:P3` (or `12:p3`, read after a PubMed keyword) as the site writes it, `DOC:12:p3` (matching is
    case-insensitive; ids are compared as written)."""
    document, page = source_id.split(":")[-2:]
    return f"DOC:{document}:p{page[1:]}"


def _canonical(citations: Sequence[ResolvedCitation]) -> str:
    # Unmatched references keep their raw id, so the verifier still sees them and labels them NO_REFERENCE.
    ids = dict.fromkeys(citation.pmid or citation.raw_id for citation in citations)
    return "(" + "; ".join(citation_label(pmid) for pmid in ids) + ")"


def normalize_citations(text: str, given: Sequence[str]) -> NormalizedAnswer:
    """Every citation in `text` resolved against `given` (the ids the model was shown, in context order).

    The returned text has each citation group, adjacent groups merged, as ` (PUBMED:a; PUBMED:b)`: one space before
    it (none at the start of the text or of a line, or right after an opening bracket), and no space between it and
    the punctuation after it. Text without citations comes back unchanged, and normalising the result again gives it
    back unchanged.
    """
    given = tuple(given)
    runs = _runs(text, index_forms=bool(given))
    if not runs:
        return NormalizedAnswer(raw_text=text, text=text, citations=())
    by_key = {_raw_id(pmid): pmid for pmid in given}
    citations: list[ResolvedCitation] = []
    result = ""
    position = 0
    for run in runs:
        resolved = [_resolve(reference, given, by_key) for reference in run.references]
        citations.extend(resolved)
        result += text[position : run.start].rstrip(" \t")
        if result and not result[-1].isspace() and result[-1] not in "([":
            result += " "
        result += _canonical(resolved)
        position = run.end
        space = _SPACE_BEFORE_PUNCTUATION.match(text, position)
        if space is not None:
            position = space.end()
        elif text[position : position + 1].isalnum():
            result += " "
    result += text[position:]
    return NormalizedAnswer(raw_text=text, text=result, citations=tuple(citations))


def cited_ids(text: str) -> list[str]:
    """Every id cited in `text`, in order of first appearance, without repeats (numbered `[n]` forms not included)."""
    ids: dict[str, None] = {}
    for run in _runs(text, index_forms=False):
        for reference in run.references:
            ids.setdefault(reference.raw, None)
    return list(ids)


def strip_citations(text: str) -> str:
    """The text without its citation markup (the page shows citations as chips instead)."""
    pieces: list[str] = []
    position = 0
    for run in _runs(text, index_forms=False):
        pieces.append(text[position : run.start].rstrip())
        position = run.end
    pieces.append(text[position:])
    return _SPACES_BEFORE_PUNCTUATION.sub(r"\1", "".join(pieces)).strip()


def check_citations(ids: list[str], retrieved: set[str]) -> list[CitationCheck]:
    return [CitationCheck(pmid=pmid, retrieved=pmid in retrieved) for pmid in ids]
