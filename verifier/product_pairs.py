"""Verifier pairs shaped like the product's: an answer sentence that restates an abstract, cited against it.

The gold splits pair expert-written claims with abstracts, and every pair is hard. The product's pairs are mostly
an answer model's close restatements of one to three sentences of the abstract it cites. These builders make that
shape from the abstracts of one split (MiniCheck's lesson: data that needs the evidence), each pair knowing which
sentences its claim rests on (`ClaimDocumentPair.rationale`):

| construction | label | claim | document |
|---|---|---|---|
| verbatim | SUPPORT | a finding sentence word for word | its abstract |
| shortened | SUPPORT | the sentence with its lead, asides and tail dropped | its abstract |
| fused | SUPPORT | two or three finding sentences as one | their abstract |
| other_abstract | NO_EVIDENCE | the verbatim sentence | the BM25-closest other abstract of the pool |
| left_out | NO_EVIDENCE | the verbatim sentence | its abstract less that sentence and any that restates it |
| direction / number / negation | CONTRADICT | the sentence with one meaning-flipping edit | its abstract |

Which abstracts may be used is `verifier.product_pools`' job; this module only builds from what it is given.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from indexer.evaluation import Bm25sBaseline
from indexer.records import ArticleRecord
from verifier.counterfactuals import change_number, flip_direction, negate
from verifier.datasets import ClaimDocumentPair, Document
from verifier.sentence_edits import fuse, shorten
from verifier.verdicts import CONTRADICT, NO_EVIDENCE, SUPPORT

CONSTRUCTIONS: dict[str, str] = {
    "verbatim": SUPPORT,
    "shortened": SUPPORT,
    "fused": SUPPORT,
    "other_abstract": NO_EVIDENCE,
    "left_out": NO_EVIDENCE,
    "direction": CONTRADICT,
    "number": CONTRADICT,
    "negation": CONTRADICT,
}
_EDITS = ("direction", "number", "negation")
# Sentences that say what was done rather than what was found: an answer does not cite them as claims.
_METHOD_LIKE = re.compile(
    r"^(?:we (?:aimed|sought|set out|investigated|examined|conducted|performed|recruited|enrolled|used|analy[sz]ed"
    r"|searched|assessed|evaluated|compared|studied|reviewed|describe|present|propose|here|chose|selected|designed"
    r"|developed|recount|measured|tested|applied|identified|collected|calculated|defined|next|then|therefore|thus)"
    r"|(?:the |this )?(?:aim|purpose|objective|goal)s? (?:of|was|is)|objectives?\b|methods?\b|background\b|design\b"
    r"|to (?:determine|assess|evaluate|investigate|examine|compare|explore|identify|answer|address|test)\b"
    r"|here,? we\b|fig(?:ure|\.)?\s|table\s|author|acknowledg|funding|conflicts?\b|the primary (?:end ?point|outcome)"
    r"|in this (?:review|article|paper)\b)",
    re.I,
)
# What a finding says: a change, a difference, an association or a negation. A sentence with none of these is
# background, methods or a legend, which an answer does not cite as a claim.
_FINDING_CUE = re.compile(
    r"\b(?:associat|increas|decreas|reduc|improv|higher|lower|greater|less|more|significant|risk|effect|show|found"
    r"|suggest|indicat|demonstrat|reveal|correlat|predict|protect|inhibit|induc|promot|caus|requir|enhanc|impair"
    r"|elevat|prevent|not|no|did|was|were)",
    re.I,
)
_CITATION_DEBRIS = re.compile(r"[a-z]\d+(?:[,\u2013-]\d+)*\b|\(\s*(?:suppl|fig|table)", re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor|without|n't)\b", re.I)
_PREFIX_NEGATED = re.compile(r"\bnot\s+(?:un|in|im|ir|il|non|dis)[a-z]{3,}", re.I)
_CONTENT_WORD = re.compile(r"[a-z0-9][a-z0-9-]{3,}")
_MIN_WORDS, _MAX_WORDS = 8, 45
# Above this share of a claim's content words, a sentence may restate the claim: it goes when the claim's own are
# left out, or the pair would still be SUPPORT; another abstract with one is no negative. The first build's 0.5
# missed paraphrases (its audit: 11 of 24 negatives still held the evidence).
RESTATES = 0.35


@dataclass(frozen=True)
class SourceDocument:
    """An abstract and the sentences of it that state findings (gold rationales where the split has them)."""

    document: Document
    findings: tuple[int, ...]


@dataclass(frozen=True)
class ShapedPair:
    pair: ClaimDocumentPair
    construction: str  # a key of CONSTRUCTIONS
    source_id: str  # the abstract the claim was made from (for other_abstract, not the one it is read against)

    @property
    def label(self) -> str:
        return self.pair.label


def is_finding(sentence: str) -> bool:
    """A sentence an answer would restate as a claim: of a claim's length, not methods, background or a legend, with
    something found in it, and without superscript citation numbers ("isolated1,2") glued to its words."""
    text = sentence.strip()
    count = len(text.split())
    return (
        _MIN_WORDS <= count <= _MAX_WORDS
        and not _METHOD_LIKE.match(text)
        and bool(_FINDING_CUE.search(text))
        and not _CITATION_DEBRIS.search(text)
    )


def finding_sentences(document: Document, rationale: Sequence[int] = ()) -> tuple[int, ...]:
    """The gold rationale sentences and the last two (results and conclusions) that read as findings."""
    tail = range(max(0, len(document.sentences) - 2), len(document.sentences))
    picked = dict.fromkeys([*rationale, *tail])
    return tuple(index for index in picked if is_finding(document.sentences[index]))


def content_words(text: str) -> set[str]:
    return set(_CONTENT_WORD.findall(text.lower()))


def restates(sentence: str, claim: str) -> bool:
    claim_words = content_words(claim)
    return bool(claim_words) and len(claim_words & content_words(sentence)) / len(claim_words) >= RESTATES


def contradicting_edit(claim: str, rng: random.Random) -> tuple[str, str] | None:
    """(kind, edited claim) for one edit that flips the claim's meaning; None where none applies cleanly.

    Rejected, as the audit of the first build found them not contradicted: double negations and "not in-…" edits
    ("not ineffective"); a negation before "also" or "only"; a claim that goes on after a contrast ("…, with some
    showing…", "but…"), where the edit makes it contradict itself; flips of time, place or hyphenated words
    ("before", "HIV-positive"); and number changes other than a result's (a percentage, a fold change or a decimal),
    or of a bound ("< 5%"), where the new value may still fit."""
    if _CONTRAST.search(claim):
        return None
    kinds = list(_EDITS)
    rng.shuffle(kinds)
    for kind in kinds:
        edited = (
            flip_direction(claim, unflippable=_UNFLIPPABLE, skip_hyphenated=True)
            if kind == "direction"
            else _change_result(claim, rng)
            if kind == "number"
            else negate(claim)
        )
        if not edited or edited == claim or _PREFIX_NEGATED.search(edited) or _NOT_BEFORE_ADVERB.search(edited):
            continue
        if kind != "number" and len(_NEGATION.findall(edited)) > 1:
            continue  # two negations: the edit may cancel out
        return kind, edited
    return None


_CONTRAST = re.compile(r",\s+(?:with some|whereas|while|but|although|though)\b|\bnot only\b", re.I)
_NOT_BEFORE_ADVERB = re.compile(r"\bnot\s+(?:also|only|still|then|thus|further)\b", re.I)
_UNFLIPPABLE = frozenset({"before", "after", "above", "below", "gain", "loss", "protective", "detrimental", "protects"})
_RESULT_NUMBER = re.compile(r"(?<![\w.\-<>≤≥~])(\d+\.\d+|\d+)(\s?%|\s?-?fold| percent)")


# A bound ("below ~10%", "< 5%", "up to 3-fold") or a range's top ("5-10%"): a new value may still fit.
_BOUND_BEFORE = r"(?:<|>|\u2264|\u2265|~|below|above|under|over|than|up to|at least|at most|[\u2013-])\s*$"


def _change_result(claim: str, rng: random.Random) -> str | None:
    """A percentage or fold change, not a bound, a range's top or a confidence level, changed clearly."""
    candidates = [
        match
        for match in _RESULT_NUMBER.finditer(claim)
        if not re.search(_BOUND_BEFORE, claim[: match.start()])
        and not re.match(r"\s*(?:CI|confidence|credible)\b", claim[match.end() :], re.I)  # "95% CI" is no result
    ]
    if not candidates:
        return None
    match = rng.choice(candidates)
    edited = change_number(match.group(0), rng)
    return None if edited is None else claim[: match.start()] + edited + claim[match.end() :]


class NeighbourSearch:
    """The BM25-closest other abstracts of a pool for a claim: the retrieval benchmark's plain BM25 baseline
    (`indexer.evaluation.Bm25sBaseline`) over the pool, keyed by document id."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.documents = {document.doc_id: document for document in documents}
        self._bm25 = Bm25sBaseline(
            [
                ArticleRecord(pmid=document.doc_id, title=document.title, abstract=" ".join(document.sentences))
                for document in documents
            ]
        )

    def closest(self, claim: str, *, limit: int) -> list[Document]:
        return [self.documents[doc_id] for doc_id in self._bm25.search(claim, limit=limit)]


def shaped_pairs(
    sources: Sequence[SourceDocument], *, seed: int = 13, findings_per_document: int = 2
) -> list[ShapedPair]:
    """Every construction from each abstract's findings (at most `findings_per_document` claims of each kind per
    abstract), in a seeded order. A construction that does not apply to a sentence is skipped, never forced."""
    rng = random.Random(seed)
    search = NeighbourSearch([source.document for source in sources])
    made: list[ShapedPair] = []
    for source in sources:
        document = source.document
        findings = list(source.findings)
        rng.shuffle(findings)
        for index in findings[:findings_per_document]:
            sentence = document.sentences[index]
            made += _around_one_sentence(document, index, sentence, search, rng)
        if len(source.findings) >= 2:
            size = min(len(source.findings), rng.choice((2, 2, 3)))
            chosen = sorted(rng.sample(list(source.findings), size))
            claim = fuse([shorten(document.sentences[i]) or document.sentences[i] for i in chosen])
            made.append(_shaped(document, claim, "fused", tuple(chosen), source=document))
    rng.shuffle(made)
    return made


def _around_one_sentence(
    document: Document, index: int, sentence: str, search: NeighbourSearch, rng: random.Random
) -> list[ShapedPair]:
    made = [_shaped(document, sentence, "verbatim", (index,), source=document)]
    short = shorten(sentence)
    if short is not None:
        made.append(_shaped(document, short, "shortened", (index,), source=document))
    edit = contradicting_edit(short if short is not None and rng.random() < 0.5 else sentence, rng)
    if edit is not None:
        made.append(_shaped(document, edit[1], edit[0], (index,), source=document))
    neighbour = _other_abstract(document, sentence, search)
    if neighbour is not None:
        made.append(_shaped(neighbour, sentence, "other_abstract", (), source=document))
    kept = [s for i, s in enumerate(document.sentences) if i != index and not restates(s, sentence)]
    if len(kept) >= 3 and not restates(document.title, sentence):
        left_out = Document(doc_id=f"{document.doc_id}#without-{index}", title=document.title, sentences=tuple(kept))
        made.append(_shaped(left_out, sentence, "left_out", (), source=document))
    return made


def _other_abstract(document: Document, claim: str, search: NeighbourSearch) -> Document | None:
    """The closest other abstract with no sentence that restates the claim (a second paper may report the same
    finding, and then it is evidence, not a negative)."""
    for candidate in search.closest(claim, limit=8):
        if candidate.doc_id == document.doc_id or candidate.sentences == document.sentences:
            continue
        if _same_paper(candidate, document):
            continue
        if not any(restates(sentence, claim) for sentence in (candidate.title, *candidate.sentences)):
            return candidate
    return None


def _same_paper(first: Document, second: Document) -> bool:
    """Two passages of one paper (Citation-Integrity's corpus holds several per paper, untitled): the same title, or
    a third of their rarer words shared."""
    if first.title and first.title == second.title:
        return True
    words = [{w for w in content_words(" ".join(d.sentences)) if len(w) >= 7} for d in (first, second)]
    smaller = min(len(words[0]), len(words[1]))
    return smaller > 0 and len(words[0] & words[1]) / smaller >= 1 / 3


def _shaped(
    document: Document, claim: str, construction: str, rationale: tuple[int, ...], *, source: Document
) -> ShapedPair:
    label = CONSTRUCTIONS[construction]
    pair = ClaimDocumentPair(
        claim_id=f"{construction}:{source.doc_id}:{'-'.join(map(str, rationale))}",
        claim=claim,
        document=document,
        label=label,
        rationale=rationale,
    )
    return ShapedPair(pair=pair, construction=construction, source_id=source.doc_id)


def construction_counts(pairs: Sequence[ShapedPair]) -> dict[str, int]:
    """How many pairs of each construction, every construction named."""
    counts = Counter(pair.construction for pair in pairs)
    return {name: counts.get(name, 0) for name in CONSTRUCTIONS}


def balanced_by_label(pairs: Sequence[ShapedPair], size: int, *, seed: int) -> list[ShapedPair]:
    """A seeded sample of `size` pairs, a third of each label and, within a label, as even across its constructions
    as they allow (a construction short of its share leaves the rest to the others)."""
    rng = random.Random(seed)
    chosen: list[ShapedPair] = []
    for label in (SUPPORT, NO_EVIDENCE, CONTRADICT):
        kinds = [name for name, of in CONSTRUCTIONS.items() if of == label]
        pools = {name: [pair for pair in pairs if pair.construction == name] for name in kinds}
        for pool in pools.values():
            rng.shuffle(pool)
        share = size // 3
        taken: list[ShapedPair] = []
        while len(taken) < share and any(pools.values()):
            for name in kinds:
                if pools[name] and len(taken) < share:
                    taken.append(pools[name].pop())
        chosen += taken
    rng.shuffle(chosen)
    return chosen
