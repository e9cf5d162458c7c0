"""Which stored sources the API may speak about: the manifest's scope, applied at read time.

A source outside the scope (denied classification, denied path, or excluded from its root's
source refs) does not exist for the API: lookups answer "not found" exactly as for an unknown
id, and listings leave it out, so a response never hints that it is there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from akm.manifest import Manifest


@dataclass(frozen=True)
class SourceScope:
    """Visibility rule over ``(root alias, path, classification)`` of a source."""

    manifest: Manifest | None

    def allows(self, *, root_alias: str | None, path: str, classification: str) -> bool:
        manifest = self.manifest
        if manifest is None:
            return True
        if not manifest.classification_allowed(classification):
            return False
        if manifest.denial_for_path(path) is not None:
            return False
        aliases = {ref.root_alias for ref in manifest.source_refs}
        if root_alias is not None and root_alias in aliases:
            return manifest.source_ref_for(root_alias, path) is not None
        return True

    def allows_row(self, row: Mapping[str, Any], stored: Mapping[str, tuple[str, str, str]]) -> bool:
        """Whether an evidence row's source is visible.

        ``stored`` maps source ids known to the store to ``(root alias, path, classification)``;
        a row whose source the store does not know is judged by the row's own fields.
        """
        source = row.get("source")
        if not isinstance(source, Mapping):
            return False
        known = stored.get(str(source.get("sourceId", "")))
        if known is not None:
            return self.allows(root_alias=known[0], path=known[1], classification=known[2])
        return self.allows(
            root_alias=None,
            path=str(source.get("canonicalPath") or source.get("canonicalUri") or ""),
            classification=str(source.get("classification", "unknown")),
        )


EVERYTHING = SourceScope(manifest=None)
