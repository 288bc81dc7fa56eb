"""Java ``.properties`` files (worker and connector configs), parsed exactly as ``java.util.Properties.load``.

A port of its ``LineReader`` and ``loadConvert``: only ``\\n``, ``\\r`` and ``\\r\\n`` end a line
(``str.splitlines`` would also split on ``\\f``, ``\\v``, ``\\x85``, ``\\u2028`` ... and cut a value
such as a password in two); space, tab and form feed are the whitespace around keys and
separators; a malformed ``\\uXXXX`` escape is an error, as Java's ``IllegalArgumentException``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from engine.errors import ConfigError

_WHITESPACE = " \t\f"
_EOL = "\r\n"
_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}
_HEX = "0123456789abcdefABCDEF"
MALFORMED_U_ESCAPE = "Malformed \\uxxxx encoding."


def parse_properties(text: str) -> dict[str, str]:
    """``key=value``, ``key: value`` or ``key value``; ``#``/``!`` comments; a trailing ``\\`` continues a line.

    Raises ConfigError on a malformed ``\\uXXXX`` escape. A later key replaces an earlier one.
    """
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split(line)
        props[_unescape(key)] = _unescape(value)
    return props


def load_properties(path: str | Path) -> dict[str, str]:
    """A properties file read as UTF-8 (Kafka's ``Utils.loadProps`` reads ISO-8859-1; see docs/compatibility.md)."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"Could not read properties file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"Could not read properties file {path}: it is not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    try:
        return parse_properties(text)
    except ConfigError as exc:
        raise ConfigError(f"Could not read properties file {path}: {exc}") from None


def _logical_lines(text: str) -> Iterator[str]:
    """``Properties.LineReader.readLine``: natural lines joined at an odd number of trailing backslashes,
    leading whitespace dropped (also on continuation lines), comments and blank lines skipped."""
    pos, end = 0, len(text)
    while True:
        line: list[str] = []
        skip_whitespace, continued, escaped = True, False, False
        while True:
            if pos >= end:
                if not line:
                    return
                yield "".join(line[:-1] if escaped else line)
                return
            ch = text[pos]
            pos += 1
            if skip_whitespace:
                if ch in _WHITESPACE or (not continued and ch in _EOL):
                    continue
                skip_whitespace, continued = False, False
            if not line and ch in "#!":
                while pos < end and text[pos] not in _EOL:
                    pos += 1  # a comment runs to the end of its natural line
                skip_whitespace = True
                continue
            if ch not in _EOL:
                line.append(ch)
                escaped = not escaped if ch == "\\" else False
                continue
            if not line:
                skip_whitespace = True
                continue
            if pos >= end:
                yield "".join(line[:-1] if escaped else line)
                return
            if not escaped:
                yield "".join(line)
                break
            line.pop()  # the backslash that joins the next natural line
            skip_whitespace, continued, escaped = True, True, False
            if ch == "\r" and text[pos] == "\n":
                pos += 1


def _split(line: str) -> tuple[str, str]:
    """``Properties.load0``: the key ends at the first unescaped ``=``, ``:`` or whitespace; then
    whitespace and at most one ``=``/``:`` are skipped."""
    key_end, value_start, has_separator, escaped = 0, len(line), False, False
    while key_end < len(line):
        ch = line[key_end]
        if ch in "=:" and not escaped:
            value_start, has_separator = key_end + 1, True
            break
        if ch in _WHITESPACE and not escaped:
            value_start = key_end + 1
            break
        escaped = not escaped if ch == "\\" else False
        key_end += 1
    while value_start < len(line):
        ch = line[value_start]
        if ch not in _WHITESPACE:
            if has_separator or ch not in "=:":
                break
            has_separator = True
        value_start += 1
    return line[:key_end], line[value_start:]


def _unescape(text: str) -> str:
    """``Properties.loadConvert``: ``\\t \\r \\n \\f``, ``\\uXXXX`` (UTF-16 units, pairs joined), any other
    escaped character stands for itself."""
    if "\\" not in text:
        return text
    out: list[str] = []
    pos, end = 0, len(text)
    while pos < end:
        ch = text[pos]
        pos += 1
        if ch != "\\":
            out.append(ch)
            continue
        ch = text[pos]  # a line never ends with an unescaped backslash
        pos += 1
        if ch != "u":
            out.append(_ESCAPES.get(ch, ch))
            continue
        digits = text[pos : pos + 4]
        if len(digits) < 4 or any(d not in _HEX for d in digits):
            raise ConfigError(MALFORMED_U_ESCAPE)
        out.append(chr(int(digits, 16)))
        pos += 4
    return _join_surrogates("".join(out))


def _join_surrogates(text: str) -> str:
    """Java strings are UTF-16: ``\\uD83D\\uDE00`` is one character; a lone surrogate stays as it is."""
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
