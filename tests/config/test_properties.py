"""``engine.config.properties`` against ``java.util.Properties.load``.

``CASES`` holds tricky inputs with the exact pairs Java 17's ``Properties.load`` produced for them
(computed once with ``java/PropertiesDump.java``); ``test_java_agrees`` runs that program again, on
the table and on random inputs, so the table and the parser cannot drift from Java. CI has Java 17:
there a missing ``java`` fails the test instead of skipping it.
"""

from __future__ import annotations

import os
import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from engine.config.properties import load_properties, parse_properties
from engine.errors import ConfigError

MALFORMED = "Malformed \\uxxxx encoding."

CASES: list[tuple[str, dict[str, str] | str]] = [
    ("a=b", {"a": "b"}),
    ("a = b \n", {"a": "b "}),
    ("a:b", {"a": "b"}),
    ("a : b", {"a": "b"}),
    ("a b", {"a": "b"}),
    ("a\tb", {"a": "b"}),
    ("a\x0cb", {"a": "b"}),
    ("a", {"a": ""}),
    ("a=", {"a": ""}),
    ("=b", {"": "b"}),
    (":b", {"": "b"}),
    (" =b", {"": "b"}),
    ("a==b", {"a": "=b"}),
    ("a=:b", {"a": ":b"}),
    ("a :=b", {"a": "=b"}),
    ("a = = b", {"a": "= b"}),
    ("a b=c", {"a": "b=c"}),
    ("password=p\x0bw", {"password": "p\x0bw"}),
    ("k=v\x0cw\nx=y", {"k": "v\x0cw", "x": "y"}),
    ("k=v\x85w", {"k": "v\x85w"}),
    ("k=v\u2028w\u2029x", {"k": "v\u2028w\u2029x"}),
    ("k=v\x1cw\x1dx\x1ey", {"k": "v\x1cw\x1dx\x1ey"}),
    ("\x0ck=v", {"k": "v"}),
    ("\t \x0c k = v", {"k": "v"}),
    ("\x0bk=v", {"\x0bk": "v"}),
    ("a=1\r\nb=2\rc=3\n", {"a": "1", "b": "2", "c": "3"}),
    ("a=1\n\r\nb=2", {"a": "1", "b": "2"}),
    ("# comment\n! other\n  # indented\nk=v", {"k": "v"}),
    ("k=v # not a comment", {"k": "v # not a comment"}),
    ("k=v\\\n   w", {"k": "vw"}),
    ("k=v\\\r\n   w", {"k": "vw"}),
    ("k=v\\\r   w", {"k": "vw"}),
    ("k=v\\\\\nw=x", {"k": "v\\", "w": "x"}),
    ("k=v\\\\\\\nw", {"k": "v\\w"}),
    ("k=v\\", {"k": "v"}),
    ("k=v\\\\", {"k": "v\\"}),
    ("k=v\\\n", {"k": "v"}),
    ("k=v\\\n\nw=x", {"k": "v", "w": "x"}),
    ("k=v\\\n# not a comment\n", {"k": "v# not a comment"}),
    ("\\\n#c=1\nd=2", {"d": "2"}),
    ("k=v\\\n \\\n w", {"k": "vw"}),
    ("esc=C:\\\\dir\\tx\\u0041", {"esc": "C:\\dir\txA"}),
    ("a\\=b=c", {"a=b": "c"}),
    ("a\\:b:c", {"a:b": "c"}),
    ("a\\ b c", {"a b": "c"}),
    ("\\#k=v", {"#k": "v"}),
    ("k=\\ v", {"k": " v"}),
    ("k=\\n\\r\\t\\f\\b\\x\\\\", {"k": "\n\r\t\x0cbx\\"}),
    ("k=\\u00e9\\u00C9", {"k": "\xe9\xc9"}),
    ("k=\\uD83D\\uDE00", {"k": "\U0001f600"}),
    ("k=\\uD83D", {"k": "\ud83d"}),
    ("k=\\u0041BCD", {"k": "ABCD"}),
    ("k=\\u004", MALFORMED),
    ("k=\\u00zz", MALFORMED),
    ("k\\u0041=v", {"kA": "v"}),
    ("k=\\u", MALFORMED),
    ("k=caf\xe9 \U0001f600", {"k": "caf\xe9 \U0001f600"}),
    ("dup=1\ndup=2", {"dup": "2"}),
    ("", {}),
    ("\n\n\r\n", {}),
    ("   ", {}),
    ("a=b\n   \nc=d", {"a": "b", "c": "d"}),
    ("k=\t", {"k": ""}),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_parses_as_java_properties_does(text: str, expected: dict[str, str] | str) -> None:
    if isinstance(expected, str):
        with pytest.raises(ConfigError) as raised:
            parse_properties(text)
        assert str(raised.value) == expected
    else:
        assert parse_properties(text) == expected


def test_files_are_utf8_and_bad_escapes_name_the_file(tmp_path: Path) -> None:
    good = tmp_path / "w.properties"
    good.write_bytes("password=p\x0bw\r\nuser=\\u00e9t\u00e9\r\n".encode())
    assert load_properties(good) == {"password": "p\x0bw", "user": "\xe9t\xe9"}
    bad = tmp_path / "bad.properties"
    bad.write_text("k=\\u12\n")
    with pytest.raises(ConfigError, match=f"Could not read properties file {bad}: Malformed"):
        load_properties(bad)
    latin1 = tmp_path / "latin1.properties"
    latin1.write_bytes(b"k=caf\xe9\n")
    with pytest.raises(ConfigError, match="it is not UTF-8"):
        load_properties(latin1)


_ALPHABET = [
    "a",
    "b",
    "=",
    ":",
    " ",
    "\t",
    "\f",
    "\v",
    "\\",
    "\n",
    "\r",
    "#",
    "!",
    "u",
    "0",
    "4",
    "1",
    "F",
    "z",
    "\x85",
    "\u2028",
    "\xe9",
]


def _random_inputs(count: int) -> list[str]:
    rng = random.Random(20240615)
    return ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 24))) for _ in range(count)]


def _java_properties(tmp_path: Path, inputs: list[str]) -> list[dict[str, str] | str]:
    source = Path(__file__).with_name("java") / "PropertiesDump.java"
    subprocess.run(["javac", "-d", str(tmp_path), str(source)], check=True, capture_output=True)
    frames = b"".join(struct.pack(">i", len(text.encode())) + text.encode() for text in inputs)
    out = subprocess.run(
        ["java", "-cp", str(tmp_path), "PropertiesDump"], input=frames, check=True, capture_output=True
    ).stdout.decode()

    def unhex(units: str) -> str:
        return bytes.fromhex(units).decode("utf-16-be", "surrogatepass")

    results: list[dict[str, str] | str] = []
    for line in out.splitlines():
        kind, *fields = line.split("\t")
        values = [unhex(f) for f in fields]
        results.append(values[0] if kind == "ERR" else dict(zip(values[::2], values[1::2], strict=True)))
    return results


def _ours(text: str) -> dict[str, str] | str:
    try:
        return parse_properties(text)
    except ConfigError as exc:
        return str(exc)


def test_java_agrees(tmp_path: Path) -> None:
    if shutil.which("java") is None or shutil.which("javac") is None:
        if os.environ.get("CI"):
            pytest.fail(
                "CI must have Java 17 (java and javac) for the java.util.Properties differential test"
            )
        pytest.skip("no java/javac on PATH")
    inputs = [text for text, _ in CASES] + _random_inputs(3000)
    java = _java_properties(tmp_path, inputs)
    assert len(java) == len(inputs)
    assert java[: len(CASES)] == [expected for _, expected in CASES]
    mismatches = [
        (text, want, _ours(text)) for text, want in zip(inputs, java, strict=True) if _ours(text) != want
    ]
    assert mismatches == []
