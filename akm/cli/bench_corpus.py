"""``akm bench corpus-answers``: answers over a JSONL corpus (e.g. SciFact) with claim-supported rows?

Ingests the corpus into a throwaway project, asks each claim of a claims file as the question, and
reports, among the claims whose gold document was retrieved and read, the share whose packet holds a
claim-supported row. Prints a summary table, writes the summary and every outcome as JSON, and shows
progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from akm.answer import AnswerGenerator
from akm.bench.corpus_answers import (
    DEFAULT_LABEL,
    DEFAULT_LANES,
    ClaimOutcome,
    CorpusAnswerBenchmark,
    ExtractiveGenerator,
    load_claims,
    summarize,
)
from akm.errors import ModelUnavailableError
from akm.settings import Settings
from decoding.bench.errors import BenchmarkInputError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    """Add the ``corpus-answers`` benchmark to a ``bench`` sub-parser group."""
    parser = subparsers.add_parser(
        "corpus-answers",
        help="answers over a JSONL corpus: claim-supported rows when the gold document was retrieved",
        description=__doc__,
    )
    parser.add_argument(
        "--corpus", type=Path, required=True, help='JSONL(.gz) corpus of {"_id","title","text"}'
    )
    parser.add_argument(
        "--claims", type=Path, required=True, help="SciFact-style claims file with evidence_docs"
    )
    parser.add_argument(
        "--label",
        default=DEFAULT_LABEL,
        help=f"ask only claims with this label (default {DEFAULT_LABEL}; 'any' for all)",
    )
    parser.add_argument("--limit", type=int, default=None, help="ask at most N claims")
    parser.add_argument("--every", type=int, default=1, help="ask every K-th claim (default 1)")
    parser.add_argument(
        "--lanes",
        default=",".join(DEFAULT_LANES),
        help=f"comma-separated lanes (default {','.join(DEFAULT_LANES)})",
    )
    parser.add_argument(
        "--generator",
        choices=("extractive", "target"),
        default="extractive",
        help="extractive: the first chosen sentence verbatim (no model); target: the configured target model",
    )
    parser.add_argument("--json", dest="json_out", type=Path, required=True, help="write the JSON here")
    parser.set_defaults(handler=handle)


def _generator(kind: str, settings: Settings) -> AnswerGenerator:
    if kind == "extractive":
        return ExtractiveGenerator()
    from akm.runtime import Runtime

    return Runtime.from_settings(settings).generator


def handle(args: argparse.Namespace, settings: Settings) -> int:
    if args.every < 1 or (args.limit is not None and args.limit < 1):
        print("akm bench corpus-answers: --every and --limit must be positive", file=sys.stderr)
        return EXIT_USAGE
    try:
        claims = load_claims(args.claims, label=None if args.label == "any" else args.label)
    except BenchmarkInputError as error:
        print(f"akm bench corpus-answers: {error}", file=sys.stderr)
        return EXIT_USAGE
    chosen = claims[:: args.every][: args.limit]
    if not chosen:
        print("akm bench corpus-answers: no claim to ask", file=sys.stderr)
        return EXIT_USAGE

    def progress(number: int, total: int, outcome: ClaimOutcome) -> None:
        mark = "supported" if outcome.any_supported else "no support"
        gold = "gold read" if outcome.gold_retrieved else "gold missed"
        print(f"[{number}/{total}] {outcome.verdict:<15} {gold:<11} {mark}", file=sys.stderr, flush=True)

    try:
        generator = _generator(args.generator, settings)
        with tempfile.TemporaryDirectory(prefix="akm-corpus-bench-") as folder:
            bench = CorpusAnswerBenchmark(
                corpus=args.corpus, folder=Path(folder) / "project", lanes=tuple(args.lanes.split(","))
            )
            print(f"akm bench corpus-answers: ingesting {args.corpus} ...", file=sys.stderr, flush=True)
            outcomes, ingest = bench.run(chosen, generator, progress)
    except BenchmarkInputError as error:
        print(f"akm bench corpus-answers: {error}", file=sys.stderr)
        return EXIT_USAGE
    except ModelUnavailableError as error:
        print(f"akm bench corpus-answers: {error}", file=sys.stderr)
        return EXIT_FAILED
    summary = {**summarize(outcomes), "ingest": ingest, "generator": args.generator, "lanes": args.lanes}
    args.json_out.write_text(
        json.dumps({"summary": summary, "outcomes": [o.to_json() for o in outcomes]}, indent=2),
        encoding="utf-8",
    )
    rate = summary["supportedWhenGoldRetrievedRate"]
    print(f"claims asked                          {summary['claims']}")
    print(
        f"gold document retrieved and read      {summary['goldRetrieved']} ({summary['goldRetrievedRate']})"
    )
    print(f"claim-supported row when gold read    {summary['supportedWhenGoldRetrieved']} ({rate})")
    print(f"  ... on the gold document itself     {summary['goldSupportedWhenGoldRetrievedRate']}")
    print(f"verdicts                              {summary['verdicts']}")
    print(
        f"latency ms p50/p95                    {summary['latencyMs']['p50']}/{summary['latencyMs']['p95']}"
    )
    return EXIT_OK
