"""The bundled-corpus fixtures of tests/akm/answer, shared by file path (tests are not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location(
    "akm_answer_test_fixtures", Path(__file__).resolve().parents[1] / "answer" / "conftest.py"
)
assert _SPEC is not None and _SPEC.loader is not None
_FIXTURES = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = _FIXTURES
_SPEC.loader.exec_module(_FIXTURES)

corpus = _FIXTURES.corpus
