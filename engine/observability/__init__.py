"""What an operator sees of a running engine: structlog set-up, runtime log levels
(``/admin/loggers``), Prometheus metrics and what a slow request is waiting on."""
