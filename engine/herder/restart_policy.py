"""The connector keys of the auto-restart policy (``restart.*``) and the backoff they describe.

Kafka Connect never restarts FAILED work by itself; with ``restart.policy=on-failure`` this engine
does, with exponential backoff and jitter (as Kafka's ``ExponentialBackoff``), at most
``restart.max.attempts`` times, the count reset once the unit has been RUNNING for
``restart.reset.after.ms``. The keys are defined here, next to their one reader, as a ConfigDef
group; ``engine.validation`` lists and validates them with the other framework keys.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.api.config_def import (
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigDefError,
    ConfigKey,
    ConfigType,
    Importance,
    LambdaValidator,
    Range,
    Width,
)

RESTART_GROUP = "Restart Policy"

POLICY = "restart.policy"
BACKOFF_INITIAL = "restart.backoff.initial.ms"
BACKOFF_MAX = "restart.backoff.max.ms"
BACKOFF_MULTIPLIER = "restart.backoff.multiplier"
MAX_ATTEMPTS = "restart.max.attempts"
RESET_AFTER = "restart.reset.after.ms"

NEVER = "never"
ON_FAILURE = "on-failure"

# Kafka's CommonClientConfigs.RETRY_BACKOFF_JITTER: each backoff is scaled by a factor in [0.8, 1.2]
JITTER = 0.2


def _at_least_minus_one(name: str, value: Any) -> None:
    if value is None or value < -1:
        raise ConfigDefError.invalid(name, value, "Value must be -1 (unlimited) or at least 0")


def _restart_keys() -> list[ConfigKey]:
    lo, m = Importance.LOW, Importance.MEDIUM
    return [
        ConfigKey(
            POLICY,
            ConfigType.STRING,
            NEVER,
            CaseInsensitiveValidString.in_(NEVER, ON_FAILURE),
            m,
            "Whether the worker restarts this connector and its tasks by itself when they fail: 'never' "
            "(Kafka Connect's behaviour: FAILED stays FAILED until restarted over REST) or 'on-failure' "
            "(restarted after a backoff, unless paused, stopped or deleted).",
            RESTART_GROUP,
            1,
            Width.SHORT,
            "Restart policy",
        ),
        ConfigKey(
            BACKOFF_INITIAL,
            ConfigType.LONG,
            1000,
            Range.at_least(0),
            lo,
            "How long after its first failure a unit is restarted, in milliseconds.",
            RESTART_GROUP,
            2,
            Width.SHORT,
            "Initial restart backoff (ms)",
        ),
        ConfigKey(
            BACKOFF_MAX,
            ConfigType.LONG,
            300000,
            Range.at_least(0),
            lo,
            "The longest backoff between restarts, in milliseconds.",
            RESTART_GROUP,
            3,
            Width.SHORT,
            "Maximum restart backoff (ms)",
        ),
        ConfigKey(
            BACKOFF_MULTIPLIER,
            ConfigType.DOUBLE,
            2.0,
            Range.at_least(1),
            lo,
            "Each further restart waits this many times longer (with 20% jitter either way).",
            RESTART_GROUP,
            4,
            Width.SHORT,
            "Restart backoff multiplier",
        ),
        ConfigKey(
            MAX_ATTEMPTS,
            ConfigType.INT,
            10,
            LambdaValidator(_at_least_minus_one, "[-1,...]"),
            lo,
            "How many automatic restarts a unit gets before it is left FAILED; -1 means unlimited.",
            RESTART_GROUP,
            5,
            Width.SHORT,
            "Maximum restart attempts",
        ),
        ConfigKey(
            RESET_AFTER,
            ConfigType.LONG,
            600000,
            Range.at_least(0),
            lo,
            "A connector or task RUNNING this long (milliseconds) has its restart attempts reset to 0.",
            RESTART_GROUP,
            6,
            Width.SHORT,
            "Reset restart attempts after (ms)",
        ),
    ]


RESTART_KEYS = _restart_keys()
RESTART_DEF = ConfigDef()
for _key in RESTART_KEYS:
    RESTART_DEF.define_key(_key)


def restart_key_errors(props: Mapping[str, str]) -> dict[str, list[str]]:
    """The errors in the ``restart.*`` keys, by key (nothing for a valid config)."""
    values = RESTART_DEF.validate_all(props)
    errors = {name: list(value.errors) for name, value in values.items() if value.errors}
    low, high = values[BACKOFF_INITIAL].value, values[BACKOFF_MAX].value
    if not errors and low is not None and high is not None and high < low:
        errors[BACKOFF_MAX] = [
            ConfigDefError.invalid(
                BACKOFF_MAX, high, f"Value must be at least {BACKOFF_INITIAL} ({low})"
            ).message
        ]
    return errors


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """A connector's parsed ``restart.*`` keys (times in seconds)."""

    on_failure: bool = False
    initial: float = 1.0
    max_backoff: float = 300.0
    multiplier: float = 2.0
    max_attempts: int = 10  # -1: unlimited
    reset_after: float = 600.0

    @classmethod
    def from_config(cls, config: Mapping[str, str]) -> RestartPolicy:
        """Parse a written config; one that slipped past validation (a raw log record) gets ``never``."""
        props = {k: v for k, v in config.items() if k.startswith("restart.")}
        if not props:
            return NEVER_RESTART
        if restart_key_errors(props):
            return NEVER_RESTART
        parsed = RESTART_DEF.parse(props)
        return cls(
            on_failure=str(parsed[POLICY]).strip().lower() == ON_FAILURE,
            initial=parsed[BACKOFF_INITIAL] / 1000,
            max_backoff=parsed[BACKOFF_MAX] / 1000,
            multiplier=float(parsed[BACKOFF_MULTIPLIER]),
            max_attempts=int(parsed[MAX_ATTEMPTS]),
            reset_after=parsed[RESET_AFTER] / 1000,
        )

    def exhausted(self, attempts: int) -> bool:
        return self.max_attempts != -1 and attempts >= self.max_attempts

    def backoff(self, attempts: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds before the restart that follows ``attempts`` earlier ones (Kafka's ExponentialBackoff)."""
        if self.initial <= 0:
            return 0.0
        try:
            term = self.initial * self.multiplier**attempts
        except OverflowError:
            term = self.max_backoff
        factor = 1 - JITTER + 2 * JITTER * rand()
        return min(term * factor, self.max_backoff)


NEVER_RESTART = RestartPolicy()
