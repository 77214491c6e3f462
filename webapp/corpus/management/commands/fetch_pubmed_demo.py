"""`manage.py fetch_pubmed_demo --out DIR`: rebuild the demo corpus from NCBI, for a machine online without the
shared data folder.

It asks NCBI's E-utilities (efetch) for the PMIDs of the demo slice (webapp/corpus/demo_pmids.json, taken from the
shared folder's PubMed XML excerpts and BioASQ benchmark files) and writes them under DIR the way that folder holds
them, so that `VERIMED_DATA_DIR=DIR manage.py ingest_demo` reads them. The BioASQ distractors from SciFact's corpus
have Semantic Scholar ids, not PMIDs, and are not fetched. `../shared/data` stays the offline default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.errors import IndexerError
from indexer.ncbi import default_client
from indexer.pubmed_efetch import BATCH_SIZE, EUTILS_URL, PAUSE_SECONDS, EfetchSource, demo_pmids, prepare_demo

DEMO_PMIDS = Path(__file__).resolve().parents[2] / "demo_pmids.json"


class Command(BaseCommand):
    help = "Fetch the demo corpus's PubMed records from NCBI (efetch) into a data folder that ingest_demo reads."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", type=Path, required=True, help="The data folder to write (VERIMED_DATA_DIR).")
        parser.add_argument("--base-url", default=EUTILS_URL, help=f"E-utilities base URL (default {EUTILS_URL}).")
        parser.add_argument(
            "--pmids", type=Path, default=DEMO_PMIDS, help="JSON: each file to write and its PMIDs (default: the demo)."
        )
        parser.add_argument("--api-key", default="", help="An NCBI API key: ten requests a second instead of three.")
        parser.add_argument("--batch-size", type=int, default=BATCH_SIZE, help="PMIDs per efetch request (max 200).")
        parser.add_argument("--pause", type=float, default=PAUSE_SECONDS, help="Seconds between requests.")
        parser.add_argument("--timeout", type=float, default=60.0, help="Seconds to wait for each reply.")

    def handle(self, *args: Any, **options: Any) -> None:
        targets = demo_pmids(options["pmids"])
        source = EfetchSource(
            base_url=options["base_url"],
            api_key=options["api_key"],
            batch_size=max(1, min(options["batch_size"], BATCH_SIZE)),
            pause=options["pause"],
        )
        total = sum(len(pmids) for pmids in targets.values())
        self.stdout.write(f"fetching {total} PMIDs for {len(targets)} files from {source.efetch_url}…")
        try:
            with default_client(timeout=options["timeout"]) as client:
                prepared = prepare_demo(targets, options["out"], source=source, client=client)
        except IndexerError as error:
            raise CommandError(f"the demo data was not fetched, and nothing was written: {error}") from error
        for target, count in prepared.files.items():
            self.stdout.write(f"  {options['out'] / target}: {count} records")
        if prepared.missing:
            self.stdout.write(
                f"{len(prepared.missing)} PMIDs came back without an abstract or not at all (deleted or changed since "
                f"the slice was made), e.g. {', '.join(prepared.missing[:5])}"
            )
        self.stdout.write(f"done: VERIMED_DATA_DIR={options['out']} manage.py ingest_demo")
