"""A yes/no question's stored bottom line (`webapp.qa.consensus.bottom_line_json`) in the words a reader gets on the
answer page, the shared page and in the Markdown export; static/verimed.js says the same when it fills the page.

A consensus stored before the bottom line existed has none, and a question not asked yes or no has no consensus:
both read as None here, so nothing is said about a bottom line there."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from verifier.bottom_line import BOTTOM_LINES, OTHER_SIDE
from verifier.verdicts import UNCLEAR
from webapp.corpus.source_ids import source_label
from webapp.qa.bottom_line_sentence import Decision, counted, decided_sentence

# The honest limits, said wherever the bottom line is: it is the verifier's reading, not medical advice.
LIMITS = (
    "This bottom line is a reading of the retrieved abstracts by an automatic verifier, not a clinical recommendation."
)


@dataclass(frozen=True)
class Vote:
    pmid: str
    label: str  # "PMID 123", or a benchmark id as it is


def _votes(pmids: Any) -> tuple[Vote, ...]:
    return tuple(Vote(pmid=str(pmid), label=source_label(str(pmid))) for pmid in pmids or ())


@dataclass(frozen=True)
class ShownBottomLine:
    answer: str  # one of verifier.bottom_line.BOTTOM_LINES; empty if the stored one is none of them
    title: str
    rests_on: int
    yes: tuple[Vote, ...]  # heaviest first, as stored
    no: tuple[Vote, ...]
    abstaining: int
    retracted: tuple[Vote, ...]
    answer_stance: str | None  # what the written answer says: yes, no, or None when unknown
    answer_disagrees: bool
    yes_weight: float = 0.0
    no_weight: float = 0.0
    model_vote: Vote | None = None  # the abstract the answer LLM read, when its reading voted
    model_side: str | None = None  # the side it took: yes / no
    model_failed: bool = False  # the rule weighs that reading, and the model could not be asked
    model_alone: bool = False  # no claim could be checked, so that reading alone decided it
    model_weight: float = 0.0  # what that reading weighed in the rule (0: stored without one)
    unclear: int = 0  # abstracts read, shown Unclear, that cast no vote
    vote_weights: Mapping[str, float] = field(default_factory=dict)  # each voting PMID's weight

    @property
    def votes_sentence(self) -> str:
        """What decided it, in words (`webapp.qa.bottom_line_sentence`): the heaviest voice, how many abstracts lean
        each way, how many could not be read with confidence."""
        side = self.answer if self.answer in ("yes", "no") else None
        votes = self.yes if side == "yes" else self.no if side == "no" else ()
        return decided_sentence(
            Decision(
                title=self.title,
                side=side,
                leaning_yes=len(self.yes),
                leaning_no=len(self.no),
                unclear=self.unclear,
                model_label=self.model_vote.label if self.model_vote else None,
                model_side=self.model_side,
                model_weight=self.model_weight,
                model_alone=self.model_alone,
                side_vote_weight=sum(self.vote_weights.get(vote.pmid, 0.0) for vote in votes),
            )
        )

    @property
    def abstaining_sentence(self) -> str:
        # The Unclear ones are said in votes_sentence; the others read found nothing on the question.
        others = max(self.abstaining - self.unclear, 0)
        if not others:
            return ""
        return counted(others, "other abstract read takes no side.", "other abstracts read take no side.")

    @property
    def retracted_sentence(self) -> str:
        if not self.retracted:
            return ""
        return counted(len(self.retracted), "retracted paper did not vote:", "retracted papers did not vote:")

    @property
    def model_sentence(self) -> str:
        """The answer LLM's voice, when the rule weighs it: which way it read the closest abstract (the page puts
        that abstract's button after it), or that it could not be asked."""
        if self.model_vote is not None and self.model_alone:
            return (
                f"The answer model, reading the abstract closest to the question, leans {self.model_side}; "
                "that reading alone decides this bottom line:"
            )
        if self.model_vote is not None:
            return (
                f"The answer model, reading the abstract closest to the question, leans {self.model_side}; "
                "its reading is counted in the bottom line above:"
            )
        if self.model_failed:
            return (
                "The answer model could not be asked to read the closest abstract: the votes above are the verifier's."
            )
        return ""

    def disagreement_sentence(self, where: str) -> str:
        """Said only when the written answer takes the other side; `where` places the answer ("below", "above").
        The bottom line, not "the abstracts' votes": the answer model's reading may be what decided it."""
        said = OTHER_SIDE.get(self.answer)
        if not self.answer_disagrees or said is None:
            return ""
        return f"The written answer {where} says {said}, but the bottom line says {self.title}: read the sources."


def shown_bottom_line(consensus: Mapping[str, Any] | None) -> ShownBottomLine | None:
    """The bottom line of a stored consensus; None when there is no consensus or it was stored without one."""
    stored = (consensus or {}).get("bottom_line")
    if not stored:
        return None
    answer = str(stored.get("answer", ""))
    return ShownBottomLine(
        answer=answer if answer in BOTTOM_LINES else "",
        title=str(stored.get("title", "")),
        rests_on=int(stored.get("rests_on", 0)),
        yes=_votes(stored.get("yes_pmids")),
        no=_votes(stored.get("no_pmids")),
        abstaining=int(stored.get("abstaining", 0)),
        retracted=_votes(stored.get("retracted_pmids")),
        answer_stance=str(stored["answer_stance"]) if stored.get("answer_stance") else None,
        answer_disagrees=bool(stored.get("answer_disagrees")),
        yes_weight=float(stored.get("yes_weight") or 0.0),
        no_weight=float(stored.get("no_weight") or 0.0),
        model_vote=_votes([model["pmid"]])[0] if (model := stored.get("model_reading")) else None,
        model_side=str(model["side"]) if model else None,
        model_failed=bool(stored.get("model_reading_failed")),
        model_alone=bool(stored.get("model_alone")),
        model_weight=float((model or {}).get("weight") or 0.0),
        unclear=_unclear_not_voting(consensus or {}, stored),
        vote_weights={str(pmid): float(weight) for pmid, weight in (stored.get("weights") or {}).items()},
    )


def _unclear_not_voting(consensus: Mapping[str, Any], stored: Mapping[str, Any]) -> int:
    """Abstracts the verifier read without confidence (shown Unclear) that cast no vote and are not retracted."""
    voting = {str(pmid) for key in ("yes_pmids", "no_pmids", "retracted_pmids") for pmid in stored.get(key) or ()}
    verdicts = consensus.get("verdicts") or {}
    return sum(1 for pmid, verdict in verdicts.items() if verdict.get("label") == UNCLEAR and str(pmid) not in voting)


def bottom_line_context(consensus: Mapping[str, Any] | None) -> dict[str, Any]:
    """What templates/qa/bottom_line.html reads; the answer it places sits below it."""
    shown = shown_bottom_line(consensus)
    return {
        "bottom_line": shown,
        "bottom_line_disagreement": shown.disagreement_sentence("below") if shown else "",
        "bottom_line_limits": LIMITS,
    }


def bottom_line_markdown(bottom_line: ShownBottomLine | None, *, escape: Callable[[str], str]) -> list[str]:
    """The Markdown export's "Bottom line" section, put before its "Consensus"; `escape` makes stored text inert."""
    if bottom_line is None:
        return []
    # The sentence names the stored title and the model's abstract: stored text, so escaped like the rest.
    summary = escape(" ".join(part for part in (bottom_line.votes_sentence, bottom_line.abstaining_sentence) if part))
    lines = ["", "## Bottom line", "", f"**{escape(bottom_line.title)}.** {summary}", ""]
    for name, votes in (
        (("Vote yes", bottom_line.yes), ("Vote no", bottom_line.no)) if not bottom_line.model_alone else ()
    ):
        lines.append(f"- {name} ({len(votes)}): {', '.join(escape(vote.label) for vote in votes) or 'none'}")
    if bottom_line.model_vote is not None:
        lines.append(f"- {escape(bottom_line.model_sentence)} {escape(bottom_line.model_vote.label)}")
    elif bottom_line.model_failed:
        lines.append(f"- {escape(bottom_line.model_sentence)}")
    if bottom_line.retracted:
        retracted = ", ".join(escape(vote.label) for vote in bottom_line.retracted)
        lines.append(f"- Retracted, kept out of the vote ({len(bottom_line.retracted)}): {retracted}")
    if bottom_line.answer_disagrees:
        lines += ["", f"**{escape(bottom_line.disagreement_sentence('above'))}**"]
    lines += ["", f"*{LIMITS}*"]
    return lines
