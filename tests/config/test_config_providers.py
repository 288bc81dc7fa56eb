"""Config providers and the transformer: each built-in, errors that name keys, never values."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

import pytest

from engine.api.config_def import ConfigDef, ConfigType, Importance
from engine.config.masking import mask_config, password_keys
from engine.config.providers import (
    ConfigTransformer,
    DirectoryConfigProvider,
    EnvVarConfigProvider,
    FileConfigProvider,
    reverse_transform,
)
from engine.config.worker import WorkerConfig
from engine.errors import ConfigError

SECRET = "s3cr3t-value"


@pytest.fixture
def props_file(tmp_path: Path) -> Path:
    path = tmp_path / "db.properties"
    path.write_text(f"# creds\npassword={SECRET}\nuser: admin\n", encoding="utf-8")
    return path


def test_file_provider_reads_a_properties_key(props_file: Path) -> None:
    t = ConfigTransformer.from_worker({"config.providers": "file"})
    resolved = t.resolve(
        {
            "db.password": f"${{file:{props_file}:password}}",
            "url": f"jdbc://${{file:{props_file}:user}}@host",
            "plain": "x",
        }
    )
    assert resolved == {"db.password": SECRET, "url": "jdbc://admin@host", "plain": "x"}


def test_builtins_by_alias_java_name_and_dotted_path(props_file: Path) -> None:
    t = ConfigTransformer.from_worker(
        {
            "config.providers": "a,b,c",
            "config.providers.a.class": "FileConfigProvider",
            "config.providers.b.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
            "config.providers.c.class": "engine.config.providers.FileConfigProvider",
        }
    )
    assert all(isinstance(p, FileConfigProvider) for p in t.providers.values())
    assert t.resolve({"k": f"${{c:{props_file}:user}}"}) == {"k": "admin"}


def test_env_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CE_TEST_TOKEN", SECRET)
    t = ConfigTransformer.from_worker({"config.providers": "env"})
    assert t.resolve({"token": "${env:CE_TEST_TOKEN}"}) == {"token": SECRET}


def test_env_provider_allowlist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CE_TEST_TOKEN", SECRET)
    t = ConfigTransformer.from_worker(
        {"config.providers": "env", "config.providers.env.param.allowlist.pattern": "ALLOWED_.*"}
    )
    assert isinstance(t.providers["env"], EnvVarConfigProvider)
    with pytest.raises(ConfigError, match="'token'"):
        t.resolve({"token": "${env:CE_TEST_TOKEN}"})


def test_env_provider_rejects_a_path() -> None:
    t = ConfigTransformer.from_worker({"config.providers": "env"})
    with pytest.raises(ConfigError, match="Path is not supported"):
        t.resolve({"k": "${env:/some/path:HOME}"})


def test_dir_provider_reads_file_content(tmp_path: Path) -> None:
    (tmp_path / "api_key").write_text(SECRET, encoding="utf-8")
    t = ConfigTransformer.from_worker({"config.providers": "dir"})
    assert isinstance(t.providers["dir"], DirectoryConfigProvider)
    assert t.resolve({"key": f"${{dir:{tmp_path}:api_key}}"}) == {"key": SECRET}


def test_allowed_paths(tmp_path: Path, props_file: Path) -> None:
    t = ConfigTransformer.from_worker(
        {"config.providers": "file", "config.providers.file.param.allowed.paths": str(tmp_path / "elsewhere")}
    )
    with pytest.raises(ConfigError, match="not allowed"):
        t.resolve({"k": f"${{file:{props_file}:password}}"})


def test_unknown_provider_reference_is_left_as_is() -> None:
    t = ConfigTransformer.from_worker({"config.providers": "env"})
    config = {"k": "${vault:secret/db:password}", "mixed": "${nope:x}-${env:CE_NEVER_SET_X}"}
    assert t.resolve({"k": config["k"]}) == {"k": config["k"]}
    assert ConfigTransformer().resolve(config) == config


def test_missing_key_names_the_config_key_not_the_secret(props_file: Path) -> None:
    t = ConfigTransformer.from_worker({"config.providers": "file"})
    with pytest.raises(ConfigError) as caught:
        t.resolve(
            {"db.password": f"${{file:{props_file}:password}}", "db.user": f"${{file:{props_file}:nope}}"}
        )
    message = str(caught.value)
    assert "'db.user'" in message
    assert "'nope'" in message
    assert SECRET not in message
    assert caught.value.errors == {"db.user": ["unresolved reference"]}


def test_missing_file_names_the_config_key(tmp_path: Path) -> None:
    t = ConfigTransformer.from_worker({"config.providers": "file"})
    with pytest.raises(ConfigError, match=r"'db.password'.*Could not read properties file"):
        t.resolve({"db.password": f"${{file:{tmp_path / 'absent.properties'}:password}}"})


def test_missing_env_var() -> None:
    t = ConfigTransformer.from_worker({"config.providers": "env"})
    with pytest.raises(ConfigError, match=r"'tok'.*CE_NEVER_SET_X"):
        t.resolve({"tok": "${env:CE_NEVER_SET_X}"})


class UpperProvider:
    """A user provider that does not subclass ConfigProvider: duck typing is enough."""

    def configure(self, params: Mapping[str, str]) -> None:
        self.suffix = params.get("suffix", "")

    def get(self, path: str, keys: Collection[str] | None = None) -> dict[str, str]:
        return {k: (path + k).upper() + self.suffix for k in keys or ()}


def test_user_provider_class_with_params() -> None:
    t = ConfigTransformer.from_worker(
        {
            "config.providers": "up",
            "config.providers.up.class": f"{__name__}.UpperProvider",
            "config.providers.up.param.suffix": "!",
        }
    )
    assert t.resolve({"k": "${up:a/:b}", "j": "${up:c}"}) == {"k": "A/B!", "j": "C!"}


def test_bad_provider_class_fails_the_worker_config() -> None:
    with pytest.raises(ConfigError, match="Invalid config provider class"):
        WorkerConfig.parse({"config.providers": "x", "config.providers.x.class": "no.such.Provider"})
    with pytest.raises(ConfigError, match=r"needs config\.providers\.x\.class"):
        WorkerConfig.parse({"config.providers": "x"})


def test_reverse_transform_restores_referenced_keys_only() -> None:
    raw = {"db.password": "${file:/p:password}", "topic": "t", "unknown": "${vault:x}"}
    tasks = [{"db.password": SECRET, "topic": "t", "task.class": "T"}, {"other": SECRET}]
    assert reverse_transform(raw, tasks) == [
        {"db.password": "${file:/p:password}", "topic": "t", "task.class": "T"},
        {"other": SECRET},
    ]


def test_mask_config_hides_password_typed_and_secret_named_keys() -> None:
    config_def = ConfigDef().define("conn.pw", ConfigType.PASSWORD, importance=Importance.HIGH)
    masked = mask_config(
        {"conn.pw": SECRET, "api.token": SECRET, "ssl.key.SECRET": SECRET, "user": "u"},
        password_keys(config_def),
    )
    assert masked == {
        "conn.pw": "[hidden]",
        "api.token": "[hidden]",
        "ssl.key.SECRET": "[hidden]",
        "user": "u",
    }
