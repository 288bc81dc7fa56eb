"""The audit source's offsets and the table they point into never contradict each other.

``deleted()`` drops the audit table, so its offsets go with it (``offsets_removed_on_delete``);
an offset left beyond a re-created table is reported (warning + FAILED task), never skipped past.
"""

from __future__ import annotations

from pathlib import Path

from engine import Engine
from engine.testing import eventually
from tests.connectors.test_audit_incarnations import audit_config, drop_audit
from tests.connectors.test_audit_table import FAST, Database

WORKER = {**FAST, "offset.flush.interval.ms": "100"}


async def _captured(engine: Engine, db: Database, name: str, rows: int) -> None:
    for n in range(rows):
        db.execute(f"INSERT INTO {db.table} (id, item) VALUES ({n}, 'x')")
    await eventually(lambda: engine.herder.offsets.partitions(name), timeout=10, message="offsets committed")


async def test_deleting_the_audit_source_removes_its_offsets_with_its_table(app_database: Database) -> None:
    async with Engine(WORKER) as engine:
        await engine.create_connector("audit", audit_config(app_database))
        await engine.wait_for_state("audit", "RUNNING", tasks=1)
        await _captured(engine, app_database, "audit", 3)
        assert (await engine.delete_connector("audit")).succeeded
        assert engine.herder.offsets.partitions("audit") == []


async def test_an_offset_beyond_a_recreated_table_fails_the_task_with_a_clear_reason(
    app_database: Database, tmp_path: Path
) -> None:
    shared = f"kept_{app_database.table}"
    # offsets kept on purpose, and a fixed table name: the pair that used to skip rows in silence
    config = audit_config(app_database, **{"audit.table": shared, "offsets.reset.on.delete": "false"})
    async with Engine(WORKER) as engine:
        try:
            await engine.create_connector("audit", config)
            await engine.wait_for_state("audit", "RUNNING", tasks=1)
            await _captured(engine, app_database, "audit", 3)
            assert (await engine.delete_connector("audit")).succeeded
            assert engine.herder.offsets.partitions("audit") != []  # kept, as asked

            await engine.create_connector("audit", config)  # provisions the table anew: ids from 1
            status = await engine.wait_for_state("audit", "RUNNING", tasks=["FAILED"])
            assert status is not None
            trace = status["tasks"][0]["trace"]
            assert "The committed offset (id 3) is beyond the last id audit table" in trace
            assert "DELETE /connectors/<name>/offsets" in trace
        finally:
            drop_audit(app_database, shared)
