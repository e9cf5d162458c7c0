"""Probes 2 and 5, and the ``akm validate`` inputs that already held: every hostile input ends
in bounded time and memory with a message and exit 2, never a traceback or a hang."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from akm.cli import main
from akm.contract.errors import UnreadableDocument
from akm.contract.validation import MAX_NESTING_DEPTH, read_documents

from .conftest import REPO, assert_no_traceback, run_akm

pytestmark = pytest.mark.reliability

EXAMPLE_ROW = REPO / "examples"


def _validate_here(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """``akm validate`` in this process, for inputs that cannot hang (a traceback fails the test)."""
    code = main(["validate", *argv])
    return code, capsys.readouterr().err


def _validate(tmp_path: Path, *argv: str, timeout: float = 30.0) -> tuple[int, str]:
    """``akm validate`` as a real subprocess, for inputs that could hang or exhaust memory."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("AKM_")}
    environment["AKM_DATA_DIR"] = str(tmp_path / "data")
    finished = run_akm(["validate", *argv], environment, timeout=timeout)
    assert_no_traceback(finished)
    return finished.code, finished.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_is_refused_not_read(tmp_path: Path) -> None:
    code, stderr = _validate(tmp_path, "/dev/zero", "--max-bytes", "1024", timeout=30)
    assert code == 2
    assert "not a regular file" in stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "evidence.json"
    os.mkfifo(fifo)
    code, stderr = _validate(tmp_path, str(fifo), timeout=30)
    assert code == 2
    assert "not a regular file" in stderr


def test_a_huge_file_is_refused_from_its_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as stream:
        stream.truncate(8 * 1024**3)  # sparse: 8 GiB reported, nothing on disk
    code, stderr = _validate_here(capsys, str(big), "--max-bytes", "4096")
    assert code == 2
    assert "over the limit of 4096 bytes" in stderr


def test_read_stops_at_the_limit_even_when_the_reported_size_is_wrong(tmp_path: Path) -> None:
    # /proc files report size 0 but have content: the bounded read is what holds the limit.
    proc = Path("/proc/self/mountinfo")
    if not proc.exists():
        pytest.skip("no /proc")
    with pytest.raises(UnreadableDocument, match="over the limit of 16 bytes"):
        read_documents(proc, max_bytes=16)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.json", "[" * 100_000 + "]" * 100_000),
        ("deep-object.json", '{"a":' * 100_000 + "1" + "}" * 100_000),
        ("deep.yaml", "[" * 100_000 + "]" * 100_000),
        ("deep-block.yaml", "".join(f"{'  ' * level}- \n" for level in range(3000))),
        ("deep.jsonl", "[" * 100_000 + "]" * 100_000 + "\n"),
    ],
)
def test_deeply_nested_documents_are_refused_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    code, stderr = _validate_here(capsys, str(path))
    assert code == 2, stderr
    assert "nested" in stderr or "malformed" in stderr


def test_nesting_just_under_the_limit_is_validated_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep-but-allowed.json"
    path.write_text(json.dumps(_nested(MAX_NESTING_DEPTH - 1)), encoding="utf-8")
    code, stderr = _validate_here(capsys, str(path))
    assert code == 1, stderr  # read and found invalid (not an evidence document), not refused


def _nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.json", b"", "empty file"),
        ("binary.json", b"\x00\x01\x02", "binary"),
        ("latin1.json", b'{"a": "\xe9"}', "non-UTF-8"),
        ("truncated.json", b'{"rowType": "EvidenceRow", ', "malformed JSON"),
        ("nan.json", b'{"a": NaN}', "not valid JSON"),
        ("bomb.yaml", b"a: &a [x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b]\n", ""),
    ],
)
def test_malformed_inputs_end_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    code, stderr = _validate_here(capsys, str(path))
    assert code in (1, 2)
    assert message in stderr or code == 1


def test_examples_still_validate(capsys: pytest.CaptureFixture[str]) -> None:
    code, stderr = _validate_here(capsys, str(EXAMPLE_ROW))
    assert code == 0, stderr
