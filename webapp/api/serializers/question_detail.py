"""A question's status and result, as the API returns it: the shape `webapp.qa.selectors.question_payload` builds
(the page reads the very same JSON), with what watch adds (`watched`, `rechecks`)."""

from __future__ import annotations

from rest_framework import serializers

from verifier.consensus import CONSENSUS_ABSTRACTS, CONSENSUS_LABELS
from webapp.api.serializers.articles import SourceSerializer
from webapp.api.serializers.watch import RecheckSerializer
from webapp.qa.models import Question
from webapp.watch.selectors import RECHECKS_LISTED

PARENT_HELP = "The question this one follows up; null for a question that follows none."
THREAD_HELP = (
    "The id of its thread's first question, for a follow-up; null for a question that follows none (a first question "
    "included: its follow-ups name it here)."
)


class CitationVerdictSerializer(serializers.Serializer):
    label = serializers.CharField(
        help_text="What the page shows: SUPPORT, CONTRADICT, NO_EVIDENCE, UNCLEAR (the verifier's calibrated "
        "confidence is below the threshold stored with its checkpoint; see `leaning`) or NO_REFERENCE (not among "
        "the sources)."
    )
    confidence = serializers.FloatField(
        allow_null=True,
        help_text="The verifier's calibrated probability of `leaning`; null for NO_REFERENCE and the LLM judge.",
    )
    leaning = serializers.CharField(
        allow_null=True,
        help_text="The label the verifier leans to (SUPPORT, CONTRADICT or NO_EVIDENCE), also when `label` is "
        "UNCLEAR. Null for NO_REFERENCE and for answers verified before it was stored.",
    )
    raw_label = serializers.CharField(
        allow_null=True,
        help_text="The plain argmax before calibration and the decision rule. Null as for `leaning`.",
    )
    probabilities = serializers.DictField(
        child=serializers.FloatField(),
        help_text="Calibrated probability per label; empty where the verifier gives none.",
    )
    raw_probabilities = serializers.DictField(
        child=serializers.FloatField(),
        help_text="The plain softmax per label, before calibration; empty where the verifier gives none.",
    )
    evidence_sentences = serializers.ListField(
        child=serializers.IntegerField(), help_text="Indices into the article's `sentences`."
    )
    evidence_spans = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="[start, end] character offsets into the abstract.",
    )
    evidence_text = serializers.ListField(child=serializers.CharField(), help_text="Those sentences' text.")


class AnswerSentenceSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="As the model wrote it, citations included.")
    display_text = serializers.CharField(help_text="Without citation markup.")
    verdict = serializers.CharField(
        help_text="The overall verdict across the cited abstracts: CONTRADICT if any, else SUPPORT if any, else "
        "NO_EVIDENCE; UNCLEAR citations are left out, and the verdict is UNCLEAR only when every citation is. "
        "NO_REFERENCE when it cites only papers the model was not given; UNCITED when it cites none."
    )
    confidence = serializers.FloatField(allow_null=True)
    citations = serializers.ListField(child=serializers.CharField(), help_text="Cited PMIDs, in order.")
    verdicts = serializers.DictField(child=CitationVerdictSerializer(), help_text="Per cited PMID.")


class RetrievedSerializer(serializers.Serializer):
    pmid = serializers.CharField()
    rank = serializers.IntegerField()
    score = serializers.FloatField(help_text="The fused score.")
    lexical_score = serializers.FloatField(help_text="Min-max normalised BM25 score; 0 if that leg missed it.")
    semantic_score = serializers.FloatField(help_text="Min-max normalised cosine score; 0 if that leg missed it.")
    lexical_raw = serializers.FloatField(allow_null=True)
    semantic_raw = serializers.FloatField(allow_null=True)
    rerank_score = serializers.FloatField(
        allow_null=True,
        help_text="The reranker's score of its best passage (the order it was given); null when "
        "the question's search did not rerank, or this abstract was beyond the candidates it re-scored.",
    )
    source = SourceSerializer(allow_null=True, help_text="None when the article has since left the corpus.")


class ThreadSourceSerializer(serializers.Serializer):
    pmid = serializers.CharField()
    source = SourceSerializer(help_text="An article that has since left the corpus is not listed.")


class ConsensusPmidsSerializer(serializers.Serializer):
    support = serializers.ListField(child=serializers.CharField(), help_text="PMIDs of the abstracts that support it.")
    contradict = serializers.ListField(child=serializers.CharField(), help_text="Those that contradict it.")
    no_evidence = serializers.ListField(child=serializers.CharField(), help_text="Those that say nothing about it.")
    unclear = serializers.ListField(
        child=serializers.CharField(), help_text="Those the verifier was not confident enough about to show a label."
    )


class ConsensusVerdictSerializer(serializers.Serializer):
    label = serializers.ChoiceField(choices=list(CONSENSUS_LABELS))
    confidence = serializers.FloatField(
        allow_null=True, help_text="The verifier's calibrated confidence in its leaning; null for the LLM judge."
    )
    evidence_spans = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="[start, end] character offsets into the abstract of the sentences the verifier read as evidence.",
    )


class ConsensusSerializer(serializers.Serializer):
    claim = serializers.CharField(help_text='The claim a "yes" would make, which the verifier checked.')
    read = serializers.IntegerField(
        help_text=f"Abstracts read: the first {CONSENSUS_ABSTRACTS} retrieved (fewer when fewer were retrieved)."
    )
    support = serializers.IntegerField(help_text="Abstracts that support the claim.")
    contradict = serializers.IntegerField(help_text="Abstracts that contradict it.")
    no_evidence = serializers.IntegerField(help_text="Abstracts that say nothing about it (NO_EVIDENCE).")
    unclear = serializers.IntegerField(
        help_text="Abstracts the verifier's calibrated decision rule shows as UNCLEAR (not confident enough)."
    )
    pmids = ConsensusPmidsSerializer(help_text="Each count's abstracts, keyed as the counts are, in retrieval order.")
    speaking_minimum = serializers.IntegerField(
        help_text="When support + contradict is below this, too few abstracts speak to the claim to call a consensus."
    )
    verdicts = serializers.DictField(child=ConsensusVerdictSerializer(), help_text="Per PMID read.")


class CitationNoteSerializer(serializers.Serializer):
    written = serializers.CharField()
    raw_id = serializers.CharField()
    pmid = serializers.CharField(allow_null=True)
    how = serializers.ChoiceField(choices=["repaired", "unmatched"])


class QuestionDetailSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    question = serializers.CharField()
    status = serializers.ChoiceField(choices=Question.Status.choices)
    queue_position = serializers.IntegerField(
        allow_null=True,
        min_value=1,
        help_text="Until its answer starts being written (queued, or retrieved and waiting for the model): 1 when it "
        "is next, else one plus the questions queued or running that were asked before it. Null after that.",
    )
    error = serializers.CharField(allow_blank=True)
    verification_status = serializers.ChoiceField(
        choices=Question.Verification.choices,
        allow_null=True,
        help_text="Null until the verify stage ends (and for a question that failed or stopped before it). "
        "`unavailable`: the verifier could not run, so the answer and its citations stand without verdicts "
        "(`sentences` is empty) and `verification_error` says why. Not the UNCLEAR verdict, which is the "
        "verifier's own low confidence.",
    )
    verification_error = serializers.CharField(allow_blank=True, help_text="Why verification is unavailable.")
    answer = serializers.CharField(allow_blank=True, help_text="Grows while the model writes.")
    answer_raw = serializers.CharField(allow_blank=True, help_text="Exactly as the model wrote it.")
    cannot_answer = serializers.BooleanField()
    cancel_requested = serializers.BooleanField()
    first_token_at = serializers.DateTimeField(allow_null=True)
    context = serializers.DictField(help_text="PMIDs given to the model, trimmed and dropped to fit; prompt tokens.")
    citation_notes = CitationNoteSerializer(many=True)
    sentences = AnswerSentenceSerializer(many=True, help_text="Empty until verification is done.")
    retrieved = RetrievedSerializer(many=True)
    thread_sources = ThreadSourceSerializer(
        many=True,
        help_text="For a follow-up, the abstracts its thread's earlier answers cited that the model was given besides "
        "`retrieved` (at most a few, after its own hits, never twice); empty for other questions.",
    )
    parent = serializers.IntegerField(allow_null=True, help_text=PARENT_HELP)
    thread = serializers.IntegerField(allow_null=True, help_text=THREAD_HELP)
    thread_questions = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="The ids of every question of its thread, oldest first (its first question, then the follow-ups); "
        "empty for a question that follows none and has no follow-ups.",
    )
    consensus = ConsensusSerializer(
        allow_null=True,
        help_text="For a question asked yes or no (by its form: an auxiliary verb first, as BioASQ writes them), how "
        "its first retrieved abstracts answer it, by the verifier. Null for other questions, until verification is "
        "done, and when it could not be made.",
    )
    timings_ms = serializers.DictField(help_text="Milliseconds per stage, and generation speed figures.")
    semantic_coverage = serializers.FloatField(
        allow_null=True,
        help_text="Share of the stored articles the dense (semantic) leg could find when this question was "
        "retrieved: below 1 while the corpus is still being embedded (keyword search covers every article). Null "
        "before retrieval.",
    )
    models = serializers.DictField(child=serializers.CharField(), help_text="Model ids used per stage.")
    settings = serializers.DictField(help_text="The pipeline settings this answer is made with.")
    watched = serializers.BooleanField(
        help_text="Whether you watch this answer: it is re-checked after each PubMed update and index rebuild "
        "(`POST` or `DELETE` on `/api/v1/questions/{id}/watch`); only the person who asked may watch it."
    )
    rechecks = RecheckSerializer(
        many=True,
        help_text=f"Its re-checks, newest first (the newest {RECHECKS_LISTED}): the answer is never rewritten, what "
        "changed since the previous check is listed here.",
    )
