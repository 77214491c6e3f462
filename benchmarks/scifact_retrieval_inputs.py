"""Write SciFact's retrieval task in the BioASQ benchmark's shape, for `manage.py evaluate retrieval`.

Claims with evidence become questions; their evidence documents are the qrels; the corpus becomes JSON lines with
`pmid` (SciFact's Semantic Scholar doc id), `title` and `abstract`. The files go to an output folder outside the
repository's tracked files (default var/eval/scifact-retrieval):

    .venv/bin/python benchmarks/scifact_retrieval_inputs.py --scifact ../shared/data/scifact --split dev
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path


def convert(scifact: Path, split: str, out: Path) -> tuple[int, int]:
    out.mkdir(parents=True, exist_ok=True)
    questions = 0
    with (
        (scifact / f"claims_{split}.jsonl").open(encoding="utf-8") as claims,
        (out / f"questions_{split}.jsonl").open("w", encoding="utf-8") as questions_out,
        (out / f"qrels_{split}.tsv").open("w", encoding="utf-8") as qrels_out,
    ):
        qrels_out.write("query_id\tpmid\trelevance\n")
        for line in claims:
            claim = json.loads(line)
            evidence = claim.get("evidence") or {}
            if not evidence:
                continue  # a claim without evidence has no relevant document to find
            questions += 1
            questions_out.write(json.dumps({"id": str(claim["id"]), "claim": claim["claim"]}) + "\n")
            for doc_id in sorted(evidence):
                qrels_out.write(f"{claim['id']}\t{doc_id}\t1\n")
    documents = 0
    with (
        gzip.open(scifact / "corpus.jsonl.gz", "rt", encoding="utf-8") as corpus,
        gzip.open(out / "corpus.jsonl.gz", "wt", encoding="utf-8") as corpus_out,
    ):
        for line in corpus:
            doc = json.loads(line)
            documents += 1
            row = {"pmid": str(doc["doc_id"]), "title": doc["title"], "abstract": " ".join(doc["abstract"])}
            corpus_out.write(json.dumps(row) + "\n")
    return questions, documents


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scifact", type=Path, default=Path("../shared/data/scifact"))
    parser.add_argument("--split", default="dev", choices=("train", "dev"))
    parser.add_argument("--out", type=Path, default=Path("var/eval/scifact-retrieval"))
    args = parser.parse_args()
    questions, documents = convert(args.scifact, args.split, args.out)
    print(f"wrote {questions} questions and {documents} documents to {args.out}")


if __name__ == "__main__":
    main()
