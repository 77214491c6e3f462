"""JATS articles made from real PQA-L records of the shared data (the labelled context paragraphs become the body's
sections), written the way PMC writes JATS: a DOCTYPE naming the JATS DTD by public id, unnamespaced elements, xlink
and mml namespaces declared on the root."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from xml.sax.saxutils import escape

PMID = "21645374"


@cache
def _pqal(path: Path) -> dict[str, dict[str, object]]:
    return dict(json.loads(path.read_text()))


def pqal_record(data_dir: Path, pmid: str = PMID) -> dict[str, object]:
    return dict(_pqal(data_dir / "pubmedqa" / "ori_pqal.json")[pmid])


def pqal_pmids(data_dir: Path) -> list[str]:
    return sorted(_pqal(data_dir / "pubmedqa" / "ori_pqal.json"))


def jats_article(
    record: dict[str, object], *, pmid: str = PMID, body_extra: str = "", back: str = "", with_ids: bool = True
) -> bytes:
    contexts = [str(text) for text in record["CONTEXTS"]]  # type: ignore[attr-defined]
    labels = [str(label).title() for label in record["LABELS"]]  # type: ignore[attr-defined]
    sections = "".join(
        f"<sec><title>{escape(label)}</title><p>{escape(text)}</p></sec>"
        for label, text in zip(labels, contexts, strict=True)
    )
    ids = (
        f"""<article-id pub-id-type="pmid">{pmid}</article-id>
    <article-id pub-id-type="pmc">3123456</article-id>
    <article-id pub-id-type="doi">10.1000/example.{pmid}</article-id>"""
        if with_ids
        else ""
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange DTD v1.3 20210610//EN"
  "JATS-archivearticle1-3.dtd">
<article xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:mml="http://www.w3.org/1998/Math/MathML"
         article-type="research-article">
  <front><article-meta>
    {ids}
    <title-group><article-title>{escape(str(record["QUESTION"]))}</article-title></title-group>
    <abstract><p>{escape(str(record["LONG_ANSWER"]))}</p></abstract>
  </article-meta></front>
  <body>{sections}{body_extra}</body>
  <back>{back}</back>
</article>""".encode()
