"""``java.text.SimpleDateFormat`` patterns, always in UTC, for TimestampConverter and TimestampRouter.

Kafka's configs take SimpleDateFormat patterns (``yyyyMMdd``, ``yyyy-MM-dd'T'HH:mm:ss.SSSZ``), so
patterns are interpreted here rather than translated to ``strftime`` (which cannot express widths
like ``S`` = unpadded milliseconds or ``yy`` = two-digit year). Supported letters:

======  ==============================  ======================================================
letter  meaning                         notes
======  ==============================  ======================================================
G       era                             ``AD`` (years before 1 are not supported)
y       year                            ``yy`` two digits (parsed in the 80/20 window); else padded
M, L    month                           1-2 letters numeric; ``MMM`` ``Jan``; ``MMMM`` ``January``
d       day of month
D       day of year
F       day of week in month            format only (ignored when parsing)
E       day name                        ``EEE`` ``Mon``, ``EEEE`` ``Monday`` (ignored when parsing)
u       day number of week              1 = Monday (ignored when parsing)
a       AM/PM marker
H k     hour of day 0-23 / 1-24
K h     hour of AM/PM 0-11 / 1-12
m s     minute, second
S       milliseconds                    a number, as Java's (``SSS`` pads, it is not a fraction)
z       time zone                       ``UTC`` (``zzzz``: ``Coordinated Universal Time``)
Z       RFC 822 offset                  ``+0000``
X       ISO 8601 offset                 ``Z``; parsing also takes ``+hh``, ``+hhmm``, ``+hh:mm``
======  ==============================  ======================================================

``'text'`` quotes literals and ``''`` is a single quote. Week-based letters (``w``, ``W``, ``Y``) are
locale dependent and raise ``UnsupportedPatternError``; letters Java rejects raise
``InvalidPatternError``. Parsing is lenient as Java's default (``2020-13-01`` is 2021-01-01), reads a
prefix of the text and ignores what follows, as ``DateFormat.parse(String)`` does.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from typing import Final

__all__ = ["InvalidPatternError", "SimpleDateFormat", "UnsupportedPatternError"]

JAVA_LETTERS: Final = frozenset("GyYMLwWDdFEuaHkKhmsSzZX")
SUPPORTED: Final = frozenset("GyMLDdFEuaHkKhmsSzZX")
NUMERIC: Final = frozenset("yDdFuHkKhmsS") | {"M", "L"}

_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MONTHS: Final = [calendar.month_name[i] for i in range(1, 13)]
_DAYS: Final = [calendar.day_name[i] for i in range(7)]  # Monday first
_OFFSET: Final = re.compile(r"(?:GMT|UTC)?([+-])(\d{1,2}):?(\d{2})?")


class InvalidPatternError(ValueError):
    """The pattern is not a SimpleDateFormat pattern (Java's ``IllegalArgumentException``)."""


class UnsupportedPatternError(ValueError):
    """A valid SimpleDateFormat letter this implementation does not handle."""


@dataclass(frozen=True, slots=True)
class _Field:
    letter: str
    count: int


Token = _Field | str


def _tokenize(pattern: str) -> list[Token]:
    tokens: list[Token] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "'":
            if pattern.startswith("''", i):
                tokens.append("'")
                i += 2
                continue
            end = pattern.find("'", i + 1)
            while end != -1 and pattern.startswith("''", end):
                end = pattern.find("'", end + 2)
            if end == -1:
                raise InvalidPatternError("Unterminated quote")
            tokens.append(pattern[i + 1 : end].replace("''", "'"))
            i = end + 1
        elif ch.isascii() and ch.isalpha():
            if ch not in JAVA_LETTERS:
                raise InvalidPatternError(f"Illegal pattern character '{ch}'")
            if ch not in SUPPORTED:
                raise UnsupportedPatternError(f"Pattern letter '{ch}' (week-based fields) is not supported")
            j = i
            while j < n and pattern[j] == ch:
                j += 1
            if ch == "X" and j - i > 3:
                raise InvalidPatternError("invalid ISO 8601 format: length=" + str(j - i))
            tokens.append(_Field(ch, j - i))
            i = j
        else:
            tokens.append(ch)
            i += 1
    return tokens


def _number(value: int, count: int) -> str:
    return str(value).rjust(count, "0")


class SimpleDateFormat:
    """One compiled pattern; ``format`` and ``parse`` work on epoch milliseconds in UTC."""

    __slots__ = ("_regex", "_tokens", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens = _tokenize(pattern)
        self._regex = re.compile(self._parse_regex(), re.IGNORECASE)

    def to_pattern(self) -> str:
        return self.pattern

    # -- formatting ----------------------------------------------------------------------------

    def format(self, epoch_millis: int) -> str:
        when = _EPOCH + dt.timedelta(milliseconds=epoch_millis)
        return "".join(t if isinstance(t, str) else self._field_text(t, when) for t in self._tokens)

    @staticmethod
    def _field_text(f: _Field, when: dt.datetime) -> str:
        letter, count, hour = f.letter, f.count, when.hour
        if letter == "y":
            return _number(when.year % 100, 2) if count == 2 else _number(when.year, count)
        if letter in "ML":
            if count >= 4:
                return _MONTHS[when.month - 1]
            return _MONTHS[when.month - 1][:3] if count == 3 else _number(when.month, count)
        if letter == "E":
            name = _DAYS[when.weekday()]
            return name if count >= 4 else name[:3]
        if letter == "z":
            return "Coordinated Universal Time" if count >= 4 else "UTC"
        texts = {"G": "AD", "a": "AM" if hour < 12 else "PM", "Z": "+0000", "X": "Z"}
        if letter in texts:
            return texts[letter]
        numbers = {
            "d": when.day,
            "D": when.timetuple().tm_yday,
            "F": (when.day - 1) // 7 + 1,
            "u": when.isoweekday(),
            "H": hour,
            "k": hour or 24,
            "K": hour % 12,
            "h": hour % 12 or 12,
            "m": when.minute,
            "s": when.second,
            "S": when.microsecond // 1000,
        }
        return _number(numbers[letter], count)

    # -- parsing -------------------------------------------------------------------------------

    def _parse_regex(self) -> str:
        parts: list[str] = []
        for index, token in enumerate(self._tokens):
            if isinstance(token, str):
                parts.append(re.escape(token))
                continue
            letter, count = token.letter, token.count
            group = f"(?P<f{index}>"
            if letter in "yDdFuHkKhmsS" or (letter in "ML" and count < 3):
                following = self._tokens[index + 1] if index + 1 < len(self._tokens) else None
                abutting = (
                    isinstance(following, _Field)
                    and following.letter in NUMERIC
                    and (following.letter not in "ML" or following.count < 3)
                )
                sign = "[+-]?" if letter == "y" else ""
                parts.append(group + (f"\\d{{{count}}}" if abutting else sign + r"\d+") + ")")
            elif letter in "ML":
                parts.append(
                    group
                    + "|".join(sorted({*_MONTHS, *(m[:3] for m in _MONTHS)}, key=len, reverse=True))
                    + ")"
                )
            elif letter == "E":
                parts.append(
                    group + "|".join(sorted({*_DAYS, *(d[:3] for d in _DAYS)}, key=len, reverse=True)) + ")"
                )
            elif letter == "a":
                parts.append(group + "AM|PM)")
            elif letter == "G":
                parts.append(group + "AD)")
            else:  # z Z X
                parts.append(
                    group + r"Z|(?:GMT|UTC)?[+-]\d{1,2}(?::?\d{2})?|GMT|UTC|Coordinated Universal Time)"
                )
        return "".join(parts)

    def parse(self, text: str) -> int:
        """Epoch milliseconds of ``text``; ``ValueError`` when its start does not fit the pattern."""
        match = self._regex.match(text)
        if match is None:
            raise ValueError(f'Unparseable date: "{text}"')
        year, month, day, day_of_year = 1970, 1, 1, None
        hour, minute, second, millis, pm, offset = 0, 0, 0, 0, None, dt.timedelta()
        for index, token in enumerate(self._tokens):
            if isinstance(token, str):
                continue
            raw = match.group(f"f{index}")
            letter = token.letter
            if letter == "y":
                year = int(raw)
                if token.count <= 2 and len(raw) == 2:
                    year = _two_digit_year(year)
            elif letter in "ML":
                month = int(raw) if raw.isdigit() else _month_number(raw)
            elif letter == "d":
                day = int(raw)
            elif letter == "D":
                day_of_year = int(raw)
            elif letter in "Hk":
                hour = int(raw) % 24 if letter == "k" else int(raw)
            elif letter in "Kh":
                hour = int(raw) % 12 if letter == "h" else int(raw)
            elif letter == "a":
                pm = raw.upper() == "PM"
            elif letter == "m":
                minute = int(raw)
            elif letter == "s":
                second = int(raw)
            elif letter == "S":
                millis = int(raw)
            elif letter in "zZX":
                offset = _offset(raw)
        if pm is not None and hour < 12 and pm:
            hour += 12
        try:
            years, month_index = divmod(month - 1, 12)  # lenient: month 13 is January of the next year
            base = dt.datetime(year + years, month_index + 1, 1, tzinfo=dt.UTC)
        except ValueError as exc:
            raise ValueError(f'Unparseable date: "{text}"') from exc
        days = day_of_year - 1 - (base.timetuple().tm_yday - 1) if day_of_year is not None else day - 1
        when = base + dt.timedelta(days=days, hours=hour, minutes=minute, seconds=second, milliseconds=millis)
        return (when - offset - _EPOCH) // dt.timedelta(milliseconds=1)


def _two_digit_year(yy: int) -> int:
    """SimpleDateFormat's window: within 80 years before and 20 years after now."""
    now = dt.datetime.now(dt.UTC).year
    year = now - now % 100 + yy
    if year > now + 20:
        year -= 100
    elif year <= now - 80:
        year += 100
    return year


def _month_number(name: str) -> int:
    lowered = name.lower()
    for i, month in enumerate(_MONTHS):
        if lowered in (month.lower(), month[:3].lower()):
            return i + 1
    raise ValueError(f"Unknown month {name}")


def _offset(raw: str) -> dt.timedelta:
    m = _OFFSET.fullmatch(raw)
    if m is None:
        return dt.timedelta()  # Z, GMT, UTC
    sign = -1 if m.group(1) == "-" else 1
    return sign * dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
