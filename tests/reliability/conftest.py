"""Fixtures of the reliability probes: the bundled-corpus copy of tests/akm/answer (shared by
file path, tests are not a package) and helpers that run ``akm`` as a real subprocess."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location(
    "akm_answer_test_fixtures", Path(__file__).resolve().parents[1] / "akm" / "answer" / "conftest.py"
)
assert _SPEC is not None and _SPEC.loader is not None
_FIXTURES = sys.modules.get(_SPEC.name) or importlib.util.module_from_spec(_SPEC)
if _SPEC.name not in sys.modules:
    sys.modules[_SPEC.name] = _FIXTURES
    _SPEC.loader.exec_module(_FIXTURES)

corpus = _FIXTURES.corpus
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Finished:
    code: int
    stdout: str
    stderr: str


def akm_environment(data_dir: Path, manifest: Path, database: Path) -> dict[str, str]:
    """The environment of an ``akm`` subprocess on its own data directory, store and manifest."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("AKM_")}
    environment.update(
        AKM_DATA_DIR=str(data_dir),
        AKM_MANIFEST_PATH=str(manifest),
        AKM_DATABASE_URL=f"sqlite:///{database}",
        AKM_EMBEDDING_MODEL="hashing",
        PYTHONUNBUFFERED="1",
    )
    return environment


def run_akm(
    argv: Sequence[str], environment: dict[str, str], *, timeout: float = 60.0, cwd: Path | None = None
) -> Finished:
    """``python -m akm ARGV`` to completion; a hang fails the test at ``timeout`` seconds."""
    done = subprocess.run(
        [sys.executable, "-m", "akm", *argv],
        env=environment,
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Finished(done.returncode, done.stdout, done.stderr)


def assert_no_traceback(finished: Finished) -> None:
    assert "Traceback" not in finished.stderr, finished.stderr[-2000:]
