"""``akm validate PATH...``: check evidence rows, packets and manifests against the contract.

``--profile contract`` (the default) holds documents to the upstream AKM schema and every
contract rule, so another project's evidence passes with any upstream-valid IDs;
``--profile service`` holds them to this project's stricter schema, meant for the service's own output.

Exit status: 0 every document is valid, 1 some document is invalid, 2 usage error or an
input that cannot be read as a document (missing, empty, binary, malformed, over the size limit).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from akm.contract.schema import (
    DEFAULT_PROFILE,
    UPSTREAM_SCHEMA_PATH,
    VALIDATION_PROFILES,
    SchemaLoadError,
    upstream_schema,
)
from akm.contract.validation import DEFAULT_MAX_BYTES, FileReport, Finding, collect_files, validate_file
from akm.settings import Settings

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="validate EvidenceRows, EvidencePackets and manifests against the evidence contract",
        description=(
            "Validate JSON, JSONL and YAML evidence documents against a schema and the contract rules. "
            "Profile 'contract' (the default) uses the upstream AKM schema (schemas/upstream/), where IDs "
            "are any string of 8+ characters: use it for another project's evidence. Profile 'service' "
            "uses this project's stricter schema (schemas/evidence-contract.schema.json, digest-form IDs): "
            "use it for this service's own output. "
            "Directories are searched for *.json, *.jsonl, *.yaml and *.yml."
        ),
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="file or directory")
    parser.add_argument(
        "--profile",
        choices=VALIDATION_PROFILES,
        default=DEFAULT_PROFILE,
        help="contract: upstream schema + every rule (default); service: the project's stricter schema + every rule",
    )
    parser.add_argument(
        "--upstream-schema",
        type=Path,
        metavar="FILE",
        help=(
            "the upstream schema file to use (e.g. the reference evidence-row.schema.json): instead of the "
            "vendored copy with --profile contract, in addition to the project schema with --profile service"
        ),
    )
    parser.add_argument(
        "--upstream",
        action="store_true",
        help=(
            f"with --profile service, also validate against the vendored upstream schema "
            f"({UPSTREAM_SCHEMA_PATH.name}); --profile contract always does"
        ),
    )
    parser.add_argument(
        "--format", choices=("human", "json", "github"), default="human", help="output format"
    )
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help=f"refuse files larger than N bytes (default {DEFAULT_MAX_BYTES})",
    )
    parser.set_defaults(handler=run_validate)


def run_validate(args: argparse.Namespace, settings: Settings) -> int:
    del settings  # validation depends only on the contract and its schemas
    out: TextIO = sys.stdout
    if args.max_bytes < 1:
        print("akm validate: error: --max-bytes must be a positive number of bytes", file=sys.stderr)
        return EXIT_USAGE
    upstream_path: Path | None = args.upstream_schema
    if upstream_path is None and args.upstream:
        upstream_path = UPSTREAM_SCHEMA_PATH
    if upstream_path is not None:
        try:
            upstream_schema(upstream_path.resolve())
        except SchemaLoadError as error:
            print(f"akm validate: error: {error}", file=sys.stderr)
            return EXIT_USAGE
        upstream_path = upstream_path.resolve()
    files, path_errors = collect_files(args.paths)
    reports = [
        validate_file(
            path, max_bytes=args.max_bytes, profile=args.profile, upstream_schema_path=upstream_path
        )
        for path in files
    ]
    input_errors = path_errors + [report.error for report in reports if report.error is not None]
    writer = {"human": _write_human, "json": _write_json, "github": _write_github}[args.format]
    try:
        writer(out, reports, path_errors)
        out.flush()
    except BrokenPipeError:
        # The reader (e.g. `head`) went away; the exit status still tells the outcome.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces the closed stream for interpreter exit
    for message in input_errors:
        print(f"akm validate: error: {message}", file=sys.stderr)
    if input_errors:
        return EXIT_USAGE
    return EXIT_OK if all(report.valid for report in reports) else EXIT_INVALID


def _location(report: FileReport, finding: Finding) -> str:
    line = f"{finding.line}:" if finding.line is not None else ""
    return f"{report.path}:{line}{finding.pointer or '(root)'}"


def _write_human(out: TextIO, reports: list[FileReport], path_errors: list[str]) -> None:
    documents = sum(report.documents for report in reports)
    findings = 0
    for report in reports:
        for finding in report.findings:
            findings += 1
            print(f"{_location(report, finding)}: {finding.rule_id}: {finding.message}", file=out)
    unreadable = len(path_errors) + sum(1 for report in reports if report.error is not None)
    invalid = sum(1 for report in reports if report.findings)
    print(
        f"akm validate: {len(reports)} file(s), {documents} document(s), {findings} finding(s) "
        f"in {invalid} invalid file(s), {unreadable} unreadable input(s)",
        file=out,
    )


def _write_json(out: TextIO, reports: list[FileReport], path_errors: list[str]) -> None:
    document: dict[str, Any] = {
        "valid": not path_errors and all(report.valid for report in reports),
        "files": [
            {
                "path": str(report.path),
                "valid": report.valid,
                "documents": report.documents,
                "error": report.error,
                "findings": [finding.to_json() for finding in report.findings],
            }
            for report in reports
        ],
        "errors": path_errors,
    }
    json.dump(document, out, indent=2)
    out.write("\n")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _write_github(out: TextIO, reports: list[FileReport], path_errors: list[str]) -> None:
    for message in path_errors:
        print(f"::error title=akm validate::{_escape_data(message)}", file=out)
    for report in reports:
        file_property = f"file={_escape_property(str(report.path))}"
        if report.error is not None:
            print(f"::error {file_property},title=unreadable::{_escape_data(report.error)}", file=out)
        for finding in report.findings:
            line = f",line={finding.line}" if finding.line is not None else ""
            print(
                f"::error {file_property}{line},title={_escape_property(finding.rule_id)}::"
                f"{_escape_data((finding.pointer or '(root)') + ': ' + finding.message)}",
                file=out,
            )
