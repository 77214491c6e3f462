"""The comparison behind a re-check: what counts as a change, how it is summed up, and that none is told twice."""

from __future__ import annotations

from webapp.watch.changes import (
    AnswerState,
    Contradiction,
    ContradictionChange,
    Reading,
    RetractionChange,
    VerdictChange,
    answer_changes,
    changes_summary,
    next_state,
    verdict_key,
)

READING = Reading(sentences={0: "A lowers B.", 1: "It is safe."}, titles={"2": "Two.", "9": "Nine."}, notices={})


def test_a_verdict_with_nothing_to_compare_with_is_not_a_change() -> None:
    previous = AnswerState(verdicts={verdict_key(0, "1"): "SUPPORT"})
    current = AnswerState(verdicts={verdict_key(0, "1"): "SUPPORT", verdict_key(1, "2"): "CONTRADICT"})

    assert answer_changes(previous=previous, current=current, found=(), reading=READING) == []


def test_a_status_that_goes_away_is_a_change_too() -> None:
    previous = AnswerState(retraction={"2": "concern"})
    current = AnswerState(retraction={"2": "none"})

    [change] = answer_changes(previous=previous, current=current, found=(), reading=READING)

    assert change == RetractionChange(pmid="2", title="Two.", before="concern", after="none", notices=())
    assert changes_summary([change]) == "PMID 2 no longer flagged."


def test_a_contradiction_told_once_is_kept_in_the_next_state_and_not_told_again() -> None:
    found = (Contradiction(pmid="9", sentence=1, confidence=0.8),)
    first = answer_changes(previous=AnswerState(), current=AnswerState(), found=found, reading=READING)
    state = next_state(previous=AnswerState(), current=AnswerState(), found=found)

    assert first == [
        ContradictionChange(pmid="9", title="Nine.", sentence=1, sentence_text="It is safe.", confidence=0.8)
    ]
    assert AnswerState.from_json(state.to_json()) == state
    assert answer_changes(previous=state, current=AnswerState(), found=found, reading=READING) == []
    assert next_state(previous=state, current=AnswerState(), found=()).contradicting == {"9": (1,)}


def test_the_summary_names_retracted_papers_and_counts_the_rest() -> None:
    changes = [
        RetractionChange(pmid="2", title="", before="none", after="retracted", notices=()),
        VerdictChange(sentence=0, sentence_text="", pmid="1", before="SUPPORT", after="NO_EVIDENCE"),
        VerdictChange(sentence=1, sentence_text="", pmid="2", before="SUPPORT", after="CONTRADICT"),
        ContradictionChange(pmid="9", title="", sentence=0, sentence_text="", confidence=None),
        ContradictionChange(pmid="9", title="", sentence=1, sentence_text="", confidence=None),
    ]

    assert changes_summary(changes) == "PMID 2 retracted; 2 verdicts changed; 1 new contradicting abstract."
    assert changes_summary([]) == "Nothing changed."
