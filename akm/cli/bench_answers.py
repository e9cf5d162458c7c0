"""``akm bench answers``: are the answers right, supported, or an honest "not found"?

Builds a throwaway project from a SQuAD v1.1 file (one Markdown page per article), ingests it,
and asks the questions through the service ``POST /v1/answers`` calls. Prints a summary table,
writes the summary and every answer as JSON, and shows progress on stderr. --unanswerable asks
about articles that were not ingested; --held-out ingests every article without its odd-numbered
paragraphs and asks those paragraphs' questions (on topic, answer absent): there the right outcome
is an abstention.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from akm.bench.answers import (
    AnswerBenchmark,
    QuestionOutcome,
    bench_settings,
    build_project,
    hold_out_paragraphs,
    load_squad,
    pick_questions,
    split_articles,
    summarize,
)
from akm.settings import Settings
from decoding.bench.errors import BenchmarkInputError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    """Add the ``answers`` benchmark to a ``bench`` sub-parser group."""
    parser = subparsers.add_parser(
        "answers",
        help="answer quality over a SQuAD file: gold inside supported claims, PASS precision, abstention",
        description=__doc__,
    )
    parser.add_argument("--squad", type=Path, required=True, help="SQuAD v1.1 JSON file")
    parser.add_argument("--limit", type=int, default=None, help="ask at most N questions")
    parser.add_argument("--every", type=int, default=1, help="ask every K-th question (default 1)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument(
        "--unanswerable",
        action="store_true",
        help="ingest the first half of the articles and ask questions about the second half",
    )
    modes.add_argument(
        "--held-out",
        action="store_true",
        help="ingest every article without its odd-numbered paragraphs and ask those paragraphs' "
        "questions (on topic, but the answer is not in the documents)",
    )
    parser.add_argument(
        "--target-model",
        dest="bench_target_model",
        default=None,
        help="generator: a local Hugging Face causal LM folder (default: the configured target model)",
    )
    parser.add_argument("--max-new-tokens", type=int, default=None, help="decoding limit per answer")
    parser.add_argument("--json", dest="json_out", type=Path, required=True, help="write the JSON here")
    parser.set_defaults(handler=handle)


def _fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"akm bench answers: {message}", file=sys.stderr)
    return code


def _progress(index: int, total: int, outcome: QuestionOutcome) -> None:
    mark = "gold" if outcome.gold_in_supported_claim else ("abstain" if outcome.abstained else "miss")
    print(
        f"[{index}/{total}] {outcome.verdict:<14} {mark:<7} {outcome.total_ms / 1000:5.1f}s  "
        f"{outcome.question.question[:70]}",
        file=sys.stderr,
        flush=True,
    )


def _table(summary: dict[str, Any]) -> str:
    latency = summary["latency_ms"]
    lines = [
        f"mode                      {summary['mode']}  (model: {summary['model']})",
        f"questions                 {summary['questions']}",
        f"gold in supported claim   {summary['gold_in_supported_claim']}",
        f"gold in answer            {summary['gold_in_answer']}",
        f"pass precision            {summary['pass_precision']}",
        f"answered (PASS/NOTE)      {summary['answered']}",
        f"abstained                 {summary['abstained']}",
        f"verdicts                  {summary['verdicts']}",
        f"claim statuses            {summary['claim_statuses']}",
        f"median answer words       {summary['answer_words_median']}",
        f"latency total p50/p95 ms  {latency['total']['p50']} / {latency['total']['p95']}",
    ]
    for stage, figures in latency.items():
        if stage != "total":
            lines.append(f"  {stage:<22}  {figures['p50']} / {figures['p95']}")
    lines.append(f"decode                    {summary['decode']}")
    return "\n".join(lines)


def handle(args: argparse.Namespace, settings: Settings) -> int:
    if args.limit is not None and args.limit < 1:
        return _fail("--limit must be positive")
    if args.max_new_tokens is not None and args.max_new_tokens < 1:
        return _fail("--max-new-tokens must be positive")
    try:
        articles = load_squad(args.squad)
        if args.held_out:
            ingested, asked = hold_out_paragraphs(articles)
        else:
            ingested, asked = split_articles(articles, unanswerable=args.unanswerable)
        questions = pick_questions(asked, every=args.every, limit=args.limit)
    except BenchmarkInputError as error:
        return _fail(str(error))
    if not questions:
        return _fail("no question to ask")

    from akm.embedding import load_embedder
    from akm.ingest import ingest
    from akm.manifest import load_manifest
    from akm.runtime import freeze_loaded_objects
    from akm.service.answers import AnswerRequest, CancelSignal
    from akm.service.backend import PipelineAnswerService
    from akm.service.errors import ModelUnavailableError
    from akm.store import open_store

    options: dict[str, Any] = {}
    if args.max_new_tokens is not None:
        options["max_new_tokens"] = args.max_new_tokens
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="akm-bench-answers-") as folder:
        root = Path(folder)
        manifest_path = build_project(ingested, root / "project", settings.manifest_path)
        run_settings = bench_settings(settings, root, manifest_path, args.bench_target_model)
        store = open_store(run_settings.resolved_database_url)
        try:
            embedder = (
                None
                if run_settings.embedding_model == "none"
                else load_embedder(run_settings.embedding_model, device=run_settings.device)
            )
            print(f"akm bench answers: ingesting {len(ingested)} pages", file=sys.stderr, flush=True)
            report = ingest(store, load_manifest(manifest_path), embedder=embedder)
            service = PipelineAnswerService(run_settings, lambda: store)
            try:
                service.load()
            except ModelUnavailableError as error:
                return _fail(str(error), EXIT_FAILED)
            freeze_loaded_objects()
            # One question untimed, so model warm-up and the verify-cost curve stay out of the figures.
            service.answer(AnswerRequest(questions[0].question, options), CancelSignal())
            benchmark = AnswerBenchmark(
                questions,
                lambda question: service.answer(AnswerRequest(question, options), CancelSignal()),
                progress=_progress,
            )
            outcomes = benchmark.run()
        finally:
            store.close()
    summary = summarize(outcomes, unanswerable=args.unanswerable, mode="held-out" if args.held_out else None)
    summary["model"] = run_settings.target_model
    summary["ingest"] = {"pages": len(ingested), "chunks": report.chunks_written}
    summary["wall_s"] = round(time.perf_counter() - started, 1)
    document = {
        "summary": summary,
        "command": {
            "squad": str(args.squad),
            "every": args.every,
            "limit": args.limit,
            "unanswerable": args.unanswerable,
            "held_out": args.held_out,
            "max_new_tokens": args.max_new_tokens,
        },
        "questions": [outcome.to_json() for outcome in outcomes],
    }
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(_table(summary))
    return EXIT_OK


__all__ = ["handle", "register"]
