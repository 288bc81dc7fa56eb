"""``sasl.jaas.config`` parsed as Kafka's ``JaasConfig`` parses it (a ``java.io.StreamTokenizer``).

The grammar: ``<loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*;``, repeated. Java's
tokenizer rules are kept, since existing worker.properties files rely on them: ``//`` and ``/* */``
comments (a lone ``/`` comments out the rest of the line), ``"`` or ``'`` quoted strings with
backslash escapes (a quoted string also ends at a line break), words of letters, digits, ``.``,
``-``, ``_`` and ``$``; a value that starts with a digit is a *number* token, which Java rejects
("Value not specified ..."), so numbers must be quoted there too. Errors carry Java's messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.errors import ConfigError

_FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_EOF, _WORD, _NUMBER = "EOF", "WORD", "NUMBER"


@dataclass(frozen=True, slots=True)
class LoginModule:
    """One JAAS entry: the login module class, its control flag (upper case) and its options."""

    name: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def simple_name(self) -> str:
        return self.name.rsplit(".", 1)[-1]


@dataclass(slots=True)
class _Token:
    kind: str  # _EOF, _WORD, _NUMBER, a quote character, or an ordinary character
    text: str | None  # Java's ``sval``: set for words and quoted strings only


def _is_word_start(ch: str) -> bool:
    # StreamTokenizer's defaults (a-z, A-Z, \u00a0-\u00ff, anything past \u00ff) plus Kafka's - _ $
    return (ch.isascii() and (ch.isalpha() or ch in "_$")) or ch >= "\u00a0"


def _is_word_part(ch: str) -> bool:
    return _is_word_start(ch) or (ch.isdigit() and ch.isascii()) or ch in ".-"


class _Tokenizer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _skip_space_and_comments(self) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch <= " ":
                self.pos += 1
            elif ch == "/":
                nxt = text[self.pos + 1 : self.pos + 2]
                if nxt == "*":
                    end = text.find("*/", self.pos + 2)
                    self.pos = len(text) if end < 0 else end + 2
                else:  # "//", or "/" alone: '/' is also a comment character in Java's defaults
                    while self.pos < len(text) and text[self.pos] not in "\r\n":
                        self.pos += 1
            else:
                return

    def next(self) -> _Token:
        self._skip_space_and_comments()
        text = self.text
        if self.pos >= len(text):
            return _Token(_EOF, None)
        ch = text[self.pos]
        if ch in "\"'":
            return self._quoted(ch)
        if (
            (ch.isascii() and ch.isdigit())
            or ch == "."
            or (
                ch == "-"
                and text[self.pos + 1 : self.pos + 2] != ""
                and (text[self.pos + 1].isdigit() or text[self.pos + 1] == ".")
            )
        ):
            return self._number()
        if ch == "-":  # '-' not followed by a number is an ordinary character in Java, despite wordChars
            self.pos += 1
            return _Token("-", None)
        if _is_word_start(ch):
            start = self.pos
            while self.pos < len(text) and _is_word_part(text[self.pos]):
                self.pos += 1
            return _Token(_WORD, text[start : self.pos])
        self.pos += 1
        return _Token(ch, None)

    def _number(self) -> _Token:
        text = self.text
        if text[self.pos] == "-":
            self.pos += 1
        seen_dot = False
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == "." and not seen_dot:
                seen_dot = True
            elif not (ch.isascii() and ch.isdigit()):
                break
            self.pos += 1
        return _Token(_NUMBER, None)

    def _quoted(self, quote: str) -> _Token:
        text = self.text
        self.pos += 1
        out: list[str] = []
        while self.pos < len(text) and text[self.pos] != quote and text[self.pos] not in "\r\n":
            ch = text[self.pos]
            self.pos += 1
            if ch == "\\" and self.pos < len(text):
                ch = text[self.pos]
                self.pos += 1
                if "0" <= ch <= "7":  # up to three octal digits, at most \377
                    digits = ch
                    limit = 3 if ch <= "3" else 2
                    while len(digits) < limit and self.pos < len(text) and "0" <= text[self.pos] <= "7":
                        digits += text[self.pos]
                        self.pos += 1
                    ch = chr(int(digits, 8))
                else:
                    ch = _ESCAPES.get(ch, ch)
            out.append(ch)
        if self.pos < len(text) and text[self.pos] == quote:
            self.pos += 1
        return _Token(quote, "".join(out))


def _invalid(message: str, key: str) -> ConfigError:
    return ConfigError(f"Invalid value for configuration {key}: {message}", errors={key: [message]})


def parse_jaas_config(text: str, *, key: str = "sasl.jaas.config") -> list[LoginModule]:
    """Every login module in ``text``; ``ConfigError`` naming ``key`` with Java's message when malformed."""
    tokens = _Tokenizer(text)
    modules: list[LoginModule] = []
    token = tokens.next()
    while token.kind != _EOF:
        name = token.text
        token = tokens.next()
        if token.kind == _EOF:
            raise _invalid("Login module control flag not specified in JAAS config", key)
        if token.text is None:
            raise _invalid("Login module control flag is not available in the JAAS config", key)
        if token.text.upper() not in _FLAGS:
            raise _invalid(f"Invalid login module control flag '{token.text}' in JAAS config", key)
        flag = token.text.upper()
        options: dict[str, str] = {}
        token = tokens.next()
        while token.kind not in (_EOF, ";"):
            option = token.text
            equals = tokens.next()
            value = tokens.next() if equals.kind == "=" else equals
            if equals.kind != "=" or value.kind == _EOF or value.text is None:
                raise _invalid(f"Value not specified for key '{option}' in JAAS config", key)
            options[str(option)] = value.text
            token = tokens.next()
        if token.kind != ";":
            raise _invalid("JAAS config entry not terminated by semi-colon", key)
        modules.append(LoginModule(str(name), flag, options))
        token = tokens.next()
    if not modules:
        raise _invalid("Login module not specified in JAAS config", key)
    return modules


def client_login_module(text: str, *, key: str = "sasl.jaas.config") -> LoginModule:
    """The one login module a client's ``sasl.jaas.config`` must hold (Kafka's ``JaasContext.load``)."""
    modules = parse_jaas_config(text, key=key)
    if len(modules) != 1:
        raise _invalid(f"JAAS config property contains {len(modules)} login modules, should be 1 module", key)
    return modules[0]
