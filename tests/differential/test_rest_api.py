"""The same REST calls to Java Kafka Connect 4.1 and to our worker, compared answer by answer.

Every endpoint of the API we claim (Kafka Connect 3.9's, README), error cases included, with
Connect's FileStream connectors on Java's side and our twins on ours. Where 4.1 answers differently
from 3.9 the case says so. A difference is either fixed in the engine or kept as a :class:`Known`
with its reason (docs/compatibility.md, "Differences found by the differential suite"); a new one,
or a fixed one still listed, fails its case. To add a case, append to ``CASES`` (issue 26 extends
this table for 4.1's features). ``DIFF_SHOW=1`` prints both answers of every call.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.differential.java_connect import JavaConnect
from tests.differential.rest_diff import (
    Answer,
    Await,
    Call,
    Case,
    Known,
    Side,
    Sleep,
    differences,
    normalise,
    patched,
    send,
    status_is,
    wait,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def source(name: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "{src}",
        "tasks.max": "1",
        "file": "{dir}/" + name + ".txt",
        "topic": "{topic}-" + name,
        **extra,
    }


def sink(name: str, **extra: str) -> dict[str, str]:
    """Both sides' sinks share the broker: each its own consumer group (Connect's default, connect-<name>,
    would be one group for two different consumers)."""
    return {
        "connector.class": "{sink}",
        "tasks.max": "1",
        "file": "{dir}/" + name + "-out.txt",
        "topics": "{topic}-" + name,
        "consumer.override.group.id": "{topic}-" + name,
        **extra,
    }


def create(name: str, config: dict[str, str], known: Known | None = None, **fields: Any) -> Call:
    return Call("POST", "/connectors", {"name": name, "config": config, **fields}, known=known)


def running(name: str, tasks: int = 1) -> Await:
    return Await(f"/connectors/{name}/status", status_is("RUNNING", ("RUNNING",) * tasks))


def in_state(name: str, state: str, tasks: tuple[str, ...] | None = None) -> Await:
    return Await(f"/connectors/{name}/status", status_is(state, tasks))


def delete(name: str) -> Call:
    return Call("DELETE", f"/connectors/{name}")


def only_filestream(answer: Answer) -> Answer:
    """Plugin lists differ by what is installed: keep the FileStream connectors, by simple name."""
    if not isinstance(answer.body, list):
        return answer
    kept = [
        {**p, "class": p["class"].rsplit(".", 1)[-1], "version": "<version>"}
        for p in answer.body
        if str(p.get("class", "")).rsplit(".", 1)[-1].startswith("FileStream")
    ]
    return Answer(answer.status, kept, answer.headers)


BOTH = ("4.4", "4.1")  # cases that also run against Java Connect 4.1

# ---- known differences (docs/compatibility.md, "Differences found by the differential suite") ----------------

ENGINE_VERSION = Known(
    "GET / adds engine_version (our addition)",
    patched(edit=lambda body: {k: v for k, v in body.items() if k != "engine_version"}),
)
GROUP_ID_DEFINITION = {
    "name": "consumer.override.group.id",
    "type": "STRING",
    "required": False,
    "default_value": None,
    "importance": "HIGH",
    "documentation": "A unique string that identifies the consumer group this consumer belongs "
    "to. This property is required if the consumer uses either the group management functionality by using "
    "<code>subscribe(topic)</code> or the Kafka-based offset management strategy.",
    "group": None,
    "width": "NONE",
    "display_name": "group.id",
    "dependents": [],
    "order_in_group": -1,  # 4.4's name ("order" in 4.1)
}
OVERRIDE_DEFINITION = Known(
    "validate with a client override key: Connect lists it again with the Kafka client's own definition",
    patched(
        edit=lambda body: {
            **body,
            "configs": [
                *body["configs"],
                {
                    "definition": GROUP_ID_DEFINITION,
                    "value": {
                        "name": "consumer.override.group.id",
                        "value": "{topic}-v",
                        "recommended_values": [],
                        "errors": [],
                        "visible": True,
                    },
                },
            ],
        }
    ),
)
ALLOW_ON_405 = Known(
    "a 405 carries an Allow header (Connect's exception mapper drops it)", patched(headers=())
)
PATCH_NAME = Known(
    "PATCH .../config with another name: Connect stores it, we refuse it as PUT does",
    patched(
        200,
        {
            "name": "uc",
            "type": "source",
            "tasks": [{"connector": "uc", "task": 0}],
            "config": {
                "connector.class": "FileStreamSource",
                "tasks.max": "1",
                "file": "{dir}/uc.txt",
                "topic": "{topic}-uc",
                "batch.size": "-1",
                "name": "different",
            },
        },
    ),
)
# Config definitions (GET .../config, validate): what must differ, and what only 4.1 has.
# our additions (docs/compatibility.md), and their groups
OUR_KEYS = {
    "offsets.reset.on.delete",
    "record.rate.limit",
    "bytes.per.second.max",
    "offsets.identity.mismatch",
}
OUR_GROUPS = {"Restart Policy", "Rate Limits", "Offsets"}
SOURCE_DLQ_KEYS = {
    "errors.deadletterqueue.topic.name",
    "errors.deadletterqueue.topic.replication.factor",
    "errors.deadletterqueue.context.headers.enable",
}  # Connect's sink keys, ours on sources too
CONVERTER_KEYS = {"key.converter", "value.converter", "header.converter"}


def _definition(entry: dict[str, Any]) -> dict[str, Any] | None:
    definition: dict[str, Any] | None = entry.get("definition", entry)
    return definition


def source_config_defs(answer: Answer) -> Answer:
    """:func:`config_defs` for a source connector: its dead letter queue keys are our addition too."""
    return config_defs(answer, SOURCE_DLQ_KEYS)


def config_defs(answer: Answer, also_ours: frozenset[str] | set[str] = frozenset()) -> Answer:
    """Config definitions compared without: the framework keys' documentation (ours describes this engine);
    4.1's ``*.plugin.version`` keys and converter defaults/recommendations (KIP-891, not in 3.9); our own
    keys; and with each group's ``order`` renumbered over the keys left."""
    body = answer.body
    entries = body.get("configs") if isinstance(body, dict) else body
    if not isinstance(entries, list):
        return answer
    kept = []
    for entry in entries:
        definition = _definition(entry)
        if definition is None:  # a value without a definition (an override key)
            kept.append(entry)
            continue
        name: str = definition.get("name") or ""
        group = definition.get("group")
        if name.endswith("plugin.version") or name in OUR_KEYS or name in also_ours or group in OUR_GROUPS:
            continue
        definition = dict(definition)
        if group is not None:
            definition.pop("documentation", None)
        if name in CONVERTER_KEYS:
            definition["default_value"] = None
        if "definition" in entry:
            value = dict(entry["value"])
            if name in CONVERTER_KEYS:
                value.update(value=None, recommended_values=[])
            kept.append({"definition": definition, "value": value})
        else:
            kept.append(definition)
    ranks: dict[Any, int] = {}
    for entry in kept:
        definition = _definition(entry) or {}
        order = "order_in_group" if "order_in_group" in definition else "order"  # 4.4 renamed it
        if definition.get("group") is not None and definition.get(order, -1) >= 0:
            ranks[definition["group"]] = ranks.get(definition["group"], 0) + 1
            definition[order] = ranks[definition["group"]]
    if isinstance(body, dict):
        groups = [g for g in body.get("groups", []) if g not in OUR_GROUPS]
        errors = sum(len((e.get("value") or {}).get("errors", [])) for e in kept)
        body = {**body, "configs": kept, "groups": groups, "error_count": errors}
        return Answer(answer.status, body, answer.headers)
    return Answer(answer.status, kept, answer.headers)


def example_loggers(answer: Answer) -> Answer:
    """``GET /admin/loggers`` lists each runtime's own loggers (log4j's, ours): the ones a case set are compared."""
    if isinstance(answer.body, dict):
        kept = {k: v for k, v in answer.body.items() if k.startswith("org.example")}
        return Answer(answer.status, kept, answer.headers)
    return answer


def without_null_offsets(answer: Answer) -> Answer:
    """Right after DELETE .../offsets, Java sometimes still lists the reset partitions with a null offset."""
    body = answer.body
    if isinstance(body, dict) and isinstance(body.get("offsets"), list):
        offsets = [o for o in body["offsets"] if o.get("offset") is not None]
        return Answer(answer.status, {"offsets": offsets}, answer.headers)
    return answer


CASES: list[Case] = [
    Case("root", (Call("GET", "/", known=ENGINE_VERSION),), versions=BOTH),
    Case("health", (Call("GET", "/health"),)),
    Case(
        "plugins",
        (
            Call("GET", "/connector-plugins", normalise=only_filestream),
            Call("GET", "/connector-plugins?connectorsOnly=true", normalise=only_filestream),
        ),
    ),
    Case(
        "plugin-config",
        (
            Call("GET", "/connector-plugins/FileStreamSource/config", normalise=source_config_defs),
            Call("GET", "/connector-plugins/FileStreamSinkConnector/config", normalise=config_defs),
            Call("GET", "/connector-plugins/NoSuchPlugin/config"),
        ),
    ),
    Case(
        "validate",
        (
            Call(
                "PUT",
                "/connector-plugins/FileStreamSource/config/validate",
                source("v"),
                normalise=source_config_defs,
            ),
            Call(
                "PUT",
                "/connector-plugins/FileStreamSink/config/validate",
                sink("v"),
                normalise=config_defs,
                known=OVERRIDE_DEFINITION,
            ),
            Call(
                "PUT",
                "/connector-plugins/FileStreamSource/config/validate",
                {"connector.class": "{src}", "file": "{dir}/v.txt"},
                normalise=source_config_defs,
            ),
            Call(
                "PUT",
                "/connector-plugins/FileStreamSource/config/validate",
                source("v", **{"batch.size": "0"}),
                normalise=source_config_defs,
            ),
            Call(
                "PUT", "/connector-plugins/FileStreamSource/config/validate", sink("v"), normalise=config_defs
            ),
            Call("PUT", "/connector-plugins/FileStreamSource/config/validate", {"file": "x"}),
            Call(
                "PUT",
                "/connector-plugins/NoSuchPlugin/config/validate",
                {"connector.class": "NoSuchPlugin"},
            ),
            Call(
                "PUT",
                "/connector-plugins/FileStreamSource/config/validate",
                raw="{bad json",
                headers={"Content-Type": "application/json"},
            ),
            Call(
                "PUT",
                "/connector-plugins/FileStreamSource/config/validate",
                raw="nope",
                headers={"Content-Type": "application/json"},
            ),
            Call(
                "PUT",
                "/connector-plugins/FileStreamSource/config/validate",
                raw='{"a" 1}',
                headers={"Content-Type": "application/json"},
            ),
            Call(
                "PUT",
                "/connector-plugins/FileStreamSource/config/validate",
                raw='{"a": @}',
                headers={"Content-Type": "application/json"},
            ),
            Call(
                "PUT",
                "/connector-plugins/FileStreamSource/config/validate",
                raw="",
                headers={"Content-Type": "application/json"},
            ),
        ),
    ),
    Case(
        "create-and-read",
        versions=BOTH,
        steps=(
            create("cr", source("cr")),
            running("cr"),
            Call("GET", "/connectors"),
            Call("GET", "/connectors/cr"),
            Call("GET", "/connectors/cr/config"),
            Call("GET", "/connectors/cr/status"),
            Call("GET", "/connectors/cr/tasks"),
            Call("GET", "/connectors/cr/tasks/0/status"),
            Call("GET", "/connectors/cr/tasks/1/status"),
            Call("GET", "/connectors/cr/tasks-config"),
            Call("GET", "/connectors?expand=status"),
            Call("GET", "/connectors?expand=info"),
            Call("GET", "/connectors?expand=status&expand=info"),
            Call("GET", "/connectors/cr/"),
            delete("cr"),
            Call("GET", "/connectors/cr"),
        ),
    ),
    Case(
        "create-errors",
        versions=BOTH,
        steps=(
            create("ce", source("ce")),
            running("ce"),
            create("ce", source("ce")),
            create("ce2", {"connector.class": "NoSuchConnector", "tasks.max": "1"}),
            create("ce3", source("ce3", **{"batch.size": "zero"})),
            create("ce4", {"connector.class": "{src}", "file": "{dir}/x"}),
            Call("POST", "/connectors", {"config": source("ce5")}),
            Call("POST", "/connectors", {"name": "ce6"}),
            Call("POST", "/connectors", raw="{not json", headers={"Content-Type": "application/json"}),
            Call("POST", "/connectors", raw="name=x", headers={"Content-Type": "text/plain"}),
            create("ce7", source("ce7"), initial_state="BOGUS"),
            create("", source("ce8")),
            create("ce9", {**source("ce9"), "name": "other"}),
            Call("GET", "/connectors/nope"),
            Call("GET", "/connectors/nope/config"),
            Call("GET", "/connectors/nope/status"),
            Call("GET", "/connectors/nope/tasks"),
            Call("GET", "/connectors/nope/tasks/0/status"),
            Call("GET", "/connectors/nope/topics"),
            Call("GET", "/connectors/nope/offsets"),
            Call("PUT", "/connectors/nope/pause"),
            Call("PUT", "/connectors/nope/resume"),
            Call("PUT", "/connectors/nope/stop"),
            Call("POST", "/connectors/nope/restart"),
            Call("POST", "/connectors/nope/tasks/0/restart"),
            Call("DELETE", "/connectors/nope"),
            Call("PATCH", "/connectors/nope/config", {"tasks.max": "2"}),
            Call("DELETE", "/connectors/nope/offsets"),
            Call("PATCH", "/connectors/nope/offsets", {"offsets": []}),
            delete("ce"),
        ),
    ),
    Case(
        "initial-states",
        (
            create("is-p", source("is-p"), initial_state="PAUSED"),
            in_state("is-p", "PAUSED"),
            Call("GET", "/connectors/is-p/status"),
            create("is-s", source("is-s"), initial_state="STOPPED"),
            in_state("is-s", "STOPPED"),
            Call("GET", "/connectors/is-s/status"),
            Call("GET", "/connectors/is-s/tasks"),
            create("is-r", source("is-r"), initial_state="RUNNING"),
            running("is-r"),
            delete("is-p"),
            delete("is-s"),
            delete("is-r"),
        ),
    ),
    Case(
        "update-config",
        (
            Call("PUT", "/connectors/uc/config", source("uc")),
            running("uc"),
            Call("PUT", "/connectors/uc/config", source("uc", **{"batch.size": "10"})),
            running("uc"),
            Call("GET", "/connectors/uc/config"),
            Call("PATCH", "/connectors/uc/config", {"batch.size": "20", "tasks.max": None}),
            running("uc"),
            Call("GET", "/connectors/uc/config"),
            Call("PUT", "/connectors/uc/config", source("uc", **{"batch.size": "-1"})),
            Call("PUT", "/connectors/uc/config", {**source("uc"), "name": "different"}),
            Call("PUT", "/connectors/uc/config", raw="[1, 2]", headers={"Content-Type": "application/json"}),
            Call("PATCH", "/connectors/uc/config", {"name": "different"}, known=PATCH_NAME),
            delete("uc"),
        ),
    ),
    Case(
        "pause-resume-stop",
        (
            create("prs", source("prs")),
            running("prs"),
            Call("PUT", "/connectors/prs/pause"),
            in_state("prs", "PAUSED", ("PAUSED",)),
            Call("GET", "/connectors/prs/status"),
            Call("PUT", "/connectors/prs/pause"),
            Call("PUT", "/connectors/prs/resume"),
            running("prs"),
            Call("PUT", "/connectors/prs/resume"),
            Call("PUT", "/connectors/prs/stop"),
            in_state("prs", "STOPPED", ()),
            Call("GET", "/connectors/prs/status"),
            Call("GET", "/connectors/prs/tasks"),
            Call("PUT", "/connectors/prs/stop"),
            Call("PUT", "/connectors/prs/pause"),
            in_state("prs", "PAUSED"),
            Call("PUT", "/connectors/prs/resume"),
            running("prs"),
            delete("prs"),
        ),
    ),
    Case(
        "restart",
        (
            create("rs", source("rs")),
            running("rs"),
            Call("POST", "/connectors/rs/restart"),
            running("rs"),
            Call("POST", "/connectors/rs/restart?includeTasks=true"),
            running("rs"),
            Call("POST", "/connectors/rs/restart?includeTasks=true&onlyFailed=true"),
            running("rs"),
            Call("POST", "/connectors/rs/restart?includeTasks=false&onlyFailed=true"),
            Call("POST", "/connectors/rs/tasks/0/restart"),
            running("rs"),
            Call("POST", "/connectors/rs/tasks/7/restart"),
            Call("POST", "/connectors/rs/tasks/x/restart"),
            delete("rs"),
        ),
    ),
    Case(
        "topics",
        (
            create("tp", source("tp")),
            running("tp"),
            Call("GET", "/connectors/tp/topics"),
            Call("PUT", "/connectors/tp/topics/reset"),
            Call("GET", "/connectors/tp/topics"),
            delete("tp"),
        ),
    ),
    Case(
        "source-offsets",
        (
            create("so", source("so")),
            running("so"),
            Call("GET", "/connectors/so/offsets"),
            Call(
                "PATCH",
                "/connectors/so/offsets",
                {"offsets": [{"partition": {"filename": "{dir}/so.txt"}, "offset": {"position": 5}}]},
            ),
            Call("DELETE", "/connectors/so/offsets"),
            Call("PUT", "/connectors/so/stop"),
            in_state("so", "STOPPED", ()),
            Call(
                "PATCH",
                "/connectors/so/offsets",
                {"offsets": [{"partition": {"filename": "{dir}/so.txt"}, "offset": {"position": 5}}]},
            ),
            Call("GET", "/connectors/so/offsets"),
            Call(
                "PATCH",
                "/connectors/so/offsets",
                {"offsets": [{"partition": {"filename": "{dir}/so.txt"}, "offset": {"position": "x"}}]},
            ),
            Call(
                "PATCH",
                "/connectors/so/offsets",
                {"offsets": [{"partition": {"nope": 1}, "offset": {"position": 1}}]},
            ),
            Call("PATCH", "/connectors/so/offsets", {"offsets": []}),
            Call("PATCH", "/connectors/so/offsets", {}),
            Call(
                "PATCH", "/connectors/so/offsets", raw="{oops", headers={"Content-Type": "application/json"}
            ),
            Call("DELETE", "/connectors/so/offsets"),
            Call("GET", "/connectors/so/offsets", normalise=without_null_offsets),
            delete("so"),
        ),
    ),
    Case(
        "sink-offsets",
        (
            create("sk", sink("sk")),
            running("sk"),
            Call("GET", "/connectors/sk/offsets"),
            Call("PUT", "/connectors/sk/stop"),
            in_state("sk", "STOPPED", ()),
            Call(
                "PATCH",
                "/connectors/sk/offsets",
                {
                    "offsets": [
                        {
                            "partition": {"kafka_topic": "{topic}-sk", "kafka_partition": 0},
                            "offset": {"kafka_offset": 3},
                        }
                    ]
                },
            ),
            Call("GET", "/connectors/sk/offsets"),
            Call(
                "PATCH",
                "/connectors/sk/offsets",
                {"offsets": [{"partition": {"kafka_topic": "{topic}-sk"}, "offset": {"kafka_offset": 3}}]},
            ),
            Call(
                "PATCH",
                "/connectors/sk/offsets",
                {
                    "offsets": [
                        {
                            "partition": {"kafka_topic": "{topic}-sk", "kafka_partition": 0},
                            "offset": {"kafka_offset": -1},
                        }
                    ]
                },
            ),
            Call("DELETE", "/connectors/sk/offsets"),
            Call("GET", "/connectors/sk/offsets"),
            delete("sk"),
        ),
    ),
    Case(
        "loggers",
        (
            Call("GET", "/admin/loggers/root"),
            Call("GET", "/admin/loggers/no.such.logger.anywhere"),
            Call("PUT", "/admin/loggers/org.example.diff", {"level": "DEBUG"}),
            Call("GET", "/admin/loggers/org.example.diff"),
            Call("PUT", "/admin/loggers/org.example.diff", {"level": "NOPE"}),
            Call("PUT", "/admin/loggers/org.example.diff", {}),
            Call("PUT", "/admin/loggers/org.example.diff?scope=cluster", {"level": "INFO"}),
            Call("PUT", "/admin/loggers/org.example.diff", {"level": "WARN"}),
            Call("PUT", "/admin/loggers/org.example.diff.child", {"level": "ERROR"}),
            Call("GET", "/admin/loggers", normalise=example_loggers),
            Call("PUT", "/admin/loggers/org.example.diff", {"level": "INFO"}),
            Call("GET", "/admin/loggers", normalise=example_loggers),
        ),
    ),
    Case(
        "http",
        (
            Call("GET", "/connectors/"),
            Call("HEAD", "/connectors"),
            Call("OPTIONS", "/connectors"),
            Call("OPTIONS", "/connectors/x/config", headers={"Accept": "text/plain"}),
            Call(
                "PUT",
                "/connector-plugins/FileStreamSource/config/validate",
                raw="x=y",
                headers={"Content-Type": "text/plain"},
            ),
            Call("PUT", "/admin/loggers/root", raw="level=INFO", headers={"Content-Type": "text/plain"}),
            Call("GET", "/no/such/path"),
            Call("DELETE", "/connectors", known=ALLOW_ON_405),
            Call("POST", "/connectors/x/pause", known=ALLOW_ON_405),
        ),
    ),
]

STANDALONE_CASES: list[Case] = [
    Case(
        "standalone-basics",
        (
            Call("GET", "/", known=ENGINE_VERSION),
            Call("GET", "/health"),
            create("sb", source("sb")),
            running("sb"),
            Call("GET", "/connectors/sb/status"),
            Call("GET", "/connectors/sb/tasks-config"),
            Call("PUT", "/connectors/sb/stop"),
            in_state("sb", "STOPPED", ()),
            Call("GET", "/connectors/sb/tasks-config"),
            Call(
                "PATCH",
                "/connectors/sb/offsets",
                {"offsets": [{"partition": {"filename": "{dir}/sb.txt"}, "offset": {"position": 2}}]},
            ),
            Call("GET", "/connectors/sb/offsets"),
            Call("DELETE", "/connectors/sb/offsets"),
            Call("POST", "/connectors/sb/tasks", [{"a": "b"}]),
            Call("PUT", "/connectors/sb/fence"),
            Call("PUT", "/admin/loggers/org.example.sa?scope=cluster", {"level": "INFO"}),
            delete("sb"),
        ),
        modes=("standalone",),
    ),
]


def _run(java: Side, ours: Side, case: Case) -> list[str]:
    """Run a case on both sides; the differences that are not as recorded."""
    failures: list[str] = []
    show = bool(os.environ.get("DIFF_SHOW"))
    for n, step in enumerate(case.steps):
        if isinstance(step, Await):
            wait(java, step)
            wait(ours, step)
            continue
        if isinstance(step, Sleep):
            continue
        theirs, mine = (
            normalise(java, send(java, step), step.path),
            normalise(ours, send(ours, step), step.path),
        )
        if step.normalise is not None:
            theirs, mine = step.normalise(theirs), step.normalise(mine)
        where = f"step {n}: {step.method} {step.path}"
        if show:
            sys.stdout.write(f"\n{case.id} {where}\n  java: {theirs}\n  ours: {mine}\n")
        if not step.compare:
            continue
        if step.known is None:
            if theirs != mine:
                detail = "\n    ".join(
                    [f"status: java {theirs.status} | ours {mine.status}"] * (theirs.status != mine.status)
                    + [f"headers: java {dict(theirs.headers)} | ours {dict(mine.headers)}"]
                    * (theirs.headers != mine.headers)
                    + differences(theirs.body, mine.body)
                )
                failures.append(f"{where}\n    {detail}")
        elif mine == theirs:
            failures.append(f"{where}: the known difference ({step.known.reason}) is gone: drop its Known")
        elif step.known.patch(mine) != theirs:
            failures.append(
                f"{where}: differs beyond the known difference ({step.known.reason})\n"
                f"  java:          {theirs}\n  ours:          {mine}\n"
                f"  ours, patched: {step.known.patch(mine)}"
            )
    return failures


def _side(name: str, url: str, directory: Path, mode: str) -> Side:
    directory.mkdir(parents=True, exist_ok=True)
    return Side(name, url, str(directory), f"diff-{name}-{uuid.uuid4().hex[:6]}", mode)


def sides(request: pytest.FixtureRequest, mode: str, version: str) -> tuple[Side, Side]:
    """(java, ours) in ``mode`` with Java Connect ``version``; its Java worker starts on first use."""
    pairs: dict[tuple[str, str], tuple[Side, Side]] = request.getfixturevalue("side_pairs")
    if (mode, version) not in pairs:
        tag = version.replace(".", "")
        root = request.getfixturevalue("tmp_path_factory").mktemp(f"differential-{mode}-{tag}")
        if mode == "distributed":
            java: JavaConnect = request.getfixturevalue(f"java_connect{tag}")
            ours = request.getfixturevalue("ours_distributed").workers[0].url
        else:
            java = request.getfixturevalue(f"java_standalone{tag}")
            ours = request.getfixturevalue("ours_standalone")
        pairs[mode, version] = (
            _side("java", java.url, root / "java", mode),
            _side("ours", ours, root / "ours", mode),
        )
    return pairs[mode, version]


def _runs(cases: list[Case], mode: str) -> list[Any]:
    return [
        pytest.param(case, version, id=f"{case.id}-{version}")
        for case in cases
        if mode in case.modes
        for version in case.versions
    ]


@pytest.mark.parametrize(("case", "version"), _runs(CASES, "distributed"))
def test_distributed(case: Case, version: str, request: pytest.FixtureRequest) -> None:
    failures = _run(*sides(request, "distributed", version), case)
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize(("case", "version"), _runs([*CASES, *STANDALONE_CASES], "standalone"))
def test_standalone(case: Case, version: str, request: pytest.FixtureRequest) -> None:
    failures = _run(*sides(request, "standalone", version), case)
    assert not failures, "\n\n".join(failures)


# Known is re-exported for the table's readers (and issue 26's additions)
__all__ = ["CASES", "STANDALONE_CASES", "Known", "patched"]
