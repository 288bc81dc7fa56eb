"""Config providers in a real engine: secrets reach start() but never the config log or the API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from engine import ConfigError, Engine
from engine.testing import eventually
from tests.herder.conftest import FAST
from tests.herder.provider_probes import STARTS

PROBE = "tests.herder.provider_probes.PropsSourceConnector"
SECRET = "hunter2-first"


@pytest.fixture(autouse=True)
def _clear_starts() -> None:
    STARTS.clear()


@pytest.fixture
def secrets(tmp_path: Path) -> Path:
    path = tmp_path / "secrets.properties"
    path.write_text(f"password={SECRET}\n", encoding="utf-8")
    return path


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[Engine]:
    worker = {
        **FAST,
        "config.providers": "file",
        "config.storage.file.filename": str(tmp_path / "configs.log"),
    }
    async with Engine(worker) as running:
        yield running


def config(secrets: Path, key: str = "password") -> dict[str, str]:
    # test.* keys are copied into every task config by the recording connector
    return {"connector.class": PROBE, "tasks.max": "1", "test.db.password": f"${{file:{secrets}:{key}}}"}


async def test_start_gets_the_secret_and_everything_stored_keeps_the_reference(
    engine: Engine, secrets: Path, tmp_path: Path
) -> None:
    ref = f"${{file:{secrets}:password}}"
    with capture_logs() as logs:
        await engine.create_connector("c", config(secrets))
        await engine.wait_for_state("c", "RUNNING", tasks=1)
    assert STARTS["connector"][-1]["test.db.password"] == SECRET
    assert STARTS["task-0"][-1]["test.db.password"] == SECRET
    assert (await engine.connector_config("c"))["test.db.password"] == ref
    assert (await engine.connector_info("c"))["config"]["test.db.password"] == ref
    assert (await engine.task_configs("c"))[0]["config"]["test.db.password"] == ref  # reverseTransform
    await engine.settled()
    raw_log = (tmp_path / "configs.log").read_bytes()
    assert SECRET.encode() not in raw_log
    assert b"${file:" in raw_log
    logged = [e for e in logs if e["event"] == "connector.config"]
    assert logged
    assert logged[0]["config"]["test.db.password"] == "[hidden]"
    assert SECRET not in repr(logs)


async def test_a_restart_re_reads_a_changed_file(engine: Engine, secrets: Path) -> None:
    await engine.create_connector("c", config(secrets))
    await engine.wait_for_state("c", "RUNNING", tasks=1)
    secrets.write_text("password=rotated\n", encoding="utf-8")
    await engine.restart_connector("c")
    await eventually(
        lambda: STARTS["connector"][-1]["test.db.password"] == "rotated", message="connector re-read"
    )
    await engine.restart_task("c", 0)
    await eventually(lambda: STARTS["task-0"][-1]["test.db.password"] == "rotated", message="task re-read")
    await engine.settled()
    assert len(await engine.task_configs("c")) == 1
    assert "rotated" not in str(await engine.task_configs("c"))


async def test_an_unresolvable_reference_fails_the_connector_naming_the_key(
    engine: Engine, secrets: Path
) -> None:
    await engine.create_connector("c", config(secrets, key="absent"))
    status = await engine.wait_for_state("c", "FAILED")
    assert status is not None
    trace = status["connector"]["trace"]
    assert "'test.db.password'" in trace
    assert "'absent'" in trace
    assert SECRET not in trace
    assert "connector" not in STARTS


async def test_a_refused_config_names_the_reference_never_the_resolved_secret(
    engine: Engine, secrets: Path
) -> None:
    """Issue 37: ``tasks.max=${file:...:password}`` was answered 400 with the password in its message
    (Connect 4.4 stopped echoing values resolved by config providers)."""
    ref = f"${{file:{secrets}:password}}"
    with pytest.raises(ConfigError) as refused:
        await engine.create_connector("c", {**config(secrets), "tasks.max": ref})
    assert SECRET not in str(refused.value)
    assert f"Invalid value {ref} for configuration tasks.max" in str(refused.value)
    assert all(SECRET not in m for messages in refused.value.errors.values() for m in messages)
    assert refused.value.errors  # the errors are kept, only the secret is hidden
