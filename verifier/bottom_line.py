"""A yes/no question's bottom line (Yes, No, Mixed evidence, Not enough evidence), decided from votes a reader can open.

Every vote is one retrieved abstract: the verifier's verdict on the question's claim form against it (the consensus
meter's inputs, `verifier.consensus`), read one of two ways (`reading`):
- "leaning": the abstract votes yes when the verifier leans SUPPORT, no when it leans CONTRADICT, and abstains when
  it leans NO_EVIDENCE; its strength is the calibrated probability of that leaning.
- "margin": the abstract votes by the sign of p(SUPPORT) - p(CONTRADICT) + `support_shift`, and its strength is the
  size of that margin. The leaning goes through the verifier's own decision rule, whose biases (fitted for the
  answer's sentences, where a missed contradiction costs most) favour CONTRADICT; a yes/no question asks only which
  of the two the abstract is nearer, so the margin reads it without them, the shift fitted on dev instead.
A vote weighs

    rank_decay ** rank  x  relevance ** relevance_power  x  its strength  x  (unclear_weight if shown Unclear)

so on-topic, confidently judged abstracts count most, and a verdict the page shows as Unclear counts only as much as
the fitted `unclear_weight` says. `relevance` is how close the dense search found the abstract to the question,
rescaled over the abstracts read (the closest 1, the farthest 0; `vote_relevance`): a yes/no question is usually
answered by one or two of the ten abstracts, and the rest are on its topic without testing its claim. Rank does not
single that abstract out (retrieval puts BM25 first), the dense score does more often (benchmarks/README.md, "The
bottom line"). A retracted paper never votes. The answer LLM's own stance, when it is
known, adds `stance_weight` to its side, as one more voice that the page names.

Then: too little weight on either side is Not enough evidence; one side's share of the weight at or above
`majority` is Yes or No; anything between is Mixed evidence. The parameters are fitted on dev questions only
(`fit_bottom_line_rule`) and kept beside the verifier checkpoint in `bottom_line.json`, as `decision.json` keeps the
verifier's own rule, so a checkpoint and the rule that reads it travel together.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from indexer.base import Hit
from indexer.hybrid import min_max
from verifier.consensus import Consensus
from verifier.verdicts import CONTRADICT, SUPPORT, UNCLEAR

BOTTOM_LINE_FILE = "bottom_line.json"

YES = "yes"
NO = "no"
MIXED = "mixed"
NOT_ENOUGH = "not_enough"
BOTTOM_LINES = (YES, NO, MIXED, NOT_ENOUGH)
TITLES = {YES: "Yes", NO: "No", MIXED: "Mixed evidence", NOT_ENOUGH: "Not enough evidence"}

# How a three-way gold answer (PubMedQA's yes / no / maybe) reads a bottom line: "maybe" means the paper's own
# conclusion is undecided, which is what Mixed evidence and Not enough evidence both say.
GOLD_READING = {YES: "yes", NO: "no", MIXED: "maybe", NOT_ENOUGH: "maybe"}

_SIDE = {SUPPORT: YES, CONTRADICT: NO}
Sides = tuple[float, float]  # the weight on yes and on no
LEANING = "leaning"
MARGIN = "margin"


@dataclass(frozen=True)
class AbstractVote:
    """What one retrieved abstract contributes; `rank` counts from 0 in retrieval order."""

    pmid: str
    rank: int
    leaning: str  # SUPPORT, CONTRADICT or NO_EVIDENCE: the verifier's label before the Unclear threshold
    shown: str  # what the page shows for it: the leaning, or UNCLEAR
    probabilities: Mapping[str, float]  # calibrated
    retracted: bool = False
    relevance: float = 1.0  # 0..1 among the abstracts read: `vote_relevance`


@dataclass(frozen=True)
class BottomLineRule:
    rank_decay: float = 0.8
    unclear_weight: float = 0.5
    minimum_weight: float = 0.5
    majority: float = 0.7
    stance_weight: float = 0.0
    relevance_power: float = 0.0  # 0: relevance does not weigh (the rules fitted before it existed)
    reading: str = LEANING  # how an abstract takes its side: LEANING or MARGIN (the module says)
    support_shift: float = 0.0  # MARGIN only: added to p(SUPPORT) - p(CONTRADICT)
    fitted_on: tuple[str, ...] = ()  # the dev sets it was chosen on, for the model card and the audit
    dev_accuracy: float | None = None

    def vote_side(self, vote: AbstractVote) -> tuple[str | None, float]:
        """The side `vote` takes (YES, NO, or None when it abstains) and its weight."""
        side, strength = self._reading(vote)
        if vote.retracted or side is None:
            return None, 0.0
        weight = self.rank_decay**vote.rank * strength
        if self.relevance_power:
            weight *= max(vote.relevance, 0.0) ** self.relevance_power
        weight *= self.unclear_weight if vote.shown == UNCLEAR else 1.0
        return (side, weight) if weight > 0.0 else (None, 0.0)

    def _reading(self, vote: AbstractVote) -> tuple[str | None, float]:
        if self.reading == MARGIN:
            margin = (
                float(vote.probabilities.get(SUPPORT, 0.0))
                - float(vote.probabilities.get(CONTRADICT, 0.0))
                + self.support_shift
            )
            return (YES if margin > 0 else NO if margin < 0 else None), abs(margin)
        if self.reading != LEANING:
            raise ValueError(f"unknown bottom line reading {self.reading!r}: {LEANING!r} or {MARGIN!r}")
        return _SIDE.get(vote.leaning), float(vote.probabilities.get(vote.leaning, 0.0))

    def save(self, folder: Path) -> Path:
        path = folder / BOTTOM_LINE_FILE
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        return path


@dataclass(frozen=True)
class BottomLine:
    answer: str  # one of BOTTOM_LINES
    yes_weight: float
    no_weight: float
    yes_pmids: tuple[str, ...]  # the abstracts that vote yes, heaviest first
    no_pmids: tuple[str, ...]
    abstaining: int  # abstracts read that take no side (NO_EVIDENCE leaning)
    retracted_pmids: tuple[str, ...]  # retrieved, read, and kept out of the vote
    stance: str | None  # the answer LLM's stance when it was known: yes / no / None
    weights: dict[str, float] = field(default_factory=dict)  # each voting PMID's weight, rounded

    @property
    def title(self) -> str:
        return TITLES[self.answer]

    @property
    def rests_on(self) -> int:
        """How many abstracts vote: the figure the page states beside the bottom line."""
        return len(self.yes_pmids) + len(self.no_pmids)


def decide_bottom_line(votes: Sequence[AbstractVote], rule: BottomLineRule, *, stance: str | None = None) -> BottomLine:
    """The bottom line of `votes` under `rule`; `stance` is the answer's yes / no, or None when unknown or unclear."""
    tally = _tally(votes, rule)
    yes_weight, no_weight = _with_stance(tally.yes_weight, tally.no_weight, stance, rule.stance_weight)
    weights = tally.weights
    return BottomLine(
        answer=_answer(yes_weight, no_weight, rule),
        yes_weight=yes_weight,
        no_weight=no_weight,
        yes_pmids=tuple(sorted(tally.yes_pmids, key=lambda pmid: -weights[pmid])),
        no_pmids=tuple(sorted(tally.no_pmids, key=lambda pmid: -weights[pmid])),
        abstaining=tally.abstaining,
        retracted_pmids=tally.retracted,
        stance=stance if stance in (YES, NO) else None,
        weights={pmid: round(weight, 4) for pmid, weight in weights.items()},
    )


@dataclass(frozen=True)
class _Tally:
    """The votes as the rule's vote weighting reads them, before the stance and the thresholds."""

    weights: dict[str, float]
    yes_pmids: tuple[str, ...]
    no_pmids: tuple[str, ...]
    abstaining: int
    retracted: tuple[str, ...]

    @property
    def yes_weight(self) -> float:
        return sum(self.weights[pmid] for pmid in self.yes_pmids)

    @property
    def no_weight(self) -> float:
        return sum(self.weights[pmid] for pmid in self.no_pmids)


def _tally(votes: Sequence[AbstractVote], rule: BottomLineRule) -> _Tally:
    weights: dict[str, float] = {}
    sides: dict[str, list[str]] = {YES: [], NO: []}
    retracted: list[str] = []
    abstaining = 0
    for vote in votes:
        if vote.retracted:
            retracted.append(vote.pmid)
            continue
        side, weight = rule.vote_side(vote)
        if side is None:
            abstaining += 1
            continue
        weights[vote.pmid] = weight
        sides[side].append(vote.pmid)
    return _Tally(weights, tuple(sides[YES]), tuple(sides[NO]), abstaining, tuple(retracted))


def _with_stance(yes_weight: float, no_weight: float, stance: str | None, stance_weight: float) -> tuple[float, float]:
    """The two sides' weights with the answer's stance added to its side."""
    if stance == YES:
        yes_weight += stance_weight
    elif stance == NO:
        no_weight += stance_weight
    return yes_weight, no_weight


def _answer(yes_weight: float, no_weight: float, rule: BottomLineRule) -> str:
    total = yes_weight + no_weight
    if total < rule.minimum_weight:
        return NOT_ENOUGH
    if yes_weight / total >= rule.majority:
        return YES
    if no_weight / total >= rule.majority:
        return NO
    return MIXED


def load_bottom_line_rule(folder: Path | str | None) -> BottomLineRule:
    """The rule kept beside a checkpoint, or the defaults above when the checkpoint has none (a checkpoint trained
    before the bottom line existed, or a model id that is not a folder)."""
    if folder is None:
        return BottomLineRule()
    path = Path(folder) / BOTTOM_LINE_FILE
    if not path.exists():
        return BottomLineRule()
    raw = json.loads(path.read_text(encoding="utf-8"))
    known = set(BottomLineRule.__dataclass_fields__)
    values = {key: value for key, value in raw.items() if key in known}
    values["fitted_on"] = tuple(values.get("fitted_on", ()))
    return BottomLineRule(**values)


@dataclass(frozen=True)
class DevQuestion:
    """One dev question for fitting: its votes, the LLM's stance when known, and its gold answer (yes/no/maybe)."""

    votes: tuple[AbstractVote, ...]
    gold: str
    stance: str | None = None
    source: str = ""


# The grid the fit searches: small on purpose, since the dev questions of a kind number in the tens to a hundred or
# so. The steep decays would let the first-ranked abstract outweigh the rest, for PubMedQA's kind of question (one
# relevant abstract, its own); the fits so far have not chosen them, since the own abstract is ranked first for only
# about one PubMedQA question in five (benchmarks/README.md, "The bottom line").
GRID: dict[str, tuple[float, ...]] = {
    "rank_decay": (1.0, 0.8, 0.6, 0.4, 0.2),
    "unclear_weight": (0.0, 0.5, 1.0),
    "minimum_weight": (0.1, 0.25, 0.5, 1.0),
    "majority": (0.5, 0.6, 0.7, 0.8),
    "stance_weight": (0.0, 0.25, 0.5, 1.0),
    "relevance_power": (0.0, 1.0, 2.0, 4.0),
}
# How a vote takes its side, with the shift a MARGIN reading adds (a LEANING reading has none).
READINGS: tuple[tuple[str, float], ...] = (
    (LEANING, 0.0),
    (MARGIN, -0.1),
    (MARGIN, 0.0),
    (MARGIN, 0.1),
    (MARGIN, 0.2),
)


def bottom_line_correct(answer: str, gold: str) -> bool:
    return GOLD_READING[answer] == gold


def fit_bottom_line_rule(
    questions: Sequence[DevQuestion],
    *,
    fitted_on: Sequence[str],
    source_weights: Mapping[str, float] | None = None,
    with_stance: bool = True,
) -> BottomLineRule:
    """The grid point with the best weighted mean of the dev sources' accuracies (`source_weights`, equal when
    None: a large set of one kind of question must not decide alone); ties go to the earlier grid point.

    Each way of weighing votes (reading, decay, Unclear weight, relevance power) is tallied once per question, and
    the stance and thresholds (minimum weight, majority), which only read the two sides' totals, are scored over
    that tally: the same scores as deciding every grid point afresh, 64 times fewer tallies."""
    weights = _resolved_weights(questions, source_weights)
    stance_grid = GRID["stance_weight"] if with_stance else (0.0,)
    by_source = _by_source(questions, weights)
    tallied: dict[tuple[tuple[str, float], float, float, float], tuple[BottomLineRule, dict[str, list[Sides]]]] = {}
    for (reading, shift), decay, unclear, relevance_power in itertools.product(
        READINGS, GRID["rank_decay"], GRID["unclear_weight"], GRID["relevance_power"]
    ):
        weighing = BottomLineRule(
            reading=reading,
            support_shift=shift,
            rank_decay=decay,
            unclear_weight=unclear,
            relevance_power=relevance_power,
        )
        tallied[(reading, shift), decay, unclear, relevance_power] = weighing, _sides(by_source, weighing)
    best: tuple[float, BottomLineRule] | None = None
    for (reading, shift), decay, unclear, minimum, majority, stance_weight, relevance_power in itertools.product(
        READINGS,
        GRID["rank_decay"],
        GRID["unclear_weight"],
        GRID["minimum_weight"],
        GRID["majority"],
        stance_grid,
        GRID["relevance_power"],
    ):
        weighing, sides = tallied[(reading, shift), decay, unclear, relevance_power]
        rule = replace(weighing, minimum_weight=minimum, majority=majority, stance_weight=stance_weight)
        score = _weighted_score(by_source, sides, rule, weights)
        if best is None or score > best[0] + 1e-12:
            best = (score, rule)
    assert best is not None
    score, rule = best
    return BottomLineRule(
        **{**asdict(rule), "fitted_on": tuple(fitted_on), "dev_accuracy": round(score, 4)},
    )


def _weighted_score(
    by_source: Mapping[str, Sequence[DevQuestion]],
    sides: Mapping[str, Sequence[Sides]],
    rule: BottomLineRule,
    weights: Mapping[str, float],
) -> float:
    """The sources' accuracies under `rule`, weighted, from tallies made already: `sides` holds each question's
    (yes, no) weights under the rule's vote weighting."""
    total = 0.0
    for source, weight in weights.items():
        right = 0
        for question, (yes_weight, no_weight) in zip(by_source[source], sides[source], strict=True):
            answer = _answer(*_with_stance(yes_weight, no_weight, question.stance, rule.stance_weight), rule)
            right += bottom_line_correct(answer, question.gold)
        total += weight * right / len(by_source[source])
    return total / sum(weights.values())


def weighted_accuracy(
    questions: Sequence[DevQuestion], rule: BottomLineRule, source_weights: Mapping[str, float] | None = None
) -> float:
    """`rule`'s accuracy on dev questions as the fit scores it: the sources' accuracies, weighted."""
    weights = _resolved_weights(questions, source_weights)
    by_source = _by_source(questions, weights)
    return _weighted_score(by_source, _sides(by_source, rule), rule, weights)


def _by_source(questions: Sequence[DevQuestion], weights: Mapping[str, float]) -> dict[str, list[DevQuestion]]:
    return {source: [q for q in questions if q.source == source] for source in weights}


def _sides(by_source: Mapping[str, Sequence[DevQuestion]], rule: BottomLineRule) -> dict[str, list[Sides]]:
    """Each question's (yes, no) weights under `rule`'s vote weighting, before the stance."""
    return {
        source: [(t.yes_weight, t.no_weight) for t in (_tally(q.votes, rule) for q in chosen)]
        for source, chosen in by_source.items()
    }


def _resolved_weights(questions: Sequence[DevQuestion], source_weights: Mapping[str, float] | None) -> dict[str, float]:
    """Each source present among `questions` with its weight: equal when None, 0 for a source the mapping omits."""
    if not questions:
        raise ValueError("no dev questions to fit the bottom line on")
    sources = sorted({question.source for question in questions})
    weights = {source: (source_weights or {}).get(source, 0.0 if source_weights else 1.0) for source in sources}
    if sum(weights.values()) <= 0:
        raise ValueError(f"the source weights {source_weights} give no dev source any weight")
    return weights


def vote_relevance(semantic_scores: Mapping[str, float | None]) -> dict[str, float]:
    """Each abstract's relevance for its vote: its dense-search score (`FusedHit.semantic_score`; None or 0 when the
    dense leg did not return it) rescaled over the abstracts read, so the closest is 1 and the farthest 0. One
    abstract, or all scored alike, are all 1: nothing sets them apart."""
    return min_max([Hit(pmid=pmid, score=float(score or 0.0)) for pmid, score in semantic_scores.items()])


def consensus_votes(
    consensus: Consensus, *, retracted: Collection[str] = (), relevance: Mapping[str, float] | None = None
) -> list[AbstractVote]:
    """The votes of a consensus's abstracts, ranked in retrieval order; PMIDs in `retracted` are kept from voting.
    `relevance` (`vote_relevance`) weighs each vote as the rule says; an abstract it does not name counts fully."""
    return [
        AbstractVote(
            pmid=verdict.pmid,
            rank=rank,
            leaning=verdict.leaning,
            shown=verdict.label,
            probabilities=verdict.probabilities,
            retracted=verdict.pmid in retracted,
            relevance=(relevance or {}).get(verdict.pmid, 1.0),
        )
        for rank, verdict in enumerate(consensus.verdicts)
    ]
