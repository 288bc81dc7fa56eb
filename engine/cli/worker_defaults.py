"""The defaults a worker process has and the embedded ``Engine`` has not.

``connect-engine standalone|distributed`` (and ``python -m engine ...``) on Kafka run their tasks in
task processes, one per core, unless the worker file sets ``task.processes``: a worker process owns
its machine, as a Connect worker does its JVM's threads. An ``Engine`` (or a ``StandaloneWorker``)
made in a program shares its process with its host application, so it keeps 0 unless asked; so does
a worker without ``bootstrap.servers``, whose in-process topics cannot cross processes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping


def with_worker_defaults(properties: Mapping[str, str]) -> dict[str, str]:
    """``properties`` with ``task.processes`` = the machine's cores when tasks can leave the process
    (``bootstrap.servers`` set) and the file does not say; a copy, the caller's left alone."""
    given = dict(properties)
    if "task.processes" in given or not given.get("bootstrap.servers", "").strip():
        return given
    return {**given, "task.processes": str(os.cpu_count() or 1)}
