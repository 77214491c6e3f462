"""What the API says about watched answers: a question's re-checks, the notifications they raise, watching.

The shapes are `webapp.watch.selectors`' (views return the selector's dicts); these classes document them.
"""

from __future__ import annotations

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from webapp.api.serializers.common import ID_BOUNDS
from webapp.corpus.models import Article
from webapp.watch.models import Recheck

_SENTENCE = "The answer sentence's position, from 0."
_SENTENCE_TEXT = "That sentence, without citation markup."


class VerdictChangeSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["verdict"])
    sentence = serializers.IntegerField(help_text=_SENTENCE)
    sentence_text = serializers.CharField(help_text=_SENTENCE_TEXT)
    pmid = serializers.CharField(help_text="The cited paper.")
    before = serializers.CharField(help_text="Its verdict at the previous check (the answer's own at the first).")
    after = serializers.CharField(
        help_text="Its verdict now, by the verifier the site runs now, on the stored abstract."
    )


class RetractionChangeSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["retraction"])
    pmid = serializers.CharField(help_text="The cited paper.")
    title = serializers.CharField(allow_blank=True)
    before = serializers.ChoiceField(
        choices=Article.Retraction.choices,
        help_text="Its status at the previous check (when watching began, at first).",
    )
    after = serializers.ChoiceField(choices=Article.Retraction.choices, help_text="Its status now.")
    notices = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField(allow_blank=True)),
        help_text="The notices about it as the article lists them: {ref_type, pmid, source}.",
    )


class ContradictionChangeSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["contradiction"])
    pmid = serializers.CharField(help_text="A newly retrieved abstract: not among the question's `retrieved`.")
    title = serializers.CharField(allow_blank=True)
    sentence = serializers.IntegerField(help_text=_SENTENCE)
    sentence_text = serializers.CharField(help_text=_SENTENCE_TEXT)
    confidence = serializers.FloatField(
        allow_null=True,
        help_text="The verifier's calibrated confidence in CONTRADICT, above its Unclear threshold; null for the "
        "LLM judge.",
    )


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="RecheckChange",
        serializers={
            "verdict": VerdictChangeSerializer,
            "retraction": RetractionChangeSerializer,
            "contradiction": ContradictionChangeSerializer,
        },
        resource_type_field_name="kind",
        many=True,
    )
)
class ChangesField(serializers.JSONField):
    """A re-check's changes, each shaped by its `kind`."""


class RecheckSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    trigger = serializers.ChoiceField(
        choices=Recheck.Trigger.choices,
        help_text="What caused it: a PubMed sync (update files, or any job that indexed files), an index rebuild, or "
        "the owner's request.",
    )
    summary = serializers.CharField(help_text="One line: what changed, or `Nothing changed.`")
    changes = ChangesField(
        help_text="What differs from the previous check, each told once; empty when nothing changed. `verdict`: a "
        "cited paper's verdict on a sentence moved; `retraction`: a cited paper was retracted, put under an "
        "expression of concern or corrected (or the notice went away); `contradiction`: an abstract the search finds "
        "now, and did not when the question was answered, contradicts a sentence."
    )


class NotificationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    question = serializers.IntegerField(help_text="The watched question's id.")
    question_text = serializers.CharField()
    created_at = serializers.DateTimeField()
    unread = serializers.BooleanField()
    read_at = serializers.DateTimeField(allow_null=True)
    summary = serializers.CharField(help_text="What the re-check found; the question's `rechecks` list the changes.")
    rechecked_at = serializers.DateTimeField()


class NotificationsReadSerializer(serializers.Serializer):
    ids = serializers.ListField(
        child=serializers.IntegerField(**ID_BOUNDS),
        required=False,
        max_length=1000,
        help_text="The notifications to mark read; all of yours when left out.",
    )


class NotificationsMarkedSerializer(serializers.Serializer):
    marked = serializers.IntegerField(help_text="How many were unread and are read now.")
    unread = serializers.IntegerField(help_text="How many of yours are still unread.")


class WatchStateSerializer(serializers.Serializer):
    question = serializers.IntegerField()
    watched = serializers.BooleanField()
