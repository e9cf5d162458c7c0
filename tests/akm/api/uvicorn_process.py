"""Start and stop a real server process on 127.0.0.1 on a spare port."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def spare_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_server(
    command: Sequence[str], port: int, env: dict[str, str], *, startup_s: float = 60.0
) -> Iterator[str]:
    """Run ``command`` until /healthz answers; yield the base URL; stop it (SIGTERM, then kill)."""
    log = (Path(env.get("AKM_DATA_DIR", "/tmp")) / f"server-{port}.log").open("wb")
    process = subprocess.Popen(
        list(command), env={**os.environ, **env}, cwd=REPO, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_s
        while True:
            if process.poll() is not None:
                log.flush()
                raise RuntimeError(
                    f"server exited with {process.returncode}: {Path(log.name).read_text()[-3000:]}"
                )
            try:
                if httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"server did not start in {startup_s} s: {Path(log.name).read_text()[-3000:]}"
                )
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        log.close()


def fake_server_command(port: int, factory: str = "server_app:create") -> list[str]:
    """uvicorn with a test app factory of this folder: ``server_app`` (fake generator, real app and
    store) or ``openai_server_app`` (the production pipeline with a word-by-word generator)."""
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        factory,
        "--app-dir",
        str(HERE),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-access-log",
        "--log-level",
        "warning",
    ]


def akm_serve_command(port: int, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from akm.cli import main; raise SystemExit(main())",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *extra,
    ]


def fixture_project(tmp_path: Path, extra_docs: Mapping[str, str] | None = None) -> dict[str, str]:
    """The fixture articles (plus ``extra_docs``: name → text) ingested with the hashing embedder
    into a SQLite store under ``tmp_path``; the environment of a server over them."""
    from akm.config import DEFAULT_MANIFEST_FILE
    from akm.embedding import load_embedder
    from akm.ingest import ingest
    from akm.manifest import load_manifest
    from akm.store import open_store

    root = tmp_path / "project"
    shutil.copytree(REPO / "tests" / "fixtures" / "answers" / "docs", root / "docs")
    for name, text in (extra_docs or {}).items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    (root / "config").mkdir()
    manifest = root / "config" / "manifest.yaml"
    shutil.copy(DEFAULT_MANIFEST_FILE, manifest)
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store = open_store(url)
    ingest(store, load_manifest(manifest), embedder=load_embedder("hashing"))
    store.close()
    return {
        "AKM_DATABASE_URL": url,
        "AKM_DATA_DIR": str(tmp_path),
        "AKM_MANIFEST_PATH": str(manifest),
        "AKM_EMBEDDING_MODEL": "hashing",
    }
