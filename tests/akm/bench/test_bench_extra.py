"""The optional ``bench`` extra (matplotlib, pgserver): the commands that need it say so, and
check before a long run; the check itself never imports the package."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from akm.cli import main
from akm.cli.bench_retrieval import _temporary_store
from decoding.bench.errors import (
    BENCH_EXTRA_HINT,
    BenchmarkExtraMissingError,
    BenchmarkInputError,
    import_bench_extra,
    require_bench_extra,
)


def without(monkeypatch: pytest.MonkeyPatch, *packages: str) -> None:
    """Make ``packages`` unimportable, as if the extra were not installed."""
    for name in list(sys.modules):
        if name.split(".")[0] in packages:
            monkeypatch.delitem(sys.modules, name)
    for package in packages:
        monkeypatch.setitem(sys.modules, package, None)


def test_a_missing_package_is_an_input_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    without(monkeypatch, "matplotlib")
    with pytest.raises(BenchmarkExtraMissingError) as raised:
        require_bench_extra("matplotlib", "the plot")
    assert isinstance(raised.value, BenchmarkInputError)
    assert str(raised.value) == f"the plot needs matplotlib; {BENCH_EXTRA_HINT}"
    with pytest.raises(BenchmarkExtraMissingError, match="pip install 'akm-evidence\\[bench\\]'"):
        import_bench_extra("matplotlib.pyplot", "the plot")


def test_an_installed_package_is_imported() -> None:
    require_bench_extra("json", "a check")
    assert import_bench_extra("json", "a check") is sys.modules["json"]


def test_a_failure_inside_an_installed_package_is_not_reported_as_a_missing_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "brokenextra").mkdir()
    (tmp_path / "brokenextra" / "__init__.py").write_text(
        "import no_such_module_anywhere\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="no_such_module_anywhere"):
        import_bench_extra("brokenextra", "a check")


def test_bench_verify_with_json_refuses_before_running_without_matplotlib(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    without(monkeypatch, "matplotlib")
    out = tmp_path / "verify.json"
    # The claims file does not exist: the extra is checked first, so its message comes out.
    code = main(
        [
            "--data-dir",
            str(tmp_path),
            "bench",
            "verify",
            "--claims",
            str(tmp_path / "c.jsonl"),
            "--json",
            str(out),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "akm bench verify: the threshold curve written beside --json needs matplotlib" in err
    assert BENCH_EXTRA_HINT in err
    assert not out.exists()


def test_bench_decode_with_plot_refuses_before_loading_a_model_without_matplotlib(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    without(monkeypatch, "matplotlib")
    prompts = tmp_path / "question.jsonl"
    code = main(
        [
            "--data-dir",
            str(tmp_path),
            "bench",
            "decode",
            "--prompts",
            str(prompts),
            "--format",
            "spec-bench",
            "--json",
            str(tmp_path / "decode.json"),
            "--plot",
            str(tmp_path / "decode.png"),
        ]
    )
    assert code == 2
    assert f"akm bench decode: --plot needs matplotlib; {BENCH_EXTRA_HINT}" in capsys.readouterr().err


def test_the_postgresql_backend_without_a_url_needs_pgserver(monkeypatch: pytest.MonkeyPatch) -> None:
    without(monkeypatch, "pgserver")
    args = argparse.Namespace(backend="postgresql", bench_database_url=None)
    with (
        pytest.raises(
            BenchmarkExtraMissingError, match="--backend postgresql without --database-url needs pgserver"
        ),
        _temporary_store(args),
    ):
        pass


def test_the_command_line_and_the_service_never_load_the_extra() -> None:
    """In a fresh interpreter (the dev install has both packages), loading every sub-command and
    the API app imports neither matplotlib nor pgserver, nor the decoding benchmarks."""
    probe = (
        "import sys, akm.cli, akm.api.app, akm.service.backend\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in ('matplotlib', 'pgserver')"
        " or name.startswith('decoding.bench.decode')))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
