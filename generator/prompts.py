"""Every prompt the product sends to a language model, in one place."""

from __future__ import annotations

ANSWER_SYSTEM = """\
You are a biomedical research assistant. Answer the question using only the information in the abstracts \
you are given. Write a concise answer of two to five sentences. End every sentence with the abstract_id of the \
abstract it comes from, in parentheses, for example (PUBMED:12345678). Cite only abstract_ids from the list. \
If the abstracts do not answer the question, say that the indexed literature does not answer it."""

ANSWER_USER = """\
Abstracts:
{abstracts}

Question: {question}
Answer in two to five sentences. End each sentence with the abstract_id it comes from, like (PUBMED:12345678)."""

# One worked example, given as a previous turn: small models copy a demonstrated format far more reliably
# than a described one (without it the 1.5B model wrote one sentence with every PMID stuck on the end).
EXAMPLE_ABSTRACTS = (
    (
        "11111111",
        "Metformin in type 2 diabetes: a randomised trial.",
        "In 300 adults with type 2 diabetes, metformin lowered HbA1c by 1.2 percentage points more than placebo "
        "over 24 weeks.",
    ),
    (
        "22222222",
        "Metformin added to insulin therapy.",
        "Adding metformin to insulin reduced the daily insulin dose by 20% without more hypoglycaemia.",
    ),
)
EXAMPLE_QUESTION = "Does metformin lower HbA1c in type 2 diabetes?"
EXAMPLE_ANSWER = (
    "Metformin lowered HbA1c by 1.2 percentage points more than placebo in adults with type 2 diabetes "
    "(PUBMED:11111111). Added to insulin, it also reduced the daily insulin dose by 20% (PUBMED:22222222)."
)

# The `chat-complete` style asks for a complete answer (three to six sentences) and shows one: the model writes
# about as many sentences as its example has. Its first example cited a different abstract in each sentence, and
# the 1.5B model copied that: on 20 PubMedQA questions (one relevant abstract among the five it reads) it padded
# answers with findings of unrelated abstracts and cited the question's own abstract less often than `chat` (85%
# against 90%; benchmarks/HISTORY.md). So the example now draws four of its five sentences from the one trial that
# answers the question (its design, result and harm, one finding a sentence) and leaves an unrelated abstract out.
# With it the model wrote 3.05 cited sentences an answer against chat's 1.95 and cited the own abstract in 95% of
# answers against 85% (same 20 questions, same run): it is the default.
COMPLETE_ANSWER_SYSTEM = """\
You are a biomedical research assistant. Answer the question using only the information in the abstracts \
you are given. Write a complete answer of three to six sentences: first the direct answer, then the findings \
behind it, one finding a sentence (the study and its population, the size of the effect, harms, disagreements \
between studies). Take several findings from an abstract that answers the question; leave out abstracts that do \
not bear on it. End every sentence with the abstract_id of each abstract it draws on, in parentheses, for example \
(PUBMED:12345678). Cite only abstract_ids from the list. If the abstracts do not answer the question, say that the \
indexed literature does not answer it."""

COMPLETE_ANSWER_USER = """\
Abstracts:
{abstracts}

Question: {question}
Answer in three to six sentences, one finding each. End each sentence with the abstract_id it comes from, like \
(PUBMED:12345678)."""

COMPLETE_EXAMPLE_ABSTRACTS = (
    (
        "11111111",
        "Metformin in type 2 diabetes: a randomised trial.",
        "We randomised 300 adults with type 2 diabetes to metformin or placebo for 24 weeks. Metformin lowered "
        "HbA1c by 1.2 percentage points more than placebo. Gastrointestinal side effects were more frequent with "
        "metformin (20% vs 8%).",
    ),
    (
        "33333333",
        "Vitamin D supplementation and falls in older adults.",
        "Among 2,000 adults over 70, vitamin D supplementation for two years did not reduce the rate of falls.",
    ),
    EXAMPLE_ABSTRACTS[1],
)
# The abstract about falls is there to be left out: the answer never cites it.
COMPLETE_EXAMPLE_UNRELATED = "33333333"
COMPLETE_EXAMPLE_ANSWER = (
    "Metformin lowers HbA1c in type 2 diabetes (PUBMED:11111111). A randomised trial gave 300 adults with type 2 "
    "diabetes metformin or placebo for 24 weeks (PUBMED:11111111). HbA1c fell by 1.2 percentage points more with "
    "metformin than with placebo (PUBMED:11111111). Added to insulin, metformin also reduced the daily insulin dose "
    "by 20% without more hypoglycaemia (PUBMED:22222222). Its main harm was gastrointestinal side effects, in 20% "
    "of patients against 8% with placebo (PUBMED:11111111)."
)

# A yes/no question's bottom line, decided from the retrieved abstracts before the answer is written, follows the
# question in the last user turn: on its own the 1.5B model opens nearly every answer with "Yes" (93 of 100 PubMedQA
# test questions), so the written answer was the weaker of the page's two verdicts, and the reader saw it first.
# Given the bottom line, the answer opens with it and its findings follow the evidence. Keys: the bottom line's
# answers (verifier.bottom_line.BOTTOM_LINES).
BOTTOM_LINE_NOTES = {
    "yes": 'Weighed together, the abstracts lean yes. Begin your answer with "Yes," and then report their findings, '
    "each sentence ending with the abstract_id it comes from.",
    "no": 'Weighed together, the abstracts lean no. Begin your answer with "No," and then report their findings, '
    "each sentence ending with the abstract_id it comes from.",
    "mixed": 'The abstracts disagree. Begin your answer with "The evidence is mixed:" and then report the findings on '
    "each side, each sentence ending with the abstract_id it comes from.",
    "not_enough": 'The abstracts do not settle this question. Begin your answer with "The evidence is not enough to '
    'answer yes or no:" and then report what they do find, each sentence ending with the abstract_id it comes from.',
}

# A question asked of the asker's own library gives the model pages only, and the examples above then cite pages: with
# the PubMed example the 0.5B model cited the library page `DOC:21:p1` as `PUBMED:21:p1`, or copied the example's
# `PUBMED:12345678`, and its answer cited nothing it was given. Each example abstract becomes a page of its own.
PUBMED_EXAMPLE_CITATION = "(PUBMED:12345678)"
LIBRARY_EXAMPLE_CITATION = "(DOC:12:p3)"
LIBRARY_EXAMPLE_PAGES = {"11111111": "DOC:11:p1", "22222222": "DOC:22:p2", "33333333": "DOC:33:p1"}

# `label` is `PUBMED:<pmid>`, or a library page's `DOC:<id>:p<page>` (generator.citations.citation_label).
ABSTRACT_BLOCK = "abstract_id: {label}\ntitle: {title}\nabstract: {abstract}"

# The `verifai` style: the exact plain-text prompt the fine-tuned VerifAI model
# (BojanaBas/Mistral-7B-Instruct-v0.2-pqa-10) was trained on, sent as a completion without a chat template.
# Its instruction is the question followed by the abstracts, each as `abstract_id: PUBMED:<pmid>` and its text.
VERIFAI_PROMPT = """\
Respond to the Instruction using only the information provided in the relevant abstracts in ```Abstracts``` below.

Instruction: {question}

Abstracts:
```{abstracts}```

Answer:"""
VERIFAI_ABSTRACT_BLOCK = "abstract_id: {label}\n{title}\n{abstract}\n\n"

# The stance of an answer, for measuring answers against PubMedQA's yes / no / maybe labels.
STANCE_SYSTEM = """\
You read a question and an answer written from the literature. Reply with exactly one word: yes if the answer \
says the answer to the question is yes, no if it says no, maybe if it is uncertain, mixed or does not say."""
STANCE_USER = "Question: {question}\nAnswer: {answer}\nStance (yes, no or maybe):"

CANNOT_ANSWER = "The indexed literature does not answer this question: no relevant abstracts were found."

JUDGE_SYSTEM = """\
You check whether evidence sentences from a scientific abstract support a claim. Reply with exactly one word:
SUPPORT if the evidence states the claim or directly implies it,
CONTRADICT only if the evidence explicitly states the opposite of the claim or a clearly different result,
NO_EVIDENCE if the evidence is about the topic but does not establish whether the claim is true.
Being on the same topic is not support, and not contradiction either."""

# Few-shot pairs: without them a small model almost never answers CONTRADICT (field notes). With them the 1.5B
# model over-answers CONTRADICT and is near chance on SciFact dev (macro-F1 about 0.27 on balanced pairs, whatever
# the order of these examples; `manage.py evaluate verification` measures it beside the trained cross-encoder,
# which is the default verifier).
JUDGE_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    (
        "Vitamin C supplementation prevents the common cold.",
        "Regular vitamin C supplementation did not reduce the incidence of colds in the general population.",
        "CONTRADICT",
    ),
    (
        "Aspirin reduces the risk of a second heart attack.",
        "In patients with a previous myocardial infarction, low-dose aspirin lowered the rate of recurrent "
        "infarction by 25% compared with placebo.",
        "SUPPORT",
    ),
    (
        "Statins lower the risk of dementia.",
        "Statins reduced LDL cholesterol by 40% and were well tolerated over five years.",
        "NO_EVIDENCE",
    ),
    (
        "BRCA1 mutations increase the risk of ovarian cancer.",
        "Carriers of BRCA1 mutations had a cumulative ovarian cancer risk of 40% by age 70, against 1.3% in the "
        "general population.",
        "SUPPORT",
    ),
    (
        "Metformin use is associated with lower cancer mortality.",
        "Metformin is the first-line drug for type 2 diabetes and acts mainly by reducing hepatic glucose output.",
        "NO_EVIDENCE",
    ),
)

JUDGE_USER = "Claim: {claim}\nEvidence: {evidence}\nAnswer:"

# Rewriting a follow-up as a standalone question (generator/follow_up.py): retrieval reads only the question it is
# given, so "Is it safe in children?" must name what "it" is. The worked example, a previous turn as for answers,
# shows the one-line reply small models otherwise pad with a preamble or an answer.
FOLLOW_UP_SYSTEM = """\
You rewrite a follow-up question from a conversation about the biomedical literature as one standalone question \
that a literature search can answer without the conversation. Keep the follow-up's meaning, and name what its words \
like "it", "they", "this drug" or "the same" refer to. Do not answer the question. Reply with the standalone \
question only, on one line."""
FOLLOW_UP_TURN = "Earlier question: {question}\nAnswer: {answer}"
FOLLOW_UP_USER = """\
Conversation:
{thread}

Follow-up question: {follow_up}
Standalone question:"""
FOLLOW_UP_EXAMPLE_THREAD = FOLLOW_UP_TURN.format(
    question="Does metformin lower HbA1c in type 2 diabetes?",
    answer="Metformin lowered HbA1c by 1.2 percentage points more than placebo in adults with type 2 diabetes.",
)
FOLLOW_UP_EXAMPLE_QUESTION = "Is it safe in kidney disease?"
FOLLOW_UP_EXAMPLE_REWRITE = "Is metformin safe in patients with type 2 diabetes and chronic kidney disease?"

# Claim extraction for the deep check (verifier/claim_extraction.py): every cited sentence of an answer rewritten as
# self-contained atomic claims, in one call whose reply the server holds to a JSON schema. The worked example, a
# previous turn as for answers, shows a compound sentence split in two and a pronoun resolved from the sentence before.
CLAIMS_SYSTEM = """\
You split the sentences of an answer about the biomedical literature into atomic claims, so that each claim can be \
checked against a scientific abstract on its own. For each sentence you are asked about, write one claim per finding \
it states: a short, complete sentence that names its subject (replace words like "it", "they", "this drug" or "the \
same" with what they refer to, from the question and the sentences before it), keeps the sentence's numbers, \
population and hedges, and adds nothing the sentence does not say. A sentence that states one finding gives one \
claim. Reply with JSON only."""
CLAIMS_QUESTION = "Question: {question}\n"
CLAIMS_SENTENCE = "[{number}] {text}"
CLAIMS_USER = """\
{question}Answer:
{sentences}

Split sentences {numbers} into claims. JSON: {{"sentences": [{{"sentence": <number>, "claims": ["<claim>", ...]}}]}}"""
CLAIMS_EXAMPLE_QUESTION = "Does metformin lower HbA1c in type 2 diabetes?"
CLAIMS_EXAMPLE_SENTENCES = (
    "Metformin lowered HbA1c by 1.2 percentage points more than placebo in adults with type 2 diabetes, and it "
    "reduced body weight.",
    "Added to insulin, it also reduced the daily insulin dose by 20%.",
)
CLAIMS_EXAMPLE_REPLY = (
    '{"sentences": [{"sentence": 1, "claims": ["Metformin lowered HbA1c by 1.2 percentage points more than placebo '
    'in adults with type 2 diabetes.", "Metformin reduced body weight in adults with type 2 diabetes."]}, '
    '{"sentence": 2, "claims": ["Metformin added to insulin reduced the daily insulin dose by 20%."]}]}'
)
