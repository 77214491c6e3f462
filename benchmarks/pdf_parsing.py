"""Which PDF library reads scientific papers best: reading order, page furniture leaked, speed, bomb safety.

    .venv/bin/python benchmarks/pdf_parsing.py --json var/benchmarks/pdf-parsing.json

The corpus is typeset at run time with reportlab (tests/indexer/pdf_samples.py) from real text: each paper takes
--records-per-paper PubMedQA PQA-L records (a title from the first question, its long answer as abstract, every
record's labelled contexts as Background / Methods / Results... sections), a table of the records, and a reference
list of real PubMed citations. Each paper is set in three layouts:
- `one-column`: body text, page numbers in the footer;
- `two-column`: a title block across the page, two columns, a running header and page numbers; text is written
  into the content stream in reading order (header, left column, right column, footer), as TeX does;
- `two-column-scrambled`: the same page, but footer and header are written first and the body row by row across
  both columns, as producers that position every line do. A reader that trusts stream order interleaves columns.

Metrics per library and layout:
- `order_recall_pct`: of the ground-truth words in reading order, the share the output has in the same order
  (difflib's matching blocks over lower-cased word tokens; a word split by a line-end hyphen counts as missed).
  The ground truth is every drawn line except the running header and page numbers. For `read_pdf` (VeriMed's reader
  on PDFium), which returns title, abstract and paragraphs and drops headings and the reference list by design, it is
  the title, abstract, body paragraphs and table.
- `leaked`: running-header lines found in the output plus output lines that are a bare page number, of those drawn.
- `pages_per_s`: pages extracted per second, libraries taking turns document by document.
The real PDFs on this machine (--real, Debian's libtasn1 and shared-mime-info manuals) give pages/s at scale.
Last, each library reads a FlateDecode content stream that inflates to --bomb-mb MiB in a child process: its peak
resident memory says whether extraction is capped.

Licences: pypdf BSD-3-Clause, pdfminer.six MIT, pdfplumber MIT (on pdfminer.six), pypdfium2 Apache-2.0 or
BSD-3-Clause (PDFium BSD-3-Clause). PyMuPDF is AGPL-3.0: measured only where already importable, not eligible.
"""

from __future__ import annotations

import argparse
import difflib
import io
import json
import os
import platform
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.indexer.pdf_samples import (
    Layout,
    Typeset,
    flate_bomb,
    paper_blocks,
    pqal_records,
    pubmed_citations,
    typeset,
)
from tests.support import shared_data_dir

HEADER = "J Biomed Res 2026; 12: 345-356 · VeriMed benchmark"
LAYOUTS = (
    Layout("one-column", columns=1, body_size=10.5),
    Layout("two-column", columns=2, running_header=HEADER, body_size=9.0),
    Layout("two-column-scrambled", columns=2, running_header=HEADER, body_size=9.0, stream_order="scrambled"),
)
REAL_PDFS = (
    Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
)
# name -> (distribution for the version, licence, eligible for the product)
LIBRARIES = {
    "pypdf": ("pypdf", "BSD-3-Clause", True),
    "pypdf-layout": ("pypdf", "BSD-3-Clause", True),
    "pdfminer.six": ("pdfminer.six", "MIT", True),
    "pdfplumber": ("pdfplumber", "MIT", True),
    "pypdfium2": ("pypdfium2", "Apache-2.0 OR BSD-3-Clause", True),
    "pymupdf": ("pymupdf", "AGPL-3.0 (not eligible)", False),
    "read_pdf": ("pypdfium2", "VeriMed's reader on pypdfium2", True),
}
_WORD = re.compile(r"\w+")


def extractor(name: str) -> Callable[[bytes], str]:
    """The library's plain full-document text extraction, as a user of it would call it."""
    if name in ("pypdf", "pypdf-layout"):
        from pypdf import PdfReader

        mode: Literal["plain", "layout"] = "layout" if name == "pypdf-layout" else "plain"
        return lambda data: "\n".join(
            page.extract_text(extraction_mode=mode) for page in PdfReader(io.BytesIO(data)).pages
        )
    if name == "pdfminer.six":
        from pdfminer.high_level import extract_text

        return lambda data: str(extract_text(io.BytesIO(data)))
    if name == "pdfplumber":
        import pdfplumber

        def plumber(data: bytes) -> str:
            with pdfplumber.open(io.BytesIO(data)) as pdf:
                return "\n".join(page.extract_text() or "" for page in pdf.pages)

        return plumber
    if name == "pypdfium2":
        import pypdfium2

        def pdfium(data: bytes) -> str:
            document = pypdfium2.PdfDocument(data)
            texts = [page.get_textpage().get_text_range() for page in document]
            document.close()
            return "\n".join(texts).replace("\r\n", "\n").replace("\ufffe", "-")

        return pdfium
    if name == "pymupdf":
        import pymupdf

        mupdf: Any = pymupdf  # untyped
        return lambda data: "\n".join(page.get_text() for page in mupdf.open(stream=data, filetype="pdf"))
    if name == "read_pdf":
        from indexer.pdf_text import read_pdf

        def verimed(data: bytes) -> str:
            article = read_pdf(data, ocr=False)
            return "\n".join([article.title, article.abstract, *(paragraph.text for paragraph in article.paragraphs)])

        return verimed
    raise ValueError(name)


def available(names: list[str]) -> list[str]:
    usable = []
    for name in names:
        try:
            extractor(name)
        except ImportError:
            print(f"{name}: not importable, skipped", file=sys.stderr)
            continue
        usable.append(name)
    return usable


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def order_recall(truth: list[str], output: list[str]) -> float:
    matcher = difflib.SequenceMatcher(None, truth, output, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / max(len(truth), 1)


def leaks(paper: Typeset, output: str) -> tuple[int, int]:
    lines = [" ".join(line.split()) for line in output.splitlines()]
    flat = " ".join(output.split())
    headers = [segment.text for segment in paper.segments if segment.kind == "header"]
    numbers = {segment.text for segment in paper.segments if segment.kind == "footer"}
    leaked = flat.count(headers[0]) if headers else 0
    leaked += sum(line in numbers for line in lines)
    return leaked, len(headers) + len(numbers)


@dataclass
class Cell:
    seconds: float = 0.0
    pages: int = 0
    recall_sum: float = 0.0
    papers: int = 0
    leaked: int = 0
    furniture: int = 0
    errors: int = 0

    def summary(self) -> dict[str, float]:
        return {
            "order_recall_pct": round(100 * self.recall_sum / max(self.papers, 1), 1),
            "leaked": self.leaked,
            "furniture_lines": self.furniture,
            "pages_per_s": round(self.pages / self.seconds, 1) if self.seconds else 0.0,
            "errors": self.errors,
        }


def corpus(data_dir: Path, papers: int, per_paper: int) -> list[tuple[str, Typeset]]:
    records, citations = pqal_records(data_dir), pubmed_citations(data_dir)
    built = []
    for index in range(papers):
        blocks = paper_blocks(records[index * per_paper : (index + 1) * per_paper], citations[index * 8 :])
        built += [(layout.name, typeset(blocks, layout)) for layout in LAYOUTS]
    return built


def run_corpus(names: list[str], papers: list[tuple[str, Typeset]]) -> dict[str, dict[str, Cell]]:
    cells = {name: {layout.name: Cell() for layout in LAYOUTS} for name in names}
    extract = {name: extractor(name) for name in names}
    for index, (layout, paper) in enumerate(papers):
        raw_truth = tokens(paper.text_of("title", "authors", "meta", "heading", "paragraph", "table", "reference"))
        article_truth = tokens(paper.text_of("title", "paragraph", "table"))
        for name in names[index % len(names) :] + names[: index % len(names)]:
            cell = cells[name][layout]
            began = time.perf_counter()
            try:
                output = extract[name](paper.pdf)
            except Exception as error:  # a library's failure on a paper is a result, not a crash
                print(f"{name} failed on a {layout} paper: {error}", file=sys.stderr)
                cell.errors += 1
                continue
            cell.seconds += time.perf_counter() - began
            cell.pages += paper.pages
            truth = article_truth if name == "read_pdf" else raw_truth
            cell.recall_sum += order_recall(truth, tokens(output))
            cell.papers += 1
            leaked, drawn = leaks(paper, output)
            cell.leaked += leaked
            cell.furniture += drawn
    return cells


def run_real(names: list[str], paths: list[Path], repeats: int) -> dict[str, dict[str, float]]:
    import pypdfium2

    results: dict[str, dict[str, float]] = {}
    for path in paths:
        data = path.read_bytes()
        pages = len(pypdfium2.PdfDocument(data))
        for name in names:
            extract = extractor(name)
            began = time.perf_counter()
            try:
                for _ in range(repeats):
                    extract(data)
            except Exception as error:
                print(f"{name} failed on {path.name}: {error}", file=sys.stderr)
                results.setdefault(name, {})[path.name] = 0.0
                continue
            elapsed = time.perf_counter() - began
            results.setdefault(name, {})[path.name] = round(pages * repeats / elapsed, 1)
        results.setdefault("pages", {})[path.name] = pages
    return results


def bomb_child(name: str, megabytes: int) -> None:
    """Run in a child process: extract a Flate bomb, print peak RSS and the outcome."""
    outcome = "read"
    extract, bomb = extractor(name), flate_bomb("Hello", megabytes=megabytes)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        extract(bomb)
    except Exception as error:
        outcome = f"refused: {type(error).__name__}"
    # Growth of this process's peak; read_pdf extracts in a child of its own, whose peak is among the children.
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    peak = max(grown, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    print(json.dumps({"peak_rss_mib": round(peak), "outcome": outcome}))


def run_bombs(names: list[str], megabytes: int) -> dict[str, dict[str, object]]:
    results: dict[str, dict[str, object]] = {}
    for name in names:
        done = subprocess.run(
            [sys.executable, __file__, "--bomb-child", name, "--bomb-mb", str(megabytes)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        lines = done.stdout.strip().splitlines()
        results[name] = json.loads(lines[-1]) if lines else {"outcome": f"died ({done.returncode})"}
    return results


def machine() -> dict[str, object]:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next((line.split(":", 1)[1].strip() for line in lscpu.splitlines() if "Model name" in line), "")
    except OSError:
        model = ""
    return {"cpu": model, "cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=20, help="papers per layout")
    parser.add_argument("--records-per-paper", type=int, default=6)
    parser.add_argument("--libraries", nargs="+", default=list(LIBRARIES))
    parser.add_argument("--real", nargs="*", type=Path, default=list(REAL_PDFS))
    parser.add_argument("--real-repeats", type=int, default=2)
    parser.add_argument("--bomb-mb", type=int, default=300)
    parser.add_argument("--skip-bomb", action="store_true")
    parser.add_argument("--bomb-child", help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, default=Path("var/benchmarks/pdf-parsing.json"))
    options = parser.parse_args()
    if options.bomb_child:
        bomb_child(options.bomb_child, options.bomb_mb)
        return

    names = available(options.libraries)
    papers = corpus(shared_data_dir(), options.papers, options.records_per_paper)
    cells = run_corpus(names, papers)
    real = run_real(names, [path for path in options.real if path.exists()], options.real_repeats)
    bombs = {} if options.skip_bomb else run_bombs(names, options.bomb_mb)
    report = {
        "machine": machine(),
        "papers_per_layout": options.papers,
        "pages_per_layout": {layout.name: sum(p.pages for n, p in papers if n == layout.name) for layout in LAYOUTS},
        "libraries": {
            name: {
                "version": metadata.version(LIBRARIES[name][0]),
                "licence": LIBRARIES[name][1],
                "eligible": LIBRARIES[name][2],
                "layouts": {layout: cell.summary() for layout, cell in cells[name].items()},
                "real_pages_per_s": real.get(name, {}),
                "bomb": bombs.get(name),
            }
            for name in names
        },
        "real_pages": real.get("pages", {}),
        "bomb_mb": options.bomb_mb,
    }
    print_table(report)
    options.json.parent.mkdir(parents=True, exist_ok=True)
    options.json.write_text(json.dumps(report, indent=2))
    print(f"wrote {options.json}")


def print_table(report: dict[str, object]) -> None:
    libraries: dict[str, dict[str, object]] = report["libraries"]  # type: ignore[assignment]
    header = ["library", *(f"{layout.name} recall% / leaked / pages/s" for layout in LAYOUTS)]
    header += [f"{path.name} pages/s" for path in REAL_PDFS] + [f"{report['bomb_mb']} MiB Flate bomb: peak MiB"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, entry in libraries.items():
        layouts: dict[str, dict[str, float]] = entry["layouts"]  # type: ignore[assignment]
        cells = [
            f"{cell['order_recall_pct']} / {cell['leaked']} of {cell['furniture_lines']} / {cell['pages_per_s']}"
            for cell in layouts.values()
        ]
        real: dict[str, float] = entry["real_pages_per_s"]  # type: ignore[assignment]
        cells += [str(real.get(path.name, "-")) for path in REAL_PDFS]
        bomb: dict[str, object] = entry.get("bomb") or {}  # type: ignore[assignment]
        cells.append(f"{bomb.get('peak_rss_mib', '-')} ({bomb.get('outcome', '-')})")
        label = f"{name} {entry['version']}" + ("" if entry["eligible"] else " (AGPL, not eligible)")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print(f"machine: {json.dumps(report['machine'])}")


if __name__ == "__main__":
    main()
