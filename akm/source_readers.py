"""Direct-read dispatch: which reader may re-read a row's canonical source.

File sources (``file:`` canonical URIs) are read relative to the manifest's project root, which
their canonical paths are relative to; nothing outside that root is ever opened. PDF, HTML and
DOCX files (known by their extension) are re-extracted exactly as ingest extracted them
(``akm.ingest.formats.source_text``), so their line locators cut out the same passage. Corpus documents
(``source:<alias>/<id>``) are read from the JSONL(.gz) file their corpus root was ingested from,
as the store recorded it (``Manifest.corpus_files``); only that one file is opened. A row whose
source has neither has no reader here, so its direct read fails and the row is rejected.
"""

from __future__ import annotations

import threading
from pathlib import Path

from akm.contract.models import EvidenceRow, ReadMethod
from akm.direct_read import (
    FileSourceReader,
    JsonlCorpusReader,
    ReadResult,
    SourceLocation,
    SourceReader,
    SourceUnreadableError,
)
from akm.ingest.formats import source_text
from akm.manifest import Manifest

CORPUS_URI_PREFIX = "source:"


class RootReaders:
    """The reader for each row, chosen by its canonical URI."""

    def __init__(self, manifest: Manifest, reader_id: str = "akm.direct_read") -> None:
        self.reader_id = reader_id
        self.files = FileSourceReader.for_manifest(manifest, reader_id=reader_id, text_of=source_text)
        self.corpora = {alias: corpus_reader(path, reader_id) for alias, path in manifest.corpus_files}

    def for_row(self, row: EvidenceRow) -> SourceReader:
        uri = row.source.canonical_uri
        if uri.startswith("file:"):
            return self.files
        if uri.startswith(CORPUS_URI_PREFIX):
            alias = uri.removeprefix(CORPUS_URI_PREFIX).split("/", 1)[0]
            reader = self.corpora.get(alias)
            if reader is not None:
                return reader
        return _NoReader(self.reader_id)


_corpus_readers: dict[tuple[Path, str], JsonlCorpusReader] = {}
_corpus_readers_lock = threading.Lock()


def corpus_reader(path: Path, reader_id: str) -> JsonlCorpusReader:
    """The process's reader of one corpus file: its ID index is built once per file version,
    not once per answer (a SciFact index takes about 0.1 s)."""
    key = (path, reader_id)
    with _corpus_readers_lock:
        reader = _corpus_readers.get(key)
        if reader is None:
            reader = _corpus_readers[key] = JsonlCorpusReader(path, reader_id=reader_id)
        return reader


class _NoReader:
    """For a source no reader is registered for: every read fails, so the row is rejected."""

    read_method: ReadMethod = "other"

    def __init__(self, reader_id: str) -> None:
        self.reader_id = reader_id

    def read(self, location: SourceLocation) -> ReadResult:
        raise SourceUnreadableError(f"no reader can open {location.path}")


__all__ = ["CORPUS_URI_PREFIX", "RootReaders", "corpus_reader"]
