"""`akm validate`: exit codes 0/1/2, every bad-input kind, every output format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from akm.cli import main
from akm.config import DEFAULT_MANIFEST_FILE
from akm.contract.schema import UPSTREAM_SCHEMA_PATH

REPO_ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = REPO_ROOT / "examples"


def _candidate() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXAMPLES / "candidate-row.json").read_text(encoding="utf-8"))
    return loaded


def _write(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.fixture
def invalid_row(tmp_path: Path) -> Path:
    row = _candidate()
    row["verification"]["state"] = "claim-supported"
    return _write(tmp_path / "invalid.json", row)


def test_examples_are_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(EXAMPLES)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == (
        "akm validate: 6 file(s), 8 document(s), 0 finding(s) in 0 invalid file(s), 0 unreadable input(s)"
    )


def test_examples_are_valid_against_the_upstream_schema_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--upstream-schema", str(UPSTREAM_SCHEMA_PATH), str(EXAMPLES)]) == 0


def test_invalid_document_exits_1_with_located_findings(
    invalid_row: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "--profile", "service", "--upstream", str(invalid_row)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert f"{invalid_row}:/verification: schema:required: 'verifiedAt' is a required property" in lines
    assert f"{invalid_row}:/verification: upstream:required: 'verifiedAt' is a required property" in lines
    assert f"{invalid_row}:/verification: schema:required: 'claimIds' is a required property" in lines
    assert lines[-1].startswith("akm validate: 1 file(s), 1 document(s), ")


def test_rule_finding_in_human_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = _candidate()
    row["content"]["excerpt"] = "changed"
    path = _write(tmp_path / "row.json", row)
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{path}:/content/excerptChecksum: excerpt-checksum: excerptChecksum is not the SHA-256 of the excerpt"
    )


def test_json_format(invalid_row: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--profile", "service", "--format", "json", str(invalid_row)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    assert report["errors"] == []
    (file_report,) = report["files"]
    assert (file_report["path"], file_report["valid"], file_report["documents"]) == (
        str(invalid_row),
        False,
        1,
    )
    assert {
        "ruleId": "schema:required",
        "pointer": "/verification",
        "message": "'verifiedAt' is a required property",
    } in file_report["findings"]


def test_json_format_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--format", "json", str(EXAMPLES / "packet-pass.json")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {
        "valid": True,
        "files": [
            {
                "path": str(EXAMPLES / "packet-pass.json"),
                "valid": True,
                "documents": 1,
                "error": None,
                "findings": [],
            }
        ],
        "errors": [],
    }


def test_github_format(invalid_row: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--profile", "service", "--format", "github", str(invalid_row)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert (
        f"::error file={invalid_row},title=schema%3Arequired::/verification: 'verifiedAt' is a required property"
        in lines
    )


def test_jsonl_findings_carry_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _candidate()
    bad = _candidate()
    bad["retrieval"]["rank"] = 0
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps(bad) + "\n", encoding="utf-8")
    assert main(["validate", "--profile", "service", str(path)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{path}:3:/retrieval/rank: schema:minimum: 0 is less than the minimum of 1"
    )
    assert main(["validate", "--profile", "service", "--format", "github", str(path)]) == 1
    assert (
        capsys.readouterr()
        .out.splitlines()[0]
        .startswith(f"::error file={path},line=3,title=schema%3Aminimum::")
    )


def test_yaml_with_unquoted_timestamps_and_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (
        (EXAMPLES / "candidate-row.yaml")
        .read_text(encoding="utf-8")
        .replace("'2026-07-20T00:00:00+09:00'", "2026-07-20T00:00:00+09:00")
    )
    assert "observedAt: 2026-07-20T00:00:00+09:00" in text
    single = tmp_path / "row.yaml"
    single.write_text(text, encoding="utf-8")
    several = tmp_path / "rows.yml"
    several.write_text(text + "---\n" + text, encoding="utf-8")
    listed = _write(tmp_path / "list.json", [_candidate(), _candidate()])
    assert main(["validate", str(single), str(several), str(listed)]) == 0
    assert "3 file(s), 5 document(s), 0 finding(s)" in capsys.readouterr().out


def test_list_item_pointer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _candidate()
    del bad["content"]
    path = _write(tmp_path / "list.json", [_candidate(), bad])
    assert main(["validate", "--profile", "service", str(path)]) == 1
    assert (
        capsys.readouterr().out.splitlines()[0]
        == f"{path}:/1: schema:required: 'content' is a required property"
    )


def test_manifest_is_validated_against_the_manifest_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(DEFAULT_MANIFEST_FILE)]) == 0
    text = DEFAULT_MANIFEST_FILE.read_text(encoding="utf-8")
    broken = tmp_path / "manifest.yaml"
    broken.write_text(text.replace('defaultDecision: "deny"', 'defaultDecision: "allow"'), encoding="utf-8")
    capsys.readouterr()
    assert main(["validate", str(broken)]) == 1
    assert f"{broken}:/scope/defaultDecision: manifest:const: 'deny' was expected" in capsys.readouterr().out


def test_not_an_evidence_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "other.json", {"hello": "world"})
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{path}:(root): schema:kind: not an evidence document: expected rowType 'EvidenceRow' or packetType "
        "'EvidencePacket'"
    )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("malformed.json", b'{"rowType": ', "malformed JSON at line 1 column 13: Expecting value"),
        ("nan.json", b'{"rank": NaN}', "malformed JSON: NaN is not valid JSON"),
        ("malformed.yaml", b"a: [1, 2\nb: c\n", "malformed YAML"),
        ("malformed.jsonl", b'{"a": 1}\n{"a": \n', "2: malformed JSON line: Expecting value"),
        ("empty.json", b"", "empty file"),
        ("blank.yaml", b"  \n\n", "empty file"),
        ("null.yaml", b"---\n...\n", "empty file"),
        ("binary.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file (contains NUL bytes)"),
        ("latin1.json", b'{"a": "caf\xe9"}', "binary or non-UTF-8 file (byte 10)"),
    ],
    ids=[
        "malformed-json",
        "nan",
        "malformed-yaml",
        "malformed-jsonl",
        "empty",
        "blank",
        "yaml-null",
        "binary",
        "non-utf8",
    ],
)
def test_unreadable_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert main(["validate", str(path)]) == 2
    captured = capsys.readouterr()
    assert f"akm validate: error: {path}" in captured.err
    assert message in captured.err
    assert "Traceback" not in captured.err


def test_oversize_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES / "packet-pass.json"
    size = path.stat().st_size
    assert main(["validate", "--max-bytes", "1000", str(path)]) == 2
    assert f"{path}: file is {size} bytes, over the limit of 1000 bytes" in capsys.readouterr().err


def test_missing_path_exits_2_but_other_files_are_still_checked(
    tmp_path: Path, invalid_row: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "absent.json"
    assert main(["validate", "--format", "json", str(missing), str(invalid_row)]) == 2
    captured = capsys.readouterr()
    assert f"akm validate: error: {missing}: no such file or directory" in captured.err
    report = json.loads(captured.out)
    assert report["errors"] == [f"{missing}: no such file or directory"]
    assert report["files"][0]["findings"] != []


def test_unreadable_file_in_github_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.json"
    path.write_bytes(b"")
    assert main(["validate", "--format", "github", str(path)]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"::error file={path},title=unreadable::{path}: empty file"
    ]


def test_directory_without_documents_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("not a document", encoding="utf-8")
    assert main(["validate", str(tmp_path)]) == 2
    assert "no .json, .jsonl, .yaml, .yml files in directory" in capsys.readouterr().err


def test_bad_upstream_schema_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--upstream-schema", str(tmp_path / "none.json"), str(EXAMPLES)]) == 2
    assert "cannot read schema" in capsys.readouterr().err


def test_bad_max_bytes_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--max-bytes", "0", str(EXAMPLES)]) == 2
    assert "--max-bytes must be a positive number" in capsys.readouterr().err


def test_no_path_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["validate"])
    assert raised.value.code == 2
    assert "the following arguments are required: PATH" in capsys.readouterr().err
