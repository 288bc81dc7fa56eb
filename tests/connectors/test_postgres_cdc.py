"""The PostgreSQL CDC source on a real private cluster (wal_level=logical): the slot and publication
outlive pause, stop, restart and a worker restart; deletion drops them, also after a kill -9
inside ``deleted()``; a re-created connector starts clean; the slot is confirmed only once offsets
commit, so the WAL it holds stops growing then and is gone after delete."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import Engine
from engine.api.context import SourceTaskContext
from engine.api.records import SourceRecord
from engine.connectors.postgres_cdc import PostgresCdcSourceTask
from engine.connectors.postgres_cdc.config import default_slot
from engine.errors import ConfigError
from engine.storage.offsets import MemoryOffsetStore
from engine.testing import eventually
from tests.connectors.cdc_support import FAST, KILLED_IN_DELETED, CdcTable, topic_values
from tests.integration.brokers import Broker
from tests.postgres_server import LogicalPostgres
from tests.session_services import postgres_url

ROOT = Path(__file__).resolve().parents[2]


# the worker's stores: files, or Apache Kafka 4.1 (config and offset topics, the data topics, the sink's group)
STORES = pytest.mark.parametrize("stores", ["files", pytest.param("kafka", marks=pytest.mark.integration)])


def worker_stores(stores: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, str]:
    if stores == "kafka":
        kafka: Broker = request.getfixturevalue("kafka")
        tag = uuid.uuid4().hex[:8]
        return {**FAST, "bootstrap.servers": kafka.bootstrap, "config.storage.topic": f"configs-{tag}",
                "offset.storage.topic": f"offsets-{tag}"}
    return {**FAST, "config.storage.file.filename": str(tmp_path / "configs.log"),
            "status.storage.file.filename": str(tmp_path / "status.log"),
            "offset.storage.file.filename": str(tmp_path / "offsets.log"),
            "topics.storage.file.filename": str(tmp_path / "topics.log")}


@pytest.fixture
def table(logical_pg: LogicalPostgres) -> Iterator[CdcTable]:
    t = CdcTable(logical_pg.url)
    yield t
    t.drop()


def _slot(name: str) -> str:
    return default_slot(name)


async def test_provisions_streams_and_keeps_the_slot_until_delete_drops_it(table: CdcTable) -> None:
    name = f"cdc-{table.name}"
    slot, topic = _slot(name), f"{name}.public.{table.name}"
    async with Engine(FAST) as engine:
        await engine.create_connector(name, table.config())
        await engine.wait_for_state(name, "RUNNING", tasks=1)
        assert table.provisioned(slot) == (True, True)
        table.execute(f"INSERT INTO {table.name} VALUES (1, 'apple'), (2, 'pear')")
        table.execute(f"UPDATE {table.name} SET item = 'plum' WHERE id = 1")
        table.execute(f"DELETE FROM {table.name} WHERE id = 2")
        values = await topic_values(engine, topic, 4)
        assert [(v["op"], v["before"], v["after"]) for v in values] == [
            ("c", None, {"id": 1, "item": "apple"}), ("c", None, {"id": 2, "item": "pear"}),
            ("u", None, {"id": 1, "item": "plum"}), ("d", {"id": 2}, None)]  # default replica identity: the key
        assert values[0]["source"]["txId"] == values[1]["source"]["txId"] != values[2]["source"]["txId"]
        assert all(v["source"]["table"] == table.name and "/" in v["source"]["lsn"] for v in values)

        for operation, state in (("pause_connector", "PAUSED"), ("resume_connector", "RUNNING"),
                                 ("stop_connector", "STOPPED"), ("resume_connector", "RUNNING")):
            await getattr(engine, operation)(name)
            await engine.wait_for_state(name, state)
            assert table.provisioned(slot) == (True, True), operation
            if state != "RUNNING":
                table.execute(f"INSERT INTO {table.name} VALUES (%s, 'while {state}')", 10 + len(state))
        await engine.restart_connector(name, include_tasks=True)
        await engine.wait_for_state(name, "RUNNING", tasks=1)
        assert table.provisioned(slot) == (True, True)
        values = await topic_values(engine, topic, 6)  # what changed while paused and stopped, once each
        assert [v["after"]["item"] for v in values[4:]] == ["while PAUSED", "while STOPPED"]
        await eventually(lambda: engine.herder.offsets.partitions(name), timeout=10, message="offsets committed")

        assert (await engine.delete_connector(name)).succeeded
        assert table.slots(slot) == []  # the slot and its reading copies
        assert not table.publication_exists(slot)
        assert engine.herder.offsets.partitions(name) == []

        table.execute(f"INSERT INTO {table.name} VALUES (100, 'before re-creation')")
        await engine.create_connector(name, table.config())  # re-created: provisioned anew, from now on
        await engine.wait_for_state(name, "RUNNING", tasks=1)
        assert table.provisioned(slot) == (True, True)
        table.execute(f"INSERT INTO {table.name} VALUES (101, 'after re-creation')")
        values = await topic_values(engine, topic, 7)  # nothing from before, nothing twice
        assert values[6]["after"]["item"] == "after re-creation"
        assert (await engine.delete_connector(name)).succeeded
        assert table.provisioned(slot) == (False, False)


@STORES
async def test_a_worker_restart_keeps_the_slot_and_resumes_after_the_committed_lsn(
        table: CdcTable, tmp_path: Path, stores: str,
        request: pytest.FixtureRequest) -> None:
    name = f"cdc-{table.name}"
    slot, topic = _slot(name), f"{name}.public.{table.name}"
    worker = worker_stores(stores, tmp_path, request)
    async with Engine(worker) as engine:
        await engine.create_connector(name, table.config())
        await engine.wait_for_state(name, "RUNNING", tasks=1)
        table.execute(f"INSERT INTO {table.name} VALUES (1, 'a'), (2, 'b')")
        await topic_values(engine, topic, 2)
    assert table.provisioned(slot) == (True, True)  # shutdown keeps it
    table.execute(f"INSERT INTO {table.name} VALUES (3, 'c')")  # while no worker runs
    async with Engine(worker) as engine:
        await engine.wait_for_state(name, "RUNNING", tasks=1)
        values = await topic_values(engine, topic, 3)  # the two from before the restart, then the one during
        assert [v["after"]["id"] for v in values] == [1, 2, 3]
        assert (await engine.delete_connector(name)).succeeded
    assert table.slots(slot) == []


KILLED = textwrap.dedent("""
    import asyncio, json, sys
    from engine import Engine

    async def main(worker, config):
        async with Engine(worker) as engine:
            await engine.create_connector("doomed", config)
            await engine.wait_for_state("doomed", "RUNNING", tasks=1)
            await engine.delete_connector("doomed")  # deleted() exits the process half-way

    asyncio.run(main(json.loads(sys.argv[1]), json.loads(sys.argv[2])))
    sys.exit("deletion returned: the process should have been killed in deleted()")
""")


async def test_a_worker_killed_inside_deleted_leaves_a_cleanup_the_restarted_worker_finishes(
        table: CdcTable, tmp_path: Path) -> None:
    slot = _slot("doomed")
    worker = {**FAST, "config.storage.file.filename": str(tmp_path / "configs.log"),
              "status.storage.file.filename": str(tmp_path / "status.log"),
              "offset.storage.file.filename": str(tmp_path / "offsets.log"),
              "connector.deleted.retry.backoff.ms": "200"}
    config = table.config(**{"connector.class": KILLED_IN_DELETED, "test.exit.once.file": str(tmp_path / "exited")})
    child = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", KILLED, json.dumps(worker), json.dumps(config)],
                                    capture_output=True, text=True, timeout=90, check=False, cwd=ROOT)
    assert child.returncode == 9, child.stderr
    assert table.slots(slot) == []  # dropped before the kill
    assert table.publication_exists(slot)  # not reached
    async with Engine(worker) as engine:  # the pending cleanup runs again, for real this time
        await eventually(lambda: not engine.connector_cleanups() and not table.publication_exists(slot),
                         timeout=30, message="the restarted worker finished the cleanup")
        assert table.slots(slot) == []
        assert "doomed" not in await engine.connectors()


async def test_the_slot_is_confirmed_only_up_to_committed_offsets(table: CdcTable, logical_pg: LogicalPostgres) -> None:
    """Task level: poll hands changes out without moving the slot; commit() after offsets are written moves
    it to exactly what they cover; a restarted task resumes after the committed offset."""
    from engine.connectors.postgres_cdc import provisioning
    from engine.connectors.postgres_cdc.config import CdcConfig

    props = {**table.config(), "name": f"cdc-{table.name}"}
    config = CdcConfig.parse(props)
    conn = provisioning.connect(config.url)
    try:
        provisioning.provision(conn, config, {"connector": config.name, "incarnation": "0"})
        table.execute(f"ALTER TABLE {table.name} REPLICA IDENTITY FULL")  # updates carry the whole old row
        start = table.confirmed(config.slot)
        table.execute(f"INSERT INTO {table.name} VALUES (1, 'a'), (2, 'b'), (3, 'c')")  # one transaction
        table.execute(f"UPDATE {table.name} SET item = 'z' WHERE id = 3")
        offsets = MemoryOffsetStore()

        async def started() -> PostgresCdcSourceTask:
            task = PostgresCdcSourceTask()
            task.initialize(SourceTaskContext(props, offset_reader=offsets.reader(config.name)))
            await task.start(props)
            return task

        task = await started()
        records: list[SourceRecord] = []
        while len(records) < 4:
            records += await task.poll() or []
        assert records[3].value["before"] == {"id": 3, "item": "c"}
        assert records[3].value["after"] == {"id": 3, "item": "z"}
        retained = table.retained(config.slot)
        await task.commit()  # nothing committed yet: the slot stays
        assert table.confirmed(config.slot) == start
        offsets.write(config.name, [(records[1].source_partition, records[1].source_offset)])  # half a transaction
        await task.commit()
        assert table.confirmed(config.slot) == records[1].source_offset["lsn"]  # keeps the transaction
        assert start < table.confirmed(config.slot)
        await task.stop()

        task = await started()  # resumes inside the transaction: the third insert, then the update
        again: list[SourceRecord] = []
        while len(again) < 2:
            again += await task.poll() or []
        assert [r.value["after"]["id"] for r in again] == [3, 3]
        offsets.write(config.name, [(again[1].source_partition, again[1].source_offset)])
        await task.commit()
        assert table.confirmed(config.slot) == again[1].source_offset["end_lsn"]
        assert table.retained(config.slot) < retained
        assert await task.poll() is None  # idle, everything committed: the slot moves to where the copy read
        await task.commit()
        assert table.confirmed(config.slot) >= again[1].source_offset["end_lsn"]
        await task.stop()
    finally:
        provisioning.drop(conn, config, {"connector": config.name, "incarnation": "0"})
        conn.close()
    assert table.slots(config.slot) == []


async def test_retained_wal_stops_growing_once_offsets_commit_and_is_gone_after_delete(table: CdcTable) -> None:
    name = f"cdc-{table.name}"
    slot, topic = _slot(name), f"{name}.public.{table.name}"
    async with Engine(FAST) as engine:
        await engine.create_connector(name, table.config())
        await engine.wait_for_state(name, "RUNNING", tasks=1)
        before = table.confirmed(slot)
        for n in range(20):
            table.execute(f"INSERT INTO {table.name} SELECT g, repeat('x', 200) FROM generate_series(%s::int, %s::int) g",
                          n * 100, n * 100 + 99)
        written = table.wal_lsn() - before
        await topic_values(engine, topic, 2000)
        # offsets commit every 200 ms: the slot catches up with everything written
        await eventually(lambda: table.confirmed(slot) >= before + written, timeout=20, message="slot confirmed")
        samples = []
        for _ in range(5):
            samples.append(table.retained(slot))
            await asyncio.sleep(0.3)
        assert max(samples) < written / 10, (samples, written)  # it no longer holds what was delivered
        assert (await engine.delete_connector(name)).succeeded
        assert not table.query("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", slot)


async def test_validation_names_the_bad_url_the_missing_table_and_the_wal_level(table: CdcTable) -> None:
    async with Engine(FAST) as engine:
        async def errors(**config: str) -> dict[str, list[str]]:
            with pytest.raises(ConfigError) as caught:
                await engine.create_connector("v", table.config(**config))
            return {k: v for k, v in caught.value.errors.items() if v}

        assert "postgres.url" in await errors(**{"postgres.url": "mysql://x@127.0.0.1/db"})
        unreachable = await errors(**{"postgres.url": "postgresql://postgres@127.0.0.1:1/postgres"})
        assert "Cannot connect to PostgreSQL at 127.0.0.1:1/postgres" in unreachable["postgres.url"][0]
        missing = await errors(**{"table.include.list": "public.nope"})
        assert missing["table.include.list"] == [f"Table public.nope does not exist in {table.url.split('@')[1]}"]
        replica = await errors(**{"postgres.url": postgres_url(), "table.include.list": "public.pg_class_x"})
        assert "wal_level is replica" in replica["postgres.url"][0]
        assert "logical decoding needs wal_level=logical" in replica["postgres.url"][0]
        assert "slot.name" in await errors(**{"slot.name": "Bad-Name"})


async def test_a_slot_someone_else_created_is_refused_and_left_alone(table: CdcTable) -> None:
    name = f"cdc-{table.name}"
    slot = _slot(name)
    table.execute("SELECT pg_create_logical_replication_slot(%s, 'pgoutput')", slot)
    try:
        async with Engine(FAST) as engine:
            await engine.create_connector(name, table.config())
            status = await engine.wait_for_state(name, "FAILED")
            assert status is not None
            assert f"Replication slot {slot} already exists and was not created by connector" in \
                status["connector"]["trace"]
            assert (await engine.delete_connector(name)).succeeded
            assert table.slots(slot) == [slot]  # not ours: left alone
            assert not table.publication_exists(slot)
    finally:
        table.execute("SELECT pg_drop_replication_slot(%s)", slot)


async def test_a_slot_dropped_by_hand_fails_the_task_saying_so(table: CdcTable) -> None:
    name = f"cdc-{table.name}"
    slot, topic = _slot(name), f"{name}.public.{table.name}"
    async with Engine(FAST) as engine:
        await engine.create_connector(name, table.config())
        await engine.wait_for_state(name, "RUNNING", tasks=1)
        table.execute("SELECT pg_drop_replication_slot(%s)", slot)
        table.execute(f"INSERT INTO {table.name} VALUES (1, 'a')")  # read from the task's copy, then committed
        await topic_values(engine, topic, 1)
        status = await engine.wait_for_state(name, "RUNNING", tasks=["FAILED"])
        assert status is not None
        assert f"Replication slot {slot} was dropped outside this connector" in status["tasks"][0]["trace"]
        assert (await engine.delete_connector(name)).succeeded
        assert table.provisioned(slot) == (False, False)


async def test_nulls_types_and_truncate_become_records(logical_pg: LogicalPostgres) -> None:
    from engine.connectors.postgres_cdc import provisioning
    from engine.connectors.postgres_cdc.config import CdcConfig

    table = CdcTable(logical_pg.url)
    table.execute(f"CREATE TABLE {table.name}_t (id BIGINT PRIMARY KEY, ok BOOLEAN, ratio FLOAT8, note TEXT, "
                  "amount NUMERIC, at DATE)")
    props = {**table.config(), "table.include.list": f"{table.name}_t", "name": f"types-{table.name}"}
    config = CdcConfig.parse(props)
    owner: dict[str, str | None] = {"connector": config.name, "incarnation": "0"}
    conn = provisioning.connect(config.url)
    try:
        provisioning.provision(conn, config, owner)
        table.execute(f"INSERT INTO {table.name}_t VALUES (9000000000, true, 0.5, NULL, 12.30, '2026-01-02')")
        table.execute(f"TRUNCATE {table.name}_t")
        task = PostgresCdcSourceTask()
        task.initialize(SourceTaskContext(props, offset_reader=MemoryOffsetStore().reader(config.name)))
        await task.start(props)
        records: list[SourceRecord] = []
        while len(records) < 2:
            records += await task.poll() or []
        await task.stop()
        assert records[0].value["after"] == {"id": 9000000000, "ok": True, "ratio": 0.5, "note": None,
                                             "amount": "12.30", "at": "2026-01-02"}
        assert records[0].key == {"id": 9000000000}
        assert records[0].topic == f"{config.topic_prefix}.public.{table.name}_t"
        assert (records[1].value["op"], records[1].value["before"], records[1].value["after"]) == ("t", None, None)
    finally:
        provisioning.drop(conn, config, owner)
        conn.close()
        table.execute(f"DROP TABLE IF EXISTS {table.name}_t")
        table.drop()
