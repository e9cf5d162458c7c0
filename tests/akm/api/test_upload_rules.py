"""The rules behind POST /v1/sources and the ingest-job registry, without a server: the streaming
multipart parser on every split of a body, file names, content types, If-Match, memory use of a
large refused upload, the upload root's place in the manifest, and job state on disk."""

from __future__ import annotations

import json
import threading
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import pytest
from api_fakes import ApiHarness, assert_problem

from akm.config import DEFAULT_MANIFEST_FILE
from akm.embedding import HashingEmbedder
from akm.manifest import Manifest, load_manifest
from akm.service.errors import NotFoundError
from akm.service.ingest_jobs import IngestJobRunningError, IngestJobs
from akm.service.uploads import (
    MultipartParser,
    UploadRefusal,
    UploadRefused,
    UploadService,
    check_content_type,
    check_file_name,
    parse_if_match,
    resolve_upload_root,
)
from akm.settings import load_settings
from akm.store import EvidenceStore

BODY = (
    b"preamble\r\n--XyZ\r\n"
    b'Content-Disposition: form-data; name="files"; filename="a.md"\r\n'
    b"Content-Type: text/markdown\r\n\r\n"
    b"first --XyZ inline\r\n-- XyZ\r\n"
    b"\r\n--XyZ\r\n"
    b"Content-Disposition: form-data; name=\"files\"; filename*=UTF-8''%C3%A9t%C3%A9.md\r\n\r\n"
    b"second\r\n--XyZ--\r\nepilogue"
)


def parse(body: bytes, step: int) -> list[tuple[str, object]]:
    parser = MultipartParser(b"XyZ")
    parts: list[tuple[str, object]] = []
    for start in range(0, len(body), step):
        for event in parser.feed(body[start : start + step]):
            if event.kind == "headers":
                assert event.headers is not None
                parts.append(("headers", event.headers.params))
            elif event.kind == "data":
                if parts and parts[-1][0] == "data":
                    parts[-1] = ("data", parts[-1][1] + event.data)  # type: ignore[operator]
                else:
                    parts.append(("data", event.data))
            else:
                parts.append(("end", None))
    parser.close()
    return parts


@pytest.mark.parametrize("step", [1, 2, 3, 7, 16, 64, len(BODY)])
def test_the_parser_gives_the_same_parts_for_any_split(step: int) -> None:
    assert parse(BODY, step) == [
        ("headers", {"name": "files", "filename": "a.md"}),
        ("data", b"first --XyZ inline\r\n-- XyZ\r\n"),
        ("end", None),
        ("headers", {"name": "files", "filename*": "UTF-8''%C3%A9t%C3%A9.md"}),
        ("data", b"second"),
        ("end", None),
    ]


@pytest.mark.parametrize(
    "body",
    [
        b'--XyZ\r\nContent-Disposition: form-data; filename="a.md"\r\n\r\nno closing boundary',
        b"--XyZ\r\nNo colon here\r\n\r\nx\r\n--XyZ--",
        b"--XyZ\r\nContent-Type: text/plain\r\n\r\nx\r\n--XyZ--",
        b'--XyZ\r\nContent-Disposition: form-data; filename="open\r\n\r\nx\r\n--XyZ--',
    ],
)
def test_malformed_bodies_are_refused(body: bytes) -> None:
    parser = MultipartParser(b"XyZ")
    with pytest.raises(UploadRefused) as refused:
        parser.feed(body)
        parser.close()
    assert refused.value.reason is UploadRefusal.MALFORMED


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../up.md", "parent folder"),
        ("..\\up.md", "parent folder"),
        ("a/../../up.md", "parent folder"),
        ("/etc/passwd.md", "absolute"),
        ("C:\\x.md", "absolute"),
        ("dir/a.md", "path separator"),
        ("a\x00.md", "NUL"),
        ("a\nb.md", "line break"),
        ("a\rb.md", "line break"),
        ("a%0Ab.md", "percent-encoded control"),
        ("a%7fb.md", "percent-encoded control"),
        ("a\tb.md", "control"),
        ("a\u202edm.exe.md", "control or invisible"),
        (".env.md", "hidden"),
        ("..", "parent folder"),
        (" a.md", "white space"),
        ("a.md.", "white space"),
        ("", "empty"),
        ("x" * 254 + ".md", "longer than"),
    ],
)
def test_bad_names_are_refused_with_the_reason(name: str, why: str) -> None:
    with pytest.raises(UploadRefused) as refused:
        check_file_name(name)
    assert refused.value.reason is UploadRefusal.BAD_NAME
    assert why in refused.value.detail


def test_good_names_are_kept_in_nfc() -> None:
    assert check_file_name("Notes 2026 (draft).md") == "Notes 2026 (draft).md"
    assert check_file_name("e\u0301te\u0301.md") == "\u00e9t\u00e9.md"


def test_content_types() -> None:
    allowed = ("text/markdown", "text/plain")
    assert check_content_type("a.md", "text/markdown; charset=utf-8", allowed) == "text/markdown"
    assert check_content_type("a.md", "application/octet-stream", allowed) == "text/markdown"
    assert check_content_type("a.md", "text/x-markdown", allowed) == "text/markdown"
    assert check_content_type("a.MD", None, allowed) == "text/markdown"
    for name, declared, reason in [
        ("a.md", "text/html", UploadRefusal.TYPE_MISMATCH),
        ("a.txt", "text/markdown", UploadRefusal.TYPE_MISMATCH),
        ("a.pdf", "application/pdf", UploadRefusal.TYPE_NOT_ALLOWED),
        ("a.exe", None, UploadRefusal.TYPE_NOT_ALLOWED),
        ("noextension", None, UploadRefusal.TYPE_NOT_ALLOWED),
    ]:
        with pytest.raises(UploadRefused) as refused:
            check_content_type(name, declared, allowed)
        assert refused.value.reason is reason, name


def test_if_match_tags() -> None:
    assert parse_if_match(None) is None
    assert parse_if_match("*") == frozenset()
    assert parse_if_match('W/"sha256:ab"') == frozenset()
    assert parse_if_match('"sha256:AB", "cd"') == frozenset({"sha256:ab", "cd"})


@pytest.fixture
def manifest(tmp_path: Path) -> Manifest:
    root = tmp_path / "project"
    (root / "config").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "config" / "manifest.yaml").write_bytes(DEFAULT_MANIFEST_FILE.read_bytes())
    return load_manifest(root / "config" / "manifest.yaml")


def test_the_upload_root_must_lie_inside_a_file_root(manifest: Manifest) -> None:
    root = resolve_upload_root("docs/inbox", manifest)
    assert (root.root_alias, root.root_prefix, root.project_prefix) == ("docs", "inbox", "docs/inbox")
    assert root.directory == manifest.project_root / "docs" / "inbox" and root.directory.is_dir()
    with pytest.raises(UploadRefused) as disabled:
        resolve_upload_root("", manifest)
    assert disabled.value.reason is UploadRefusal.DISABLED
    for setting in ("uploads", "docs/../uploads", "/tmp"):
        with pytest.raises(UploadRefused) as refused:
            resolve_upload_root(setting, manifest)
        assert refused.value.reason is UploadRefusal.MISCONFIGURED
    (manifest.project_root / "elsewhere").mkdir()
    (manifest.project_root / "docs" / "link").symlink_to(manifest.project_root / "elsewhere")
    with pytest.raises(UploadRefused, match="symbolic link"):
        resolve_upload_root("docs/link", manifest)


def test_a_large_refused_upload_is_neither_kept_nor_held_in_memory(
    manifest: Manifest, tmp_path: Path
) -> None:
    service = UploadService(
        manifest, "docs/inbox", max_file_bytes=1_000_000, max_files=2, lock_directory=tmp_path / "data"
    )
    chunk = b"z" * 65_536
    total = 200 * 1024 * 1024

    async def body() -> AsyncIterator[bytes]:
        yield b'--b\r\nContent-Disposition: form-data; name="files"; filename="big.md"\r\n\r\n'
        for _ in range(total // len(chunk)):
            yield chunk
        yield b"\r\n--b--\r\n"

    async def receive() -> None:
        await service.receive(body(), "multipart/form-data; boundary=b")

    tracemalloc.start()
    try:
        with pytest.raises(UploadRefused) as refused:
            anyio.run(receive)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert refused.value.reason is UploadRefusal.TOO_LARGE
    assert peak < 4 * 1024 * 1024, peak
    assert list(service.root.directory.iterdir()) == []


def test_a_mid_body_failure_removes_every_temporary_file(manifest: Manifest, tmp_path: Path) -> None:
    service = UploadService(
        manifest, "docs/inbox", max_file_bytes=1_000, max_files=2, lock_directory=tmp_path / "data"
    )

    async def body() -> AsyncIterator[bytes]:
        yield b'--b\r\nContent-Disposition: form-data; name="files"; filename="a.md"\r\n\r\nhalf of it'
        raise ConnectionResetError("the client went away")

    async def receive() -> None:
        await service.receive(body(), "multipart/form-data; boundary=b")

    with pytest.raises(ConnectionResetError):
        anyio.run(receive)
    assert list(service.root.directory.iterdir()) == []


# ---- ingest jobs ----------------------------------------------------------------------------


@pytest.fixture
def jobs_setup(
    manifest: Manifest, tmp_path: Path, sqlite_store: EvidenceStore
) -> Iterator[tuple[IngestJobs, threading.Event]]:
    (manifest.project_root / "docs" / "a.md").write_text("# A\n\nAlpha text.\n")
    settings = load_settings(
        data_dir=tmp_path / "data", manifest_path=manifest.path, embedding_model="hashing"
    )
    release = threading.Event()
    inner = HashingEmbedder()

    class Held:
        model_id = inner.model_id
        dimensions = inner.dimensions

        def embed(self, texts: list[str]) -> object:
            release.wait(30)
            return inner.embed(texts)

    jobs = IngestJobs(settings, lambda: sqlite_store, embedder=lambda: Held())  # type: ignore[arg-type,return-value]
    yield jobs, release
    release.set()
    jobs.wait(30)


def test_one_job_at_a_time_even_across_registries(jobs_setup: tuple[IngestJobs, threading.Event]) -> None:
    jobs, release = jobs_setup
    job = jobs.start()
    with pytest.raises(IngestJobRunningError) as running:
        jobs.start()
    assert running.value.job_id == job.job_id
    # Another registry on the same data directory (another worker process) sees the lock.
    other = IngestJobs(jobs.settings, lambda: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(IngestJobRunningError) as elsewhere:
        other.start()
    assert elsewhere.value.job_id == job.job_id
    assert other.get(job.job_id)["state"] == "running"
    release.set()
    jobs.wait(30)
    finished = jobs.get(job.job_id)
    assert finished["state"] == "succeeded" and finished["report"]["new"] == 1
    assert json.loads((jobs.folder / f"{job.job_id}.json").read_text()) == finished
    assert other.get(job.job_id) == finished
    with pytest.raises(NotFoundError):
        other.get("../../etc/passwd")


def test_a_job_left_running_by_a_dead_process_reads_as_interrupted(
    jobs_setup: tuple[IngestJobs, threading.Event],
) -> None:
    jobs, _ = jobs_setup
    jobs.folder.mkdir(parents=True, exist_ok=True)
    job_id = "f" * 32
    (jobs.folder / f"{job_id}.json").write_text(
        json.dumps({"jobId": job_id, "state": "running", "error": None})
    )
    document = jobs.get(job_id)
    assert document["state"] == "interrupted" and "ended before it finished" in document["error"]


def test_a_failing_job_records_why(jobs_setup: tuple[IngestJobs, threading.Event], tmp_path: Path) -> None:
    jobs, release = jobs_setup
    release.set()
    broken = tmp_path / "broken.yaml"
    broken.write_text("not: [a manifest")
    failing = IngestJobs(
        load_settings(data_dir=jobs.settings.data_dir, manifest_path=broken),
        jobs._store,
        embedder=lambda: None,
    )
    job = failing.start()
    failing.wait(30)
    document = failing.get(job.job_id)
    assert document["state"] == "failed" and "ManifestError" in document["error"]
    assert failing.start().job_id != job.job_id  # the lock was released
    failing.wait(30)


def test_shutdown_stops_a_running_job_as_cancelled(jobs_setup: tuple[IngestJobs, threading.Event]) -> None:
    jobs, release = jobs_setup
    job = jobs.start()
    stopper = threading.Thread(target=jobs.shutdown, args=(30.0,))
    stopper.start()
    release.set()
    stopper.join(30)
    document = jobs.get(job.job_id)
    assert document["state"] == "cancelled" and "shut down" in document["error"]
    assert json.loads((jobs.folder / f"{job.job_id}.json").read_text())["state"] == "cancelled"


def test_uploads_are_refused_while_no_upload_root_is_set(api: ApiHarness) -> None:
    response = api.client.post("/v1/sources", files={"files": ("a.md", b"# A\n", "text/markdown")})
    body = assert_problem(response, 403, "uploads-disabled")
    assert "upload_root" in body["detail"]
