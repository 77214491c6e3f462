"""The bottom line's one sentence that says what decided it, e.g. "No: mainly the answer model's reading of PMID 1
(counted as 4 votes); 1 abstract leans yes; 9 could not be read with confidence."

Pure words from counts, so the page, the shared page and the Markdown export say the same; static/verimed.js
(`decidedSentence`) builds the same sentence when it fills the page."""

from __future__ import annotations

from dataclasses import dataclass


def counted(number: int, singular: str, plural: str) -> str:
    return f"{number} {singular if number == 1 else plural}"


def as_votes(weight: float) -> str:
    """A voice's weight as the votes it counts as. One abstract's vote weighs at most 1 (the closest abstract, first
    in rank, read with full confidence), so a weight of 4 counts as four of the strongest votes."""
    rounded = round(weight, 1)
    number = int(rounded) if rounded == int(rounded) else rounded
    return f"{number} vote" if number == 1 else f"{number} votes"


@dataclass(frozen=True)
class Decision:
    title: str  # as the page heads it: Yes, No, Mixed evidence, Not enough evidence
    side: str | None  # "yes" / "no" when the bottom line is Yes or No, else None
    leaning_yes: int
    leaning_no: int
    unclear: int  # abstracts read that the verifier shows Unclear and that do not vote
    model_label: str | None = None  # "PMID 123": the abstract the answer model read, when its reading weighs
    model_side: str | None = None
    model_weight: float = 0.0  # 0 when the rule file gives it no weight (or an old answer stored none)
    model_alone: bool = False  # no claim could be checked: that reading alone decided it
    side_vote_weight: float = 0.0  # the abstracts' votes' weight on `side`


def _model_phrase(decision: Decision) -> str:
    phrase = f"the answer model's reading of {decision.model_label}"
    if decision.model_weight > 0:
        phrase += f" (counted as {as_votes(decision.model_weight)})"
    return phrase


def _leaning(number: int, side: str) -> str:
    return counted(number, f"abstract leans {side}", f"abstracts lean {side}")


def _votes_decide(decision: Decision) -> bool:
    """The abstracts' votes carried more weight on the winning side than the answer model's reading did."""
    model_on_side = decision.model_label is not None and decision.model_side == decision.side
    return not model_on_side or (not decision.model_alone and decision.model_weight < decision.side_vote_weight)


def decided_sentence(decision: Decision) -> str:
    """For Yes or No, what carried the most weight first, then the other side's abstracts and the Unclear ones; for
    Mixed evidence and Not enough evidence, each side's abstracts (and the model's reading, where it weighs)."""
    if decision.model_alone and decision.model_label is not None:
        return (
            f"{decision.title}: {_model_phrase(decision)} alone; no abstract votes, as the verifier could not read "
            "this question as a claim to check."
        )
    sides = {"yes": decision.leaning_yes, "no": decision.leaning_no}
    parts: list[str] = []
    if decision.side is not None and _votes_decide(decision):
        number = sides.pop(decision.side)
        parts.append(
            f"mainly the vote of the 1 abstract that leans {decision.side}"
            if number == 1
            else f"mainly the votes of the {number} abstracts that lean {decision.side}"
        )
    elif decision.side is not None:
        parts.append(f"mainly {_model_phrase(decision)}")
        if not sides[decision.side]:
            del sides[decision.side]  # no abstract beside the reading: nothing to say on that side
    elif decision.model_label is not None and decision.model_side:
        parts.append(f"{_model_phrase(decision)} leans {decision.model_side}")
    parts += [_leaning(number, side) for side, number in sides.items()]
    parts.append(f"{decision.unclear} could not be read with confidence")
    return f"{decision.title}: {'; '.join(parts)}."
