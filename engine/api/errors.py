"""Exceptions connector code raises and catches, as in ``org.apache.kafka.connect.errors``.

* ConnectException              any failure of a connector or task
  x RetriableException          the operation may succeed if retried (``retriable = True``)
  x DataException               a record or schema cannot be handled
      x SchemaBuilderException  a SchemaBuilder call is invalid (bad default, field on a non-struct)
  x ConfigException             a configuration value is invalid
  x NotFoundException
  x AlreadyExistsException
  x IllegalWorkerStateException a context method was used outside its valid window
"""

from __future__ import annotations

from typing import ClassVar


class ConnectException(Exception):
    """Base of the connector-facing error tree; what a callback raises to fail its unit."""

    retriable: ClassVar[bool] = False


class RetriableException(ConnectException):
    retriable = True


class DataException(ConnectException):
    pass


class SchemaBuilderException(DataException):
    pass


class ConfigException(ConnectException):
    """``ConfigException(message)`` or ``ConfigException(name, value, message)`` as in Kafka."""

    def __init__(self, name: str, value: object = None, message: str | None = None) -> None:
        if value is None and message is None:
            text = name
        else:
            text = f"Invalid value {value} for configuration {name}" + (f": {message}" if message else "")
        super().__init__(text)
        self.name: str | None = name
        self.value = value


class NotFoundException(ConnectException):
    pass


class AlreadyExistsException(ConnectException):
    pass


class IllegalWorkerStateException(ConnectException):
    pass
