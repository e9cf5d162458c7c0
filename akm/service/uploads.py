"""Uploads into the configured upload root (``POST /v1/sources``), streamed straight to disk.

A request is ``multipart/form-data`` with one or more file parts. Every part is checked before
any of its bytes are kept: the name (one plain file name: no path separator, no ``..``, no NUL,
newline or other control or format character, not hidden), its extension's content type (known,
allowed by the manifest's ``scope.allowedContentTypes``, and not contradicted by the part's own
``Content-Type``), the manifest's security rules and include globs for the file's place, and name
clashes (a name that differs from an existing file only in case). A part's bytes then go to a
temporary file in the upload root itself, counted as they arrive; the part that passes the size
limit ends the request there. Only when every part of the request has arrived whole are the files
fsynced and renamed into place, so a refused or interrupted request leaves nothing behind.

Replacing an existing file needs ``If-Match`` with its current entity tag (``"sha256:<hex>"``;
the bare hex digest, the stored revision label ``sha256:<16 hex>`` or ``git-blob:<sha1>`` are
accepted too): without one the upload is refused with 428, with a stale one with 412. The check is
repeated under a lock just before the rename, so two uploads cannot both replace the same version.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import unicodedata
import urllib.parse
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from akm.contract.ids import source_id as make_source_id
from akm.ingest.content_types import MARKDOWN, content_type_of, normalise
from akm.manifest import Manifest

TEMP_PREFIX = ".upload-"
TEMP_SUFFIX = ".part"
LOCK_FILE = "uploads.lock"
MAX_PART_HEADER_BYTES = 16_384
MAX_PREAMBLE_BYTES = 65_536
MAX_NAME_BYTES = 255
# Room for each part's boundary and headers when a declared Content-Length is judged up front.
PART_OVERHEAD_BYTES = MAX_PART_HEADER_BYTES + 512
# Content types that say nothing about the format: the extension decides.
GENERIC_CONTENT_TYPES = frozenset({"", "application/octet-stream"})
# Other names clients give a known format.
CONTENT_TYPE_ALIASES = {"text/x-markdown": MARKDOWN}
_PERCENT_CONTROL = re.compile(r"%(?:[01][0-9A-Fa-f]|7[Ff])")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class UploadRefusal(StrEnum):
    """Why an upload was refused; the API maps each to its problem type."""

    DISABLED = "uploads-disabled"
    MISCONFIGURED = "uploads-misconfigured"
    NOT_MULTIPART = "unsupported-media-type"
    MALFORMED = "malformed-request"
    NOT_A_FILE = "validation"
    NO_FILES = "no-files"
    TOO_MANY_FILES = "too-many-files"
    TOO_LARGE = "payload-too-large"
    BAD_NAME = "invalid-file-name"
    DUPLICATE_NAME = "duplicate-file-name"
    TYPE_NOT_ALLOWED = "content-type-not-allowed"
    TYPE_MISMATCH = "content-type-mismatch"
    DENIED = "upload-denied"
    NAME_CONFLICT = "name-conflict"
    PRECONDITION_REQUIRED = "precondition-required"
    PRECONDITION_FAILED = "precondition-failed"


class UploadRefused(Exception):
    """An upload that is not accepted; nothing of it is kept."""

    def __init__(self, reason: UploadRefusal, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.extra = extra


# ---- the upload root ------------------------------------------------------------------------


@dataclass(frozen=True)
class UploadRoot:
    """The folder uploads go to, and where it lies in the manifest's scope."""

    directory: Path
    root_alias: str
    # The folder relative to its root alias's directory ("" for the root itself), and to the
    # manifest's project root.
    root_prefix: str
    project_prefix: str

    def root_path(self, name: str) -> str:
        return f"{self.root_prefix}/{name}" if self.root_prefix else name

    def project_path(self, name: str) -> str:
        return f"{self.project_prefix}/{name}" if self.project_prefix else name


def resolve_upload_root(setting: str, manifest: Manifest) -> UploadRoot:
    """The configured upload root, created if missing; it must lie inside one of the manifest's
    file roots and be reached without a symbolic link (a walk never follows one)."""
    if not setting.strip():
        raise UploadRefused(
            UploadRefusal.DISABLED,
            "uploads are not configured: set upload_root (AKM_UPLOAD_ROOT) to a folder inside "
            "one of the manifest's source roots",
        )
    given = Path(setting).expanduser()
    candidate = Path(os.path.normpath(given if given.is_absolute() else manifest.project_root / given))
    for alias, directory in sorted(manifest.file_root_aliases().items()):
        unresolved_root = Path(os.path.normpath(manifest.project_root / _ref_root(manifest, alias)))
        for base in (directory, unresolved_root):
            if candidate == base or candidate.is_relative_to(base):
                relative = candidate.relative_to(base).as_posix()
                relative = "" if relative == "." else relative
                folder = _make_folder(directory, relative, setting)
                project = PurePosixPath(_ref_root(manifest, alias)) / relative if relative else None
                project_prefix = str(project) if project else _ref_root(manifest, alias)
                return UploadRoot(folder, alias, relative, "" if project_prefix == "." else project_prefix)
    raise UploadRefused(
        UploadRefusal.MISCONFIGURED,
        f"upload_root {setting!r} lies outside every file root of the manifest; "
        "uploaded files there would never be ingested",
    )


def _ref_root(manifest: Manifest, alias: str) -> str:
    return next(ref.root_path for ref in manifest.source_refs if ref.root_alias == alias)


def _make_folder(root: Path, relative: str, setting: str) -> Path:
    folder = root
    for part in PurePosixPath(relative).parts if relative else ():
        folder = folder / part
        if folder.is_symlink():
            raise UploadRefused(
                UploadRefusal.MISCONFIGURED,
                f"upload_root {setting!r} passes through a symbolic link, which ingest never follows",
            )
        if not folder.exists():
            folder.mkdir(mode=0o755)
        if not folder.is_dir():
            raise UploadRefused(UploadRefusal.MISCONFIGURED, f"upload_root {setting!r} is not a folder")
    return folder


# ---- names, types and entity tags -------------------------------------------------------------


def check_file_name(raw: str) -> str:
    """The accepted (NFC) form of an uploaded file name, or UploadRefused(BAD_NAME)."""

    def refuse(why: str) -> UploadRefused:
        return UploadRefused(UploadRefusal.BAD_NAME, f"file name {raw!r} refused: {why}", fileName=raw)

    if not raw:
        raise refuse("it is empty")
    if "\x00" in raw:
        raise refuse("it holds a NUL character")
    if "\n" in raw or "\r" in raw:
        raise refuse("it holds a line break")
    if _PERCENT_CONTROL.search(raw):
        raise refuse("it holds a percent-encoded control character")
    if any(unicodedata.category(char) == "Cs" for char in raw):
        raise refuse("it is not valid UTF-8")
    if any(unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp"} for char in raw):
        raise refuse("it holds a control or invisible formatting character")
    parts = re.split(r"[/\\]", raw)
    if ".." in parts:
        raise refuse("it names a parent folder ('..')")
    if raw.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", raw):
        raise refuse("it is an absolute path")
    if len(parts) > 1:
        raise refuse("it holds a path separator; give a plain file name (subfolders are not accepted)")
    name = unicodedata.normalize("NFC", raw)
    if name in {".", ".."} or name.startswith("."):
        raise refuse("hidden names (starting with '.') are not accepted")
    if name != name.strip() or name.endswith("."):
        raise refuse("it starts or ends with white space, or ends with '.'")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise refuse(f"it is longer than {MAX_NAME_BYTES} bytes in UTF-8")
    return name


def fold(name: str) -> str:
    """The form two names share when they differ only in case (or Unicode normalisation)."""
    return unicodedata.normalize("NFC", name).casefold()


def check_content_type(name: str, declared: str | None, allowed: Sequence[str]) -> str:
    """The content type the file is stored as: its extension's, which the manifest must allow and
    the part's declared ``Content-Type`` (unless generic) must agree with."""
    by_extension = content_type_of(name)
    allowed_types = sorted({normalise(item) for item in allowed})
    if by_extension is None:
        suffix = PurePosixPath(name).suffix or "(none)"
        raise UploadRefused(
            UploadRefusal.TYPE_NOT_ALLOWED,
            f"{name!r}: extension {suffix} is not a known document format; the manifest allows "
            f"{', '.join(allowed_types)}",
            fileName=name,
            allowedContentTypes=allowed_types,
        )
    if declared is not None:
        stated = normalise(declared)
        stated = CONTENT_TYPE_ALIASES.get(stated, stated)
        if stated not in GENERIC_CONTENT_TYPES and stated != by_extension:
            raise UploadRefused(
                UploadRefusal.TYPE_MISMATCH,
                f"{name!r} is declared {stated} but its extension says {by_extension}",
                fileName=name,
                declaredContentType=stated,
                extensionContentType=by_extension,
            )
    if by_extension not in allowed_types:
        raise UploadRefused(
            UploadRefusal.TYPE_NOT_ALLOWED,
            f"{name!r}: {by_extension} is not allowed by the manifest (scope.allowedContentTypes: "
            f"{', '.join(allowed_types)})",
            fileName=name,
            allowedContentTypes=allowed_types,
        )
    return by_extension


def parse_if_match(header: str | None) -> frozenset[str] | None:
    """The strong entity tags of an ``If-Match`` header, unquoted; None when absent.

    ``*`` names no revision and weak tags never match (strong comparison), so neither counts."""
    if header is None:
        return None
    tags: set[str] = set()
    for item in header.split(","):
        tag = item.strip()
        if not tag or tag == "*" or tag.startswith("W/"):
            continue
        tags.add(tag.strip('"').lower())
    return frozenset(tags)


def entity_tag(sha256: str) -> str:
    return f'"sha256:{sha256}"'


def file_tags(path: Path) -> tuple[str, frozenset[str]]:
    """The sha256 of a stored file and every tag form that names its current content."""
    size = path.stat().st_size
    digest = hashlib.sha256()
    blob = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
            blob.update(chunk)
    sha = digest.hexdigest()
    return sha, frozenset({sha, f"sha256:{sha}", f"sha256:{sha[:16]}", f"git-blob:{blob.hexdigest()}"})


# ---- a streaming multipart/form-data parser -------------------------------------------------


def multipart_boundary(content_type: str | None) -> bytes:
    """The boundary of a ``multipart/form-data`` content type, or UploadRefused."""
    if not content_type or normalise(content_type) != "multipart/form-data":
        raise UploadRefused(
            UploadRefusal.NOT_MULTIPART,
            "an upload must be multipart/form-data with one file part per file",
        )
    for parameter in content_type.split(";")[1:]:
        key, _, value = parameter.strip().partition("=")
        if key.strip().lower() == "boundary":
            boundary = value.strip().strip('"')
            if 1 <= len(boundary) <= 70:
                return boundary.encode("latin-1")
    raise UploadRefused(UploadRefusal.MALFORMED, "the multipart content type has no usable boundary")


@dataclass(frozen=True)
class PartHeaders:
    disposition: str
    params: dict[str, str]
    content_type: str | None


@dataclass
class _Event:
    kind: str  # "headers", "data", "end"
    headers: PartHeaders | None = None
    data: bytes = b""


def _malformed(detail: str) -> UploadRefused:
    return UploadRefused(UploadRefusal.MALFORMED, f"the multipart body is malformed: {detail}")


def _parameters(value: str) -> tuple[str, dict[str, str]]:
    """``form-data; name="f"; filename="a.md"`` → ("form-data", {...}); quoted strings unescaped."""
    index = 0
    length = len(value)

    def token(stops: str) -> str:
        nonlocal index
        start = index
        while index < length and value[index] not in stops:
            index += 1
        return value[start:index].strip()

    kind = token(";").lower()
    params: dict[str, str] = {}
    while index < length:
        index += 1  # the ';'
        key = token("=;").lower()
        if index >= length or value[index] == ";":
            if key:
                params[key] = ""
            continue
        index += 1  # the '='
        while index < length and value[index] in " \t":
            index += 1
        if index < length and value[index] == '"':
            index += 1
            chars: list[str] = []
            while index < length and value[index] != '"':
                if value[index] == "\\" and index + 1 < length:
                    index += 1
                chars.append(value[index])
                index += 1
            if index >= length:
                raise _malformed("an unterminated quoted string in Content-Disposition")
            index += 1
            params[key] = "".join(chars)
            token(";")
        else:
            params[key] = token(";")
    return kind, params


def _part_headers(block: bytes) -> PartHeaders:
    text = block.decode("utf-8", errors="surrogateescape")
    headers: dict[str, str] = {}
    for line in text.split("\r\n"):
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip() or name != name.strip():
            raise _malformed(f"a part header line is not 'Name: value' ({line[:80]!r})")
        headers[name.strip().lower()] = value.strip()
    disposition = headers.get("content-disposition")
    if disposition is None:
        raise _malformed("a part has no Content-Disposition header")
    kind, params = _parameters(disposition)
    return PartHeaders(kind, params, headers.get("content-type"))


class MultipartParser:
    """Incremental ``multipart/form-data`` parser: bytes in, header/data/end events out.

    Holds at most one delimiter's length of part data, a part's headers (bounded) or a bounded
    preamble between calls, never a whole part.
    """

    def __init__(self, boundary: bytes) -> None:
        self._delimiter = b"--" + boundary
        self._marker = b"\r\n" + self._delimiter
        self._buffer = bytearray()
        self._state = "preamble"

    @property
    def finished(self) -> bool:
        return self._state == "epilogue"

    def feed(self, chunk: bytes) -> list[_Event]:
        self._buffer += chunk
        events: list[_Event] = []
        while True:
            if self._state == "preamble":
                found = self._buffer.find(self._delimiter)
                if found < 0:
                    if len(self._buffer) > MAX_PREAMBLE_BYTES:
                        raise _malformed("no opening boundary")
                    return events
                del self._buffer[: found + len(self._delimiter)]
                self._state = "after-delimiter"
            elif self._state == "after-delimiter":
                if len(self._buffer) < 2:
                    return events
                if self._buffer[:2] == b"--":
                    self._state = "epilogue"
                    self._buffer.clear()
                    return events
                line_end = self._buffer.find(b"\r\n")
                if line_end < 0:
                    if len(self._buffer) > 256:
                        raise _malformed("a boundary line does not end")
                    return events
                if bytes(self._buffer[:line_end]).strip(b" \t"):
                    raise _malformed("unexpected bytes after a boundary")
                del self._buffer[: line_end + 2]
                self._state = "headers"
            elif self._state == "headers":
                if self._buffer.startswith(b"\r\n"):
                    end, skip = 0, 2
                else:
                    end, skip = self._buffer.find(b"\r\n\r\n"), 4
                if end < 0:
                    if len(self._buffer) > MAX_PART_HEADER_BYTES:
                        raise _malformed(f"a part's headers are over {MAX_PART_HEADER_BYTES} bytes")
                    return events
                if end > MAX_PART_HEADER_BYTES:
                    raise _malformed(f"a part's headers are over {MAX_PART_HEADER_BYTES} bytes")
                events.append(_Event("headers", headers=_part_headers(bytes(self._buffer[:end]))))
                del self._buffer[: end + skip]
                self._state = "data"
            elif self._state == "data":
                found = self._buffer.find(self._marker)
                if found < 0:
                    keep = len(self._marker) - 1
                    if len(self._buffer) > keep:
                        events.append(_Event("data", data=bytes(self._buffer[:-keep])))
                        del self._buffer[:-keep]
                    return events
                if found:
                    events.append(_Event("data", data=bytes(self._buffer[:found])))
                events.append(_Event("end"))
                del self._buffer[: found + len(self._marker)]
                self._state = "after-delimiter"
            else:  # epilogue: ignored
                self._buffer.clear()
                return events

    def close(self) -> None:
        if self._state != "epilogue":
            raise _malformed("the body ends before the closing boundary")


# ---- receiving an upload --------------------------------------------------------------------


@dataclass
class _Incoming:
    name: str
    content_type: str
    temp_path: Path
    stream: BinaryIO
    digest: Any = field(default_factory=hashlib.sha256)
    size: int = 0
    existing_sha256: str | None = None


@dataclass(frozen=True)
class StoredUpload:
    """A file now in the upload root (not yet ingested)."""

    name: str
    path: str
    source_id: str
    sha256: str
    byte_size: int
    content_type: str
    replaced: bool

    @property
    def etag(self) -> str:
        return entity_tag(self.sha256)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "sourceId": self.source_id,
            "sha256": self.sha256,
            "etag": self.etag,
            "byteSize": self.byte_size,
            "contentType": self.content_type,
            "replaced": self.replaced,
        }


class UploadService:
    """Receives uploads into one upload root; see the module docstring for every rule."""

    def __init__(
        self,
        manifest: Manifest,
        upload_root: str,
        *,
        max_file_bytes: int,
        max_files: int,
        lock_directory: Path,
    ) -> None:
        self.manifest = manifest
        self.upload_root = upload_root
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.lock_directory = lock_directory
        self._root: UploadRoot | None = None

    @property
    def root(self) -> UploadRoot:
        if self._root is None:
            self._root = resolve_upload_root(self.upload_root, self.manifest)
        return self._root

    @property
    def max_request_bytes(self) -> int:
        """The largest body a request within both limits can have."""
        return self.max_files * (self.max_file_bytes + PART_OVERHEAD_BYTES)

    def check_declared_length(self, content_length: int | None) -> None:
        if content_length is not None and content_length > self.max_request_bytes:
            raise UploadRefused(
                UploadRefusal.TOO_LARGE,
                f"the upload declares {content_length} bytes; at most {self.max_files} files of "
                f"{self.max_file_bytes} bytes each are accepted",
                maxBytes=self.max_file_bytes,
                maxFiles=self.max_files,
            )

    def _check_part(self, headers: PartHeaders, names: dict[str, str]) -> tuple[str, str]:
        if headers.disposition != "form-data":
            raise _malformed(f"a part's Content-Disposition is {headers.disposition!r}, not form-data")
        raw_name = _file_name(headers.params)
        if raw_name is None:
            field_name = headers.params.get("name", "")
            raise UploadRefused(
                UploadRefusal.NOT_A_FILE,
                f"part {field_name!r} is not a file (it has no filename); send only file parts",
            )
        name = check_file_name(raw_name)
        if fold(name) in names:
            raise UploadRefused(
                UploadRefusal.DUPLICATE_NAME,
                f"{name!r} appears twice in this upload (names are compared without regard to case)",
                fileName=name,
            )
        if len(names) >= self.max_files:
            raise UploadRefused(
                UploadRefusal.TOO_MANY_FILES,
                f"at most {self.max_files} files are accepted in one upload",
                maxFiles=self.max_files,
            )
        content_type = check_content_type(
            name, headers.content_type, self.manifest.scope.allowed_content_types
        )
        why = self._never_ingested(name)
        if why is not None:
            raise UploadRefused(
                UploadRefusal.DENIED, f"{name!r} would never be ingested: {why}", fileName=name
            )
        return name, content_type

    def _never_ingested(self, name: str) -> str | None:
        """Why a walk would deny ``name`` in the upload root (as ``akm.ingest.walk`` decides), or None."""
        root = self.root
        reason = self.manifest.denial_for_path(root.project_path(name))
        if reason is not None:
            return f"the manifest's security rules deny it ({reason.value})"
        ref = self.manifest.source_ref_for(root.root_alias, root.root_path(name))
        if ref is None:
            return "no include glob of the manifest's source refs admits it"
        if not self.manifest.classification_allowed(ref.classification):
            return f"its source ref's classification {ref.classification!r} is denied"
        return None

    def _existing(self, names: Sequence[str]) -> dict[str, str]:
        """Folded name → the name on disk, for regular entries of the upload root."""
        found: dict[str, str] = {}
        with os.scandir(self.root.directory) as entries:
            for entry in entries:
                if not entry.name.startswith(TEMP_PREFIX):
                    found[fold(entry.name)] = entry.name
        return {fold(name): found[fold(name)] for name in names if fold(name) in found}

    def _existing_version(self, name: str, tags: frozenset[str] | None) -> str | None:
        """The sha256 of the file ``name`` replaces (None: a new name), once its clashes and
        ``If-Match`` are checked."""
        on_disk = self._existing([name]).get(fold(name))
        if on_disk is None:
            return None
        if on_disk != name:
            raise UploadRefused(
                UploadRefusal.NAME_CONFLICT,
                f"{name!r} differs only in case from the existing file {on_disk!r}; "
                "upload under the existing name to replace it",
                fileName=name,
                existingName=on_disk,
            )
        path = self.root.directory / on_disk
        if path.is_symlink() or not path.is_file():
            raise UploadRefused(
                UploadRefusal.NAME_CONFLICT,
                f"{name!r} exists in the upload root and is not a regular file",
                fileName=name,
            )
        sha, current = file_tags(path)
        if not tags:
            raise UploadRefused(
                UploadRefusal.PRECONDITION_REQUIRED,
                f"{name!r} exists; to replace it send If-Match with its current entity tag "
                '("sha256:<hex>" of its content; * and weak tags do not name one)',
                fileName=name,
                currentEtag=entity_tag(sha),
            )
        if not tags & current:
            raise UploadRefused(
                UploadRefusal.PRECONDITION_FAILED,
                f"{name!r} has changed: If-Match does not name its current content",
                fileName=name,
                currentEtag=entity_tag(sha),
            )
        return sha

    async def receive(
        self,
        body: AsyncIterator[bytes],
        content_type: str | None,
        if_match: str | None = None,
    ) -> list[StoredUpload]:
        """Stream one multipart request into the upload root; all of its files or none."""
        boundary = multipart_boundary(content_type)
        _ = self.root  # an unusable upload root is reported before the body is read
        tags = parse_if_match(if_match)
        parser = MultipartParser(boundary)
        received: list[_Incoming] = []
        names: dict[str, str] = {}
        current: _Incoming | None = None
        try:
            async for chunk in body:
                for event in parser.feed(chunk):
                    if event.kind == "headers":
                        assert event.headers is not None
                        name, file_type = self._check_part(event.headers, names)
                        names[fold(name)] = name
                        # Refused before its bytes are read: clashes and a missing or stale If-Match.
                        existing = self._existing_version(name, tags)
                        current = self._open_temp(name, file_type, existing)
                        received.append(current)
                    elif event.kind == "data":
                        assert current is not None
                        current.size += len(event.data)
                        if current.size > self.max_file_bytes:
                            raise UploadRefused(
                                UploadRefusal.TOO_LARGE,
                                f"{current.name!r} is over the limit of {self.max_file_bytes} bytes",
                                fileName=current.name,
                                maxBytes=self.max_file_bytes,
                            )
                        current.stream.write(event.data)
                        current.digest.update(event.data)
                    else:
                        current = None
            parser.close()
            if not received:
                raise UploadRefused(UploadRefusal.NO_FILES, "the upload holds no file part")
            if tags and not any(item.existing_sha256 for item in received):
                raise UploadRefused(
                    UploadRefusal.PRECONDITION_FAILED,
                    "If-Match names a revision, but no file of this upload exists yet",
                )
            return self._commit(received, tags)
        finally:
            for item in received:
                with contextlib.suppress(OSError):
                    item.stream.close()
                with contextlib.suppress(FileNotFoundError):
                    item.temp_path.unlink()

    def _open_temp(self, name: str, content_type: str, existing_sha256: str | None) -> _Incoming:
        # In the upload root itself, so the final rename never crosses a file system.
        temp_path = self.root.directory / f"{TEMP_PREFIX}{os.urandom(8).hex()}{TEMP_SUFFIX}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        stream = os.fdopen(os.open(temp_path, flags, 0o644), "wb")
        return _Incoming(name, content_type, temp_path, stream, existing_sha256=existing_sha256)

    def _commit(self, received: Sequence[_Incoming], tags: frozenset[str] | None) -> list[StoredUpload]:
        """fsync every file, then, under the upload lock, re-check and rename each into place."""
        for item in received:
            item.stream.flush()
            os.fsync(item.stream.fileno())
            item.stream.close()
        self.lock_directory.mkdir(parents=True, exist_ok=True)
        root = self.root
        stored: list[StoredUpload] = []
        with _locked(self.lock_directory / LOCK_FILE):
            # Another upload may have created or replaced a name since the first check.
            for item in received:
                if self._existing_version(item.name, tags) != item.existing_sha256:
                    raise UploadRefused(
                        UploadRefusal.PRECONDITION_FAILED,
                        f"{item.name!r} changed while this upload was arriving",
                        fileName=item.name,
                    )
            for item in received:
                final = root.directory / item.name
                if item.existing_sha256 is None:
                    try:
                        # A link fails if the name appeared meanwhile: never a silent overwrite.
                        os.link(item.temp_path, final)
                    except FileExistsError as error:
                        raise UploadRefused(
                            UploadRefusal.NAME_CONFLICT,
                            f"{item.name!r} was created by someone else while this upload was arriving",
                            fileName=item.name,
                        ) from error
                    item.temp_path.unlink()
                else:
                    os.replace(item.temp_path, final)
                relative = root.root_path(item.name)
                stored.append(
                    StoredUpload(
                        name=item.name,
                        path=root.project_path(item.name),
                        source_id=make_source_id(root.root_alias, relative),
                        sha256=item.digest.hexdigest(),
                        byte_size=item.size,
                        content_type=item.content_type,
                        replaced=item.existing_sha256 is not None,
                    )
                )
            _fsync_directory(root.directory)
        return stored


def _file_name(params: dict[str, str]) -> str | None:
    """``filename*`` (RFC 5987, UTF-8 or ISO-8859-1) wins over ``filename``; ``%22`` in a plain
    ``filename`` is a quote, as browsers send it."""
    extended = params.get("filename*")
    if extended is not None:
        charset, _, rest = extended.partition("'")
        _, _, encoded = rest.partition("'")
        if charset.lower() not in {"utf-8", "iso-8859-1"}:
            raise UploadRefused(UploadRefusal.BAD_NAME, f"filename* charset {charset!r} is not supported")
        try:
            return urllib.parse.unquote(encoded, encoding=charset.lower(), errors="strict")
        except UnicodeDecodeError as error:
            raise UploadRefused(UploadRefusal.BAD_NAME, f"filename* is not valid {charset}") from error
    plain = params.get("filename")
    return None if plain is None else plain.replace("%22", '"')


@contextlib.contextmanager
def _locked(path: Path) -> Any:
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
