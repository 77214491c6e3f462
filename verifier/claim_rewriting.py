"""Yes/no questions as declarative claims: "Is Selinexor effective for multiple myeloma?" becomes
"Selinexor is effective for multiple myeloma."

BioASQ and PubMedQA yes/no questions put the auxiliary first. The rewrite moves it behind the subject, which
means finding where the subject ends: the main verb after do/does/did and the modals, "been" or a participle
after has/have, and the start of the predicate after a copula (an article, a predicate adjective, or a
participle followed by a preposition). Rules, not a parser: no tagger ships offline, and these questions are
short and formulaic. A question the rules cannot read returns None, never a garbled claim.
"""

from __future__ import annotations

import re

COPULAS = {"is", "are", "was", "were"}
DO_FORMS = {"does", "do", "did"}
MODALS = {"can", "could", "should", "would", "will", "may", "might", "must", "shall"}
PERFECT = {"has", "have", "had"}
AUXILIARIES = COPULAS | DO_FORMS | MODALS | PERFECT

_ARTICLES = {"a", "an", "the"}
_PREPOSITIONS = {
    "by", "in", "with", "to", "for", "as", "on", "at", "from", "into", "during", "after", "among", "between",
    "within", "through", "than", "against", "via", "upon", "over", "under", "without", "across", "of",
}  # fmt: skip
# Words that start a predicate after "is/are": adjectives and participles these questions use as predicates.
_PREDICATE_WORDS = {
    "effective", "associated", "involved", "present", "possible", "able", "necessary", "required", "useful", "safe",
    "better", "worse", "higher", "lower", "more", "less", "increased", "decreased", "reduced", "elevated", "related",
    "linked", "common", "rare", "prognostic", "predictive", "diagnostic", "essential", "important", "beneficial",
    "superior", "inferior", "sufficient", "available", "expressed", "detectable", "detected", "responsible", "due",
    "part", "considered", "efficacious", "approved", "recommended", "indicated", "similar", "different",
    "correlated", "dependent", "specific", "toxic", "lethal", "contagious", "hereditary", "inherited", "caused",
    "used", "found", "located", "observed", "implicated", "affected", "regulated", "mediated", "influenced",
    "characterized", "characterised", "mutated", "altered", "upregulated", "downregulated", "overexpressed",
    "secreted", "localized", "localised", "known", "needed", "feasible", "accurate", "reliable", "sensitive",
    "resistant", "susceptible", "prevalent", "frequent", "active", "inactive", "functional", "capable", "critical",
    "crucial", "helpful", "harmful", "protective", "curable", "treatable",
    "preventable", "transmissible", "infectious", "contraindicated", "safer", "cost-effective", "appropriate",
    "efficient", "advantageous", "comparable", "equivalent", "independent", "unique", "normal", "abnormal",
}  # fmt: skip
# Adverbs and quantifiers that open a predicate whatever follows them ("more divergent than", "not required").
_PREDICATE_OPENERS = {
    "more", "less", "still", "always", "often", "usually", "typically", "generally", "also", "only", "not",
    "currently", "ever", "truly", "really", "indeed", "equally", "as", "better", "worse",
}  # fmt: skip
# Words that end a predicate adjective's phrase: "effective for", "safe and", "necessary." (end of question).
_AFTER_PREDICATE = _PREPOSITIONS | {"", "and", "or", "than", "enough"}
_IRREGULAR_PARTICIPLES = {
    "been", "taken", "given", "shown", "known", "seen", "proven", "written", "chosen", "driven", "broken", "hidden",
    "risen", "fallen", "grown", "drawn", "arisen", "undertaken", "thought", "found", "made", "held", "built", "done",
    "brought", "caught", "taught", "sought", "bound", "spread", "led", "kept", "left", "lost", "met", "paid", "put",
    "read", "run", "set", "sent", "spent", "told", "understood", "won", "become", "begun", "come", "gone",
}  # fmt: skip
# Main verbs after do/does/did and the modals. A question whose verb is missing here falls back to the first
# lower-case word after a one-word subject, which is right for most short questions.
VERBS = {
    "affect", "alter", "cause", "contain", "increase", "decrease", "reduce", "improve", "inhibit", "induce",
    "interact", "bind", "regulate", "play", "lead", "prevent", "influence", "predict", "correlate", "exist", "occur",
    "have", "require", "mediate", "promote", "suppress", "activate", "cross", "target", "protect", "impair",
    "enhance", "lower", "raise", "modulate", "confer", "result", "associate", "express", "encode", "undergo", "show",
    "need", "work", "help", "respond", "benefit", "act", "be", "form", "localize", "localise", "participate",
    "contribute", "depend", "differ", "change", "worsen", "extend", "shorten", "delay", "accelerate", "block",
    "trigger", "stimulate", "attenuate", "ameliorate", "exacerbate", "deplete", "restore", "control", "cure",
    "treat", "kill", "infect", "transmit", "replicate", "modify", "phosphorylate", "ubiquitinate", "methylate",
    "cleave", "degrade", "stabilize", "stabilise", "destabilize", "translocate", "colocalize", "co-localize",
    "interfere", "compete", "outperform", "predispose", "limit", "slow", "boost", "elevate",
    "upregulate", "downregulate", "decline", "rise", "fall", "remain", "persist", "develop", "lose", "gain",
    "produce", "release", "secrete", "carry", "harbor", "harbour", "possess", "lack", "display", "exhibit", "present",
    "relate", "link", "serve", "function", "operate", "enter", "use", "make", "give", "allow", "enable", "mean",
    "reflect", "indicate", "signal", "sense", "recognize", "recognise", "detect", "identify", "distinguish",
    "discriminate", "reverse", "rescue", "abolish", "abrogate", "potentiate", "sensitize", "sensitise", "shift",
    "drive", "determine", "define", "explain", "account", "confound", "bias", "support", "reach",
    "survive", "die", "grow", "proliferate", "migrate", "invade", "metastasize", "metastasise", "recur", "relapse",
    "recapitulate", "sustain", "prolong", "run", "appear", "come", "go", "get", "take", "keep", "put", "see", "look",
    "seem", "tend", "vary", "matter", "add", "apply", "hold", "meet", "pass", "justify", "warrant",
    "exceed", "precede", "follow", "coexist", "co-exist", "impact", "know", "emerge", "evolve", "compromise",
}  # fmt: skip
_NOUN_ENDINGS = ("tion", "sion", "ment", "ness", "ity", "ism", "ist", "ance", "ence", "ogy", "ics", "ia", "ure")
_LEADING_CLAUSE = re.compile(
    r"^(?P<clause>.+?)(?P<mark>,|:|\.|--|-)\s*(?P<question>(?:{})\b.*)$".format("|".join(sorted(AUXILIARIES))), re.I
)
_PRONOUNS = {"it", "they", "this", "these", "there"}
_TAG_QUESTION = re.compile(r",?\s*(?:yes or no|true or false)\s*$", re.I)


# "Can you summarise ...?" asks for a text, not a yes or no.
_REQUEST = re.compile(
    r"^(?:can|could|would|will)\s+you\s+(?:summari[sz]e|list|describe|explain|name|tell|give|provide|outline|define|"
    r"compare|mention)\b",
    re.I,
)
# A question-word opening is never yes/no, whatever follows a comma ("Which gene, when mutated, is ...?").
_OPEN_QUESTION = re.compile(r"^(?:what|which|who|whom|whose|when|where|why|how)\b", re.I)


# A title asked as a question, as many papers (and PubMedQA's questions) are: "Aripiprazole: a new risk factor for
# pathological gambling?" asks whether aripiprazole is one. Read only where the part after the colon opens as a
# predicate would (an article, "another", an opener such as "really", or a predicate adjective), never a verb phrase
# ("Starting insulin: continue oral agents?" is no claim to rewrite).
_TITLE_QUESTION = re.compile(r"^(?P<subject>[^:?]{3,}?)\s*(?::|--)\s*(?P<predicate>[^:?]{3,}?)\s*\?$")
_TITLE_PREDICATE_OPENERS = _ARTICLES | {"another"} | _PREDICATE_OPENERS | _PREDICATE_WORDS


def title_question_claim(question: str) -> str | None:
    """ "Subject: a predicate?" as "Subject is a predicate."; None for any other form."""
    match = _TITLE_QUESTION.match(" ".join(question.split()))
    if match is None or _OPEN_QUESTION.match(match.group("predicate")):
        return None
    predicate = match.group("predicate")
    if _first_word(predicate).strip(",") not in _TITLE_PREDICATE_OPENERS or _first_word(predicate) in AUXILIARIES:
        return None
    return f"{_capitalise(match.group('subject').strip())} is {predicate}."


# A title asked as a question in any other words ("Storage of vaccines in the community: weak link in the cold
# chain?", "Malnutrition, a new inducer for arterial calcification?"): yes/no by its form, though rarely a claim the
# rules can read. PubMedQA's questions are article titles; 13 of the 18 among PQA-L's non-test items that the other
# rules miss have this form, and none of BioASQ's 1,674 other questions does. A question word anywhere ("Migraine:
# which treatment?") makes it an open question.
_TITLE_FORM = re.compile(r"^[^:?]{3,}?(?:\s*(?::|--)\s*|\.\s+|,\s+(?:a|an|another|the)\s+)[^:?]{3,}\?$")
_QUESTION_WORD = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how)\b", re.I)


def is_title_question(text: str) -> bool:
    """ "Subject: predicate?", "Subject -- predicate?", "Subject. Predicate?" or "Subject, a predicate?", with no
    question word anywhere."""
    flat = " ".join(text.split())
    return _TITLE_FORM.match(flat) is not None and _QUESTION_WORD.search(flat) is None


def is_yes_no_question(text: str) -> bool:
    """Asked by its form, as BioASQ's yes/no questions are written: an auxiliary verb first ("Is X effective for
    Y?"), or after a leading clause ("In adults, is X ...?", "Double reading: is it necessary?"), or a statement
    tagged "yes or no?", or a title asked as a question (`is_title_question`). The question mark may be missing after
    an auxiliary first, as typed questions often are.

    On the golden sets 7B-11B this finds 608 of the 611 yes/no questions; 16 of the 1,674 others read as yes/no
    too, mostly "Is X A or B?" choices and summary questions asked in yes/no form.
    """
    flat = " ".join(text.split())
    if not flat:
        return False
    bare = flat.rstrip("?. ")
    if _TAG_QUESTION.search(bare):
        return True
    if _REQUEST.match(flat):
        return False
    if _first_word(flat).strip(",") in AUXILIARIES:
        return True
    if not flat.endswith("?") or _OPEN_QUESTION.match(flat):
        return False
    return _LEADING_CLAUSE.match(bare) is not None or title_question_claim(flat) is not None or is_title_question(flat)


def yes_no_claim(question: str) -> str | None:
    """The claim a yes/no question asks about ("Is X effective?" -> "X is effective."); None when the question is
    not yes/no by its form or the rules cannot read it."""
    if not is_yes_no_question(question):
        return None
    return question_to_claim(question) or title_question_claim(question)


def question_to_claim(question: str) -> str | None:
    """The declarative claim a "yes" answer would make, or None when the rules cannot read the question."""
    text = " ".join(question.strip().split()).rstrip("?.").strip()  # a typed question may end in "." or nothing
    if _TAG_QUESTION.search(text):  # "X is Y, yes or no?" is already the claim
        statement = _TAG_QUESTION.sub("", text).strip()
        return None if _first_word(statement) in AUXILIARIES else _capitalise(statement) + "."
    prefix = ""
    if _first_word(text) not in AUXILIARIES:
        match = _LEADING_CLAUSE.match(text)
        if not match:
            return None
        clause, text = match.group("clause").strip(), match.group("question")
        words = text.split(" ")
        if match.group("mark") == ",":
            prefix = clause + ", "  # "Based on trial data, can X ...": the clause belongs to the claim
        elif len(words) > 1 and words[1].lower() in _PRONOUNS - {"there"}:
            text = " ".join([words[0], clause, *words[2:]])  # "Double reading: is it necessary?" names its subject
    words = text.split(" ")
    auxiliary, rest = words[0].lower(), words[1:]
    if len(rest) < 2:
        return None
    if auxiliary in COPULAS and rest[0].lower() == "there":
        body = ["There", auxiliary, *rest[1:]]
    elif auxiliary in COPULAS:
        split = _predicate_start(rest)
        if split is None:
            return None
        body = [*rest[:split], auxiliary, *rest[split:]]
    elif auxiliary in PERFECT:
        split = _participle_start(rest)
        if split is None:
            return None
        body = [*rest[:split], auxiliary, *rest[split:]]
    else:
        split = _verb_start(rest)
        if split is None:
            return None
        verb = rest[split]
        if auxiliary == "does":
            body = [*rest[:split], third_person(verb), *rest[split + 1 :]]
        elif auxiliary == "do":
            body = rest  # "Do nematodes contain ...": dropping "do" leaves the claim
        else:  # did and the modals stay, behind the subject
            body = [*rest[:split], auxiliary, *rest[split:]]
    sentence = prefix + " ".join(body)
    if not prefix:
        sentence = _capitalise(sentence)
    return sentence + "."


def third_person(verb: str) -> str:
    """The -s form of a base verb ("reduce" -> "reduces", "cross" -> "crosses", "modify" -> "modifies")."""
    lower = verb.lower()
    if lower == "have":
        return "has"
    if lower == "be":
        return "is"
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _first_word(text: str) -> str:
    return text.split(" ", 1)[0].lower()


def _capitalise(text: str) -> str:
    first = text.split(" ", 1)[0]
    # Keep gene and drug names as written ("p53", "mTOR", "iPSCs"); only a plain lower-case word is capitalised.
    if re.fullmatch(r"[a-z][a-z'-]*", first):
        return text[0].upper() + text[1:]
    return text


def _bare(word: str) -> str:
    return word.lower().strip(",;:()")


def _predicate_start(rest: list[str]) -> int | None:
    """Where the predicate begins after a copula; the subject keeps at least one word."""
    for index in range(1, len(rest)):
        word, previous = _bare(rest[index]), _bare(rest[index - 1])
        following = _bare(rest[index + 1]) if index + 1 < len(rest) else ""
        if previous in _ARTICLES:
            continue
        if word in _PREDICATE_OPENERS or word == "being":
            return index
        if re.fullmatch(r"[a-z-]{3,}ing", word) and following in _ARTICLES:
            return index  # "receiving the same message": a progressive predicate
        if word in _PREDICATE_WORDS and following in _AFTER_PREDICATE:
            return index
        if word in _ARTICLES and previous not in _PREPOSITIONS:
            return index
        if _is_participle(word) and following in _AFTER_PREDICATE:
            return index
    for index in range(1, len(rest)):
        word = _bare(rest[index])
        if _bare(rest[index - 1]) in _ARTICLES:
            continue
        if word in _PREDICATE_WORDS or word == "being" or re.fullmatch(r"[a-z-]{3,}ing", word):
            return index  # "being used", "receiving the same message": a progressive predicate
    for index in range(1, len(rest)):  # weaker cues: adjective endings, or a preposition after a one-word subject
        word = _bare(rest[index])
        if re.fullmatch(r"[a-z-]+(?:ive|able|ible|ous|ful)", word) and _bare(rest[index - 1]) not in _ARTICLES:
            return index
    if len(rest) == 2:
        return 1
    return None


def _is_participle(word: str) -> bool:
    return word in _IRREGULAR_PARTICIPLES or bool(re.fullmatch(r"[a-z-]{3,}ed", word))


def _participle_start(rest: list[str]) -> int | None:
    bare = [_bare(word) for word in rest]
    if "been" in bare[1:]:
        return bare.index("been", 1)
    for index in range(1, len(rest)):
        if bare[index] in {"any", "a", "an"} or (_is_participle(bare[index]) and bare[index - 1] not in _ARTICLES):
            return index
    return None


def _verb_start(rest: list[str]) -> int | None:
    for index in range(1, len(rest)):
        word, previous = _bare(rest[index]), _bare(rest[index - 1])
        if word in VERBS and previous not in _ARTICLES and previous not in _PREPOSITIONS:
            return index
    for index in range(1, len(rest)):  # no known verb: the first word that looks like a base-form verb
        word, previous = rest[index], _bare(rest[index - 1])
        if previous in _ARTICLES or previous in _PREPOSITIONS or not re.fullmatch(r"[a-z-]+", word):
            continue
        plural = word.endswith("s") and not word.endswith("ss")
        if not plural and not word.endswith(_NOUN_ENDINGS) and word not in _PREPOSITIONS | _ARTICLES:
            return index
    return None
