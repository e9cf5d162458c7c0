"""A real `akm serve --host 0.0.0.0` process: keys are required without any setting, per scope and
per rate; a key revoked while the server runs is refused from its next request."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import openai
import pytest
from api_fakes import GUIDE, seed_store
from uvicorn_process import akm_serve_command, running_server, spare_port

from akm.store import open_store


def test_a_server_bound_beyond_loopback_requires_keys(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'served.sqlite3'}"
    store = open_store(url)
    seed_store(store)
    with store.transaction() as tx:
        ask = tx.create_api_key(scopes=["ask"])
        audit = tx.create_api_key(scopes=["audit"])
        ingest = tx.create_api_key(scopes=["ingest"])
    store.close()
    port = spare_port()
    env = {"AKM_DATABASE_URL": url, "AKM_DATA_DIR": str(tmp_path), "AKM_API_KEY_REQUESTS_PER_MINUTE": "4"}
    command = akm_serve_command(port, "--host", "0.0.0.0")
    with running_server(command, port, env) as base, httpx.Client(base_url=base, timeout=10) as client:
        assert client.get("/healthz").status_code == 200

        missing = client.get("/v1/sources")
        assert missing.status_code == 401
        assert missing.headers["content-type"] == "application/problem+json"
        assert missing.headers["www-authenticate"] == 'Bearer realm="akm"'
        assert missing.json()["type"] == "urn:akm:problem:unauthorized"

        wrong = client.get("/v1/sources", headers={"Authorization": f"Bearer {ask.token}"})
        assert wrong.status_code == 403
        assert wrong.json()["requiredScope"] == "audit"

        # The OpenAI client sends its api_key as the Bearer key.
        base_v1 = f"{base}/v1"
        with openai.OpenAI(base_url=base_v1, api_key=ask.token, max_retries=0, timeout=30) as chat:
            assert [model.id for model in chat.models.list()]
        for token, refusal in (
            (audit.token, openai.PermissionDeniedError),
            ("sk-x", openai.AuthenticationError),
        ):
            with (
                openai.OpenAI(base_url=base_v1, api_key=token, max_retries=0, timeout=30) as chat,
                pytest.raises(refusal),
            ):
                chat.models.list()

        audit_key = {"Authorization": f"Bearer {audit.token}"}
        listed = client.get("/v1/sources", headers=audit_key)
        assert listed.status_code == 200, listed.text
        assert GUIDE in [item["sourceId"] for item in listed.json()["items"]]
        assert client.get(f"/v1/sources/{GUIDE}", headers=audit_key).status_code == 200
        assert client.get("/metrics", headers=audit_key).status_code == 200
        # The audit key's 403 above and these three requests took the bucket's 4 tokens (one
        # comes back every 15 s).
        limited = client.get("/v1/sources", headers=audit_key)
        assert limited.status_code == 429
        assert int(limited.headers["retry-after"]) >= 1
        assert limited.json()["type"] == "urn:akm:problem:rate-limited"

        # Revoked in the store while the server runs: refused from the next request on.
        ingest_key = {"Authorization": f"Bearer {ingest.token}"}
        assert client.get("/v1/ingest/no-such-job", headers=ingest_key).status_code == 404
        store = open_store(url)
        with store.transaction() as tx:
            tx.revoke_api_key(ingest.info.key_id)
        used = store.get_api_key(audit.info.key_id)
        store.close()
        revoked = client.get("/v1/ingest/no-such-job", headers=ingest_key)
        assert revoked.status_code == 401
        assert "revoked" in revoked.json()["detail"]
        assert 'error="invalid_token"' in revoked.headers["www-authenticate"]
        assert used is not None and used.last_used_at is not None
        assert time.time() - used.last_used_at.timestamp() < 120
