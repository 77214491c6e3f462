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
single that abstract out (retrieval puts BM25 first), the dense score does more often (benchmarks/HISTORY.md, "The
bottom line"). A retracted paper never votes. The answer LLM's own stance, when it is
known, adds `stance_weight` to its side, as one more voice that the page names.

One more voice reads the abstract the dense search finds closest with the answer LLM itself (`ModelReading`,
`generator.yes_no_reading`): the log-odds of "no" over "yes" for its first answer token. It takes the "no" side when
those log-odds pass `model_cut` and "yes" otherwise, and weighs `model_weight`. The LLM answers Yes to nearly every
PubMedQA question whatever the abstract says, but its odds order the "no" questions above the "yes" ones (ROC AUC on
the own abstract in benchmarks/HISTORY.md), so the cut, fitted on dev, is what reads it; the verifier's
readings of the ten abstracts, weighed as above, stay the votes beside it. A question asked yes or no whose claim
the rewrite cannot read has no votes (no claim to check), but the LLM reads the question itself: there its reading
alone decides, from the retrieved abstracts' relevance (`retrieved_abstracts`).

Then: too little weight on either side is Not enough evidence; one side's share of the weight at or above
`majority` is Yes or No; anything between is Mixed evidence. The parameters are fitted on dev questions only
(`fit_bottom_line_rule`) and kept beside the verifier checkpoint in `bottom_line.json`, as `decision.json` keeps the
verifier's own rule, so a checkpoint and the rule that reads it travel together.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from indexer.base import Hit
from indexer.hybrid import min_max
from verifier.consensus import Consensus
from verifier.verdicts import CONTRADICT, SUPPORT, UNCLEAR
from verifier.verify import CitedAbstract

BOTTOM_LINE_FILE = "bottom_line.json"

YES = "yes"
NO = "no"
MIXED = "mixed"
NOT_ENOUGH = "not_enough"
BOTTOM_LINES = (YES, NO, MIXED, NOT_ENOUGH)
SIDES = (YES, NO)  # the sides a voice takes
OTHER_SIDE = {YES: NO, NO: YES}
TITLES = {YES: "Yes", NO: "No", MIXED: "Mixed evidence", NOT_ENOUGH: "Not enough evidence"}

# How a three-way gold answer (PubMedQA's yes / no / maybe) reads a bottom line: "maybe" means the paper's own
# conclusion is undecided, which is what Mixed evidence and Not enough evidence both say.
GOLD_READING = {YES: "yes", NO: "no", MIXED: "maybe", NOT_ENOUGH: "maybe"}

_SIDE = {SUPPORT: YES, CONTRADICT: NO}
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
class ModelReading:
    """The answer LLM's reading of one abstract (`closest_pmid`'s): log p(no) - log p(yes) of its first answer token."""

    pmid: str
    log_odds_no: float


# How the answer LLM reads an abstract: (question, title, abstract) -> log p(no) - log p(yes) of its first answer token
# (`generator.yes_no_reading.YesNoReader.log_odds_no`).
AbstractReader = Callable[[str, str, str], float]


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
    model_weight: float = 0.0  # the answer LLM's reading of the closest abstract (0: not asked, `reads_with_model`)
    model_cut: float = 0.0  # it says "no" when its log-odds of no over yes pass this
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

    @property
    def reads_with_model(self) -> bool:
        """Whether the answer LLM's reading weighs: when it does not, the product does not ask for it."""
        return self.model_weight > 0.0

    def model_side(self, reading: ModelReading) -> str:
        return NO if reading.log_odds_no > self.model_cut else YES

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
    model_reading: ModelReading | None = None  # the answer LLM's reading, when the rule weighs it and it was read
    model_side: str | None = None  # the side that reading took: yes / no

    @property
    def title(self) -> str:
        return TITLES[self.answer]

    @property
    def rests_on(self) -> int:
        """How many abstracts vote: the figure the page states beside the bottom line."""
        return len(self.yes_pmids) + len(self.no_pmids)


def takes_other_side(stance: str | None, answer: str) -> bool:
    """Whether a stance (yes / no / anything else) says the opposite of a Yes or No bottom line `answer`."""
    return stance is not None and OTHER_SIDE.get(answer) == stance


def decide_bottom_line(
    votes: Sequence[AbstractVote],
    rule: BottomLineRule,
    *,
    stance: str | None = None,
    model_reading: ModelReading | None = None,
) -> BottomLine:
    """The bottom line of `votes` under `rule`; `stance` is the answer's yes / no, or None when unknown or unclear;
    `model_reading` the answer LLM's reading of the closest abstract, None when not read (it then does not vote)."""
    tally = _tally(votes, rule)
    yes_weight, no_weight = _with_stance(tally.yes_weight, tally.no_weight, stance, rule.stance_weight)
    if not rule.reads_with_model:
        model_reading = None
    model_side = rule.model_side(model_reading) if model_reading is not None else None
    yes_weight, no_weight = _with_stance(yes_weight, no_weight, model_side, rule.model_weight)
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
        model_reading=model_reading,
        model_side=model_side,
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
    """The two sides' weights with a voice's weight added to its side (the answer's stance, the LLM's reading)."""
    if stance == YES:
        yes_weight += stance_weight
    elif stance == NO:
        no_weight += stance_weight
    return yes_weight, no_weight


def _answer(yes_weight: float, no_weight: float, rule: BottomLineRule) -> str:
    total = yes_weight + no_weight
    if total <= 0 or total < rule.minimum_weight:
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
    model_reading: ModelReading | None = None


# The grid the fit searches: small on purpose, since the dev questions of a kind number in the tens to a hundred or
# so. The steep decays would let the first-ranked abstract outweigh the rest, for PubMedQA's kind of question (one
# relevant abstract, its own); the fits so far have not chosen them, since the own abstract is ranked first for only
# about one PubMedQA question in five (benchmarks/HISTORY.md, "The bottom line").
GRID: dict[str, tuple[float, ...]] = {
    "rank_decay": (1.0, 0.8, 0.6, 0.4, 0.2),
    "unclear_weight": (0.0, 0.5, 1.0),
    "minimum_weight": (0.1, 0.25, 0.5, 1.0),
    "majority": (0.5, 0.6, 0.7, 0.8),
    "stance_weight": (0.0, 0.25, 0.5, 1.0),
    "relevance_power": (0.0, 1.0, 2.0, 4.0),
    "model_weight": (0.0, 0.5, 1.0, 2.0, 4.0),
}
# Where the LLM's reading turns from yes to no, in log-odds of no over yes: it leans yes on nearly every question, so
# the cuts reach far below 0.
MODEL_CUTS: tuple[float, ...] = (-6.0, -5.0, -4.5, -4.0, -3.5, -3.0, -2.5, -2.0, -1.5, -1.0, 0.0)
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
    None: a large set of one kind of question must not decide alone); ties go to the earlier grid point, in the
    order of `_grid_points`. The LLM's reading is searched only when some dev question has one.

    Each way of weighing votes (reading, decay, Unclear weight, relevance power) is tallied once per question, and
    the voices and thresholds, which only read the two sides' totals, are scored over that tally, all thresholds at
    once: the same scores as deciding every grid point afresh."""
    weights = _resolved_weights(questions, source_weights)
    by_source = _by_source(questions, weights)
    with_model = any(question.model_reading is not None for question in questions)
    stance_grid = GRID["stance_weight"] if with_stance else (0.0,)
    voices = (
        [(0.0, 0.0)]
        if not with_model
        else [(0.0, 0.0)] + [(weight, cut) for weight in GRID["model_weight"] if weight > 0 for cut in MODEL_CUTS]
    )
    scores: dict[tuple[float, ...], float] = {}
    for (reading, shift), decay, unclear, power in itertools.product(
        READINGS, GRID["rank_decay"], GRID["unclear_weight"], GRID["relevance_power"]
    ):
        weighing = BottomLineRule(
            reading=reading, support_shift=shift, rank_decay=decay, unclear_weight=unclear, relevance_power=power
        )
        tallies = _source_tallies(by_source, weighing)
        for stance_weight, (model_weight, cut) in itertools.product(stance_grid, voices):
            voiced = replace(weighing, stance_weight=stance_weight, model_weight=model_weight, model_cut=cut)
            grid = _scores_over_thresholds(tallies, voiced, weights)
            key = _reading_key(reading, shift)
            for (minimum, majority), score in grid.items():
                scores[key, decay, unclear, minimum, majority, stance_weight, power, model_weight, cut] = score
    best: tuple[float, tuple[float, ...]] | None = None
    for point in _grid_points(stance_grid, voices):
        score = scores[point]
        if best is None or score > best[0] + 1e-12:
            best = (score, point)
    assert best is not None
    score, (reading_key, decay, unclear, minimum, majority, stance_weight, power, model_weight, cut) = best
    reading, shift = READINGS[int(reading_key)]
    return BottomLineRule(
        reading=reading, support_shift=shift, rank_decay=decay, unclear_weight=unclear, minimum_weight=minimum,
        majority=majority, stance_weight=stance_weight, relevance_power=power, model_weight=model_weight,
        model_cut=cut, fitted_on=tuple(fitted_on), dev_accuracy=round(score, 4),
    )  # fmt: skip


def _reading_key(reading: str, shift: float) -> float:
    """A reading's position in READINGS, as a float so grid points are tuples of one type."""
    return float(READINGS.index((reading, shift)))


def _grid_points(stance_grid: Sequence[float], voices: Sequence[tuple[float, float]]) -> Iterator[tuple[float, ...]]:
    """The grid in the order its ties are broken: reading, decay, Unclear weight, minimum, majority, stance,
    relevance power, then the LLM's reading (none first)."""
    for reading_index, decay, unclear, minimum, majority, stance_weight, power, (
        model_weight,
        cut,
    ) in itertools.product(
        range(len(READINGS)),
        GRID["rank_decay"],
        GRID["unclear_weight"],
        GRID["minimum_weight"],
        GRID["majority"],
        stance_grid,
        GRID["relevance_power"],
        voices,
    ):
        yield float(reading_index), decay, unclear, minimum, majority, stance_weight, power, model_weight, cut


@dataclass(frozen=True)
class _SourceTallies:
    """One dev source's questions as arrays: the two sides' weights under a vote weighting, the voices, the gold."""

    yes: np.ndarray
    no: np.ndarray
    stance_yes: np.ndarray  # 1.0 where the answer's stance is yes
    stance_no: np.ndarray
    model_log_odds: np.ndarray  # nan where the LLM did not read
    gold: np.ndarray  # the gold answers, as GOLD_READING spells them


def _source_tallies(by_source: Mapping[str, Sequence[DevQuestion]], rule: BottomLineRule) -> dict[str, _SourceTallies]:
    tallies = {}
    for source, questions in by_source.items():
        sides = [_tally(question.votes, rule) for question in questions]
        tallies[source] = _SourceTallies(
            yes=np.array([tally.yes_weight for tally in sides], dtype=float),
            no=np.array([tally.no_weight for tally in sides], dtype=float),
            stance_yes=np.array([question.stance == YES for question in questions], dtype=float),
            stance_no=np.array([question.stance == NO for question in questions], dtype=float),
            model_log_odds=np.array(
                [q.model_reading.log_odds_no if q.model_reading else math.nan for q in questions], dtype=float
            ),
            gold=np.array([question.gold for question in questions]),
        )
    return tallies


def _scores_over_thresholds(
    tallies: Mapping[str, _SourceTallies],
    rule: BottomLineRule,
    weights: Mapping[str, float],
    thresholds: tuple[Sequence[float], Sequence[float]] | None = None,
) -> dict[tuple[float, float], float]:
    """The weighted score of `rule`'s vote weighting and voices at every (minimum weight, majority) of `thresholds`
    (the grid's when None), computed as `decide_bottom_line` decides: the same sums in the same order, so ties fall
    alike."""
    minimum_values, majority_values = thresholds or (GRID["minimum_weight"], GRID["majority"])
    minimums = np.array(minimum_values, dtype=float)[:, None, None]
    majorities = np.array(majority_values, dtype=float)[None, :, None]
    total_score = np.zeros((len(minimum_values), len(majority_values)))
    for source, weight in weights.items():
        tally = tallies[source]
        read = ~np.isnan(tally.model_log_odds)
        says_no = read & (np.nan_to_num(tally.model_log_odds, nan=-math.inf) > rule.model_cut)
        model_weight = rule.model_weight if rule.reads_with_model else 0.0
        yes = tally.yes + rule.stance_weight * tally.stance_yes + model_weight * (read & ~says_no)
        no = tally.no + rule.stance_weight * tally.stance_no + model_weight * says_no
        total = yes + no
        with np.errstate(divide="ignore", invalid="ignore"):
            yes_share, no_share = yes / total, no / total
        enough = total[None, None, :] >= minimums
        says_yes = enough & (yes_share[None, None, :] >= majorities)
        says_no_line = enough & ~says_yes & (no_share[None, None, :] >= majorities)
        undecided = ~says_yes & ~says_no_line  # Mixed or Not enough: both read as "maybe"
        right = (says_yes & (tally.gold == "yes")) | (says_no_line & (tally.gold == "no"))
        right |= undecided & (tally.gold == "maybe")
        total_score += weight * right.sum(axis=2) / len(tally.gold)
    total_score /= sum(weights.values())
    return {
        (minimum, majority): float(total_score[i, j])
        for i, minimum in enumerate(minimum_values)
        for j, majority in enumerate(majority_values)
    }


def weighted_accuracy(
    questions: Sequence[DevQuestion], rule: BottomLineRule, source_weights: Mapping[str, float] | None = None
) -> float:
    """`rule`'s accuracy on dev questions as the fit scores it: the sources' accuracies, weighted."""
    weights = _resolved_weights(questions, source_weights)
    tallies = _source_tallies(_by_source(questions, weights), rule)
    thresholds = ((rule.minimum_weight,), (rule.majority,))
    return _scores_over_thresholds(tallies, rule, weights, thresholds)[rule.minimum_weight, rule.majority]


def _by_source(questions: Sequence[DevQuestion], weights: Mapping[str, float]) -> dict[str, list[DevQuestion]]:
    return {source: [q for q in questions if q.source == source] for source in weights}


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


class Retrieved(Protocol):
    """What choosing the abstract the answer LLM reads needs of a retrieved one (an `AbstractVote` has it)."""

    @property
    def pmid(self) -> str: ...
    @property
    def rank(self) -> int: ...
    @property
    def relevance(self) -> float: ...
    @property
    def retracted(self) -> bool: ...


@dataclass(frozen=True)
class RetrievedAbstract:
    """A retrieved abstract the verifier did not read. A question asked yes or no whose claim the rewrite cannot
    read gets no votes, but the answer LLM reads the question itself, so it can still read the closest abstract."""

    pmid: str
    rank: int
    relevance: float = 1.0
    retracted: bool = False


def retrieved_abstracts(
    pmids: Sequence[str], *, relevance: Mapping[str, float], retracted: Collection[str] = ()
) -> list[RetrievedAbstract]:
    """`pmids` in retrieval order as `RetrievedAbstract`s, with `vote_relevance`'s relevance."""
    return [
        RetrievedAbstract(pmid=pmid, rank=rank, relevance=relevance.get(pmid, 1.0), retracted=pmid in retracted)
        for rank, pmid in enumerate(pmids)
    ]


def closest_pmid(retrieved: Sequence[Retrieved]) -> str | None:
    """The abstract the answer LLM reads for the bottom line: the one the dense search found closest to the question
    among those read, the earlier ranked on a tie; a retracted paper is never read. None when nothing is left to
    read. Since the consensus reads the dense leg's closest candidate too (`verifier.consensus.pmids_to_read`), it is
    the question's own abstract for most PubMedQA-kind dev questions, more often than the closest among the first ten
    fused alone, and far more often than the first-ranked (benchmarks/HISTORY.md, "The bottom line")."""
    readable = [abstract for abstract in retrieved if not abstract.retracted]
    if not readable:
        return None
    return max(readable, key=lambda abstract: (abstract.relevance, -abstract.rank)).pmid


def read_closest_abstract(
    read: AbstractReader, question: str, retrieved: Sequence[Retrieved], abstracts: Sequence[CitedAbstract]
) -> ModelReading | None:
    """The answer LLM's reading of the closest abstract among `retrieved` (`closest_pmid`: the votes, or the
    `RetrievedAbstract`s of a question without votes), its text from `abstracts`. None when none is left to read."""
    pmid = closest_pmid(retrieved)
    if pmid is None:
        return None
    closest = next(abstract for abstract in abstracts if abstract.pmid == pmid)
    return ModelReading(pmid=pmid, log_odds_no=read(question, closest.title, closest.abstract))
