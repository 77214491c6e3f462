"""`manage.py stack start|stop|status`: run the embedded profile's site, worker, LLM server and background embedder in
the background."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from webapp.corpus.services.background_embedding import semantic_coverage
from webapp.ops.stack import Stack, services

NAMES = ["embedder", "web", "worker", "llm"]


class Command(BaseCommand):
    help = "Start, stop or show the background processes of the embedded profile."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["start", "stop", "status"])
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--only",
            action="append",
            choices=NAMES,
            default=[],
            help="Start or stop only this process (repeatable), leaving the others as they are: to restart one that "
            "died, such as the LLM server, without stopping the site.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        stack = Stack(settings.VAR_DIR)
        action = options["action"]
        if action == "status":
            for name in NAMES:
                pid = stack.running_pid(name)
                self.stdout.write(f"{name:<7} {'running, pid ' + str(pid) if pid else 'stopped'}")
            return
        names = options["only"] or NAMES
        stopped = stack.stop(names)
        if stopped:
            self.stdout.write(f"stopped: {', '.join(stopped)}")
        if action == "stop":
            return
        planned = services(
            host=options["host"],
            port=options["port"],
            llm_base_url=settings.VERIMED.llm.base_url,
            llm_model=settings.VERIMED.llm.model,
            llm_server_kind=settings.VERIMED.llm.server_kind,
            model_cache=settings.VERIMED.paths.model_cache,
            llm_context_tokens=settings.VERIMED.generation.context_tokens,
            llm_prompt_lookup_tokens=settings.VERIMED.generation.prompt_lookup_tokens,
        )
        planned = [service for service in planned if service.name in names]
        try:
            stack.start(planned, on_wait=lambda name: self.stdout.write(f"starting {name}..."))
        except RuntimeError as exc:
            stack.stop(names)
            raise CommandError(str(exc)) from exc
        if options["only"]:
            self.stdout.write(self.style.SUCCESS(f"started: {', '.join(service.name for service in planned)}"))
            return
        self.stdout.write(self.style.SUCCESS(f"VeriMed is running at http://{options['host']}:{options['port']}/"))
        coverage = semantic_coverage()
        if not coverage.complete:
            self.stdout.write(
                f"{coverage.articles - coverage.embedded} of {coverage.articles} articles are being embedded in the "
                "background: questions are answered now, keyword search covers every article and semantic search "
                "covers more as they arrive (progress on /index/ and in embedder.log)"
            )
        self.stdout.write(f"logs: {stack.log_dir}   stop with: make stop")
