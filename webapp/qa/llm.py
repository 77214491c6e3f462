"""The configured language model client and the tokenizer of the model it serves, as generator.registry builds them."""

from __future__ import annotations

import logging
import threading
from functools import cache

from django.conf import settings

from generator.base import LLM, LLMSettings, TokenCounter
from generator.errors import GenerationError
from generator.registry import build_llm, build_token_counter
from generator.warm_up import warm_prompt_prefix
from generator.yes_no_reading import YesNoReader
from verifier.bottom_line import AbstractReader, BottomLineRule
from webapp.qa.pipeline import PipelineSettings, default_pipeline_settings

logger = logging.getLogger(__name__)


def llm_settings_for(pipeline: PipelineSettings) -> LLMSettings:
    return LLMSettings(
        base_url=pipeline.llm_base_url,
        model=pipeline.llm_model,
        api_key=settings.VERIMED.llm.api_key,
        timeout_seconds=settings.VERIMED.llm.timeout_seconds,
        max_retries=settings.VERIMED.llm.max_retries,
        server_kind=pipeline.llm_server_kind,
    )


def llm_for(pipeline: PipelineSettings) -> LLM:
    return build_llm(llm_settings_for(pipeline))


def token_counter_for(pipeline: PipelineSettings) -> TokenCounter:
    return build_token_counter(llm_settings_for(pipeline))


def yes_no_reader_for(pipeline: PipelineSettings) -> YesNoReader:
    """The answer LLM's yes/no reader for the bottom line (`generator.yes_no_reading`), one per served model in a
    worker process: it tokenizes the yes and no spellings once, not for every yes/no question (eight requests)."""
    return _yes_no_reader(llm_settings_for(pipeline))


@cache
def _yes_no_reader(llm_settings: LLMSettings) -> YesNoReader:
    return YesNoReader(build_llm(llm_settings), build_token_counter(llm_settings))


def closest_abstract_reader(pipeline: PipelineSettings, rule: BottomLineRule) -> AbstractReader | None:
    """The answer LLM's reading of the closest abstract for the bottom line, or None when the rule does not weigh it
    (`bottom_line.json`): both stages that make a consensus ask it the same way."""
    return yes_no_reader_for(pipeline).log_odds_no if rule.reads_with_model else None


def warm_up_llm_in_background() -> threading.Thread | None:
    """Have the configured server read the answer prompt's constant prefix now, in a thread, so that a worker's
    start is not held up; None for the fake model, which has no prompt to read."""
    pipeline = default_pipeline_settings()
    if pipeline.llm_server_kind == "fake":
        return None

    def warm() -> None:
        try:
            generation = pipeline.generation
            if warm_prompt_prefix(llm_for(pipeline), generation.prompt_style, abstract_chars=generation.abstract_chars):
                logger.info("the language model has read the answer prompt's constant prefix")
        except GenerationError as exc:  # the first question will read it instead
            logger.warning("could not warm the language model's prompt prefix: %s", exc)

    thread = threading.Thread(target=warm, name="llm-warm-up", daemon=True)
    thread.start()
    return thread
