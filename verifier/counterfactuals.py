"""Counterfactual CONTRADICT claims made from supported ones (the MiniCheck / CovidFact recipe).

A claim the document supports, changed in one place so that the same document now contradicts it: a negation
added or removed, a direction word flipped (increased/decreased, higher/lower), a number or percentage changed,
or a drug or outcome swapped for one from another claim. The edit is small on purpose: the pair looks like the
supported one, so the model has to read the evidence to tell them apart.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from verifier.claim_rewriting import VERBS, third_person

# Each pair is swapped both ways; whole words only, the case of the first letter kept.
DIRECTION_PAIRS = (
    ("increased", "decreased"),
    ("increases", "decreases"),
    ("increase", "decrease"),
    ("increasing", "decreasing"),
    ("higher", "lower"),
    ("more", "less"),
    ("fewer", "more"),
    ("greater", "smaller"),
    ("elevated", "reduced"),
    ("improves", "worsens"),
    ("improved", "worsened"),
    ("improve", "worsen"),
    ("reduces", "raises"),
    ("reduce", "raise"),
    ("lowers", "raises"),
    ("enhances", "suppresses"),
    ("enhanced", "suppressed"),
    ("promotes", "inhibits"),
    ("promote", "inhibit"),
    ("activates", "inhibits"),
    ("upregulates", "downregulates"),
    ("upregulated", "downregulated"),
    ("up-regulated", "down-regulated"),
    ("positive", "negative"),
    ("positively", "negatively"),
    ("beneficial", "harmful"),
    ("effective", "ineffective"),
    ("safe", "unsafe"),
    ("protective", "detrimental"),
    ("protects", "harms"),
    ("longer", "shorter"),
    ("gain", "loss"),
    ("above", "below"),
    ("before", "after"),
    ("superior", "inferior"),
    ("better", "worse"),
    ("benefit", "harm"),
    ("risk factor", "protective factor"),
    ("associated with", "not associated with"),
)
_AUXILIARY = r"\b(is|are|was|were|can|could|does|do|did|has|have|had|will|may|might|should|must)"
_AUXILIARY_NEGATION = re.compile(_AUXILIARY + r"\b(?!\s+not\b)", re.I)
_NEGATED = re.compile(_AUXILIARY + r"\s+not\s+", re.I)
# Drug- or gene-like names: mixed case with digits ("BRCA1"), or a drug-class suffix ("rituximab", "imatinib").
_DRUG_LIKE = re.compile(r"\b([A-Z][A-Za-z]*\d[\w-]*|[A-Za-z]+(?:mab|nib|vir|pril|sartan|statin|mycin|cillin|olol))\b")
_NUMBER = re.compile(r"(?<![\w.\-])(\d+(?:\.\d+)?)(\s?%|\s?-?fold| percent)?(?![\w.])")


_PRESENT = {third_person(verb): verb for verb in VERBS if verb not in {"be", "have"}}
_PAST = {
    (verb + "d" if verb.endswith("e") else verb[:-1] + "ied" if verb.endswith("y") else verb + "ed"): verb
    for verb in VERBS
    if verb not in {"be", "have"}
}


_NOT_BEFORE_VERB = {
    "a", "an", "the", "of", "in", "on", "for", "with", "to", "by", "from", "at", "as", "and", "or", "its", "their",
    "his", "her", "our", "these", "those", "this", "that", "some", "any", "no", "many", "several", "all", "both",
}  # fmt: skip


@dataclass(frozen=True)
class Counterfactual:
    claim: str
    kind: str  # negation, direction, number or swap


def negate(claim: str) -> str | None:
    """Remove a negation ("is not" -> "is", "no effect" -> "an effect") or add one after the first auxiliary;
    None when neither fits. A claim that already negates something is only ever un-negated ("not no" is no edit)."""
    if _NEGATED.search(claim):
        return _NEGATED.sub(lambda match: match.group(1) + " ", claim, count=1)
    no = re.search(r"\bno\s+(?:significant\s+)?(\w+)", claim, re.I)
    if no and no.group(1).lower() not in {"way", "longer", "matter", "one"}:  # idioms, not a negated finding
        article = "an" if no.group(1)[0].lower() in "aeiou" else "a"
        return claim[: no.start()] + (article + " " + no.group(1)) + claim[no.end() :]
    if re.search(r"\b(?:not|never|n't|no)\b", claim, re.I):
        return None
    verb = _main_verb(claim)
    if verb is not None and not _AUXILIARY_NEGATION.search(claim[: verb[0]]):
        start, end, negated = verb
        return claim[:start] + negated + claim[end:]
    for match in _AUXILIARY_NEGATION.finditer(claim):
        before = claim[: match.start()].rstrip()
        if not before or before.endswith((":", "?", ".")):
            continue  # a question-form headline ("Can herbs help?"), not a statement to negate
        following = claim[match.end() :].split()
        if match.group(1).lower() in {"has", "have", "had"} and not (
            following and re.fullmatch(r"been|[a-z]+(?:ed|en|own)", following[0])
        ):
            continue  # "had it" is possession: "had not it" is no sentence
        return claim[: match.end()] + " not" + claim[match.end() :]
    return None


def _main_verb(claim: str) -> tuple[int, int, str] | None:
    """The first known verb in the present (-s) or past (-ed) form after the first word, with its negation."""
    for match in re.finditer(r"\b[a-z]+\b", claim):
        if match.start() == 0 or claim[match.start() - 1] == "-":
            continue  # the first word is the subject; "SHIV-infected" is an adjective
        word = match.group(0)
        previous = claim[: match.start()].split()[-1].lower() if claim[: match.start()].split() else ""
        if previous in _NOT_BEFORE_VERB or previous.endswith("ed"):
            continue  # "the results", "yielded results": a noun that looks like a verb
        if word in _PRESENT:
            return match.start(), match.end(), "does not " + _PRESENT[word]
        if word in _PAST:
            return match.start(), match.end(), "did not " + _PAST[word]
    return None


def flip_direction(claim: str, *, unflippable: Collection[str] = (), skip_hyphenated: bool = False) -> str | None:
    """Swap the first direction word found for its opposite. Pairs with a word in `unflippable` are not tried;
    `skip_hyphenated` passes over a word that ends a hyphenated compound ("HIV-positive" names a group)."""
    for first, second in DIRECTION_PAIRS:
        if first in unflippable or second in unflippable:
            continue
        for word, opposite in ((first, second), (second, first)):
            for match in re.finditer(rf"\b{re.escape(word)}\b", claim, re.I):
                if skip_hyphenated and claim[max(0, match.start() - 1) : match.start()] == "-":
                    continue
                found = match.group(0)
                replacement = opposite[0].upper() + opposite[1:] if found[0].isupper() else opposite
                return claim[: match.start()] + replacement + claim[match.end() :]
    return None


def change_number(claim: str, rng: random.Random) -> str | None:
    """Change one number that reads as a result (a percentage, a fold change, a value with decimals, or any number
    above 1 that is not a year) to a clearly different value."""
    candidates = [
        match
        for match in _NUMBER.finditer(claim)
        if (
            match.group(2)
            or "." in match.group(1)
            or (1 < float(match.group(1)) < 1900 or float(match.group(1)) > 2100)
        )
        and not _in_brackets(claim, match.start())  # a reference number, "[12, 31]"
        and not re.match(r"\s?-?(?:month|year|week|day|hour)", claim[match.end() :])  # a period, not a result
    ]
    if not candidates:
        return None
    match = rng.choice(candidates)
    value = float(match.group(1))
    factor = rng.choice((0.3, 0.5, 2.0, 3.0))
    changed = value * factor
    if (match.group(2) and "%" in match.group(2)) or (match.group(2) or "").strip() == "percent":
        changed = min(changed, 99.0) if factor > 1 else changed
        if abs(changed - value) < 5:
            changed = value + 20 if value < 70 else value - 40
    decimals = len(match.group(1).split(".")[1]) if "." in match.group(1) else 0
    text = f"{changed:.{decimals}f}"
    if text == match.group(1):
        return None
    return claim[: match.start(1)] + text + claim[match.end(1) :]


def _in_brackets(text: str, position: int) -> bool:
    opened = text.rfind("[", 0, position)
    return opened != -1 and text.rfind("]", 0, position) < opened


def swap_term(claim: str, vocabulary: Sequence[str], rng: random.Random) -> str | None:
    """Replace a drug- or gene-like word (mixed case or digits, or a -mab/-nib/-vir/-pril/-statin/-mycin name) with
    another such word from other claims."""
    found = list(_DRUG_LIKE.finditer(claim))
    if not found or not vocabulary:
        return None
    match = rng.choice(found)
    choices = [term for term in vocabulary if term.lower() != match.group(0).lower()]
    if not choices:
        return None
    return claim[: match.start()] + rng.choice(choices) + claim[match.end() :]


def drug_like_terms(claims: Sequence[str]) -> list[str]:
    return sorted({match.group(0) for claim in claims for match in _DRUG_LIKE.finditer(claim)})


def counterfactual(claim: str, rng: random.Random, vocabulary: Sequence[str] = ()) -> Counterfactual | None:
    """One contradicting variant of `claim`, trying the edits in a seeded order; None when no edit applies."""
    edits = ["direction", "number", "negation"]
    rng.shuffle(edits)
    edits.append("swap")  # last: a swapped name can leave a claim the document is merely silent on
    for kind in edits:
        if kind == "direction":
            changed = flip_direction(claim)
        elif kind == "number":
            changed = change_number(claim, rng)
        elif kind == "negation":
            changed = negate(claim)
        else:
            changed = swap_term(claim, vocabulary, rng)
        if changed and changed != claim:
            return Counterfactual(claim=changed, kind=kind)
    return None
