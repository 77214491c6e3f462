"""The bottom line rule: how abstracts vote, when it says Yes, No, Mixed or Not enough, and how it is fitted."""

from __future__ import annotations

import itertools
import random
from dataclasses import asdict, replace

import pytest

from verifier import bottom_line
from verifier.bottom_line import (
    GOLD_READING,
    LEANING,
    MARGIN,
    MIXED,
    NO,
    NOT_ENOUGH,
    YES,
    AbstractVote,
    BottomLineRule,
    DevQuestion,
    ModelReading,
    bottom_line_correct,
    closest_pmid,
    decide_bottom_line,
    fit_bottom_line_rule,
    load_bottom_line_rule,
    read_closest_abstract,
    retrieved_abstracts,
    vote_relevance,
    weighted_accuracy,
)
from verifier.verdicts import CONTRADICT, NO_EVIDENCE, SUPPORT, UNCLEAR
from verifier.verify import CitedAbstract

# No rank decay and a plain majority, so each test reads the arithmetic directly.
FLAT = BottomLineRule(rank_decay=1.0, unclear_weight=0.5, minimum_weight=0.5, majority=0.7)


def vote(
    pmid: str,
    leaning: str,
    p: float,
    *,
    rank: int = 0,
    unclear: bool = False,
    retracted: bool = False,
    relevance: float = 1.0,
):
    rest = (1.0 - p) / 2
    probabilities = {label: (p if label == leaning else rest) for label in (SUPPORT, CONTRADICT, NO_EVIDENCE)}
    return AbstractVote(
        pmid=pmid,
        rank=rank,
        leaning=leaning,
        shown=UNCLEAR if unclear else leaning,
        probabilities=probabilities,
        retracted=retracted,
        relevance=relevance,
    )


def test_supporting_abstracts_make_a_yes_and_name_the_voters_heaviest_first():
    line = decide_bottom_line(
        [vote("1", SUPPORT, 0.6), vote("2", SUPPORT, 0.9, rank=1), vote("3", NO_EVIDENCE, 0.9, rank=2)], FLAT
    )
    assert line.answer == YES
    assert line.yes_pmids == ("2", "1")
    assert line.no_pmids == ()
    assert line.abstaining == 1
    assert line.rests_on == 2
    assert line.yes_weight == pytest.approx(1.5)


def test_contradicting_abstracts_make_a_no():
    line = decide_bottom_line([vote("1", CONTRADICT, 0.8), vote("2", CONTRADICT, 0.7, rank=1)], FLAT)
    assert (line.answer, line.no_pmids) == (NO, ("1", "2"))


def test_a_split_vote_is_mixed_evidence():
    line = decide_bottom_line([vote("1", SUPPORT, 0.8), vote("2", CONTRADICT, 0.8, rank=1)], FLAT)
    assert line.answer == MIXED
    assert line.title == "Mixed evidence"


def test_too_little_weight_is_not_enough_evidence():
    assert decide_bottom_line([vote("1", SUPPORT, 0.4)], FLAT).answer == NOT_ENOUGH
    assert decide_bottom_line([vote("1", NO_EVIDENCE, 0.99)], FLAT).answer == NOT_ENOUGH
    assert decide_bottom_line([], FLAT).answer == NOT_ENOUGH


def test_a_retracted_paper_never_votes_however_strongly_it_reads():
    votes = [vote("9", CONTRADICT, 0.99, retracted=True), vote("1", SUPPORT, 0.8, rank=1)]
    line = decide_bottom_line(votes, FLAT)
    assert line.answer == YES
    assert line.retracted_pmids == ("9",)
    assert "9" not in line.no_pmids + line.yes_pmids
    assert line.no_weight == 0.0
    assert "9" not in line.weights


def test_an_unclear_verdict_counts_at_the_fitted_weight():
    unclear = [vote("1", SUPPORT, 0.6, unclear=True)]
    assert decide_bottom_line(unclear, FLAT).yes_weight == pytest.approx(0.3)
    silenced = BottomLineRule(rank_decay=1.0, unclear_weight=0.0, minimum_weight=0.1, majority=0.7)
    line = decide_bottom_line(unclear, silenced)
    assert (line.answer, line.abstaining) == (NOT_ENOUGH, 1)


def test_lower_ranked_abstracts_weigh_less():
    decaying = BottomLineRule(rank_decay=0.5, unclear_weight=1.0, minimum_weight=0.1, majority=0.6)
    # Equal confidence; the first-ranked supports, the third contradicts: 0.9 against 0.9 * 0.25.
    line = decide_bottom_line([vote("1", SUPPORT, 0.9), vote("3", CONTRADICT, 0.9, rank=2)], decaying)
    assert line.answer == YES
    assert line.weights == {"1": 0.9, "3": 0.225}


def test_an_off_topic_abstract_weighs_by_the_fitted_power_of_its_relevance():
    # The on-topic abstract supports, less surely than two off-topic ones contradict.
    votes = [
        vote("own", SUPPORT, 0.7, relevance=1.0),
        vote("far", CONTRADICT, 0.9, rank=1, relevance=0.2),
        vote("farther", CONTRADICT, 0.9, rank=2, relevance=0.0),
    ]
    assert decide_bottom_line(votes, FLAT).answer == NO, "without relevance the two off-topic votes win"
    relevant = BottomLineRule(rank_decay=1.0, unclear_weight=1.0, minimum_weight=0.1, majority=0.6, relevance_power=2)
    line = decide_bottom_line(votes, relevant)
    assert line.answer == YES
    assert line.weights == {"own": 0.7, "far": pytest.approx(0.036)}
    assert (line.no_pmids, line.abstaining) == (("far",), 1), "relevance 0 takes no side"


def test_vote_relevance_rescales_the_dense_scores_over_the_abstracts_read():
    assert vote_relevance({"a": 0.9, "b": 0.5, "c": 0.7}) == pytest.approx({"a": 1.0, "b": 0.0, "c": 0.5})
    assert vote_relevance({"a": 0.8, "b": None}) == {"a": 1.0, "b": 0.0}, "missed by the dense leg: the least"
    assert vote_relevance({"a": 0.4, "b": 0.4}) == {"a": 1.0, "b": 1.0}, "nothing sets them apart"
    assert vote_relevance({"a": 0.0}) == {"a": 1.0}
    assert vote_relevance({}) == {}


def test_the_fit_weighs_by_relevance_when_the_dev_questions_call_for_it():
    # Each yes question's one relevant abstract supports; two off-topic ones contradict more surely. Only a rule
    # that weighs relevance answers yes, and the maybe questions (no side taken by anything) still abstain.
    votes = [
        vote("own", SUPPORT, 0.8, rank=2, relevance=1.0),
        vote("x", CONTRADICT, 0.9, relevance=0.1),
        vote("y", CONTRADICT, 0.9, rank=1, relevance=0.0),
    ]
    dev = _dev("a", "yes", votes, copies=3) + _dev("a", "maybe", [], copies=2)
    rule = fit_bottom_line_rule(dev, fitted_on=["a dev (5)"], with_stance=False)
    assert rule.relevance_power > 0
    assert rule.dev_accuracy == 1.0


def _read(leaning: str, support: float, contradict: float, *, pmid: str = "1", rank: int = 0) -> AbstractVote:
    probabilities = {SUPPORT: support, CONTRADICT: contradict, NO_EVIDENCE: 1.0 - support - contradict}
    return AbstractVote(pmid=pmid, rank=rank, leaning=leaning, shown=leaning, probabilities=probabilities)


def test_a_margin_reading_votes_for_whichever_of_support_and_contradict_is_nearer():
    margin = BottomLineRule(rank_decay=1.0, unclear_weight=1.0, minimum_weight=0.01, majority=0.5, reading=MARGIN)
    # The verifier's own rule leaned CONTRADICT (its bias), though SUPPORT is the likelier of the two.
    biased = _read(CONTRADICT, 0.45, 0.40)
    assert decide_bottom_line([biased], FLAT).answer in (NO, NOT_ENOUGH)
    line = decide_bottom_line([biased], margin)
    assert line.answer == YES
    assert line.weights == {"1": pytest.approx(0.05)}
    # A NO_EVIDENCE leaning still says which side it is nearer; the leaning reading has it abstain.
    silent = _read(NO_EVIDENCE, 0.1, 0.3)
    assert decide_bottom_line([silent], margin).answer == NO
    assert decide_bottom_line([silent], FLAT).abstaining == 1
    # The fitted shift moves the boundary: +0.2 turns a 0.1 lead of CONTRADICT into a vote for yes.
    shifted = replace(margin, support_shift=0.2)
    behind = _read(NO_EVIDENCE, 0.2, 0.3)
    assert decide_bottom_line([behind], margin).answer == NO
    assert decide_bottom_line([behind], shifted).weights == {"1": pytest.approx(0.1)}
    assert decide_bottom_line([behind], shifted).answer == YES
    # Exactly level takes no side.
    assert decide_bottom_line([_read(NO_EVIDENCE, 0.25, 0.25)], margin).abstaining == 1


def test_an_unknown_reading_is_refused():
    with pytest.raises(ValueError, match="unknown bottom line reading"):
        decide_bottom_line([vote("1", SUPPORT, 0.9)], BottomLineRule(reading="vibes"))


def test_the_fit_reads_by_margin_when_the_dev_questions_call_for_it():
    # Yes questions whose abstract the verifier's rule leaned CONTRADICT while SUPPORT was likelier; no questions
    # with CONTRADICT far likelier. Only the margin reading answers both.
    yes_votes = [_read(CONTRADICT, 0.46, 0.44)]
    no_votes = [_read(CONTRADICT, 0.1, 0.8)]
    dev = _dev("y", "yes", yes_votes, copies=3) + _dev("n", "no", no_votes, copies=3)
    rule = fit_bottom_line_rule(dev, fitted_on=["y", "n"], with_stance=False)
    assert rule.reading == MARGIN
    assert rule.dev_accuracy == 1.0


def test_the_answers_stance_adds_its_weight_to_its_side():
    rule = BottomLineRule(rank_decay=1.0, unclear_weight=1.0, minimum_weight=0.5, majority=0.7, stance_weight=1.0)
    votes = [vote("1", SUPPORT, 0.6)]
    assert decide_bottom_line(votes, rule, stance=NO).answer == MIXED
    assert decide_bottom_line(votes, rule, stance=YES).answer == YES
    assert decide_bottom_line(votes, rule, stance=None).stance is None
    # A rule fitted without the stance ignores it.
    assert decide_bottom_line(votes, FLAT, stance=NO).answer == YES


def test_maybe_is_read_as_mixed_or_not_enough_evidence():
    assert GOLD_READING == {YES: "yes", NO: "no", MIXED: "maybe", NOT_ENOUGH: "maybe"}
    assert bottom_line_correct(MIXED, "maybe")
    assert bottom_line_correct(NOT_ENOUGH, "maybe")
    assert not bottom_line_correct(NOT_ENOUGH, "yes")
    assert not bottom_line_correct(YES, "maybe")


def test_the_rule_travels_beside_the_checkpoint(tmp_path):
    assert load_bottom_line_rule(tmp_path) == BottomLineRule()  # a checkpoint from before the bottom line
    assert load_bottom_line_rule(None) == BottomLineRule()
    fitted = BottomLineRule(
        rank_decay=0.6,
        majority=0.8,
        reading=MARGIN,
        support_shift=0.1,
        fitted_on=("bioasq dev (23)",),
        dev_accuracy=0.9,
    )
    fitted.save(tmp_path)
    assert load_bottom_line_rule(tmp_path) == fitted


def _dev(source: str, gold: str, votes: list[AbstractVote], copies: int = 1) -> list[DevQuestion]:
    return [DevQuestion(votes=tuple(votes), gold=gold, source=source)] * copies


def test_the_fit_finds_the_threshold_the_dev_questions_call_for():
    # Yes questions carry one weak supporting vote (0.3); "maybe" questions carry none. Only a minimum weight at or
    # under 0.3 answers the yes questions, and every such rule still abstains on the maybes.
    dev = _dev("a", "yes", [vote("1", SUPPORT, 0.3)], copies=3) + _dev("a", "maybe", [], copies=3)
    rule = fit_bottom_line_rule(dev, fitted_on=["a dev (6)"], with_stance=False)
    assert rule.minimum_weight <= 0.3
    assert rule.dev_accuracy == 1.0
    assert rule.fitted_on == ("a dev (6)",)
    assert rule.stance_weight == 0.0


def test_source_weights_decide_what_the_fit_gives_up():
    # Source "y": a yes question with one supporting and one weaker contradicting abstract, so a yes only where the
    # majority asked for is below the supporting share. Source "m": a maybe question with the same votes.
    votes = [vote("1", SUPPORT, 0.9), vote("2", CONTRADICT, 0.6, rank=1)]
    dev = _dev("y", "yes", votes) + _dev("m", "maybe", votes)
    for_yes = fit_bottom_line_rule(dev, fitted_on=["y", "m"], source_weights={"y": 0.9, "m": 0.1}, with_stance=False)
    for_maybe = fit_bottom_line_rule(dev, fitted_on=["y", "m"], source_weights={"y": 0.1, "m": 0.9}, with_stance=False)
    assert decide_bottom_line(votes, for_yes).answer == YES
    assert decide_bottom_line(votes, for_maybe).answer in (MIXED, NOT_ENOUGH)


def test_the_fit_refuses_no_questions_or_no_weight():
    with pytest.raises(ValueError, match="no dev questions"):
        fit_bottom_line_rule([], fitted_on=[])
    with pytest.raises(ValueError, match="no dev source any weight"):
        fit_bottom_line_rule(_dev("a", "yes", []), fitted_on=["a"], source_weights={"b": 1.0})


def _random_dev_questions(count: int, seed: int) -> list[DevQuestion]:
    """Questions with every kind of vote the rule reads: ranked, Unclear, retracted, of any relevance and stance."""
    rng = random.Random(seed)
    questions = []
    for number in range(count):
        votes = []
        for rank in range(rng.randint(0, 6)):
            probabilities = {SUPPORT: rng.random(), CONTRADICT: rng.random(), NO_EVIDENCE: rng.random()}
            leaning = max(probabilities, key=probabilities.__getitem__)
            votes.append(
                AbstractVote(
                    pmid=f"{number}-{rank}",
                    rank=rank,
                    leaning=leaning,
                    shown=UNCLEAR if rng.random() < 0.3 else leaning,
                    probabilities=probabilities,
                    retracted=rng.random() < 0.1,
                    relevance=rng.random(),
                )
            )
        gold = rng.choice(["yes", "no", "maybe"])
        # A stance that mostly agrees with gold, so that the fit has a reason to weigh it.
        stance = gold if gold != "maybe" and rng.random() < 0.7 else rng.choice([YES, NO, None])
        source = rng.choice(["bioasq", "pubmedqa:yes", "pubmedqa:no"])
        # The LLM's log-odds of no, higher for "no" questions (so a cut separates them), missing for some.
        log_odds = rng.gauss({"yes": -4.0, "no": -1.5, "maybe": -3.0}[gold], 1.0)
        model_reading = ModelReading(pmid=f"{number}-0", log_odds_no=log_odds) if rng.random() < 0.9 else None
        questions.append(
            DevQuestion(votes=tuple(votes), gold=gold, stance=stance, source=source, model_reading=model_reading)
        )
    return questions


def _accuracy(questions: list[DevQuestion], rule: BottomLineRule, source: str) -> float:
    """One source's accuracy, each question decided afresh (not through the fit's tallies)."""
    chosen = [question for question in questions if question.source == source]
    right = sum(
        bottom_line_correct(
            decide_bottom_line(q.votes, rule, stance=q.stance, model_reading=q.model_reading).answer, q.gold
        )
        for q in chosen
    )
    return right / len(chosen)


def test_the_fit_chooses_the_rule_that_deciding_every_grid_point_afresh_would(monkeypatch):
    """The fit tallies each vote weighting once and scores the thresholds, the stance and the LLM's reading over the
    totals; that must choose what deciding each grid point in order with `decide_bottom_line` chooses, first best on
    ties, with its score."""
    monkeypatch.setattr(bottom_line, "READINGS", ((LEANING, 0.0), (MARGIN, -0.1), (MARGIN, 0.1)))
    monkeypatch.setattr(bottom_line, "MODEL_CUTS", (-3.0, -2.0))
    small_grid = {
        "rank_decay": (1.0, 0.6),
        "unclear_weight": (0.0, 1.0),
        "minimum_weight": (0.1, 0.5),
        "majority": (0.5, 0.7),
        "stance_weight": (0.0, 0.5),
        "relevance_power": (0.0, 2.0),
        "model_weight": (0.0, 1.0),
    }
    for name, values in small_grid.items():
        monkeypatch.setitem(bottom_line.GRID, name, values)
    questions = _random_dev_questions(60, seed=3)
    weights = {"bioasq": 0.5, "pubmedqa:yes": 0.3, "pubmedqa:no": 0.2}  # summing to 1: the fit's mean is their sum

    fitted = fit_bottom_line_rule(questions, fitted_on=["toy"], source_weights=weights)

    voices = [(0.0, 0.0), (1.0, -3.0), (1.0, -2.0)]  # no reading, then each weight with each cut
    best: tuple[float, BottomLineRule] | None = None
    scored_alike = 0
    for (reading, shift), decay, unclear, minimum, majority, stance_weight, power, (
        model_weight,
        cut,
    ) in itertools.product(bottom_line.READINGS, *(small_grid[name] for name in list(small_grid)[:-1]), voices):
        rule = BottomLineRule(
            reading=reading, support_shift=shift, rank_decay=decay, unclear_weight=unclear,
            minimum_weight=minimum, majority=majority, stance_weight=stance_weight, relevance_power=power,
            model_weight=model_weight, model_cut=cut,
        )  # fmt: skip
        score = sum(weight * _accuracy(questions, rule, source) for source, weight in weights.items())
        scored_alike += weighted_accuracy(questions, rule, weights) == pytest.approx(score)
        if best is None or score > best[0] + 1e-12:
            best = (score, rule)
    assert best is not None
    assert scored_alike == 3 * 2**6 * len(voices), "the fit's scorer agrees with deciding afresh at every grid point"
    assert fitted.stance_weight > 0  # the stance and thresholds are scored, not only the vote weighting
    assert fitted.model_weight > 0  # and the LLM's reading, which separates the golds here
    assert asdict(fitted) == asdict(replace(best[1], fitted_on=("toy",), dev_accuracy=round(best[0], 4)))
    assert weighted_accuracy(questions, fitted, weights) == pytest.approx(best[0])


def test_the_llm_reading_votes_no_past_its_cut_and_yes_below_it_with_its_weight():
    rule = replace(FLAT, minimum_weight=0.1, majority=0.6, model_weight=2.0, model_cut=-2.0)
    votes = [vote("1", SUPPORT, 0.8)]

    leaning_no = decide_bottom_line(votes, rule, model_reading=ModelReading(pmid="1", log_odds_no=-1.5))
    leaning_yes = decide_bottom_line(votes, rule, model_reading=ModelReading(pmid="1", log_odds_no=-2.5))
    unread = decide_bottom_line(votes, rule)

    assert (leaning_no.answer, leaning_no.model_side) == (NO, NO), "2.0 on no against the abstract's 0.8 on yes"
    assert leaning_no.no_weight == pytest.approx(2.0)
    assert leaning_no.yes_pmids == ("1",), "the abstract still votes yes; the LLM's voice is apart from the votes"
    assert (leaning_yes.answer, leaning_yes.model_side) == (YES, YES)
    assert leaning_yes.yes_weight == pytest.approx(2.8)
    assert (unread.answer, unread.model_reading, unread.model_side) == (YES, None, None)


def test_a_rule_that_does_not_weigh_the_llm_reading_ignores_one_given():
    rule = replace(FLAT, model_weight=0.0, model_cut=-2.0)
    line = decide_bottom_line([vote("1", SUPPORT, 0.8)], rule, model_reading=ModelReading(pmid="1", log_odds_no=5.0))
    assert not rule.reads_with_model
    assert (line.answer, line.model_reading, line.model_side, line.no_weight) == (YES, None, None, 0.0)


def test_the_llm_reads_the_closest_abstract_never_a_retracted_one():
    votes = [
        vote("first", SUPPORT, 0.9, rank=0, relevance=0.4),
        vote("closest", SUPPORT, 0.9, rank=1, relevance=1.0),
        vote("tied later", SUPPORT, 0.9, rank=2, relevance=1.0),
    ]
    assert closest_pmid(votes) == "closest", "the dense search's closest; on a tie the earlier ranked"
    votes[1] = vote("closest", SUPPORT, 0.9, rank=1, relevance=1.0, retracted=True)
    assert closest_pmid(votes) == "tied later"
    assert closest_pmid([vote("gone", SUPPORT, 0.9, retracted=True)]) is None


def test_a_question_without_votes_has_its_closest_abstract_read_and_that_reading_alone_decides():
    """A yes/no question whose claim the rewrite cannot read has no votes, only retrieved abstracts: the closest
    readable one is read, and under a rule that weighs the reading it alone decides; unread, Not enough evidence."""
    retrieved = retrieved_abstracts(["first", "closest", "gone"], relevance={"closest": 1.0, "gone": 1.0, "first": 0.2})
    assert [abstract.rank for abstract in retrieved] == [0, 1, 2]
    assert closest_pmid(retrieved) == "closest"
    assert closest_pmid(retrieved_abstracts(["a", "b"], relevance={"b": 1.0, "a": 0.0}, retracted={"b"})) == "a"
    reading = read_closest_abstract(
        lambda question, title, abstract: 2.0 if abstract == "negated" else -5.0,
        "Is it worth it?",
        retrieved,
        [
            CitedAbstract(pmid=pmid, title="", abstract="negated" if pmid == "closest" else "")
            for pmid in ("first", "closest", "gone")
        ],
    )
    assert reading == ModelReading(pmid="closest", log_odds_no=2.0)
    rule = replace(FLAT, minimum_weight=0.5, model_weight=1.0, model_cut=0.0)
    assert decide_bottom_line((), rule, model_reading=reading).answer == NO
    assert decide_bottom_line((), rule, model_reading=ModelReading(pmid="closest", log_odds_no=-1.0)).answer == YES
    assert decide_bottom_line((), rule).answer == NOT_ENOUGH
    # A rule whose minimum is 0 must not divide by the nothing that voted.
    assert decide_bottom_line((), replace(rule, minimum_weight=0.0)).answer == NOT_ENOUGH
