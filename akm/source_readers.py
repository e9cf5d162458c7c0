"""Direct-read dispatch for rows of several manifest roots.

A row's source ID is ``akm:<root alias>:<path>``; the alias picks the manifest root its file
lives under, and nothing outside that root is ever opened.
"""

from __future__ import annotations

from akm.contract.models import EvidenceRow, ReadMethod
from akm.direct_read import FileSourceReader, ReadResult, SourceLocation, SourceReader, SourceUnreadableError
from akm.manifest import Manifest


class RootReaders:
    """Direct-read dispatch by the row's root alias (``akm:<alias>:<path>`` source IDs)."""

    def __init__(self, manifest: Manifest, reader_id: str = "akm.direct_read") -> None:
        self.reader_id = reader_id
        self.readers = {
            alias: FileSourceReader(root, reader_id=reader_id)
            for alias, root in manifest.root_aliases().items()
        }

    def for_row(self, row: EvidenceRow) -> SourceReader:
        parts = row.source.source_id.split(":", 2)
        reader = self.readers.get(parts[1]) if len(parts) == 3 else None
        return reader if reader is not None else _NoReader(self.reader_id)


class _NoReader:
    """For a row whose root the manifest does not name: every read fails, so the row is rejected."""

    read_method: ReadMethod = "other"

    def __init__(self, reader_id: str) -> None:
        self.reader_id = reader_id

    def read(self, location: SourceLocation) -> ReadResult:
        raise SourceUnreadableError(f"no manifest root can read {location.path}")


__all__ = ["RootReaders"]
