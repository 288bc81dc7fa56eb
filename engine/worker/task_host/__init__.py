"""Task processes (``task.processes``): a worker runs its tasks' data planes in child "task host"
processes it supervises, so a task that segfaults, calls ``os._exit`` or ignores ``stop()`` fails
alone and the worker's process keeps one core for the lifecycle.

The boundary: the worker keeps every lifecycle (state machines, config log, herder, REST,
statuses); a host runs the same ``TaskRunner`` and loops a worker runs in-process, over its own
Kafka clients. ``protocol`` is what crosses the pipe, ``pool`` the worker's side of its hosts,
``process_runner`` the worker's stand-in for one task, ``host`` the child's side.
"""
