"""Ingest: canonical sources → source versions, located chunks, embeddings and link edges.

Incremental and idempotent: a source whose sha256 matches its current version is skipped; a
changed one gets a new version (the old one and its chunks stay, not current); a source that
disappeared is marked deleted. Files are written in batches, one transaction each, under the
store's write lock, and each batch re-checks the stored state inside the lock, so two ingests
running at once neither duplicate nor lose anything. Embeddings are computed before the lock
is taken and reused for any chunk text already embedded (keyed by the excerpt sha256).

The manifest's ``scope.maxCorpusDocuments`` caps how many sources one ingest target keeps
current: the manifest's roots together, or one JSONL corpus (each of its documents counts).
Sources already current keep their place ahead of new ones, and new ones are admitted in walk
(or file) order while places remain; the rest are counted, never opened and never named.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import yaml

from akm.contract.ids import sha256_bytes, sha256_text
from akm.contract.ids import source_id as make_source_id
from akm.direct_read import corpus_document_text
from akm.embedding import Embedder
from akm.ingest.chunking import TextChunk, chunk_text, extract_links, plain_text_title, wikilink_keys_for
from akm.ingest.content_types import MARKDOWN
from akm.ingest.formats import (
    DEFAULT_LIMITS,
    EXTRACTED_TYPES,
    LAYOUT_VERSIONS,
    ExtractedDocument,
    ExtractionError,
    NoTextError,
    extract_document,
)
from akm.ingest.walk import Candidate, ManifestWalker, WalkScope, read_regular_file
from akm.manifest import DenialReason, Manifest
from akm.store import EvidenceStore, NewChunk, NewLink, SourceState

DEFAULT_BATCH_FILES = 64
DEFAULT_BATCH_DOCUMENTS = 256
UNREADABLE = "unreadable"
CAP_FIELD = "scope.maxCorpusDocuments"


class IngestError(RuntimeError):
    """Ingest cannot run (missing corpus file, malformed corpus)."""


@dataclass
class IngestProgress:
    """A snapshot for progress displays; ``total`` is the number of items the run will go through."""

    phase: str
    files_done: int
    files_written: int
    chunks_written: int
    elapsed_s: float
    total: int | None = None
    embedded: int = 0
    unit: str = "files"
    # Sources denied so far (count only): the walk decides them before reading.
    denied: int = 0


ProgressCallback = Callable[[IngestProgress], None]


@dataclass
class IngestReport:
    """Counts only: denied sources are reported by reason, never by name."""

    files_seen: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    deleted: int = 0
    unreadable: int = 0
    # Readable files with no text at all (a PDF of scanned pages without a text layer).
    no_text: int = 0
    # PDF pages of the files written.
    pages: int = 0
    chunks_written: int = 0
    embeddings_computed: int = 0
    embeddings_reused: int = 0
    denied: dict[str, int] = field(default_factory=dict)
    # Sources left out, or retired, because the target already holds ``corpus_cap`` current ones.
    over_cap: int = 0
    corpus_cap: int | None = None
    seconds: float = 0.0
    new_source_ids: list[str] = field(default_factory=list)
    changed_source_ids: list[str] = field(default_factory=list)
    # Missing sources, and sources retired because a lowered cap no longer has room for them.
    deleted_source_ids: list[str] = field(default_factory=list)
    # Explicit paths that name neither a file nor a folder nor a stored source (a user's typo).
    missing_paths: list[str] = field(default_factory=list)

    @property
    def ingested(self) -> int:
        return self.new + self.changed

    @property
    def denied_total(self) -> int:
        return sum(self.denied.values())

    def summary_lines(self) -> list[str]:
        denied = ", ".join(f"{reason} {count}" for reason, count in sorted(self.denied.items())) or "none"
        rate = self.files_seen / self.seconds if self.seconds > 0 else 0.0
        lines = [
            f"files seen {self.files_seen}, ingested {self.ingested} (new {self.new}, changed {self.changed}), "
            f"skipped unchanged {self.unchanged}, deleted {self.deleted}, unreadable {self.unreadable}",
            f"chunks written {self.chunks_written}, embeddings computed {self.embeddings_computed}, "
            f"reused {self.embeddings_reused}",
            f"denied {self.denied_total} (count only): {denied}",
        ]
        if self.no_text:
            lines.append(
                f"no text {self.no_text}: readable files without any text "
                "(a PDF of scanned pages has no text layer; OCR is not done)"
            )
        if self.over_cap:
            lines.append(
                f"over corpus cap {self.over_cap} (count only): {CAP_FIELD} {self.corpus_cap} reached"
            )
        lines.append(f"{self.seconds:.1f} s ({rate:.1f} files/s)")
        return lines

    def to_json(self) -> dict[str, Any]:
        """Counts plus the ids of allowed sources that changed (for re-verification)."""
        return {
            "filesSeen": self.files_seen,
            "ingested": self.ingested,
            "new": self.new,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "unreadable": self.unreadable,
            "noText": self.no_text,
            "pdfPages": self.pages,
            "chunksWritten": self.chunks_written,
            "embeddingsComputed": self.embeddings_computed,
            "embeddingsReused": self.embeddings_reused,
            "deniedByReason": dict(sorted(self.denied.items())),
            "overCorpusCap": self.over_cap,
            "maxCorpusDocuments": self.corpus_cap,
            "seconds": round(self.seconds, 3),
            "newSourceIds": self.new_source_ids,
            "changedSourceIds": self.changed_source_ids,
            "deletedSourceIds": self.deleted_source_ids,
        }


@dataclass(frozen=True)
class PreparedSource:
    """A source read and cut into chunks, ready to be written."""

    source_id: str
    root_alias: str
    path: str
    canonical_uri: str
    source_type: str
    classification: str
    source_ref_id: str
    title: str | None
    external_id: str | None
    revision: str
    sha256: str
    byte_size: int
    chunks: tuple[TextChunk, ...]
    links: tuple[NewLink, ...] = ()
    pages: int = 0
    # How an extracted format was laid out as lines (akm.ingest.formats.LAYOUT_VERSIONS).
    layout: str | None = None


@dataclass
class CorpusCapPlan:
    """Which sources of one ingest target may be current under ``scope.maxCorpusDocuments``.

    ``keep``: listed sources already current that keep their place; ``retired``: listed sources
    already current that no longer fit (the cap was lowered); ``free``: places left for sources
    not yet current (``None``: no cap). Sources outside the walk keep their places first.
    """

    keep: frozenset[str]
    retired: frozenset[str]
    free: int | None

    @classmethod
    def for_target(
        cls, limit: int | None, listed: Sequence[str], current: set[str], outside: int
    ) -> CorpusCapPlan:
        """``listed``: the walk's sources in order; ``current``: listed ones now current;
        ``outside``: current sources of the target that this walk does not cover."""
        already = [source_id for source_id in listed if source_id in current]
        if limit is None:
            return cls(frozenset(already), frozenset(), None)
        places = max(limit - outside, 0)
        return cls(frozenset(already[:places]), frozenset(already[places:]), max(places - len(already), 0))

    def admits(self, source_id: str) -> bool:
        """Whether ``source_id`` may be opened and written; call ``take`` once a new one is written."""
        if source_id in self.keep:
            return True
        if source_id in self.retired:
            return False
        return self.free is None or self.free > 0

    def take(self, source_id: str) -> None:
        if self.free is not None and source_id not in self.keep:
            self.free -= 1


def git_blob_sha(data: bytes) -> str:
    """The object id ``git hash-object`` gives these bytes (no filters applied)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def inside_git_work_tree(directory: Path) -> bool:
    return any((parent / ".git").exists() for parent in (directory, *directory.parents))


def content_revision(checksum: str) -> str:
    """Revision label of content outside version control (the direct reader uses the same form)."""
    return f"sha256:{checksum[:16]}"


def _front_matter(text: str) -> dict[str, Any]:
    if not text.startswith("---"):
        return {}
    lines = text.splitlines()
    for index in range(1, min(len(lines), 200)):
        if lines[index].strip() in ("---", "..."):
            try:
                loaded = yaml.safe_load("\n".join(lines[1:index]))
            except yaml.YAMLError:
                return {}
            return loaded if isinstance(loaded, dict) else {}
    return {}


def _markdown_title(chunks: Sequence[TextChunk], fallback: str) -> str:
    for chunk in chunks:
        if chunk.heading_path:
            return chunk.heading_path[0]
    return fallback


class _BatchWriter:
    """Embeds and writes prepared sources in batches; one transaction per batch."""

    def __init__(
        self,
        store: EvidenceStore,
        embedder: Embedder | None,
        report: IngestReport,
        progress: ProgressCallback | None,
        started: float,
        total: int | None = None,
        unit: str = "files",
        denials: Mapping[str, int] | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.report = report
        self.progress = progress
        self.started = started
        self.total = total
        self.unit = unit
        self.denials = denials
        self.pending: list[PreparedSource] = []
        self.files_done = 0

    def add(self, prepared: PreparedSource, batch_size: int) -> None:
        self.pending.append(prepared)
        if len(self.pending) >= batch_size:
            self.flush()

    def tick(self, phase: str = "scan") -> None:
        if self.progress is not None:
            self.progress(
                IngestProgress(
                    phase=phase,
                    files_done=self.files_done,
                    files_written=self.report.ingested,
                    chunks_written=self.report.chunks_written,
                    elapsed_s=time.perf_counter() - self.started,
                    total=self.total,
                    embedded=self.report.embeddings_computed,
                    unit=self.unit,
                    denied=sum(self.denials.values()) if self.denials is not None else 0,
                )
            )

    def _embeddings(self, batch: Sequence[PreparedSource]) -> dict[str, np.ndarray]:
        if self.embedder is None:
            return {}
        texts: dict[str, str] = {}
        for prepared in batch:
            for chunk in prepared.chunks:
                texts.setdefault(sha256_text(chunk.text), chunk.text)
        cached = self.store.embeddings_for_excerpts(texts)
        missing = [sha for sha in texts if sha not in cached]
        vectors = dict(cached)
        if missing:
            computed = self.embedder.embed([texts[sha] for sha in missing])
            vectors.update(zip(missing, computed, strict=True))
        self.report.embeddings_reused += len(cached)
        self.report.embeddings_computed += len(missing)
        return vectors

    def flush(self) -> None:
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        vectors = self._embeddings(batch)
        by_alias: dict[str, list[str]] = {}
        for prepared in batch:
            by_alias.setdefault(prepared.root_alias, []).append(prepared.source_id)
        with self.store.transaction() as tx:
            states: dict[str, SourceState] = {}
            for alias, ids in by_alias.items():
                states.update(tx.source_states(alias, ids))
            new: list[str] = []
            changed: list[str] = []
            chunks_written = 0
            for prepared in batch:
                state = states.get(prepared.source_id)
                if (
                    state is not None
                    and not state.deleted
                    and state.sha256 == prepared.sha256
                    and state.layout == prepared.layout
                ):
                    # Another ingest wrote this exact content after our scan.
                    self.report.unchanged += 1
                    continue
                tx.upsert_source(
                    source_id=prepared.source_id,
                    root_alias=prepared.root_alias,
                    path=prepared.path,
                    canonical_uri=prepared.canonical_uri,
                    source_type=prepared.source_type,
                    classification=prepared.classification,
                    source_ref_id=prepared.source_ref_id,
                    title=prepared.title,
                    external_id=prepared.external_id,
                )
                chunks = [
                    NewChunk(
                        ordinal=chunk.ordinal,
                        locator_type=chunk.locator_type,
                        locator_value=chunk.locator_value,
                        text=chunk.text,
                        excerpt_sha256=sha256_text(chunk.text),
                        heading_path=chunk.heading_path,
                        start_line=chunk.start_line if chunk.locator_type != "row" else None,
                        end_line=chunk.end_line if chunk.locator_type != "row" else None,
                        embedding=vectors.get(sha256_text(chunk.text)),
                    )
                    for chunk in prepared.chunks
                ]
                tx.add_source_version(
                    source_id=prepared.source_id,
                    revision=prepared.revision,
                    sha256=prepared.sha256,
                    path=prepared.path,
                    byte_size=prepared.byte_size,
                    chunks=chunks,
                    links=prepared.links,
                    layout=prepared.layout,
                )
                chunks_written += len(chunks)
                (changed if state is not None else new).append(prepared.source_id)
        # Counted only after the commit, so an interrupted batch is not reported as written.
        written = set(new) | set(changed)
        self.report.new += len(new)
        self.report.changed += len(changed)
        self.report.new_source_ids.extend(new)
        self.report.changed_source_ids.extend(changed)
        self.report.chunks_written += chunks_written
        self.report.pages += sum(prepared.pages for prepared in batch if prepared.source_id in written)
        self.tick("write")


def _prepare_extracted(
    candidate: Candidate, raw: bytes, document: ExtractedDocument, in_git: bool
) -> PreparedSource:
    """A PDF, HTML or DOCX source: chunks of its extracted text, checksum of the original file."""
    checksum = sha256_bytes(raw)
    return PreparedSource(
        source_id=make_source_id(candidate.root_alias, candidate.relative_path),
        root_alias=candidate.root_alias,
        path=candidate.relative_path,
        canonical_uri=f"file:{candidate.project_path}",
        source_type=document.source_type,
        classification=candidate.source_ref.classification,
        source_ref_id=candidate.source_ref.source_id,
        title=document.title or PurePosixPath(candidate.relative_path).stem,
        external_id=None,
        revision=f"git-blob:{git_blob_sha(raw)}" if in_git else content_revision(checksum),
        sha256=checksum,
        byte_size=len(raw),
        chunks=document.chunks,
        pages=document.pages,
        layout=LAYOUT_VERSIONS[document.content_type],
    )


def _prepare_file(
    candidate: Candidate, raw: bytes, text: str, manifest: Manifest, in_git: bool
) -> PreparedSource:
    markdown = candidate.content_type == MARKDOWN
    chunks = tuple(chunk_text(text, markdown=markdown))
    checksum = sha256_bytes(raw)
    links: list[NewLink] = []
    if markdown:
        for link in extract_links(text, candidate.relative_path):
            # A link into a denied path is not recorded: the edge alone would reveal that the source exists.
            probe = link.target if link.link_type == "markdown" else link.target.strip("[]") + ".md"
            if (
                manifest.denial_for_path(str(PurePosixPath(candidate.source_ref.root_path) / probe))
                is not None
            ):
                continue
            ordinal = next(
                (chunk.ordinal for chunk in chunks if chunk.start_line <= link.line <= chunk.end_line), None
            )
            links.append(
                NewLink(
                    link_type=link.link_type, target=link.target, anchor=link.anchor, from_ordinal=ordinal
                )
            )
    return PreparedSource(
        source_id=make_source_id(candidate.root_alias, candidate.relative_path),
        root_alias=candidate.root_alias,
        path=candidate.relative_path,
        canonical_uri=f"file:{candidate.project_path}",
        source_type="markdown" if markdown else "other",
        classification=candidate.source_ref.classification,
        source_ref_id=candidate.source_ref.source_id,
        title=_markdown_title(chunks, PurePosixPath(candidate.relative_path).stem)
        if markdown
        else plain_text_title(text),
        external_id=None,
        revision=f"git-blob:{git_blob_sha(raw)}" if in_git else content_revision(checksum),
        sha256=checksum,
        byte_size=len(raw),
        chunks=chunks,
        links=tuple(links),
    )


def _in_scope(path: str, scope: WalkScope) -> bool:
    if scope.is_file:
        return path == scope.prefix
    return path.startswith(scope.prefix)


def _mark_deletions(
    store: EvidenceStore,
    scopes: Sequence[WalkScope],
    seen: dict[str, set[str]],
    report: IngestReport,
    retired: frozenset[str] = frozenset(),
) -> None:
    """Mark current sources inside ``scopes`` that were not seen as deleted.

    Retired sources (over a lowered cap) are marked the same way; the caller counts them as over the cap.
    """
    for scope in scopes:
        states = store.source_states(scope.root_alias)
        gone = sorted(
            state.source_id
            for state in states.values()
            if not state.deleted
            and _in_scope(state.path, scope)
            and state.source_id not in seen.get(scope.root_alias, set())
        )
        if not gone:
            continue
        with store.transaction() as tx:
            for source_id in gone:
                tx.mark_source_deleted(source_id)
        report.deleted += sum(1 for source_id in gone if source_id not in retired)
        report.deleted_source_ids.extend(gone)


def _resolve_links(store: EvidenceStore, aliases: Sequence[str]) -> None:
    for alias in aliases:
        mapping: dict[str, str] = {}
        for state in store.source_states(alias).values():
            if state.deleted:
                continue
            mapping[state.path] = state.source_id
            for key in wikilink_keys_for(state.path):
                mapping.setdefault(key, state.source_id)
        with store.transaction() as tx:
            tx.resolve_link_targets(alias, mapping)


def _unknown(
    missing: Sequence[str], manifest: Manifest, states: dict[str, dict[str, SourceState]]
) -> list[str]:
    """Missing explicit paths that are not stored sources either (a stored one was deleted)."""
    stored = {
        str(PurePosixPath(ref.root_path) / state.path)
        for ref in manifest.source_refs
        for state in states.get(ref.root_alias, {}).values()
        if not state.deleted
    }
    return [path for path in missing if path not in stored]


def _manifest_cap_plan(
    manifest: Manifest,
    scopes: Sequence[WalkScope],
    listed: Sequence[str],
    states: dict[str, dict[str, SourceState]],
) -> CorpusCapPlan:
    listed_ids = set(listed)
    current: set[str] = set()
    outside = 0
    for alias, alias_states in states.items():
        for source_id, state in alias_states.items():
            if state.deleted:
                continue
            if source_id in listed_ids:
                current.add(source_id)
            elif not any(scope.root_alias == alias and _in_scope(state.path, scope) for scope in scopes):
                outside += 1
            # Otherwise the walk covered it and did not find it: it is about to be marked deleted.
    return CorpusCapPlan.for_target(manifest.scope.max_corpus_documents, listed, current, outside)


def ingest(
    store: EvidenceStore,
    manifest: Manifest,
    paths: Sequence[str] | None = None,
    *,
    embedder: Embedder | None = None,
    progress: ProgressCallback | None = None,
    batch_size: int = DEFAULT_BATCH_FILES,
) -> IngestReport:
    """Ingest the manifest's roots, or only ``paths`` (relative to the project root)."""
    started = time.perf_counter()
    report = IngestReport(corpus_cap=manifest.scope.max_corpus_documents)
    walker = ManifestWalker(manifest)
    # The walk decides from names and lstat alone, so listing it before reading is cheap; the
    # list gives progress its total and the cap the sources that are about to go missing.
    candidates = list(walker.candidates(paths))
    listed = [make_source_id(candidate.root_alias, candidate.relative_path) for candidate in candidates]
    states = {alias: store.source_states(alias) for alias in manifest.file_root_aliases()}
    plan = _manifest_cap_plan(manifest, walker.scopes, listed, states)
    writer = _BatchWriter(
        store, embedder, report, progress, started, total=len(candidates), denials=walker.denied
    )
    seen: dict[str, set[str]] = {}
    git_roots: dict[str, bool] = {}
    for candidate, source_id in zip(candidates, listed, strict=True):
        alias = candidate.root_alias
        writer.files_done += 1
        writer.tick()
        if not plan.admits(source_id):
            report.over_cap += 1
            continue
        if alias not in git_roots:
            git_roots[alias] = inside_git_work_tree(candidate.absolute_path.parent)
        report.files_seen += 1
        if candidate.content_type in EXTRACTED_TYPES:
            try:
                # A file over the size limit is refused from its size, before it is read.
                too_large = candidate.absolute_path.lstat().st_size > DEFAULT_LIMITS.max_file_bytes
                raw = b"" if too_large else read_regular_file(candidate.absolute_path)
            except OSError:
                report.unreadable += 1
                continue
            if too_large:
                walker.denied.deny(DenialReason.OVER_LIMIT)
                report.files_seen -= 1
                continue
            state = states[alias].get(source_id)
            # A file cut with an earlier layout of its format is cut again, as if it had changed:
            # its stored line ranges would not find the same text in the new layout.
            if (
                state is not None
                and not state.deleted
                and state.sha256 == sha256_bytes(raw)
                and state.layout == LAYOUT_VERSIONS[candidate.content_type]
            ):
                seen.setdefault(alias, set()).add(source_id)
                report.unchanged += 1
                continue
            try:
                document = extract_document(candidate.content_type, raw)
            except NoTextError:
                # Not seen: a version stored before, when the file had text, is marked deleted.
                report.no_text += 1
                continue
            except ExtractionError as error:
                walker.denied.deny(error.reason)
                report.files_seen -= 1
                continue
            seen.setdefault(alias, set()).add(source_id)
            writer.add(_prepare_extracted(candidate, raw, document, git_roots[alias]), batch_size)
            plan.take(source_id)
            continue
        try:
            raw = read_regular_file(candidate.absolute_path)
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            report.unreadable += 1
            continue
        front = _front_matter(text) if candidate.content_type == MARKDOWN else {}
        declared = front.get("classification")
        if isinstance(declared, str) and not manifest.classification_allowed(declared):
            walker.denied.deny(DenialReason.DENIED_CLASSIFICATION)
            report.files_seen -= 1
            continue
        seen.setdefault(alias, set()).add(source_id)
        state = states[alias].get(source_id)
        if state is not None and not state.deleted and state.sha256 == sha256_bytes(raw):
            report.unchanged += 1
            continue
        writer.add(_prepare_file(candidate, raw, text, manifest, git_roots[alias]), batch_size)
        plan.take(source_id)
    writer.flush()
    report.missing_paths = _unknown(walker.missing, manifest, states)
    _mark_deletions(store, walker.scopes, seen, report, plan.retired)
    if report.ingested or report.deleted or plan.retired:
        _resolve_links(store, sorted({scope.root_alias for scope in walker.scopes}))
    report.denied = dict(walker.denied)
    report.seconds = time.perf_counter() - started
    writer.tick("done")
    return report


# ---- JSONL corpora (BEIR format) ------------------------------------------------------------


def corpus_alias(corpus: Path) -> str:
    """Default root alias of a corpus file: its folder's name when the file is called corpus.*."""
    stem = corpus.name.split(".")[0]
    return corpus.parent.name if stem == "corpus" and corpus.parent.name else stem


def _corpus_documents(corpus: Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if corpus.name.endswith(".gz") else open
    try:
        with opener(corpus, "rt", encoding="utf-8") as stream:
            for number, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                try:
                    document = json.loads(line)
                except json.JSONDecodeError as error:
                    raise IngestError(f"{corpus.name} line {number}: not JSON ({error.msg})") from error
                if not isinstance(document, dict) or "_id" not in document:
                    raise IngestError(f"{corpus.name} line {number}: a document needs an '_id'")
                yield document
    except OSError as error:
        raise IngestError(f"cannot read corpus {corpus.name}: {error.strerror or error}") from error


def corpus_document_count(corpus: Path) -> int:
    """How many documents a JSONL(.gz) corpus holds (its non-blank lines), without parsing them."""
    opener = gzip.open if corpus.name.endswith(".gz") else open
    try:
        with opener(corpus, "rt", encoding="utf-8") as stream:
            return sum(1 for line in stream if line.strip())
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise IngestError(f"cannot read corpus {corpus.name}: {error}") from error


def ingest_corpus(
    store: EvidenceStore,
    corpus: Path,
    *,
    alias: str | None = None,
    embedder: Embedder | None = None,
    classification: str = "public",
    source_type: str = "paper",
    progress: ProgressCallback | None = None,
    batch_size: int = DEFAULT_BATCH_DOCUMENTS,
    max_documents: int | None = None,
) -> IngestReport:
    """Ingest a ``{"_id","title","text"}`` JSONL(.gz) corpus as its own public source root.

    Each document is a source ``akm:<alias>:<_id>`` with one ``row`` chunk (locator value the
    ``_id``) whose text is ``title``, a blank line, then ``text``, the same text the corpus
    direct reader reads, so the sha256 recorded here is the one it checks. At most
    ``max_documents`` documents of the corpus are kept current (the manifest's
    ``scope.maxCorpusDocuments``; ``None``: no cap). The corpus file's absolute path is
    recorded for the alias, so rows of this root can be read directly from it later.
    """
    if not corpus.is_file():
        raise IngestError(f"corpus file not found: {corpus}")
    alias = alias or corpus_alias(corpus)
    started = time.perf_counter()
    report = IngestReport(corpus_cap=max_documents)
    # A first pass over the ids checks the whole file before anything is written, and gives
    # progress its total and the cap the documents in file order.
    document_ids = [str(document["_id"]) for document in _corpus_documents(corpus)]
    listed = list(dict.fromkeys(make_source_id(alias, document_id) for document_id in document_ids))
    states = store.source_states(alias)
    current = {source_id for source_id in listed if source_id in states and not states[source_id].deleted}
    plan = CorpusCapPlan.for_target(max_documents, listed, current, outside=0)
    writer = _BatchWriter(
        store, embedder, report, progress, started, total=len(document_ids), unit="documents"
    )
    seen: set[str] = set()
    refused: set[str] = set()
    for document in _corpus_documents(corpus):
        document_id = str(document["_id"])
        source_id = make_source_id(alias, document_id)
        writer.files_done += 1
        writer.tick()
        if source_id in refused:
            continue
        if source_id in seen:
            report.files_seen += 1
            continue
        if not plan.admits(source_id):
            refused.add(source_id)
            report.over_cap += 1
            continue
        report.files_seen += 1
        seen.add(source_id)
        text = corpus_document_text(document)
        checksum = sha256_text(text)
        state = states.get(source_id)
        if state is not None and not state.deleted and state.sha256 == checksum:
            report.unchanged += 1
            continue
        chunk = TextChunk(
            ordinal=0,
            locator_type="row",
            locator_value=document_id,
            heading_path=(),
            start_line=1,
            end_line=len(text.splitlines()),
            text=text,
        )
        title = str(document.get("title") or "").strip() or None
        writer.add(
            PreparedSource(
                source_id=source_id,
                root_alias=alias,
                path=document_id,
                canonical_uri=f"source:{alias}/{document_id}",
                source_type=source_type,
                classification=classification,
                source_ref_id=f"corpus:{alias}",
                title=title,
                external_id=document_id,
                revision=content_revision(checksum),
                sha256=checksum,
                byte_size=len(text.encode("utf-8")),
                chunks=(chunk,),
            ),
            batch_size,
        )
        plan.take(source_id)
    writer.flush()
    # The direct reader of this root opens the same file again.
    with store.transaction() as tx:
        tx.register_corpus_file(alias, str(corpus.resolve()))
    _mark_deletions(store, [WalkScope(alias, "", False)], {alias: seen}, report, plan.retired)
    report.seconds = time.perf_counter() - started
    writer.tick("done")
    return report
