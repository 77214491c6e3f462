"""An answer as files a researcher keeps: Markdown with numbered references and its deep check; the cited papers as
BibTeX and RIS are written from the same references (webapp/pages/reference_files.py).

`exported_answer` reads the stored rows (no queries of its own); the writers are pure functions of its result.
Everything here is untrusted text (model output, titles from PubMed), so each format escapes what it must.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from urllib.parse import quote

from generator.citations import DOC_CITATION_ID, citation_label
from generator.claims import claims_from_answer
from webapp.corpus.models import Article
from webapp.corpus.source_ids import source_label
from webapp.deepcheck.export import ExportedDeepCheck, deep_check_markdown, exported_deep_check
from webapp.qa.bottom_line_display import ShownBottomLine, bottom_line_markdown, shown_bottom_line
from webapp.qa.consensus_export import ExportedConsensus, consensus_markdown, consensus_pmids, exported_consensus
from webapp.qa.models import Question
from webapp.qa.source_notes import RETRACTION_LABELS, notice_sentence, source_design

VERDICT_LABELS = {
    "SUPPORT": "Supported",
    "CONTRADICT": "Contradicted",
    "NO_EVIDENCE": "No evidence",
    "UNCLEAR": "Unclear",
    "NO_REFERENCE": "Not a retrieved paper",
    "UNCITED": "Uncited",
}


@dataclass(frozen=True)
class Person:
    name: str  # as PubMed lists it: "Last Initials", or a group's name
    collective: bool = False


@dataclass(frozen=True)
class Reference:
    number: int
    pmid: str
    title: str
    authors: tuple[Person, ...]
    journal: str
    year: int | None
    volume: str
    issue: str
    pages: str
    doi: str
    url: str
    retraction: str = Article.Retraction.NONE
    notices: tuple[str, ...] = ()  # each notice as a sentence: "Retraction in PMID 1: <how PubMed cites it>"
    study_design: str = ""  # the design badge's label; empty when no type or heading names one

    @property
    def retracted(self) -> bool:
        return self.retraction == Article.Retraction.RETRACTED

    @property
    def notes(self) -> tuple[str, ...]:
        """The retraction and design notes every format carries, as plain (unescaped) sentences."""
        notes = []
        if self.retraction in RETRACTION_LABELS:
            label = RETRACTION_LABELS[Article.Retraction(self.retraction)]
            notes.append(label + (f" ({'; '.join(self.notices)})" if self.notices else "") + ".")
        if self.study_design:
            notes.append(f"Study design: {self.study_design}.")
        return tuple(notes)


@dataclass(frozen=True)
class ExportedSentence:
    text: str
    verdict: str  # empty when the answer was not verified
    markers: tuple[int, ...]  # reference numbers
    unlinked: tuple[str, ...]  # PMIDs cited that are not among the abstracts the model was given
    # Pages of the asker's own library it cites (`DOC:<id>:p<page>`): named, never exported with their text.
    library: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExportedAnswer:
    question_id: int
    question: str
    answer_text: str
    sentences: tuple[ExportedSentence, ...]
    references: tuple[Reference, ...]
    generator: str
    verifier: str
    verification_unavailable: str | None = None  # why the verifier could not run; None when it ran
    consensus: ExportedConsensus | None = None  # a yes/no question's, when it was made
    bottom_line: ShownBottomLine | None = None  # its consensus's bottom line, when it was stored with one
    deep_check: ExportedDeepCheck | None = None  # its finished deep check, if it has one (webapp/deepcheck)


def _people(article: Article) -> tuple[Person, ...]:
    if article.author_details:
        return tuple(
            Person(name=str(detail.get("name", "")), collective=bool(detail.get("collective")))
            for detail in article.author_details
            if detail.get("name")
        )
    return tuple(Person(name=str(name)) for name in article.authors if name)


def _reference(number: int, article: Article) -> Reference:
    design = source_design(article)
    return Reference(
        number=number,
        pmid=article.pmid,
        title=article.title,
        authors=_people(article),
        journal=article.journal,
        year=article.year,
        volume=article.volume,
        issue=article.issue,
        pages=article.pages,
        doi=article.doi,
        url=article.url,
        retraction=article.retraction_status,
        notices=tuple(notice_sentence(notice) for notice in article.retraction_notices or ()),
        study_design=design.label if design is not None else "",
    )


@dataclass(frozen=True)
class _CitingSentence:
    text: str
    verdict: str  # empty when the answer was not verified
    citations: tuple[tuple[str, bool], ...]  # (PMID, whether the model was given it), in order


def _verified_sentences(question: Question) -> list[_CitingSentence]:
    # NO_REFERENCE marks a PMID the model was not given: it is never a reference, only a warning.
    return [
        _CitingSentence(
            text=sentence.display_text,
            verdict=sentence.verdict,
            citations=tuple((c.pmid, c.label != "NO_REFERENCE") for c in sentence.citations.all()),
        )
        for sentence in question.sentences.all()
    ]


def _unverified_sentences(question: Question) -> list[_CitingSentence]:
    # The verifier could not run, so there are no sentence rows: the answer's own citations are read from its text.
    if question.cannot_answer:
        return []
    given = set(question.given_pmids)
    return [
        _CitingSentence(
            text=claim.display_text,
            verdict="",
            citations=tuple((pmid, pmid in given) for pmid in claim.citations),
        )
        for claim in claims_from_answer(question.answer_text)
    ]


def _citing_sentences(question: Question) -> list[_CitingSentence]:
    if question.verification_status == Question.Verification.UNAVAILABLE:
        return _unverified_sentences(question)
    return _verified_sentences(question)


def exported_cited_pmids(question: Question) -> set[str]:
    """The PMIDs whose articles `exported_answer` needs."""
    cited = {pmid for sentence in _citing_sentences(question) for pmid, given in sentence.citations if given}
    return cited | consensus_pmids(question.consensus)


def exported_answer(question: Question, articles: Mapping[str, Article]) -> ExportedAnswer:
    """The answer with its cited papers numbered in order of first citation; `articles` maps PMID to row."""
    numbers: dict[str, int] = {}
    references: list[Reference] = []
    sentences = []
    for sentence in _citing_sentences(question):
        markers: list[int] = []
        unlinked: list[str] = []
        library: list[str] = []
        for pmid, given in sentence.citations:
            if given and DOC_CITATION_ID.fullmatch(pmid):
                library.append(pmid)
                continue
            if not given or pmid not in articles:
                unlinked.append(pmid)
                continue
            if pmid not in numbers:
                numbers[pmid] = len(numbers) + 1
                references.append(_reference(numbers[pmid], articles[pmid]))
            if numbers[pmid] not in markers:
                markers.append(numbers[pmid])
        sentences.append(
            ExportedSentence(
                text=sentence.text,
                verdict=sentence.verdict,
                markers=tuple(markers),
                unlinked=tuple(unlinked),
                library=tuple(library),
            )
        )
    unavailable = question.verification_status == Question.Verification.UNAVAILABLE
    return ExportedAnswer(
        question_id=question.pk,
        question=question.text,
        answer_text=question.answer_text,
        sentences=tuple(sentences),
        references=tuple(references),
        generator=str(question.models_used.get("generator", "")),
        verifier=str(question.models_used.get("verifier", "")),
        verification_unavailable=question.verification_error if unavailable else None,
        consensus=exported_consensus(question.consensus, articles),
        bottom_line=shown_bottom_line(question.consensus),
    )


def question_export(*, question: Question) -> ExportedAnswer:
    """The answer and its cited papers, ready for the Markdown, BibTeX and RIS writers; with its deep check, if any."""
    answer = exported_answer(question, Article.objects.in_bulk(exported_cited_pmids(question), field_name="pmid"))
    return replace(answer, deep_check=exported_deep_check(question=question))


def doi_url(doi: str) -> str:
    # Quoted so that a DOI's odd characters cannot end a Markdown autolink or a BibTeX/RIS field early.
    return "https://doi.org/" + quote(doi, safe="/:;()._-")


# --- Markdown ------------------------------------------------------------------------------------------------

# Characters that change meaning anywhere in a CommonMark/GFM line (emphasis, code, links, raw HTML, entities,
# tables, strikethrough); backslash-escaping any ASCII punctuation is always allowed.
_MD_INLINE = re.compile(r"([\\`*_\[\]<>#|~&])")
# At the start of a line these would make a list, heading or quote out of a sentence.
_MD_LINE_START = re.compile(r"^(\d+)([.)])|^([-+=])")


def _md(text: str) -> str:
    flat = " ".join(text.split())  # one line: a newline in a title could otherwise start a block
    escaped = _MD_INLINE.sub(r"\\\1", flat)
    return _MD_LINE_START.sub(lambda m: f"{m.group(1)}\\{m.group(2)}" if m.group(1) else f"\\{m.group(3)}", escaped)


def _author_list(people: Iterable[Person], limit: int | None = None) -> str:
    names = [person.name for person in people]
    if limit is not None and len(names) > limit:
        return ", ".join(names[:limit]) + ", et al."
    return ", ".join(names)


def _reference_markdown(reference: Reference) -> str:
    parts = []
    if reference.authors:
        parts.append(_md(_author_list(reference.authors)) + ".")
    title = _md(reference.title or source_label(reference.pmid))
    parts.append(title if title.endswith((".", "?", "!")) else title + ".")
    source = f"*{_md(reference.journal)}*." if reference.journal else ""
    if reference.year:
        source += f" {reference.year}."
    if source:
        parts.append(source.strip())
    if reference.doi:
        parts.append(f"DOI: <{doi_url(reference.doi)}>.")
    parts.append(f"PubMed: <{reference.url}>" if reference.url else f"{_md(reference.pmid)} (not a PubMed record).")
    notes = [_md(note) for note in reference.notes]
    if reference.retracted:
        notes[0] = f"**{notes[0]}**"  # the retraction note comes first
    return f"{reference.number}. " + " ".join(parts + notes)


def _retraction_warning(references: Iterable[Reference]) -> list[str]:
    retracted = [reference for reference in references if reference.retracted]
    if not retracted:
        return []
    which = ", ".join(f"\\[{reference.number}\\] {_md(source_label(reference.pmid))}" for reference in retracted)
    paper = "a retracted paper" if len(retracted) == 1 else "retracted papers"
    return [f"**Warning: this answer cites {paper}:** {which}. Read it with that in mind.", ""]


def answer_markdown(answer: ExportedAnswer) -> str:
    lines = [f"# {_md(answer.question)}", ""]
    credits = [f"VeriMed answer to question {answer.question_id}"]
    if answer.generator:
        credits.append(f"answer by {_md(answer.generator)}")
    if answer.verifier:
        credits.append(f"verdicts by {_md(answer.verifier)}")
    lines += [f"*{'; '.join(credits)}.*", ""]
    lines += _retraction_warning(answer.references)
    if answer.verification_unavailable is not None:
        reason = _md(answer.verification_unavailable)
        lines += [f"**Verification unavailable:** {reason}", "", "*The sentences below carry no verdicts.*", ""]
    if answer.sentences:
        for sentence in answer.sentences:
            markers = "".join(f"\\[{number}\\]" for number in sentence.markers)
            line = f"- {_md(sentence.text)}" + (f" {markers}" if markers else "")
            if sentence.verdict:
                line += f" — **{VERDICT_LABELS.get(sentence.verdict, _md(sentence.verdict))}**"
            if sentence.library:
                pages = ", ".join(_md(pmid) for pmid in sentence.library)
                line += f" (cites {pages}, in the asker's own library: not part of an export)"
            if sentence.unlinked:
                cited = ", ".join(_md(citation_label(pmid)) for pmid in sentence.unlinked)
                line += f" (cites {cited}, not one of the retrieved abstracts)"
            lines.append(line)
    else:
        lines.append(_md(answer.answer_text) or "*No answer.*")
    lines += bottom_line_markdown(answer.bottom_line, escape=_md)
    lines += consensus_markdown(answer.consensus, escape=_md, label=source_label)
    lines += deep_check_markdown(answer.deep_check, escape=_md, label=source_label)
    lines += ["", "## References", ""]
    if answer.references:
        lines += [_reference_markdown(reference) for reference in answer.references]
    else:
        lines.append("No abstracts were cited.")
    return "\n".join(lines) + "\n"
