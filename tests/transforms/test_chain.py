"""TransformationChain.from_config: aliases, class names, predicates, negate, drops and closing."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.api.errors import ConfigException
from engine.api.records import Header, SourceRecord
from engine.transforms.chain import TransformationChain
from engine.transforms.filter import Filter
from engine.transforms.regex_router import RegexRouter

USER_MODULE = '''
from engine.api.transforms import Transformation

CLOSED = []


class Upper(Transformation):
    def configure(self, configs):
        self.configs = dict(configs)

    def apply(self, record):
        return record.new_record(value=str(record.value).upper() + self.configs.get("suffix", ""))

    def close(self):
        CLOSED.append(self)


class Exploding(Transformation):
    def configure(self, configs):
        raise ValueError("boom")

    def apply(self, record):
        return record
'''


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "chain_user_smt.py").write_text(textwrap.dedent(USER_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "chain_user_smt"
    sys.modules.pop("chain_user_smt", None)


def _record(topic: str = "orders", value: object = "v") -> SourceRecord:
    return SourceRecord(topic=topic, value=value)


def test_no_transforms_is_identity() -> None:
    chain = TransformationChain.from_config({"name": "c"})
    record = _record()
    assert chain.apply(record) is record
    assert not chain
    assert len(chain) == 0


@pytest.mark.parametrize("type_name", [
    "RegexRouter", "org.apache.kafka.connect.transforms.RegexRouter", "engine.transforms.regex_router.RegexRouter",
    "engine.transforms.regex_router:RegexRouter",
])
def test_type_names(type_name: str) -> None:
    chain = TransformationChain.from_config({
        "transforms": "r", "transforms.r.type": type_name, "transforms.r.regex": "(.*)",
        "transforms.r.replacement": "$1-x"})
    assert isinstance(chain.stages[0].transformation, RegexRouter)
    routed = chain.apply(_record())
    assert routed is not None
    assert routed.topic == "orders-x"


@pytest.mark.parametrize("type_name", [
    "SetSchemaMetadata$Value", "org.apache.kafka.connect.transforms.SetSchemaMetadata$Value",
    "engine.transforms.set_schema_metadata.SetSchemaMetadata.Value",
    "engine.transforms.set_schema_metadata:SetSchemaMetadata.Value",
])
def test_nested_class_names(type_name: str) -> None:
    chain = TransformationChain.from_config({
        "transforms": "s", "transforms.s.type": type_name, "transforms.s.schema.name": "n"})
    assert type(chain.stages[0].transformation).__qualname__ == "SetSchemaMetadata.Value"


def test_stages_run_in_order_and_see_only_their_keys(user_module: str) -> None:
    chain = TransformationChain.from_config({
        "transforms": "up, route", "transforms.up.type": f"{user_module}.Upper", "transforms.up.suffix": "!",
        "transforms.route.type": "RegexRouter", "transforms.route.regex": "orders",
        "transforms.route.replacement": "done"})
    out = chain.apply(_record())
    assert out is not None
    assert (out.topic, out.value) == ("done", "V!")
    assert chain.stages[0].transformation.configs == {"suffix": "!"}  # type: ignore[attr-defined]


@pytest.mark.parametrize(("negate", "dropped_topics"), [(None, {"foo-1"}), ("true", {"bar"}), ("false", {"foo-1"})])
def test_predicate_and_negate(negate: str | None, dropped_topics: set[str]) -> None:
    props = {"transforms": "drop", "transforms.drop.type": "Filter", "transforms.drop.predicate": "isFoo",
             "predicates": "isFoo", "predicates.isFoo.type": "TopicNameMatches", "predicates.isFoo.pattern": "foo.*"}
    if negate is not None:
        props["transforms.drop.negate"] = negate
    chain = TransformationChain.from_config(props)
    dropped = {t for t in ("foo-1", "bar") if chain.apply(_record(t)) is None}
    assert dropped == dropped_topics


def test_drop_stops_the_chain(user_module: str) -> None:
    chain = TransformationChain.from_config({
        "transforms": "tomb,up", "transforms.tomb.type": "Filter", "transforms.tomb.predicate": "t",
        "transforms.up.type": f"{user_module}.Upper",
        "predicates": "t", "predicates.t.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"})
    assert chain.apply(_record(value=None)) is None
    upper = chain.apply(_record(value="a"))
    assert upper is not None
    assert upper.value == "A"


def test_header_predicate() -> None:
    chain = TransformationChain.from_config({
        "transforms": "f", "transforms.f.type": "Filter", "transforms.f.predicate": "h",
        "predicates": "h", "predicates.h.type": "HasHeaderKey", "predicates.h.name": "skip"})
    assert chain.apply(SourceRecord(topic="t", headers=(Header("skip", 1),))) is None
    assert chain.apply(SourceRecord(topic="t")) is not None


@pytest.mark.parametrize(("props", "message"), [
    ({"transforms": "a"}, 'Missing required configuration "transforms.a.type" which has no default value.'),
    ({"transforms": "a", "transforms.a.type": "NoSuch"}, "Class NoSuch could not be found."),
    ({"transforms": "a", "transforms.a.type": "engine.api.records.Header"},
     "Class class engine.api.records.Header does not implement the Transformation interface"),
    ({"transforms": "a", "transforms.a.type": "SetSchemaMetadata"}, "Class SetSchemaMetadata could not be found."),
    ({"transforms": "a", "transforms.a.type": "engine.transforms.set_schema_metadata.SetSchemaMetadata"},
     "This class is abstract and cannot be created. Did you mean"),
    ({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.negate": "true"},
     "Config 'transforms.a.negate' was provided but there is no config 'transforms.a.predicate' defining a "
     "predicate to be negated."),
    ({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p"},
     "Config 'transforms.a.predicate' refers to the predicate 'p', which is not listed in 'predicates'."),
    ({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p", "predicates": "p"},
     'Missing required configuration "predicates.p.type"'),
    ({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p", "predicates": "p",
      "predicates.p.type": "engine.transforms.filter.Filter"}, "does not implement the Predicate interface"),
    ({"transforms": "a,a", "transforms.a.type": "Filter"}, "Duplicate alias provided."),
    ({"transforms": "a", "transforms.a.type": "RegexRouter"}, 'Missing required configuration "regex"'),
])
def test_config_errors(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigException) as info:
        TransformationChain.from_config(props)
    assert message in str(info.value)


def test_stages_built_before_a_failure_are_closed(user_module: str) -> None:
    module = sys.modules.get(user_module) or __import__(user_module)
    with pytest.raises(ValueError, match="boom"):
        TransformationChain.from_config({
            "transforms": "up,bad", "transforms.up.type": f"{user_module}.Upper",
            "transforms.bad.type": f"{user_module}.Exploding"})
    assert len(module.CLOSED) == 1


def test_close_closes_every_stage(user_module: str) -> None:
    module = __import__(user_module)
    chain = TransformationChain.from_config({
        "transforms": "a,b", "transforms.a.type": f"{user_module}.Upper", "transforms.b.type": f"{user_module}.Upper"})
    chain.close()
    assert len(module.CLOSED) == 2
    assert "chain_user_smt.Upper" in repr(chain)


def test_stage_exposes_its_class() -> None:
    chain = TransformationChain.from_config({"transforms": "f", "transforms.f.type": "Filter"})
    assert chain.stages[0].transform_class is Filter
