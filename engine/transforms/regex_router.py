"""``RegexRouter``: rename a record's topic with a regular expression and a replacement.

Kafka compiles ``regex`` as a ``java.util.regex.Pattern`` and, when the *whole* topic matches
(``Matcher.matches``), replaces the first match (``Matcher.replaceFirst``). Java's regex dialect is
close to Python's; ``java_regex`` translates the constructs that differ (``(?<name>...)``,
``\\k<name>``, ``\\Q...\\E``, ``\\z``). The replacement uses Java's syntax: ``$1`` / ``${name}`` for
groups and ``\\`` to escape, parsed once at configure time (an invalid one is a ConfigException
then, where Kafka would fail on the first matching record).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from engine.api.config_def import ConfigDef, ConfigDefError, ConfigType, Importance
from engine.api.errors import ConfigException
from engine.api.records import ConnectRecord
from engine.api.transforms import Transformation

__all__ = ["RegexRouter", "RegexValidator", "java_regex", "java_replacement"]

_NAMED_GROUP: Final = re.compile(r"\(\?<([A-Za-z][A-Za-z0-9]*)>")
_BACKREF: Final = re.compile(r"\\k<([A-Za-z][A-Za-z0-9]*)>")
_QUOTED: Final = re.compile(r"\\Q(.*?)(?:\\E|$)", re.DOTALL)


def java_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Java regular expression with Python's ``re`` (raises ``re.error`` when invalid)."""
    text = _QUOTED.sub(lambda m: re.escape(m.group(1)), pattern)
    text = _NAMED_GROUP.sub(r"(?P<\1>", text)
    text = _BACKREF.sub(r"(?P=\1)", text)
    text = re.sub(r"(?<!\\)((?:\\\\)*)\\z", r"\1\\Z", text)
    return re.compile(text)


class RegexValidator:
    """Kafka's ``RegexValidator``: the value must compile as a regular expression."""

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigDefError.invalid(name, value, "Invalid regex: null")
        try:
            java_regex(value)
        except (re.error, TypeError) as exc:
            raise ConfigDefError.invalid(name, value, f"Invalid regex: {exc}") from exc

    def __str__(self) -> str:
        return "valid regex"


Replacer = Callable[[re.Match[str]], str]


def java_replacement(replacement: str, pattern: re.Pattern[str]) -> Replacer:
    """Parse ``replacement`` as ``Matcher.appendReplacement`` does, into a function of a match.

    ``$n`` takes as many digits as still name an existing group; an unmatched group adds nothing.
    """
    parts: list[str | tuple[str | int]] = []
    literal: list[str] = []
    i, n = 0, len(replacement)
    while i < n:
        ch = replacement[i]
        if ch == "\\":
            i += 1
            if i >= n:
                raise ValueError("character to be escaped is missing")
            literal.append(replacement[i])
            i += 1
        elif ch == "$":
            i += 1
            if i >= n:
                raise ValueError("Illegal group reference: group index is missing")
            ref: str | int
            if replacement[i] == "{":
                end = replacement.find("}", i)
                name = replacement[i + 1 : end] if end > 0 else ""
                if end < 0 or not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", name):
                    raise ValueError(
                        "named capturing group is missing trailing '}'"
                        if end < 0
                        else f"named capturing group <{name}> does not exist"
                    )
                if name not in pattern.groupindex:
                    raise ValueError(f"No group with name {{{name}}}")
                ref, i = name, end + 1
            elif replacement[i].isdigit():
                ref, i = int(replacement[i]), i + 1
                while i < n and replacement[i].isdigit() and ref * 10 + int(replacement[i]) <= pattern.groups:
                    ref, i = ref * 10 + int(replacement[i]), i + 1
                if ref > pattern.groups:
                    raise ValueError(f"No group {ref}")
            else:
                raise ValueError("Illegal group reference")
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append((ref,))
        else:
            literal.append(ch)
            i += 1
    if literal:
        parts.append("".join(literal))

    def replace(match: re.Match[str]) -> str:
        out: list[str] = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(match.group(part[0]) or "")
        return "".join(out)

    return replace


class RegexRouter(Transformation[ConnectRecord]):
    """Updates the topic with ``regex``/``replacement``; records whose topic does not match pass as they are."""

    OVERVIEW_DOC = (
        "Update the record topic using the configured regular expression and replacement string."
        "<p/>Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. "
        "If the pattern matches the input topic, <code>java.util.regex.Matcher#replaceFirst()</code> "
        "is used with the replacement string to obtain the new topic."
    )
    REGEX = "regex"
    REPLACEMENT = "replacement"
    CONFIG_DEF = (
        ConfigDef()
        .define(
            REGEX,
            ConfigType.STRING,
            validator=RegexValidator(),
            importance=Importance.HIGH,
            documentation="Regular expression to use for matching.",
        )
        .define(
            REPLACEMENT, ConfigType.STRING, importance=Importance.HIGH, documentation="Replacement string."
        )
    )

    def __init__(self) -> None:
        self.regex: re.Pattern[str] = re.compile("")
        self.replacement = ""
        self._replace: Replacer = lambda _: ""

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.regex = java_regex(parsed[self.REGEX])
        self.replacement = parsed[self.REPLACEMENT]
        try:
            self._replace = java_replacement(self.replacement, self.regex)
        except ValueError as exc:
            raise ConfigException(self.REPLACEMENT, self.replacement, str(exc)) from exc

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        if self.regex.fullmatch(record.topic) is None:
            return record
        topic = self.regex.sub(self._replace, record.topic, count=1)
        return record.new_record(topic=topic)
