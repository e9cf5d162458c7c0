"""Validating evidence documents: schema(s) first, then the contract rules.

A document is an EvidenceRow, an EvidencePacket, a project retrieval manifest, or a list of
rows/packets. Files are JSON, JSONL (one document per line) or YAML (one or more documents).
``validate_document`` is the library entry point shared by ``akm validate`` and the REST API;
``read_documents`` turns a file into documents or raises :class:`UnreadableDocument`.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from akm.contract.errors import UnreadableDocument
from akm.contract.rules import check_packet, check_row
from akm.contract.schema import (
    DEFAULT_PROFILE,
    VALIDATION_PROFILES,
    ValidationProfile,
    document_kind,
    validate_against_schemas,
    validate_manifest,
)
from akm.contract.violations import Violation

DOCUMENT_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
# Evidence documents nest a dozen levels; anything far deeper is refused before validation,
# whose recursive checks would otherwise exhaust the interpreter's stack.
MAX_NESTING_DEPTH = 256
_BINARY_PROBE_BYTES = 8192
_READ_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason a document is invalid; ``line`` is set for JSONL documents (1-based)."""

    rule_id: str
    pointer: str
    message: str
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"ruleId": self.rule_id, "pointer": self.pointer, "message": self.message}
        if self.line is not None:
            document["line"] = self.line
        return document


@dataclass(frozen=True)
class SourceDocument:
    """A parsed document and where it came from inside its file."""

    content: object
    pointer_prefix: str = ""
    line: int | None = None


@dataclass
class FileReport:
    path: Path
    documents: int = 0
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.error is None and not self.findings


def _finding(violation: Violation, line: int | None = None) -> Finding:
    return Finding(violation.rule_id, violation.pointer, violation.message, line)


def is_manifest(document: object) -> bool:
    return isinstance(document, dict) and "manifestId" in document and "sourceRefs" in document


def validate_document(
    document: object,
    *,
    profile: ValidationProfile = DEFAULT_PROFILE,
    upstream_schema_path: Path | None = None,
    check_upstream: bool = False,
    pointer_prefix: str = "",
    line: int | None = None,
) -> list[Finding]:
    """Findings for one row, packet, manifest or list of rows/packets (empty: valid).

    ``profile`` picks the schema (see ``akm.contract.schema.ValidationProfile``); the contract
    rules apply under both.
    """
    if isinstance(document, list):
        findings: list[Finding] = []
        for index, item in enumerate(document):
            findings.extend(
                validate_document(
                    item,
                    profile=profile,
                    upstream_schema_path=upstream_schema_path,
                    check_upstream=check_upstream,
                    pointer_prefix=f"{pointer_prefix}/{index}",
                    line=line,
                )
            )
        return findings
    if is_manifest(document):
        return [_finding(v, line) for v in validate_manifest(document)]
    kind = document_kind(document)
    violations: list[Violation] = []
    if kind is None:
        violations.append(
            Violation(
                "schema:kind",
                pointer_prefix,
                "not an evidence document: expected rowType 'EvidenceRow' or packetType 'EvidencePacket'",
            )
        )
        return [_finding(v, line) for v in violations]
    violations.extend(
        validate_against_schemas(
            document,
            profile=profile,
            upstream_schema_path=upstream_schema_path,
            check_upstream=check_upstream,
            pointer_prefix=pointer_prefix,
        )
    )
    check = check_row if kind == "EvidenceRow" else check_packet
    violations.extend(check(document, pointer_prefix))
    return [_finding(v, line) for v in violations]


class _ContractYamlLoader(yaml.SafeLoader):
    """Safe YAML loader that keeps timestamps as the strings the contract expects."""


_ContractYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _read_bounded(path: Path, max_bytes: int) -> bytes:
    """At most ``max_bytes`` of a regular file, or UnreadableDocument.

    The file is opened without blocking and checked on the open descriptor, so a FIFO, a
    device (``/dev/zero``) or a socket is refused instead of read; reading stops one byte past
    the limit, so a file whose reported size is wrong (or that grows) still cannot fill memory.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError as error:
        raise UnreadableDocument(f"{path}: no such file") from error
    except OSError as error:
        raise UnreadableDocument(f"{path}: cannot read: {error.strerror}") from error
    with os.fdopen(descriptor, "rb") as stream:
        try:
            mode = os.fstat(descriptor).st_mode
            if not stat.S_ISREG(mode):
                raise UnreadableDocument(
                    f"{path}: not a regular file (a FIFO, device or socket is never read)"
                )
            size = os.fstat(descriptor).st_size
            if size > max_bytes:
                raise UnreadableDocument(f"{path}: file is {size} bytes, over the limit of {max_bytes} bytes")
            chunks: list[bytes] = []
            total = 0
            while total <= max_bytes and (
                chunk := stream.read(min(_READ_CHUNK_BYTES, max_bytes + 1 - total))
            ):
                chunks.append(chunk)
                total += len(chunk)
        except OSError as error:
            raise UnreadableDocument(f"{path}: cannot read: {error.strerror}") from error
    if total > max_bytes:
        raise UnreadableDocument(f"{path}: file is over the limit of {max_bytes} bytes")
    return b"".join(chunks)


def _decode_text(path: Path, max_bytes: int) -> str:
    data = _read_bounded(path, max_bytes)
    if b"\x00" in data[:_BINARY_PROBE_BYTES]:
        raise UnreadableDocument(f"{path}: binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UnreadableDocument(f"{path}: binary or non-UTF-8 file (byte {error.start})") from error
    if not text.strip():
        raise UnreadableDocument(f"{path}: empty file")
    return text


def nesting_depth(document: object) -> int:
    """How deeply lists and mappings nest in ``document`` (a scalar is 0), without recursion."""
    deepest = 0
    pending: list[tuple[object, int]] = [(document, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_NESTING_DEPTH:
            return deepest
        pending.extend((child, depth + 1) for child in children)
    return deepest


def _shallow(path: Path, documents: list[SourceDocument]) -> list[SourceDocument]:
    for document in documents:
        if nesting_depth(document.content) > MAX_NESTING_DEPTH:
            where = f" line {document.line}" if document.line is not None else ""
            raise UnreadableDocument(f"{path}:{where} nested deeper than {MAX_NESTING_DEPTH} levels")
    return documents


def read_documents(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> list[SourceDocument]:
    """Parse ``path`` into documents; raises UnreadableDocument for anything that is not one."""
    text = _decode_text(path, max_bytes)
    try:
        return _shallow(path, _parse(path, text))
    except RecursionError as error:
        # The parsers recurse once per nesting level: a hostile file exhausts the stack first.
        raise UnreadableDocument(f"{path}: nested too deeply to parse") from error


def _parse(path: Path, text: str) -> list[SourceDocument]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return list(_jsonl_documents(path, text))
    if suffix in (".yaml", ".yml"):
        try:
            loaded = [item for item in yaml.load_all(text, Loader=_ContractYamlLoader) if item is not None]
        except yaml.YAMLError as error:
            raise UnreadableDocument(f"{path}: malformed YAML: {_one_line(str(error))}") from error
        if not loaded:
            raise UnreadableDocument(f"{path}: empty file")
        if len(loaded) == 1:
            return [SourceDocument(loaded[0])]
        return [SourceDocument(item, f"/{index}") for index, item in enumerate(loaded)]
    try:
        return [SourceDocument(json.loads(text, parse_constant=_reject_constant))]
    except json.JSONDecodeError as error:
        raise UnreadableDocument(
            f"{path}: malformed JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from error
    except ValueError as error:
        raise UnreadableDocument(f"{path}: malformed JSON: {error}") from error


def _jsonl_documents(path: Path, text: str) -> Iterator[SourceDocument]:
    count = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            content = json.loads(raw, parse_constant=_reject_constant)
        except json.JSONDecodeError as error:
            raise UnreadableDocument(f"{path}:{number}: malformed JSON line: {error.msg}") from error
        except ValueError as error:
            raise UnreadableDocument(f"{path}:{number}: malformed JSON line: {error}") from error
        count += 1
        yield SourceDocument(content, "", number)
    if count == 0:
        raise UnreadableDocument(f"{path}: empty file")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def validate_file(
    path: Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    profile: ValidationProfile = DEFAULT_PROFILE,
    upstream_schema_path: Path | None = None,
    check_upstream: bool = False,
) -> FileReport:
    """Read and validate one file; an unreadable file gives a report with ``error`` set."""
    report = FileReport(path=path)
    try:
        documents = read_documents(path, max_bytes=max_bytes)
    except UnreadableDocument as error:
        report.error = str(error)
        return report
    for document in documents:
        report.documents += len(document.content) if isinstance(document.content, list) else 1
        report.findings.extend(
            validate_document(
                document.content,
                profile=profile,
                upstream_schema_path=upstream_schema_path,
                check_upstream=check_upstream,
                pointer_prefix=document.pointer_prefix,
                line=document.line,
            )
        )
    return report


def collect_files(paths: Iterable[Path]) -> tuple[list[Path], list[str]]:
    """Files to validate (directories walked for document suffixes) and errors for bad paths."""
    files: list[Path] = []
    errors: list[str] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                candidate
                for candidate in path.rglob("*")
                if candidate.is_file()
                and candidate.suffix.lower() in DOCUMENT_SUFFIXES
                and not any(part.startswith(".") for part in candidate.relative_to(path).parts)
            )
            if not found:
                errors.append(f"{path}: no {', '.join(DOCUMENT_SUFFIXES)} files in directory")
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            errors.append(f"{path}: no such file or directory")
    return files, errors


__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_PROFILE",
    "DOCUMENT_SUFFIXES",
    "MAX_NESTING_DEPTH",
    "VALIDATION_PROFILES",
    "FileReport",
    "Finding",
    "SourceDocument",
    "ValidationProfile",
    "collect_files",
    "is_manifest",
    "nesting_depth",
    "read_documents",
    "validate_document",
    "validate_file",
]
