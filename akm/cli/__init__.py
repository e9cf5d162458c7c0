"""`akm` command line: one sub-command module per verb.

Each module in ``COMMAND_MODULES`` exposes ``register(subparsers)``, which adds its
parser and sets ``handler(args, settings) -> int`` as the default ``handler``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from akm import __version__, tracing
from akm.settings import Settings, load_settings

# Order is the order shown in --help.
COMMAND_MODULES: tuple[str, ...] = (
    "akm.cli.validate",
    "akm.cli.ingest",
    "akm.cli.ask",
    "akm.cli.reverify",
    "akm.cli.audit",
    "akm.cli.serve",
    "akm.cli.keys",
    "akm.cli.train_head",
    "akm.cli.bench",
)

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="akm",
        description=(
            "Evidence-gated retrieval with speculative generation: ingest documents, ask grounded "
            "questions, validate and audit AKM evidence, serve the REST API, run benchmarks."
        ),
    )
    parser.add_argument("--version", action="version", version=f"akm {__version__}")
    parser.add_argument("--data-dir", help="data directory (env AKM_DATA_DIR)")
    parser.add_argument("--database-url", help="SQLAlchemy database URL (env AKM_DATABASE_URL)")
    parser.add_argument(
        "--manifest", dest="manifest_path", help="project retrieval manifest (env AKM_MANIFEST_PATH)"
    )
    parser.add_argument(
        "--target-model", help="target model: 'smollm2' or a local directory (env AKM_TARGET_MODEL)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def settings_from_args(args: argparse.Namespace) -> Settings:
    # A relative --manifest names a file from where the command runs, like any path argument.
    manifest_path = str(Path(args.manifest_path).absolute()) if args.manifest_path else None
    return load_settings(
        data_dir=args.data_dir,
        database_url=args.database_url,
        manifest_path=manifest_path,
        target_model=args.target_model,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        settings = settings_from_args(args)
    except ValueError as error:  # pydantic.ValidationError is a ValueError
        print(f"akm: invalid settings: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        tracing.configure(settings.tracing)
    except tracing.TracingConfigurationError as error:
        print(f"akm: {error}", file=sys.stderr)
        return EXIT_USAGE
    code: int = args.handler(args, settings)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
