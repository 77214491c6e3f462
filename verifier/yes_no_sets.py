"""The yes/no question sets the bottom line is measured and fitted on, read from the shared data's files.

- PubMedQA: PQA-L questions, gold yes / no / maybe, each with its own abstract as PubMed publishes it (the context
  paragraphs and the conclusion). The test split is the official 500 ids; the dev split is the PQA-L items outside
  them that the verifier never trained on (`pubmedqa_trains_on`).
- PubMedQA-style items outside PQA-L (`pubmedqa_extra_items`): more abstracts for the PubMedQA index, and yes/no dev
  questions of PubMedQA's kind.
- BioASQ: the yes/no questions of a benchmark questions file (`body`, `type`, `exact_answer`, `gold_pmids`).
"""

from __future__ import annotations

import ast
import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.records import ArticleRecord
from verifier.extra_training import pubmedqa_trains_on

PUBMEDQA = "pubmedqa"
PUBMEDQA_EXTRA = "pubmedqa_extra"  # dev only: PubMedQA-style questions outside PQA-L (`pubmedqa_extra_items`)
BIOASQ = "bioasq"
GOLD_ANSWERS = {PUBMEDQA: ("yes", "no", "maybe"), BIOASQ: ("yes", "no")}


@dataclass(frozen=True)
class YesNoQuestion:
    qid: str
    text: str
    gold: str  # yes / no / maybe
    own_pmids: tuple[str, ...]  # the question's own abstract(s): PubMedQA's one, BioASQ's gold documents
    source: str  # PUBMEDQA, PUBMEDQA_EXTRA or BIOASQ


def pubmedqa_records(pqal_path: Path) -> list[ArticleRecord]:
    """The PQA-L abstracts as published: the context paragraphs, then the conclusion (PQA-L keeps no title)."""
    raw: dict[str, dict[str, Any]] = json.loads(pqal_path.read_text(encoding="utf-8"))
    return [
        ArticleRecord(
            pmid=pmid, title="", abstract=" ".join([*item.get("CONTEXTS", []), str(item.get("LONG_ANSWER", ""))])
        )
        for pmid, item in raw.items()
    ]


def pubmedqa_questions(pqal_path: Path, test_ids_path: Path, *, split: str) -> list[YesNoQuestion]:
    """`split` "test": the official test ids; "dev": the other PQA-L items the verifier never trained on."""
    raw: dict[str, dict[str, Any]] = json.loads(pqal_path.read_text(encoding="utf-8"))
    test_ids = set(json.loads(test_ids_path.read_text(encoding="utf-8")))
    if split == "test":
        chosen = [pmid for pmid in raw if pmid in test_ids]
    elif split == "dev":
        chosen = [
            pmid for pmid, item in raw.items() if pmid not in test_ids and not pubmedqa_trains_on(pmid, item, test_ids)
        ]
    else:
        raise ValueError(f"unknown PubMedQA split {split!r}")
    return [
        YesNoQuestion(
            qid=pmid,
            text=str(raw[pmid]["QUESTION"]),
            gold=str(raw[pmid]["final_decision"]).lower(),
            own_pmids=(pmid,),
            source=PUBMEDQA,
        )
        for pmid in chosen
    ]


def pubmedqa_extra_items(csv_path: Path, pqal_path: Path) -> tuple[list[ArticleRecord], list[YesNoQuestion]]:
    """PubMedQA-style items outside PQA-L (a CSV with PubMedQA's columns, the PMID first and CONTEXTS a list
    literal): every abstract joins the PubMedQA index, and the items labelled yes or no are dev questions. The
    PQA-L dev split is almost all "maybe", so without these the fit never sees PubMedQA's kind of yes/no question
    (one relevant abstract, its own, among thousands). A PMID that PQA-L also holds is left out whole, so no test
    question comes in through this file."""
    pqal = set(json.loads(pqal_path.read_text(encoding="utf-8")))
    records: list[ArticleRecord] = []
    questions: list[YesNoQuestion] = []
    with csv_path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            pmid = str(row.get("") or row.get("pubid") or "").strip()
            if not pmid or pmid in pqal:
                continue
            contexts = _contexts(row.get("CONTEXTS") or "[]", pmid=pmid, path=csv_path)
            records.append(
                ArticleRecord(pmid=pmid, title="", abstract=" ".join([*contexts, row.get("LONG_ANSWER", "")]))
            )
            decision = str(row.get("final_decision", "")).strip().lower()
            if decision in ("yes", "no"):
                questions.append(
                    YesNoQuestion(
                        qid=pmid, text=row["QUESTION"], gold=decision, own_pmids=(pmid,), source=PUBMEDQA_EXTRA
                    )
                )
    return records, questions


def _contexts(cell: str, *, pmid: str, path: Path) -> list[str]:
    """The CONTEXTS cell: a Python list literal of strings, as pandas wrote PubMedQA's lists."""
    try:
        contexts = ast.literal_eval(cell)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"{path}: the CONTEXTS of PMID {pmid} is not a list of strings ({exc})") from exc
    if not isinstance(contexts, list) or not all(isinstance(part, str) for part in contexts):
        raise ValueError(f"{path}: the CONTEXTS of PMID {pmid} is not a list of strings")
    return contexts


def bioasq_questions(path: Path) -> list[YesNoQuestion]:
    """The yes/no questions of a BioASQ benchmark questions file."""
    questions = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            item = json.loads(line)
            if item.get("type") != "yesno":
                continue
            answer = item.get("exact_answer")
            answer = answer[0] if isinstance(answer, list) and answer else answer
            questions.append(
                YesNoQuestion(
                    qid=str(item["id"]),
                    text=str(item["body"]),
                    gold=str(answer).strip().lower(),
                    own_pmids=tuple(str(pmid) for pmid in item.get("gold_pmids", [])),
                    source=BIOASQ,
                )
            )
    return questions
