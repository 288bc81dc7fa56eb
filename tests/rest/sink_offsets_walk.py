"""KIP-875 for a sink, black box: a FileStream source -> topic -> FileStream sink on a worker process.

GET must show what the sink committed; PATCH (stopped) must rewind it so records are delivered
again; DELETE must reset it so everything is delivered again from the start. Shared by the
in-process and the Kafka variants; on Kafka, ``group_offsets`` reads the sink's consumer group
(``connect-writer-<suffix>``) from the broker itself, which must agree with each answer.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from engine.testing import eventually
from tests.integration.brokers import free_port
from tests.rest.worker_process import Worker, start_worker

LINES = [f"line-{n}" for n in range(5)]


async def call(worker: Worker, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, worker.url + path, json=body) as response,
    ):
        text = await response.text()
        return response.status, (await response.json()) if text else None


def delivered(out: Path) -> list[str]:
    return out.read_text().splitlines() if out.exists() else []


async def start(tmp_path: Path, extra: str = "") -> Worker:
    properties = tmp_path / "worker.properties"
    properties.write_text(
        f"listeners=http://127.0.0.1:{free_port()}\n"
        f"topics.storage.file.filename={tmp_path / 'topics.log'}\n"
        "offset.flush.interval.ms=200\ntask.shutdown.graceful.timeout.ms=2000\n" + extra
    )
    return await start_worker(properties)


GroupOffsets = Callable[[str], Awaitable[dict[tuple[str, int], int]]]


async def walk_sink_offsets(
    tmp_path: Path, extra: str = "", group_offsets: GroupOffsets | None = None
) -> None:
    source_file, out = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("".join(line + "\n" for line in LINES))
    suffix = uuid.uuid4().hex[:8]
    # names (and so the sink's group) of their own: tests share a broker, and a group another test's
    # worker left a member in (killed, or not yet expired) would not be empty when it is altered
    topic, reader, writer = f"lines-{suffix}", f"reader-{suffix}", f"writer-{suffix}"
    # and a config topic of its own: on a broker, a standalone worker's config log is a topic
    # (connect-configs by default), and another worker on it would run these connectors too
    worker = await start(tmp_path, extra + f"config.storage.topic=walk-configs-{suffix}\n")
    try:
        code, _ = await call(
            worker,
            "POST",
            "/connectors",
            {
                "name": reader,
                "config": {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic},
            },
        )
        assert code == 201
        code, _ = await call(
            worker,
            "POST",
            "/connectors",
            {
                "name": writer,
                "config": {"connector.class": "FileStreamSink", "file": str(out), "topics": topic},
            },
        )
        assert code == 201
        await eventually(lambda: delivered(out) == LINES, timeout=60, message="all lines delivered")
        partition = {"kafka_topic": topic, "kafka_partition": 0}

        async def committed() -> list[Any] | None:
            _, body = await call(worker, "GET", f"/connectors/{writer}/offsets")
            return (
                body["offsets"]
                if body["offsets"] and body["offsets"][0]["offset"]["kafka_offset"] == 5
                else None
            )

        assert await eventually(committed, timeout=30, message="the sink's commit listed") == [
            {"partition": partition, "offset": {"kafka_offset": 5}}
        ]
        if group_offsets is not None:
            assert await group_offsets(f"connect-{writer}") == {(topic, 0): 5}

        code, _ = await call(worker, "PUT", f"/connectors/{writer}/stop")
        assert code == 204
        code, body = await call(
            worker,
            "PATCH",
            f"/connectors/{writer}/offsets",
            {"offsets": [{"partition": partition, "offset": {"kafka_offset": 2}}]},
        )
        # the FileStream sink's alter_offsets says yes, as Java's does: the short message
        assert (code, body["message"]) == (
            200,
            "The offsets for this connector have been altered successfully",
        )
        _, body = await call(worker, "GET", f"/connectors/{writer}/offsets")
        assert body["offsets"] == [{"partition": partition, "offset": {"kafka_offset": 2}}]
        if group_offsets is not None:  # the PATCH wrote the group's offset on the broker
            assert await group_offsets(f"connect-{writer}") == {(topic, 0): 2}
        code, _ = await call(worker, "PUT", f"/connectors/{writer}/resume")
        assert code == 202
        await eventually(
            lambda: delivered(out) == LINES + LINES[2:], timeout=30, message="a rewind re-delivers"
        )

        code, _ = await call(worker, "PUT", f"/connectors/{writer}/stop")
        await asyncio.sleep(0.5)
        code, body = await call(worker, "DELETE", f"/connectors/{writer}/offsets")
        assert code == 200, body
        assert "reset successfully" in body["message"]
        _, body = await call(worker, "GET", f"/connectors/{writer}/offsets")
        assert body["offsets"] == []
        if group_offsets is not None:  # the DELETE deleted the group on the broker, as Connect does
            assert await group_offsets(f"connect-{writer}") == {}
        await call(worker, "PUT", f"/connectors/{writer}/resume")
        await eventually(
            lambda: delivered(out) == LINES + LINES[2:] + LINES,
            timeout=30,
            message="a reset re-delivers from the start (auto.offset.reset=earliest)",
        )
    except BaseException:
        # pytest shows captured stderr with the failure: the worker's own account of it
        sys.stderr.write("\n".join(worker.log) + "\n")
        raise
    finally:
        if worker.process.returncode is None:
            worker.process.kill()
            await worker.process.wait()
