"""Kafka's task-error metrics (``ErrorHandlingMetrics``), as plain counters another module exposes."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(slots=True)
class ErrorMetrics:
    """Counters named after Kafka's ``task-error-metrics`` group.

    * ``total_failures``         total-record-failures: every failed attempt, retries included
    * ``total_errors``           total-record-errors: records that finally failed
    * ``total_records_skipped``  total-records-skipped: records dropped by tolerance
    * ``total_retries``          total-retries
    * ``total_errors_logged``    total-errors-logged
    * ``total_dlq_produced``     deadletterqueue-produce-requests
    * ``total_dlq_failures``     deadletterqueue-produce-failures
    * ``last_error_timestamp``   last-error-timestamp (epoch ms; 0 = never)
    """

    total_failures: int = 0
    total_errors: int = 0
    total_records_skipped: int = 0
    total_retries: int = 0
    total_errors_logged: int = 0
    total_dlq_produced: int = 0
    total_dlq_failures: int = 0
    last_error_timestamp: int = 0

    def record_failure(self) -> None:
        self.total_failures += 1
        self.last_error_timestamp = int(time.time() * 1000)
