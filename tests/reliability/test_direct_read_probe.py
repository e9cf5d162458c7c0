"""Probe 10: an indexed file replaced after ingest by a link to a denied file in the same root.

The direct read must refuse it without opening (or hashing) the denied file, like ingest does.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from akm.config import DEFAULT_MANIFEST_FILE
from akm.direct_read import direct_read
from akm.embedding import HashingEmbedder
from akm.ingest import ingest
from akm.manifest import load_manifest
from akm.retrieval.candidates import candidate_from_chunk
from akm.source_readers import RootReaders
from akm.store import open_store

pytestmark = pytest.mark.reliability

SECRET = "api_key = zebra-0123456789\n"


def _read_after(tmp_path: Path, replace: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str]]:
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "guide.md").write_text("# Guide\n\nHow to install it.\n", encoding="utf-8")
    (project / "docs" / "team-secret-keys.md").write_text(SECRET, encoding="utf-8")
    document = yaml.safe_load(DEFAULT_MANIFEST_FILE.read_text(encoding="utf-8"))
    document["projectRoot"] = "."
    document["sourceRefs"][0]["rootPath"] = "docs"
    (project / "manifest.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    manifest = load_manifest(project / "manifest.yaml")
    assert manifest.is_denied("docs/team-secret-keys.md")
    store = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    try:
        ingest(store, manifest, embedder=HashingEmbedder())
        (chunk,) = store.chunks_of_source("akm:docs:guide.md")
    finally:
        store.close()
    replace(project / "docs" / "guide.md", project / "docs" / "team-secret-keys.md")
    ref = manifest.source_refs[0]
    row = candidate_from_chunk(
        chunk,
        manifest,
        ref,
        lane="exact",
        query="install",
        rank=1,
        result_set_id="rs:probe",
        parameters={},
        raw_score=None,
        raw_score_meaning=None,
    )
    opened: list[str] = []
    original, original_io = os.open, io.open

    def recording_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append(Path(os.fsdecode(path)).name)
        return original(path, flags, *args, **kwargs)

    def recording_io_open(path: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(path, str | bytes | os.PathLike):
            opened.append(Path(os.fsdecode(path)).name)
        return original_io(path, *args, **kwargs)

    # Both ways a file can be opened from Python: os.open and io.open (Path.read_bytes, open()).
    monkeypatch.setattr(os, "open", recording_open)
    monkeypatch.setattr(io, "open", recording_io_open)
    outcome = direct_read(row, RootReaders(manifest).for_row(row))
    monkeypatch.undo()
    return outcome, opened


def _symlink(indexed: Path, denied: Path) -> None:
    indexed.unlink()
    os.symlink(denied.name, indexed)


def _hard_link(indexed: Path, denied: Path) -> None:
    indexed.unlink()
    os.link(denied, indexed)


@pytest.mark.parametrize("replace", [_symlink, _hard_link], ids=["symlink", "hard-link"])
def test_a_denied_file_behind_an_indexed_path_is_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replace: Any
) -> None:
    outcome, opened = _read_after(tmp_path, replace, monkeypatch)
    assert outcome.status == "rejected"
    assert "team-secret-keys.md" not in opened
    assert "zebra" not in str(outcome.row.to_json())


def test_an_unchanged_file_is_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outcome, _ = _read_after(tmp_path, lambda indexed, denied: None, monkeypatch)
    assert outcome.status == "direct-read"
