"""examples/ holds exactly what the example builders produce, and every file is valid."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from akm.contract.schema import UPSTREAM_SCHEMA_PATH as VENDORED_UPSTREAM_SCHEMA_PATH
from akm.contract.schema import upstream_schema
from akm.contract.validation import read_documents, validate_file

from .conftest import UPSTREAM_SCHEMA_PATH as REFERENCE_SCHEMA_PATH
from .example_documents import EXAMPLES_DIR, example_files

EXAMPLE_NAMES = sorted(example_files())


@pytest.mark.parametrize("name", EXAMPLE_NAMES, ids=EXAMPLE_NAMES)
def test_example_file_is_current(name: str) -> None:
    assert (EXAMPLES_DIR / name).read_text(encoding="utf-8") == example_files()[name]


@pytest.mark.parametrize("name", EXAMPLE_NAMES, ids=EXAMPLE_NAMES)
def test_example_file_is_valid_against_both_schemas_and_rules(name: str) -> None:
    report = validate_file(EXAMPLES_DIR / name, check_upstream=True)
    assert (report.error, report.findings) == (None, [])
    assert report.documents == (3 if name.endswith(".jsonl") else 1)


@pytest.mark.parametrize("name", EXAMPLE_NAMES, ids=EXAMPLE_NAMES)
def test_example_file_is_valid_against_the_upstream_schema_file(name: str) -> None:
    # The vendored copy; tests/akm/contract/test_schema.py checks it equals the shared reference.
    reference = upstream_schema(VENDORED_UPSTREAM_SCHEMA_PATH)
    for document in read_documents(EXAMPLES_DIR / name):
        assert reference.validate(document.content) == []


def test_examples_directory_holds_only_the_built_examples() -> None:
    assert sorted(path.name for path in Path(EXAMPLES_DIR).iterdir()) == EXAMPLE_NAMES


CONTRACT_DOC = REFERENCE_SCHEMA_PATH.parent / "EVIDENCE-SCHEMA.md"


@pytest.mark.skipif(not CONTRACT_DOC.exists(), reason="../shared/reference/akm is not present")
def test_the_verbatim_section_7_1_row_fails_only_on_its_placeholders() -> None:
    """Why examples/candidate-row.json differs from §7.1: the placeholders are not checksums."""
    text = CONTRACT_DOC.read_text(encoding="utf-8")
    block = text.split("### 7.1 Candidate row", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    document = yaml.safe_load(block)
    violations = upstream_schema().validate(document)
    assert sorted((v.rule_id, v.pointer) for v in violations) == [
        ("upstream:pattern", "/content/excerptChecksum"),
        ("upstream:pattern", "/source/version/checksum"),
    ]
