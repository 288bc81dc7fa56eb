"""``JsonConverterConfig``: the JsonConverter's keys, defaults and documentation (its ``configDef()``)."""

from __future__ import annotations

from typing import Final

from engine.api.config_def import CaseInsensitiveValidString, ConfigDef, ConfigType, Importance
from engine.converters.base import converter_config_def

__all__ = [
    "DECIMAL_FORMAT_CONFIG",
    "REPLACE_NULL_WITH_DEFAULT_CONFIG",
    "SCHEMAS_CACHE_SIZE_CONFIG",
    "SCHEMAS_ENABLE_CONFIG",
    "SCHEMA_CONTENT_CONFIG",
    "json_converter_config_def",
]

SCHEMAS_ENABLE_CONFIG: Final = "schemas.enable"
SCHEMAS_CACHE_SIZE_CONFIG: Final = "schemas.cache.size"
SCHEMA_CONTENT_CONFIG: Final = "schema.content"
DECIMAL_FORMAT_CONFIG: Final = "decimal.format"
REPLACE_NULL_WITH_DEFAULT_CONFIG: Final = "replace.null.with.default"


def json_converter_config_def() -> ConfigDef:
    """``JsonConverterConfig.configDef()``."""
    return (
        converter_config_def()
        .define(
            SCHEMAS_ENABLE_CONFIG,
            ConfigType.BOOLEAN,
            True,
            None,
            Importance.HIGH,
            "Include schemas within each of the serialized values and keys.",
        )
        .define(
            SCHEMAS_CACHE_SIZE_CONFIG,
            ConfigType.INT,
            1000,
            None,
            Importance.HIGH,
            "The maximum number of schemas that can be cached in this converter instance.",
        )
        .define(
            SCHEMA_CONTENT_CONFIG,
            ConfigType.STRING,
            None,
            None,
            Importance.HIGH,
            "When set, this is used as the schema for all messages, and the schemas within each of the message "
            "will be ignored. Otherwise, the schema will be included in the content of each message. This "
            "configuration applies only 'schemas.enable' is true, and it exclusively affects the sink connector.",
        )
        .define(
            DECIMAL_FORMAT_CONFIG,
            ConfigType.STRING,
            "BASE64",
            CaseInsensitiveValidString.in_("BASE64", "NUMERIC"),
            Importance.LOW,
            "Controls which format this converter will serialize decimals in: BASE64 or NUMERIC.",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT_CONFIG,
            ConfigType.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "Whether to replace fields that have a default value and that are null to the default value.",
        )
    )
