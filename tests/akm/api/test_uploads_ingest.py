"""Uploads (POST /v1/sources) and ingest jobs (POST /v1/ingest, GET /v1/ingest/{jobId}) through a
real uvicorn process: an uploaded document is ingested by a job and answered from with a
claim-supported row citing it; a second job is refused with 409 while one runs; every bad upload is
refused with its problem and leaves nothing behind; a finished job's report outlives a restart."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
import yaml
from uvicorn_process import fake_server_command, running_server, spare_port

from akm.config import DEFAULT_MANIFEST_FILE

pytestmark = pytest.mark.server

PROBLEM = "application/problem+json"
LIMIT = 1_000_000
DOCUMENT = (
    b"# Lighthouse log\n\n"
    b"The Skerry Point lighthouse keeper records the lamp oil level every evening at nine o'clock.\n"
)
QUESTION = "When does the Skerry Point lighthouse keeper record the lamp oil level?"


@dataclass
class Project:
    root: Path
    uploads: Path
    data: Path
    gate: Path
    env: dict[str, str]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "project"
    (root / "config").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "docs" / "intro.md").write_text("# Intro\n\nThis project keeps notes about lighthouses.\n")
    # Denied by the manifest's basename tokens: counted by the job, never read.
    (root / "docs" / "secret-plan.md").write_text("# Plan\n\nNot for the index.\n")
    # The bundled manifest, with a docs root that includes Markdown only: plain text is an allowed
    # type that this root would never ingest.
    manifest = yaml.safe_load(DEFAULT_MANIFEST_FILE.read_text(encoding="utf-8"))
    manifest["sourceRefs"][0]["include"] = ["**/*.md"]
    (root / "config" / "manifest.yaml").write_text(
        yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8"
    )
    data = tmp_path / "data"
    data.mkdir()
    gate = tmp_path / "gate"
    env = {
        "AKM_DATA_DIR": str(data),
        "AKM_DATABASE_URL": f"sqlite:///{tmp_path / 'store.sqlite3'}",
        "AKM_MANIFEST_PATH": str(root / "config" / "manifest.yaml"),
        "AKM_UPLOAD_ROOT": "docs/uploads",
        "AKM_UPLOAD_MAX_FILE_BYTES": str(LIMIT),
        "AKM_UPLOAD_MAX_FILES": "4",
        "AKM_EMBEDDING_MODEL": "hashing",
        "AKM_TEST_INGEST_GATE": str(gate),
    }
    return Project(root, root / "docs" / "uploads", data, gate, env)


def server_command(port: int) -> list[str]:
    return fake_server_command(port, "ingest_server_app:create")


@pytest.fixture
def server(project: Project) -> Iterator[tuple[str, int]]:
    port = spare_port()
    with running_server(server_command(port), port, project.env) as base:
        yield base, port


def problem(response: httpx.Response, status: int, slug: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert body["type"] == f"urn:akm:problem:{slug}"
    assert body["status"] == status
    return body


def upload(client: httpx.Client, *files: tuple[str, bytes, str], **headers: str) -> httpx.Response:
    return client.post("/v1/sources", files=[("files", item) for item in files], headers=headers)


def raw_upload(client: httpx.Client, disposition: bytes, data: bytes = b"# T\n\ntext\n") -> httpx.Response:
    """A multipart body written by hand, for names no client library would send as they are."""
    boundary = b"akmtestboundary"
    body = (
        b"--" + boundary + b"\r\n"
        b"Content-Disposition: " + disposition + b"\r\n"
        b"Content-Type: text/markdown\r\n\r\n" + data + b"\r\n--" + boundary + b"--\r\n"
    )
    return client.post(
        "/v1/sources",
        content=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary.decode()}"},
    )


def wait_for(client: httpx.Client, job_id: str, timeout_s: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        job: dict[str, Any] = client.get(f"/v1/ingest/{job_id}").json()
        if job["state"] != "running":
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.1)


def listing(folder: Path) -> list[str]:
    return sorted(entry.name for entry in folder.iterdir())


def test_upload_ingest_job_and_an_answer_citing_the_upload(project: Project) -> None:
    port = spare_port()
    with (
        running_server(server_command(port), port, project.env) as base,
        httpx.Client(base_url=base, timeout=30.0) as client,
    ):
        stored = upload(client, ("lighthouse.md", DOCUMENT, "text/markdown"))
        assert stored.status_code == 201, stored.text
        [item] = stored.json()["files"]
        assert (item["name"], item["path"], item["sourceId"]) == (
            "lighthouse.md",
            "docs/uploads/lighthouse.md",
            "akm:docs:uploads/lighthouse.md",
        )
        assert item["byteSize"] == len(DOCUMENT) and item["replaced"] is False
        assert stored.headers["etag"] == item["etag"] == f'"sha256:{item["sha256"]}"'
        assert (project.uploads / "lighthouse.md").read_bytes() == DOCUMENT

        # The job waits at its embedding step until the gate opens: a second start meets it running.
        started = client.post("/v1/ingest")
        assert started.status_code == 202, started.text
        job_id = started.json()["jobId"]
        assert started.headers["location"] == f"/v1/ingest/{job_id}"
        assert started.json()["state"] == "running"
        refused = problem(client.post("/v1/ingest"), 409, "ingest-running")
        assert refused["runningJobId"] == job_id
        assert job_id in refused["detail"]
        running = client.get(f"/v1/ingest/{job_id}").json()
        assert running["state"] == "running" and running["report"] is None
        project.gate.touch()
        job = wait_for(client, job_id)
        assert job["state"] == "succeeded", job
        assert set(job["report"]["newSourceIds"]) == {"akm:docs:intro.md", "akm:docs:uploads/lighthouse.md"}
        assert job["report"]["ingested"] == 2 and job["report"]["filesSeen"] == 2
        progress = job["progress"]
        assert progress["phase"] == "done"
        assert (progress["filesTotal"], progress["filesSeen"], progress["filesIngested"]) == (2, 2, 2)
        assert progress["filesDenied"] == 1 and progress["filesPerSecond"] > 0
        assert job["report"]["deniedByReason"] == {"denied-basename-token": 1}
        assert job["finishedAt"] is not None and job["error"] is None
        # The job is over: the next one starts at once.
        again = client.post("/v1/ingest", json={"paths": ["docs/uploads"]})
        assert again.status_code == 202, again.text
        second = wait_for(client, again.json()["jobId"])
        assert second["state"] == "succeeded" and second["paths"] == ["docs/uploads"]
        assert second["report"]["unchanged"] == 1 and second["report"]["ingested"] == 0

        answered = client.post("/v1/answers", json={"question": QUESTION})
        assert answered.status_code == 200, answered.text
        rows = answered.json()["packet"]["evidenceRows"]
        supported = [row for row in rows if row["verification"]["state"] == "claim-supported"]
        assert supported, rows
        assert {row["source"]["canonicalUri"] for row in supported} == {"file:docs/uploads/lighthouse.md"}
        assert "nine o'clock" in answered.json()["answer"]
        assert problem(client.get("/v1/ingest/" + "0" * 32), 404, "not-found")

    # The finished job's report is on disk and served by a new process.
    saved = project.data / "ingest-jobs" / f"{job_id}.json"
    assert saved.is_file()
    port = spare_port()
    with (
        running_server(server_command(port), port, project.env) as base,
        httpx.Client(base_url=base, timeout=30.0) as client,
    ):
        reread = client.get(f"/v1/ingest/{job_id}")
        assert reread.status_code == 200
        assert reread.json()["state"] == "succeeded"
        assert reread.json()["report"] == job["report"]


def peak_rss(port: int) -> int:
    """Peak resident memory (bytes) of the process listening on ``port``."""
    for connection in psutil.net_connections(kind="tcp"):
        if connection.laddr and connection.laddr.port == port and connection.status == psutil.CONN_LISTEN:
            assert connection.pid is not None
            status = Path(f"/proc/{connection.pid}/status").read_text()
            [line] = [line for line in status.splitlines() if line.startswith("VmHWM:")]
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no process listens on port {port}")


def test_every_bad_upload_is_refused_and_leaves_nothing(project: Project, server: tuple[str, int]) -> None:
    base, port = server
    with httpx.Client(base_url=base, timeout=120.0) as client:
        first = upload(client, ("lighthouse.md", DOCUMENT, "text/markdown"))
        assert first.status_code == 201, first.text
        etag = first.headers["etag"]
        before = listing(project.uploads)
        assert before == ["lighthouse.md"]

        def refused(response: httpx.Response, status: int, slug: str) -> dict[str, Any]:
            body = problem(response, status, slug)
            assert listing(project.uploads) == before, body  # nothing stored, no temporary file left
            return body

        # Names.
        body = refused(upload(client, ("../escape.md", b"x", "text/markdown")), 422, "invalid-file-name")
        assert "parent folder" in body["detail"]
        assert not (project.root / "docs" / "escape.md").exists()
        assert not (project.root / "escape.md").exists()
        refused(upload(client, ("sub/../../escape.md", b"x", "text/markdown")), 422, "invalid-file-name")
        refused(upload(client, ("/etc/escape.md", b"x", "text/markdown")), 422, "invalid-file-name")
        body = refused(
            raw_upload(client, b'form-data; name="files"; filename="a\x00b.md"'), 422, "invalid-file-name"
        )
        assert "NUL" in body["detail"]
        body = refused(
            raw_upload(client, b'form-data; name="files"; filename="a\nb.md"'), 422, "invalid-file-name"
        )
        assert "line break" in body["detail"]
        # A client library sends the newline percent-encoded; it is refused all the same.
        body = refused(upload(client, ("a\nb.md", b"x", "text/markdown")), 422, "invalid-file-name")
        assert "control character" in body["detail"]
        body = refused(upload(client, ("LightHouse.md", b"x", "text/markdown")), 409, "name-conflict")
        assert body["existingName"] == "lighthouse.md"
        refused(upload(client, (".hidden.md", b"x", "text/markdown")), 422, "invalid-file-name")
        refused(
            upload(client, ("twice.md", b"x", "text/markdown"), ("Twice.md", b"y", "text/markdown")),
            422,
            "duplicate-file-name",
        )

        # Types.
        body = refused(
            upload(client, ("notes.md", b"# N\n", "application/pdf")), 415, "content-type-mismatch"
        )
        assert (body["declaredContentType"], body["extensionContentType"]) == (
            "application/pdf",
            "text/markdown",
        )
        body = refused(
            upload(client, ("paper.pdf", b"%PDF-1.4", "application/pdf")), 415, "content-type-not-allowed"
        )
        assert body["allowedContentTypes"] == ["text/markdown", "text/plain"]
        # Allowed type, but the docs root includes only Markdown: it would never be ingested.
        refused(upload(client, ("notes.txt", b"plain", "text/plain")), 403, "upload-denied")
        refused(upload(client, ("secret-notes.md", b"x", "text/markdown")), 403, "upload-denied")
        refused(
            client.post("/v1/sources", json={"files": []}),
            415,
            "unsupported-media-type",
        )

        # All or nothing: the second file's refusal keeps the first one out too.
        refused(
            upload(client, ("fine.md", b"# Fine\n", "text/markdown"), ("../bad.md", b"x", "text/markdown")),
            422,
            "invalid-file-name",
        )
        refused(
            upload(client, *[(f"n{index}.md", b"x", "text/markdown") for index in range(5)]),
            413,
            "too-many-files",
        )

        # Size: a 200 MB upload against a 1 MB limit, streamed without a declared length, is refused
        # as it arrives; the server neither keeps it nor holds it in memory.
        peak_before = peak_rss(port)
        chunk = b"a" * 65_536

        head = b'--big\r\nContent-Disposition: form-data; name="files"; filename="big.md"\r\n\r\n'
        tail = b"\r\n--big--\r\n"
        size = 200 * 1024 * 1024

        def two_hundred_mb() -> Iterator[bytes]:
            yield head
            for _ in range(size // len(chunk)):
                yield chunk
            yield tail

        big = client.post(
            "/v1/sources",
            content=two_hundred_mb(),
            headers={"Content-Type": "multipart/form-data; boundary=big"},
        )
        body = refused(big, 413, "payload-too-large")
        assert body["maxBytes"] == LIMIT and body["fileName"] == "big.md"
        growth = peak_rss(port) - peak_before
        assert growth < 50 * 1024 * 1024, f"peak memory grew by {growth} bytes"
        # Declared up front: refused before the body is read.
        declared = client.post(
            "/v1/sources",
            content=two_hundred_mb(),
            headers={
                "Content-Type": "multipart/form-data; boundary=big",
                "Content-Length": str(len(head) + size + len(tail)),
            },
        )
        body = refused(declared, 413, "payload-too-large")
        assert "fileName" not in body and body["maxFiles"] == 4
        # Just over the limit, in one ordinary request.
        body = refused(
            upload(client, ("over.md", b"b" * (LIMIT + 1), "text/markdown")), 413, "payload-too-large"
        )
        assert upload(client, ("exact.md", b"b" * LIMIT, "text/markdown")).status_code == 201
        before = listing(project.uploads)
        assert before == ["exact.md", "lighthouse.md"]

        # Overwriting needs the current entity tag.
        changed = DOCUMENT.replace(b"nine", b"ten")
        body = refused(
            upload(client, ("lighthouse.md", changed, "text/markdown")), 428, "precondition-required"
        )
        assert body["currentEtag"] == etag
        stale = '"sha256:' + "0" * 64 + '"'
        body = refused(
            upload(client, ("lighthouse.md", changed, "text/markdown"), **{"If-Match": stale}),
            412,
            "precondition-failed",
        )
        assert body["currentEtag"] == etag
        refused(
            upload(client, ("lighthouse.md", changed, "text/markdown"), **{"If-Match": "*"}),
            428,
            "precondition-required",
        )
        assert (project.uploads / "lighthouse.md").read_bytes() == DOCUMENT
        replaced = upload(client, ("lighthouse.md", changed, "text/markdown"), **{"If-Match": etag})
        assert replaced.status_code == 200, replaced.text
        assert replaced.json()["files"][0]["replaced"] is True
        assert (project.uploads / "lighthouse.md").read_bytes() == changed
        # The old tag is stale now.
        refused(
            upload(client, ("lighthouse.md", DOCUMENT, "text/markdown"), **{"If-Match": etag}),
            412,
            "precondition-failed",
        )
    assert listing(project.uploads) == ["exact.md", "lighthouse.md"]
