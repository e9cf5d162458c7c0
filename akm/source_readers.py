"""Direct-read dispatch: which reader may re-read a row's canonical source.

File sources (``file:`` canonical URIs) are read relative to the manifest's project root, which
their canonical paths are relative to; nothing outside that root is ever opened. A row whose
source is not a file has no reader here, so its direct read fails and the row is rejected.
"""

from __future__ import annotations

from akm.contract.models import EvidenceRow, ReadMethod
from akm.direct_read import FileSourceReader, ReadResult, SourceLocation, SourceReader, SourceUnreadableError
from akm.manifest import Manifest


class RootReaders:
    """The reader for each row, chosen by its canonical URI."""

    def __init__(self, manifest: Manifest, reader_id: str = "akm.direct_read") -> None:
        self.reader_id = reader_id
        self.files = FileSourceReader.for_manifest(manifest, reader_id=reader_id)

    def for_row(self, row: EvidenceRow) -> SourceReader:
        if row.source.canonical_uri.startswith("file:"):
            return self.files
        return _NoReader(self.reader_id)


class _NoReader:
    """For a source that is not a file: every read fails, so the row is rejected."""

    read_method: ReadMethod = "other"

    def __init__(self, reader_id: str) -> None:
        self.reader_id = reader_id

    def read(self, location: SourceLocation) -> ReadResult:
        raise SourceUnreadableError(f"no reader can open {location.path}")


__all__ = ["RootReaders"]
