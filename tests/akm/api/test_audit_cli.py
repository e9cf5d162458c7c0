"""``akm audit`` prints the API's audit bodies, within the same manifest scope."""

from __future__ import annotations

import json
from typing import Any

import pytest
from api_fakes import GUIDE, HIDDEN_BY_CLASSIFICATION, HIDDEN_BY_EXCLUDE, HIDDEN_BY_TOKEN, ApiHarness

from akm.cli import main
from akm.config import DEFAULT_MANIFEST_FILE


def _audit(api: ApiHarness, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    """Exit status, printed JSON (``None`` when nothing was printed) and stderr of ``akm audit ARGV``."""
    capsys.readouterr()
    code = main(
        [
            "--manifest",
            str(DEFAULT_MANIFEST_FILE),
            "--database-url",
            api.store.engine.url.render_as_string(hide_password=False),
            "audit",
            *argv,
        ]
    )
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else None, captured.err


# (CLI arguments, API path and query) of one query; "{packet}" etc. name the seeded IDs.
SAME_QUERIES = [
    (["rejections"], "/v1/audit/rejections", {"limit": 50}),
    (["rejections", "--limit", "2", "--offset", "1"], "/v1/audit/rejections", {"limit": 2, "offset": 1}),
    (
        ["rejections", "--source", GUIDE, "--stage", "fusion", "--reason", "duplicate", "--limit", "5"],
        "/v1/audit/rejections",
        {"source": GUIDE, "stage": "fusion", "reason": "duplicate", "limit": 5},
    ),
    (
        ["rejections", "--since", "2000-01-01T00:00:00+00:00", "--until", "2999-01-01T00:00:00+00:00"],
        "/v1/audit/rejections",
        {"since": "2000-01-01T00:00:00+00:00", "until": "2999-01-01T00:00:00+00:00", "limit": 50},
    ),
    (["dependents", GUIDE], f"/v1/audit/sources/{GUIDE}/dependents", {}),
    (["packet", "{packet}"], "/v1/packets/{packet}", {}),
    (["packet", "{packet}", "--history"], "/v1/packets/{packet}/history", {}),
    (["evidence", "{row}"], "/v1/evidence/{row}", {}),
    (["evidence", "{row}", "--history"], "/v1/evidence/{row}/history", {}),
    (["claim", "{claim}"], "/v1/claims/{claim}", {}),
    (["sources"], "/v1/sources", {"limit": 50}),
    (["sources", "--limit", "1"], "/v1/sources", {"limit": 1}),
    (["source", GUIDE], f"/v1/sources/{GUIDE}", {}),
]


@pytest.mark.parametrize(
    ("argv", "path", "params"), SAME_QUERIES, ids=[" ".join(query[0]) for query in SAME_QUERIES]
)
def test_cli_prints_the_api_body_of_the_same_query(
    api: ApiHarness, capsys: pytest.CaptureFixture[str], argv: list[str], path: str, params: dict[str, Any]
) -> None:
    response = api.client.get(path.format(**api.ids), params=params)
    assert response.status_code == 200, response.text
    code, printed, err = _audit(api, capsys, *(arg.format(**api.ids) for arg in argv))
    assert (code, err) == (0, "")
    assert printed == response.json()
    assert printed  # a body with something in it, not two empty answers


def test_cli_rejections_page_continues_like_the_api(
    api: ApiHarness, capsys: pytest.CaptureFixture[str]
) -> None:
    _, first, _ = _audit(api, capsys, "rejections", "--limit", "2")
    assert first["hasMore"] is True and first["nextOffset"] == 2
    _, second, _ = _audit(api, capsys, "rejections", "--limit", "2", "--offset", str(first["nextOffset"]))
    assert second["hasMore"] is False and second["nextOffset"] is None
    assert [item["id"] for item in first["items"] + second["items"]] == [
        item["id"] for item in api.client.get("/v1/audit/rejections").json()["items"]
    ]


def test_cli_applies_the_source_scope(api: ApiHarness, capsys: pytest.CaptureFixture[str]) -> None:
    ids = api.ids
    # The store holds all of these; the scope is what hides them.
    assert api.store.get_packet(ids["hidden_packet"]) is not None
    assert api.store.get_row(ids["hidden_row"]) is not None
    hidden_sources = (HIDDEN_BY_EXCLUDE, HIDDEN_BY_CLASSIFICATION, HIDDEN_BY_TOKEN)
    assert all(api.store.get_source(source_id) is not None for source_id in hidden_sources)
    for argv in (
        ["packet", ids["hidden_packet"]],
        ["packet", ids["hidden_packet"], "--history"],
        ["packet", ids["hidden_packet"], "--task"],
        ["packet", ids["hidden_packet"], "--decode-stats"],
        ["evidence", ids["hidden_row"]],
        ["evidence", ids["hidden_row"], "--history"],
        ["claim", ids["hidden_claim"]],
        *([query, hidden] for hidden in hidden_sources for query in ("source", "dependents")),
    ):
        code, printed, err = _audit(api, capsys, *argv)
        assert (code, printed) == (2, None), argv
        assert err.startswith("akm audit: no "), err
    _, sources, _ = _audit(api, capsys, "sources")
    assert [item["sourceId"] for item in sources["items"]] == [GUIDE]
    _, hidden_filter, _ = _audit(api, capsys, "rejections", "--source", HIDDEN_BY_EXCLUDE)
    assert hidden_filter["items"] == []
    _, rejections, _ = _audit(api, capsys, "rejections")
    named = {item["sourceId"] for item in rejections["items"]}
    assert named == {GUIDE, None}
    assert "private-plan.md" not in json.dumps(rejections)


def test_cli_unknown_ids_exit_2(api: ApiHarness, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["packet", "pk:sha256:0000"],
        ["evidence", "ev:sha256:0000"],
        ["source", "akm:docs:nope.md"],
    ):
        code, printed, err = _audit(api, capsys, *argv)
        assert (code, printed) == (2, None)
        assert argv[1] in err


def test_cli_packet_task_and_decode_stats(api: ApiHarness, capsys: pytest.CaptureFixture[str]) -> None:
    packet_id = api.ids["packet"]
    with api.store.transaction() as tx:
        tx.save_decode_stats(packet_id, {"targetCalls": 7})
    _, stats, _ = _audit(api, capsys, "packet", packet_id, "--decode-stats")
    assert stats == {"packetId": packet_id, "decodeStats": [{"targetCalls": 7}]}
    _, task, _ = _audit(api, capsys, "packet", packet_id, "--task")
    packet = api.client.get(f"/v1/packets/{packet_id}").json()
    assert task == {
        "taskId": packet["taskId"],
        "packets": [{"packetId": packet_id, "verdict": packet["verification"]["verdict"]}],
    }


def test_cli_dependents_of_one_revision(api: ApiHarness, capsys: pytest.CaptureFixture[str]) -> None:
    everything = api.client.get(f"/v1/audit/sources/{GUIDE}/dependents").json()
    _, old, _ = _audit(api, capsys, "dependents", GUIDE, "--revision", "r1")
    assert old["revisions"] == [entry for entry in everything["revisions"] if entry["revision"] == "r1"]
    assert old["stalePacketIds"] == everything["stalePacketIds"] == [api.ids["packet"]]
    _, current, _ = _audit(api, capsys, "dependents", GUIDE, "--revision", "r2")
    assert [entry["revision"] for entry in current["revisions"]] == ["r2"]
    assert current["stalePacketIds"] == []
