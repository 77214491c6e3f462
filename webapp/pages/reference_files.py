"""The cited papers of an exported answer (webapp/pages/exports.py) as BibTeX and RIS; pure functions of its
references. Titles and names come from PubMed, so each format escapes what it must."""

from __future__ import annotations

import re
from collections.abc import Iterable

import rispy
from bibtexparser.entrypoint import write_string
from bibtexparser.library import Library
from bibtexparser.model import Entry, Field

from webapp.corpus.source_ids import is_pmid
from webapp.pages.exports import Person, Reference

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_PERSONAL_NAME = re.compile(r"^(?P<last>.+) (?P<initials>[A-Z][A-Z-]{0,5})$")


def _latex(text: str) -> str:
    # BibTeX counts braces without regard to backslashes, so `\{` would unbalance a field; a lone brace
    # from a title becomes a command instead.
    flat = " ".join(text.split())
    return "".join(
        r"\textbraceleft{}" if char == "{" else r"\textbraceright{}" if char == "}" else _LATEX_SPECIAL.get(char, char)
        for char in flat
    )


def _inverted(person: Person) -> str:
    """'Smith JA' as 'Smith, JA': the form BibTeX and RIS read unambiguously as last name, then initials."""
    match = _PERSONAL_NAME.match(person.name)
    return f"{match['last']}, {match['initials']}" if match and not person.collective else person.name


def _citation_key(reference: Reference) -> str:
    return "pmid" + re.sub(r"[^A-Za-z0-9]", "", reference.pmid)


def references_bibtex(references: Iterable[Reference]) -> str:
    library = Library()
    for reference in references:
        # A group's name is braced so BibTeX does not split it at "and" or read its last word as a surname.
        authors = " and ".join(
            f"{{{_latex(person.name)}}}" if person.collective else _latex(_inverted(person))
            for person in reference.authors
        )
        values = {
            "author": authors,
            "title": _latex(reference.title),
            "journal": _latex(reference.journal),
            "year": str(reference.year or ""),
            "volume": _latex(reference.volume),
            "number": _latex(reference.issue),
            "pages": _latex(reference.pages).replace("-", "--"),
            "doi": reference.doi.replace("{", "").replace("}", "").replace("\\", ""),
            "pmid": _latex(reference.pmid) if is_pmid(reference.pmid) else "",
            "url": reference.url,
            "note": _latex(" ".join(reference.notes)),
        }
        fields = [Field(key, value) for key, value in values.items() if value]
        library.add(Entry("article", _citation_key(reference), fields))
    return str(write_string(library))


def _ris_text(text: str) -> str:
    return " ".join(text.split())  # a line break inside a value would start a bogus tag line


def references_ris(references: Iterable[Reference]) -> str:
    entries = []
    for reference in references:
        start, _, end = reference.pages.partition("-")
        entry = {
            "type_of_reference": "JOUR",
            "title": _ris_text(reference.title),
            "authors": [_ris_text(_inverted(person)) for person in reference.authors],
            "journal_name": _ris_text(reference.journal),
            "year": str(reference.year or ""),
            "volume": _ris_text(reference.volume),
            "number": _ris_text(reference.issue),
            "start_page": _ris_text(start),
            "end_page": _ris_text(end),
            "doi": _ris_text(reference.doi),
            "accession_number": _ris_text(reference.pmid),
            "name_of_database": "PubMed" if is_pmid(reference.pmid) else "",
            "urls": [reference.url] if reference.url else [],
            "notes": [_ris_text(note) for note in reference.notes],
        }
        entries.append({key: value for key, value in entry.items() if value})
    return str(rispy.dumps(entries))
