"""``akm bench SUBJECT ...``: benchmarks, one sub-command module per subject.

Each module in ``BENCH_MODULES`` exposes ``register(bench_subparsers)``, which adds its
parser under ``akm bench`` and sets ``handler(args, settings) -> int`` as its default.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from akm.settings import Settings

EXIT_USAGE = 2

BENCH_MODULES: tuple[str, ...] = (
    "akm.cli.bench_answers",
    "akm.cli.bench_verify",
    "akm.cli.bench_decode",
    "akm.cli.bench_retrieval",
    "akm.cli.bench_ingest",
    "akm.cli.bench_corpus",
    "akm.cli.bench_openai",
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="run a benchmark: print a table and write JSON",
        description="Benchmarks are programs: each prints a small table and writes its figures as JSON.",
    )
    bench_subparsers = parser.add_subparsers(dest="bench_subject", metavar="SUBJECT")
    for module_name in BENCH_MODULES:
        importlib.import_module(module_name).register(bench_subparsers)

    def print_usage(args: argparse.Namespace, settings: Settings) -> int:
        parser.print_help(sys.stderr)
        return EXIT_USAGE

    # A sub-command's own handler replaces this one when a subject is given.
    parser.set_defaults(handler=print_usage)
