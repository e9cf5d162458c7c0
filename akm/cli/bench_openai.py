"""``akm bench openai-overhead``: what ``POST /v1/chat/completions`` adds over ``POST /v1/answers``.

The API app runs in this process (FastAPI's TestClient) over a throwaway project of a few pages,
ingested with the hashing embedder, and the production answer pipeline with a fixed generator
that copies the chosen passage in place of the language model. ``--service replay`` answers
every request with the events of one pipeline answer instead, so the figures hold only the two
routes' own work. The measurement is ``akm.bench.openai_overhead``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from akm.bench.answers import SquadArticle, bench_settings, build_project
from akm.bench.openai_overhead import DEFAULT_QUESTION, TARGET_MS, format_table, measure, write_report
from akm.settings import Settings

EXIT_OK = 0
EXIT_OVER_TARGET = 1
EXIT_USAGE = 2

PAGES = (
    SquadArticle(
        "Retrieval",
        (
            "Retrieval runs four lanes: exact, qmd-lexical, qmd-semantic and graphify-relationship.",
            "The lanes' candidates are fused by deterministic priority, with at most four rows per source.",
        ),
        (),
    ),
    SquadArticle(
        "Storage",
        (
            "The SQLite store lives in the data directory, in the file akm.sqlite3.",
            "PostgreSQL with the pgvector extension can hold the same tables.",
        ),
        (),
    ),
    SquadArticle(
        "Verification",
        (
            "A claim is supported only when a directly read passage supports it.",
            "Every answer is stored as an evidence packet with its verdict and reasons.",
        ),
        (),
    ),
)


class CopyingGenerator:
    """Copies the first passage of the prompt, word by word, in place of the language model."""

    def stream(
        self, prompt: Any, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, Any]:
        from akm.answer import GeneratedAnswer

        text = prompt.passages[0] if prompt.passages else ""
        words = text.split(" ")
        for index, word in enumerate(words):
            yield word if index == len(words) - 1 else word + " "
        return GeneratedAnswer(text=text, decode={"new_tokens": len(words), "source": "fixed"})


def register(bench_subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = bench_subparsers.add_parser(
        "openai-overhead",
        help="latency POST /v1/chat/completions adds over POST /v1/answers (in-process, fixed generator)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rounds", type=int, default=200, help="timed requests per route (default 200)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed requests per route first")
    parser.add_argument("--question", default=DEFAULT_QUESTION)
    parser.add_argument("--stream", action="store_true", help="time streamed replies (until the last event)")
    parser.add_argument(
        "--service",
        choices=("pipeline", "replay"),
        default="pipeline",
        help="pipeline: the answer pipeline with a fixed generator; replay: one pipeline answer replayed",
    )
    parser.add_argument("--json", dest="json_out", type=Path, default=None, help="write the figures here")
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 when the overhead exceeds {TARGET_MS:g} ms at the median",
    )
    parser.set_defaults(handler=run_bench)


class ReplayAnswerService:
    """Answers every request with the same recorded events (nothing generated, nothing stored)."""

    def __init__(self, events: list[Any]) -> None:
        self.events = events

    def stream(self, request: Any, cancel: Any) -> Iterator[Any]:
        yield from self.events

    def answer(self, request: Any, cancel: Any) -> dict[str, Any]:
        final: dict[str, Any] = self.events[-1].data
        return final

    def load(self) -> None:
        return None

    def readiness(self) -> Any:
        from akm.service.answers import ModelReadiness

        return ModelReadiness(True, "loaded")


def _progress(done: int, total: int) -> None:
    if done % 50 == 0 or done == total:
        print(f"akm bench openai-overhead: {done}/{total} rounds", file=sys.stderr, flush=True)


def run_bench(args: argparse.Namespace, settings: Settings) -> int:
    if args.rounds < 2 or args.warmup < 0:
        print(
            "akm bench openai-overhead: --rounds must be at least 2, --warmup not negative", file=sys.stderr
        )
        return EXIT_USAGE

    from fastapi.testclient import TestClient

    from akm.api import ApiLimits, ApiServices, StoreHandle, create_app
    from akm.embedding import load_embedder
    from akm.ingest import ingest
    from akm.manifest import load_manifest
    from akm.runtime import Runtime, freeze_loaded_objects
    from akm.service.answers import AnswerRequest, AnswerService, CancelSignal
    from akm.service.backend import PipelineAnswerService, PipelineReverifyService
    from akm.service.scope import SourceScope
    from akm.store import open_store

    with tempfile.TemporaryDirectory(prefix="akm-bench-openai-") as folder:
        root = Path(folder)
        manifest_path = build_project(PAGES, root / "project", settings.manifest_path)
        run_settings = bench_settings(settings, root, manifest_path, None).model_copy(
            update={"embedding_model": "hashing", "data_dir": root}
        )
        store = open_store(run_settings.resolved_database_url)
        try:
            manifest = load_manifest(manifest_path)
            ingest(store, manifest, embedder=load_embedder("hashing"))
            pipeline = PipelineAnswerService(run_settings, lambda: store)
            # The fixed generator stands in for the model; everything else is the production pipeline.
            pipeline._runtime = Runtime(
                run_settings,
                _store=store,
                _generator=CopyingGenerator(),  # type: ignore[arg-type]
            )
            answers: AnswerService = pipeline
            if args.service == "replay":
                answers = ReplayAnswerService(
                    list(pipeline.stream(AnswerRequest(args.question), CancelSignal()))
                )
            scope = SourceScope(manifest)
            services = ApiServices(
                store=StoreHandle(store=store),
                scope=scope,
                answers=answers,
                reverify=PipelineReverifyService(run_settings, lambda: store, manifest, scope),
            )
            app = create_app(run_settings, services, limits=ApiLimits())
            freeze_loaded_objects()
            with TestClient(app) as client:

                def post(path: str, body: dict[str, Any]) -> tuple[int, bytes]:
                    response = client.post(path, json=body)
                    return response.status_code, response.content

                report = measure(
                    post,
                    question=args.question,
                    rounds=args.rounds,
                    warmup=args.warmup,
                    stream=args.stream,
                    progress=_progress,
                )
        finally:
            store.close()
    report.setup = {
        "transport": "in-process (TestClient)",
        "service": args.service,
        "generator": "fixed (copies the chosen passage)",
        "embedder": "hashing",
        "pages": len(PAGES),
    }
    write_report(report, args.json_out)
    print(format_table(report))
    return EXIT_OVER_TARGET if args.check and not report.passed else EXIT_OK
