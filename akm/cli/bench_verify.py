"""``akm bench verify --claims FILE --json OUT [--limit N] [--threshold T]``: the claim-support
verifier on SciFact-shaped claims.

Beside the JSON report it writes the precision/recall-by-threshold plot (OUT with ``.png``).
Exit status: 0 done (1 with ``--check`` when a target is missed), 2 bad input or an NLI model that cannot load.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from akm.bench.verify import format_table, run_verify_benchmark, write_curve_plot
from akm.settings import Settings
from akm.verify.combined import StrictestOf
from akm.verify.judgement import ClaimVerifier
from akm.verify.lexical import LexicalClaimVerifier
from akm.verify.nli import NLIModelError, NLIVerifier
from decoding.bench.errors import BenchmarkInputError, require_bench_extra

EXIT_OK = 0
EXIT_TARGET_MISSED = 1
EXIT_USAGE = 2
# The evidence gate's targets: about one false "supported" in a hundred refuted or
# unsupported pairs at most, and at least nineteen right supports in twenty.
MAX_FALSE_SUPPORT_RATE = 0.01
MIN_SUPPORT_PRECISION = 0.95


def register(bench_subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = bench_subparsers.add_parser(
        "verify",
        help="claim-support verifier: support precision and false-support rates",
        description=(
            "Verify every (claim, cited document) pair of a SciFact claims-with-evidence JSONL file and "
            "compare with the gold SUPPORTS / REFUTES / NOT_ENOUGH_INFO labels."
        ),
    )
    parser.add_argument("--claims", type=Path, required=True, metavar="FILE", help="claims JSONL file")
    parser.add_argument("--json", type=Path, dest="json_out", metavar="OUT", help="write the report here")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N lines of the file")
    parser.add_argument(
        "--threshold",
        type=float,
        metavar="T",
        help="support-score threshold (0-1) for the verdicts; default: the support_threshold setting",
    )
    parser.add_argument(
        "--nli",
        action="store_true",
        help="also require entailment from the NLI model in settings (AKM_NLI_MODEL), strictest verdict wins",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help=(
            f"exit 1 unless false-support rates are ≤ {MAX_FALSE_SUPPORT_RATE} "
            f"and support precision ≥ {MIN_SUPPORT_PRECISION}"
        ),
    )
    parser.set_defaults(handler=run_bench_verify)


def targets_missed(summary: dict[str, object]) -> list[str]:
    """The benchmark targets the summary misses, in words (a ratio without cases counts as met)."""
    missed: list[str] = []
    for key in ("false_support_rate_refutes", "false_support_rate_nei"):
        value = summary[key]
        if isinstance(value, float) and value > MAX_FALSE_SUPPORT_RATE:
            missed.append(f"{key} {value} > {MAX_FALSE_SUPPORT_RATE}")
    precision = summary["support_precision"]
    if isinstance(precision, float) and precision < MIN_SUPPORT_PRECISION:
        missed.append(f"support_precision {precision} < {MIN_SUPPORT_PRECISION}")
    return missed


def run_bench_verify(args: argparse.Namespace, settings: Settings) -> int:
    if args.limit is not None and args.limit < 1:
        print("akm bench verify: --limit must be a positive number of lines", file=sys.stderr)
        return EXIT_USAGE
    threshold = settings.support_threshold if args.threshold is None else args.threshold
    if not 0.0 <= threshold <= 1.0:
        print("akm bench verify: --threshold must be between 0 and 1", file=sys.stderr)
        return EXIT_USAGE
    if args.json_out is not None:
        try:
            require_bench_extra("matplotlib", "the threshold curve written beside --json")
        except BenchmarkInputError as error:
            print(f"akm bench verify: {error}", file=sys.stderr)
            return EXIT_USAGE
    verifier: ClaimVerifier = LexicalClaimVerifier(support_threshold=threshold)
    if args.nli:
        try:
            verifier = StrictestOf(verifier, NLIVerifier.from_directory(settings.nli_model, settings.device))
        except NLIModelError as error:
            print(f"akm bench verify: {error}", file=sys.stderr)
            return EXIT_USAGE
    try:
        report = run_verify_benchmark(args.claims, limit=args.limit, verifier=verifier)
    except BenchmarkInputError as error:
        print(f"akm bench verify: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(format_table(report))
    if args.json_out is not None:
        try:
            args.json_out.parent.mkdir(parents=True, exist_ok=True)
            args.json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
            write_curve_plot(report, args.json_out.with_suffix(".png"))
        except OSError as error:
            print(f"akm bench verify: cannot write {args.json_out}: {error.strerror}", file=sys.stderr)
            return EXIT_USAGE
    missed = targets_missed(report["summary"])
    if args.check and missed:
        print("targets missed: " + "; ".join(missed), file=sys.stderr)
        return EXIT_TARGET_MISSED
    return EXIT_OK
