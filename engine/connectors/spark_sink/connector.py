"""The connector: hands each task its id (it names the task's staging folder) and cleans up on delete."""

from __future__ import annotations

import shutil
from pathlib import Path

import structlog

from engine.api import ConfigDef, SinkConnector, Task
from engine.connectors.spark_sink import commit_log
from engine.connectors.spark_sink.config import CONFIG_DEF, TASK_ID, SparkSinkConfig
from engine.connectors.spark_sink.task import VERSION, SparkParquetSinkTask

log = structlog.get_logger(component="spark_sink")


class SparkParquetSinkConnector(SinkConnector):
    def start(self, props: dict[str, str]) -> None:
        SparkSinkConfig.parse(props)
        self._props = dict(props)

    def stop(self) -> None:
        return None  # data, manifests and staging stay: only deletion removes them

    def task_class(self) -> type[Task]:
        return SparkParquetSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self._props, TASK_ID: str(i)} for i in range(max_tasks)]

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def version(self) -> str:
        return VERSION

    def deleted(self) -> None:
        """Remove staging, and the output too with ``delete.output.on.delete=true``; safe to repeat."""
        config = SparkSinkConfig.parse(self.context.configs())
        root = Path(config.path)
        shutil.rmtree(root / commit_log.STAGING, ignore_errors=True)
        if config.delete_output:
            commit_log.delete_output(root)
        log.info("spark_sink.deleted", connector=config.connector, path=str(root), output_removed=config.delete_output)
