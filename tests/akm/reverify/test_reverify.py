"""Re-verification: an edited or deleted bundled-corpus file invalidates what relied on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from akm.answer import AnswerOptions, answer
from akm.cli import main
from akm.contract.models import EvidencePacket
from akm.packet import packet_findings
from akm.reverify import UnknownSourceError, reverify
from akm.verify import LexicalClaimVerifier
from tests.plugins.corpus import CAP_SENTENCE

CONFIGURATION = "akm:docs:configuration.md"


def _ask(corpus: Any, text: str) -> Any:
    generator = corpus.generator(text)
    return answer(
        "What does the per-source cap limit?",
        AnswerOptions(max_rows=4),
        store=corpus.store,
        manifest=corpus.manifest,
        embedder=corpus.embedder,
        generator=generator,
    )


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _ingest_cli(corpus: Any, tmp_path: Path) -> int:
    return main(
        [
            "--manifest",
            str(corpus.root / "config" / "manifest.yaml"),
            "--database-url",
            str(corpus.store.engine.url.render_as_string(hide_password=False)),
            "ingest",
            "--embedder",
            "hashing",
            "--quiet",
        ]
    )


def _supporting_row(result: Any) -> str:
    supported = [claim for claim in result.claims if claim.status == "supported"]
    assert supported, [claim.notes for claim in result.claims]
    return str(supported[0].citations[0].evidence_id)


def test_edit_that_breaks_a_claim_appends_a_hold_packet_and_stales_rows(corpus: Any, tmp_path: Path) -> None:
    first = _ask(corpus, f"{CAP_SENTENCE} [E1]")
    assert first.verdict == "PASS"
    old_row = _supporting_row(first)
    old_revision = corpus.store.get_row(old_row)["source"]["version"]["revision"]

    _edit(corpus.root / "docs" / "configuration.md", "(2 rows per source)", "(3 rows per source)")
    assert _ingest_cli(corpus, tmp_path) == 0

    task = first.packet.task_id
    packets = corpus.store.packets_of_task(task)
    assert packets[0] == first.packet_id and len(packets) == 2
    latest = EvidencePacket.from_json(corpus.store.get_packet(packets[-1]))
    assert latest.verification.verdict == "HOLD"
    assert latest.verification.verdict_reasons[0].startswith(f"re-verification of {first.packet_id}")
    assert [claim.status for claim in latest.claims] == ["unsupported"]
    assert packet_findings(latest.to_json()) == []
    # The earlier packet is untouched: same verdict, same claim status.
    earlier = corpus.store.get_packet(first.packet_id)
    assert earlier["verification"]["verdict"] == "PASS"
    assert [claim["status"] for claim in earlier["claims"]] == ["supported"]
    # The row read at the old revision is stale, with its history intact.
    row = corpus.store.get_row(old_row)
    assert row["verification"]["state"] == "stale"
    assert [event["state"] for event in row["verification"]["history"]] == [
        "candidate",
        "direct-read",
        "claim-supported",
        "stale",
    ]
    logged = [event.to_state for event in corpus.store.verification_events(old_row)]
    assert logged == ["candidate", "direct-read", "claim-supported", "stale"]
    # The dependency query names the packet that relied on the old revision.
    dependents = corpus.store.dependents_of_source(CONFIGURATION, old_revision)
    assert {(item.packet_id, item.evidence_id) for item in dependents} >= {(first.packet_id, old_row)}


def test_edit_elsewhere_keeps_the_claim_supported_by_a_row_at_the_new_revision(corpus: Any) -> None:
    first = _ask(corpus, f"{CAP_SENTENCE} [E1]")
    old_row = _supporting_row(first)
    with (corpus.root / "docs" / "configuration.md").open("a", encoding="utf-8") as stream:
        stream.write("\nAn added closing line.\n")
    from akm.ingest import ingest

    report = ingest(corpus.store, corpus.manifest, embedder=corpus.embedder)
    assert report.changed_source_ids == [CONFIGURATION]
    result = reverify(corpus.store, corpus.manifest, source_id=CONFIGURATION, verifier=LexicalClaimVerifier())
    assert result.rows_stale == [old_row] and len(result.packets) == 1
    latest = EvidencePacket.from_json(corpus.store.get_packet(result.packets[0].packet_id))
    assert latest.verification.verdict == "PASS_WITH_NOTE"
    (claim,) = latest.claims
    assert claim.status == "supported"
    (new_row_id,) = claim.support_row_ids
    assert new_row_id != old_row
    new_row = latest.row(new_row_id)
    assert new_row is not None and new_row.verification.state == "claim-supported"
    assert new_row.verification.claim_ids == (claim.claim_id,)
    assert new_row.source.version.revision != latest.row(old_row).source.version.revision  # type: ignore[union-attr]
    assert packet_findings(latest.to_json()) == []
    # Running again changes nothing: the latest packet already reflects the change.
    assert (
        reverify(
            corpus.store, corpus.manifest, source_id=CONFIGURATION, verifier=LexicalClaimVerifier()
        ).packets
        == []
    )


def test_deleted_source_rejects_its_rows(corpus: Any) -> None:
    first = _ask(corpus, f"{CAP_SENTENCE} [E1]")
    old_row = _supporting_row(first)
    (corpus.root / "docs" / "configuration.md").unlink()
    from akm.ingest import ingest

    report = ingest(corpus.store, corpus.manifest, embedder=corpus.embedder)
    assert report.deleted_source_ids == [CONFIGURATION]
    result = reverify(corpus.store, corpus.manifest, verifier=LexicalClaimVerifier())
    assert old_row in result.rows_rejected
    assert corpus.store.get_row(old_row)["verification"]["state"] == "rejected"
    (summary,) = result.packets
    assert (summary.previous_verdict, summary.verdict) == ("PASS", "HOLD")


def test_unknown_source_is_an_error(corpus: Any) -> None:
    with pytest.raises(UnknownSourceError, match=r"akm:docs:nope\.md"):
        reverify(corpus.store, corpus.manifest, source_id="akm:docs:nope.md", verifier=LexicalClaimVerifier())


def _cli(corpus: Any, *argv: str) -> int:
    return main(
        [
            "--manifest",
            str(corpus.root / "config" / "manifest.yaml"),
            "--database-url",
            str(corpus.store.engine.url.render_as_string(hide_password=False)),
            *argv,
        ]
    )


def test_audit_and_reverify_commands_show_the_lineage(
    corpus: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _ask(corpus, f"{CAP_SENTENCE} [E1]")
    old_row = _supporting_row(first)
    old_revision = corpus.store.get_row(old_row)["source"]["version"]["revision"]
    _edit(corpus.root / "docs" / "configuration.md", "(2 rows per source)", "(3 rows per source)")
    assert _cli(corpus, "ingest", "--embedder", "hashing", "--quiet") == 0
    capsys.readouterr()

    assert _cli(corpus, "audit", "dependents", CONFIGURATION, "--revision", old_revision) == 0
    dependents = json.loads(capsys.readouterr().out)
    [read_at_old] = dependents["revisions"]
    assert read_at_old["revision"] == old_revision and not read_at_old["isCurrent"]
    assert {(item["packetId"], item["evidenceId"]) for item in read_at_old["claims"]} >= {
        (first.packet_id, old_row)
    }
    assert first.packet_id in dependents["stalePacketIds"]

    assert _cli(corpus, "audit", "packet", first.packet_id, "--task") == 0
    verifications = json.loads(capsys.readouterr().out)["packets"]
    assert [item["verdict"] for item in verifications] == ["PASS", "HOLD"]
    assert verifications[0]["packetId"] == first.packet_id

    assert _cli(corpus, "audit", "evidence", old_row, "--history") == 0
    events = json.loads(capsys.readouterr().out)["events"]
    assert [event["toState"] for event in events] == ["candidate", "direct-read", "claim-supported", "stale"]

    assert _cli(corpus, "reverify", "--json") == 0
    assert json.loads(capsys.readouterr().out)["packets"] == []
    assert _cli(corpus, "reverify", "--source", "akm:docs:nope.md") == 2
    assert "unknown source 'akm:docs:nope.md'" in capsys.readouterr().err
    assert _cli(corpus, "audit", "packet", "pk:sha256:nope") == 2
