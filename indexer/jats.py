"""Read a JATS XML full text (PMC's format for articles) into its identifiers and sectioned paragraphs.

An uploaded file is untrusted, so it is parsed with lxml under a parser that loads no DTD, resolves no entity and
reaches no network, and a file that declares entities is refused outright: a billion-laughs expansion or an external
entity that reads a local file never gets to run. PMC's own files declare none (they name the JATS DTD by its public
id and use numeric character references). `pubmed_parser` reads the same format but parses with lxml's default
parser, which resolves entities, and prints rather than raises on a bad file: not fit for uploads.

What is kept: the title, the abstract, the DOI / PMID / PMCID when the file carries them, and the body's paragraphs in
reading order, each with the path of section titles it sits under ("Methods > Participants"). Tables become a
paragraph of their caption and rows (cells joined by " | "), figures a paragraph of their caption. The reference list
is left out: a cited paper's title is not evidence of what this paper found.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from indexer.full_text import FullText, FullTextError, Paragraph

# A full text with its tables runs to a few hundred kB; PMC's largest are a few MB. Past this, it is not an article.
MAX_JATS_BYTES = 20 * 1024 * 1024

_SPACE = re.compile(r"\s+")
_BLOCKS = {"p", "table-wrap", "fig", "list", "disp-quote", "boxed-text"}


def read_jats(data: bytes, *, max_bytes: int = MAX_JATS_BYTES) -> FullText:
    """The article in `data`, or FullTextError saying why it is refused."""
    if len(data) > max_bytes:
        raise FullTextError(f"the file is {len(data):,} bytes; a JATS article may be at most {max_bytes:,} bytes")
    root = _parse(data)
    if _local(root) != "article":
        raise FullTextError(f"the XML's root element is <{_local(root)}>, not a JATS <article>")
    meta = _first(root, "front", "article-meta")
    ids = _article_ids(meta)
    paragraphs = tuple(_body_paragraphs(_first(root, "body")))
    abstract = _abstract(_first(meta, "abstract"))
    if not paragraphs and not abstract:
        raise FullTextError("the article has neither body text nor an abstract")
    return FullText(
        title=_text(_first(meta, "title-group", "article-title")),
        abstract=abstract,
        doi=ids.get("doi"),
        pmid=ids.get("pmid"),
        pmcid=_pmcid(ids.get("pmc") or ids.get("pmcid")),
        paragraphs=paragraphs,
    )


def _parse(data: bytes) -> etree._Element:
    parser = etree.XMLParser(
        resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False, remove_comments=True, remove_pis=True
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise FullTextError(f"not well-formed XML (truncated or not XML at all): {exc}") from None
    if root is None:
        raise FullTextError("the file holds no XML element")
    internal: Any = root.getroottree().docinfo.internalDTD  # lxml's stubs lack DTD.iterentities
    if internal is not None and any(True for _ in internal.iterentities()):
        raise FullTextError("the file declares XML entities, which an article never needs; refused")
    return root


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def _children(element: etree._Element | None, name: str) -> list[etree._Element]:
    return [child for child in element if _local(child) == name] if element is not None else []


def _first(element: etree._Element | None, *path: str) -> etree._Element | None:
    for name in path:
        found = _children(element, name)
        element = found[0] if found else None
    return element


def _descendants(element: etree._Element | None, name: str) -> list[etree._Element]:
    return [node for node in element.iter() if _local(node) == name] if element is not None else []


def _text(element: etree._Element | None) -> str:
    return _SPACE.sub(" ", "".join(str(part) for part in element.itertext())).strip() if element is not None else ""


def _abstract(element: etree._Element | None) -> str:
    """Its paragraphs joined (section titles of a structured abstract left out), or its whole text where it has none."""
    return " ".join(filter(None, (_text(part) for part in _descendants(element, "p")))) or _text(element)


def _article_ids(meta: etree._Element | None) -> dict[str, str]:
    return {
        str(node.get("pub-id-type", "")).lower(): _text(node) for node in _children(meta, "article-id") if _text(node)
    }


def _pmcid(value: str | None) -> str | None:
    if not value:
        return None
    return value if value.upper().startswith("PMC") else f"PMC{value}"


def _body_paragraphs(body: etree._Element | None, sections: tuple[str, ...] = ()) -> list[Paragraph]:
    paragraphs: list[Paragraph] = []
    for child in body if body is not None else []:
        name = _local(child)
        if name == "sec":
            title = _text(_first(child, "title"))
            paragraphs += _body_paragraphs(child, (*sections, title) if title else sections)
        elif name in _BLOCKS:
            text = _block_text(child)
            if text:
                paragraphs.append(Paragraph(section=" > ".join(sections), text=text))
    return paragraphs


def _block_text(block: etree._Element) -> str:
    name = _local(block)
    if name == "table-wrap":
        caption = " ".join(filter(None, (_text(_first(block, "label")), _text(_first(block, "caption")))))
        rows = [
            " | ".join(_text(cell) for cell in row if _local(cell) in ("td", "th")) for row in _descendants(block, "tr")
        ]
        return "; ".join(filter(None, [caption, *rows]))
    if name == "fig":
        return " ".join(filter(None, (_text(_first(block, "label")), _text(_first(block, "caption")))))
    return _text(block)
