"""Connect's Kafka client keys -> aiokafka arguments: the table, Connect's precedence, the override
policies, TLS stores and SASL, and secrets kept out of logs."""

from __future__ import annotations

import base64
import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from engine.config.kafka_clients import KafkaClients, OverridePolicy, translate
from engine.config.kafka_clients.sasl import (
    ClientCredentialsTokenProvider,
    UnsecuredTokenProvider,
    sasl_arguments,
)
from engine.config.kafka_clients.tls import client_context, normalized_pem
from engine.config.masking import mask_config
from engine.config.worker import WorkerConfig
from engine.errors import ConfigError
from tests.integration.tls import PASSWORD, Certificates, make_certificates

SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cret";'
PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" password="pw";'


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("certs"))


# ---- the translation table -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "key", "value", "argument", "expected"),
    [
        ("producer", "acks", "all", "acks", "all"),
        ("producer", "acks", "-1", "acks", "all"),
        ("producer", "acks", "1", "acks", 1),
        ("producer", "acks", "0", "acks", 0),
        ("producer", "compression.type", "zstd", "compression_type", "zstd"),
        ("producer", "compression.type", "none", "compression_type", None),
        ("producer", "batch.size", "65536", "max_batch_size", 65536),
        ("producer", "linger.ms", "20", "linger_ms", 20),
        ("producer", "max.request.size", "2097152", "max_request_size", 2097152),
        ("producer", "enable.idempotence", "true", "enable_idempotence", True),
        ("producer", "transaction.timeout.ms", "30000", "transaction_timeout_ms", 30000),
        ("consumer", "isolation.level", "read_committed", "isolation_level", "read_committed"),
        ("consumer", "max.poll.records", "100", "max_poll_records", 100),
        ("consumer", "fetch.min.bytes", "1024", "fetch_min_bytes", 1024),
        ("consumer", "fetch.max.bytes", "1048576", "fetch_max_bytes", 1048576),
        ("consumer", "fetch.max.wait.ms", "250", "fetch_max_wait_ms", 250),
        ("consumer", "max.partition.fetch.bytes", "4096", "max_partition_fetch_bytes", 4096),
        ("consumer", "session.timeout.ms", "30000", "session_timeout_ms", 30000),
        ("consumer", "heartbeat.interval.ms", "3000", "heartbeat_interval_ms", 3000),
        ("consumer", "max.poll.interval.ms", "600000", "max_poll_interval_ms", 600000),
        ("consumer", "auto.offset.reset", "latest", "auto_offset_reset", "latest"),
        ("consumer", "check.crcs", "false", "check_crcs", False),
        ("consumer", "client.rack", "eu-1a", "client_rack", "eu-1a"),
        ("admin", "request.timeout.ms", "15000", "request_timeout_ms", 15000),
        ("admin", "retry.backoff.ms", "50", "retry_backoff_ms", 50),
        ("admin", "metadata.max.age.ms", "1000", "metadata_max_age_ms", 1000),
        ("admin", "connections.max.idle.ms", "1000", "connections_max_idle_ms", 1000),
        ("producer", "client.id", "mine", "client_id", "mine"),
        ("consumer", "bootstrap.servers", "other:9092", "bootstrap_servers", "other:9092"),
    ],
)
def test_each_supported_key_becomes_its_aiokafka_argument(
    role: Any, key: str, value: str, argument: str, expected: object
) -> None:
    assert translate({key: value}, role) == {argument: expected}


def test_assignors_map_to_aiokafkas_and_serializers_are_accepted_only_as_connect_sets_them() -> None:
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    args = translate(
        {
            "partition.assignment.strategy": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
            "key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
        },
        "consumer",
    )
    assert args == {"partition_assignment_strategy": (RoundRobinPartitionAssignor,)}
    with pytest.raises(ConfigError, match=r"consumer\.override\.value\.deserializer"):
        translate(
            {"value.deserializer": "StringDeserializer"},
            "consumer",
            name_of=lambda k: "consumer.override." + k,
        )


@pytest.mark.parametrize(
    ("props", "key", "message"),
    [
        (
            {"producer.lingr.ms": "5"},
            "producer.lingr.ms",
            "Unknown configuration 'producer.lingr.ms': not a Kafka producer client setting",
        ),
        (
            {"producer.retries": "3"},
            "producer.retries",
            "Configuration 'producer.retries' is not supported (aiokafka has no such setting)",
        ),
        (
            {"consumer.linger.ms": "5"},
            "consumer.linger.ms",
            "Configuration 'consumer.linger.ms' is not a consumer setting (it is a producer setting)",
        ),
        (
            {"admin.acks": "all"},
            "admin.acks",
            "Configuration 'admin.acks' is not an admin setting (it is a producer setting)",
        ),
        (
            {"producer.acks": "some"},
            "producer.acks",
            "Invalid value some for configuration producer.acks: String must be one of: all, -1, 0, 1",
        ),
        (
            {"consumer.fetch.min.bytes": "x"},
            "consumer.fetch.min.bytes",
            "Invalid value x for configuration consumer.fetch.min.bytes: Not a number of type INT",
        ),
        (
            {"ssl.engine.factory.class": "x.Factory"},
            "ssl.engine.factory.class",
            "Configuration 'ssl.engine.factory.class' is not supported (TLS comes from Python's ssl module (OpenSSL); no "
            "Java security provider)",
        ),
        (
            {"sasl.kerberos.service.name": "kafka"},
            "sasl.kerberos.service.name",
            "Configuration 'sasl.kerberos.service.name' is not supported (GSSAPI (Kerberos) is not supported)",
        ),
        (
            {"ssl.trustmanager.algorithmm": "PKIX"},
            "ssl.trustmanager.algorithmm",
            "Unknown configuration 'ssl.trustmanager.algorithmm': not a Kafka admin client setting",
        ),
        (
            {"linger.ms": "5"},
            "linger.ms",
            "'linger.ms' is a producer setting: set producer.linger.ms for connectors' "
            "producers (the worker's own clients keep Connect's settings)",
        ),
        (
            {"consumer.group.id": "shared"},
            "consumer.group.id",
            "one group for every sink connector would make them share their partitions: set consumer.override.group.id "
            "per connector",
        ),
        (
            {"security.protocol": "TLS"},
            "security.protocol",
            "Invalid value TLS for configuration security.protocol: String must be one of: PLAINTEXT, SSL, "
            "SASL_PLAINTEXT, SASL_SSL",
        ),
        (
            {"connector.client.config.override.policy": "Everything"},
            "connector.client.config.override.policy",
            "Invalid value Everything for configuration connector.client.config.override.policy: choose All, None, "
            "Principal or Allowlist (custom policy classes are not supported)",
        ),
    ],
)
def test_a_bad_worker_key_stops_the_start_naming_it(props: dict[str, str], key: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        WorkerConfig.parse(props)
    assert message in caught.value.errors.get(key, [str(caught.value)])[0] or message in str(caught.value)
    assert key in str(caught.value)


def test_every_bad_worker_key_is_named_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        WorkerConfig.parse({"producer.foo": "1", "consumer.retries": "3", "admin.bar": "x"})
    assert set(caught.value.errors) == {"producer.foo", "consumer.retries", "admin.bar"}


# ---- Connect's precedence --------------------------------------------------------------------


def test_top_level_keys_go_to_the_worker_and_admin_clients_prefixed_ones_to_connectors() -> None:
    """Worker.baseProducerConfigs takes only producer.*; adminConfigs the top level, then admin.*."""
    clients = WorkerConfig.parse(
        {
            "bootstrap.servers": "b:9092",
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": SCRAM,
            "retry.backoff.ms": "200",
            "producer.linger.ms": "10",
            "producer.compression.type": "lz4",
            "consumer.isolation.level": "read_committed",
            "admin.request.timeout.ms": "9000",
        }
    ).kafka
    assert clients.own() == {
        "retry_backoff_ms": 200,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "alice",
        "sasl_plain_password": "s3cret",
    }
    assert clients.worker_level("producer") == {"linger_ms": 10, "compression_type": "lz4"}
    assert clients.worker_level("consumer") == {"isolation_level": "read_committed"}
    assert clients.worker_level("admin") == {**clients.own(), "request_timeout_ms": 9000}


def test_connector_overrides_land_on_the_worker_level_settings() -> None:
    clients = WorkerConfig.parse(
        {
            "producer.security.protocol": "SASL_PLAINTEXT",
            "producer.sasl.mechanism": "PLAIN",
            "producer.sasl.jaas.config": PLAIN,
            "producer.linger.ms": "10",
        }
    ).kafka
    args = clients.for_connector(
        "producer",
        {
            "producer.override.sasl.jaas.config": SCRAM.replace("Scram", "Plain").replace(
                ".scram.", ".plain."
            ),
            "producer.override.linger.ms": "0",
            "producer.override.acks": "1",
            "consumer.override.max.poll.records": "9",
        },
    )
    assert args == {
        "linger_ms": 0,
        "acks": 1,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "alice",
        "sasl_plain_password": "s3cret",
    }
    assert clients.for_connector("producer", {}) == clients.worker_level("producer")


def test_an_override_error_names_the_key_the_user_wrote() -> None:
    clients = WorkerConfig.parse(
        {
            "producer.security.protocol": "SASL_PLAINTEXT",
            "producer.sasl.mechanism": "SCRAM-SHA-256",
            "producer.sasl.jaas.config": SCRAM,
        }
    ).kafka
    with pytest.raises(ConfigError) as caught:
        clients.for_connector("producer", {"producer.override.sasl.jaas.config": PLAIN})
    assert caught.value.errors == {
        "producer.override.sasl.jaas.config": [
            "sasl.mechanism=SCRAM-SHA-256 needs ScramLoginModule, not org.apache.kafka.common.security.plain."
            "PlainLoginModule"
        ]
    }


def test_worker_client_keys_may_come_from_config_providers(tmp_path: Path) -> None:
    secrets = tmp_path / "kafka.properties"
    secrets.write_text(f"jaas={SCRAM}\n")
    worker = WorkerConfig.parse(
        {
            "config.providers": "file",
            "security.protocol": "SASL_SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.certificates": "",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.jaas.config": f"${{file:{secrets}:jaas}}",
        }
    )
    own = worker.kafka.own()
    assert (own["sasl_plain_username"], own["sasl_plain_password"]) == ("alice", "s3cret")
    assert worker.raw["sasl.jaas.config"] == f"${{file:{secrets}:jaas}}"  # the raw value stays unresolved


# ---- the override policy ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "name"),
    [
        (None, "All"),
        ("All", "All"),
        ("None", "None"),
        ("Principal", "Principal"),
        ("PrincipalConnectorClientConfigOverridePolicy", "Principal"),
        ("org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy", "None"),
    ],
)
def test_policies_by_alias_or_class_name(setting: str | None, name: str) -> None:
    props = {} if setting is None else {"connector.client.config.override.policy": setting}
    assert OverridePolicy.parse(props).name == name


@pytest.mark.parametrize(
    ("policy", "key", "refused"),
    [
        ("All", "linger.ms", False),
        ("All", "sasl.jaas.config", False),
        ("None", "sasl.jaas.config", True),
        ("None", "linger.ms", True),
        ("Principal", "sasl.jaas.config", False),
        ("Principal", "sasl.mechanism", False),
        ("Principal", "security.protocol", False),
        ("Principal", "linger.ms", True),
        ("Principal", "ssl.truststore.location", True),
    ],
)
def test_policy_refusals_carry_connects_message(policy: str, key: str, refused: bool) -> None:
    message = OverridePolicy(policy).refusal(key)
    expected = (
        f"The '{policy}' policy does not allow '{key}' to be overridden in the connector configuration."
        if refused
        else None
    )
    assert message == expected


def test_validation_lists_policy_refusals_and_bad_keys_under_their_prefixed_names() -> None:
    clients = WorkerConfig.parse({"connector.client.config.override.policy": "Principal"}).kafka
    errors = clients.override_errors(
        {
            "producer.override.linger.ms": "5",
            "producer.override.sasl.mechanism": "PLAIN",
            "producer.override.lingerr.ms": "5",
            "name": "x",
        },
        "producer",
    )
    assert errors == {
        "producer.override.linger.ms": [
            "The 'Principal' policy does not allow 'linger.ms' to be overridden in the connector configuration."
        ],
        "producer.override.lingerr.ms": [
            "The 'Principal' policy does not allow 'lingerr.ms' to be overridden in the connector configuration.",
            "Unknown configuration 'producer.override.lingerr.ms': not a Kafka producer client setting",
        ],
    }


def test_a_refused_override_that_reaches_a_task_fails_it_with_connects_message() -> None:
    clients = WorkerConfig.parse({"connector.client.config.override.policy": "None"}).kafka
    with pytest.raises(
        ConfigError, match=r"Client Config Overrides not allowed \['consumer.override.max.poll.records'\]"
    ):
        clients.for_connector("consumer", {"consumer.override.max.poll.records": "5"})


def test_override_values_with_references_are_checked_only_once_resolved() -> None:
    clients = WorkerConfig.parse({}).kafka
    assert clients.override_errors({"producer.override.linger.ms": "${env:LINGER}"}, "producer") == {}


# ---- TLS (the shared builder, engine.config.ssl_context, is tested in test_ssl_context.py) ---------


def _trusts(context: ssl.SSLContext) -> bool:
    return any("connect-engine test CA" in str(c.get("subject")) for c in context.get_ca_certs())


def test_a_pem_truststore_file(certs: Certificates) -> None:
    context = client_context({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(certs.ca_pem)})
    assert _trusts(context)
    assert context.check_hostname
    assert context.verify_mode is ssl.CERT_REQUIRED


def test_a_pkcs12_truststore_also_when_typed_jks_as_java_reads_it(certs: Certificates) -> None:
    for kind in ("PKCS12", "JKS", None):
        props = {"ssl.truststore.location": str(certs.ca_p12), "ssl.truststore.password": PASSWORD}
        if kind:
            props["ssl.truststore.type"] = kind
        assert _trusts(client_context(props))


def test_inline_pem_joined_by_properties_continuations_and_an_encrypted_inline_key(
    certs: Certificates,
) -> None:
    joined = " ".join(certs.ca_pem.read_text().splitlines())  # what a \-continued .properties value becomes
    assert normalized_pem(joined) == certs.ca_pem.read_text()
    context = client_context(
        {
            "ssl.truststore.type": "PEM",
            "ssl.truststore.certificates": joined,
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": " ".join(certs.client_key_pem.splitlines()),
            "ssl.keystore.certificate.chain": certs.client_chain_pem,
            "ssl.key.password": PASSWORD,
            "ssl.endpoint.identification.algorithm": "",
        }
    )
    assert _trusts(context)
    assert context.check_hostname is False  # "" turns the host name check off, as in Java


def test_a_pkcs12_keystore(certs: Certificates) -> None:
    client_context(
        {
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(certs.client_p12),
            "ssl.keystore.password": PASSWORD,
        }
    )


@pytest.mark.parametrize(
    ("props", "key", "fragment"),
    [
        (
            {"producer.override.ssl.truststore.location": "/nonexistent/ca.p12"},
            "producer.override.ssl.truststore.location",
            "Cannot read /nonexistent/ca.p12",
        ),
        (
            {
                "producer.override.ssl.truststore.type": "PKCS12",
                "producer.override.ssl.truststore.location": "{p12}",
                "producer.override.ssl.truststore.password": "nope",
            },
            "producer.override.ssl.truststore.password",
            "the password is wrong",
        ),
        ({"producer.override.ssl.provider": "SunJSSE"}, "producer.override.ssl.provider", "not supported"),
        (
            {"producer.override.ssl.endpoint.identification.algorithm": "ldaps"},
            "producer.override.ssl.endpoint.identification.algorithm",
            "Only 'https'",
        ),
    ],
)
def test_bad_tls_overrides_name_the_key_as_written(
    certs: Certificates, props: dict[str, str], key: str, fragment: str
) -> None:
    config = {
        "producer.override.security.protocol": "SSL",
        **{k: v.format(p12=str(certs.ca_p12)) for k, v in props.items()},
    }
    with pytest.raises(ConfigError) as caught:
        WorkerConfig.parse({}).kafka.for_connector("producer", config)
    assert list(caught.value.errors) == [key]
    assert fragment in str(caught.value)


# ---- SASL ------------------------------------------------------------------------------------


def test_plain_and_scram_take_the_login_modules_credentials() -> None:
    assert sasl_arguments({"sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN}) == {
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "bob",
        "sasl_plain_password": "pw",
    }
    assert (
        sasl_arguments({"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": SCRAM})["sasl_plain_username"]
        == "alice"
    )


@pytest.mark.parametrize(
    ("props", "key", "fragment"),
    [
        (
            {"sasl.jaas.config": SCRAM},
            "sasl.mechanism",
            "'GSSAPI' is not supported",
        ),  # Java's default mechanism
        ({"sasl.mechanism": "PLAIN"}, "sasl.jaas.config", "required for sasl.mechanism=PLAIN"),
        (
            {"sasl.mechanism": "PLAIN", "sasl.jaas.config": SCRAM},
            "sasl.jaas.config",
            "needs PlainLoginModule",
        ),
        (
            {
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u";',
            },
            "sasl.jaas.config",
            "needs option(s) password",
        ),
        (
            {
                "sasl.mechanism": "OAUTHBEARER",
                "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            },
            "sasl.jaas.config",
            "unsecuredLoginStringClaim_sub",
        ),
        (
            {
                "sasl.mechanism": "OAUTHBEARER",
                "sasl.login.callback.handler.class": "no.such.Handler",
                "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            },
            "sasl.login.callback.handler.class",
            "neither Kafka's OAuthBearerLoginCallbackHandler",
        ),
    ],
)
def test_bad_sasl_settings_name_the_key(props: dict[str, str], key: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as caught:
        sasl_arguments(props)
    assert list(caught.value.errors) == [key]
    assert fragment in str(caught.value)


def _claims(token: str) -> dict[str, Any]:
    header, payload, signature = token.split(".")
    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {"alg": "none"}
    assert signature == ""
    return dict(json.loads(base64.urlsafe_b64decode(payload + "==")))


async def test_oauthbearer_unsecured_tokens_as_kafkas_unsecured_login_handler_makes_them() -> None:
    jaas = (
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'unsecuredLoginStringClaim_sub="alice" unsecuredLoginNumberClaim_tier="2" '
        'unsecuredLoginListClaim_scope=",read,write" unsecuredLoginLifetimeSeconds="120" '
        'unsecuredLoginExtension_traceId="abc";'
    )
    args = sasl_arguments({"sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": jaas})
    provider = args["sasl_oauth_token_provider"]
    assert isinstance(provider, UnsecuredTokenProvider)
    claims = _claims(await provider.token())
    assert (claims["sub"], claims["tier"], claims["scope"]) == ("alice", 2, ["read", "write"])
    assert claims["exp"] - claims["iat"] == pytest.approx(120)
    assert provider.extensions() == {"traceId": "abc"}
    assert await provider.token() == await provider.token()  # reused until near expiry


@pytest.fixture
async def token_endpoint() -> AsyncIterator[tuple[str, list[dict[str, str]]]]:
    """A real HTTP token endpoint (client-credentials grant), recording what it was sent."""
    seen: list[dict[str, str]] = []

    async def token(request: web.Request) -> web.Response:
        form = await request.post()
        seen.append(
            {
                "authorization": request.headers.get("Authorization", ""),
                **{k: str(v) for k, v in form.items()},
            }
        )
        if request.headers.get("Authorization") != "Basic " + base64.b64encode(b"engine:shh").decode():
            return web.json_response({"error": "invalid_client"}, status=401)
        return web.json_response({"access_token": f"token-{len(seen)}", "expires_in": 3600})

    app = web.Application()
    app.router.add_post("/token", token)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/token", seen
    finally:
        await runner.cleanup()


async def test_oauthbearer_client_credentials_fetch_and_cache_a_token(
    token_endpoint: tuple[str, list[dict[str, str]]],
) -> None:
    url, seen = token_endpoint
    jaas = (
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'clientId="engine" clientSecret="shh" scope="kafka";'
    )
    args = sasl_arguments(
        {
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": jaas,
            "sasl.login.callback.handler.class": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
            "sasl.oauthbearer.token.endpoint.url": url,
        }
    )
    provider = args["sasl_oauth_token_provider"]
    assert isinstance(provider, ClientCredentialsTokenProvider)
    assert await provider.token() == "token-1"
    assert await provider.token() == "token-1"
    assert seen == [
        {
            "authorization": "Basic " + base64.b64encode(b"engine:shh").decode(),
            "grant_type": "client_credentials",
            "scope": "kafka",
        }
    ]
    refused = ClientCredentialsTokenProvider(url, "engine", "wrong", None)
    with pytest.raises(ConfigError, match=r"answered 401.*check sasl\.jaas\.config clientId/clientSecret"):
        await refused.token()


# ---- secrets ---------------------------------------------------------------------------------


def test_jaas_configs_and_key_material_are_masked_under_any_prefix() -> None:
    config = {
        "sasl.jaas.config": SCRAM,
        "producer.override.sasl.jaas.config": SCRAM,
        "consumer.ssl.keystore.key": "-----BEGIN PRIVATE KEY-----",
        "admin.ssl.truststore.password": "x",
        "producer.override.linger.ms": "5",
    }
    assert mask_config(config) == {
        **dict.fromkeys(list(config)[:4], "[hidden]"),
        "producer.override.linger.ms": "5",
    }


def test_no_settings_means_plaintext_and_connects_defaults() -> None:
    clients = KafkaClients()
    assert clients.own() == {}
    assert clients.worker_level("producer") == {}
    assert clients.policy.name == "All"


# ---- what a connector's clients lack, and who an ACL refused -----------------------------------

SASL_SSL_TOP_LEVEL = {
    "security.protocol": "SASL_SSL",
    "sasl.mechanism": "SCRAM-SHA-512",
    "sasl.jaas.config": SCRAM,
}


def test_only_top_level_security_names_the_producer_and_consumer_keys_to_set() -> None:
    clients = KafkaClients.from_worker({"bootstrap.servers": "b:9093", **SASL_SSL_TOP_LEVEL})
    advice = clients.missing_security("producer", {})
    assert advice is not None
    assert "security.protocol=SASL_SSL, this producer security.protocol=PLAINTEXT" in advice
    assert "Set producer.security.protocol, producer.sasl.jaas.config, producer.sasl.mechanism" in advice
    assert "s3cret" not in advice
    assert "consumer.sasl.jaas.config" in str(clients.missing_security("consumer", {}))
    assert clients.missing_security("admin", {}) is None  # admins inherit the top level, as in Connect


def test_a_connector_that_brings_its_own_security_lacks_nothing() -> None:
    clients = KafkaClients.from_worker(
        {
            "bootstrap.servers": "b:9093",
            **SASL_SSL_TOP_LEVEL,
            **{f"consumer.{k}": v for k, v in SASL_SSL_TOP_LEVEL.items()},
        }
    )
    assert clients.missing_security("consumer", {}) is None
    overrides = {f"producer.override.{k}": v for k, v in SASL_SSL_TOP_LEVEL.items()}
    assert clients.missing_security("producer", overrides) is None
    assert KafkaClients.from_worker({"bootstrap.servers": "b:9092"}).missing_security("producer", {}) is None


class _Client:
    """What ``denial`` reads of an aiokafka client: its security arguments."""

    def __init__(self, protocol: str, mechanism: str = "PLAIN", user: str | None = None) -> None:
        self._security_protocol = protocol
        self._sasl_mechanism = mechanism
        self._sasl_plain_username = user


def test_an_acl_refusal_names_the_principal_the_resource_the_grant_and_the_setting() -> None:
    from aiokafka.errors import GroupAuthorizationFailedError, TopicAuthorizationFailedError

    from engine.config.kafka_clients.denials import denial

    message = denial(
        TopicAuthorizationFailedError("orders"),
        _Client("SASL_SSL", "SCRAM-SHA-256", "bob"),
        operation="WRITE",
        resource="orders",
        prefix="producer.",
    )
    assert message == (
        "principal User:bob is not authorized to WRITE topic 'orders' (TopicAuthorizationFailedError): "
        "grant it (kafka-acls --add --allow-principal User:bob --operation Write --topic orders) or "
        "give this client a principal that has it: check producer.sasl.jaas.config"
    )
    plain = denial(
        GroupAuthorizationFailedError(), _Client("PLAINTEXT"), operation="READ", resource="connect-snk"
    )
    assert "principal User:ANONYMOUS is not authorized to READ group 'connect-snk'" in plain
    assert "--group connect-snk" in plain
    assert "check security.protocol" in plain
    own = denial(
        TopicAuthorizationFailedError("orders"),
        _Client("SASL_SSL", "PLAIN", "alice"),
        operation="WRITE",
        resource="orders",
        prefix="producer.override.",
    )
    assert own.endswith(
        "check producer.override.sasl.jaas.config (or producer.sasl.jaas.config when the connector "
        "does not set it)"
    )


def test_a_plaintext_client_dropped_by_a_tls_listener_is_not_told_about_sasl() -> None:
    """aiokafka keeps sasl_mechanism=PLAIN by default: on a PLAINTEXT client it means nothing."""
    from aiokafka.errors import KafkaConnectionError

    from engine.config.kafka_clients.starting import _hint

    hint = _hint(KafkaConnectionError("Connection at b:9093 closed"), _Client("PLAINTEXT", "PLAIN"))
    assert "SASL handshake" not in hint
    assert "this client uses security.protocol=PLAINTEXT; does the listener speak it?" in hint
    sasl = _hint(KafkaConnectionError("Connection at b:9093 closed"), _Client("SASL_SSL", "PLAIN"))
    assert "during the SASL handshake" in sasl
