"""API keys on the REST API: 401 without a usable key, 403 without the route's scope, 429 over the
per-key rate, the key's ID as the actor of what its requests store; off when not required."""

from __future__ import annotations

import json
import shutil
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from api_fakes import (
    GUIDE,
    ApiHarness,
    FakeAnswerService,
    FakeReverifyService,
    assert_problem,
    build_app,
)
from fastapi import APIRouter, Depends
from fastapi.testclient import TestClient

from akm.answer import GeneratedAnswer
from akm.api import ApiLimits, ApiServices, StoreHandle, create_app
from akm.api.auth import ROUTE_SCOPES, TokenBuckets, require_scope
from akm.api.server import openapi_json
from akm.config import DEFAULT_MANIFEST_FILE
from akm.embedding import load_embedder
from akm.ingest import ingest
from akm.manifest import load_manifest
from akm.runtime import Runtime
from akm.service.backend import PipelineAnswerService, PipelineReverifyService
from akm.service.scope import SourceScope
from akm.settings import load_settings
from akm.store import EvidenceStore, open_store
from akm.store.base import now_utc

REPO = Path(__file__).resolve().parents[3]
FIXTURE_DOCS = REPO / "tests" / "fixtures" / "answers" / "docs"


@dataclass
class Keys:
    ask: str
    ingest: str
    audit: str
    admin: str
    expired: str
    revoked: str
    ids: dict[str, str]


def _make_keys(store: EvidenceStore) -> Keys:
    tokens: dict[str, str] = {}
    ids: dict[str, str] = {}
    with store.transaction() as tx:
        for scope in ("ask", "ingest", "audit", "admin"):
            created = tx.create_api_key(scopes=[scope], name=scope)
            tokens[scope], ids[scope] = created.token, created.info.key_id
        expired = tx.create_api_key(scopes=["admin"], expires_at=now_utc() - timedelta(minutes=1))
        revoked = tx.create_api_key(scopes=["admin"])
    with store.transaction() as tx:
        tx.revoke_api_key(revoked.info.key_id)
    return Keys(expired=expired.token, revoked=revoked.token, ids=ids, **tokens)


@dataclass
class Keyed:
    client: TestClient
    keys: Keys
    store: EvidenceStore
    reverify: FakeReverifyService
    ids: dict[str, str]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def keyed(
    seeded_store: EvidenceStore, seeded_sqlite: tuple[Path, dict[str, str]], tmp_path: Path
) -> Iterator[Keyed]:
    keys = _make_keys(seeded_store)
    reverify = FakeReverifyService()
    settings = load_settings(data_dir=tmp_path, require_api_keys=True, api_key_requests_per_minute=1000)
    app = build_app(seeded_store, FakeAnswerService(seeded_store), reverify, settings=settings)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield Keyed(client, keys, seeded_store, reverify, dict(seeded_sqlite[1]))


# One request per route: (method, path, JSON body) and the scope the route needs.
def _requests(ids: dict[str, str]) -> list[tuple[str, str, Any, str]]:
    return [
        ("POST", "/v1/answers", {"question": "Where are secrets kept?"}, "ask"),
        (
            "POST",
            "/v1/chat/completions",
            {"model": "akm", "messages": [{"role": "user", "content": "Why?"}]},
            "ask",
        ),
        ("GET", "/v1/models", None, "ask"),
        ("GET", f"/v1/packets/{ids['packet']}", None, "audit"),
        ("GET", f"/v1/evidence/{ids['row']}/history", None, "audit"),
        ("GET", "/v1/audit/rejections", None, "audit"),
        ("GET", f"/v1/sources/{GUIDE}", None, "audit"),
        ("POST", "/v1/validate", {"not": "a packet"}, "audit"),
        ("GET", "/metrics", None, "audit"),
        ("POST", "/v1/sources/reverify", {"sourceId": GUIDE}, "ingest"),
        ("POST", "/v1/ingest", {}, "ingest"),
        ("GET", "/v1/ingest/no-such-job", None, "ingest"),
    ]


def _send(client: TestClient, method: str, path: str, body: Any, headers: dict[str, str]) -> Any:
    return client.request(method, path, json=body, headers=headers)


def test_every_documented_route_has_a_scope(api: ApiHarness) -> None:
    document = json.loads(openapi_json(api.app))
    table = {(method, path.replace(":path", "")) for method, path in ROUTE_SCOPES}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert (method.upper(), path) in table, (method, path)
            scope = ROUTE_SCOPES.get((method.upper(), path)) or ROUTE_SCOPES.get(
                (method.upper(), path.replace("}", ":path}"))
            )
            if path in {"/healthz", "/readyz"}:
                assert "security" not in operation
            else:
                assert operation["security"] == [{"apiKey": [scope]}], (method, path)
                assert {"401", "403", "429"} <= set(operation["responses"])
    assert document["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"


@pytest.mark.parametrize(
    ("header", "detail"),
    [
        (None, "send an API key"),
        ("Basic dXNlcjpwYXNz", "send an API key"),
        ("Bearer ", "send an API key"),
        ("Bearer akm_0123456789ab_" + "A" * 43, "not valid"),
        ("Bearer not-a-key", "not valid"),
        ("expired", "has expired"),
        ("revoked", "has been revoked"),
    ],
    ids=["missing", "basic", "empty", "unknown", "malformed", "expired", "revoked"],
)
def test_requests_without_a_usable_key_get_401(keyed: Keyed, header: str | None, detail: str) -> None:
    if header in {"expired", "revoked"}:
        header = f"Bearer {getattr(keyed.keys, header)}"
    headers = {"Authorization": header} if header is not None else {}
    packets_before = keyed.store.count_packets()
    for method, path, body, _scope in _requests(keyed.ids):
        response = _send(keyed.client, method, path, body, headers)
        problem = assert_problem(response, 401, "unauthorized")
        assert detail in problem["detail"], (path, problem)
        assert response.headers["www-authenticate"].startswith('Bearer realm="akm"')
    assert keyed.client.get("/v1/no-such-route").status_code == 401
    assert keyed.store.count_packets() == packets_before
    assert keyed.reverify.calls == []


def test_a_wrong_scope_gets_403_naming_the_scope_and_the_right_one_passes(keyed: Keyed) -> None:
    tokens = {"ask": keyed.keys.ask, "ingest": keyed.keys.ingest, "audit": keyed.keys.audit}
    for method, path, body, needed in _requests(keyed.ids):
        for scope, token in tokens.items():
            response = _send(keyed.client, method, path, body, bearer(token))
            if scope == needed:
                assert response.status_code not in {401, 403}, (path, scope, response.text)
                continue
            problem = assert_problem(response, 403, "insufficient-scope")
            assert problem["requiredScope"] == needed
            assert f"`{needed}` scope" in problem["detail"]
            assert f'scope="{needed}"' in response.headers["www-authenticate"]
        admin = _send(keyed.client, method, path, body, bearer(keyed.keys.admin))
        assert admin.status_code not in {401, 403}, (path, admin.text)


def test_health_and_readiness_stay_open(keyed: Keyed) -> None:
    assert keyed.client.get("/healthz").status_code == 200
    assert keyed.client.get("/readyz").status_code == 200
    assert keyed.client.get("/openapi.json").status_code == 200


def test_the_key_is_the_actor_of_a_reverification(keyed: Keyed) -> None:
    response = keyed.client.post(
        "/v1/sources/reverify", json={"sourceId": GUIDE}, headers=bearer(keyed.keys.ingest)
    )
    assert response.status_code == 200, response.text
    assert keyed.reverify.actors == [f"key:{keyed.keys.ids['ingest']}"]


def test_last_use_is_recorded(keyed: Keyed) -> None:
    assert keyed.store.get_api_key(keyed.keys.ids["audit"]).last_used_at is None  # type: ignore[union-attr]
    keyed.client.get("/v1/audit/rejections", headers=bearer(keyed.keys.audit))
    used = keyed.store.get_api_key(keyed.keys.ids["audit"])
    assert used is not None and used.last_used_at is not None


def test_over_the_rate_a_key_gets_429_with_retry_after(seeded_store: EvidenceStore, tmp_path: Path) -> None:
    keys = _make_keys(seeded_store)
    settings = load_settings(data_dir=tmp_path, require_api_keys=True, api_key_requests_per_minute=3)
    app = build_app(seeded_store, FakeAnswerService(seeded_store), settings=settings)
    with TestClient(app, raise_server_exceptions=False) as client:
        statuses = [client.get("/v1/sources", headers=bearer(keys.audit)).status_code for _ in range(3)]
        assert statuses == [200, 200, 200]
        limited = client.get("/v1/sources", headers=bearer(keys.audit))
        problem = assert_problem(limited, 429, "rate-limited")
        assert 1 <= int(limited.headers["retry-after"]) <= 20
        assert problem["limitPerMinute"] == 3
        assert keys.ids["audit"] in problem["detail"]
        # The bucket is the key's: another key is not limited, and open routes are not counted.
        assert client.get("/v1/sources", headers=bearer(keys.admin)).status_code == 200
        assert client.get("/healthz").status_code == 200


def test_a_token_bucket_refills_at_its_rate() -> None:
    now = [0.0]
    buckets = TokenBuckets(60, clock=lambda: now[0])
    assert all(buckets.take("k") == 0.0 for _ in range(60))
    assert buckets.take("k") == pytest.approx(1.0)
    now[0] += 0.5
    assert buckets.take("k") == pytest.approx(0.5)
    now[0] += 0.5
    assert buckets.take("k") == 0.0
    assert buckets.take("other") == 0.0
    assert TokenBuckets(0).take("k") == 0.0


def test_without_required_keys_nothing_is_asked(api: ApiHarness) -> None:
    assert api.client.get("/v1/sources").status_code == 200
    assert api.client.get("/v1/sources", headers={"Authorization": "Bearer junk"}).status_code == 200
    response = api.client.post("/v1/sources/reverify", json={"sourceId": GUIDE})
    assert response.status_code == 200
    assert api.reverify.actors == [None]


def test_require_scope_guards_routes_outside_the_table(seeded_store: EvidenceStore, tmp_path: Path) -> None:
    keys = _make_keys(seeded_store)
    settings = load_settings(data_dir=tmp_path, require_api_keys=True)
    app = build_app(seeded_store, FakeAnswerService(seeded_store), settings=settings)
    declared = APIRouter(prefix="/extra", dependencies=[Depends(require_scope("audit"))])
    declared.add_api_route("/page", lambda: {"ok": True}, methods=["GET"])
    app.include_router(declared)
    app.add_api_route("/undeclared", lambda: {"ok": True}, methods=["GET"])
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/extra/page", headers=bearer(keys.audit)).status_code == 200
        assert client.get("/extra/page", headers=bearer(keys.admin)).status_code == 200
        problem = assert_problem(
            client.get("/extra/page", headers=bearer(keys.ask)), 403, "insufficient-scope"
        )
        assert problem["requiredScope"] == "audit"
        assert_problem(client.get("/extra/page"), 401, "unauthorized")
        # A route that declares nothing needs admin.
        assert client.get("/undeclared", headers=bearer(keys.admin)).status_code == 200
        problem = assert_problem(
            client.get("/undeclared", headers=bearer(keys.audit)), 403, "insufficient-scope"
        )
        assert problem["requiredScope"] == "admin"


# ---- the key as the actor of a real answer and a real re-verification -------------------------

WORDS = ("Construction began in 1921 ", "and the bridge was opened ", "to traffic on 19 March 1932.")
QUESTION = "When was the Kestrel Harbour Bridge opened to traffic?"


class ScriptedGenerator:
    def stream(
        self, prompt: Any, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        yield from WORDS
        return GeneratedAnswer(text="".join(WORDS), decode={"new_tokens": len(WORDS)})


def test_the_key_is_the_actor_of_a_stored_answer_and_its_reverification(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(FIXTURE_DOCS, root / "docs")
    (root / "config").mkdir()
    shutil.copy(DEFAULT_MANIFEST_FILE, root / "config" / "manifest.yaml")
    manifest_path = root / "config" / "manifest.yaml"
    manifest = load_manifest(manifest_path)
    store = open_store(f"sqlite:///{tmp_path / 'answers.sqlite3'}")
    try:
        ingest(store, manifest, embedder=load_embedder("hashing"))
        keys = _make_keys(store)
        settings = load_settings(
            data_dir=tmp_path,
            embedding_model="hashing",
            manifest_path=manifest_path,
            require_api_keys=True,
        )
        answers = PipelineAnswerService(settings, lambda: store)
        runtime = Runtime.from_settings(settings)
        runtime._store = store
        runtime._generator = ScriptedGenerator()  # type: ignore[assignment]
        answers._runtime = runtime
        scope = SourceScope(manifest)
        services = ApiServices(
            store=StoreHandle(store=store),
            scope=scope,
            answers=answers,
            reverify=PipelineReverifyService(settings, lambda: store, manifest, scope),
        )
        app = create_app(settings, services, limits=ApiLimits())
        with TestClient(app, raise_server_exceptions=False) as client:
            response = client.post("/v1/answers", json={"question": QUESTION}, headers=bearer(keys.ask))
            assert response.status_code == 200, response.text
            packet_id = response.json()["packetId"]
            asker = f"key:{keys.ids['ask']}"
            stored = store.get_packet(packet_id)
            assert stored is not None and stored["verification"]["verifiedBy"] == asker
            events = store.verification_events_of_packet(packet_id)
            promoted = [event for event in events if event.to_state == "claim-supported"]
            assert promoted and {event.actor for event in promoted} == {asker}
            history = client.get(f"/v1/packets/{packet_id}/history", headers=bearer(keys.audit)).json()
            assert asker in json.dumps(history)

            # The source changes; re-verification through the API is the ingest key's.
            page = root / "docs" / "harbour_bridge.md"
            page.write_text(page.read_text().replace("19 March 1932", "20 March 1932"))
            ingest(store, manifest, embedder=load_embedder("hashing"))
            source_id = stored["evidenceRows"][0]["source"]["sourceId"]
            response = client.post(
                "/v1/sources/reverify", json={"sourceId": source_id}, headers=bearer(keys.ingest)
            )
            assert response.status_code == 200, response.text
            report = response.json()
            assert report["rowsStale"] and report["packets"]
            reverifier = f"key:{keys.ids['ingest']}"
            new_packet = store.get_packet(report["packets"][0]["packetId"])
            assert new_packet is not None and new_packet["verification"]["verifiedBy"] == reverifier
            stale = [
                event
                for row_id in report["rowsStale"]
                for event in store.verification_events(row_id)
                if event.to_state == "stale"
            ]
            assert stale and {event.actor for event in stale} == {reverifier}
    finally:
        store.close()
