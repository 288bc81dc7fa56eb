"""``python -m engine.worker.task_host``: one task host, started by a worker's ``TaskHosts``."""

from engine.worker.task_host.host import main

if __name__ == "__main__":
    main()
