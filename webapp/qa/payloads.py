"""The question JSON, typed once: what `selectors.question_payload` and `selectors.article_payload` build, what the
answer page polls and the API returns, and (through each field's `Doc`) what the API's schema says about it. The API
derives its serializers from these classes (webapp/api/serializers/typed.py), so the two cannot drift apart."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict

from generator.answer_model_stance import STANCES
from indexer.records import CORRECTION_REF_TYPES
from indexer.study_design import DESIGNS
from verifier.bottom_line import BOTTOM_LINES, SIDES, TITLES
from verifier.consensus import CONSENSUS_ABSTRACTS, CONSENSUS_LABELS
from webapp.corpus.models import Article
from webapp.qa.models import Question
from webapp.qa.stage_timings import STAGES


@dataclass(frozen=True)
class Doc:
    """What a field means to a client, and what its type alone does not say: its choices, a string's format (a URL,
    a date-time), whether a string may be blank, bounds."""

    help_text: str = ""
    choices: Sequence[Any] | None = None
    form: Literal["url", "date-time"] | None = None
    allow_blank: bool = False
    min_value: int | None = None
    min_length: int | None = None
    max_length: int | None = None


PARENT_HELP = "The question this one follows up; null for a question that follows none."
THREAD_HELP = (
    "The id of its thread's first question, for a follow-up; null for a question that follows none (a first question "
    "included: its follow-ups name it here)."
)


class NoticePayload(TypedDict):
    ref_type: Annotated[
        str,
        Doc(
            (
                "PubMed's RefType, from this article's side: RetractionIn, ExpressionOfConcernIn, ErratumIn name a "
                "notice about it; RetractionOf, ExpressionOfConcernFor, ErratumFor the paper it is a notice about."
            ),
            choices=CORRECTION_REF_TYPES,
        ),
    ]
    pmid: Annotated[str, Doc("The other citation's PMID; empty when PubMed gives none.", allow_blank=True)]
    source: Annotated[str, Doc("The other citation as PubMed prints it.", allow_blank=True)]


class RetractionPayload(TypedDict):
    status: Annotated[
        str,
        Doc(
            (
                "retracted (RetractionIn, the type Retracted Publication, or a stored notice's RetractionOf), concern "
                "(an expression of concern), corrected (an erratum), notice (the article is itself a retraction, "
                "concern or erratum notice) or none; the first that applies. Retracted papers are left out of "
                "retrieval unless the question asked for them (`include_retracted`)."
            ),
            choices=Article.Retraction.choices,
        ),
    ]
    notices: Annotated[
        list[NoticePayload], Doc("Its own entries and those of stored notices pointing at it, from its side.")
    ]


class StudyDesignPayload(TypedDict):
    key: Annotated[str, Doc("One of: " + ", ".join(design.key for design in DESIGNS) + ".")]
    label: Annotated[str, Doc("As the badge reads, e.g. Randomised controlled trial.")]


class SourcePayload(TypedDict):
    pmid: Annotated[str, Doc("A PMID, or another corpus's id as it is (a benchmark's Semantic Scholar id `S2:123`).")]
    title: str
    journal: str
    year: int | None
    url: Annotated[str, Doc("The PubMed page; empty for an id that is not a PMID.", form="url", allow_blank=True)]
    authors: list[str]
    doi: Annotated[str, Doc(allow_blank=True)]
    retraction: RetractionPayload
    study_design: Annotated[
        StudyDesignPayload | None,
        Doc(
            "The strongest design its PubMed publication types name (MeSH headings when none does); designs from "
            "strongest: meta-analysis, systematic-review, rct, clinical-trial, observational, case-report, review, "
            "preclinical (animal or in-vitro). Null when none applies."
        ),
    ]


class ArticleSentencePayload(TypedDict):
    text: str
    start: int
    end: int


class ArticlePayload(SourcePayload):
    abstract: str
    sentences: Annotated[list[ArticleSentencePayload], Doc("The abstract split as the verifier split it.")]


class CitationNotePayload(TypedDict):
    written: str
    raw_id: str
    pmid: str | None
    how: Annotated[str, Doc(choices=("repaired", "unmatched"))]


class CitationVerdictPayload(TypedDict):
    label: Annotated[
        str,
        Doc(
            "What the page shows: SUPPORT, CONTRADICT, NO_EVIDENCE, UNCLEAR (the verifier's calibrated confidence "
            "is below the threshold stored with its checkpoint; see `leaning`) or NO_REFERENCE (not among the "
            "sources)."
        ),
    ]
    confidence: Annotated[
        float | None,
        Doc("The verifier's calibrated probability of `leaning`; null for NO_REFERENCE and the LLM judge."),
    ]
    leaning: Annotated[
        str | None,
        Doc(
            "The label the verifier leans to (SUPPORT, CONTRADICT or NO_EVIDENCE), also when `label` is UNCLEAR. "
            "Null for NO_REFERENCE and for answers verified before it was stored."
        ),
    ]
    raw_label: Annotated[
        str | None, Doc("The plain argmax before calibration and the decision rule. Null as for `leaning`.")
    ]
    probabilities: Annotated[
        dict[str, float], Doc("Calibrated probability per label; empty where the verifier gives none.")
    ]
    raw_probabilities: Annotated[
        dict[str, float], Doc("The plain softmax per label, before calibration; empty where the verifier gives none.")
    ]
    evidence_sentences: Annotated[list[int], Doc("Indices into the article's `sentences`.")]
    evidence_spans: Annotated[
        list[Annotated[list[int], Doc(min_length=2, max_length=2)]],
        Doc("[start, end] character offsets into the abstract."),
    ]
    evidence_text: Annotated[list[str], Doc("Those sentences' text.")]


class AnswerSentencePayload(TypedDict):
    text: Annotated[str, Doc("As the model wrote it, citations included.")]
    display_text: Annotated[str, Doc("Without citation markup.")]
    verdict: Annotated[
        str,
        Doc(
            "The overall verdict across the cited abstracts: CONTRADICT if any, else SUPPORT if any, else "
            "NO_EVIDENCE; UNCLEAR citations are left out, and the verdict is UNCLEAR only when every citation is. "
            "NO_REFERENCE when it cites only papers the model was not given; UNCITED when it cites none."
        ),
    ]
    confidence: float | None
    citations: Annotated[list[str], Doc("Cited PMIDs, in order.")]
    verdicts: Annotated[dict[str, CitationVerdictPayload], Doc("Per cited PMID.")]


class RetrievedPayload(TypedDict):
    pmid: str
    rank: int
    score: Annotated[float, Doc("The fused score.")]
    lexical_score: Annotated[float, Doc("Min-max normalised BM25 score; 0 if that leg missed it.")]
    semantic_score: Annotated[float, Doc("Min-max normalised cosine score; 0 if that leg missed it.")]
    lexical_raw: float | None
    semantic_raw: float | None
    rerank_score: Annotated[
        float | None,
        Doc(
            "The reranker's score of its best passage (the order it was given); null when the question's search "
            "did not rerank, or this abstract was beyond the candidates it re-scored."
        ),
    ]
    source: Annotated[SourcePayload | None, Doc("None when the article has since left the corpus.")]


class ThreadSourcePayload(TypedDict):
    pmid: str
    source: Annotated[SourcePayload, Doc("An article that has since left the corpus is not listed.")]


class ConsensusPmidsPayload(TypedDict):
    support: Annotated[list[str], Doc("PMIDs of the abstracts that support it.")]
    contradict: Annotated[list[str], Doc("Those that contradict it.")]
    no_evidence: Annotated[list[str], Doc("Those that say nothing about it.")]
    unclear: Annotated[list[str], Doc("Those the verifier was not confident enough about to show a label.")]


class ConsensusVerdictPayload(TypedDict):
    label: Annotated[str, Doc(choices=CONSENSUS_LABELS)]
    confidence: Annotated[
        float | None, Doc("The verifier's calibrated confidence in its leaning; null for the LLM judge.")
    ]
    evidence_spans: Annotated[
        list[Annotated[list[int], Doc(min_length=2, max_length=2)]],
        Doc("[start, end] character offsets into the abstract of the sentences the verifier read as evidence."),
    ]
    leaning: Annotated[
        str, Doc("The label the verifier leans to (SUPPORT, CONTRADICT or NO_EVIDENCE), also when `label` is UNCLEAR.")
    ]
    probabilities: Annotated[
        dict[str, float], Doc("Calibrated probability per label; empty where the verifier gives none.")
    ]


class ModelReadingPayload(TypedDict):
    pmid: Annotated[str, Doc("The abstract the answer LLM read: the one the dense search found closest.")]
    side: Annotated[str, Doc("The side its reading takes under the fitted cut.", choices=SIDES)]
    log_odds_no: Annotated[float, Doc("log p(no) - log p(yes) of the LLM's first answer token.")]
    weight: Annotated[float, Doc("What the reading weighs, added to its side's weight.", min_value=0)]


class BottomLinePayload(TypedDict):
    answer: Annotated[
        str,
        Doc(
            "The abstracts' votes, weighed: yes or no when one side's share of the weight is a clear majority, mixed "
            "when neither side's is, not_enough when too little weight votes at all.",
            choices=BOTTOM_LINES,
        ),
    ]
    title: Annotated[str, Doc("As the page heads it: " + ", ".join(TITLES.values()) + ".")]
    rests_on: Annotated[int, Doc("How many abstracts vote (yes or no).", min_value=0)]
    yes_pmids: Annotated[list[str], Doc("The abstracts that vote yes, heaviest first.")]
    no_pmids: Annotated[list[str], Doc("The abstracts that vote no, heaviest first.")]
    yes_weight: Annotated[
        float, Doc("The yes votes' weight, with the written answer's and the LLM's reading's when they say yes.")
    ]
    no_weight: Annotated[
        float, Doc("The no votes' weight, with the written answer's and the LLM's reading's when they say no.")
    ]
    weights: Annotated[
        dict[str, float],
        Doc(
            "Per voting PMID: its retrieval rank's decay times the verifier's calibrated probability of its leaning "
            "(less when the page shows it Unclear)."
        ),
    ]
    abstaining: Annotated[int, Doc("Abstracts read that take no side.", min_value=0)]
    retracted_pmids: Annotated[list[str], Doc("Retracted papers among those read: kept out of the vote.")]
    answer_stance: Annotated[
        str | None,
        Doc(
            "What the written answer says, as the verifier reads it: yes, no, or null when it takes no clear side.",
            choices=SIDES,
        ),
    ]
    answer_model_stance: Annotated[
        str | None,
        Doc(
            "What the written answer says, as the answer model reads it (its opening yes or no, else a short call): "
            "yes, no or maybe; null when the bottom line is neither Yes nor No (it is not asked), the model could "
            "not be asked, or the answer predates it.",
            choices=STANCES,
        ),
    ]
    answer_disagrees: Annotated[
        bool,
        Doc(
            "The written answer says yes and the bottom line is No, or the other way round, as either reader finds "
            "it (`answer_stance` or `answer_model_stance`)."
        ),
    ]
    model_reading: Annotated[
        ModelReadingPayload | None,
        Doc(
            "The answer LLM's reading of the closest abstract, one more voice in the weights; null when the rule "
            "does not weigh it, the answer predates it, or the model could not be asked."
        ),
    ]
    model_reading_failed: Annotated[bool, Doc("The rule weighs the LLM's reading and the model could not be asked.")]
    model_alone: Annotated[
        bool,
        Doc(
            "No abstract votes: the question asks yes or no but its claim could not be read, so the LLM's reading of "
            "the closest abstract alone decided the bottom line (the consensus's claim is then null)."
        ),
    ]


class ConsensusPayload(TypedDict):
    claim: Annotated[
        str | None,
        Doc(
            'The claim a "yes" would make, which the verifier checked; null when the question\'s claim could not be '
            "read: then no abstract was checked and the bottom line is the LLM's reading alone."
        ),
    ]
    read: Annotated[
        int,
        Doc(
            f"Abstracts read: the first {CONSENSUS_ABSTRACTS} retrieved (fewer when fewer were retrieved), and one "
            "more when `closest_read` names it."
        ),
    ]
    closest_read: Annotated[
        str | None,
        Doc(
            "The PMID read beyond the first retrieved: the candidate the dense search found closest to the question, "
            "which the fused ranking put below them; null when it is among them."
        ),
    ]
    support: Annotated[int, Doc("Abstracts that support the claim.")]
    contradict: Annotated[int, Doc("Abstracts that contradict it.")]
    no_evidence: Annotated[int, Doc("Abstracts that say nothing about it (NO_EVIDENCE).")]
    unclear: Annotated[
        int, Doc("Abstracts the verifier's calibrated decision rule shows as UNCLEAR (not confident enough).")
    ]
    pmids: Annotated[ConsensusPmidsPayload, Doc("Each count's abstracts, keyed as the counts are, in retrieval order.")]
    speaking_minimum: Annotated[
        int, Doc("When support + contradict is below this, too few abstracts speak to the claim to call a consensus.")
    ]
    verdicts: Annotated[dict[str, ConsensusVerdictPayload], Doc("Per PMID read.")]
    bottom_line: Annotated[
        BottomLinePayload | None,
        Doc(
            "Yes, No, Mixed evidence or Not enough evidence, from the abstracts' votes: a reading of the retrieved "
            "abstracts by an automatic verifier, not a clinical recommendation. Null for a consensus made before "
            "the bottom line existed."
        ),
    ]


class StageTimingPayload(TypedDict):
    stage: Annotated[
        str,
        Doc(
            "queue: waiting for a worker, from the question's creation to its search; first_token: the model reading "
            "the prompt, to its first token; writing: the rest of the answer; generation: the whole answer, where its "
            "first token's time is unknown; consensus: a yes/no question's bottom line; answer_stance: the answer's "
            "own yes or no, read for a bottom line made before it.",
            choices=STAGES,
        ),
    ]
    ms: Annotated[float, Doc("Milliseconds the stage took.")]


class QuestionPayload(TypedDict):
    id: int
    question: str
    status: Annotated[str, Doc(choices=Question.Status.choices)]
    queue_position: Annotated[
        int | None,
        Doc(
            (
                "Until its answer starts being written (queued, or retrieved and waiting for the model): 1 when it is "
                "next, else one plus the questions queued or running that were asked before it. Null after that."
            ),
            min_value=1,
        ),
    ]
    error: Annotated[str, Doc(allow_blank=True)]
    verification_status: Annotated[
        str | None,
        Doc(
            (
                "Null until the verify stage ends (and for a question that failed or stopped before it). "
                "`unavailable`: the verifier could not run, so the answer and its citations stand without verdicts "
                "(`sentences` is empty) and `verification_error` says why. Not the UNCLEAR verdict, which is the "
                "verifier's own low confidence."
            ),
            choices=Question.Verification.choices,
        ),
    ]
    verification_error: Annotated[str, Doc("Why verification is unavailable.", allow_blank=True)]
    answer: Annotated[str, Doc("Grows while the model writes.", allow_blank=True)]
    answer_raw: Annotated[str, Doc("Exactly as the model wrote it.", allow_blank=True)]
    cannot_answer: bool
    cancel_requested: bool
    first_token_at: Annotated[str | None, Doc(form="date-time")]
    context: Annotated[dict[str, Any], Doc("PMIDs given to the model, trimmed and dropped to fit; prompt tokens.")]
    citation_notes: list[CitationNotePayload]
    sentences: Annotated[list[AnswerSentencePayload], Doc("Empty until verification is done.")]
    retrieved: list[RetrievedPayload]
    thread_sources: Annotated[
        list[ThreadSourcePayload],
        Doc(
            "For a follow-up, the abstracts its thread's earlier answers cited that the model was given besides "
            "`retrieved` (at most a few, after its own hits, never twice); empty for other questions."
        ),
    ]
    parent: Annotated[int | None, Doc(PARENT_HELP)]
    thread: Annotated[int | None, Doc(THREAD_HELP)]
    thread_questions: Annotated[
        list[int],
        Doc(
            "The ids of every question of its thread, oldest first (its first question, then the follow-ups); "
            "empty for a question that follows none and has no follow-ups."
        ),
    ]
    consensus: Annotated[
        ConsensusPayload | None,
        Doc(
            "For a question asked yes or no (by its form: an auxiliary verb first, as BioASQ writes them), how its "
            "first retrieved abstracts answer it, by the verifier. Null for other questions, until verification is "
            "done, and when it could not be made."
        ),
    ]
    timings_ms: Annotated[dict[str, Any], Doc("Milliseconds per stage, and generation speed figures.")]
    stage_timings: Annotated[
        list[StageTimingPayload],
        Doc(
            "The stages `timings_ms` records, in the order they ran, the generation split at its first token: what "
            "the answer page draws as a bar each. Empty until the search has run."
        ),
    ]
    semantic_coverage: Annotated[
        float | None,
        Doc(
            "Share of the stored articles the dense (semantic) leg could find when this question was retrieved: "
            "below 1 while the corpus is still being embedded (keyword search covers every article). Null before "
            "retrieval."
        ),
    ]
    models: Annotated[dict[str, str], Doc("Model ids used per stage.")]
    settings: Annotated[dict[str, Any], Doc("The pipeline settings this answer is made with.")]
