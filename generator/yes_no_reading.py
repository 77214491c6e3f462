"""The answer LLM's reading of one abstract on a yes/no question: how much likelier it finds "no" than "yes".

Asked to answer a PubMedQA question from its own abstract, the 1.5B model writes "Yes" to nearly everything, yet the
odds it gives "No" over "Yes" for the first answer token order the "no" questions above the "yes" ones well
(benchmarks/HISTORY.md, "The bottom line"). So the reading is that log-odds, log p(no) - log p(yes), and a threshold
fitted on dev (`verifier.bottom_line`) turns it into a side.

Neither server returns token probabilities as we run them (llama-cpp-python's only when the model keeps every
position's logits: 8,192 x 151,936 floats, 5 GB), but both take OpenAI's `logit_bias`. Asked for one greedy token
with each spelling of "yes" and "no" raised by `LIFT` (far above any other token) and "no"'s by a further `b`, the
model answers "no" exactly when b > logit(yes) - logit(no); bisecting on b finds that difference to within
`2 * SPAN / 2**STEPS`. The prompt is read once: each later request differs only in its biases, and llama.cpp keeps
the prompt's state between requests (re-reading its last token), vLLM its prefix cache. A spelling is a word that is
one token in the model's vocabulary; each side's logit is its likeliest spelling's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from generator.base import Message, TokenChooser, Tokenizer
from generator.errors import LLMResponseError

SYSTEM = "You are a biomedical expert. Read the abstract and answer the research question with yes, no, or maybe."
ASK = "Abstract: {abstract}\n\nQuestion: {question}\n\nAnswer with one word: yes, no, or maybe."
TITLED = "{title}\n{abstract}"  # an abstract with its title (PQA-L's have none)
YES_SPELLINGS = ("Yes", "yes", " Yes", " yes")
NO_SPELLINGS = ("No", "no", " No", " no")
LIFT = 50.0  # over any other token's logit; with SPAN, inside the +-100 vLLM allows
SPAN = 12.0  # log-odds beyond +-SPAN read as +-SPAN: e^12 to one either way
STEPS = 7  # bisection steps: a resolution of 24 / 128, about 0.19 in log-odds


def reading_messages(question: str, abstract: str, title: str = "") -> list[Message]:
    text = TITLED.format(title=title.strip(), abstract=abstract) if title.strip() else abstract
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": ASK.format(abstract=text, question=question)},
    ]


@dataclass(frozen=True)
class YesNoReader:
    """Reads log p(no) - log p(yes) of the model's first answer token, through `choose_token`."""

    model: TokenChooser
    tokenizer: Tokenizer

    @cached_property
    def _spellings(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        sides = []
        for spellings in (YES_SPELLINGS, NO_SPELLINGS):
            ids = {ids[0] for ids in (self.tokenizer.token_ids(word) for word in spellings) if len(ids) == 1}
            if not ids:
                raise LLMResponseError(f"none of {spellings} is one token in the served model's vocabulary")
            sides.append(tuple(sorted(ids)))
        return sides[0], sides[1]

    def log_odds_no(self, question: str, title: str, abstract: str) -> float:
        """log p(no) - log p(yes) of the first answer token to `question` asked of the abstract, within +-SPAN."""
        messages = reading_messages(question, abstract, title)
        low, high = -SPAN, SPAN  # the bias on "no" at which the answer flips lies between
        for _ in range(STEPS):
            bias = (low + high) / 2
            if self._answers_no(messages, bias):
                high = bias
            else:
                low = bias
        return -(low + high) / 2

    def _answers_no(self, messages: list[Message], no_bias: float) -> bool:
        yes_ids, no_ids = self._spellings
        lifted = {token: LIFT for token in yes_ids} | {token: LIFT + no_bias for token in no_ids}
        token = self.model.choose_token(messages, logit_bias=lifted).strip().lower()
        if token not in ("yes", "no"):
            raise LLMResponseError(
                f"the model answered {token!r} with yes and no lifted: the server ignores logit_bias"
            )
        return token == "no"
