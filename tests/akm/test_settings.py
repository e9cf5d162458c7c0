from pathlib import Path

import pytest
from pydantic import ValidationError

from akm.config import DEFAULT_MANIFEST_FILE, DEFAULT_SETTINGS_FILE
from akm.settings import Settings, load_settings

REPO_ROOT_DIR = Path(__file__).resolve().parents[2]


def test_defaults_come_from_config_file(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AKM_DATA_DIR", "AKM_DATABASE_URL", "AKM_MANIFEST_PATH", "AKM_TARGET_MODEL"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    assert settings.target_model == "smollm2"
    assert settings.manifest_path == DEFAULT_MANIFEST_FILE
    assert settings.data_dir == Path("~/.local/share/akm").expanduser()


def test_environment_overrides_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AKM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("AKM_MAX_NEW_TOKENS", "32")
    settings = Settings()
    assert settings.data_dir == tmp_path
    assert settings.max_new_tokens == 32
    assert settings.resolved_database_url == f"sqlite:///{tmp_path / 'akm.sqlite3'}"


def test_explicit_overrides_win_over_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AKM_DATABASE_URL", "postgresql+psycopg://env@127.0.0.1:1/db")
    settings = load_settings(database_url="sqlite:///flag.db", data_dir=None)
    assert settings.resolved_database_url == "sqlite:///flag.db"


@pytest.mark.parametrize(
    ("variable", "value"),
    [("AKM_DTYPE", "int3"), ("AKM_MAX_NEW_TOKENS", "-1"), ("AKM_NOT_A_SETTING_AT_ALL", "x")],
    ids=["unknown-dtype", "negative-length", "unknown-key-ignored"],
)
def test_bad_environment_values(monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
    monkeypatch.setenv(variable, value)
    if variable == "AKM_NOT_A_SETTING_AT_ALL":
        # Unrelated AKM_* variables are not settings fields and must not break start-up.
        assert Settings().dtype == "float32"
    else:
        with pytest.raises(ValidationError):
            Settings()


def test_every_setting_is_in_the_defaults_file_and_the_configuration_page() -> None:
    import yaml

    defaults = yaml.safe_load(DEFAULT_SETTINGS_FILE.read_text(encoding="utf-8"))
    page = (REPO_ROOT_DIR / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name in Settings.model_fields:
        assert name in defaults, f"{name} is missing from config/settings.yaml"
        assert f"| `{name}` | `AKM_{name.upper()}` |" in page, f"{name} is missing from docs/configuration.md"


def test_prepacking_is_off_by_default_and_can_be_switched_on(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().prepack_weights is False
    monkeypatch.setenv("AKM_PREPACK_WEIGHTS", "true")
    assert Settings().prepack_weights is True
