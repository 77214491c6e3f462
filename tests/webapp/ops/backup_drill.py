"""The site a backup drill backs up, made and read back in a process of its own, as an operator's checkout would be.

`python -m tests.webapp.ops.backup_drill populate CORPUS...` migrates the configured (empty) database, ingests the
corpus files with the product's `ingest` command (the real MiniLM embedder), then asks, answers, flags, watches,
re-checks and deep-checks through the app's services and the test factories, and puts a paper into the researcher's
library, indexed as the worker would; `... state` prints what the site holds: every row of every table, the PMIDs and
scores the retrieve stage's search finds for a few questions, and what the library's indexes hold and find for the
paper's question. `... stale-library` writes into the library's indexes a passage of a document that is not in the
database, as an earlier site in a restore's target would have left there.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.indexer.jats_samples import pqal_pmids, pqal_record
from tests.support import shared_data_dir

QUERIES = (
    "RecA-mediated joint molecule formation with RNA/DNA hairpins",
    "Is metformin safe? Lactic acidosis",
    "everolimus mTORC1 signalling",
)
LIBRARY_PAPER = 3  # of the shared PQA-L records, made into a JATS article
STALE_DOCUMENT = 999_999  # a library document id no site of the drill has


def _library_record() -> tuple[str, dict[str, object]]:
    pmid = pqal_pmids(shared_data_dir())[LIBRARY_PAPER]
    return pmid, pqal_record(shared_data_dir(), pmid)


def populate(corpus: list[str]) -> None:
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from tests.webapp.factories import (
        answer_with_three_verdicts,
        deep_check_stored,
        follow_up_of,
        notification_stored,
        recheck_stored,
    )
    from webapp.deepcheck.services import claim_flag_create
    from webapp.qa.services.admission import question_create
    from webapp.review.models import Flag
    from webapp.review.services import flag_close, flag_create
    from webapp.watch.services import watch_create

    call_command("migrate", interactive=False, verbosity=0)
    call_command("ingest", "--no-progress", *corpus, stdout=sys.stderr)
    for name, role in (("researcher", "researcher"), ("reviewer", "reviewer"), ("admin", "admin")):
        call_command("user_create", name, "--role", role, "--password", "a-long-drill-password", stdout=sys.stderr)
    researcher, reviewer = User.objects.get(username="researcher"), User.objects.get(username="reviewer")
    Token.objects.create(user=researcher)

    answered = answer_with_three_verdicts(user=researcher, text="Is metformin safe?")
    follow_up_of(parent=answered, text="Is it safe in children?", answer_text="No trial included children.")
    question_create(text="What does everolimus inhibit?", user=researcher, enqueue=False)

    flag = flag_create(
        question=answered, sentence_position=1, reason=Flag.Reason.WRONG_VERDICT, pmid="222", user=reviewer
    )
    flag_close(flag_id=flag.pk, status=Flag.Status.RESOLVED, reviewer_label="SUPPORT", note="checked", user=reviewer)
    flag_create(question=answered, sentence_position=0, reason=Flag.Reason.UNSUPPORTED, user=researcher)
    watch_create(user=researcher, question=answered)
    notification_stored(user=researcher, recheck=recheck_stored(question=answered))
    deep_check = deep_check_stored(question=answered)
    claim_flag_create(
        deep_check=deep_check, sentence_position=1, claim_index=1, reason=Flag.Reason.UNSUPPORTED, user=reviewer
    )
    _library_populate(researcher)


def _library_populate(researcher: Any) -> None:
    from tests.indexer.jats_samples import jats_article
    from webapp.library.engines import release_library_engines
    from webapp.library.indexing import document_index
    from webapp.library.services import document_upload

    pmid, record = _library_record()
    document = document_upload(owner=researcher, filename="paper.xml", data=jats_article(record, pmid=pmid)).document
    document_index(document_id=document.pk)  # the worker's task, which no worker runs here
    release_library_engines()


def stale_library() -> None:
    from django.contrib.auth.models import User

    from indexer.library_passages import Passage
    from indexer.library_records import library_add, passage_records
    from webapp.corpus.engines import embedder
    from webapp.library.engines import library_lexical_index, library_vector_index, release_library_engines

    _, record = _library_record()
    passage = Passage(ordinal=0, section="Results", page=None, text=str(record["LONG_ANSWER"]))
    researcher = User.objects.get(username="researcher")
    records = passage_records(owner=str(researcher.pk), document_id=STALE_DOCUMENT, title="Stale", passages=[passage])
    library_add(records, lexical=library_lexical_index(), vectors=library_vector_index(), embedder=embedder())
    release_library_engines()


def library_state() -> dict[str, Any]:
    """What the library's indexes hold, and the passages each leg finds for the researcher's paper's question."""
    from django.contrib.auth.models import User

    from indexer.base import SearchFilters
    from indexer.hybrid import HybridSettings, hybrid_search
    from webapp.corpus.engines import embedder
    from webapp.library.engines import library_lexical_index, library_vector_index, release_library_engines

    researcher = User.objects.get(username="researcher")
    _, record = _library_record()
    lexical, vectors = library_lexical_index(), library_vector_index()
    found = {
        mode: [
            [hit.pmid, round(hit.score, 5)]
            for hit in hybrid_search(
                str(record["QUESTION"]),
                lexical=lexical,
                vectors=vectors,
                embedder=embedder(),
                settings=HybridSettings(top_k=50, mode=mode, expand_query=False),
                filters=SearchFilters(owner=str(researcher.pk)),
            )
        ]
        for mode in ("lexical", "semantic")
    }
    held = {"lexical": lexical.count(), "vectors": vectors.count()}
    release_library_engines()
    return {"held": held, "found": found}


def state() -> dict[str, Any]:
    from django.apps import apps

    from webapp.corpus import engines
    from webapp.qa.pipeline import default_pipeline_settings
    from webapp.qa.source_screening import sources_search

    rows = {
        model._meta.label: [
            {key: str(value) for key, value in row.items()} for row in model._base_manager.order_by("pk").values()
        ]
        for model in apps.get_models(include_auto_created=True)
    }
    pipeline = default_pipeline_settings()
    searches = {
        query: [
            [hit.pmid, round(hit.score, 5), round(hit.lexical_raw or 0.0, 4), round(hit.semantic_raw or 0.0, 5)]
            for hit in sources_search(query=query, pipeline=pipeline)
        ]
        for query in QUERIES
    }
    engines.release_engines()
    return {"rows": rows, "searches": searches, "library": library_state()}


def main() -> None:
    import django

    django.setup()
    command, *arguments = sys.argv[1:]
    if command == "stale-library":
        stale_library()
        return
    if command == "populate":
        populate(arguments)
    print(json.dumps(state()))


if __name__ == "__main__":
    main()
