"""Probe 1: a source edited and then restored (A→B→A) is re-verified every time.

Before the fix the third ingest failed with ``id-unique: duplicate evidenceId`` (the re-read
row at A-again had the ID of the stale row at A), ``akm reverify`` exited 4 and the API
answered 500; the versions were already committed, so the packets were never re-verified.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from akm.answer import AnswerOptions, answer
from akm.cli import main
from akm.contract.models import EvidencePacket
from akm.packet import InvalidPacketError, packet_findings
from akm.reverify import reverify
from akm.runtime import Runtime
from akm.service.backend import PipelineReverifyService
from akm.service.scope import SourceScope
from akm.settings import load_settings
from akm.verify import LexicalClaimVerifier, SupportJudgement
from tests.plugins.corpus import CAP_SENTENCE

pytestmark = pytest.mark.reliability

CONFIGURATION = "akm:docs:configuration.md"


def _ask(corpus: Any) -> Any:
    return answer(
        "What does the per-source cap limit?",
        AnswerOptions(max_rows=4),
        store=corpus.store,
        manifest=corpus.manifest,
        embedder=corpus.embedder,
        generator=corpus.generator(f"{CAP_SENTENCE} [E1]"),
    )


def _ingest(corpus: Any, *extra: str) -> int:
    return main(
        [
            "--manifest",
            str(corpus.root / "config" / "manifest.yaml"),
            "--database-url",
            corpus.store.engine.url.render_as_string(hide_password=False),
            "ingest",
            "--embedder",
            "hashing",
            "--quiet",
            *extra,
        ]
    )


def _reverify_cli(corpus: Any) -> int:
    return main(
        [
            "--manifest",
            str(corpus.root / "config" / "manifest.yaml"),
            "--database-url",
            corpus.store.engine.url.render_as_string(hide_password=False),
            "reverify",
        ]
    )


def _latest(corpus: Any, task_id: str) -> EvidencePacket:
    packets = corpus.store.packets_of_task(task_id)
    return EvidencePacket.from_json(corpus.store.get_packet(packets[-1]))


def _edit_and_restore(corpus: Any) -> tuple[Any, bytes]:
    """Ask, append a line (B) and ingest, restore the original bytes (A again)."""
    first = _ask(corpus)
    assert first.verdict == "PASS"
    path: Path = corpus.root / "docs" / "configuration.md"
    original = path.read_bytes()
    path.write_bytes(original + b"\nAn added closing line.\n")
    assert _ingest(corpus) == 0
    path.write_bytes(original)
    return first, original


def test_revert_is_reverified_with_unique_evidence_ids(
    corpus: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    first, _ = _edit_and_restore(corpus)
    assert _ingest(corpus) == 0
    latest = _latest(corpus, first.packet.task_id)
    ids = [row.evidence_id for row in latest.evidence_rows]
    assert len(ids) == len(set(ids))
    assert packet_findings(latest.to_json()) == []
    (claim,) = latest.claims
    assert claim.status == "supported"
    assert len(corpus.store.packets_of_task(first.packet.task_id)) == 3
    # The reverted version is a version of its own: A, B, A-again, each with its own time.
    versions = corpus.store.source_versions(CONFIGURATION)
    assert len(versions) == 3
    assert versions[0].sha256 == versions[2].sha256 != versions[1].sha256
    assert versions[0].observed_at < versions[1].observed_at < versions[2].observed_at
    assert versions[2].revision == f"{versions[0].revision}#2"
    for reason in latest.verification.verdict_reasons:
        words = reason.split()
        if "from" in words and "to" in words:
            assert words[words.index("from") + 2] != words[words.index("to") + 1], reason
    # Nothing is left to do: the CLI re-verification agrees and stores nothing more.
    capsys.readouterr()
    assert _reverify_cli(corpus) == 0
    assert "0 packet(s) re-verified" in capsys.readouterr().out
    assert corpus.store.sources_awaiting_reverification() == []


def test_revert_twice_keeps_every_packet_valid(corpus: Any) -> None:
    first, original = _edit_and_restore(corpus)
    assert _ingest(corpus) == 0
    path: Path = corpus.root / "docs" / "configuration.md"
    path.write_bytes(original + b"\nAn added closing line.\n")
    assert _ingest(corpus) == 0
    path.write_bytes(original)
    assert _ingest(corpus) == 0
    revisions = [version.revision for version in corpus.store.source_versions(CONFIGURATION)]
    assert len(revisions) == len(set(revisions)) == 5
    for packet_id in corpus.store.packets_of_task(first.packet.task_id):
        assert packet_findings(corpus.store.get_packet(packet_id)) == []


def test_api_reverify_after_a_revert_answers(corpus: Any, tmp_path: Path) -> None:
    first, _ = _edit_and_restore(corpus)
    from akm.ingest import ingest

    ingest(corpus.store, corpus.manifest, embedder=corpus.embedder)
    service = PipelineReverifyService(
        load_settings(data_dir=tmp_path), lambda: corpus.store, corpus.manifest, SourceScope(corpus.manifest)
    )
    report = service.reverify(CONFIGURATION)
    assert len(report["packets"]) == 1
    assert service.reverify(None)["packets"] == []
    assert packet_findings(_latest(corpus, first.packet.task_id).to_json()) == []


def test_failed_reverification_leaves_nothing_half_done_and_is_retried(
    corpus: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _ask(corpus)
    old_row = first.packet.claims[0].support_row_ids[0]
    path: Path = corpus.root / "docs" / "configuration.md"
    path.write_bytes(path.read_bytes() + b"\nAn added closing line.\n")

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise InvalidPacketError("pk:probe", ["probe: the re-verified packet is refused"])

    monkeypatch.setattr("akm.reverify.assemble_packet", failing)
    assert _ingest(corpus) == 4
    assert "stays pending" in capsys.readouterr().err
    # The new version is stored; nothing of the re-verification is: the row is still live.
    assert corpus.store.get_row(old_row)["verification"]["state"] == "claim-supported"
    assert len(corpus.store.packets_of_task(first.packet.task_id)) == 1
    assert corpus.store.sources_awaiting_reverification() == [CONFIGURATION]
    monkeypatch.undo()
    # The next ingest has no changed file, yet re-verifies what was left pending.
    assert _ingest(corpus) == 0
    assert corpus.store.get_row(old_row)["verification"]["state"] == "stale"
    assert len(corpus.store.packets_of_task(first.packet.task_id)) == 2
    assert corpus.store.sources_awaiting_reverification() == []


class RecordingVerifier:
    """Stands in for the runtime's verifier; remembers it was asked."""

    def __init__(self) -> None:
        self.calls = 0
        self.inner = LexicalClaimVerifier()

    def verify(self, claim: str, passage: str) -> SupportJudgement:
        self.calls += 1
        return self.inner.verify(claim, passage)


@pytest.mark.parametrize("command", ["ingest", "reverify"])
def test_reverification_uses_the_runtime_verifier(
    corpus: Any, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    _ask(corpus)
    path: Path = corpus.root / "docs" / "configuration.md"
    path.write_bytes(path.read_bytes() + b"\nAn added closing line.\n")
    recording = RecordingVerifier()
    monkeypatch.setattr(Runtime, "verifier", property(lambda self: recording))
    if command == "reverify":
        from akm.ingest import ingest

        ingest(corpus.store, corpus.manifest, embedder=corpus.embedder)
        assert _reverify_cli(corpus) == 0
    else:
        assert _ingest(corpus) == 0
    assert recording.calls > 0


def test_api_reverification_uses_the_runtime_verifier(
    corpus: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _ask(corpus)
    path: Path = corpus.root / "docs" / "configuration.md"
    path.write_bytes(path.read_bytes() + b"\nAn added closing line.\n")
    from akm.ingest import ingest

    ingest(corpus.store, corpus.manifest, embedder=corpus.embedder)
    recording = RecordingVerifier()
    monkeypatch.setattr(Runtime, "verifier", property(lambda self: recording))
    service = PipelineReverifyService(
        load_settings(data_dir=tmp_path), lambda: corpus.store, corpus.manifest, SourceScope(corpus.manifest)
    )
    assert service.reverify(CONFIGURATION)["packets"]
    assert recording.calls > 0


def test_library_reverify_has_no_default_verifier(corpus: Any) -> None:
    with pytest.raises(TypeError):
        reverify(corpus.store, corpus.manifest, CONFIGURATION)  # type: ignore[call-arg]
