"""``nearest``: the few names a class-not-found message suggests."""

from __future__ import annotations

from engine.plugins.nearest import did_you_mean, nearest

CONNECTORS = [
    "engine.connectors.file.FileStreamSourceConnector",
    "engine.connectors.file.FileStreamSinkConnector",
    "FileStreamSource",
    "FileStreamSink",
    "RecordingSource",
]


def test_a_typo_names_the_close_candidates_only() -> None:
    assert nearest("FileStreamSourc", CONNECTORS) == ["FileStreamSource"]
    assert nearest("com.acme.FileStreamSinkConector", CONNECTORS) == [
        "engine.connectors.file.FileStreamSinkConnector"
    ]
    assert nearest("filestreamsink", CONNECTORS) == ["FileStreamSink"]


def test_nothing_close_names_nothing() -> None:
    assert nearest("Postgres", CONNECTORS) == []
    assert did_you_mean("Postgres", CONNECTORS) == ""


def test_names_of_one_class_count_once() -> None:
    same = {"FileStreamSource": 1, "engine.connectors.file.FileStreamSourceConnector": 1}
    found = nearest("FileStreamSourceConector", same, same=same.__getitem__)
    assert len(found) == 1


def test_the_hint_reads_as_a_sentence() -> None:
    assert did_you_mean("Strng", ["String", "Json"]) == " Did you mean 'String'?"
    assert did_you_mean("ab", ["abc", "abd"]) == " Did you mean 'abc' or 'abd'?"
