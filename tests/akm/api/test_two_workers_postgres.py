"""Two API worker processes on one PostgreSQL while an ingest runs in a third process.

Each worker is the production app and answer pipeline (``openai_server_app.create``: hashing
embedder, a generator that copies the chosen passage) over the same database. Clients answer
through both workers at once while ``akm ingest`` adds and changes documents. Afterwards: every
answer was acknowledged, every acknowledged packet is stored and reads back identically from
either worker, the packet count equals the answers given, and no source has two versions with
one checksum.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from uvicorn_process import REPO, running_server, spare_port

from akm.config import DEFAULT_MANIFEST_FILE

pytestmark = [pytest.mark.postgres, pytest.mark.server, pytest.mark.slow]

FIXTURE_DOCS = REPO / "tests" / "fixtures" / "answers" / "docs"
QUESTIONS = (
    "When was the Kestrel Harbour Bridge opened to traffic?",
    "How do honey bees tell each other where food is?",
    "What causes an aurora?",
    "When did the Tidewater Railway open?",
)
ANSWERS_PER_CLIENT = 4
CLIENTS_PER_WORKER = 2


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(FIXTURE_DOCS, root / "docs")
    (root / "config").mkdir()
    shutil.copy(DEFAULT_MANIFEST_FILE, root / "config" / "manifest.yaml")
    return root


def _ingest(root: Path, env: dict[str, str], *paths: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "akm", "ingest", "--embedder", "hashing", "--quiet", "--json", *paths],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _add_pages(root: Path, start: int, count: int) -> None:
    """More pages (and a change to one existing page) for the ingest that runs during the answers."""
    folder = root / "docs" / "extra"
    folder.mkdir(exist_ok=True)
    for number in range(start, start + count):
        (folder / f"page-{number:03d}.md").write_text(
            f"# Page {number}\n\nThe survey of harbour {number} counted {number * 7} moorings in its "
            f"second year. Its keeper logged {number * 3} storms.\n",
            encoding="utf-8",
        )
    aurora = root / "docs" / "aurora.md"
    aurora.write_text(aurora.read_text(encoding="utf-8") + "\nA later note on sightings.\n", encoding="utf-8")


def test_two_workers_answer_during_an_ingest_and_lose_nothing(
    tmp_path: Path, migrated_postgres_url: str
) -> None:
    root = _project(tmp_path)
    env = {
        "AKM_DATABASE_URL": migrated_postgres_url,
        "AKM_MANIFEST_PATH": str(root / "config" / "manifest.yaml"),
        "AKM_EMBEDDING_MODEL": "hashing",
        "AKM_DATA_DIR": str(tmp_path / "data"),
        "PYTHONPATH": str(REPO / "tests" / "akm" / "api"),
        # Two clients per worker share its one generation slot: they queue instead of getting 429.
        "AKM_API_GENERATION_WAIT_S": "120",
    }
    (tmp_path / "data").mkdir()
    first = _ingest(root, env)
    assert first.returncode == 0, first.stderr
    _add_pages(root, 0, 60)

    ports = [spare_port(), spare_port()]
    # A long keep-alive: on a loaded machine a client can take longer than uvicorn's default 5 s to
    # send its next request on a kept connection, which the server would have closed meanwhile.
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "openai_server_app:create",
        "--host",
        "127.0.0.1",
        "--timeout-keep-alive",
        "75",
    ]
    acknowledged: list[tuple[str, dict[str, Any]]] = []
    failures: list[str] = []
    during_ingest: list[bool] = []
    lock = threading.Lock()
    ingest: subprocess.Popen[str] | None = None

    with (
        running_server([*command, "--port", str(ports[0])], ports[0], env) as one,
        running_server([*command, "--port", str(ports[1])], ports[1], env) as two,
    ):

        def client(base: str, offset: int) -> None:
            with httpx.Client(base_url=base, timeout=120.0) as http:
                for number in range(ANSWERS_PER_CLIENT):
                    question = QUESTIONS[(offset + number) % len(QUESTIONS)]
                    response = http.post("/v1/answers", json={"question": question})
                    with lock:
                        during_ingest.append(ingest is not None and ingest.poll() is None)
                        if response.status_code == 200:
                            acknowledged.append((base, response.json()))
                        else:
                            failures.append(f"{base} {response.status_code} {response.text[:300]}")

        ingest = subprocess.Popen(
            [sys.executable, "-m", "akm", "ingest", "--embedder", "hashing", "--quiet", "--json"],
            env={**os.environ, **env},
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started = time.monotonic()
        threads = [
            threading.Thread(target=client, args=(base, offset))
            for base in (one, two)
            for offset in range(CLIENTS_PER_WORKER)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        out, err = ingest.communicate(timeout=300)
        elapsed = time.monotonic() - started

        assert ingest.returncode == 0, err
        report = json.loads(out)
        assert report["new"] >= 60 and report["changed"] >= 1
        assert failures == []
        # The ingest really overlapped the answers.
        assert any(during_ingest)
        expected = 2 * CLIENTS_PER_WORKER * ANSWERS_PER_CLIENT
        assert len(acknowledged) == expected
        packet_ids = [body["packet"]["packetId"] for _, body in acknowledged]
        assert len(set(packet_ids)) == expected

        # Every acknowledged packet reads back, the same from both workers.
        with httpx.Client(timeout=30.0) as http:
            for _, body in acknowledged:
                packet_id = body["packet"]["packetId"]
                views = [http.get(f"{base}/v1/packets/{packet_id}") for base in (one, two)]
                assert [view.status_code for view in views] == [200, 200]
                assert views[0].json() == views[1].json()
                assert views[0].json()["verification"]["verdict"] == body["packet"]["verification"]["verdict"]
        print(
            f"{expected} answers through 2 workers, {sum(during_ingest)} of them while the ingest of "
            f"60 new pages ran; {elapsed:.1f} s in all"
        )

    engine = sa.create_engine(migrated_postgres_url)
    try:
        with engine.connect() as connection:
            packets = connection.execute(sa.text("SELECT count(*) FROM packets")).scalar_one()
            duplicates = connection.execute(
                sa.text(
                    "SELECT count(*) FROM (SELECT source_id, sha256 FROM source_versions "
                    "GROUP BY source_id, sha256 HAVING count(*) > 1) AS repeated"
                )
            ).scalar_one()
    finally:
        engine.dispose()
    assert packets == expected
    assert duplicates == 0
