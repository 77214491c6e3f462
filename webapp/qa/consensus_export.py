"""A question's stored consensus as the exports carry it: each count with its papers and what a reader weighs them by
(a retraction, the study design). Plain text; each export format escapes it as it must."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from verifier.consensus import CONSENSUS_LABELS
from webapp.corpus.models import Article
from webapp.qa.consensus import CONSENSUS_KEYS
from webapp.qa.source_notes import RETRACTION_LABELS, source_design

# How each count reads in a sentence, singular and plural.
_COUNT_PHRASES = {
    "support": ("supports it", "support it"),
    "contradict": ("contradicts it", "contradict it"),
    "no_evidence": ("says nothing about it", "say nothing about it"),
    "unclear": ("is unclear", "are unclear"),
}
_GROUP_LABELS = {"support": "Support", "contradict": "Contradict", "no_evidence": "No evidence", "unclear": "Unclear"}


@dataclass(frozen=True)
class ConsensusPaper:
    pmid: str
    notes: tuple[str, ...]  # "Retracted", "Randomised controlled trial": what its badges say


@dataclass(frozen=True)
class ConsensusGroup:
    key: str  # support, contradict, no_evidence or unclear
    label: str
    papers: tuple[ConsensusPaper, ...]

    @property
    def phrase(self) -> str:
        """'2 support it', '1 says nothing about it'."""
        singular, plural = _COUNT_PHRASES[self.key]
        return f"{len(self.papers)} {singular if len(self.papers) == 1 else plural}"


@dataclass(frozen=True)
class ExportedConsensus:
    claim: str
    read: int
    groups: tuple[ConsensusGroup, ...]  # support, contradict, no evidence, unclear
    speaking_minimum: int
    closest_read: bool = False  # one of those read is the closest candidate, ranked below the first retrieved

    @property
    def read_phrase(self) -> str:
        """What was read, as the page says it (static/verimed.js, `consensusReadPhrase`)."""
        first = self.read - 1 if self.closest_read else self.read
        phrase = f"the first {first} abstract{'' if first == 1 else 's'} retrieved"
        return phrase + " and the one the search found closest to the question" if self.closest_read else phrase

    @property
    def speaking(self) -> int:
        return sum(len(group.papers) for group in self.groups if group.key in ("support", "contradict"))

    @property
    def enough(self) -> bool:
        return self.speaking >= self.speaking_minimum

    @property
    def unsure_sentence(self) -> str:
        """Said before the counts when more than half of the abstracts read are Unclear, so no one reads the meter as
        firmer than the verifier was; empty otherwise. static/verimed.js (`consensusUnsure`) says the same."""
        return unsure_sentence(sum(len(group.papers) for group in self.groups if group.key == "unclear"), self.read)


def unsure_sentence(unclear: int, read: int) -> str:
    if read <= 0 or unclear * 2 <= read:
        return ""
    return (
        f"Most of these abstracts ({unclear} of {read}) could not be read with confidence; the counts below are "
        "uncertain."
    )


def consensus_pmids(stored: Mapping[str, Any] | None) -> set[str]:
    """The PMIDs a stored consensus names, whose articles `exported_consensus` reads."""
    return {str(pmid) for pmids in (stored or {}).get("pmids", {}).values() for pmid in pmids}


def _paper(pmid: str, article: Article | None) -> ConsensusPaper:
    if article is None:
        return ConsensusPaper(pmid=pmid, notes=())
    notes = []
    if article.retraction_status in (Article.Retraction.RETRACTED, Article.Retraction.CONCERN):
        notes.append(RETRACTION_LABELS[Article.Retraction(article.retraction_status)])
    if (design := source_design(article)) is not None:
        notes.append(design.label)
    return ConsensusPaper(pmid=pmid, notes=tuple(notes))


def exported_consensus(stored: Mapping[str, Any] | None, articles: Mapping[str, Article]) -> ExportedConsensus | None:
    """`stored` as `webapp.qa.consensus` writes it; `articles` maps PMID to row (a paper since removed has no notes).
    None without a consensus, or for one with no claim checked (its bottom line is the answer LLM's reading alone,
    which the bottom line's own section says)."""
    if not stored or stored.get("claim") is None:
        return None
    groups = []
    for label in CONSENSUS_LABELS:
        key = CONSENSUS_KEYS[label]
        pmids = [str(pmid) for pmid in stored["pmids"].get(key, [])]
        papers = tuple(_paper(pmid, articles.get(pmid)) for pmid in pmids)
        groups.append(ConsensusGroup(key=key, label=_GROUP_LABELS[key], papers=papers))
    return ExportedConsensus(
        claim=str(stored["claim"]),
        read=int(stored["read"]),
        closest_read=bool(stored.get("closest_read")),
        groups=tuple(groups),
        speaking_minimum=int(stored["speaking_minimum"]),
    )


def consensus_markdown(
    consensus: ExportedConsensus | None, *, escape: Callable[[str], str], label: Callable[[str], str]
) -> list[str]:
    """The Markdown export's "Consensus" section; `escape` makes untrusted text inert, `label` names a paper's id."""
    if consensus is None:
        return []
    counts = [group.phrase for group in consensus.groups]
    lines = ["", "## Consensus", "", f"Checked as the claim: *{escape(consensus.claim)}*", ""]
    if consensus.unsure_sentence:
        lines += [f"**{consensus.unsure_sentence}**", ""]
    lines += [f"Of {consensus.read_phrase}, {', '.join(counts[:-1])} and {counts[-1]}.", ""]
    for group in consensus.groups:
        papers = ", ".join(
            escape(label(paper.pmid)) + (f" ({escape('; '.join(paper.notes))})" if paper.notes else "")
            for paper in group.papers
        )
        lines.append(f"- {group.label} ({len(group.papers)}): {papers or 'none'}")
    if not consensus.enough:
        speaking = "abstract speaks" if consensus.speaking == 1 else "abstracts speak"
        lines += [
            "",
            f"**Too few to call a consensus:** {consensus.speaking} {speaking} to it (support or contradict it), "
            f"fewer than {consensus.speaking_minimum}.",
        ]
    return lines
