"""``sasl.jaas.config`` parsed with the grammar and messages of Kafka's ``JaasConfig`` (a StreamTokenizer)."""

from __future__ import annotations

import pytest

from engine.config.kafka_clients.jaas import LoginModule, client_login_module, parse_jaas_config
from engine.errors import ConfigError

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f'{PLAIN} required username="alice" password="s3cret";',
            [LoginModule(PLAIN, "REQUIRED", {"username": "alice", "password": "s3cret"})],
        ),
        # unquoted words (letters, digits after the first, . - _ $), single quotes, flag in any case
        (
            f"{PLAIN} Required username=alice password='p w';",
            [LoginModule(PLAIN, "REQUIRED", {"username": "alice", "password": "p w"})],
        ),
        ("a.B sufficient k=$x-y_z.1;", [LoginModule("a.B", "SUFFICIENT", {"k": "$x-y_z.1"})]),
        # backslash escapes as Java's tokenizer reads them: \" \\ \n \t, octal (\101 = A), unknown = the char
        (r'M optional k="a\"b\\c\nd\te\101\q";', [LoginModule("M", "OPTIONAL", {"k": 'a"b\\c\nd\teAq'})]),
        # comments: // to the end of the line, /* ... */, and a lone / comments out the rest of its line too
        (
            '// leading\nM /* inline */ requisite k="v"; // trailing\n',
            [LoginModule("M", "REQUISITE", {"k": "v"})],
        ),
        ('M required k="v" / k2="ignored"\n;', [LoginModule("M", "REQUIRED", {"k": "v"})]),
        # a quoted string ends at a line break, as Java's does
        ('M required k="line\n;', [LoginModule("M", "REQUIRED", {"k": "line"})]),
        # no options; several modules; a later option of the same name wins
        ("M required;", [LoginModule("M", "REQUIRED", {})]),
        (
            'A required;\nB optional k="1" k="2";',
            [LoginModule("A", "REQUIRED", {}), LoginModule("B", "OPTIONAL", {"k": "2"})],
        ),
    ],
)
def test_parses_as_java_does(text: str, expected: list[LoginModule]) -> None:
    assert parse_jaas_config(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Login module not specified in JAAS config"),
        ("/* only a comment */", "Login module not specified in JAAS config"),
        ("M", "Login module control flag not specified in JAAS config"),
        ("M requird;", "Invalid login module control flag 'requird' in JAAS config"),
        ("M ;", "Login module control flag is not available in the JAAS config"),
        ("M required username;", "Value not specified for key 'username' in JAAS config"),
        ("M required username=;", "Value not specified for key 'username' in JAAS config"),
        # a value starting with a digit is a number token, which has no string value in Java
        ("M required port=9092;", "Value not specified for key 'port' in JAAS config"),
        ('M required username="u"', "JAAS config entry not terminated by semi-colon"),
    ],
)
def test_malformed_text_gets_javas_message_naming_the_setting(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_jaas_config(text, key="producer.sasl.jaas.config")
    assert caught.value.errors == {"producer.sasl.jaas.config": [message]}
    assert str(caught.value) == f"Invalid value for configuration producer.sasl.jaas.config: {message}"


def test_a_client_takes_exactly_one_login_module() -> None:
    assert (
        client_login_module(f'{PLAIN} required username="u" password="p";').simple_name == "PlainLoginModule"
    )
    with pytest.raises(
        ConfigError, match="JAAS config property contains 2 login modules, should be 1 module"
    ):
        client_login_module("A required; B required;")
