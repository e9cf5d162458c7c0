"""The command line must start fast: building the parser (what `akm --help` and every command do
first) may not import the model stack. Heavy imports belong inside the handlers that need them."""

import subprocess
import sys

# akm.answer.generation is the answer module that imports the decoder; the rest of akm.answer is light.
HEAVY_MODULES = (
    "torch",
    "transformers",
    "sentence_transformers",
    "decoding.speculative",
    "akm.answer.generation",
)


def test_building_the_parser_imports_no_model_stack() -> None:
    probe = (
        "import sys, akm.cli as cli; cli.build_parser(); "
        f"print(','.join(m for m in {HEAVY_MODULES!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == ""


def test_help_lists_every_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "akm", "--help"], capture_output=True, text=True, check=True, timeout=120
    )
    for command in ("validate", "ingest", "ask", "reverify", "audit", "serve", "openapi", "bench"):
        assert f"    {command}" in result.stdout, command
