"""Every route through TestClient: bodies, lineage, scope hiding, pagination and problems."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from api_fakes import (
    GUIDE,
    HIDDEN_BY_CLASSIFICATION,
    HIDDEN_BY_EXCLUDE,
    HIDDEN_BY_TOKEN,
    PROBLEM,
    ApiHarness,
    assert_problem,
)

from akm.contract.validation import validate_document

REPO = Path(__file__).resolve().parents[3]


def test_healthz(api: ApiHarness) -> None:
    response = api.client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_reports_store_and_models(api: ApiHarness) -> None:
    response = api.client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "store": "ok", "models": "loaded"}


def test_request_id_is_echoed_or_made(api: ApiHarness) -> None:
    given = api.client.get("/healthz", headers={"X-Request-ID": "abc-123"})
    assert given.headers["x-request-id"] == "abc-123"
    made = api.client.get("/healthz", headers={"X-Request-ID": "bad id with spaces"})
    assert made.headers["x-request-id"] != "bad id with spaces"
    assert len(made.headers["x-request-id"]) == 32


def test_packet_is_the_stored_schema_valid_packet(api: ApiHarness) -> None:
    response = api.client.get(f"/v1/packets/{api.ids['packet']}")
    assert response.status_code == 200
    packet = response.json()
    assert packet == api.store.get_packet(api.ids["packet"])
    assert [f for f in validate_document(packet, profile="service") if f.rule_id.startswith("schema:")] == []


def test_packet_history_lists_its_events_in_order(api: ApiHarness) -> None:
    response = api.client.get(f"/v1/packets/{api.ids['packet']}/history")
    assert response.status_code == 200
    body = response.json()
    assert body["verdict"] == "PASS"
    assert [(e["fromState"], e["toState"], e["actor"]) for e in body["events"]] == [
        (None, "candidate", "exact-lane"),
        ("candidate", "direct-read", "akm.direct_read"),
        ("direct-read", "claim-supported", "akm.answer"),
    ]


def test_evidence_and_its_history(api: ApiHarness) -> None:
    row = api.client.get(f"/v1/evidence/{api.ids['row']}")
    assert row.status_code == 200
    assert row.json()["evidenceId"] == api.ids["row"]
    history = api.client.get(f"/v1/evidence/{api.ids['row']}/history").json()
    assert [e["toState"] for e in history["events"]] == ["candidate", "direct-read", "claim-supported"]
    assert all(e["reason"] and e["at"] and e["actor"] for e in history["events"])


def test_claim_with_support_rows_and_their_revisions(api: ApiHarness) -> None:
    response = api.client.get(f"/v1/claims/{api.ids['claim']}")
    assert response.status_code == 200
    body = response.json()
    assert body["claimId"] == api.ids["claim"]
    [occurrence] = body["occurrences"]
    assert occurrence["packetId"] == api.ids["packet"]
    assert occurrence["status"] == "supported"
    [support] = occurrence["support"]
    assert support["evidenceId"] == api.ids["row"]
    assert support["revision"] == "r1"
    assert [e["toState"] for e in support["revisions"]] == ["candidate", "direct-read", "claim-supported"]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/packets/pk:sha256:0000",
        "/v1/packets/pk:sha256:0000/history",
        "/v1/evidence/ev:nothing",
        "/v1/evidence/ev:nothing/history",
        "/v1/claims/claim:nothing",
        "/v1/sources/akm:docs:missing.md",
        "/v1/audit/sources/akm:docs:missing.md/dependents",
        "/v1/no-such-route",
    ],
    ids=["packet", "packet-history", "row", "row-history", "claim", "source", "dependents", "route"],
)
def test_unknown_ids_are_404_problems(api: ApiHarness, path: str) -> None:
    assert_problem(api.client.get(path), 404, "not-found")


@pytest.mark.parametrize(
    "source_id",
    [HIDDEN_BY_EXCLUDE, HIDDEN_BY_CLASSIFICATION, HIDDEN_BY_TOKEN],
    ids=["excluded-path", "denied-classification", "denied-basename-token"],
)
def test_out_of_scope_sources_do_not_exist(api: ApiHarness, source_id: str) -> None:
    unknown = api.client.get("/v1/sources/akm:docs:never-existed.md").json()
    hidden = assert_problem(api.client.get(f"/v1/sources/{source_id}"), 404, "not-found")
    # Same answer as for an id that never existed, apart from echoing the id asked for.
    assert hidden["detail"] == unknown["detail"].replace("akm:docs:never-existed.md", source_id)
    assert_problem(api.client.get(f"/v1/audit/sources/{source_id}/dependents"), 404, "not-found")
    listed = api.client.get("/v1/sources").json()
    assert source_id not in [item["sourceId"] for item in listed["items"]]
    assert api.client.get("/v1/audit/rejections", params={"source": source_id}).json()["items"] == []


def test_rows_packets_and_claims_of_hidden_sources_are_404(api: ApiHarness) -> None:
    assert_problem(api.client.get(f"/v1/packets/{api.ids['hidden_packet']}"), 404, "not-found")
    assert_problem(api.client.get(f"/v1/packets/{api.ids['hidden_packet']}/history"), 404, "not-found")
    assert_problem(api.client.get(f"/v1/evidence/{api.ids['hidden_row']}"), 404, "not-found")
    assert_problem(api.client.get(f"/v1/claims/{api.ids['hidden_claim']}"), 404, "not-found")


def test_rejections_never_name_hidden_sources(api: ApiHarness) -> None:
    body = api.client.get("/v1/audit/rejections").json()
    assert len(body["items"]) == 4
    text = json.dumps(body)
    assert HIDDEN_BY_EXCLUDE not in text
    assert "private-plan" not in text


@pytest.mark.parametrize(
    ("params", "expected_reasons"),
    [
        ({"reason": "duplicate"}, ["duplicate", "duplicate"]),
        ({"stage": "direct-read"}, ["stale"]),
        ({"source": GUIDE}, ["stale", "per-source-cap", "duplicate"]),
        ({"source": GUIDE, "stage": "fusion"}, ["per-source-cap", "duplicate"]),
        ({"since": "2999-01-01T00:00:00Z"}, []),
        ({"until": "2000-01-01T00:00:00Z"}, []),
    ],
    ids=["reason", "stage", "source", "source-and-stage", "since-future", "until-past"],
)
def test_rejection_filters(api: ApiHarness, params: dict[str, str], expected_reasons: list[str]) -> None:
    response = api.client.get("/v1/audit/rejections", params=params)
    assert response.status_code == 200
    assert [item["reason"] for item in response.json()["items"]] == expected_reasons


def test_rejections_paginate(api: ApiHarness) -> None:
    first = api.client.get("/v1/audit/rejections", params={"limit": 3}).json()
    assert (len(first["items"]), first["hasMore"], first["nextOffset"]) == (3, True, 3)
    second = api.client.get("/v1/audit/rejections", params={"limit": 3, "offset": first["nextOffset"]}).json()
    assert (len(second["items"]), second["hasMore"], second["nextOffset"]) == (1, False, None)
    ids = [item["id"] for item in first["items"] + second["items"]]
    assert ids == sorted(ids, reverse=True)
    assert len(set(ids)) == 4


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 501}, {"offset": -1}, {"since": "yesterday"}, {"reason": ""}],
    ids=["limit-zero", "limit-over-500", "negative-offset", "bad-time", "empty-reason"],
)
def test_bad_audit_parameters_are_422(api: ApiHarness, params: dict[str, Any]) -> None:
    body = assert_problem(api.client.get("/v1/audit/rejections", params=params), 422, "validation")
    assert body["invalidParams"]


def test_sources_list_versions_and_last_read(api: ApiHarness) -> None:
    listed = api.client.get("/v1/sources").json()
    assert [item["sourceId"] for item in listed["items"]] == [GUIDE]
    assert listed["nextAfter"] is None
    detail = api.client.get(f"/v1/sources/{GUIDE}").json()
    assert [(v["revision"], v["isCurrent"]) for v in detail["versions"]] == [("r1", False), ("r2", True)]
    assert detail["currentRevision"] == "r2"
    assert all(len(v["sha256"]) == 64 for v in detail["versions"])
    assert detail["lastDirectReadAt"] is not None
    assert detail["evidenceRows"] == 3


def test_sources_page_with_cursor(api: ApiHarness) -> None:
    from api_fakes import _add_source

    for name in ("a.md", "b.md", "c.md"):
        _add_source(api.store, f"akm:docs:{name}", name, "public", [name])
    first = api.client.get("/v1/sources", params={"limit": 2}).json()
    assert [item["sourceId"] for item in first["items"]] == ["akm:docs:a.md", "akm:docs:b.md"]
    second = api.client.get("/v1/sources", params={"limit": 2, "after": first["nextAfter"]}).json()
    assert [item["sourceId"] for item in second["items"]] == ["akm:docs:c.md", GUIDE]


def test_dependents_by_revision_mark_old_revision_stale(api: ApiHarness) -> None:
    body = api.client.get(f"/v1/audit/sources/{GUIDE}/dependents").json()
    by_revision = {entry["revision"]: entry for entry in body["revisions"]}
    assert set(by_revision) == {"r1", "r2"}
    old = by_revision["r1"]
    assert old["isCurrent"] is False
    assert all(row["stale"] for row in old["rows"])
    assert {(c["claimId"], c["stale"]) for c in old["claims"]} == {
        (api.ids["claim"], True),
        ("claim:7634ac512c5b73c7", True),
    }
    assert old["packets"] == [{"packetId": api.ids["packet"], "verdict": "PASS", "stale": True}]
    assert by_revision["r2"]["rows"] == []
    assert body["stalePacketIds"] == [api.ids["packet"]]


def test_reverify_one_or_all(api: ApiHarness) -> None:
    one = api.client.post("/v1/sources/reverify", json={"sourceId": GUIDE})
    assert one.status_code == 200
    assert one.json()["sources"] == [GUIDE]
    every = api.client.post("/v1/sources/reverify", json={})
    assert every.status_code == 200
    assert api.reverify.calls == [GUIDE, None]


def test_reverify_hidden_source_is_404_and_does_nothing(api: ApiHarness) -> None:
    assert_problem(
        api.client.post("/v1/sources/reverify", json={"sourceId": HIDDEN_BY_EXCLUDE}), 404, "not-found"
    )
    assert api.reverify.calls == []


@pytest.mark.parametrize(
    "example",
    ["candidate-row.json", "claim-supported-row.json", "packet-pass.json", "packet-hold.json"],
    ids=["candidate-row", "supported-row", "pass-packet", "hold-packet"],
)
def test_validate_accepts_the_examples(api: ApiHarness, example: str) -> None:
    document = json.loads((REPO / "examples" / example).read_text())
    response = api.client.post("/v1/validate", json=document)
    assert response.status_code == 200
    assert response.json() == {"valid": True, "documents": 1, "findings": []}


def test_validate_reports_the_same_rule_ids_as_the_library(api: ApiHarness) -> None:
    row = json.loads((REPO / "examples" / "claim-supported-row.json").read_text())
    row["verification"]["claimIds"] = []
    del row["source"]["version"]
    expected = [f.to_json() for f in validate_document([row, {"rowType": "nope"}], profile="service")]
    response = api.client.post("/v1/validate", params={"profile": "service"}, json=[row, {"rowType": "nope"}])
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is False
    assert body["documents"] == 2
    assert body["findings"] == expected
    assert {f["ruleId"] for f in body["findings"]} >= {"schema:kind", "schema:required"}


def test_validate_takes_the_profile(api: ApiHarness) -> None:
    row = json.loads((REPO / "examples" / "candidate-row.json").read_text())
    row["evidenceId"] = "ev:sha256:example-candidate"
    default = api.client.post("/v1/validate", json=row)
    contract = api.client.post("/v1/validate", params={"profile": "contract"}, json=row)
    assert default.json() == contract.json() == {"valid": True, "documents": 1, "findings": []}
    service = api.client.post("/v1/validate", params={"profile": "service"}, json=row)
    assert service.status_code == 200
    assert service.json()["valid"] is False
    assert {(f["ruleId"], f["pointer"]) for f in service.json()["findings"]} == {
        ("schema:pattern", "/evidenceId")
    }
    unknown = api.client.post("/v1/validate", params={"profile": "strict"}, json=row)
    assert unknown.status_code == 422


@pytest.mark.parametrize(
    ("content", "content_type", "status", "slug"),
    [
        (b"{", "application/json", 400, "malformed-request"),
        (b'"just a string"', "application/json", 422, "validation"),
        (b"rowType: EvidenceRow", "application/yaml", 415, "unsupported-media-type"),
        (b"{}", "text/plain", 415, "unsupported-media-type"),
    ],
    ids=["malformed-json", "scalar-json", "yaml", "text-plain"],
)
def test_validate_rejects_bodies(
    api: ApiHarness, content: bytes, content_type: str, status: int, slug: str
) -> None:
    response = api.client.post("/v1/validate", content=content, headers={"Content-Type": content_type})
    assert_problem(response, status, slug)


def test_body_over_the_limit_is_413(api: ApiHarness) -> None:
    big = {"rowType": "EvidenceRow", "padding": "x" * 40_000}
    body = assert_problem(api.client.post("/v1/validate", json=big), 413, "payload-too-large")
    assert body["maxBytes"] == 32_768


def test_chunked_body_over_the_limit_is_413(api: ApiHarness) -> None:
    def chunks() -> Any:
        for _ in range(40):
            yield b" " * 1000

    response = api.client.post("/v1/validate", content=chunks(), headers={"Content-Type": "application/json"})
    assert_problem(response, 413, "payload-too-large")


def test_wrong_method_is_405_problem(api: ApiHarness) -> None:
    assert_problem(api.client.delete("/v1/sources"), 405, "method-not-allowed")


def test_metrics_count_requests_by_route_and_status(api: ApiHarness) -> None:
    api.client.get(f"/v1/packets/{api.ids['packet']}")
    api.client.get("/v1/packets/pk:sha256:0000")
    api.client.post("/v1/answers", json={"question": "May secret values be stored?"})
    text = api.client.get("/metrics").text
    assert 'akm_http_requests_total{method="GET",route="/v1/packets/{packet_id}",status="200"} 1.0' in text
    assert 'akm_http_requests_total{method="GET",route="/v1/packets/{packet_id}",status="404"} 1.0' in text
    assert (
        'akm_http_request_duration_seconds_count{method="POST",route="/v1/answers",status="200"} 1.0' in text
    )
    assert 'akm_answer_verdicts_total{verdict="PASS"} 1.0' in text
    assert "akm_decode_tokens_per_second_count 1.0" in text
    assert "akm_decode_mean_accepted_length_sum 2.5" in text
    assert 'akm_decode_acceptance_by_position{position="1"} 1.0' in text
    assert 'akm_retrieval_lane_duration_seconds_count{lane="exact"} 1.0' in text
    assert 'akm_rejected_candidates_total{reason="duplicate"} 1.0' in text


def test_each_app_has_its_own_metrics(api: ApiHarness) -> None:
    from api_fakes import build_app
    from fastapi.testclient import TestClient

    api.client.get("/healthz")
    other = TestClient(build_app(api.store, api.answers))
    assert 'route="/healthz"' not in other.get("/metrics").text


def test_validate_against_the_upstream_schema_too(api: ApiHarness) -> None:
    document = json.loads((REPO / "examples" / "packet-pass.json").read_text())
    response = api.client.post("/v1/validate", params={"upstream": "true"}, json=document)
    assert response.json() == {"valid": True, "documents": 1, "findings": []}


def test_unexpected_errors_are_500_problems_without_details(api: ApiHarness) -> None:
    class BrokenReverify:
        def reverify(self, source_id: str | None, actor: str | None = None) -> dict[str, Any]:
            raise RuntimeError("secret internal detail")

    api.app.state.services.reverify = BrokenReverify()
    response = api.client.post("/v1/sources/reverify", json={})
    assert response.status_code == 500
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["type"] == "urn:akm:problem:internal"
    assert "secret internal detail" not in response.text
    assert api.client.get("/healthz").status_code == 200
