"""scope.maxCorpusDocuments: how many sources one ingest target keeps current."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from akm.embedding import HashingEmbedder
from akm.ingest import CorpusCapPlan, IngestProgress, ingest, ingest_corpus
from akm.ingest.pipeline import IngestReport
from akm.manifest import Manifest, load_manifest
from akm.store import EvidenceStore

from .conftest import run_ingest_command, write_manifest

FILES = ("a.md", "b.md", "c.md")
DOCUMENTS = [
    {"_id": "d1", "title": "One", "text": "First abstract."},
    {"_id": "d2", "title": "Two", "text": "Second abstract."},
    {"_id": "d3", "title": "Three", "text": "Third abstract."},
]


def _capped_project(root: Path, cap: int | None) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        (docs / name).write_text(f"# {name}\n\nText of {name}.\n", encoding="utf-8")
    return _set_cap(root, cap)


def _set_cap(root: Path, cap: int | None) -> Path:
    path: Path = write_manifest(root)
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    if cap is None:
        document["scope"].pop("maxCorpusDocuments", None)
    else:
        document["scope"]["maxCorpusDocuments"] = cap
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def _manifest(root: Path, cap: int | None) -> Manifest:
    return load_manifest(_set_cap(root, cap))


def _current(store: EvidenceStore, alias: str) -> list[str]:
    return sorted(state.path for state in store.source_states(alias).values() if not state.deleted)


def _counts(report: IngestReport) -> tuple[int, int, int, int, int]:
    return report.new, report.changed, report.unchanged, report.deleted, report.over_cap


@pytest.mark.parametrize(
    ("limit", "listed", "current", "outside", "keep", "retired", "free"),
    [
        (None, ["a", "b", "c"], {"b"}, 5, {"b"}, set(), None),
        (3, ["a", "b", "c"], set(), 0, set(), set(), 3),
        (2, ["a", "b", "c"], {"c"}, 0, {"c"}, set(), 1),
        (2, ["a", "b", "c"], {"a", "b", "c"}, 0, {"a", "b"}, {"c"}, 0),
        (2, ["a", "b"], {"b"}, 2, set(), {"b"}, 0),
        (3, ["a", "b"], set(), 1, set(), set(), 2),
    ],
    ids=[
        "no-cap",
        "room-for-all",
        "current-first",
        "lowered-cap-retires",
        "outside-fills-it",
        "outside-counts",
    ],
)
def test_cap_plan(
    limit: int | None,
    listed: list[str],
    current: set[str],
    outside: int,
    keep: set[str],
    retired: set[str],
    free: int | None,
) -> None:
    plan = CorpusCapPlan.for_target(limit, listed, current, outside)
    assert (set(plan.keep), set(plan.retired), plan.free) == (keep, retired, free)


def test_plan_admits_new_sources_while_places_remain() -> None:
    plan = CorpusCapPlan.for_target(2, ["a", "b", "c"], {"b"}, 0)
    assert plan.admits("a")
    plan.take("a")
    assert plan.admits("b")
    plan.take("b")  # already current: takes no new place
    assert not plan.admits("c")
    assert plan.free == 0


def test_manifest_reads_the_cap(tmp_path: Path) -> None:
    assert _manifest(tmp_path, 7).scope.max_corpus_documents == 7
    assert _manifest(tmp_path, None).scope.max_corpus_documents is None


def test_cap_limits_ingest_reingest_is_idempotent_and_raising_it_adds_the_rest(
    store: EvidenceStore, tmp_path: Path
) -> None:
    _capped_project(tmp_path, 2)
    first = ingest(store, _manifest(tmp_path, 2), embedder=HashingEmbedder())
    assert _counts(first) == (2, 0, 0, 0, 1)
    assert (first.files_seen, first.corpus_cap) == (2, 2)
    assert _current(store, "docs") == ["a.md", "b.md"]
    assert "over corpus cap 1 (count only): scope.maxCorpusDocuments 2 reached" in first.summary_lines()
    assert not any("c.md" in line for line in first.summary_lines())

    again = ingest(store, _manifest(tmp_path, 2), embedder=HashingEmbedder())
    assert _counts(again) == (0, 0, 2, 0, 1)
    assert _current(store, "docs") == ["a.md", "b.md"]

    raised = ingest(store, _manifest(tmp_path, 3), embedder=HashingEmbedder())
    assert _counts(raised) == (1, 0, 2, 0, 0)
    assert raised.new_source_ids == ["akm:docs:c.md"]
    assert _current(store, "docs") == ["a.md", "b.md", "c.md"]
    assert not any("over corpus cap" in line for line in raised.summary_lines())


def test_files_over_the_cap_are_never_opened(
    sqlite_store: EvidenceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _capped_project(tmp_path, 1)
    manifest = _manifest(tmp_path, 1)
    opened: list[str] = []
    original = os.open

    def recording_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append(Path(path).name)
        return original(path, flags, *args, **kwargs)

    # Ingest opens sources through os.open (no symlink following, no blocking on a FIFO).
    monkeypatch.setattr(os, "open", recording_open)
    report = ingest(sqlite_store, manifest)
    assert opened == ["a.md"]
    assert report.over_cap == 2


def test_a_deleted_file_frees_its_place_in_the_same_run(sqlite_store: EvidenceStore, tmp_path: Path) -> None:
    _capped_project(tmp_path, 2)
    ingest(sqlite_store, _manifest(tmp_path, 2))
    (tmp_path / "docs" / "a.md").unlink()
    report = ingest(sqlite_store, _manifest(tmp_path, 2))
    assert _counts(report) == (1, 0, 1, 1, 0)
    assert _current(sqlite_store, "docs") == ["b.md", "c.md"]


def test_lowering_the_cap_retires_the_last_sources(sqlite_store: EvidenceStore, tmp_path: Path) -> None:
    _capped_project(tmp_path, 3)
    ingest(sqlite_store, _manifest(tmp_path, 3))
    report = ingest(sqlite_store, _manifest(tmp_path, 1))
    assert _counts(report) == (0, 0, 1, 0, 2)
    # Listed with the deleted ones, so what was verified against them is re-checked.
    assert report.deleted_source_ids == ["akm:docs:b.md", "akm:docs:c.md"]
    assert _current(sqlite_store, "docs") == ["a.md"]


def test_partial_ingest_counts_current_sources_outside_its_paths(
    sqlite_store: EvidenceStore, tmp_path: Path
) -> None:
    _capped_project(tmp_path, 2)
    ingest(sqlite_store, _manifest(tmp_path, 2), ["docs/a.md", "docs/b.md"])
    report = ingest(sqlite_store, _manifest(tmp_path, 2), ["docs/c.md"])
    assert _counts(report) == (0, 0, 0, 0, 1)
    assert _current(sqlite_store, "docs") == ["a.md", "b.md"]


def _write_corpus(path: Path, documents: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(document) + "\n" for document in documents), encoding="utf-8")
    return path


def test_corpus_counts_each_document(store: EvidenceStore, tmp_path: Path) -> None:
    corpus = _write_corpus(tmp_path / "mini.jsonl", [*DOCUMENTS, DOCUMENTS[2]])
    first = ingest_corpus(store, corpus, max_documents=2)
    assert _counts(first) == (2, 0, 0, 0, 1)
    assert _current(store, "mini") == ["d1", "d2"]
    again = ingest_corpus(store, corpus, max_documents=2)
    assert _counts(again) == (0, 0, 2, 0, 1)
    raised = ingest_corpus(store, corpus, max_documents=3)
    assert _counts(raised) == (1, 0, 2, 0, 0)
    assert _current(store, "mini") == ["d1", "d2", "d3"]
    lowered = ingest_corpus(store, corpus, max_documents=1)
    assert _counts(lowered) == (0, 0, 1, 0, 2)
    assert _current(store, "mini") == ["d1"]


def test_corpus_progress_knows_its_total(sqlite_store: EvidenceStore, tmp_path: Path) -> None:
    corpus = _write_corpus(tmp_path / "mini.jsonl", DOCUMENTS)
    snapshots: list[IngestProgress] = []
    ingest_corpus(sqlite_store, corpus, embedder=HashingEmbedder(), progress=snapshots.append, batch_size=2)
    assert {(s.total, s.unit) for s in snapshots} == {(3, "documents")}
    last = snapshots[-1]
    assert (last.phase, last.files_done, last.files_written, last.chunks_written, last.embedded) == (
        "done",
        3,
        3,
        3,
        3,
    )
    assert [s.files_done for s in snapshots if s.phase == "scan"] == [1, 2, 3]


def test_manifest_ingest_progress_total_is_the_walk(sqlite_store: EvidenceStore, tmp_path: Path) -> None:
    _capped_project(tmp_path, 2)
    snapshots: list[IngestProgress] = []
    ingest(sqlite_store, _manifest(tmp_path, 2), progress=snapshots.append)
    assert {(s.total, s.unit) for s in snapshots} == {(3, "files")}
    assert (snapshots[-1].phase, snapshots[-1].files_done, snapshots[-1].files_written) == ("done", 3, 2)


def test_cli_says_the_cap_was_hit_and_which_field_to_raise(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest_path = _capped_project(tmp_path, 2)
    where = {"database_url": sqlite_url, "manifest_path": manifest_path}
    assert run_ingest_command(["--embedder", "none", "--quiet"], **where) == 0
    captured = capsys.readouterr()
    assert "over corpus cap 1 (count only): scope.maxCorpusDocuments 2 reached" in captured.out
    assert captured.err == (
        "akm ingest: corpus cap reached, files left out: 1 (count only); the manifest keeps at most 2 "
        f"sources current per ingest target. Raise scope.maxCorpusDocuments in {manifest_path} to ingest them.\n"
    )
    assert "c.md" not in captured.out + captured.err
    assert run_ingest_command(["--embedder", "none", "--quiet", "--json"], **where) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["overCorpusCap"], report["maxCorpusDocuments"], report["unchanged"]) == (1, 2, 2)


def test_cli_corpus_uses_the_manifest_cap(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest_path = _capped_project(tmp_path / "project", 2)
    corpus = _write_corpus(tmp_path / "mini.jsonl", DOCUMENTS)
    code = run_ingest_command(
        ["--corpus", str(corpus), "--embedder", "none", "--quiet"],
        database_url=sqlite_url,
        manifest_path=manifest_path,
    )
    captured = capsys.readouterr()
    assert code == 0
    assert "ingested 2 (new 2, changed 0)" in captured.out
    assert captured.err.startswith("akm ingest: corpus cap reached, documents left out: 1 (count only)")


@pytest.mark.parametrize("quiet", [True, False], ids=["quiet", "progress"])
def test_cli_progress_goes_to_stderr_unless_quiet(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str], quiet: bool
) -> None:
    manifest_path = _capped_project(tmp_path, None)
    argv = ["--embedder", "none", *(["--quiet"] if quiet else [])]
    assert run_ingest_command(argv, database_url=sqlite_url, manifest_path=manifest_path) == 0
    captured = capsys.readouterr()
    assert "ingested 3 (new 3, changed 0)" in captured.out
    if quiet:
        assert captured.err == ""
    else:
        # Not a terminal: plain lines, the last one the finished run.
        last = captured.err.splitlines()[-1]
        assert "\r" not in captured.err
        assert last.startswith("ingest: 3/3 files scanned (100%), 3 written, 3 chunks, 0 embedded, ")
        assert last.endswith(" done in 0:00")


def test_benchmark_manifest_cap_fits_its_corpus(tmp_path: Path) -> None:
    from akm.bench.retrieval import benchmark_manifest
    from akm.ingest import corpus_document_count

    documents = [{"_id": str(number), "text": f"abstract {number}"} for number in range(250)]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(document) + "\n" for document in documents) + "\n", encoding="utf-8")
    assert corpus_document_count(corpus) == 250
    base = _manifest(tmp_path, 200)
    assert benchmark_manifest(base, corpus).scope.max_corpus_documents == 250
    assert base.scope.max_corpus_documents == 200
