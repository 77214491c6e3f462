"""The site a backup drill backs up, made and read back in a process of its own, as an operator's checkout would be.

`python -m tests.webapp.ops.backup_drill populate CORPUS...` migrates the configured (empty) database, ingests the
corpus files with the product's `ingest` command (the real MiniLM embedder), then asks, answers, flags, watches,
re-checks and deep-checks through the app's services and the test factories; `... state` prints what the site holds:
every row of every table, and the PMIDs and scores the retrieve stage's search finds for a few questions.
"""

from __future__ import annotations

import json
import sys
from typing import Any

QUERIES = (
    "RecA-mediated joint molecule formation with RNA/DNA hairpins",
    "Is metformin safe? Lactic acidosis",
    "everolimus mTORC1 signalling",
)


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
    return {"rows": rows, "searches": searches}


def main() -> None:
    import django

    django.setup()
    command, *arguments = sys.argv[1:]
    if command == "populate":
        populate(arguments)
    print(json.dumps(state()))


if __name__ == "__main__":
    main()
