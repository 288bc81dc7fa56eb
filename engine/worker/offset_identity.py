"""``offsets.identity.mismatch``: what a sink does with a stored position it cannot apply.

A stored position (the group's committed offset, or one a sink keeps itself) counts in one log: one
cluster's topic, named by its ``TopicIdentity``. One stored with another identity (another cluster,
an older topic of the same name) or one the broker answers out of range is never applied silently:
the task logs ``task.offsets_reset`` with both identities, then either reads from the connector's
``auto.offset.reset`` (``reset``, the default) or fails (``fail``), leaving the stored position as it
was for an operator to look at (KIP-875's offsets endpoints set or reset it).
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.api.config_def import ConfigKey, ConfigType, Importance, ValidString, Width

OFFSETS_IDENTITY_MISMATCH = "offsets.identity.mismatch"
RESET, FAIL = "reset", "fail"
OFFSETS_GROUP = "Offsets"

OFFSET_IDENTITY_KEYS = [
    ConfigKey(
        OFFSETS_IDENTITY_MISMATCH,
        ConfigType.STRING,
        RESET,
        ValidString([RESET, FAIL]),
        Importance.LOW,
        "What a sink task does with a stored position that is not of the log it reads now: one stored "
        "for another Kafka cluster or for an older topic of the same name (its cluster id or topic id "
        "differ), or one the broker answers out of range. 'reset' logs a warning naming both and reads "
        "from consumer.override.auto.offset.reset (default earliest); 'fail' fails the task and leaves "
        "the stored position untouched.",
        OFFSETS_GROUP,
        1,
        Width.SHORT,
        "Stored offset of another log",
    )
]


def mismatch_policy(config: Mapping[str, str]) -> str:
    value = str(config.get(OFFSETS_IDENTITY_MISMATCH, RESET) or RESET).strip().lower()
    return FAIL if value == FAIL else RESET
