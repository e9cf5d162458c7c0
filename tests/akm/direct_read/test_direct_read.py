from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from akm.contract.ids import sha256_text
from akm.contract.models import Locator
from akm.direct_read import (
    FileSourceReader,
    JsonlCorpusReader,
    LocatorNotFoundError,
    SourceLocation,
    direct_read,
    extract_passage,
)

AT = "2026-11-29T01:00:00.000Z"


def test_unchanged_source_becomes_direct_read_with_checksum_match(
    source_root, candidate_for, contract_validator
):
    row = candidate_for()

    outcome = direct_read(row, FileSourceReader(source_root), at=AT)

    assert outcome.status == "direct-read"
    assert outcome.read is not None and outcome.read.text == "Run make install.\nThen make test."
    read = outcome.row.verification.direct_read
    assert read is not None
    assert (read.performed, read.checksum_match, read.read_by, read.read_at) == (
        True,
        True,
        "akm.direct_read",
        AT,
    )
    assert read.observed_revision == row.source.version.revision
    assert read.observed_checksum == row.source.version.checksum
    assert read.locator_read == "docs/guide.md:7-8"
    assert read.read_method == "direct-file-read"
    assert [event.state for event in outcome.row.verification.history or ()] == ["candidate", "direct-read"]
    assert outcome.row.scope.locator == row.scope.locator
    assert outcome.reason == "checksum matches the indexed version"
    contract_validator(outcome.row.to_json(), "EvidenceRow")


def test_edited_source_becomes_stale_never_direct_read(source_root, candidate_for, contract_validator):
    row = candidate_for()
    (source_root / "docs" / "guide.md").write_text("# Guide\n\nRewritten.\n", encoding="utf-8")

    outcome = direct_read(row, FileSourceReader(source_root), at=AT)

    assert outcome.status == "stale"
    assert outcome.row.verification.state == "stale"
    assert outcome.row.verification.direct_read is None
    assert outcome.row.freshness.state == "stale"
    rewritten = "# Guide\n\nRewritten.\n"
    observed = "sha256:" + sha256_text(rewritten)[:16]
    assert outcome.row.freshness.reason == (
        f"source changed since it was indexed (expected revision {row.source.version.revision}, observed {observed})"
    )
    assert outcome.reason == "stale"
    contract_validator(outcome.row.to_json(), "EvidenceRow")


def test_deleted_source_is_rejected(source_root, candidate_for, contract_validator):
    row = candidate_for()
    (source_root / "docs" / "guide.md").unlink()

    outcome = direct_read(row, FileSourceReader(source_root), at=AT)

    assert outcome.status == "rejected"
    assert outcome.row.verification.rejection_reasons == ("source-missing: docs/guide.md no longer exists",)
    assert outcome.reason == "source-missing"
    contract_validator(outcome.row.to_json(), "EvidenceRow")


@pytest.mark.parametrize(
    "escaping_path",
    ["../outside.md", "/etc/passwd", "docs/../../outside.md"],
    ids=["parent", "absolute", "nested-parent"],
)
def test_locator_escaping_the_root_is_rejected(source_root, candidate_for, escaping_path):
    row = candidate_for()
    # The contract model refuses such a path, so the row is forged past validation.
    forged = row.model_copy(
        update={"source": row.source.model_copy(update={"canonical_path": escaping_path})}
    )

    outcome = direct_read(forged, FileSourceReader(source_root), at=AT)

    assert outcome.status == "rejected"
    assert outcome.reason == "locator-escapes-root"
    assert outcome.read is None


def test_symlink_leaving_the_root_is_rejected(source_root, candidate_for):
    row = candidate_for()
    (source_root / "docs" / "guide.md").unlink()
    (source_root / "docs" / "guide.md").symlink_to(source_root.parent / "outside.md")

    outcome = direct_read(row, FileSourceReader(source_root), at=AT)

    assert (outcome.status, outcome.reason) == ("rejected", "locator-escapes-root")


def test_heading_locator_reads_its_section(source_root, candidate_for):
    row = candidate_for(
        locator=Locator(type="heading", value="## Install", heading_path=("Guide", "Install"))
    )
    outcome = direct_read(row, FileSourceReader(source_root), at=AT)
    assert outcome.status == "direct-read"
    assert outcome.read is not None
    assert outcome.read.text == "## Install\n\nRun make install.\nThen make test.\n"


def test_locator_outside_the_source_is_rejected(source_root, candidate_for):
    row = candidate_for(
        locator=Locator(type="line-range", value="docs/guide.md:90-95", start_line=90, end_line=95)
    )
    outcome = direct_read(row, FileSourceReader(source_root), at=AT)
    assert (outcome.status, outcome.reason) == ("rejected", "invalid-locator")


def test_extract_passage_rejects_an_unknown_heading():
    with pytest.raises(LocatorNotFoundError, match="heading 'Missing' is not in the source"):
        extract_passage("# Title\ntext\n", Locator(type="heading", value="# Missing"))


def test_jsonl_corpus_reader_rereads_a_row_by_id(tmp_path: Path):
    corpus = tmp_path / "corpus.jsonl.gz"
    documents = [
        {"_id": "7", "title": "Seven", "text": "The seventh abstract."},
        {"_id": "12", "title": "Twelve", "text": "The twelfth abstract."},
    ]
    with gzip.open(corpus, "wt", encoding="utf-8") as stream:
        for document in documents:
            stream.write(json.dumps(document) + "\n")

    result = JsonlCorpusReader(corpus).read(
        SourceLocation(path="12", locator=Locator(type="row", value="12"))
    )

    assert result.text == "Twelve\n\nThe twelfth abstract."
    assert result.checksum == sha256_text("Twelve\n\nThe twelfth abstract.")
