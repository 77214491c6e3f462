"""What the deep check's API returns: the check's state and its tree (webapp/deepcheck/selectors.py builds it)."""

from __future__ import annotations

from rest_framework import serializers

from webapp.deepcheck.models import DeepCheck

DEEP_VERDICTS = (
    "SUPPORT: every claim is supported by an abstract the sentence cites; PARTIAL: some are, some are not; "
    "SUPPORT_ELSEWHERE: every claim is supported, some only by papers the sentence does not cite (a citation "
    "problem); CONTRADICT: a cited abstract contradicts a claim; CONTRADICT_ELSEWHERE: only another paper does; "
    "NO_EVIDENCE, UNCLEAR, NO_REFERENCE as for sentences; UNCITED: the sentence cites nothing, so it has no claims."
)


class DeepEvidenceSerializer(serializers.Serializer):
    pmid = serializers.CharField()
    title = serializers.CharField()
    cited = serializers.BooleanField(help_text="Cited by the sentence; false: found by the claim's own search.")
    label = serializers.CharField(help_text="SUPPORT, CONTRADICT, NO_EVIDENCE, UNCLEAR or NO_REFERENCE.")
    confidence = serializers.FloatField(allow_null=True)
    leaning = serializers.CharField(allow_null=True, help_text="The label an UNCLEAR verdict leans to.")
    evidence_spans = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="[start, end] character offsets of the evidence sentences in the abstract.",
    )
    evidence_text = serializers.ListField(child=serializers.CharField())


class DeepClaimSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="A self-contained claim the model wrote from the sentence.")
    verdict = serializers.CharField(help_text=DEEP_VERDICTS)
    confidence = serializers.FloatField(allow_null=True)
    requeried = serializers.BooleanField(help_text="The cited abstracts did not settle it, so it was searched for.")
    evidence = DeepEvidenceSerializer(many=True)


class DeepSentenceSerializer(serializers.Serializer):
    position = serializers.IntegerField(help_text="The sentence's index in the answer, from 0.")
    text = serializers.CharField()
    citations = serializers.ListField(child=serializers.CharField())
    verdict = serializers.CharField(help_text=DEEP_VERDICTS)
    from_model = serializers.BooleanField(help_text="False: the model's claims were unusable; the sentence is one.")
    note = serializers.CharField(help_text="Why the model's claims were not used.")
    claims = DeepClaimSerializer(many=True)


class DeepTreeSerializer(serializers.Serializer):
    sentences = DeepSentenceSerializer(many=True)
    extraction_raw = serializers.CharField(help_text="The model's reply, for audit.")
    max_tokens = serializers.IntegerField(help_text="The extraction's token budget.")
    extractor = serializers.CharField()
    timings_ms = serializers.DictField(child=serializers.FloatField())


class DeepCheckSerializer(serializers.Serializer):
    question = serializers.IntegerField()
    status = serializers.ChoiceField(
        choices=DeepCheck.Status.choices,
        help_text="failed also for a check lost on its way (queued or running, unmoved for "
        "`VERIMED_DEEP_CHECK_LOST_MINUTES`): `error` says so.",
    )
    stage = serializers.CharField(help_text="While running: extracting, judging or searching.")
    progress = serializers.IntegerField(help_text="Percent done.")
    error = serializers.CharField()
    tree = DeepTreeSerializer(allow_null=True, help_text="Once status is done.")
    models = serializers.DictField(child=serializers.CharField())
    timings_ms = serializers.DictField(child=serializers.FloatField())
    settings = serializers.DictField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    flagged = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="[sentence, claim] of each claim flagged for review.",
    )
    queue_position = serializers.IntegerField(
        allow_null=True,
        help_text="While queued: 1 when it is next, counting the questions and deep checks ahead of it; else null.",
    )
