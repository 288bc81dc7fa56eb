"""KIP-507 signed inter-worker requests: the session key, its settings, signing and verifying.

The leader generates a session key, writes it to the config topic (``session-key``) and rotates it
after ``inter.worker.key.ttl.ms``; every worker reads it from there. A worker sends the internal
requests (``POST /connectors/{c}/tasks``, ``PUT /connectors/{c}/fence``) with an HMAC of the
request body under that key in ``X-Connect-Authorization`` (base64) and the MAC's name in
``X-Connect-Request-Signature-Algorithm`` (Connect's ``InternalRequestSignature``); the receiver
refuses a request without them (400), with an algorithm it does not accept (400), before it has
read a key (503) or with a wrong signature (403), with Connect's messages.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from engine.config.worker import int_setting
from engine.errors import ConfigError

KEY_GENERATION_ALGORITHM = "inter.worker.key.generation.algorithm"
KEY_SIZE = "inter.worker.key.size"
KEY_TTL_MS = "inter.worker.key.ttl.ms"
SIGNATURE_ALGORITHM = "inter.worker.signature.algorithm"
VERIFICATION_ALGORITHMS = "inter.worker.verification.algorithms"
DEFAULT_ALGORITHM = "HmacSHA256"
DEFAULT_TTL_MS = 3_600_000  # one hour

SIGNATURE_HEADER = "X-Connect-Authorization"
SIGNATURE_ALGORITHM_HEADER = "X-Connect-Request-Signature-Algorithm"

# Java's MAC names (SunJCE; Mac.getInstance matches them case-insensitively) -> hashlib's
MACS: dict[str, str] = {
    "HmacMD5": "md5",
    "HmacSHA1": "sha1",
    "HmacSHA224": "sha224",
    "HmacSHA256": "sha256",
    "HmacSHA384": "sha384",
    "HmacSHA512": "sha512",
    "HmacSHA512/224": "sha512_224",
    "HmacSHA512/256": "sha512_256",
    "HmacSHA3-224": "sha3_224",
    "HmacSHA3-256": "sha3_256",
    "HmacSHA3-384": "sha3_384",
    "HmacSHA3-512": "sha3_512",
}
# KeyGenerator algorithms and their default key sizes in bits (SunJCE's)
KEY_GENERATORS: dict[str, int] = {
    "HmacMD5": 512,
    "HmacSHA1": 512,
    "HmacSHA224": 224,
    "HmacSHA256": 256,
    "HmacSHA384": 384,
    "HmacSHA512": 512,
    "HmacSHA512/224": 224,
    "HmacSHA512/256": 256,
    "HmacSHA3-224": 224,
    "HmacSHA3-256": 256,
    "HmacSHA3-384": 384,
    "HmacSHA3-512": 512,
    "AES": 128,
}


def _lookup(table: Mapping[str, object], name: str) -> str | None:
    """The canonical name of an algorithm, matched case-insensitively as Java's providers match it."""
    wanted = name.strip().lower()
    return next((known for known in table if known.lower() == wanted), None)


def _invalid(key: str, value: str, reason: str) -> ConfigError:
    message = f"Invalid value {value} for configuration {key}: {reason}"
    return ConfigError(message, errors={key: [message]})


def _unsupported(key: str, value: str, kind: str) -> ConfigError:
    supported = ", ".join(sorted(MACS if kind == "Mac" else KEY_GENERATORS))
    return _invalid(
        key, value, f"the algorithm is not supported by this JVM; the supported algorithms are: [{supported}]"
    )


@dataclass(frozen=True, slots=True)
class SigningSettings:
    """The ``inter.worker.*`` keys, checked as Connect's ``DistributedConfig`` checks them."""

    key_algorithm: str = DEFAULT_ALGORITHM
    key_size_bits: int | None = None
    ttl_ms: int = DEFAULT_TTL_MS
    signature_algorithm: str = DEFAULT_ALGORITHM
    verification_algorithms: tuple[str, ...] = (DEFAULT_ALGORITHM,)

    @classmethod
    def parse(cls, raw: Mapping[str, str]) -> SigningSettings:
        ttl = int_setting(raw, KEY_TTL_MS, DEFAULT_TTL_MS)
        key_algorithm = raw.get(KEY_GENERATION_ALGORITHM, DEFAULT_ALGORITHM).strip()
        if _lookup(KEY_GENERATORS, key_algorithm) is None:
            raise _unsupported(KEY_GENERATION_ALGORITHM, key_algorithm, "KeyGenerator")
        size_text = raw.get(KEY_SIZE, "").strip()
        size = None
        if size_text:
            try:
                size = int(size_text)
            except ValueError:
                raise _invalid(KEY_SIZE, size_text, "Not a number of type INT") from None
        signature = raw.get(SIGNATURE_ALGORITHM, DEFAULT_ALGORITHM).strip()
        if _lookup(MACS, signature) is None:
            raise _unsupported(SIGNATURE_ALGORITHM, signature, "Mac")
        listed = raw.get(VERIFICATION_ALGORITHMS)
        verification = (
            (DEFAULT_ALGORITHM,)
            if listed is None
            else tuple(a.strip() for a in listed.split(",") if a.strip())
        )
        if not verification:
            raise _invalid(
                VERIFICATION_ALGORITHMS,
                "[]",
                "At least one signature verification algorithm must be provided",
            )
        for algorithm in verification:
            if _lookup(MACS, algorithm) is None:
                raise _unsupported(VERIFICATION_ALGORITHMS, algorithm, "Mac")
        settings = cls(key_algorithm, size, ttl, signature, verification)
        settings.key_bytes()  # Connect's getInternalRequestKeyGenerator(): a bad size stops the worker
        if signature not in verification:
            raise _invalid(
                SIGNATURE_ALGORITHM,
                signature,
                f"Signature algorithm must be present in {VERIFICATION_ALGORITHMS} list",
            )
        return settings

    def key_bytes(self) -> int:
        """How long a generated key is, in bytes; Connect's message when the size does not fit the algorithm."""
        canonical = _lookup(KEY_GENERATORS, self.key_algorithm) or self.key_algorithm
        bits = self.key_size_bits
        if bits is None:
            return KEY_GENERATORS[canonical] // 8
        if canonical == "AES":
            problem = None if bits in (128, 192, 256) else "Wrong keysize: must be equal to 128, 192 or 256"
        else:
            problem = None if bits >= 40 else "Key length must be at least 40 bits"
        if problem is not None:
            message = (
                f"Unable to create key generator with algorithm {self.key_algorithm} and key size {bits}: "
                f"{problem}"
            )
            raise ConfigError(message, errors={KEY_SIZE: [message]})
        return (bits + 7) // 8


@dataclass(frozen=True, slots=True)
class SessionKey:
    """Connect's ``SessionKey``: the key's bytes, its (KeyGenerator) algorithm, when it was made."""

    key: bytes
    algorithm: str
    creation_timestamp: int

    @classmethod
    def generate(cls, settings: SigningSettings, now_ms: int) -> SessionKey:
        return cls(secrets.token_bytes(settings.key_bytes()), settings.key_algorithm, now_ms)

    @property
    def encoded(self) -> str:
        return base64.b64encode(self.key).decode("ascii")

    def needs_rotation(self, settings: SigningSettings, now_ms: int) -> bool:
        """Expired, or made for another algorithm or size than this worker's (``checkForKeyRotation``)."""
        return (
            self.creation_timestamp + settings.ttl_ms <= now_ms
            or self.algorithm != settings.key_algorithm
            or len(self.key) != settings.key_bytes()
        )


def sign(key: SessionKey, algorithm: str, body: bytes) -> dict[str, str]:
    """The two headers that sign ``body`` (``InternalRequestSignature.addToRequest``)."""
    digest = MACS[_lookup(MACS, algorithm) or algorithm]
    signature = hmac.new(key.key, body, digest).digest()
    return {
        SIGNATURE_HEADER: base64.b64encode(signature).decode("ascii"),
        SIGNATURE_ALGORITHM_HEADER: algorithm,
    }


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    message: str


def verify(
    headers: Mapping[str, str], body: bytes, key: SessionKey | None, settings: SigningSettings
) -> Refusal | None:
    """Why an internal request is refused, or None when it is signed with the current key
    (``InternalRequestSignature.fromHeaders`` then ``DistributedHerder.requestNotSignedProperly``)."""
    algorithm = headers.get(SIGNATURE_ALGORITHM_HEADER)
    encoded = headers.get(SIGNATURE_HEADER)
    if algorithm is None or encoded is None:
        return Refusal(400, "Internal request missing required signature")
    canonical = _lookup(MACS, algorithm)
    if canonical is None:
        return Refusal(400, f"Algorithm {algorithm} not available")
    try:
        signature = base64.b64decode(encoded.encode("ascii", "replace"), validate=True)
    except (binascii.Error, ValueError) as exc:
        return Refusal(400, str(exc))
    if algorithm not in settings.verification_algorithms:
        return Refusal(
            400,
            f"This worker does not support the '{algorithm}' key signing algorithm used by other "
            f"workers. This worker is currently configured to use: "
            f"[{', '.join(settings.verification_algorithms)}]. Check that all workers' configuration "
            "files permit the same set of signature algorithms, and correct any misconfigured worker "
            "and restart it.",
        )
    if key is None:
        return Refusal(
            503,
            "This worker is still starting up and has not been able to read a session key from the "
            "config topic yet",
        )
    expected = hmac.new(key.key, body, MACS[canonical]).digest()
    if not hmac.compare_digest(expected, signature):
        return Refusal(403, "Internal request contained invalid signature.")
    return None
