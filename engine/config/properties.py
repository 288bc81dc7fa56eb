"""Java ``.properties`` files (worker and connector configs), parsed as ``java.util.Properties`` does."""

from __future__ import annotations

from pathlib import Path

from engine.errors import ConfigError

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def parse_properties(text: str) -> dict[str, str]:
    """``key=value``, ``key: value`` or ``key value``; ``#``/``!`` comments; ``\\`` continues a line."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split(line)
        props[_unescape(key)] = _unescape(value)
    return props


def load_properties(path: str | Path) -> dict[str, str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Could not read properties file {path}: {exc.strerror or exc}") from None
    return parse_properties(text)


def _logical_lines(text: str) -> list[str]:
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # an odd number of backslashes escapes the newline
            pending += line[:-1]
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _split(line: str) -> tuple[str, str]:
    escaped = False
    for i, ch in enumerate(line):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in "=: \t\f":
            rest = line[i:].lstrip(" \t\f")
            if (rest[:1] in ("=", ":") and ch in " \t\f") or ch in "=:":
                rest = rest[1:]
            return line[:i], rest.lstrip(" \t\f")
    return line, ""


def _unescape(text: str) -> str:
    out: list[str] = []
    chars = iter(range(len(text)))
    for i in chars:
        ch = text[i]
        if ch != "\\" or i + 1 >= len(text):
            out.append(ch)
            continue
        nxt = text[i + 1]
        next(chars, None)
        if nxt == "u" and _is_hex(text[i + 2 : i + 6]):
            out.append(chr(int(text[i + 2 : i + 6], 16)))
            for _ in range(4):
                next(chars, None)
        else:
            out.append(_ESCAPES.get(nxt, nxt))
    return "".join(out)


def _is_hex(text: str) -> bool:
    return len(text) == 4 and all(c in "0123456789abcdefABCDEF" for c in text)
