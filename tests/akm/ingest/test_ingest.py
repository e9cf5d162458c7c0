"""Ingest of a manifest's roots: denials, chunks, versions, deletions, links, concurrency."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from akm.cli import COMMAND_MODULES
from akm.embedding import HashingEmbedder
from akm.ingest import git_blob_sha, ingest
from akm.manifest import Manifest
from akm.store import EvidenceStore, open_store

from .conftest import DENIED_FILES, GUIDE, run_ingest_command

ALLOWED = ["akm:docs:guide.md", "akm:docs:notes.md", "akm:docs:reference.md"]
EXPECTED_DENIALS = {
    "denied-path-token": 1,
    "denied-basename-token": 1,
    "denied-extension": 1,
    "denied-classification": 1,  # private front matter
    "not-included": 1,
    "symlink": 1,
    "nested-repository": 1,
}


def test_denies_each_kind_without_opening_it(
    store: EvidenceStore, manifest: Manifest, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    original = os.open

    def recording_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append(Path(path).name)
        return original(path, flags, *args, **kwargs)

    # Ingest opens sources through os.open (no symlink following, no blocking on a FIFO).
    monkeypatch.setattr(os, "open", recording_open)
    report = ingest(store, manifest, embedder=HashingEmbedder())
    assert report.denied == EXPECTED_DENIALS
    assert sorted(report.new_source_ids) == ALLOWED
    # Only the front-matter file is opened among the denied ones: its classification is inside it.
    assert sorted(opened) == ["front-zebra.md", "guide.md", "notes.md", "reference.md"]
    assert store.find_sources("zebra") == []


@pytest.mark.parametrize(
    ("paths", "reason"),
    [
        (["../outside-zebra.md"], "escaping-path"),
        (["/etc/hostname"], "absolute-path"),
        (["docs/link-zebra.md"], "symlink"),
        (["docs/vendored-zebra/inside.md"], "nested-repository"),
        (["manifest.yaml"], "not-included"),
    ],
    ids=["escaping", "absolute", "symlink", "nested-repo", "outside-roots"],
)
def test_explicit_paths_are_checked(
    sqlite_store: EvidenceStore, manifest: Manifest, paths: list[str], reason: str
) -> None:
    report = ingest(sqlite_store, manifest, paths, embedder=HashingEmbedder())
    assert report.denied == {reason: 1}
    assert report.files_seen == 0
    assert sqlite_store.count_current_chunks() == 0


def test_private_source_ref_is_denied_by_classification(sqlite_store: EvidenceStore, project: Path) -> None:
    from akm.manifest import load_manifest

    from .conftest import write_manifest

    (project / "docs" / "restricted-area").mkdir()
    (project / "docs" / "restricted-area" / "zebra.md").write_text("# Z\n", encoding="utf-8")
    manifest = load_manifest(write_manifest(project, restricted_ref=True), check_schema=False)
    report = ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    assert report.denied["denied-classification"] == 2
    assert sorted(report.new_source_ids) == ALLOWED


def test_report_and_cli_output_are_count_only(
    project: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    where = {"database_url": sqlite_url, "manifest_path": project / "manifest.yaml"}
    code = run_ingest_command(["--embedder", "hashing", "--json"], **where)
    captured = capsys.readouterr()
    assert code == 0
    report = json.loads(captured.out)
    assert report["deniedByReason"] == EXPECTED_DENIALS
    assert "zebra" not in (captured.out + captured.err).lower()
    code = run_ingest_command(["--embedder", "hashing"], **where)
    captured = capsys.readouterr()
    assert code == 0
    assert "skipped unchanged 3" in captured.out
    assert "zebra" not in (captured.out + captured.err).lower()
    for name in DENIED_FILES:
        assert Path(name).stem not in captured.out


def test_ingest_command_is_registered() -> None:
    assert "akm.cli.ingest" in COMMAND_MODULES


def test_cli_rejects_broken_manifest(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("manifestVersion: 1\n", encoding="utf-8")
    code = run_ingest_command(["--embedder", "hashing"], database_url=sqlite_url, manifest_path=broken)
    assert code == 2
    assert "manifest field" in capsys.readouterr().err


def test_chunk_locators_and_line_ranges(sqlite_store: EvidenceStore, manifest: Manifest) -> None:
    ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    chunks = sqlite_store.chunks_of_source("akm:docs:guide.md")
    assert [
        (chunk.locator_type, chunk.locator_value, chunk.heading_path, chunk.start_line, chunk.end_line)
        for chunk in chunks
    ] == [
        ("heading", "# Guide", ("Guide",), 1, 4),
        ("heading", "## Install", ("Guide", "Install"), 6, 8),
        ("heading", "### Offline", ("Guide", "Install", "Offline"), 10, 12),
        ("heading", "## Use", ("Guide", "Use"), 14, 16),
    ]
    lines = GUIDE.splitlines()
    for chunk in chunks:
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
    notes = sqlite_store.chunks_of_source("akm:docs:notes.md")
    assert [(c.locator_type, c.locator_value, c.heading_path) for c in notes] == [("line-range", "1-3", ())]
    assert chunks[0].canonical_uri == "file:docs/guide.md"
    assert chunks[0].title == "Guide"


def test_long_sections_split_into_line_ranges(
    sqlite_store: EvidenceStore, manifest: Manifest, project: Path
) -> None:
    paragraphs = [f"Paragraph {index} " + "word " * 60 for index in range(6)]
    (project / "docs" / "long.md").write_text("# Long\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    ingest(sqlite_store, manifest, ["docs/long.md"], embedder=HashingEmbedder())
    chunks = sqlite_store.chunks_of_source("akm:docs:long.md")
    assert len(chunks) > 1
    assert {chunk.locator_type for chunk in chunks} == {"line-range"}
    assert chunks[0].start_line == 1
    assert all(chunk.heading_path == ("Long",) for chunk in chunks)
    assert all(len(chunk.text) <= 1200 for chunk in chunks)
    ends = [chunk.end_line for chunk in chunks]
    starts = [chunk.start_line for chunk in chunks]
    assert all(start > end for start, end in zip(starts[1:], ends[:-1], strict=True))


def test_reingest_is_idempotent(store: EvidenceStore, manifest: Manifest) -> None:
    first = ingest(store, manifest, embedder=HashingEmbedder())
    chunks = store.count_current_chunks()
    second = ingest(store, manifest, embedder=HashingEmbedder())
    assert (first.new, first.unchanged, first.chunks_written) == (3, 0, chunks)
    assert (second.new, second.changed, second.unchanged, second.deleted, second.chunks_written) == (
        0,
        0,
        3,
        0,
        0,
    )
    assert store.count_current_chunks() == chunks
    assert [len(store.source_versions(source_id)) for source_id in ALLOWED] == [1, 1, 1]


def test_changed_file_gets_new_version_and_old_is_kept(
    store: EvidenceStore, manifest: Manifest, project: Path
) -> None:
    ingest(store, manifest, embedder=HashingEmbedder())
    (project / "docs" / "reference.md").write_text("# Reference\n\nNow about pulsars.\n", encoding="utf-8")
    embedder = HashingEmbedder()
    report = ingest(store, manifest, embedder=embedder)
    assert report.changed_source_ids == ["akm:docs:reference.md"]
    assert (report.changed, report.unchanged) == (1, 2)
    versions = store.source_versions("akm:docs:reference.md")
    assert [version.is_current for version in versions] == [False, True]
    assert versions[0].sha256 != versions[1].sha256
    assert [chunk.text for chunk in store.chunks_of_source("akm:docs:reference.md")] == [
        "# Reference\n\nNow about pulsars."
    ]
    assert len(store.chunks_of_source("akm:docs:reference.md", current_only=False)) == 2
    assert [c.source_id for c, _ in store.lexical_search("pulsars", 5)] == ["akm:docs:reference.md"]
    assert store.lexical_search("quasars", 5) == []
    assert embedder.calls == [1]


def test_deleted_file_is_marked_deleted(store: EvidenceStore, manifest: Manifest, project: Path) -> None:
    ingest(store, manifest, embedder=HashingEmbedder())
    (project / "docs" / "notes.md").unlink()
    report = ingest(store, manifest, embedder=HashingEmbedder())
    assert report.deleted_source_ids == ["akm:docs:notes.md"]
    assert store.source_states("docs")["akm:docs:notes.md"].deleted is True
    assert store.chunks_of_source("akm:docs:notes.md") == []
    assert store.lexical_search("nebulae", 5) == []
    assert len(store.source_versions("akm:docs:notes.md")) == 1
    # Restoring identical content is a new observation: a version of its own, with its own time
    # and a revision told apart from the first, while the first keeps its observation time.
    from .conftest import NOTES

    first = store.source_versions("akm:docs:notes.md")[0]
    (project / "docs" / "notes.md").write_text(NOTES, encoding="utf-8")
    again = ingest(store, manifest, embedder=HashingEmbedder())
    assert again.changed_source_ids == ["akm:docs:notes.md"]
    versions = store.source_versions("akm:docs:notes.md")
    assert [version.sha256 for version in versions] == [first.sha256, first.sha256]
    assert versions[0].observed_at == first.observed_at and not versions[0].is_current
    assert versions[1].revision == f"{first.revision}#2" and versions[1].is_current
    assert [c.source_id for c, _ in store.lexical_search("nebulae", 5)] == ["akm:docs:notes.md"]


def test_partial_ingest_only_deletes_inside_its_paths(
    sqlite_store: EvidenceStore, manifest: Manifest, project: Path
) -> None:
    ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    (project / "docs" / "notes.md").unlink()
    report = ingest(sqlite_store, manifest, ["docs/guide.md"], embedder=HashingEmbedder())
    assert (report.unchanged, report.deleted) == (1, 0)
    report = ingest(sqlite_store, manifest, ["docs/notes.md"], embedder=HashingEmbedder())
    assert report.deleted_source_ids == ["akm:docs:notes.md"]


def test_links_become_graph_edges(store: EvidenceStore, manifest: Manifest) -> None:
    ingest(store, manifest, embedder=HashingEmbedder())
    edges = store.links_from_sources(["akm:docs:guide.md"])["akm:docs:guide.md"]
    assert [(edge.link_type, edge.target, edge.target_source_id, edge.anchor) for edge in edges] == [
        ("markdown", "reference.md", "akm:docs:reference.md", "top"),
        ("wikilink", "[[notes]]", "akm:docs:notes.md", None),
    ]
    use_chunk = store.get_chunk(edges[0].from_chunk_id or -1)
    assert use_chunk is not None and use_chunk.locator_value == "## Use"
    into_reference = store.links_to_sources(["akm:docs:reference.md"])["akm:docs:reference.md"]
    assert [edge.from_source_id for edge in into_reference] == ["akm:docs:guide.md"]


def test_link_into_denied_path_is_not_recorded(
    sqlite_store: EvidenceStore, manifest: Manifest, project: Path
) -> None:
    (project / "docs" / "pointer.md").write_text(
        "# P\n\nSee [plan](private/plan-zebra.md).\n", encoding="utf-8"
    )
    ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    assert sqlite_store.links_from_sources(["akm:docs:pointer.md"]) == {"akm:docs:pointer.md": []}


def test_vector_search_finds_ingested_chunk(store: EvidenceStore, manifest: Manifest) -> None:
    embedder = HashingEmbedder()
    ingest(store, manifest, embedder=embedder)
    query = embedder.embed(["Plain notes without headings.\n\nSecond paragraph about nebulae."])[0]
    hits = store.vector_search(query, 1)
    assert [(chunk.source_id, round(score, 4)) for chunk, score in hits] == [("akm:docs:notes.md", 1.0)]


def test_revision_is_git_blob_inside_a_work_tree(
    sqlite_store: EvidenceStore, manifest: Manifest, project: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    expected = subprocess.run(
        ["git", "hash-object", str(project / "docs" / "guide.md")], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert git_blob_sha((project / "docs" / "guide.md").read_bytes()) == expected
    assert sqlite_store.source_versions("akm:docs:guide.md")[0].revision == f"git-blob:{expected}"


def test_revision_is_content_derived_outside_git(
    sqlite_store: EvidenceStore, manifest: Manifest, project: Path
) -> None:
    if any((parent / ".git").exists() for parent in project.parents):
        pytest.skip("the temporary directory is inside a git work tree")
    ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    version = sqlite_store.source_versions("akm:docs:guide.md")[0]
    assert version.revision == f"sha256:{version.sha256[:16]}"


class _FailingEmbedder(HashingEmbedder):
    def __init__(self, fail_on_call: int) -> None:
        super().__init__()
        self.fail_on_call = fail_on_call

    def embed(self, texts: list[str]) -> NDArray[np.float32]:  # type: ignore[override]
        if len(self.calls) + 1 == self.fail_on_call:
            raise KeyboardInterrupt
        return super().embed(texts)


def test_interrupted_batch_leaves_no_partial_rows(
    sqlite_store: EvidenceStore, manifest: Manifest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from akm.store.repository import StoreTransaction

    original = StoreTransaction.add_source_version
    calls = {"count": 0}

    def interrupting(self: StoreTransaction, **kwargs: object) -> int:
        calls["count"] += 1
        if calls["count"] == 2:
            raise KeyboardInterrupt
        return original(self, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(StoreTransaction, "add_source_version", interrupting)
    with pytest.raises(KeyboardInterrupt):
        ingest(sqlite_store, manifest, embedder=HashingEmbedder(), batch_size=10)
    # The whole batch (three files) was rolled back: no source, version or chunk survives.
    assert sqlite_store.source_states("docs") == {}
    assert sqlite_store.count_current_chunks() == 0
    monkeypatch.setattr(StoreTransaction, "add_source_version", original)
    report = ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    assert report.new == 3


def test_interrupt_between_batches_keeps_committed_batches(
    sqlite_store: EvidenceStore, manifest: Manifest
) -> None:
    with pytest.raises(KeyboardInterrupt):
        ingest(sqlite_store, manifest, embedder=_FailingEmbedder(fail_on_call=2), batch_size=1)
    states = sqlite_store.source_states("docs")
    assert len(states) == 1
    (only,) = states.values()
    assert len(sqlite_store.chunks_of_source(only.source_id)) >= 1
    report = ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    assert (report.new, report.unchanged) == (2, 1)


def test_concurrent_ingests_do_not_duplicate(store_url: str, manifest: Manifest) -> None:
    open_store(store_url).close()
    errors: list[BaseException] = []

    def run() -> None:
        worker_store = open_store(store_url)
        try:
            ingest(worker_store, manifest, embedder=HashingEmbedder(), batch_size=1)
        except BaseException as error:  # the assertion below reports it
            errors.append(error)
        finally:
            worker_store.close()

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    check = open_store(store_url)
    assert sorted(check.source_states("docs")) == ALLOWED
    assert [len(check.source_versions(source_id)) for source_id in ALLOWED] == [1, 1, 1]
    assert [len(check.chunks_of_source(source_id, current_only=False)) for source_id in ALLOWED] == [4, 1, 1]
    check.close()


def test_exact_lookups_fold_ascii_case_and_batch_chunks_by_source(
    store: EvidenceStore, manifest: Manifest
) -> None:
    ingest(store, manifest, embedder=HashingEmbedder())
    guide, notes, reference = ALLOWED
    assert store.find_sources("GUIDE") == [guide]
    assert store.find_sources("Reference.MD") == [reference]
    assert store.find_sources("akm:DOCS:notes") == [notes]
    assert store.find_sources(".Md", limit=2) == [guide, notes]
    assert store.find_sources("quasars") == []  # body text is not an identity
    batched = store.chunks_of_sources([reference, "akm:docs:missing.md", guide])
    assert list(batched) == [reference, "akm:docs:missing.md", guide]
    assert batched["akm:docs:missing.md"] == []
    for source_id in (reference, guide):
        assert batched[source_id] == store.chunks_of_source(source_id)
        assert batched[source_id]
    assert store.chunks_of_sources([]) == {}


def test_batched_link_lookups_answer_each_source_asked(store: EvidenceStore, manifest: Manifest) -> None:
    ingest(store, manifest, embedder=HashingEmbedder())
    guide, notes, reference = ALLOWED
    asked = [reference, guide, "akm:docs:missing.md", notes]
    outgoing, incoming = store.links_from_sources(asked), store.links_to_sources(asked)
    assert list(outgoing) == asked and list(incoming) == asked
    for source_id in asked:
        assert outgoing[source_id] == store.links_from_sources([source_id])[source_id]
        assert incoming[source_id] == store.links_to_sources([source_id])[source_id]
    assert outgoing["akm:docs:missing.md"] == [] and incoming["akm:docs:missing.md"] == []
    assert {edge.target_source_id for edge in outgoing[guide]} == {reference, notes}
    assert [edge.from_source_id for edge in incoming[reference]] == [guide]
    assert store.links_from_sources([]) == {} and store.links_to_sources([]) == {}
