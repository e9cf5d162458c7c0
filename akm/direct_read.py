"""Direct read: re-read each winner's locator from its canonical source (E3).

A winner becomes ``direct-read`` only after its source was opened again, the locator's
passage extracted and the source checksum compared with the indexed version:

* unchanged → ``record_direct_read`` (checksumMatch true, observed revision, reader, time);
* changed → ``mark_stale`` with expected and observed revision, never ``direct-read``;
* missing, unreadable, or a locator that escapes the root or is not in the source →
  ``reject`` with the reason.

Every change goes through the state machine (one history event each); stale and rejected
rows are also handed to the rejected-candidates log with stage ``direct-read``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, Protocol

from akm.contract.ids import sha256_bytes, sha256_text
from akm.contract.models import EvidenceRow, Locator, ReadMethod
from akm.contract.states import mark_stale, record_direct_read, reject
from akm.manifest import Manifest

READER_ID = "akm.direct_read"
DIRECT_READ_STAGE = "direct-read"
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


class DirectReadError(Exception):
    """A locator that could not be read; `reason` is the short rejection reason.

    When the source itself was read, `revision` and `checksum` say which version it was,
    so a locator missing from a changed source is reported as stale rather than rejected.
    """

    reason = "unreadable"

    def __init__(self, message: str, *, revision: str | None = None, checksum: str | None = None) -> None:
        super().__init__(message)
        self.revision = revision
        self.checksum = checksum


class SourceMissingError(DirectReadError):
    reason = "source-missing"


class SourceUnreadableError(DirectReadError):
    reason = "source-unreadable"


class LocatorEscapeError(DirectReadError):
    reason = "locator-escapes-root"


class LocatorNotFoundError(DirectReadError):
    reason = "invalid-locator"


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """What to read: a source-native path (or corpus document ID) and the exact locator."""

    path: str
    locator: Locator

    def describe(self) -> str:
        locator = self.locator
        if locator.start_line is not None and locator.end_line is not None:
            return f"{self.path}:{locator.start_line}-{locator.end_line}"
        return f"{self.path}#{locator.type}:{locator.value}"


@dataclass(frozen=True, slots=True)
class ReadResult:
    """The passage at a locator plus the identity of the source version it came from."""

    text: str
    revision: str
    checksum: str
    context_included: bool = True


class SourceReader(Protocol):
    """Reads the canonical source behind a row; raises `DirectReadError` subclasses."""

    reader_id: str
    read_method: ReadMethod

    def read(self, location: SourceLocation) -> ReadResult: ...


def _revision_label(checksum: str) -> str:
    return f"sha256:{checksum[:16]}"


class FileSourceReader:
    """Reads files under one root directory; nothing outside it is ever opened."""

    read_method: ReadMethod = "direct-file-read"

    def __init__(
        self, root: Path, *, reader_id: str = READER_ID, text_of: Callable[[str, bytes], str] | None = None
    ) -> None:
        self.root = root.resolve()
        self.reader_id = reader_id
        # Turns a file's bytes into the text its locators count lines of (UTF-8 unless given;
        # ``akm.source_readers`` gives the extractor of PDF, HTML and DOCX files). It raises
        # ``ValueError`` (``UnicodeDecodeError`` included) for a file it cannot read.
        self._text_of = text_of or _utf8_text

    @classmethod
    def for_manifest(
        cls,
        manifest: Manifest,
        *,
        reader_id: str = READER_ID,
        text_of: Callable[[str, bytes], str] | None = None,
    ) -> FileSourceReader:
        """A reader rooted at the manifest's project root, which canonical paths are relative to."""
        return cls(manifest.project_root, reader_id=reader_id, text_of=text_of)

    def resolve(self, relative_path: str) -> Path:
        """The file for `relative_path`, or `LocatorEscapeError` if it would leave the root."""
        pure = PurePosixPath(relative_path.replace("\\", "/"))
        if pure.is_absolute() or re.match(r"^[A-Za-z]:", relative_path) or ".." in pure.parts:
            raise LocatorEscapeError(f"locator path {relative_path!r} is not inside the source root")
        candidate = self.root.joinpath(*pure.parts)
        # Ingest never follows a link, so neither does a read: an indexed file replaced by a link
        # (to a denied file in the root, or outside it) is refused before anything is opened.
        current = self.root
        for part in pure.parts:
            current = current / part
            if current.is_symlink():
                raise LocatorEscapeError(f"locator path {relative_path!r} passes through a symbolic link")
        return candidate

    def read(self, location: SourceLocation) -> ReadResult:
        path = self.resolve(location.path)
        if not path.exists():
            raise SourceMissingError(f"{location.path} no longer exists")
        try:
            raw = _read_single_linked_file(path)
        except OSError as error:
            raise SourceUnreadableError(
                f"{location.path} cannot be read: {error.strerror or error}"
            ) from error
        checksum = sha256_bytes(raw)
        try:
            text = self._text_of(location.path, raw)
        except UnicodeDecodeError as error:
            raise SourceUnreadableError(
                f"{location.path} is not UTF-8 text", revision=_revision_label(checksum), checksum=checksum
            ) from error
        except ValueError as error:
            # The checksum tells a changed source (stale) from a damaged indexed one (rejected).
            raise SourceUnreadableError(
                f"{location.path} cannot be read: {error}",
                revision=_revision_label(checksum),
                checksum=checksum,
            ) from error
        return ReadResult(
            text=_passage_of_version(text, location.locator, checksum),
            revision=_revision_label(checksum),
            checksum=checksum,
        )


def _utf8_text(name: str, raw: bytes) -> str:
    return raw.decode("utf-8")


def _read_single_linked_file(path: Path) -> bytes:
    """The bytes of a regular file with one link, opened without following a link or blocking."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as stream:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            raise OSError(f"{path.name} is not a regular file with a single link")
        return stream.read()


def _passage_of_version(text: str, locator: Locator, checksum: str) -> str:
    try:
        return extract_passage(text, locator)
    except LocatorNotFoundError as error:
        raise LocatorNotFoundError(
            str(error), revision=_revision_label(checksum), checksum=checksum
        ) from error


def extract_passage(text: str, locator: Locator) -> str:
    """The text a locator names inside a source document."""
    lines = text.splitlines()
    if locator.start_line is not None:
        end = locator.end_line if locator.end_line is not None else locator.start_line
        if locator.start_line > len(lines) or end < locator.start_line:
            raise LocatorNotFoundError(
                f"lines {locator.start_line}-{end} are not in a {len(lines)}-line source"
            )
        return "\n".join(lines[locator.start_line - 1 : end])
    if locator.type == "heading":
        return _heading_section(lines, locator)
    if locator.type in ("path", "row"):
        return text
    raise LocatorNotFoundError(f"locator type {locator.type!r} without line numbers cannot be read")


def _heading_section(lines: list[str], locator: Locator) -> str:
    wanted = locator.heading_path[-1] if locator.heading_path else _heading_title(locator.value)
    for index, line in enumerate(lines):
        match = _HEADING.match(line)
        if match and match.group(2) == wanted:
            level = len(match.group(1))
            end = next(
                (
                    later
                    for later in range(index + 1, len(lines))
                    if (found := _HEADING.match(lines[later])) and len(found.group(1)) <= level
                ),
                len(lines),
            )
            return "\n".join(lines[index:end])
    raise LocatorNotFoundError(f"heading {wanted!r} is not in the source")


def _heading_title(value: str) -> str:
    match = _HEADING.match(value)
    return match.group(2) if match else value.strip()


class JsonlCorpusReader:
    """Reads one document of a BEIR-style JSONL corpus (``{"_id", "title", "text"}``) by ID.

    The document text is ``title`` and ``text`` joined by a blank line, the same text the
    corpus ingest indexes, so its sha256 is comparable with the indexed checksum. The ID → offset
    index is built once and rebuilt whenever the file's size or modification time changes, so a
    rewritten corpus is read at its new offsets (and a changed document is then stale).
    """

    read_method: ReadMethod = "source-api-read"

    def __init__(
        self,
        corpus: Path,
        *,
        reader_id: str = READER_ID,
        document_text: Callable[[Mapping[str, Any]], str] | None = None,
    ) -> None:
        self.corpus = corpus
        self.reader_id = reader_id
        self._document_text = document_text or corpus_document_text
        self._offsets: dict[str, int] | None = None
        self._indexed_stat: tuple[int, int] | None = None

    def _open(self) -> Any:
        if self.corpus.suffix == ".gz":
            return gzip.open(self.corpus, "rb")
        return self.corpus.open("rb")

    def _index(self) -> dict[str, int]:
        info = self.corpus.stat()
        observed = (info.st_size, info.st_mtime_ns)
        if self._offsets is not None and self._indexed_stat == observed:
            return self._offsets
        offsets: dict[str, int] = {}
        with self._open() as stream:
            position = 0
            for line in stream:
                if line.strip():
                    document_id = str(json.loads(line)["_id"])
                    offsets.setdefault(document_id, position)
                position += len(line)
        self._offsets, self._indexed_stat = offsets, observed
        return offsets

    def read(self, location: SourceLocation) -> ReadResult:
        if not self.corpus.exists():
            raise SourceMissingError(f"corpus file {self.corpus.name} no longer exists")
        document_id = location.locator.value if location.locator.type == "row" else location.path
        try:
            offsets = self._index()
            if document_id not in offsets:
                raise SourceMissingError(f"document {document_id!r} is not in the corpus")
            with self._open() as stream:
                stream.seek(offsets[document_id])
                document = json.loads(stream.readline())
        except (OSError, ValueError, KeyError) as error:
            if isinstance(error, DirectReadError):
                raise
            raise SourceUnreadableError(f"corpus file {self.corpus.name} cannot be read: {error}") from error
        text = self._document_text(document)
        checksum = sha256_text(text)
        passage = (
            text
            if location.locator.start_line is None
            else _passage_of_version(text, location.locator, checksum)
        )
        return ReadResult(text=passage, revision=_revision_label(checksum), checksum=checksum)


def corpus_document_text(document: Mapping[str, Any]) -> str:
    title = str(document.get("title") or "").strip()
    body = str(document.get("text") or "").strip()
    return f"{title}\n\n{body}" if title else body


DirectReadStatus = Literal["direct-read", "stale", "rejected"]


@dataclass(frozen=True, slots=True)
class DirectReadOutcome:
    """The row after its direct read, and what happened."""

    row: EvidenceRow
    status: DirectReadStatus
    reason: str
    read: ReadResult | None


def location_of(row: EvidenceRow) -> SourceLocation:
    """What a reader must open for `row`: its canonical path (or corpus ID) and locator."""
    source = row.source
    if source.canonical_path is not None:
        path = source.canonical_path
    elif source.canonical_uri.startswith("file:"):
        path = source.canonical_uri.removeprefix("file:")
    else:
        path = row.scope.locator.value
    return SourceLocation(path=path, locator=row.scope.locator)


def direct_read(
    row: EvidenceRow,
    reader: SourceReader,
    *,
    at: str | None = None,
) -> DirectReadOutcome:
    """Re-read `row`'s locator and move the row to direct-read, stale or rejected."""
    location = location_of(row)
    by = reader.reader_id
    expected = row.source.version
    try:
        result = reader.read(location)
    except DirectReadError as error:
        if (
            error.checksum is not None
            and expected.checksum is not None
            and error.checksum != expected.checksum
        ):
            return _stale(row, by, error.revision or "unknown", at)
        rejected = reject(row, by=by, reasons=(f"{error.reason}: {error}",), at=at)
        return DirectReadOutcome(rejected, "rejected", error.reason, None)

    if expected.checksum is not None and expected.checksum != result.checksum:
        return _stale(row, by, result.revision, at, result)

    matched: bool | None = None if expected.checksum is None else True
    read_row = record_direct_read(
        row,
        by=by,
        read_method=reader.read_method,
        locator_read=location.describe(),
        # Same checksum means the indexed version was read, so it keeps its recorded revision.
        observed_revision=expected.revision if matched else result.revision,
        observed_checksum=result.checksum,
        checksum_match=matched,
        context_included=result.context_included,
        at=at,
    )
    return DirectReadOutcome(read_row, "direct-read", "checksum matches the indexed version", result)


def _stale(
    row: EvidenceRow,
    by: str,
    observed_revision: str,
    at: str | None,
    result: ReadResult | None = None,
) -> DirectReadOutcome:
    expected_revision = row.source.version.revision
    stale = mark_stale(
        row,
        by=by,
        reason="source changed since it was indexed",
        expected_revision=expected_revision,
        observed_revision=observed_revision,
        at=at,
    )
    return DirectReadOutcome(stale, "stale", "stale", result)
