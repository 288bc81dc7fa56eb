"""The ``inter.worker.*`` worker keys, checked as Connect's ``DistributedConfig`` checks them: a worker
with a bad value does not start, and says why with Connect's message."""

from __future__ import annotations

import pytest

from engine import Engine
from engine.distributed.request_signing import SessionKey, SigningSettings, sign, verify
from engine.errors import ConfigError

CLUSTER = {"group.id": "g", "bootstrap.servers": "127.0.0.1:1"}


def test_defaults_are_connects() -> None:
    settings = SigningSettings.parse({})
    assert settings == SigningSettings("HmacSHA256", None, 3_600_000, "HmacSHA256", ("HmacSHA256",))
    assert settings.key_bytes() == 32


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"inter.worker.signature.algorithm": "HmacSHA512"},
            "Invalid value HmacSHA512 for configuration inter.worker.signature.algorithm: Signature algorithm must be "
            "present in inter.worker.verification.algorithms list",
        ),
        (
            {"inter.worker.verification.algorithms": ""},
            "Invalid value [] for configuration inter.worker.verification.algorithms: At least one signature verification "
            "algorithm must be provided",
        ),
        (
            {"inter.worker.key.size": "8"},
            "Unable to create key generator with algorithm HmacSHA256 and key size 8: Key length must be at least 40 bits",
        ),
        (
            {"inter.worker.key.generation.algorithm": "AES", "inter.worker.key.size": "100"},
            "Unable to create key generator with algorithm AES and key size 100: Wrong keysize: must be equal to 128, 192 "
            "or 256",
        ),
        (
            {"inter.worker.key.ttl.ms": "-1"},
            "Invalid value -1 for configuration inter.worker.key.ttl.ms: Value must be at least 0",
        ),
    ],
)
def test_a_worker_with_a_bad_signing_key_refuses_to_start(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        Engine({**CLUSTER, **props})
    assert str(raised.value) == message


def test_an_algorithm_the_worker_lacks_is_named_with_the_ones_it_has() -> None:
    with pytest.raises(ConfigError) as raised:
        SigningSettings.parse({"inter.worker.verification.algorithms": "HmacSHA256,HmacWhirlpool"})
    assert str(raised.value).startswith(
        "Invalid value HmacWhirlpool for configuration "
        "inter.worker.verification.algorithms: the algorithm is not supported by "
        "this JVM; the supported algorithms are: [HmacMD5, "
    )


def test_other_algorithms_sign_and_verify_and_keys_rotate_on_a_changed_size() -> None:
    settings = SigningSettings.parse(
        {
            "inter.worker.signature.algorithm": "HmacSHA512",
            "inter.worker.verification.algorithms": "HmacSHA256,HmacSHA512",
            "inter.worker.key.size": "512",
        }
    )
    key = SessionKey.generate(settings, now_ms=1000)
    assert len(key.key) == 64
    headers = sign(key, "HmacSHA512", b"[]")
    assert verify(headers, b"[]", key, settings) is None
    assert verify(headers, b"[ ]", key, settings) is not None
    assert not key.needs_rotation(settings, now_ms=1000 + 3_599_999)
    assert key.needs_rotation(settings, now_ms=1000 + 3_600_000)
    assert key.needs_rotation(SigningSettings.parse({}), now_ms=1000)  # another size: a new key at once
