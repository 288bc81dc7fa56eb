"""One line for a command that cannot start: the cause and what to do, never a traceback.

Every ``connect-engine`` command goes through ``one_line``: a busy port, a file it cannot read, a
missing optional extra (with the ``pip install`` that brings it), a configuration the engine
refuses, a Kafka cluster it cannot reach. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import errno

from engine.errors import ConfigError, EngineError, InternalTopicError, short_message
from engine.plugins.extras import install_hint, missing_extra

KAFKA = "cannot start against the Kafka cluster: "


def one_line(exc: BaseException, *, worker: bool = False) -> str | None:
    """The line to print for ``exc`` (None: not a start-up error we can explain). ``worker``: a standalone
    or distributed worker, whose other EngineErrors at start come from the config log, stores and topics."""
    if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:  # a TaskGroup's single failure
        return one_line(exc.exceptions[0], worker=worker)
    from aiokafka.errors import KafkaConnectionError, SaslAuthenticationFailed

    if isinstance(exc, KafkaConnectionError | SaslAuthenticationFailed | InternalTopicError):
        return KAFKA + str(exc)
    if isinstance(exc, EngineError):  # ConfigError, MissingExtra ... each message names its cause
        return KAFKA + str(exc) if worker and not isinstance(exc, ConfigError) else short_message(exc)
    needs = missing_extra(exc)
    if needs is not None:
        return install_hint(*needs)
    if isinstance(exc, OSError):
        if exc.errno == errno.EADDRINUSE:
            return f"{_without_errno(exc)} (another worker on that port? listen elsewhere with 'listeners')"
        if exc.filename is not None:
            return f"cannot read {exc.filename}: {exc.strerror or exc}"
    return None


def _without_errno(exc: OSError) -> str:
    """``[Errno 98] error while attempting to bind ...`` reads better without its ``[Errno 98]``."""
    text = str(exc)
    return text.split("] ", 1)[1] if text.startswith("[Errno") and "] " in text else text
