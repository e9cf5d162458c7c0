"""The runtime's data ships inside the package: migrations, schemas and the default config are
found through importlib.resources, the wheel carries them, and an installed wheel works from a
folder that is not the checkout."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from importlib.resources import files
from pathlib import Path

import pytest

import akm
import akm.config
import akm.contract
import akm.store
from akm.config import DEFAULT_MANIFEST_FILE, DEFAULT_SETTINGS_FILE
from akm.contract.schema import MANIFEST_SCHEMA_PATH, PROJECT_SCHEMA_PATH, UPSTREAM_SCHEMA_PATH
from akm.store.migrate import alembic_config, head_revision, migrations_dir

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(akm.__file__).resolve().parent
# Folders of package data, relative to the akm package, whose every file the wheel must carry.
DATA_FOLDERS = ("store/migrations", "contract/schemas", "config")


def test_migrations_are_found_inside_the_package_through_importlib_resources() -> None:
    folder = migrations_dir()
    assert folder == files("akm.store").joinpath("migrations")
    assert folder == Path(akm.store.__file__).resolve().parent / "migrations"
    assert alembic_config().get_main_option("script_location") == str(folder)
    revisions = sorted((folder / "versions").glob("*.py"))
    assert revisions, "no revision files beside env.py"
    last = re.search(
        r'^revision(?:: str)? = "([^"]+)"', revisions[-1].read_text(encoding="utf-8"), re.MULTILINE
    )
    assert last is not None
    assert head_revision() == last.group(1)


def test_schemas_and_defaults_are_package_files() -> None:
    schemas = Path(akm.contract.__file__).resolve().parent / "schemas"
    assert schemas / "evidence-contract.schema.json" == PROJECT_SCHEMA_PATH
    assert schemas / "upstream" / "evidence-row.schema.json" == UPSTREAM_SCHEMA_PATH
    assert schemas / "project-retrieval-manifest.schema.json" == MANIFEST_SCHEMA_PATH
    config = Path(akm.config.__file__).resolve().parent
    assert (config / "settings.yaml", config / "manifest.yaml") == (
        DEFAULT_SETTINGS_FILE,
        DEFAULT_MANIFEST_FILE,
    )
    for path in (PROJECT_SCHEMA_PATH, UPSTREAM_SCHEMA_PATH, MANIFEST_SCHEMA_PATH):
        assert json.loads(path.read_text(encoding="utf-8"))["$schema"].endswith("2020-12/schema")


def test_the_checkout_keeps_no_data_outside_the_package() -> None:
    for name in ("migrations", "schemas", "config"):
        assert not (REPO / name).exists(), f"{name}/ belongs inside the package"
    source = "\n".join(
        path.read_text(encoding="utf-8")
        for folder in (PACKAGE, REPO / "decoding")
        for path in folder.rglob("*.py")
    )
    assert "shared/reference" not in source and '"shared"' not in source


def _package_data(root: Path) -> set[str]:
    """Every data file (not bytecode) under the package-data folders, as wheel member names."""
    found: set[str] = set()
    for folder in DATA_FOLDERS:
        for path in (root / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                found.add("akm/" + path.relative_to(root).as_posix())
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the sources, so the build leaves the checkout untouched."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for name in ("akm", "decoding"):
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            ".",
        ],
        cwd=source,
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("akm_evidence-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_carries_migrations_schemas_and_default_config(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    expected = _package_data(PACKAGE)
    assert {
        "akm/store/migrations/env.py",
        "akm/store/migrations/script.py.mako",
        "akm/contract/schemas/evidence-contract.schema.json",
        "akm/contract/schemas/project-retrieval-manifest.schema.json",
        "akm/contract/schemas/upstream/evidence-row.schema.json",
        "akm/contract/schemas/upstream/LICENSE",
        "akm/config/settings.yaml",
        "akm/config/manifest.yaml",
    } <= expected
    assert any(name.startswith("akm/store/migrations/versions/0001_") for name in expected)
    assert sorted(expected - names) == []
    assert {"akm/py.typed", "decoding/py.typed"} <= names
    # Nothing lands beside the two packages and their metadata.
    assert {name.split("/", 1)[0] for name in names} == {"akm", "decoding", f"{_dist(wheel)}.dist-info"}


def _dist(wheel: Path) -> str:
    name, version = wheel.name.split("-")[:2]
    return f"{name}-{version}"


@pytest.mark.slow
def test_an_installed_wheel_works_from_a_folder_that_is_not_the_checkout(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "docs" / "tides.md").write_text("# Tides\n\nThe tide turns twice a day.\n", encoding="utf-8")
    shutil.copy(REPO / "examples" / "packet-pass.json", work / "packet.json")
    probe = f"""
import json, sys
from pathlib import Path
import akm, akm.store.migrate as migrate
from akm.contract.validation import validate_file
from akm.manifest import load_manifest
from akm.settings import Settings
from akm.store import open_store
site = Path({str(site)!r}).resolve()
assert Path(akm.__file__).resolve().is_relative_to(site), akm.__file__
assert migrate.migrations_dir().is_relative_to(site)
store = open_store("sqlite:///" + str(Path.cwd() / "store.sqlite3"))
store.close()
settings = Settings(data_dir=Path.cwd() / "data")
assert settings.manifest_path.is_relative_to(site)
manifest = load_manifest(settings.manifest_path)
report = validate_file(Path("packet.json"), profile="service", check_upstream=True)
print(json.dumps({{"root": str(manifest.project_root), "docs": str(manifest.root_aliases()["docs"]),
                  "valid": report.valid, "documents": report.documents, "head": migrate.head_revision()}}))
"""
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=work,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        check=False,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["root"] == str(work.resolve())
    assert figures["docs"] == str(work.resolve() / "docs")
    assert (figures["valid"], figures["documents"]) == (True, 1)
    assert figures["head"] == head_revision()
