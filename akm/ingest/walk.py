"""Find the files a manifest allows, without opening anything it denies.

Every decision here is made from names and ``lstat`` alone: absolute or parent-escaping
paths, symbolic links, nested repositories (a folder holding its own ``.git``), names that are
not valid UTF-8, anything that is not a regular file (FIFOs, devices, sockets), files with more
than one hard link (another name may lie outside the root), denied path tokens, basename tokens
and extensions, paths no source ref includes, source refs whose classification is denied, and
files whose format (by extension, ``akm.ingest.content_types``) is unknown or absent from the
manifest's ``scope.allowedContentTypes`` are counted by reason and never opened or listed further.

``read_regular_file`` opens what the walk admitted without following a link or blocking, and
checks again on the open descriptor, so a file swapped for a FIFO or a link after the walk is
refused rather than read.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from akm.ingest.content_types import content_type_of, normalise
from akm.manifest import DenialReason, Manifest, SourceRef, is_absolute_path

VCS_DIRECTORY = ".git"
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class NotARegularFileError(OSError):
    """What was opened is not a single-linked regular file (any more)."""


def _file_denial(mode: int, links: int) -> DenialReason | None:
    """Why a file with this ``lstat`` mode and link count may not be opened, or None."""
    if not stat.S_ISREG(mode):
        return DenialReason.NOT_REGULAR_FILE
    if links > 1:
        return DenialReason.HARD_LINK
    return None


def _valid_name(name: str) -> bool:
    """Whether a file-system name decoded from bytes is valid UTF-8 (no surrogate escapes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_regular_file(path: Path) -> bytes:
    """The bytes of ``path``, opened without following a symlink or blocking on a FIFO.

    Raises ``NotARegularFileError`` when what is opened is not a regular file with one link.
    """
    descriptor = os.open(path, _READ_FLAGS)
    try:
        info = os.fstat(descriptor)
        if _file_denial(info.st_mode, info.st_nlink) is not None:
            raise NotARegularFileError(f"{path.name} is not a regular file with a single link")
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            return stream.read()
    finally:
        os.close(descriptor)


@dataclass(frozen=True)
class Candidate:
    """An allowed file: its root, root-relative path, and the source ref that admits it."""

    root_alias: str
    relative_path: str
    absolute_path: Path
    source_ref: SourceRef
    content_type: str

    @property
    def project_path(self) -> str:
        """Path relative to the project root (what canonical URIs name)."""
        return str(PurePosixPath(self.source_ref.root_path) / self.relative_path)


@dataclass(frozen=True)
class WalkScope:
    """What a walk covered, so ingest knows which missing sources count as deleted."""

    root_alias: str
    prefix: str  # "" for the whole root, "dir/" for a folder, or an exact file path
    is_file: bool


class DenialCounter(Counter[str]):
    def deny(self, reason: DenialReason) -> None:
        self[reason.value] += 1


def _project_relative(ref: SourceRef, relative_path: str) -> str:
    root = PurePosixPath(ref.root_path)
    joined = root / relative_path if relative_path else root
    return str(joined)


class ManifestWalker:
    """Walks the roots of a manifest (or chosen paths inside them), counting denials."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self.denied = DenialCounter()
        self.scopes: list[WalkScope] = []
        # Explicit paths that name nothing on disk (a stored source there is marked deleted).
        self.missing: list[str] = []
        # A corpus root holds documents of a JSONL file, not files to walk.
        self._roots = manifest.file_root_aliases()
        self._allowed_types = frozenset(normalise(kind) for kind in manifest.scope.allowed_content_types)
        self._refs_by_alias: dict[str, SourceRef] = {}
        for ref in manifest.source_refs:
            self._refs_by_alias.setdefault(ref.root_alias, ref)

    def candidates(self, paths: Sequence[str] | None = None) -> Iterator[Candidate]:
        """Allowed files under every root, or under the given project-relative paths."""
        if paths is None:
            for alias, directory in self._roots.items():
                if not directory.is_dir() or directory.is_symlink():
                    continue
                self.scopes.append(WalkScope(alias, "", False))
                yield from self._walk_directory(alias, directory, "")
            return
        for raw in paths:
            yield from self._explicit_path(raw)

    def _explicit_path(self, raw: str) -> Iterator[Candidate]:
        if not _valid_name(raw):
            self.denied.deny(DenialReason.NON_UTF8_NAME)
            return
        if is_absolute_path(raw):
            self.denied.deny(DenialReason.ABSOLUTE_PATH)
            return
        pure = PurePosixPath(raw.replace("\\", "/"))
        if ".." in pure.parts:
            self.denied.deny(DenialReason.ESCAPING_PATH)
            return
        project_relative = str(pure)
        for alias, directory in self._roots.items():
            try:
                inside = (self.manifest.project_root / project_relative).relative_to(directory)
            except ValueError:
                continue
            relative = "" if str(inside) == "." else inside.as_posix()
            # Each component must be a real folder: a symlink anywhere on the way is denied.
            current = directory
            for part in PurePosixPath(relative).parts[:-1] if relative else ():
                current = current / part
                if current.is_symlink():
                    self.denied.deny(DenialReason.SYMLINK)
                    return
                if (current / VCS_DIRECTORY).exists():
                    self.denied.deny(DenialReason.NESTED_REPOSITORY)
                    return
            target = directory / relative if relative else directory
            if target.is_symlink():
                self.denied.deny(DenialReason.SYMLINK)
                return
            if target.is_dir():
                if relative and (target / VCS_DIRECTORY).exists():
                    self.denied.deny(DenialReason.NESTED_REPOSITORY)
                    return
                reason = self._directory_denial(alias, relative) if relative else None
                if reason is not None:
                    self.denied.deny(reason)
                    return
                self.scopes.append(WalkScope(alias, f"{relative}/" if relative else "", False))
                yield from self._walk_directory(alias, target, relative)
                return
            self.scopes.append(WalkScope(alias, relative, True))
            try:
                info = target.lstat()
            except FileNotFoundError:
                self.missing.append(project_relative)
                return
            except OSError:
                return
            reason = _file_denial(info.st_mode, info.st_nlink)
            if reason is not None:
                self.denied.deny(reason)
                return
            candidate = self._file_candidate(alias, relative, target)
            if candidate is not None:
                yield candidate
            return
        self.denied.deny(DenialReason.NOT_INCLUDED)

    def _directory_denial(self, alias: str, relative: str) -> DenialReason | None:
        ref = self._refs_by_alias[alias]
        project_path = _project_relative(ref, relative) + "/"
        lowered = "/" + project_path.lower()
        if any(token.lower() in lowered for token in self.manifest.security.deny_path_tokens):
            return DenialReason.DENIED_PATH_TOKEN
        return None

    def _walk_directory(self, alias: str, directory: Path, relative: str) -> Iterator[Candidate]:
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            if not _valid_name(entry.name):
                self.denied.deny(DenialReason.NON_UTF8_NAME)
                continue
            child = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_symlink():
                self.denied.deny(DenialReason.SYMLINK)
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            mode = info.st_mode
            if stat.S_ISDIR(mode):
                if entry.name == VCS_DIRECTORY:
                    continue
                if os.path.lexists(os.path.join(entry.path, VCS_DIRECTORY)):
                    self.denied.deny(DenialReason.NESTED_REPOSITORY)
                    continue
                reason = self._directory_denial(alias, child)
                if reason is not None:
                    self.denied.deny(reason)
                    continue
                yield from self._walk_directory(alias, Path(entry.path), child)
            elif (reason := _file_denial(mode, info.st_nlink)) is not None:
                self.denied.deny(reason)
            else:
                candidate = self._file_candidate(alias, child, Path(entry.path))
                if candidate is not None:
                    yield candidate

    def _file_candidate(self, alias: str, relative: str, path: Path) -> Candidate | None:
        if path.is_symlink():
            self.denied.deny(DenialReason.SYMLINK)
            return None
        ref_for_root = self._refs_by_alias[alias]
        reason = self.manifest.denial_for_path(_project_relative(ref_for_root, relative))
        if reason is not None:
            self.denied.deny(reason)
            return None
        ref = self.manifest.source_ref_for(alias, relative)
        if ref is None:
            self.denied.deny(DenialReason.NOT_INCLUDED)
            return None
        if not self.manifest.classification_allowed(ref.classification):
            self.denied.deny(DenialReason.DENIED_CLASSIFICATION)
            return None
        content_type = content_type_of(relative)
        if content_type is None:
            self.denied.deny(DenialReason.UNKNOWN_CONTENT_TYPE)
            return None
        if content_type not in self._allowed_types:
            self.denied.deny(DenialReason.CONTENT_TYPE_NOT_ALLOWED)
            return None
        return Candidate(alias, relative, path, ref, content_type)
