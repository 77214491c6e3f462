"""Measure the bottom line: is the product's Yes / No / Mixed / Not enough right, given the question alone?

Each question goes the product's path over an indexed corpus that holds its own abstract among thousands of others:
hybrid search (the product's retrieval settings), the question's claim form (`yes_no_claim`), the verifier's verdict
on that claim against each of the first ten abstracts (`claim_consensus`), and the bottom line rule kept beside the
checkpoint (`verifier.bottom_line`). Two sets (`verifier.yes_no_sets`):
- PubMedQA: PQA-L questions, gold yes / no / maybe, over the 1,000 PQA-L abstracts as PubMed publishes them (the
  context paragraphs and the conclusion) plus the distractor files given. The test split is the official 500 ids;
  the dev split is the PQA-L items outside them that the verifier never trained on (`pubmedqa_trains_on`).
- BioASQ: the yes/no questions of a benchmark questions file (`body`, `type`, `exact_answer`, `gold_pmids`) over
  the benchmark corpus.
A question whose claim the rewrite cannot read has no verifier votes: in the product its bottom line is the answer
LLM's reading alone when the rule weighs that reading and the question is asked yes or no by its form, and none
otherwise; here none counts as Not enough evidence, so it is never silently dropped from the accuracy.

With a language model, the first `answer_limit` questions of each set are also answered as the product answers them
(retrieval, focusing, packing, streamed generation), and the answer's stance is read two ways: by the same LLM in a
separate short call (`llm_stance`, the measure `evaluate generation` reports, "the LLM's own stance") and by the
product (the verifier on the answer's words, `answer_stance`). The bottom line, the LLM's stance and how often the
answer's text contradicts the bottom line are then measured on the same questions in the same run.

When the rule weighs the answer LLM's reading of the closest abstract (`BottomLineRule.reads_with_model`), every
question is read by that LLM as the product reads it (`generator.yes_no_reading`), served for the whole run; the
readings are kept in `ReadingCache`, so a run that stops resumes without reading a question twice.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sklearn.metrics import f1_score

from generator.answer_model_stance import answer_model_stance, opening_stance
from generator.base import LLM, LLMSettings, TokenCounter
from generator.evaluation import answer_prompt, index_search, served_llm
from generator.generate import generate_answer
from generator.generation_settings import GenerationSettings
from generator.registry import build_llm, build_token_counter
from generator.yes_no_reading import YesNoReader
from indexer.base import Embedder
from indexer.evaluation import read_corpus
from indexer.evaluation_index import EvaluationIndex, build_evaluation_index
from indexer.hybrid import HybridSettings, candidates_settings
from verifier.bottom_line import (
    BOTTOM_LINES,
    GOLD_READING,
    NO,
    NOT_ENOUGH,
    AbstractReader,
    AbstractVote,
    BottomLineRule,
    DevQuestion,
    ModelReading,
    consensus_votes,
    decide_bottom_line,
    read_closest_abstract,
    retrieved_abstracts,
    takes_other_side,
    vote_relevance,
)
from verifier.claim_rewriting import is_yes_no_question, yes_no_claim
from verifier.consensus import answer_stance, claim_consensus, hits_to_read
from verifier.verdicts import UNCLEAR
from verifier.verify import AnswerVerifier, CitedAbstract
from verifier.yes_no_sets import (
    BIOASQ,
    GOLD_ANSWERS,
    PUBMEDQA,
    YesNoQuestion,
    bioasq_questions,
    pubmedqa_extra_items,
    pubmedqa_questions,
    pubmedqa_records,
)

Write = Callable[[str], None]
MODEL_READINGS_FILE = "model-readings.jsonl"  # beside the evaluation indexes: `ReadingCache`
ANSWERS_FILE = "answers.jsonl"  # beside them too: the answers `answer_questions` keeps


def evaluation_sample(questions: Sequence[YesNoQuestion], *, seed: int = 13) -> list[YesNoQuestion]:
    """A seeded shuffle, so that a --limit run is a sample: PQA-L's test ids are grouped by answer."""
    shuffled = list(questions)
    random.Random(seed).shuffle(shuffled)
    return shuffled


@dataclass(frozen=True)
class QuestionReading:
    """What the product reads for one question: its claim, the retrieved PMIDs and each abstract's vote."""

    question: YesNoQuestion
    claim: str | None
    retrieved: tuple[str, ...]
    votes: tuple[AbstractVote, ...]
    seconds: float
    model_reading: ModelReading | None = None  # the answer LLM's reading of the closest abstract, when asked

    @property
    def own_rank(self) -> int | None:
        ranks = [rank for rank, pmid in enumerate(self.retrieved) if pmid in self.question.own_pmids]
        return min(ranks) if ranks else None

    def dev_question(self, stance: str | None = None) -> DevQuestion:
        return DevQuestion(
            votes=self.votes,
            gold=self.question.gold,
            stance=stance,
            source=self.question.source,
            model_reading=self.model_reading,
        )


def read_question(
    question: YesNoQuestion,
    *,
    index: EvaluationIndex,
    embedder: Embedder,
    retrieval: HybridSettings,
    verifier: AnswerVerifier,
    read_model: AbstractReader | None = None,
) -> QuestionReading:
    """The product's reading of `question`; with `read_model`, also the answer LLM's of the closest abstract."""
    started = time.perf_counter()
    # Every fused candidate, as the product's retrieve stage asks: the first `top_k` are its sources, and the dense
    # leg's closest among the rest is read too (`hits_to_read`).
    candidates = index_search(question.text, index=index, embedder=embedder, retrieval=candidates_settings(retrieval))
    claim = yes_no_claim(question.text)
    read = hits_to_read(candidates, top_k=retrieval.top_k)
    abstracts = [
        CitedAbstract(pmid=hit.pmid, title=index.articles[hit.pmid].title, abstract=index.articles[hit.pmid].abstract)
        for hit in read
    ]
    relevance = vote_relevance({hit.pmid: hit.semantic_score for hit in read})
    votes: tuple[AbstractVote, ...] = ()
    if claim is not None:
        votes = tuple(consensus_votes(claim_consensus(verifier, claim, abstracts), relevance=relevance))
    model_reading = None
    if read_model is not None and is_yes_no_question(question.text):
        # A question asked yes or no whose claim the rewrite cannot read has no votes; the LLM reads the question.
        retrieved = votes or retrieved_abstracts([hit.pmid for hit in read], relevance=relevance)
        model_reading = read_closest_abstract(read_model, question.text, retrieved, abstracts)
    return QuestionReading(
        question=question,
        claim=claim,
        retrieved=tuple(hit.pmid for hit in read),
        votes=votes,
        seconds=time.perf_counter() - started,
        model_reading=model_reading,
    )


def read_questions(
    questions: Sequence[YesNoQuestion],
    *,
    index: EvaluationIndex,
    embedder: Embedder,
    retrieval: HybridSettings,
    verifier: AnswerVerifier,
    write: Write,
    read_model: AbstractReader | None = None,
) -> list[QuestionReading]:
    readings = []
    for done, question in enumerate(questions, start=1):
        readings.append(
            read_question(
                question, index=index, embedder=embedder, retrieval=retrieval, verifier=verifier, read_model=read_model
            )
        )
        if done % 50 == 0 or done == len(questions):
            write(f"  read {done}/{len(questions)} {questions[0].source} questions")
    return readings


def bottom_line_answer(reading: QuestionReading, rule: BottomLineRule, *, stance: str | None = None) -> str:
    """The bottom line the product would show; Not enough evidence where it would show none (a claim the rewrite
    cannot read, unless the answer LLM's reading decides it alone)."""
    return decide_bottom_line(reading.votes, rule, stance=stance, model_reading=reading.model_reading).answer


@dataclass
class AnsweredQuestion:
    """A question the language model answered as the product does, with both readings of its stance."""

    qid: str
    llm_stance: str  # yes / no / maybe: the answer model's, as the product reads it (its opening word, else a call)
    product_stance: str | None  # yes / no / None: the verifier on the answer's words
    seconds: float
    prompt_tokens: int
    answer: str
    bottom_line_first: str | None = None  # the bottom line the prompt gave the model (None: none was given)
    opening: str | None = None  # the answer's opening "yes" or "no" (generator.answer_model_stance)
    ttft_ms: float | None = None  # from the request to the first token: the prompt's reading, mostly
    tokens_per_s: float | None = None  # the server's writing rate on this answer


def answer_questions(
    readings: Sequence[QuestionReading],
    *,
    index: EvaluationIndex,
    embedder: Embedder,
    llm: LLM,
    counter: TokenCounter,
    generation: GenerationSettings,
    retrieval: HybridSettings,
    verifier: AnswerVerifier,
    write: Write,
    rule: BottomLineRule | None = None,
    kept: KeyedJsonLines | None = None,
    model_name: str = "",
) -> dict[str, AnsweredQuestion]:
    """Each question answered through the product's generation path; a failed answer is reported and left out.
    With `generation.bottom_line_first` (and a `rule`), the prompt gives the model the question's bottom line
    first, as the product does. The answer's stance is the answer model's as the product reads it
    (`answer_model_stance`: its opening "Yes" or "No", else the short call). Answers are `kept` by the model's name,
    the prompt and the sampling: an answer takes 10 to 30 s on two cores, and a run of hundreds resumes where it
    stopped."""
    answered: dict[str, AnsweredQuestion] = {}
    for done, reading in enumerate(readings, start=1):
        question = reading.question
        hits = index_search(question.text, index=index, embedder=embedder, retrieval=retrieval)
        first = bottom_line_answer(reading, rule) if generation.bottom_line_first and rule is not None else None
        packed = answer_prompt(
            question.text,
            hits,
            index=index,
            embedder=embedder,
            counter=counter,
            generation=generation,
            bottom_line=first,
        )
        prompt, sampling = packed.prompt, generation.sampling()
        key = KeyedJsonLines.key(model_name, prompt.style, prompt.messages, prompt.text, sampling.__dict__)
        if (row := kept.get(key) if kept is not None else None) is None:
            try:
                answer = generate_answer(llm, prompt, sampling, given_pmids=[item.pmid for item in packed.abstracts])
                stance = answer_model_stance(llm, question.text, answer.text) or "maybe"
            except Exception as exc:  # one failed answer is reported, not fatal to an hour-long run
                write(f"  {question.qid}: the answer failed ({exc})")
                continue
            row = {
                "text": answer.text,
                "stance": stance,
                "seconds": answer.seconds,
                "ttft_ms": answer.ttft_ms,
                "tokens_per_s": answer.tokens_per_s,
            }
            if kept is not None:
                kept.put(key, row)
        answered[question.qid] = AnsweredQuestion(
            qid=question.qid,
            llm_stance=row["stance"],
            product_stance=answer_stance(verifier, reading.claim, row["text"]) if reading.claim else None,
            seconds=row["seconds"],
            prompt_tokens=packed.prompt_tokens,
            answer=row["text"],
            bottom_line_first=first,
            opening=opening_stance(row["text"]),
            ttft_ms=row["ttft_ms"],
            tokens_per_s=row["tokens_per_s"],
        )
        write(f"  answered {done}/{len(readings)} {question.source} questions ({row['seconds']:.1f} s)")
    return answered


def wilson_interval(right: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion: honest at the tens of questions a dev set has."""
    if n == 0:
        return (0.0, 0.0)
    share = right / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (round(max(0.0, centre - half), 3), round(min(1.0, centre + half), 3))


@dataclass
class SetReport:
    """The figures of one set."""

    name: str
    corpus: str
    readings: list[QuestionReading]
    rule: BottomLineRule
    answered: dict[str, AnsweredQuestion] = field(default_factory=dict)
    probe_tokens_per_s: float | None = None

    def summary(self) -> dict[str, Any]:
        golds = [reading.question.gold for reading in self.readings]
        answers = [bottom_line_answer(reading, self.rule) for reading in self.readings]
        summary: dict[str, Any] = {
            "n": len(self.readings),
            "corpus": self.corpus,
            **_accuracy(answers, golds, GOLD_ANSWERS[self.name]),
            "abstain_rate": _share(answers, NOT_ENOUGH),
            "mixed_rate": _share(answers, "mixed"),
            "no_readable_claim": sum(reading.claim is None for reading in self.readings),
            # The consensus meter's Unclear share: of every abstract voted on, how many the page shows as Unclear.
            "unclear_share": _rate(
                sum(vote.shown == UNCLEAR for reading in self.readings for vote in reading.votes),
                [vote for reading in self.readings for vote in reading.votes],
            ),
            "own_abstract_retrieved": _rate(sum(reading.own_rank is not None for reading in self.readings), golds),
            "own_abstract_first": _rate(sum(reading.own_rank == 0 for reading in self.readings), golds),
            "confusion": _confusion(answers, golds, GOLD_ANSWERS[self.name]),
            "seconds_per_question": round(statistics.fmean(r.seconds for r in self.readings), 3) if golds else None,
        }
        if any(reading.model_reading for reading in self.readings):
            summary["model_reading"] = self._model_reading()
        if self.answered:
            summary["with_llm"] = self._with_llm()
        return summary

    def _model_reading(self) -> dict[str, Any]:
        """The answer LLM's reading of the closest abstract: how often that abstract is the question's own, and the
        reading's side alone under the rule's cut, as a yes / no bottom line would read it (it never says maybe)."""
        read = [reading for reading in self.readings if reading.model_reading is not None]
        golds = [reading.question.gold for reading in self.readings]
        alone = [
            self.rule.model_side(reading.model_reading) if reading.model_reading is not None else NOT_ENOUGH
            for reading in self.readings
        ]
        return {
            "read": len(read),
            "closest_is_own": _rate(
                sum(r.model_reading is not None and r.model_reading.pmid in r.question.own_pmids for r in read), read
            ),
            "says_no": _rate(sum(answer == NO for answer in alone), golds),
            "alone": _accuracy(alone, golds, GOLD_ANSWERS[self.name]),
            # Seconds per question include the reading: they mean nothing without the server's reading rate.
            "probe_tokens_per_s": self.probe_tokens_per_s,
        }

    def _with_llm(self) -> dict[str, Any]:
        """The bottom line and the LLM's stance on the same answered questions."""
        chosen = [reading for reading in self.readings if reading.question.qid in self.answered]
        golds = [reading.question.gold for reading in chosen]
        labels = GOLD_ANSWERS[self.name]
        bottom = [bottom_line_answer(reading, self.rule) for reading in chosen]
        answered = [self.answered[reading.question.qid] for reading in chosen]
        with_stance = [
            bottom_line_answer(reading, self.rule, stance=item.product_stance)
            for reading, item in zip(chosen, answered, strict=True)
        ]
        # The LLM's stance is already yes / no / maybe: read as the gold is.
        llm = [{"yes": "yes", "no": "no"}.get(item.llm_stance, "mixed") for item in answered]
        product = [item.product_stance or "mixed" for item in answered]
        disagree = sum(
            takes_other_side(item.product_stance, answer) for item, answer in zip(answered, with_stance, strict=True)
        )
        # As the reader sees it: the written answer (the LLM's own reading of it) against the bottom line shown.
        llm_disagrees = sum(
            takes_other_side(item.llm_stance, answer) for item, answer in zip(answered, bottom, strict=True)
        )
        given = [item for item in answered if item.bottom_line_first is not None]
        return {
            "n": len(chosen),
            "bottom_line": _accuracy(bottom, golds, labels),
            "bottom_line_with_stance": _accuracy(with_stance, golds, labels),
            "llm_stance": _accuracy(llm, golds, labels),
            "answer_stance_read_by_verifier": _accuracy(product, golds, labels),
            "gain_over_llm_stance": round(
                _accuracy(bottom, golds, labels)["accuracy"] - _accuracy(llm, golds, labels)["accuracy"], 3
            ),
            "answer_contradicts_bottom_line": _rate(disagree, golds),
            "llm_stance_contradicts_bottom_line": _rate(llm_disagrees, golds),
            "bottom_line_first": len(given),
            # What deciding the bottom line first adds before the first token: reading the votes and the closest
            # abstract (`read_question`), per answered question; mean and median in seconds.
            "bottom_line_seconds": _seconds([reading.seconds for reading in chosen]),
            "opening_stance_counts": dict(Counter(str(item.opening) for item in answered)),
            "llm_stance_counts": dict(Counter(item.llm_stance for item in answered)),
            "seconds_per_answer": round(statistics.fmean(item.seconds for item in answered), 2) if answered else None,
            # The answer's own first token and writing rate, beside the probe's reading rate below.
            "answer_ttft_seconds": _seconds([item.ttft_ms / 1000 for item in answered if item.ttft_ms is not None]),
            "answer_tokens_per_s": _seconds([item.tokens_per_s for item in answered if item.tokens_per_s]),
            "prompt_tokens_mean": round(statistics.fmean(item.prompt_tokens for item in answered), 1)
            if answered
            else None,
            "probe_tokens_per_s": self.probe_tokens_per_s,
        }

    def items(self) -> list[dict[str, Any]]:
        """One row per question, for reading the errors."""
        rows = []
        for reading in self.readings:
            item = self.answered.get(reading.question.qid)
            rows.append(
                {
                    "qid": reading.question.qid,
                    "question": reading.question.text,
                    "gold": reading.question.gold,
                    "claim": reading.claim,
                    "bottom_line": bottom_line_answer(reading, self.rule),
                    "own_rank": reading.own_rank,
                    "model_reading": (
                        {"pmid": reading.model_reading.pmid, "log_odds_no": reading.model_reading.log_odds_no}
                        if reading.model_reading
                        else None
                    ),
                    "votes": [
                        {"pmid": vote.pmid, "leaning": vote.leaning, "shown": vote.shown, "p": dict(vote.probabilities)}
                        for vote in reading.votes
                    ],
                    **(
                        {
                            "llm_stance": item.llm_stance,
                            "product_stance": item.product_stance,
                            "bottom_line_first": item.bottom_line_first,
                            "answer": item.answer,
                        }
                        if item
                        else {}
                    ),
                }
            )
        return rows


def _seconds(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "median": None}
    return {"mean": round(statistics.fmean(values), 2), "median": round(statistics.median(values), 2)}


def _share(answers: Sequence[str], answer: str) -> float:
    return round(sum(item == answer for item in answers) / len(answers), 3) if answers else 0.0


def _rate(count: int, items: Sequence[Any]) -> float:
    return round(count / len(items), 3) if items else 0.0


def _accuracy(answers: Sequence[str], golds: Sequence[str], labels: Sequence[str]) -> dict[str, Any]:
    """Accuracy with its interval and macro-F1 over the gold labels, each bottom line read as the gold is."""
    read = [GOLD_READING[answer] for answer in answers]
    right = sum(answer == gold for answer, gold in zip(read, golds, strict=True))
    return {
        "accuracy": _rate(right, golds),
        "accuracy_95ci": list(wilson_interval(right, len(golds))),
        "macro_f1": round(float(f1_score(golds, read, labels=list(labels), average="macro", zero_division=0)), 3)
        if golds
        else 0.0,
    }


def _confusion(answers: Sequence[str], golds: Sequence[str], labels: Sequence[str]) -> dict[str, dict[str, int]]:
    table = {gold: dict.fromkeys(BOTTOM_LINES, 0) for gold in labels}
    for answer, gold in zip(answers, golds, strict=True):
        table.setdefault(gold, dict.fromkeys(BOTTOM_LINES, 0))[answer] += 1
    return table


def answers_report(sets: Sequence[SetReport], *, verifier_model: str, rule: BottomLineRule) -> dict[str, Any]:
    """The JSON `evaluate answers` writes: each set's figures (`pubmedqa.accuracy`, `bioasq.accuracy`), and
    `abstain_rate` over both."""
    summaries = {report.name: report.summary() for report in sets}
    total = sum(summary["n"] for summary in summaries.values())
    abstained = sum(summary["abstain_rate"] * summary["n"] for summary in summaries.values())
    return {
        **summaries,
        "abstain_rate": round(abstained / total, 3) if total else 0.0,
        "verifier": verifier_model,
        "rule": {key: value for key, value in rule.__dict__.items()},
        "items": {report.name: report.items() for report in sets},
    }


def format_answers_table(report: dict[str, Any]) -> str:
    lines = [
        "| set | n | accuracy (95% CI) | macro-F1 | abstain | mixed | no claim | own abstract retrieved "
        "| Unclear votes | s/question |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    names = [name for name in (PUBMEDQA, BIOASQ) if name in report]
    for name in names:
        s = report[name]
        low, high = s["accuracy_95ci"]
        lines.append(
            f"| {name} | {s['n']} | {s['accuracy']} ({low} to {high}) | {s['macro_f1']} | {s['abstain_rate']} | "
            f"{s['mixed_rate']} | {s['no_readable_claim']} | {s['own_abstract_retrieved']} | "
            f"{s.get('unclear_share', '-')} | {s['seconds_per_question']} |"
        )
    for name in names:
        lines += [
            "",
            f"{name}: gold (rows) by bottom line",
            "| gold | " + " | ".join(BOTTOM_LINES) + " |",
            "|---" * 5 + "|",
        ]
        for gold, row in report[name]["confusion"].items():
            lines.append(f"| {gold} | " + " | ".join(str(row[answer]) for answer in BOTTOM_LINES) + " |")
    for name in names:
        if reading := report[name].get("model_reading"):
            lines.append(
                f"\n{name}: the answer LLM read {reading['read']} closest abstracts (the question's own for "
                f"{reading['closest_is_own']}); its reading alone is right on {reading['alone']['accuracy']}; "
                f"the server reads prompts at {reading.get('probe_tokens_per_s')} tokens/s"
            )
    llm_rows = [(name, report[name]["with_llm"]) for name in names if "with_llm" in report[name]]
    if llm_rows:
        lines += [
            "",
            "| set | answered | bottom line first | bottom line | with the answer's stance | "
            "written answer's stance (95% CI) | stance read by the verifier | gain | contradicts it (verifier / LLM) | "
            "s/answer | first token s (median) | tokens/s written (median) | s deciding the bottom line | "
            "probe tokens/s |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, s in llm_rows:
            lines.append(
                f"| {name} | {s['n']} | {s.get('bottom_line_first', 0)} | {s['bottom_line']['accuracy']} | "
                f"{s['bottom_line_with_stance']['accuracy']} | {s['llm_stance']['accuracy']} "
                f"({s['llm_stance']['accuracy_95ci'][0]} to {s['llm_stance']['accuracy_95ci'][1]}) | "
                f"{s['answer_stance_read_by_verifier']['accuracy']} | {s['gain_over_llm_stance']} | "
                f"{s['answer_contradicts_bottom_line']} / {s.get('llm_stance_contradicts_bottom_line')} | "
                f"{s['seconds_per_answer']} | {(s.get('answer_ttft_seconds') or {}).get('median')} | "
                f"{(s.get('answer_tokens_per_s') or {}).get('median')} | "
                f"{(s.get('bottom_line_seconds') or {}).get('median')} | "
                f"{s['probe_tokens_per_s']} |"
            )
    lines.append(f"\nabstain rate overall: {report['abstain_rate']}")
    return "\n".join(lines)


@dataclass(frozen=True)
class AnswerSets:
    """The files of a run: either set alone works."""

    pubmedqa: Path | None = None  # PQA-L ori_pqal.json
    pubmedqa_ids: Path | None = None  # its test_ground_truth.json
    bioasq: Path | None = None  # a benchmark questions file
    corpus: tuple[Path, ...] = ()  # the benchmark corpus files: BioASQ's corpus, PubMedQA's distractors
    pubmedqa_extra: Path | None = None  # PubMedQA-style items outside PQA-L: more corpus, and dev questions


@dataclass(frozen=True)
class AnsweringModel:
    """The language model of a run: it answers the first `answer_limit` questions of each set (0: none), and reads
    each question's closest abstract when the bottom line's rule weighs that reading."""

    endpoint: LLMSettings
    serve: str | None  # a packaged model to serve with llama.cpp for the run; None uses `endpoint`
    model_cache: Path
    generation: GenerationSettings
    answer_limit: int


class KeyedJsonLines:
    """Results that take seconds to compute, kept in a JSON-lines file, one line a result, keyed by a hash of what
    produced it: a run that stops resumes where it stopped, and runs that ask the same thing ask it once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._known: dict[str, dict[str, Any]] = {}
        if path.exists():
            text = path.read_text(encoding="utf-8")
            for line in text.splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short when a run was killed mid-write: computed again
                self._known[row["key"]] = row
            if text and not text.endswith("\n"):
                with path.open("a", encoding="utf-8") as out:
                    out.write("\n")  # end the cut line, so the next result is a line of its own

    @staticmethod
    def key(*parts: Any) -> str:
        return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        return self._known.get(key)

    def put(self, key: str, row: dict[str, Any]) -> None:
        self._known[key] = {"key": key, **row}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(self._known[key]) + "\n")


class ReadingCache:
    """The answer LLM's readings of abstracts (`AbstractReader`), keyed by the model and what it read: a reading
    takes seconds on our machines, and a fit and a test run that read the same abstract for the same question read it
    once."""

    def __init__(self, path: Path, model: str, read: AbstractReader) -> None:
        self.model, self._read = model, read
        self._store = KeyedJsonLines(path)

    def __call__(self, question: str, title: str, abstract: str) -> float:
        key = KeyedJsonLines.key(self.model, question, title, abstract)
        if (known := self._store.get(key)) is None:
            known = {"log_odds_no": self._read(question, title, abstract)}
            self._store.put(key, known)
        return float(known["log_odds_no"])


@contextmanager
def served_for_run(
    model: AnsweringModel | None, *, read: bool, answer: bool, cache_path: Path, write: Write
) -> Iterator[tuple[LLMSettings | None, AbstractReader | None, float | None]]:
    """For the block: the run's language model served when it reads or answers (its settings, its reading of
    abstracts through `ReadingCache`, and the server's prompt-reading rate), or Nones when it does neither."""
    if not (read or answer):
        yield None, None, None
        return
    if model is None:
        raise ValueError("the bottom line's rule weighs the answer LLM's reading: the run needs the language model")
    with served_llm(
        model.serve,
        endpoint=model.endpoint,
        model_cache=model.model_cache,
        n_ctx=model.generation.context_tokens,
        write=write,
    ) as (settings, rate):
        reader = YesNoReader(build_llm(settings), build_token_counter(settings))
        yield (
            settings,
            ReadingCache(cache_path, settings.model, reader.log_odds_no) if read else None,
            rate.tokens_per_s if rate else None,
        )


def set_indexes(
    sets: AnswerSets, *, split: str, index_root: Path, embedder: Embedder, write: Write
) -> list[tuple[str, str, list[YesNoQuestion], EvaluationIndex]]:
    """(set name, corpus description, questions, index) for each set the files give."""
    distractors, _ = read_corpus(sets.corpus) if sets.corpus else ([], 0.0)
    built = []
    if sets.pubmedqa is not None:
        ids = sets.pubmedqa_ids or sets.pubmedqa.with_name("test_ground_truth.json")
        own = pubmedqa_records(sets.pubmedqa)
        extra_records, extra_questions = (
            pubmedqa_extra_items(sets.pubmedqa_extra, sets.pubmedqa) if sets.pubmedqa_extra else ([], [])
        )
        others = [*distractors, *extra_records]
        records = [*others, *own]  # a PQA-L abstract replaces a distractor with the same PMID
        write(f"indexing {len(own):,} PQA-L abstracts and {len(others):,} others (reused when built before)…")
        index = build_evaluation_index(records, index_root / "pubmedqa", embedder)
        corpus = f"{len(index.articles):,} abstracts: PQA-L's {len(own):,} as published and {len(others):,} others"
        questions = pubmedqa_questions(sets.pubmedqa, ids, split=split)
        built.append((PUBMEDQA, corpus, questions + (extra_questions if split == "dev" else []), index))
    if sets.bioasq is not None:
        if not distractors:
            raise ValueError("BioASQ questions need --corpus: the benchmark corpus they are searched in")
        write(f"indexing {len(distractors):,} benchmark abstracts (reused when built before)…")
        index = build_evaluation_index(distractors, index_root / "bioasq", embedder)
        built.append((BIOASQ, f"{len(index.articles):,} benchmark abstracts", bioasq_questions(sets.bioasq), index))
    return built


def evaluate_answers(
    sets: AnswerSets,
    *,
    limit: int | None,
    index_root: Path,
    embedder: Embedder,
    retrieval: HybridSettings,
    verifier: AnswerVerifier,
    verifier_model: str,
    rule: BottomLineRule,
    model: AnsweringModel | None,
    write: Write,
    answers_file: Path | None = None,
) -> dict[str, Any]:
    """`manage.py evaluate answers`: the bottom line on PubMedQA's test split and BioASQ's yes/no questions. The
    answers are kept in `answers_file` (default: beside the indexes), so a long run resumes."""
    reports = []
    answer_limit = model.answer_limit if model is not None else 0
    with served_for_run(
        model,
        read=rule.reads_with_model,
        answer=answer_limit > 0,
        cache_path=index_root / MODEL_READINGS_FILE,
        write=write,
    ) as (settings, read_model, rate):
        for name, corpus, questions, index in set_indexes(
            sets, split="test", index_root=index_root, embedder=embedder, write=write
        ):
            try:
                chosen = evaluation_sample(questions)[:limit]
                readings = read_questions(
                    chosen,
                    index=index,
                    embedder=embedder,
                    retrieval=retrieval,
                    verifier=verifier,
                    write=write,
                    read_model=read_model,
                )
                report = SetReport(name=name, corpus=corpus, readings=readings, rule=rule, probe_tokens_per_s=rate)
                if settings is not None and model is not None and answer_limit > 0:
                    report.answered = answer_questions(
                        readings[:answer_limit],
                        index=index,
                        embedder=embedder,
                        llm=build_llm(settings),
                        counter=build_token_counter(settings),
                        generation=model.generation,
                        retrieval=retrieval,
                        verifier=verifier,
                        write=write,
                        rule=rule,
                        kept=KeyedJsonLines(answers_file or index_root / ANSWERS_FILE),
                        model_name=settings.model,
                    )
                reports.append(report)
            finally:
                index.close()
    return answers_report(reports, verifier_model=verifier_model, rule=rule)
