"""The connector: hands each task its id (it names the task's batch directories) and cleans up on delete."""

from __future__ import annotations

from typing import Any

import structlog

from engine.api import ConfigDef, SinkConnector, Task
from engine.connectors.spark_sink import commit_log
from engine.connectors.spark_sink.config import CONFIG_DEF, TASK_ID, SparkSinkConfig
from engine.connectors.spark_sink.spark_runner import run_spark
from engine.connectors.spark_sink.store import store_for
from engine.connectors.spark_sink.task import VERSION, SparkParquetSinkTask

log = structlog.get_logger(component="spark_sink")


class SparkParquetSinkConnector(SinkConnector):
    def start(self, props: dict[str, str]) -> None:
        SparkSinkConfig.parse(props)
        self._props = dict(props)

    def stop(self) -> None:
        return None  # data and manifests stay: only deletion removes them

    def task_class(self) -> type[Task]:
        return SparkParquetSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self._props, TASK_ID: str(i)} for i in range(max_tasks)]

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def version(self) -> str:
        return VERSION

    async def deleted(self) -> None:
        """Remove the batches no manifest names (a crash's leftovers), and with ``delete.output.on.delete=true``
        the manifests and all data; through Spark, as a job of the worker's session; safe to repeat."""
        config = SparkSinkConfig.parse(self.context.configs())

        def clean(spark: Any) -> int:
            store = store_for(spark, config.path)
            if config.delete_output:
                commit_log.delete_output(store)
                return 0
            return commit_log.remove_unlisted(store, config.connector)

        removed = await run_spark(self.context, clean)
        log.info(
            "spark_sink.deleted",
            connector=config.connector,
            path=config.path,
            output_removed=config.delete_output,
            unlisted_batches_removed=removed,
        )
